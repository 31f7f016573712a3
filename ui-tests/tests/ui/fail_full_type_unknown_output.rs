//! A full type annotates an output of the op, named before its colon: an
//! input's name, a name the op lacks, or a second full type for one output
//! is an error on that spec. The op's wrapper is still generated, so code
//! calling it reports nothing more.

use op_core::register_op;

#[register_op(
    attrs("T: type"),
    inputs("x: T"),
    outputs("y: T"),
    full_types("x: TFT_TENSOR[TFT_VAR{'T'}]", "z: TFT_ANY", "y: TFT_ANY", "y: TFT_TENSOR[TFT_VAR{'T'}]")
)]
pub struct Copy;

fn main() {
    let _ = Copy::call(op_core::Tensor::scalar(1.0f32)).run();
}
