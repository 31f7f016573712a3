use op_core::ndarray::{ArrayD, ArrayViewD};
use op_core::op;

#[op(name = "times_two")]
pub fn times_two(x: ArrayViewD<'_, f32>) -> ArrayD<f32> {
    x.mapv(|v| v * 2.0)
}

fn main() {}
