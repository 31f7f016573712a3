//! What the CPU kernels of the array ops share: writing an output block by
//! block over the runtime's intra-op threads, from a strided view of an
//! input or from rows of several.

use op_core::{Element, KernelContext, Result, Tensor};

use super::math::{StridedView, concat_rows_into};

/// What copying one element costs, in CPU cycles, for splitting work over
/// threads: a copy is about the cheapest work there is, so outputs are
/// split only when large (about 20,000 elements and up).
const COPY_COST: usize = 1;

/// Allocates output 0 with shape `dims` and writes it with `fill(offset,
/// block)` on contiguous blocks that cover it (`offset` is the block's
/// first element), in parallel on the runtime's threads when large.
///
/// The output is allocated zeroed, so `fill` may leave elements that
/// should be zero (DynamicStitch's rows that no index names); the copies
/// of [`super::math`] write all the others.
pub(super) fn write_output<T: Element>(
    ctx: &mut KernelContext<'_>,
    dims: &[usize],
    fill: impl Fn(usize, &mut [T]) + Sync,
) -> Result<()> {
    write_output_at(ctx, 0, dims, fill)
}

/// [`write_output`] for output `index` (one of a list output's tensors).
pub(super) fn write_output_at<T: Element>(
    ctx: &mut KernelContext<'_>,
    index: usize,
    dims: &[usize],
    fill: impl Fn(usize, &mut [T]) + Sync,
) -> Result<()> {
    let threads = ctx.threads();
    let output = ctx.allocate_output(index, dims)?.as_slice_mut::<T>()?;
    threads.shard_slice(output, COPY_COST, fill);
    Ok(())
}

/// Output 0, of shape `dims`, becomes `view` of `input` (the same elements
/// in row-major order; Tile's view has more dims than its output), copied
/// block by block over the runtime's threads: Transpose, BroadcastTo and
/// Tile.
pub(super) fn write_view<T: Element>(
    ctx: &mut KernelContext<'_>,
    input: &Tensor,
    view: &StridedView,
    dims: &[usize],
) -> Result<()> {
    let copy = view.simplified();
    let values = input.as_slice::<T>()?;
    write_output::<T>(ctx, dims, |offset, block| {
        copy.copy_into(values, offset, block)
    })
}

/// Output 0, of shape `dims`, becomes the row-wise concatenation of
/// `inputs` (rows of `widths[j]` elements for input `j`, see
/// [`concat_rows_into`]), copied block by block over the runtime's
/// threads: ConcatV2 and Pack.
pub(super) fn write_rows<T: Element>(
    ctx: &mut KernelContext<'_>,
    inputs: &[Tensor],
    widths: &[usize],
    dims: &[usize],
) -> Result<()> {
    let slices = inputs
        .iter()
        .map(Tensor::as_slice::<T>)
        .collect::<Result<Vec<&[T]>>>()?;
    write_output::<T>(ctx, dims, |offset, block| {
        concat_rows_into(&slices, widths, offset, block)
    })
}
