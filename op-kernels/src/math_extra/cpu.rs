//! The CPU kernels of `Range`, `FloorDiv`, `FloorMod` and `DivNoNan`, for the
//! types TensorFlow registers CPU kernels for (`sequence_ops.cc`,
//! `cwise_op_floor_div.cc`, `cwise_op_floor_mod.cc`, `cwise_op_div.cc`,
//! `cwise_op_conj.cc`;
//! `Range` of `half` and `bfloat16` is left out). The elementwise ones go
//! through the [`KernelContext`] helpers, which broadcast, reuse a
//! handed-over input's buffer and split large tensors over the runtime's
//! threads.

use op_core::{Code, KernelContext, Result, kernel};

use super::math::{DivideNoNan, FloorDivide, RangeElement, range_into};
use super::ops::{DivNoNan, FloorDiv, FloorMod, Range};

/// What one element costs, in CPU cycles, for splitting work over
/// threads: a division and a compare or two.
const DIVIDE: usize = 6;

#[kernel(op = Range, types(Tidx = [f32, f64, i32, i64]))]
fn range<T: RangeElement>(ctx: &mut KernelContext<'_>) -> Result<()> {
    for (i, name) in ["start", "limit", "delta"].iter().enumerate() {
        let input = ctx.input(i)?;
        if input.rank() != 0 {
            return Err(ctx.error(
                Code::InvalidArgument,
                format_args!("{name} must be a scalar, not shape {}", input.shape()),
            ));
        }
    }
    let (start, limit, delta) = (
        ctx.input_scalar::<T>(0)?,
        ctx.input_scalar::<T>(1)?,
        ctx.input_scalar::<T>(2)?,
    );
    let len = T::range_len(start, limit, delta).map_err(|e| ctx.error(e.code(), e.message()))?;
    let threads = ctx.threads();
    let output = ctx.allocate_output(0, &[len])?.as_slice_mut::<T>()?;
    threads.shard_slice(output, 2, |offset, block| {
        range_into(start, delta, offset, block)
    });
    Ok(())
}

#[kernel(op = FloorDiv, types(u8, u16, u32, u64, i8, i16, i32, i64, f32, f64, half, bfloat16))]
fn floor_div<T: FloorDivide>(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.try_broadcast_binary([0, 1], 0, DIVIDE, |x: &T, y: &T| x.floor_div(*y))
}

#[kernel(op = FloorMod, types(i8, i16, i32, i64, u8, u16, u32, u64, half, bfloat16, f32, f64))]
fn floor_mod<T: FloorDivide>(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.try_broadcast_binary([0, 1], 0, DIVIDE, |x: &T, y: &T| x.floor_mod(*y))
}

#[kernel(op = DivNoNan, types(half, float, bfloat16, double, complex64, complex128))]
fn div_no_nan<T: DivideNoNan>(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.broadcast_binary([0, 1], 0, DIVIDE, |x: &T, y: &T| x.div_no_nan(*y))
}
