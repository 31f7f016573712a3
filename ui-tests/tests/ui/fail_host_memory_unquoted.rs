use op_core::{KernelContext, Result, kernel, register_op};

#[register_op(inputs("to_zero: int32"), outputs("zeroed: int32"))]
pub struct ZeroOut;

#[kernel(op = ZeroOut, device = "gpu", host_memory(to_zero))]
fn zero_out(ctx: &mut KernelContext<'_>) -> Result<()> {
    let _ = ctx;
    Ok(())
}

fn main() {}
