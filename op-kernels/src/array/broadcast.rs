//! BroadcastTo and BroadcastGradientArgs: NumPy broadcasting, forward (a
//! tensor repeated to a shape, copied out of its [`broadcast_view`] block
//! by block over the runtime's threads) and backward (the axes a gradient
//! is summed over, [`broadcast_gradient_args`](math::broadcast_gradient_args)).

use op_core::shape_inference::InferenceContext;
use op_core::{Code, Element, KernelContext, Result, kernel};

use super::cpu::write_view;
use super::index::{
    IndexElement, in_kernel, index_output, input_vector, replace_dim, shape_from_shape_tensor,
};
use super::math::{self, broadcast_view, display_values, shape_from_values};
use super::ops::{BroadcastGradientArgs, BroadcastTo};

/// BroadcastTo's shape function (TensorFlow's): `shape` must be a vector;
/// the output is the shape it holds (or as many unknown dims as it has
/// elements), with each input dimension known to be above 1 merged into the
/// output dimension it aligns with (so `[2,3]` to `[4,?,?]` gives
/// `[4,d0_0,d0_1]`). An input of higher rank than the output, or a known
/// size that differs, is an error.
pub fn broadcast_to_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let mut output = shape_from_shape_tensor(c, 1)?;
    let input = c.input(0)?;
    let (Some(out_rank), Some(in_rank)) = (c.rank(output), c.rank(input)) else {
        return c.set_output(0, output);
    };
    c.with_rank_at_most(input, out_rank)?;
    for i in 0..in_rank {
        let in_dim = c.dim(input, (in_rank - 1 - i) as i64)?;
        if c.value(in_dim).is_some_and(|v| v > 1) {
            let k = out_rank - 1 - i;
            let out_dim = c.dim(output, k as i64)?;
            let merged = c.merge_dim(in_dim, out_dim)?;
            output = replace_dim(c, output, k, merged)?;
        }
    }
    c.set_output(0, output)
}

#[kernel(op = BroadcastTo, types(numbertype, bool, string))]
fn broadcast_to<T: Element>(ctx: &mut KernelContext<'_>) -> Result<()> {
    let sizes = input_vector(ctx, 1, "shape")?;
    let shape = shape_from_values("shape", &sizes).map_err(|e| in_kernel(ctx, e))?;
    let input = ctx.input(0)?.clone();
    if input.dims() == shape.dims() {
        return ctx.set_output(0, input);
    }
    if input.rank() > shape.rank() {
        return Err(ctx.error(
            Code::InvalidArgument,
            format_args!(
                "Rank of input ({}) must be no greater than rank of output shape ({})",
                input.rank(),
                shape.rank()
            ),
        ));
    }
    let Some(view) = broadcast_view(input.dims(), shape.dims()) else {
        return Err(ctx.error(
            Code::InvalidArgument,
            format_args!(
                "Unable to broadcast tensor of shape {} to tensor of shape {shape}",
                input.shape()
            ),
        ));
    };
    write_view::<T>(ctx, &input, &view, shape.dims())
}

/// BroadcastGradientArgs's shape function (TensorFlow's): both inputs must
/// be vectors; both outputs are vectors of unknown length.
pub fn broadcast_gradient_args_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    for i in 0..2 {
        let s = c.input(i)?;
        c.with_rank(s, 1)?;
    }
    for i in 0..2 {
        let length = c.unknown_dim();
        let output = c.vector(length);
        c.set_output(i, output)?;
    }
    Ok(())
}

#[kernel(op = BroadcastGradientArgs, types(i32, i64))]
fn broadcast_gradient_args<I: IndexElement>(ctx: &mut KernelContext<'_>) -> Result<()> {
    let s0 = input_vector(ctx, 0, "s0")?;
    let s1 = input_vector(ctx, 1, "s1")?;
    let dims = |name: &str, values: &[i64]| {
        values
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                usize::try_from(v).map_err(|_| {
                    ctx.error(
                        Code::InvalidArgument,
                        format_args!("{name}[{i}] = {v} is not a dimension size (>= 0)"),
                    )
                })
            })
            .collect::<Result<Vec<usize>>>()
    };
    let (d0, d1) = (dims("s0", &s0)?, dims("s1", &s1)?);
    let Some((r0, r1)) = math::broadcast_gradient_args(&d0, &d1) else {
        return Err(ctx.error(
            Code::InvalidArgument,
            format_args!(
                "Incompatible shapes: s0 = {} vs. s1 = {}",
                display_values(&s0),
                display_values(&s1)
            ),
        ));
    };
    let r0 = index_output::<I>(ctx, "axis", &r0)?;
    let r1 = index_output::<I>(ctx, "axis", &r1)?;
    ctx.set_output(0, r0)?;
    ctx.set_output(1, r1)
}
