//! The checks the ZeroOut kernels make, the same on every device: the
//! guide's `OP_REQUIRES` for `preserve_index` (once, when the kernel is
//! created) and for the input's rank and size (on each call).

use op_core::{Code, KernelConstruction, KernelContext, Result, op_requires};

use super::ops::ZeroOutPreserveIndex;

/// `preserve_index`, read and checked (`>= 0`) when a kernel of
/// `ZeroOutPreserveIndex` is created.
pub(super) fn preserve_index(ctx: &KernelConstruction<'_>) -> Result<usize> {
    let ZeroOutPreserveIndex { preserve_index } = ctx.attrs()?;
    op_requires!(
        preserve_index >= 0,
        Code::InvalidArgument,
        "Need preserve_index >= 0, got {preserve_index}"
    );
    Ok(preserve_index as usize)
}

/// Input 0 of `ZeroOutPreserveIndex` is a vector with an element at
/// `preserve_index`.
pub(super) fn vector_with_index(ctx: &KernelContext<'_>, preserve_index: usize) -> Result<()> {
    let input = ctx.input(0)?;
    op_requires!(
        input.rank() == 1,
        Code::InvalidArgument,
        "ZeroOut expects a 1-D vector, got shape {}",
        input.shape()
    );
    op_requires!(
        preserve_index < input.dims()[0],
        Code::InvalidArgument,
        "preserve_index out of range: {} for a vector of {} elements",
        preserve_index,
        input.dims()[0]
    );
    Ok(())
}

/// Input 0 of `ZeroOutVector` is a vector.
pub(super) fn vector(ctx: &KernelContext<'_>) -> Result<()> {
    op_requires!(
        ctx.input(0)?.rank() == 1,
        Code::InvalidArgument,
        "ZeroOut expects a 1-D vector."
    );
    Ok(())
}
