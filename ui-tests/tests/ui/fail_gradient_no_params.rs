use op_core::gradient::Value;
use op_core::{Result, gradient, register_op};

#[register_op(attrs("T: {float, double}"), inputs("x: T"), outputs("y: T"))]
pub struct Square;

#[gradient(op = Square)]
fn square_grad<V: Value>() -> Result<[Option<V>; 1]> {
    Ok([None])
}

fn main() {}
