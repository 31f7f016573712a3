use op_core::{KernelConstruction, KernelContext, Result, kernel, register_op};

#[register_op(inputs("x: int32"), outputs("y: int32"))]
pub struct Waits;

pub struct WaitsKernel;

#[kernel(op = Waits)]
impl WaitsKernel {
    fn new(_ctx: &KernelConstruction<'_>) -> Result<Self> {
        Ok(WaitsKernel)
    }

    fn compute(&self, ctx: &mut KernelContext<'_>) -> Result<()> {
        let _ = ctx;
        Ok(())
    }

    fn may_block() -> bool {
        true
    }
}

fn main() {}
