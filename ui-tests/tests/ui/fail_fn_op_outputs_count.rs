use op_core::ndarray::ArrayViewD;
use op_core::op;

#[op(outputs("sum", "product"))]
pub fn sum(x: ArrayViewD<'_, f32>) -> f32 {
    x.sum()
}

fn main() {}
