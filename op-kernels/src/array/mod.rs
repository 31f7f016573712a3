//! The array ops: TensorFlow's shape-manipulation ops, with TensorFlow's
//! OpDefs, shape functions (over partially known shapes, using constant
//! inputs' values where known) and CPU kernels.
//!
//! | op | what it does | kernel |
//! | --- | --- | --- |
//! | [`Shape`], [`Size`], [`Rank`] | a tensor's shape, element count, rank | reads the shape only; any dtype |
//! | [`Reshape`], [`ExpandDims`], [`Squeeze`] | a new shape for the same elements | shares the input's buffer (zero copy); any dtype |
//! | [`Fill`], [`ZerosLike`], [`OnesLike`] | one value repeated | writes in blocks / in the input's buffer when handed over |
//! | [`Transpose`] | dimensions permuted | a strided copy |
//! | [`ConcatV2`], [`Pack`] | tensors joined along an existing or a new dimension | a row-wise concatenation |
//! | [`BroadcastTo`], [`BroadcastGradientArgs`] | NumPy broadcasting, and the axes its gradient sums over | a strided copy; index arithmetic |
//! | [`Tile`] | a tensor repeated along each dimension | a strided copy |
//! | [`Slice`], [`Pad`] | a box cut out of a tensor; a tensor put in a box of zeros | a strided copy; writes in blocks |
//! | [`Unpack`], [`ConcatOffset`] | a tensor taken apart along a dimension; where each input of a concatenation starts | a strided copy per output; index arithmetic |
//! | [`InvertPermutation`], [`ListDiff`], [`DynamicStitch`] | a permutation's inverse; the values of a vector not in another; slices interleaved by index | index arithmetic; a hash set; writes in blocks |
//!
//! The last seven are what the others' gradients are built from, with
//! TensorFlow's formulas (`grad.rs`).
//!
//! # Layout
//!
//! Twenty-two ops do not fit the one-`cpu.rs` layout of the smaller families,
//! so this family has one file per group of related ops, holding the
//! group's shape functions and CPU kernels, around the files they share:
//!
//! - `ops.rs`: every op's declaration, in one place to compare with
//!   TensorFlow's registry; each names its shape function in its group's
//!   file.
//! - `shape_ops.rs` (Shape, Size, Rank), `reshape.rs` (Reshape, ExpandDims,
//!   Squeeze), `fill.rs` (Fill, ZerosLike, OnesLike), `transpose.rs`,
//!   `concat.rs` (ConcatV2, Pack, Unpack, ConcatOffset), `broadcast.rs`
//!   (BroadcastTo, BroadcastGradientArgs), `tile.rs`, `slice.rs` (Slice,
//!   Pad), `stitch.rs` (DynamicStitch), `list_diff.rs` (ListDiff), with
//!   InvertPermutation in `transpose.rs`: the groups.
//! - `grad.rs`: the gradients of the differentiable ops, and the marks on
//!   those that have none.
//! - `math.rs`: the plain arithmetic every device's kernels share, with no
//!   kernel context: axes ([`normalize_axis`]), output shapes from index
//!   values ([`reshape_dims`], [`concat_dims`], ...), and the copies, each
//!   written once for every element type: a [`StridedView`] (Transpose,
//!   BroadcastTo and Tile are each one view of their input) and
//!   [`concat_rows_into`] (ConcatV2 and Pack).
//! - `index.rs`: the int32/int64 index tensors (shapes, axes,
//!   permutations): reading them in kernels and, when constant, in shape
//!   functions (TensorFlow's `MakeShapeFromShapeTensor`).
//! - `cpu.rs`: writing a kernel's output block by block over the runtime's
//!   intra-op threads.
//! - `opcheck.rs`: how opcheck (`op_core::testing`) draws valid index
//!   inputs (shapes, permutations, boxes, paddings) for its contract tests.
//!
//! # Kernels and dtypes
//!
//! The ops move elements without computing with them, so each kernel is
//! one generic function: Shape, Size, Rank, Reshape, ExpandDims and Squeeze
//! have one kernel for every dtype (they never read the elements); the
//! copying ops (Fill, ZerosLike, Transpose, ConcatV2, Pack, BroadcastTo,
//! Tile) have one per numeric type, bool and string; OnesLike one per type
//! it allows. Index inputs (`Tshape`, `Tidx`, `Tperm`, `Tmultiples`,
//! `index_type`, `Tdim`) may be int32 or int64, read at run time. Outputs
//! that are their input unchanged (a transpose by the identity, a tile by
//! ones, a broadcast to the input's own shape, a pack of one tensor) share
//! the input's buffer, as in TensorFlow.
//!
//! Errors (a bad axis, a `perm` that is not a permutation, shapes that do
//! not concatenate or broadcast, negative sizes or multiples, a reshape
//! that changes the element count, index inputs of the wrong rank) are
//! `InvalidArgument` errors naming the op, the node, the argument and what
//! was expected, in TensorFlow's words where it has them. Sizes read from
//! input data are checked arithmetic: an overflow is an error too.

mod broadcast;
mod concat;
mod cpu;
mod fill;
mod grad;
mod index;
mod list_diff;
mod math;
mod opcheck;
mod ops;
mod reshape;
mod shape_ops;
mod slice;
mod stitch;
mod tile;
mod transpose;

pub use broadcast::{broadcast_gradient_args_shape, broadcast_to_shape};
pub use concat::{concat_offset_shape, concat_v2_shape, pack_shape, unpack_shape};
pub use fill::fill_shape;
pub(crate) use grad::{int32, int32s, to_int32};
pub use index::{IndexElement, index_values};
pub use list_diff::list_diff_shape;
pub use math::{
    OnesLikeElement, SetElement, StridedView, broadcast_gradient_args, broadcast_view,
    check_permutation, concat_dims, concat_offsets, concat_rows_into, expand_dims,
    invert_permutation, list_diff, normalize_axis, pack_dims, pad_dims, pad_into, reshape_dims,
    row_major_strides, shape_from_values, slice_dims, slice_view, squeeze_dims, stitch_into,
    stitch_rows, tile_dims, tile_view, transpose_view, unpack_view,
};
pub use ops::*;
pub use reshape::{expand_dims_shape, reshape_shape, squeeze_shape};
pub use shape_ops::shape_shape;
pub use slice::{pad_shape, slice_shape};
pub use stitch::dynamic_stitch_shape;
pub use tile::tile_shape;
pub use transpose::{invert_permutation_shape, transpose_shape};
