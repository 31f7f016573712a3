//! Shape, Size and Rank: what a tensor's shape says, as tensors. The
//! kernels read only the input's shape, never its elements, so each serves
//! every dtype (no `T` constraint), as TensorFlow's do.

use op_core::shape_inference::{DimOrValue, InferenceContext};
use op_core::{Code, KernelContext, Result, Tensor, kernel};

use super::index::{IndexElement, index_output};
use super::ops::{Rank, Shape, Size};

/// Shape's shape function (TensorFlow's `ShapeShapeFn`): a vector with one
/// element per dimension of the input, `[?]` when its rank is unknown.
///
/// `[?,3]` gives `[2]`; `?` gives `[?]`.
pub fn shape_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let input = c.input(0)?;
    let rank = c.rank(input);
    let output = c.vector(DimOrValue::Value(rank));
    c.set_output(0, output)
}

#[kernel(op = Shape, types(out_type = [i32, i64]))]
fn shape<O: IndexElement>(ctx: &mut KernelContext<'_>) -> Result<()> {
    let dims = ctx.input(0)?.dims().to_vec();
    let output = index_output::<O>(ctx, "dimension size", &dims)?;
    ctx.set_output(0, output)
}

#[kernel(op = Size, types(out_type = [i32, i64]))]
fn size<O: IndexElement>(ctx: &mut KernelContext<'_>) -> Result<()> {
    let count = ctx.input(0)?.num_elements();
    let size = O::from_usize(count).ok_or_else(|| {
        ctx.error(
            Code::InvalidArgument,
            format_args!(
                "the element count {count} does not fit the output type {}",
                O::DTYPE
            ),
        )
    })?;
    ctx.set_output(0, Tensor::scalar(size))
}

#[kernel(op = Rank)]
fn rank(ctx: &mut KernelContext<'_>) -> Result<()> {
    let rank = ctx.input(0)?.rank();
    let rank = i32::from_usize(rank).ok_or_else(|| {
        ctx.error(
            Code::InvalidArgument,
            format_args!("the rank {rank} does not fit int32"),
        )
    })?;
    ctx.set_output(0, Tensor::scalar(rank))
}
