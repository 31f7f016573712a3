use op_core::gradient::{Gradient, Value};
use op_core::{gradient, register_op};

#[register_op(attrs("T: {float, double}"), inputs("x: T"), outputs("y: T"))]
pub struct Square;

#[gradient(op = Square)]
fn square_grad<V: Value>(g: &Gradient<'_, V>) {
    let _ = g;
}

fn main() {}
