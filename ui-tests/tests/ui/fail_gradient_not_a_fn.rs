use op_core::{gradient, register_op};

#[register_op(attrs("T: {float, double}"), inputs("x: T"), outputs("y: T"))]
pub struct Square;

#[gradient(op = Square)]
struct SquareGrad;

fn main() {}
