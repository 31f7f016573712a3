use op_core::register_op;

#[register_op(input("to_zero: int32"), outputs("zeroed: int32"))]
pub struct ZeroOut;

fn main() {}
