//! `x T` lacks its colon: the fix is `x: T`, and the docs of `x`, the
//! kernel and the call of the op are no second error (they are checked
//! against the op as meant).

use op_core::{Element, KernelContext, Result, Tensor, kernel, register_op};

/// Copies `x`.
///
/// x: the input.
/// y: the copy.
#[register_op(attrs("T: {float, int32}"), inputs("x T"), outputs("y: T"))]
pub struct Copy;

#[kernel(op = Copy, types(f32, i32))]
fn copy<T: Element>(ctx: &mut KernelContext<'_>) -> Result<()> {
    let x = ctx.input(0)?.clone();
    ctx.set_output(0, x)
}

fn main() {
    let _ = Copy::call(Tensor::scalar(1.0f32)).run();
}
