//! Reshape, ExpandDims and Squeeze: ops that change a tensor's shape but
//! not its elements. Their kernels share the input's buffer (zero copy,
//! [`Tensor::reshape`](op_core::Tensor::reshape)) and serve every dtype.

use op_core::shape_inference::{DimensionHandle, InferenceContext, ShapeHandle};
use op_core::{Code, KernelContext, Result, kernel};

use super::index::{
    constant_values, dims_of, in_kernel, index_values, input_vector, replace_dim,
    shape_from_shape_tensor,
};
use super::math::{self, normalize_axis, reshape_dims};
use super::ops::{ExpandDims, Reshape, Squeeze};

/// The product of the known dimensions of `s` (rank `rank`) and the index
/// of its one unknown dimension, if any; `None` if it has more than one.
fn known_elements(
    c: &mut InferenceContext<'_>,
    s: ShapeHandle,
    rank: usize,
) -> Result<Option<(usize, Option<usize>)>> {
    let mut product: usize = 1;
    let mut unknown = None;
    for (i, d) in dims_of(c, s, rank)?.into_iter().enumerate() {
        match c.value(d) {
            Some(v) => {
                product = product.checked_mul(v).ok_or_else(|| {
                    c.error(format!(
                        "the element count of shape {} overflows",
                        c.shape_string(s)
                    ))
                })?;
            }
            None if unknown.is_none() => unknown = Some(i),
            None => return Ok(None),
        }
    }
    Ok(Some((product, unknown)))
}

/// Reshape's shape function (TensorFlow's `SetOutputShapeForReshape`).
///
/// The output is the shape that `shape` holds (its `-1` an unknown
/// dimension), or as many unknown dimensions as `shape` has elements when
/// only its length is known. With the input's rank known, an unknown
/// output dimension is resolved from the element counts where they allow
/// it, and known counts that differ are an error: `[2,3]` reshaped to
/// `[-1,2]` gives `[3,2]`, to `[4]` an error.
pub fn reshape_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let input = c.input(0)?;
    let mut out = shape_from_shape_tensor(c, 1)?;
    let (Some(in_rank), Some(out_rank)) = (c.rank(input), c.rank(out)) else {
        return c.set_output(0, out);
    };
    let in_known = known_elements(c, input, in_rank)?;
    let out_known = known_elements(c, out, out_rank)?;
    if let (Some((in_n, in_unknown)), Some((out_n, out_unknown))) = (in_known, out_known) {
        match (in_unknown, out_unknown) {
            (None, None) if in_n != out_n => {
                return Err(c.error(format!(
                    "Cannot reshape a tensor with {in_n} elements to shape {} ({out_n} elements)",
                    c.shape_string(out)
                )));
            }
            (None, Some(k)) if out_n > 0 => {
                if in_n % out_n != 0 {
                    return Err(c.error(format!(
                        "Cannot reshape a tensor with {in_n} elements to shape {}: {in_n} is not a multiple of {out_n}",
                        c.shape_string(out)
                    )));
                }
                let inferred = c.make_dim(Some(in_n / out_n));
                out = replace_dim(c, out, k, inferred)?;
            }
            (Some(k), None) if in_n != 0 => {
                if out_n % in_n != 0 {
                    return Err(c.error(format!(
                        "Cannot reshape {} to shape {} ({out_n} elements): {out_n} is not a multiple of {in_n}",
                        c.shape_string(input),
                        c.shape_string(out)
                    )));
                }
                let inferred = c.make_dim(Some(out_n / in_n));
                let unknown = c.dim(input, k as i64)?;
                c.merge_dim(unknown, inferred)?;
            }
            (Some(i), Some(k)) if in_n == out_n => {
                // The unknown dims hold the same count: they are one dim.
                let same = c.dim(input, i as i64)?;
                out = replace_dim(c, out, k, same)?;
            }
            _ => {}
        }
    }
    c.set_output(0, out)
}

#[kernel(op = Reshape)]
fn reshape(ctx: &mut KernelContext<'_>) -> Result<()> {
    let sizes = input_vector(ctx, 1, "shape")?;
    let input = ctx.input(0)?;
    let shape = reshape_dims(input.dims(), &sizes).map_err(|e| in_kernel(ctx, e))?;
    let output = input.reshape(shape).map_err(|e| in_kernel(ctx, e))?;
    ctx.set_output(0, output)
}

/// ExpandDims's shape function (TensorFlow's): with `dim` and the input's
/// rank known, the input's dims with a 1 inserted at `dim`; otherwise a
/// shape of unknown rank. A `dim` of more than one value, or out of
/// `[-rank - 1, rank]`, is an error.
pub fn expand_dims_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let input = c.input(0)?;
    let dim = constant_values(c, 1)?;
    if let Some(values) = &dim
        && values.len() != 1
    {
        return Err(c.error(format!(
            "'dim' input must be a tensor with a single value, but has {} values",
            values.len()
        )));
    }
    let (Some(dim), Some(rank)) = (dim, c.rank(input)) else {
        let unknown = c.unknown_shape();
        return c.set_output(0, unknown);
    };
    let axis = dim[0];
    let index = normalize_axis(axis, rank + 1).ok_or_else(|| {
        c.error(format!(
            "dim {axis} not in the interval [{}, {rank}]",
            -(rank as i64) - 1
        ))
    })?;
    let mut dims = dims_of(c, input, rank)?;
    let one = c.make_dim(Some(1));
    dims.insert(index, one);
    let output = c.make_shape(dims);
    c.set_output(0, output)
}

#[kernel(op = ExpandDims)]
fn expand_dims(ctx: &mut KernelContext<'_>) -> Result<()> {
    let dim = ctx.input(1)?;
    if dim.num_elements() != 1 {
        return Err(ctx.error(
            Code::InvalidArgument,
            format_args!(
                "input 1 ('dim') must hold a single value, but has shape {}",
                dim.shape()
            ),
        ));
    }
    let axis = index_values(dim).map_err(|e| in_kernel(ctx, e))?[0];
    let input = ctx.input(0)?;
    let dims = math::expand_dims(input.dims(), axis).map_err(|e| in_kernel(ctx, e))?;
    let output = input.reshape(dims).map_err(|e| in_kernel(ctx, e))?;
    ctx.set_output(0, output)
}

/// Squeeze's shape function (TensorFlow's): the input's dims without the
/// squeezed ones. An unknown dimension named in `squeeze_dims` is taken to
/// be 1; with `squeeze_dims` empty, an unknown dimension makes the rank
/// unknown. A named dimension known not to be 1, or out of range, is an
/// error.
pub fn squeeze_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let input = c.input(0)?;
    let Some(rank) = c.rank(input) else {
        let unknown = c.unknown_shape();
        return c.set_output(0, unknown);
    };
    let axes: Vec<i64> = c.get_attr("squeeze_dims")?;
    let mut squeeze = vec![false; rank];
    for (i, &axis) in axes.iter().enumerate() {
        let index = normalize_axis(axis, rank).ok_or_else(|| {
            c.error(format!(
                "squeeze_dims[{i}] = {axis} not in [{}, {rank})",
                -(rank as i64)
            ))
        })?;
        squeeze[index] = true;
    }
    let mut kept: Vec<DimensionHandle> = Vec::with_capacity(rank);
    for (i, d) in dims_of(c, input, rank)?.into_iter().enumerate() {
        match c.value(d) {
            None if squeeze[i] => continue,
            None if axes.is_empty() => {
                let unknown = c.unknown_shape();
                return c.set_output(0, unknown);
            }
            Some(1) if squeeze[i] || axes.is_empty() => continue,
            Some(v) if squeeze[i] => {
                return Err(c.error(format!(
                    "Can not squeeze dim[{i}], expected a dimension of 1, got {v}"
                )));
            }
            _ => kept.push(d),
        }
    }
    let output = c.make_shape(kept);
    c.set_output(0, output)
}

#[kernel(op = Squeeze)]
fn squeeze(ctx: &mut KernelContext<'_>, attrs: &Squeeze) -> Result<()> {
    let input = ctx.input(0)?;
    let dims =
        math::squeeze_dims(input.dims(), &attrs.squeeze_dims).map_err(|e| in_kernel(ctx, e))?;
    let output = input.reshape(dims).map_err(|e| in_kernel(ctx, e))?;
    ctx.set_output(0, output)
}
