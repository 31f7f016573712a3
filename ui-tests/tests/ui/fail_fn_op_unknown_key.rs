use op_core::ndarray::{ArrayD, ArrayViewD};
use op_core::op;

#[op(output("doubled"))]
pub fn double(x: ArrayViewD<'_, f32>) -> ArrayD<f32> {
    x.mapv(|v| v * 2.0)
}

fn main() {}
