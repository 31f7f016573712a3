use op_core::register_op;

#[register_op(attrs("n: int = 1.5"), outputs("y: float"))]
pub struct Fill;

fn main() {}
