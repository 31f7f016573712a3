//! The declaration of `StringToNumber`.

use op_core::register_op;

/// Converts each string in the input tensor to the specified numeric type.
///
/// string_tensor: the strings, as decimal numbers.
/// output: the numbers, of type `out_type`, in `string_tensor`'s shape.
/// out_type: the numeric type to convert to.
#[register_op(
    attrs("out_type: {float, double, int32, int64, uint32, uint64} = DT_FLOAT"),
    inputs("string_tensor: string"),
    outputs("output: out_type"),
    shape = "unchanged"
)]
pub struct StringToNumber;
