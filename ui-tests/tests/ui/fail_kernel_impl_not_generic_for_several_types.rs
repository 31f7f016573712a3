//! The same for a kernel impl: one that is not generic cannot serve
//! several types.

use op_core::{KernelConstruction, KernelContext, Result, kernel, register_op};

#[register_op(
    attrs("K: {float, double}", "T: {int32, int64, uint8}"),
    inputs("x: K", "y: T"),
    outputs("z: K")
)]
pub struct Copy;

pub struct CopyKernel;

#[kernel(op = Copy, types(K = [f32, f64], T = [i32, i64, u8]))]
impl CopyKernel {
    fn new(_ctx: &KernelConstruction<'_>) -> Result<Self> {
        Ok(CopyKernel)
    }

    fn compute(&self, ctx: &mut KernelContext<'_>) -> Result<()> {
        let x = ctx.input(0)?.clone();
        ctx.set_output(0, x)
    }
}

fn main() {}
