use op_core::gradient::{Gradient, Value};
use op_core::{gradient, register_op};

#[register_op(attrs("T: {float, double}"), inputs("x: T"), outputs("y: T"))]
pub struct Square;

#[gradient]
fn square_grad<V: Value>(g: &Gradient<'_, V>, scale: f32) {
    let _ = (g, scale);
}

fn main() {}
