//! Slice and Pad: a box cut out of a tensor, and a tensor put in a box of
//! zeros. Each is the other's gradient (TensorFlow's `_SliceGrad` pads,
//! `_PadGrad` slices). Slice copies its input's [`slice_view`] block by
//! block over the runtime's threads (and shares the input's buffer when
//! the slice is the whole input); Pad writes its output block by block
//! with [`pad_into`] (and shares the input's buffer when every padding is
//! 0).

use op_core::shape_inference::InferenceContext;
use op_core::{Code, Element, KernelContext, Result, kernel};

use super::cpu::write_output;
use super::index::{
    constant_values, in_kernel, index_values, input_vector, shape_from_shape_tensor,
};
use super::math::{pad_dims, pad_into, slice_dims, slice_view};
use super::ops::{Pad, Slice};

/// Slice's shape function (TensorFlow's `SliceShape`).
///
/// `begin` and `size` are vectors of one length, the input's rank. With
/// `size`'s value known, output dimension `i` is `size[i]`, or the input's
/// dimension less `begin[i]` where it is -1 (unknown where either is);
/// a size below -1 is an error. With only some of `size` known (a partly
/// constant shape), its known values; else the input's rank with unknown
/// dimensions, or an unknown shape.
pub fn slice_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let mut input = c.input(0)?;
    let begin_shape = c.input(1)?;
    let begin_shape = c.with_rank(begin_shape, 1)?;
    let sizes_shape = c.input(2)?;
    let sizes_shape = c.with_rank(sizes_shape, 1)?;
    let begin_shape = c.merge(begin_shape, sizes_shape)?;
    let ndims = c.dim(begin_shape, 0)?;
    if let Some(n) = c.value(ndims) {
        input = c.with_rank(input, n)?;
    }
    let begin = shape_from_shape_tensor(c, 1)?;
    if let Some(sizes) = constant_values(c, 2)? {
        let begin = c.with_rank(begin, sizes.len())?;
        let mut dims = Vec::with_capacity(sizes.len());
        for (i, &size) in sizes.iter().enumerate() {
            let dim = c.dim(input, i as i64)?;
            if size == -1 {
                let start = c.dim(begin, i as i64)?;
                dims.push(c.subtract(dim, start)?);
                continue;
            }
            let size = usize::try_from(size).map_err(|_| {
                let length = c.value(dim).map_or("?".to_owned(), |d| d.to_string());
                c.error(format!(
                    "Out of bounds slicing on dimension {i} of length {length}: sizes vector cannot be < -1, but was {size}"
                ))
            })?;
            dims.push(c.make_dim(Some(size)));
        }
        let output = c.make_shape(dims);
        return c.set_output(0, output);
    }
    let sizes = shape_from_shape_tensor(c, 2)?;
    let output = match (c.rank(sizes), c.rank(input)) {
        (Some(rank), _) => {
            c.with_rank(begin, rank)?;
            sizes
        }
        (None, Some(rank)) => c.unknown_shape_of_rank(rank),
        (None, None) => c.unknown_shape(),
    };
    c.set_output(0, output)
}

#[kernel(op = Slice, types(numbertype, bool, string))]
fn slice<T: Element>(ctx: &mut KernelContext<'_>) -> Result<()> {
    let begin = input_vector(ctx, 1, "begin")?;
    let size = input_vector(ctx, 2, "size")?;
    let input = ctx.input(0)?.clone();
    let (begin, shape) = slice_dims(input.dims(), &begin, &size).map_err(|e| in_kernel(ctx, e))?;
    if shape.dims() == input.dims() {
        return ctx.set_output(0, input);
    }
    let (view, offset) = slice_view(input.dims(), &begin, shape.dims());
    let view = view.simplified();
    let values = input.as_slice::<T>()?;
    write_output::<T>(ctx, shape.dims(), |start, block| {
        // Not reached for an empty slice, whose offset may lie past the end.
        view.copy_into(&values[offset..], start, block)
    })
}

/// Pad's shape function (TensorFlow's `PadShapeFn`).
///
/// `paddings` is a `[rank, 2]` matrix whose rank is the input's. With its
/// value known, output dimension `i` is the input's plus both paddings
/// (an error if one is negative); else the input's rank with unknown
/// dimensions, or an unknown shape.
pub fn pad_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let paddings = c.input(1)?;
    let paddings = c.with_rank(paddings, 2)?;
    let columns = c.dim(paddings, 1)?;
    c.with_value(columns, 2)?;
    let mut input = c.input(0)?;
    let mut n = c.dim(paddings, 0)?;
    if let Some(rank) = c.value(n) {
        input = c.with_rank(input, rank)?;
    } else if let Some(rank) = c.rank(input) {
        n = c.with_value(n, rank)?;
    }
    let Some(values) = constant_values(c, 1)? else {
        let output = match c.value(n) {
            Some(rank) => c.unknown_shape_of_rank(rank),
            None => c.unknown_shape(),
        };
        return c.set_output(0, output);
    };
    let rank = values.len() / 2;
    let input = c.with_rank(input, rank)?;
    c.with_value(n, rank)?;
    let mut dims = Vec::with_capacity(rank);
    for (i, pair) in values.chunks_exact(2).enumerate() {
        if pair[0] < 0 || pair[1] < 0 {
            return Err(c.error("Paddings must be non-negative"));
        }
        let total = pair[0]
            .checked_add(pair[1])
            .and_then(|t| usize::try_from(t).ok());
        let total = total.ok_or_else(|| c.error("the paddings overflow"))?;
        let d = c.dim(input, i as i64)?;
        dims.push(c.add(d, total)?);
    }
    let output = c.make_shape(dims);
    c.set_output(0, output)
}

#[kernel(op = Pad, types(numbertype, bool, string))]
fn pad<T: Element>(ctx: &mut KernelContext<'_>) -> Result<()> {
    let paddings = ctx.input(1)?;
    if paddings.rank() != 2 || paddings.dims()[1] != 2 {
        return Err(ctx.error(
            Code::InvalidArgument,
            format_args!(
                "input 1 ('paddings') must be a matrix with 2 columns, but has shape {}",
                paddings.shape()
            ),
        ));
    }
    let paddings = index_values(paddings).map_err(|e| in_kernel(ctx, e))?;
    let input = ctx.input(0)?.clone();
    let (before, shape) = pad_dims(input.dims(), &paddings).map_err(|e| in_kernel(ctx, e))?;
    if shape.dims() == input.dims() {
        return ctx.set_output(0, input);
    }
    let values = input.as_slice::<T>()?;
    let zero = T::default();
    write_output::<T>(ctx, shape.dims(), |offset, block| {
        pad_into(
            values,
            input.dims(),
            &before,
            shape.dims(),
            &zero,
            offset,
            block,
        )
    })
}
