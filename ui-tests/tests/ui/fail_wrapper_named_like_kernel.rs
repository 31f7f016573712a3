//! A kernel function named like the op's wrapper (`wrapper = zero_out`),
//! in the same module, would hide it: one error, at the wrapper's name.

use op_core::{Element, KernelContext, Result, kernel, register_op};

#[register_op(
    attrs("T: {float, int32}"),
    inputs("to_zero: T"),
    outputs("zeroed: T"),
    wrapper = zero_out
)]
pub struct ZeroOut;

#[kernel(op = ZeroOut, types(f32, i32))]
fn zero_out<T: Element>(ctx: &mut KernelContext<'_>) -> Result<()> {
    let input = ctx.input(0)?.clone();
    ctx.set_output(0, input)
}

fn main() {
    let _ = zero_out::<f32>;
}
