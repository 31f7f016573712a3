use op_core::ndarray::{ArrayD, ArrayViewD};
use op_core::op;

#[op]
pub fn scale(x: ArrayViewD<'_, f32>, #[attr(default = "two")] factor: f32) -> ArrayD<f32> {
    x.mapv(|v| v * factor)
}

fn main() {}
