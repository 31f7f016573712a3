//! The declarations of the array ops, with TensorFlow's OpDefs (names, args,
//! attrs, type constraints and defaults as in TensorFlow 2.21's registry).
//! Their shape functions and kernels sit in the file of each op's group.

use op_core::register_op;

use super::broadcast::{broadcast_gradient_args_shape, broadcast_to_shape};
use super::concat::{concat_offset_shape, concat_v2_shape, pack_shape, unpack_shape};
use super::fill::fill_shape;
use super::list_diff::list_diff_shape;
use super::reshape::{expand_dims_shape, reshape_shape, squeeze_shape};
use super::shape_ops::shape_shape;
use super::slice::{pad_shape, slice_shape};
use super::stitch::dynamic_stitch_shape;
use super::tile::tile_shape;
use super::transpose::{invert_permutation_shape, transpose_shape};

// ---- Shape, Size, Rank (shape_ops.rs) ----

/// Returns the shape of a tensor.
///
/// input: any tensor.
/// output: a vector of `input`'s dimension sizes, outermost first.
/// out_type: the dtype of `output`.
// The full type is TensorFlow's type constructor for Shape
// (`full_type::Unary(TFT_SHAPE_TENSOR, "out_type")`): a shape tensor,
// which TensorFlow's placer keeps in host memory.
#[register_op(
    attrs("T: type", "out_type: {int32, int64} = DT_INT32"),
    inputs("input: T"),
    outputs("output: out_type"),
    full_types("output: TFT_SHAPE_TENSOR[TFT_VAR{'out_type'}]"),
    shape_fn = shape_shape
)]
pub struct Shape;

/// Returns the number of elements of a tensor.
///
/// input: any tensor.
/// output: a scalar, the product of `input`'s dimension sizes.
/// out_type: the dtype of `output`.
#[register_op(
    attrs("T: type", "out_type: {int32, int64} = DT_INT32"),
    inputs("input: T"),
    outputs("output: out_type"),
    shape = "scalar"
)]
pub struct Size;

/// Returns the rank (number of dimensions) of a tensor.
///
/// input: any tensor.
/// output: a scalar.
#[register_op(
    attrs("T: type"),
    inputs("input: T"),
    outputs("output: int32"),
    shape = "scalar"
)]
pub struct Rank;

// ---- Reshape, ExpandDims, Squeeze (reshape.rs) ----

/// Reshapes a tensor, sharing its buffer.
///
/// One size of `shape` may be -1: it is computed so that the element count
/// stays the same.
///
/// tensor: any tensor.
/// shape: the new shape, a vector; its element count must be `tensor`'s.
/// output: `tensor`'s elements, in row-major order, with shape `shape`.
#[register_op(
    attrs("T: type", "Tshape: {int32, int64} = DT_INT32"),
    inputs("tensor: T", "shape: Tshape"),
    outputs("output: T"),
    shape_fn = reshape_shape
)]
pub struct Reshape;

/// Inserts a dimension of size 1 into a tensor's shape.
///
/// input: any tensor.
/// dim: one value, in `[-rank(input) - 1, rank(input)]`: where the new
///   dimension goes (negative counts from the end; -1 appends).
/// output: `input` with a dimension of size 1 added at `dim`.
#[register_op(
    attrs("T: type", "Tdim: {int32, int64} = DT_INT32"),
    inputs("input: T", "dim: Tdim"),
    outputs("output: T"),
    shape_fn = expand_dims_shape
)]
pub struct ExpandDims;

/// Removes dimensions of size 1 from a tensor's shape.
///
/// input: any tensor.
/// output: `input` without the squeezed dimensions.
#[register_op(
    attrs("T: type"),
    inputs("input: T"),
    outputs("output: T"),
    shape_fn = squeeze_shape
)]
pub struct Squeeze {
    /// The dimensions to remove, each of size 1 (negative counts from the
    /// end); empty: every dimension of size 1.
    #[attr(default = [], min = 0)]
    pub squeeze_dims: Vec<i64>,
}

// ---- Fill, ZerosLike, OnesLike (fill.rs) ----

/// Creates a tensor of a given shape filled with one value.
///
/// dims: the shape of the output, a vector of sizes >= 0.
/// value: the value, a scalar.
/// output: a tensor of shape `dims` whose every element is `value`.
#[register_op(
    attrs("T: type", "index_type: {int32, int64} = DT_INT32"),
    inputs("dims: index_type", "value: T"),
    outputs("output: T"),
    shape_fn = fill_shape
)]
pub struct Fill;

/// Returns a tensor of zeros with the shape and type of its input.
///
/// x: any tensor.
/// y: zeros (false, empty strings) of `x`'s shape.
#[register_op(attrs("T: type"), inputs("x: T"), outputs("y: T"), shape = "unchanged")]
pub struct ZerosLike;

/// Returns a tensor of ones with the shape and type of its input.
///
/// x: a numeric or bool tensor.
/// y: ones (true) of `x`'s shape.
#[register_op(
    attrs(
        "T: {bfloat16, half, float, double, int8, uint8, int16, uint16, int32, uint32, int64, uint64, complex64, complex128, bool}"
    ),
    inputs("x: T"),
    outputs("y: T"),
    shape = "unchanged"
)]
pub struct OnesLike;

// ---- Transpose (transpose.rs) ----

/// Permutes the dimensions of a tensor.
///
/// x: any tensor.
/// perm: a permutation of `0..rank(x)`.
/// y: the tensor whose dimension `i` is `x`'s dimension `perm[i]`.
#[register_op(
    attrs("T: type", "Tperm: {int32, int64} = DT_INT32"),
    inputs("x: T", "perm: Tperm"),
    outputs("y: T"),
    shape_fn = transpose_shape
)]
pub struct Transpose;

// ---- ConcatV2, Pack (concat.rs) ----

/// Concatenates tensors along one dimension.
///
/// values: at least two tensors of one rank (not scalars), whose sizes
///   agree but along `axis`.
/// axis: a scalar in `[-rank, rank)`: the dimension to join along.
/// output: the tensors one after the other along `axis`.
#[register_op(
    attrs("N: int >= 2", "T: type", "Tidx: {int32, int64} = DT_INT32"),
    inputs("values: N * T", "axis: Tidx"),
    outputs("output: T"),
    shape_fn = concat_v2_shape
)]
pub struct ConcatV2;

/// Stacks tensors of one shape into a tensor of one more dimension.
///
/// values: tensors of one shape.
/// output: the tensors stacked along a new dimension at `axis`, of size `N`.
#[register_op(
    attrs("N: int >= 1", "T: type"),
    inputs("values: N * T"),
    outputs("output: T"),
    shape_fn = pack_shape
)]
pub struct Pack {
    /// Where the new dimension goes, in `[-(rank + 1), rank + 1)` for
    /// inputs of rank `rank` (negative counts from the end).
    #[attr(default = 0)]
    pub axis: i64,
}

// ---- BroadcastTo, BroadcastGradientArgs (broadcast.rs) ----

/// Broadcasts a tensor to a shape, NumPy style.
///
/// input: a tensor whose dimensions, aligned on the right with `shape`'s,
///   are 1 or equal to them.
/// shape: the shape of the output, a vector.
/// output: `input` repeated along its dimensions of size 1 (and new leading
///   ones) to shape `shape`.
#[register_op(
    attrs("T: type", "Tidx: {int32, int64} = DT_INT32"),
    inputs("input: T", "shape: Tidx"),
    outputs("output: T"),
    shape_fn = broadcast_to_shape
)]
pub struct BroadcastTo;

/// Returns the axes over which the gradients of a broadcasting binary op
/// are summed.
///
/// s0: the shape of the op's first input, a vector.
/// s1: the shape of the op's second input, a vector.
/// r0: the axes of the broadcast output along which `s0` was stretched.
/// r1: the axes of the broadcast output along which `s1` was stretched.
#[register_op(
    attrs("T: {int32, int64} = DT_INT32"),
    inputs("s0: T", "s1: T"),
    outputs("r0: T", "r1: T"),
    shape_fn = broadcast_gradient_args_shape
)]
pub struct BroadcastGradientArgs;

// ---- Tile (tile.rs) ----

/// Repeats a tensor along each dimension.
///
/// input: any tensor.
/// multiples: a vector of `rank(input)` counts >= 0.
/// output: `input` repeated `multiples[i]` times along dimension `i`.
#[register_op(
    attrs("T: type", "Tmultiples: {int32, int64} = DT_INT32"),
    inputs("input: T", "multiples: Tmultiples"),
    outputs("output: T"),
    shape_fn = tile_shape
)]
pub struct Tile;

// ---- InvertPermutation (transpose.rs) ----

/// Computes the inverse permutation of a tensor.
///
/// x: a permutation of `0..n`, a vector.
/// y: the vector with `y[x[i]] = i`.
#[register_op(
    attrs("T: {int32, int64} = DT_INT32"),
    inputs("x: T"),
    outputs("y: T"),
    shape_fn = invert_permutation_shape
)]
pub struct InvertPermutation;

// ---- Unpack, ConcatOffset (concat.rs) ----

/// Unpacks a tensor into `num` tensors along one dimension (the inverse of
/// Pack).
///
/// value: a tensor whose dimension `axis` has size `num`.
/// output: the tensors `value[.., i, ..]` along `axis`, each of `value`'s
///   shape without that dimension.
/// num: how many tensors come out: the size of `value`'s dimension `axis`.
#[register_op(
    attrs("num: int >= 0", "T: type"),
    inputs("value: T"),
    outputs("output: num * T"),
    shape_fn = unpack_shape
)]
pub struct Unpack {
    /// The dimension to unpack along, in `[-rank, rank)` (negative counts
    /// from the end).
    #[attr(default = 0)]
    pub axis: i64,
}

/// Computes the offsets of the inputs of a concatenation in its output.
///
/// concat_dim: the dimension of the concatenation, a scalar in
///   `[-rank, rank)`.
/// shape: the shapes of the tensors concatenated, vectors of one length.
/// offset: where each tensor starts in the concatenation: 0 but along
///   `concat_dim`, where it is the sum of the sizes before it.
#[register_op(
    attrs("N: int >= 2", "shape_type: {int32, int64} = DT_INT32"),
    inputs("concat_dim: int32", "shape: N * shape_type"),
    outputs("offset: N * shape_type"),
    shape_fn = concat_offset_shape
)]
pub struct ConcatOffset;

// ---- Slice, Pad (slice.rs) ----

/// Returns a slice of a tensor.
///
/// input: any tensor.
/// begin: where the slice starts in each dimension, a vector of
///   `rank(input)` values in `[0, dims[i]]`.
/// size: how many elements the slice keeps in each dimension, a vector of
///   `rank(input)` values in `[0, dims[i] - begin[i]]`, or -1 for all the
///   rest.
/// output: `input[begin[0]:begin[0] + size[0], ...]`.
#[register_op(
    attrs("T: type", "Index: {int32, int64}"),
    inputs("input: T", "begin: Index", "size: Index"),
    outputs("output: T"),
    shape_fn = slice_shape
)]
pub struct Slice;

/// Pads a tensor with zeros.
///
/// input: any tensor.
/// paddings: a `[rank(input), 2]` matrix: how many zeros go before and
///   after the input in each dimension, each >= 0.
/// output: `input` surrounded by zeros (false, empty strings), of
///   dimensions `paddings[i, 0] + dims[i] + paddings[i, 1]`.
#[register_op(
    attrs("T: type", "Tpaddings: {int32, int64} = DT_INT32"),
    inputs("input: T", "paddings: Tpaddings"),
    outputs("output: T"),
    shape_fn = pad_shape
)]
pub struct Pad;

// ---- DynamicStitch (stitch.rs) ----

/// Interleaves the values of tensors into a single tensor, by index.
///
/// `merged[indices[m][i, ...], ...] = data[m][i, ..., ...]`: slices named
/// twice take the later value (the last `m`, then the last `i`); rows no
/// index names are zeros.
///
/// indices: index tensors, each >= 0.
/// data: tensors whose shapes start with their `indices`' shapes, the rest
///   being one shape for all.
/// merged: `max(indices) + 1` rows of that shape.
#[register_op(
    attrs("N: int >= 1", "T: type"),
    inputs("indices: N * int32", "data: N * T"),
    outputs("merged: T"),
    shape_fn = dynamic_stitch_shape
)]
pub struct DynamicStitch;

// ---- ListDiff (list_diff.rs) ----

/// Computes the difference between two lists of numbers or strings.
///
/// x: the values to keep, a vector.
/// y: the values to remove, a vector.
/// out: the values of `x` not in `y`, in `x`'s order (duplicates kept).
/// idx: the positions in `x` of the values of `out`.
/// out_idx: the dtype of `idx`.
#[register_op(
    attrs("T: type", "out_idx: {int32, int64} = DT_INT32"),
    inputs("x: T", "y: T"),
    outputs("out: T", "idx: out_idx"),
    shape_fn = list_diff_shape
)]
pub struct ListDiff;
