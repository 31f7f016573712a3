use op_core::register_op;

#[register_op(inputs("to_zero: in32"), outputs("zeroed: int32"))]
pub struct ZeroOut;

fn main() {}
