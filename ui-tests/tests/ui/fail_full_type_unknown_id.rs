//! A full type's id is one of TensorFlow's `FullTypeId` names: a
//! misspelt one is an error on the spec, with the name it is closest to.

use op_core::register_op;

#[register_op(
    attrs("T: type", "out_type: {int32, int64} = DT_INT32"),
    inputs("input: T"),
    outputs("output: out_type"),
    full_types("output: TFT_SHAPE_TENSR[TFT_VAR{'out_type'}]")
)]
pub struct Shape;

fn main() {}
