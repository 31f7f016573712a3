//! What the CPU kernels of the array ops share: writing output 0 block by
//! block over the runtime's intra-op threads.

use op_core::{Element, KernelContext, Result};

/// What copying one element costs, in CPU cycles, for splitting work over
/// threads: a copy is about the cheapest work there is, so outputs are
/// split only when large (about 20,000 elements and up).
const COPY_COST: usize = 1;

/// Allocates output 0 with shape `dims` and writes it with `fill(offset,
/// block)` on contiguous blocks that cover it (`offset` is the block's
/// first element), in parallel on the runtime's threads when large.
///
/// `fill` must write every element of its block; the copies of
/// [`super::math`] do.
pub(super) fn write_output<T: Element>(
    ctx: &mut KernelContext<'_>,
    dims: &[usize],
    fill: impl Fn(usize, &mut [T]) + Sync,
) -> Result<()> {
    let threads = ctx.threads();
    let output = ctx.allocate_output(0, dims)?.as_slice_mut::<T>()?;
    threads.shard_slice(output, COPY_COST, fill);
    Ok(())
}
