//! A device kernel function takes its device's context (`&mut
//! GpuContext<'_, '_>` in op-cuda) instead of `&mut KernelContext<'_>`:
//! `#[kernel]` makes it through `FromKernelContext`, after reading the
//! attrs and resources from the kernel context.

use op_core::{Element, FromKernelContext, KernelContext, Result, kernel, register_op};

/// Doubles its input.
#[register_op(attrs("T: {float, int32}"), inputs("x: T"), outputs("y: T"))]
pub struct Twice {
    #[attr(default = 1)]
    pub times: i64,
}

/// A device's view of a call: here only the wrapped context.
pub struct DeviceContext<'c, 'a> {
    inner: &'c mut KernelContext<'a>,
}

impl<'c, 'a: 'c> FromKernelContext<'c, 'a> for DeviceContext<'c, 'a> {
    fn from_kernel_context(ctx: &'c mut KernelContext<'a>) -> Result<Self> {
        Ok(DeviceContext { inner: ctx })
    }
}

#[kernel(op = Twice, device = "gpu", types(f32, i32))]
fn twice_gpu<T: Element>(ctx: &mut DeviceContext<'_, '_>, attrs: &Twice) -> Result<()> {
    let _ = (ctx.inner.num_inputs(), attrs.times);
    Ok(())
}

fn main() {}
