//! `StringToNumber`: a kernel generic over the type attr of its output.

use std::str::FromStr;

use op_core::{Code, Element, Error, KernelContext, Result, kernel, register_op};

/// Converts each string in the input tensor to the specified numeric type.
///
/// string_tensor: the strings, as decimal numbers.
/// output: the numbers, of type `out_type`, in `string_tensor`'s shape.
/// out_type: the numeric type to convert to.
#[register_op(
    attrs("out_type: {float, int32} = DT_FLOAT"),
    inputs("string_tensor: string"),
    outputs("output: out_type"),
    shape = "unchanged"
)]
pub struct StringToNumber;

#[kernel(op = StringToNumber, types(out_type = [f32, i32]))]
fn string_to_number<T: Element + FromStr>(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.try_unary_to(0, 0, COST_PER_STRING, |bytes: &Vec<u8>| parse::<T>(bytes))
}

/// Parsing a short number: some tens of cycles.
const COST_PER_STRING: usize = 50;

/// The arithmetic of one element: the number `bytes` spell (surrounding
/// whitespace allowed), or TensorFlow's error.
pub fn parse<T: FromStr>(bytes: &[u8]) -> Result<T> {
    std::str::from_utf8(bytes)
        .ok()
        .and_then(|s| s.trim().parse::<T>().ok())
        .ok_or_else(|| {
            Error::new(
                Code::InvalidArgument,
                // The string is the caller's: quoted at a bounded length.
                format!(
                    "StringToNumberOp could not correctly convert string: {}",
                    op_core::error::capped(bytes)
                ),
            )
        })
}
