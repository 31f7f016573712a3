//! ConcatV2 and Pack: tensors joined along a dimension (Pack along a new
//! one). Both are [`concat_rows_into`](super::concat_rows_into) over the inputs viewed as matrices
//! (rows before the axis, the rest in each row), written block by block
//! over the runtime's threads; a Pack of one tensor shares its buffer.
//!
//! And what their gradients take them apart with: Unpack (Pack's inverse;
//! each output is an [`unpack_view`](super::unpack_view) of the input,
//! copied block by block) and ConcatOffset (where each input of a
//! concatenation starts, for Slice).

use op_core::shape_inference::{DimensionHandle, InferenceContext, ShapeHandle};
use op_core::{Code, Element, KernelContext, Result, ResultExt, Tensor, kernel};

use super::cpu::{write_output_at, write_rows};
use super::index::{
    IndexElement, constant_values, dims_of, in_kernel, index_output, input_scalar, input_vector,
};
use super::math::{concat_dims, concat_offsets, normalize_axis, pack_dims, unpack_view};
use super::ops::{ConcatOffset, ConcatV2, Pack, Unpack};

/// The dims of `s` before `axis`, the dim at `axis`, and the dims after it
/// (negative `axis` counts from the end), for a shape of at least
/// `min_rank` dims (or of unknown rank).
fn split_at_axis(
    c: &mut InferenceContext<'_>,
    s: ShapeHandle,
    axis: i64,
    min_rank: usize,
) -> Result<(ShapeHandle, DimensionHandle, ShapeHandle)> {
    let s = c.with_rank_at_least(s, min_rank)?;
    let before = c.subshape(s, 0, Some(axis))?;
    let middle = c.dim(s, axis)?;
    let after = if axis == -1 {
        c.scalar()
    } else {
        c.subshape(s, axis.saturating_add(1), None)?
    };
    Ok((before, middle, after))
}

/// ConcatV2's shape function (TensorFlow's `ConcatV2Shape`).
///
/// `axis` must be a scalar. With its value known, the output is the inputs'
/// dims merged but along the axis, where they add up; each input must have
/// the rank the axis needs. Otherwise the output has the inputs' rank
/// (which must agree, and not be 0) with unknown dims, or unknown rank.
pub fn concat_v2_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let n = c.num_inputs() - 1;
    let axis_shape = c.input(n)?;
    c.with_rank(axis_shape, 0)?;
    let Some(axis) = constant_values(c, n)? else {
        let mut rank = None;
        for i in 0..n {
            let s = c.input(i)?;
            rank = rank.or(c.rank(s));
        }
        let output = match rank {
            None => c.unknown_shape(),
            Some(0) => {
                return Err(c.error("Can't concatenate scalars (use tf.stack instead)"));
            }
            Some(rank) => {
                for i in 0..n {
                    let s = c.input(i)?;
                    c.with_rank(s, rank)?;
                }
                c.unknown_shape_of_rank(rank)
            }
        };
        return c.set_output(0, output);
    };
    let [axis] = axis[..] else {
        return Err(c.error(format!(
            "input {n} ('axis') must be a scalar, but its value has {} elements",
            axis.len()
        )));
    };
    // The rank that `axis` needs: `axis + 1`, or `-axis` when negative.
    let min_rank = usize::try_from(if axis < 0 {
        axis.unsigned_abs()
    } else {
        axis.unsigned_abs() + 1
    })
    .unwrap_or(usize::MAX);
    let last = c.input(n - 1)?;
    let (mut before, mut middle, mut after) = split_at_axis(c, last, axis, min_rank)?;
    for i in (0..n - 1).rev() {
        let s = c.input(i)?;
        let (b, m, a) = split_at_axis(c, s, axis, min_rank)?;
        let context = || format!("from merging the shape of input {i} with the other inputs'");
        before = c.merge(b, before).with_context(context)?;
        middle = c.add(middle, m)?;
        after = c.merge(a, after).with_context(context)?;
    }
    let middle = c.vector(middle);
    let output = c.concatenate(before, middle);
    let output = c.concatenate(output, after);
    c.set_output(0, output)
}

#[kernel(op = ConcatV2, types(numbertype, bool, string))]
fn concat_v2<T: Element>(ctx: &mut KernelContext<'_>) -> Result<()> {
    let values: Vec<Tensor> = ctx.input_list("values")?.to_vec();
    let axis = input_scalar(ctx, values.len(), "axis")?;
    let shapes: Vec<&[usize]> = values.iter().map(Tensor::dims).collect();
    let (shape, axis) = concat_dims(&shapes, axis).map_err(|e| in_kernel(ctx, e))?;
    let inner: usize = shape.dims()[axis + 1..].iter().product();
    let widths: Vec<usize> = values.iter().map(|v| v.dims()[axis] * inner).collect();
    write_rows::<T>(ctx, &values, &widths, shape.dims())
}

/// Pack's shape function (TensorFlow's): the inputs' shapes merged, with a
/// dimension of size `N` inserted at `axis`; unknown if no input's rank is
/// known. Shapes that disagree, or an `axis` out of `[-(rank + 1), rank +
/// 1)`, are an error.
pub fn pack_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let n = c.num_inputs();
    let mut merged = c.input(n - 1)?;
    for i in (0..n - 1).rev() {
        let s = c.input(i)?;
        merged = c.merge(s, merged).with_context(|| {
            format!("from merging the shape of input {i} with the other inputs'")
        })?;
    }
    let Some(rank) = c.rank(merged) else {
        let unknown = c.unknown_shape();
        return c.set_output(0, unknown);
    };
    let axis: i64 = c.get_attr("axis")?;
    let index = normalize_axis(axis, rank + 1).ok_or_else(|| {
        c.error(format!(
            "Invalid axis: {axis}; must be in [{}, {})",
            -(rank as i64) - 1,
            rank + 1
        ))
    })?;
    let mut dims = dims_of(c, merged, rank)?;
    let count = c.make_dim(Some(n));
    dims.insert(index, count);
    let output = c.make_shape(dims);
    c.set_output(0, output)
}

#[kernel(op = Pack, types(numbertype, bool, string))]
fn pack<T: Element>(ctx: &mut KernelContext<'_>, attrs: &Pack) -> Result<()> {
    let values: Vec<Tensor> = ctx.input_list("values")?.to_vec();
    let shapes: Vec<&[usize]> = values.iter().map(Tensor::dims).collect();
    let (shape, axis) = pack_dims(&shapes, attrs.axis).map_err(|e| in_kernel(ctx, e))?;
    if let [only] = &values[..] {
        let output = only.reshape(shape).map_err(|e| in_kernel(ctx, e))?;
        return ctx.set_output(0, output);
    }
    let width: usize = values[0].dims()[axis..].iter().product();
    let widths = vec![width; values.len()];
    write_rows::<T>(ctx, &values, &widths, shape.dims())
}

/// Unpack's shape function (TensorFlow's): with the input's rank known,
/// every output is the input's shape without dimension `axis` (which must
/// be in `[-rank, rank)`), and that dimension must be `num`; otherwise
/// every output is unknown.
pub fn unpack_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let input = c.input(0)?;
    let n = c.num_outputs();
    let output = match c.rank(input) {
        Some(rank) => {
            let axis: i64 = c.get_attr("axis")?;
            let index = normalize_axis(axis, rank).ok_or_else(|| {
                c.error(format!(
                    "Invalid axis: {axis}; must be in [{}, {rank})",
                    -(rank as i64)
                ))
            })?;
            let mut dims = dims_of(c, input, rank)?;
            let unpacked = dims.remove(index);
            c.with_value(unpacked, n)?;
            c.make_shape(dims)
        }
        None => c.unknown_shape(),
    };
    for i in 0..n {
        c.set_output(i, output)?;
    }
    Ok(())
}

#[kernel(op = Unpack, types(numbertype, bool, string))]
fn unpack<T: Element>(ctx: &mut KernelContext<'_>, attrs: &Unpack) -> Result<()> {
    let input = ctx.input(0)?.clone();
    let rank = input.rank();
    let axis = normalize_axis(attrs.axis, rank).ok_or_else(|| {
        ctx.error(
            Code::InvalidArgument,
            format_args!("axis = {} not in [{}, {rank})", attrs.axis, -(rank as i64)),
        )
    })?;
    let num = ctx.num_outputs();
    if input.dims()[axis] != num {
        return Err(ctx.error(
            Code::InvalidArgument,
            format_args!(
                "Input shape axis {axis} must equal {num}, got shape {}",
                input.shape()
            ),
        ));
    }
    let values = input.as_slice::<T>()?;
    for j in 0..num {
        let (view, offset) = unpack_view(input.dims(), axis, j);
        let view = view.simplified();
        let dims: Vec<usize> = input
            .dims()
            .iter()
            .enumerate()
            .filter(|&(k, _)| k != axis)
            .map(|(_, &d)| d)
            .collect();
        write_output_at::<T>(ctx, j, &dims, |start, block| {
            view.copy_into(&values[offset..], start, block)
        })?;
    }
    Ok(())
}

/// ConcatOffset's shape function (TensorFlow's): each offset has the shape
/// of its shape input.
pub fn concat_offset_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    for i in 1..c.num_inputs() {
        let s = c.input(i)?;
        c.set_output(i - 1, s)?;
    }
    Ok(())
}

#[kernel(op = ConcatOffset, types(shape_type = [i32, i64]))]
fn concat_offset<I: IndexElement>(ctx: &mut KernelContext<'_>) -> Result<()> {
    let axis = input_scalar(ctx, 0, "concat_dim")?;
    let n = ctx.num_inputs() - 1;
    let shapes = (1..=n)
        .map(|i| input_vector(ctx, i, "shape"))
        .collect::<Result<Vec<Vec<i64>>>>()?;
    let views: Vec<&[i64]> = shapes.iter().map(Vec::as_slice).collect();
    let offsets = concat_offsets(axis, &views).map_err(|e| in_kernel(ctx, e))?;
    for (i, offset) in offsets.iter().enumerate() {
        // Offsets are sums of sizes that fit the index type.
        let offset: Vec<usize> = offset.iter().map(|&o| o as usize).collect();
        let output = index_output::<I>(ctx, "offset", &offset)?;
        ctx.set_output(i, output)?;
    }
    Ok(())
}
