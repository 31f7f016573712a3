//! The reductions `Sum`, `Mean`, `Max` and `Prod`: a tensor reduced over
//! some of its axes, with TensorFlow's OpDefs, shape function and results.
//!
//! | op | result | of no elements |
//! | --- | --- | --- |
//! | `Sum` | the sum (integers wrap) | 0 |
//! | `Mean` | the sum divided by the count (integers truncate) | NaN for floats, 0 for integers |
//! | `Max` | the largest element (NaN if any is NaN) | the type's lowest value (`-inf`) |
//! | `Prod` | the product (integers wrap) | 1 |
//!
//! The axes (`reduction_indices`, `int32` or `int64`) are a scalar or a
//! vector, negative ones counting from the end; an empty list reduces
//! nothing. With `keep_dims`, each reduced axis stays with length 1. An
//! axis out of range, or one named twice (`1` and `-1` of a matrix), is an
//! `InvalidArgument` error, as in TensorFlow's kernels (its shape function
//! accepts repeats, and so does [`reduction_shape`]).
//!
//! # How it runs
//!
//! One engine serves the four ops and every element type: [`reduce_into`],
//! generic over the element ([`Reducible`]) and the reducer ([`Reducer`]).
//! [`ReductionPlan`] merges adjacent axes that are both reduced or both
//! kept and drops axes of size 1, so the input is read as
//! `[outer, reduced, inner]` (one pass; a reduction over separated runs of
//! axes, as axes 0 and 2 of four, takes one pass per run). A pass is split
//! over the runtime's intra-op threads by output elements, or, when there
//! are too few of them (a sum of everything), by blocks of rows of the
//! reduced axis into partial results that are combined at the end, in
//! order. The split follows from the shape alone, never from the number of
//! threads, so a float sum gives the same bits on any number of threads
//! (which opcheck checks). Contiguous runs are
//! summed in eight independent lanes, which vectorizes and rounds less than
//! one long chain. `half` and `bfloat16` accumulate in `f32` and round once
//! at the end, so their results may be more exact than TensorFlow's (whose
//! `half` sum of `[60000, 60000, -60000]` overflows to `inf`; ours is
//! `60000`).
//!
//! Kernels: `float`, `double`, `int32`, `int64`, `half` and `bfloat16`,
//! each for both `Tidx` types.
//!
//! The files:
//!
//! - `ops.rs`: the ops, [`Sum`], [`Mean`], [`Max`], [`Prod`], and their shape
//!   function [`reduction_shape`].
//! - `axes.rs`: checking axes ([`normalize_axis`]) and planning the passes
//!   ([`ReductionPlan`]), shared by the shape function and the kernels.
//! - `math.rs`: the engine over slices ([`reduce_into`], [`reduce_pass`])
//!   and the reducers, shared by every device's kernels.
//! - `cpu.rs`: the CPU kernels.
//! - `gpu.rs` (feature `gpu`): the GPU kernels of `Sum` (`float`, `double`,
//!   `int32`) and `Mean` (`float`, `double`), the axes in host memory and
//!   planned with [`ReductionPlan`], each pass one CUDA kernel.
//! - `opcheck.rs`: how opcheck (`op_core::testing`) draws a valid scan axis.
//! - `grad.rs`: the gradients of the four reductions ([`reduced_shape`]:
//!   the shape a reduction keeps its dims in) and of the two scans.
//!
//! And [`Cumsum`] and [`Cumprod`], the cumulative sum and product, which
//! `Prod`'s gradient (and `Cumprod`'s) is built from: one kernel, generic
//! over the element type and the reducer, scans rows with [`scan_into`]
//! ([`Scan`] says in which order), split over the threads by outer index,
//! or within each row when there is only one.

mod axes;
mod cpu;
#[cfg(feature = "gpu")]
mod gpu;
mod grad;
mod math;
mod opcheck;
mod ops;

pub use axes::{Pass, ReductionPlan, normalize_axis};
pub use grad::reduced_shape;
pub use math::{
    Accumulate, MaxReducer, MeanReducer, ProdReducer, Reducer, Reducible, Scan, SumReducer,
    reduce_into, reduce_pass, scan_into, scan_row, scan_step,
};
pub use ops::*;
