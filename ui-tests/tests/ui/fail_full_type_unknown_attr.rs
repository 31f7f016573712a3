//! A type variable stands for an attr of the op: one naming an attr the op
//! lacks, or an attr that is not a type, is an error on the spec.

use op_core::register_op;

#[register_op(
    attrs("T: type", "out_type: {int32, int64} = DT_INT32"),
    inputs("input: T"),
    outputs("output: out_type"),
    full_types("output: TFT_SHAPE_TENSOR[TFT_VAR{'out_typ'}]")
)]
pub struct Shape;

#[register_op(
    attrs("T: type", "N: int"),
    inputs("input: T"),
    outputs("output: T"),
    full_types("output: TFT_TENSOR[TFT_VAR{'N'}]")
)]
pub struct Repeat;

fn main() {}
