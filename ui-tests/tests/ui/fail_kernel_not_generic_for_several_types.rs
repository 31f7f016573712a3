//! A kernel function that is not generic runs the same code for each type
//! of `types(...)`: it must be generic over the element type, or list one.

use op_core::{KernelContext, Result, kernel, register_op};

#[register_op(attrs("T: {float, int32}"), inputs("to_zero: T"), outputs("zeroed: T"))]
pub struct ZeroOut;

#[kernel(op = ZeroOut, types(f32, i32))]
fn zero_out(ctx: &mut KernelContext<'_>) -> Result<()> {
    let input = ctx.input(0)?.as_slice::<f32>()?.to_vec();
    let _ = input;
    Ok(())
}

fn main() {}
