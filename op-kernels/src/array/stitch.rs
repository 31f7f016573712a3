//! DynamicStitch: slices of several tensors interleaved by index into one
//! (TensorFlow's `data_flow_ops.cc`). The reductions' gradients build the
//! reduced shape with it (TensorFlow's `reduced_shape`). The kernel sizes
//! the output from the indices ([`stitch_rows`]) and writes it block by
//! block over the runtime's threads ([`stitch_into`]); rows no index names
//! stay zero.

use op_core::shape_inference::InferenceContext;
use op_core::{Code, Element, KernelContext, Result, Tensor, kernel};

use super::cpu::write_output;
use super::math::{display_dims, stitch_into, stitch_rows};
use super::ops::DynamicStitch;

/// DynamicStitch's shape function (TensorFlow's
/// `DynamicStitchShapeFunction`): each `data[m]`'s shape starts with
/// `indices[m]`'s, and the rest, one shape for all, follows the output's
/// first dimension: `max(indices) + 1` when every index tensor is a known
/// constant, else unknown.
pub fn dynamic_stitch_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let n = c.num_inputs() / 2;
    let mut all_constant = true;
    let mut max_index: i64 = -1;
    let mut extra = c.unknown_shape();
    for m in 0..n {
        match c.input_tensor(m) {
            Some(indices) => {
                let values = indices.as_slice::<i32>()?;
                if let Some(&max) = values.iter().max() {
                    max_index = max_index.max(i64::from(max));
                }
            }
            None => all_constant = false,
        }
        let indices = c.input(m)?;
        let Some(rank) = c.rank(indices) else {
            continue;
        };
        let data = c.input(n + m)?;
        let data = c.with_rank_at_least(data, rank)?;
        let prefix = c.subshape(data, 0, Some(rank as i64))?;
        c.merge(prefix, indices).map_err(|e| {
            e.with_context(format!(
                "data[{m}]'s shape must start with indices[{m}]'s shape"
            ))
        })?;
        let rest = c.subshape(data, rank as i64, None)?;
        extra = c.merge(extra, rest).map_err(|e| {
            e.with_context(format!(
                "data[{m}]'s shape past indices[{m}]'s must be that of the other data"
            ))
        })?;
    }
    let first = if all_constant {
        c.make_dim(usize::try_from(max_index + 1).ok())
    } else {
        c.unknown_dim()
    };
    let first = c.vector(first);
    let output = c.concatenate(first, extra);
    c.set_output(0, output)
}

#[kernel(op = DynamicStitch, types(numbertype, bool, string))]
fn dynamic_stitch<T: Element>(ctx: &mut KernelContext<'_>) -> Result<()> {
    let indices: Vec<Tensor> = ctx.input_list("indices")?.to_vec();
    let data: Vec<Tensor> = ctx.input_list("data")?.to_vec();
    let index_values = indices
        .iter()
        .map(Tensor::as_slice::<i32>)
        .collect::<Result<Vec<&[i32]>>>()?;
    let rows = stitch_rows(&index_values).map_err(|e| ctx.error(e.code(), e.message()))?;
    let (indices0, data0) = (&indices[0], &data[0]);
    let extra = data0.dims().get(indices0.rank()..).unwrap_or(&[]);
    for (m, (ind, dat)) in indices.iter().zip(&data).enumerate() {
        let starts = dat.dims().starts_with(ind.dims());
        if !starts {
            return Err(ctx.error(
                Code::InvalidArgument,
                format_args!(
                    "data[{m}].shape = {} does not start with indices[{m}].shape = {}",
                    display_dims(dat.dims()),
                    display_dims(ind.dims())
                ),
            ));
        }
        if &dat.dims()[ind.rank()..] != extra {
            return Err(ctx.error(
                Code::InvalidArgument,
                format_args!(
                    "Need data[0].shape[{}:] = data[{m}].shape[{}:], got data[0].shape = {}, data[{m}].shape = {}, indices[0].shape = {}, indices[{m}].shape = {}",
                    indices0.rank(),
                    ind.rank(),
                    display_dims(data0.dims()),
                    display_dims(dat.dims()),
                    display_dims(indices0.dims()),
                    display_dims(ind.dims())
                ),
            ));
        }
    }
    let slice: usize = extra.iter().product();
    let mut dims = vec![rows];
    dims.extend_from_slice(extra);
    let slices = data
        .iter()
        .map(Tensor::as_slice::<T>)
        .collect::<Result<Vec<&[T]>>>()?;
    // The output is allocated zeroed: rows no index names stay zero.
    write_output::<T>(ctx, &dims, |offset, block| {
        stitch_into(&index_values, &slices, slice, offset, block)
    })
}
