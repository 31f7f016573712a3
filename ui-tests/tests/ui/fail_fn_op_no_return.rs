use op_core::ndarray::ArrayViewD;
use op_core::op;

#[op]
pub fn log_it(x: ArrayViewD<'_, f32>) {
    let _ = x;
}

fn main() {}
