use op_core::{kernel, register_op};

#[register_op(attrs("T: {float, int32}"), inputs("to_zero: T"), outputs("zeroed: T"))]
pub struct ZeroOut;

#[kernel(op = ZeroOut)]
pub struct ZeroOutKernel;

fn main() {}
