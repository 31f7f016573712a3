use op_core::{Result, kernel, register_op};

#[register_op(attrs("T: {float, int32}"), inputs("to_zero: T"), outputs("zeroed: T"))]
pub struct ZeroOut;

#[kernel(op = ZeroOut)]
fn zero_out() -> Result<()> {
    Ok(())
}

fn main() {}
