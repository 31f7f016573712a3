use op_core::{KernelContext, OpKernel, Result, kernel, register_op};

#[register_op(attrs("T: {float, int32}"), inputs("to_zero: T"), outputs("zeroed: T"))]
pub struct ZeroOut;

pub struct ZeroOutKernel;

#[kernel(op = ZeroOut)]
impl OpKernel for ZeroOutKernel {
    fn compute(&self, ctx: &mut KernelContext<'_>) -> Result<()> {
        let _ = ctx;
        Ok(())
    }
}

fn main() {}
