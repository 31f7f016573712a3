use op_core::register_op;

#[register_op(inputs("to_zero: T"), outputs("zeroed: T"))]
pub struct ZeroOut;

fn main() {}
