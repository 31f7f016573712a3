use op_core::gradient::Gradient;
use op_core::{Result, gradient, register_op};

#[register_op(attrs("T: {float, double}"), inputs("x: T"), outputs("y: T"))]
pub struct Square;

#[gradient(op = Square)]
fn square_grad(g: &Gradient<'_, op_core::Tensor>) -> Result<[Option<op_core::Tensor>; 1]> {
    Ok([Some(g.grad(0)?)])
}

fn main() {}
