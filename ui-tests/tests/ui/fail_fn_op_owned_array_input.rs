use op_core::ndarray::ArrayD;
use op_core::op;

#[op]
pub fn scale(x: ArrayD<f32>) -> ArrayD<f32> {
    x
}

fn main() {}
