//! The CPU kernels of `Identity`, `IdentityN`, `NoOp` and `StopGradient`,
//! each for every dtype (TensorFlow registers them unconstrained).

use op_core::{KernelContext, Result, kernel};

use super::ops::{Identity, IdentityN, NoOp, StopGradient};

/// Output `output` is input `input`: the same buffer, shared. When the
/// caller handed the input over, the output is the buffer's only holder
/// once the call ends, so the next kernel may reuse it in place.
pub(crate) fn forward(ctx: &mut KernelContext<'_>, input: usize, output: usize) -> Result<()> {
    let tensor = ctx.input(input)?.clone();
    ctx.set_output(output, tensor)
}

#[kernel(op = Identity)]
fn identity(ctx: &mut KernelContext<'_>) -> Result<()> {
    forward(ctx, 0, 0)
}

#[kernel(op = StopGradient)]
fn stop_gradient(ctx: &mut KernelContext<'_>) -> Result<()> {
    forward(ctx, 0, 0)
}

#[kernel(op = IdentityN)]
fn identity_n(ctx: &mut KernelContext<'_>) -> Result<()> {
    for i in 0..ctx.num_inputs() {
        forward(ctx, i, i)?;
    }
    Ok(())
}

#[kernel(op = NoOp)]
fn no_op(_ctx: &mut KernelContext<'_>) -> Result<()> {
    Ok(())
}
