use op_core::register_op;

#[register_op(attrs("shape: shape = { dim { size: 2 } dim { size: -5 } }"), outputs("y: float"))]
pub struct Fill;

fn main() {}
