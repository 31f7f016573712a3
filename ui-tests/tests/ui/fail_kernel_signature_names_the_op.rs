//! A kernel function with the signature an author gets wrong: each error
//! names the op the author wrote (`&ZeroOut`, not a placeholder), on the
//! author's own token.

use op_core::ndarray::ArrayViewD;
use op_core::{Element, KernelContext, Result, Tensor, kernel, register_op};

#[register_op(attrs("T: {float, int32}"), inputs("to_zero: T"), outputs("zeroed: T"))]
pub struct ZeroOut {
    pub preserve_index: i64,
}

// No context.
#[kernel(op = ZeroOut)]
fn no_params() -> Result<()> {
    Ok(())
}

// The context by shared reference.
#[kernel(op = ZeroOut, types(f32))]
fn context_by_ref<T: Element>(ctx: &KernelContext<'_>, attrs: &ZeroOut) -> Result<()> {
    let _ = (ctx, attrs);
    Ok(())
}

// The attrs by value.
#[kernel(op = ZeroOut, types(f32))]
fn attrs_by_value<T: Element>(ctx: &mut KernelContext<'_>, attrs: ZeroOut) -> Result<()> {
    let _ = (ctx, attrs);
    Ok(())
}

// An input as a parameter, as an `#[op]` function takes it.
#[kernel(op = ZeroOut, types(f32))]
fn input_as_view<T: Element>(ctx: &mut KernelContext<'_>, to_zero: ArrayViewD<'_, T>) -> Result<()> {
    let _ = (ctx, to_zero);
    Ok(())
}

// An input as a tensor parameter, the op named by its registered name.
#[kernel(op = "ZeroOut", types(f32))]
fn input_as_tensor<T: Element>(ctx: &mut KernelContext<'_>, to_zero: &Tensor) -> Result<()> {
    let _ = (ctx, to_zero);
    Ok(())
}

// One parameter too many.
#[kernel(op = ZeroOut, types(f32))]
fn extra<T: Element>(ctx: &mut KernelContext<'_>, attrs: &ZeroOut, index: usize) -> Result<()> {
    let _ = (ctx, attrs, index);
    Ok(())
}

// Not a `Result`.
#[kernel(op = ZeroOut, types(f32))]
fn returns_unit<T: Element>(ctx: &mut KernelContext<'_>, attrs: &ZeroOut) {
    let _ = (ctx, attrs);
}

fn main() {}
