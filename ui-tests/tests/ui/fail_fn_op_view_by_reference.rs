use op_core::ndarray::{ArrayD, ArrayViewD};
use op_core::op;

#[op]
pub fn copy(x: &ArrayViewD<'_, f32>) -> ArrayD<f32> {
    x.to_owned()
}

fn main() {}
