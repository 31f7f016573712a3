use op_core::ndarray::{ArrayD, ArrayViewD};
use op_core::op;

#[op]
pub fn widen(x: ArrayViewD<'_, u128>) -> ArrayD<f32> {
    x.mapv(|v| v as f32)
}

fn main() {}
