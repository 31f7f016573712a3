use op_core::register_op;

#[register_op(inputs("x: float"), outputs("y: float"), deprecated(version = 4))]
pub struct OldOp;

fn main() {}
