//! `#[kernel]` on an inherent impl with `new` and `compute`.

use op_core::{Element, KernelConstruction, KernelContext, Result, kernel, register_op};

/// Zeroes every element but one.
#[register_op(inputs("to_zero: int32"), outputs("zeroed: int32"))]
pub struct ZeroOutPreserveIndex {
    pub preserve_index: i64,
}

pub struct ZeroOutKernel {
    preserve_index: i64,
}

#[kernel(op = ZeroOutPreserveIndex)]
impl ZeroOutKernel {
    fn new(ctx: &KernelConstruction<'_>) -> Result<Self> {
        let ZeroOutPreserveIndex { preserve_index } = ctx.attrs()?;
        Ok(ZeroOutKernel { preserve_index })
    }

    fn compute(&self, ctx: &mut KernelContext<'_>) -> Result<()> {
        let _ = (ctx, self.preserve_index);
        Ok(())
    }

    /// A kernel that may wait for another says so.
    fn may_block(&self) -> bool {
        self.preserve_index < 0
    }
}

/// Copies its input.
#[register_op(attrs("T: {float, int32}"), inputs("x: T"), outputs("y: T"))]
pub struct Identity;

pub struct IdentityKernel<T> {
    marker: std::marker::PhantomData<T>,
}

#[kernel(op = Identity, device = "gpu", types(f32, i32), host_memory("x"))]
impl<T: Element> IdentityKernel<T> {
    fn new(_ctx: &KernelConstruction<'_>) -> Result<Self> {
        Ok(IdentityKernel {
            marker: std::marker::PhantomData,
        })
    }

    fn compute(&self, ctx: &mut KernelContext<'_>) -> Result<()> {
        let _ = ctx;
        Ok(())
    }

    /// Other methods are allowed.
    #[allow(dead_code)]
    fn helper(&self) {}
}

fn main() {}
