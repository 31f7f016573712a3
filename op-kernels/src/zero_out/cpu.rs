//! The CPU kernels of the ZeroOut ops: one function per form, over a shared
//! [`zero_out_generic`].

use op_core::{Element, KernelConstruction, KernelContext, Result, kernel};

use super::checks;
use super::ops::{ZeroOut, ZeroOutPolymorphic, ZeroOutPreserveIndex, ZeroOutVector};

/// Output 0 is input 0 with every element but the one at `keep` set to
/// zero: in the input's own buffer when the caller handed it over,
/// otherwise in a copy.
fn zero_out_generic<T: Element + Default>(ctx: &mut KernelContext<'_>, keep: usize) -> Result<()> {
    let values = ctx.forward_input_to_output(0, 0)?.as_slice_mut::<T>()?;
    if values.is_empty() {
        return Ok(());
    }
    let kept = std::mem::take(&mut values[keep]);
    values.fill_with(T::default);
    values[keep] = kept;
    Ok(())
}

#[kernel(op = ZeroOut)]
fn zero_out_int32(ctx: &mut KernelContext<'_>) -> Result<()> {
    zero_out_generic::<i32>(ctx, 0)
}

#[kernel(op = ZeroOutPolymorphic, types(f32, f64, i32))]
fn zero_out_polymorphic<T: Element + Default>(ctx: &mut KernelContext<'_>) -> Result<()> {
    zero_out_generic::<T>(ctx, 0)
}

/// The guide's kernel with state: `preserve_index` is read and checked
/// once, when the kernel is created; each call checks it against the input.
pub struct ZeroOutPreserveIndexKernel {
    preserve_index: usize,
}

#[kernel(op = ZeroOutPreserveIndex)]
impl ZeroOutPreserveIndexKernel {
    fn new(ctx: &KernelConstruction<'_>) -> Result<Self> {
        Ok(ZeroOutPreserveIndexKernel {
            preserve_index: checks::preserve_index(ctx)?,
        })
    }

    fn compute(&self, ctx: &mut KernelContext<'_>) -> Result<()> {
        checks::vector_with_index(ctx, self.preserve_index)?;
        zero_out_generic::<i32>(ctx, self.preserve_index)
    }
}

#[kernel(op = ZeroOutVector)]
fn zero_out_vector(ctx: &mut KernelContext<'_>) -> Result<()> {
    checks::vector(ctx)?;
    zero_out_generic::<i32>(ctx, 0)
}
