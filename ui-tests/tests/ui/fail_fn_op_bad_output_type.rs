use op_core::ndarray::ArrayViewD;
use op_core::op;

#[op]
pub fn to_vec(x: ArrayViewD<'_, f32>) -> Vec<f32> {
    x.iter().copied().collect()
}

fn main() {}
