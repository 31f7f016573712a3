use op_core::ndarray::{ArrayD, ArrayViewD};
use op_core::op;

#[op]
pub fn copy(output: ArrayViewD<'_, f32>) -> ArrayD<f32> {
    output.to_owned()
}

fn main() {}
