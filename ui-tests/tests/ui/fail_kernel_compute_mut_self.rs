use op_core::{KernelConstruction, KernelContext, Result, kernel, register_op};

#[register_op(attrs("T: {float, int32}"), inputs("to_zero: T"), outputs("zeroed: T"))]
pub struct ZeroOut;

pub struct ZeroOutKernel;

#[kernel(op = ZeroOut)]
impl ZeroOutKernel {
    fn new(ctx: &KernelConstruction<'_>) -> Result<Self> {
        let _ = ctx;
        Ok(ZeroOutKernel)
    }

    fn compute(&mut self, ctx: &mut KernelContext<'_>) -> Result<()> {
        let _ = ctx;
        Ok(())
    }
}

fn main() {}
