use op_core::gradient::{Gradient, Value};
use op_core::{Result, gradient, register_op};

#[register_op(attrs("T: {float, double}"), inputs("x: T"), outputs("y: T"))]
pub struct Square;

#[gradient(op = Square)]
fn square_grad<V: Value>(g: &Gradient<'_, V>) -> Result<Vec<V>> {
    Ok(vec![g.grad(0)?])
}

fn main() {}
