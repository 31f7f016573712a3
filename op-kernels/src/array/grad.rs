//! The gradients of the array ops, with TensorFlow's formulas
//! (`tensorflow/python/ops/array_grad.py`, TensorFlow 2.21), each written
//! once for both modes (a tape's tensors, a graph's outputs): the shapes
//! they need are read with `Shape` ops, never from the values, so the same
//! ops run whether or not the shapes are known when the gradient is built.
//!
//! | op | gradient of its data input(s) |
//! | --- | --- |
//! | `Reshape`, `ExpandDims`, `Squeeze` | the gradient reshaped to the input's shape |
//! | `Transpose` | the gradient transposed by the inverse permutation |
//! | `ConcatV2` | the gradient sliced at each input's offset (`ConcatOffset`, `Slice`) |
//! | `Pack`, `Unpack` | the gradient unpacked, the gradients packed |
//! | `Tile` | the gradient reshaped to `[m0, d0, m1, d1, ...]` and summed over the multiples |
//! | `BroadcastTo` | the gradient summed over the broadcast axes (`BroadcastGradientArgs`) |
//! | `Fill` | the gradient's sum, for the value |
//! | `Slice`, `Pad` | the gradient padded back to the input's shape; the gradient sliced out of the padding |
//!
//! Index inputs (shapes, axes, permutations, multiples, paddings) get no
//! gradient. `Shape`, `Size`, `Rank`, `ZerosLike`, `OnesLike`,
//! `BroadcastGradientArgs`, `InvertPermutation` and `ConcatOffset` are not
//! differentiable, as in TensorFlow. `ListDiff` and `DynamicStitch` have
//! no gradient yet (TensorFlow's `DynamicStitch` gradient gathers, and
//! there is no `Gather` here).

use op_core::gradient::{Gradient, Value};
use op_core::{DType, Result, Tensor};

use super::ops::{
    BroadcastGradientArgs, BroadcastTo, ConcatOffset, ConcatV2, ExpandDims, Fill,
    InvertPermutation, Pack, Pad, Rank, Reshape, Shape, Size, Slice, Squeeze, Tile, Transpose,
    Unpack,
};
use crate::math::{Cast, FloorMod, Range, Sub};
use crate::reduction::Sum;

op_core::not_differentiable!(
    "Shape",
    "Size",
    "Rank",
    "ZerosLike",
    "OnesLike",
    "BroadcastGradientArgs",
    "InvertPermutation",
    "ConcatOffset",
);

/// An int32 vector of `values`, as a value of the gradient's mode.
pub(crate) fn int32s<V: Value>(g: &Gradient<'_, V>, values: &[i32]) -> Result<V> {
    g.constant(Tensor::from_vec([values.len()], values.to_vec())?)
}

/// An int32 scalar, as a value of the gradient's mode.
pub(crate) fn int32<V: Value>(g: &Gradient<'_, V>, value: i32) -> Result<V> {
    g.constant(Tensor::scalar(value))
}

/// `value` as int32 (the index type the shape ops here produce), unless
/// it already is.
pub(crate) fn to_int32<V: Value>(g: &Gradient<'_, V>, value: V) -> Result<V> {
    if g.dtype_of(&value)? == DType::I32 {
        return Ok(value);
    }
    Cast::call_with(value, DType::I32).run_on(g)
}

/// `grad` reshaped to the shape of input 0 (TensorFlow's
/// `_ReshapeToInput`).
fn reshape_to_input<V: Value>(g: &Gradient<'_, V>) -> Result<V> {
    let shape = Shape::call_with(g.input(0)).run_on(g)?;
    Reshape::call_with(g.grad(0)?, shape).run_on(g)
}

/// d reshape(x, s) = reshape(grad, shape(x)).
#[op_core::gradient(op = Reshape)]
fn reshape_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    Ok([Some(reshape_to_input(g)?), None])
}

/// d expand_dims(x, axis) = reshape(grad, shape(x)).
#[op_core::gradient(op = ExpandDims)]
fn expand_dims_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    Ok([Some(reshape_to_input(g)?), None])
}

/// d squeeze(x) = reshape(grad, shape(x)).
#[op_core::gradient(op = Squeeze)]
fn squeeze_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    Ok([Some(reshape_to_input(g)?)])
}

/// d transpose(x, p) = transpose(grad, invert_permutation(p)).
#[op_core::gradient(op = Transpose)]
fn transpose_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    let inverse = InvertPermutation::call_with(g.input(1)).run_on(g)?;
    let grad = Transpose::call_with(g.grad(0)?, inverse).run_on(g)?;
    Ok([Some(grad), None])
}

/// d concat(x_0, ..., x_n-1, axis): the gradient's slice at each input's
/// offset, of the input's shape (TensorFlow's `_ConcatGradHelper`, its
/// graph path: `ConcatOffset` of the axis made non-negative, then
/// `Slice`).
#[op_core::gradient(op = ConcatV2)]
fn concat_v2_grad<V: Value>(g: &Gradient<'_, V>) -> Result<Vec<Option<V>>> {
    let n = g.inputs().len() - 1;
    let values = &g.inputs()[..n];
    let axis = to_int32(g, g.input(n))?;
    let rank = Rank::call_with(values[0].clone()).run_on(g)?;
    let axis = FloorMod::call_with(axis, rank).run_on(g)?;
    let sizes = values
        .iter()
        .map(|x| Shape::call_with(x.clone()).run_on(g))
        .collect::<Result<Vec<V>>>()?;
    let offsets = ConcatOffset::call_with(axis, sizes.clone()).run_on(g)?;
    let grad = g.grad(0)?;
    let mut grads = offsets
        .into_iter()
        .zip(sizes)
        .map(|(begin, size)| {
            Slice::call_with(grad.clone(), begin, size)
                .run_on(g)
                .map(Some)
        })
        .collect::<Result<Vec<Option<V>>>>()?;
    grads.push(None);
    Ok(grads)
}

/// d pack(x_0, ..., x_n-1) = unpack(grad, n) along the same axis.
#[op_core::gradient(op = Pack)]
fn pack_grad<V: Value>(g: &Gradient<'_, V>) -> Result<Vec<Option<V>>> {
    let axis: i64 = g.attr("axis")?;
    let n = g.inputs().len() as i64;
    let grads = Unpack::call_with(g.grad(0)?, n).axis(axis).run_on(g)?;
    Ok(grads.into_iter().map(Some).collect())
}

/// d unpack(x) = pack(grad_0, ..., grad_n-1) along the same axis (zeros for
/// the outputs nobody used).
#[op_core::gradient(op = Unpack)]
fn unpack_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    let axis: i64 = g.attr("axis")?;
    let grads = (0..g.outputs().len())
        .map(|i| g.grad(i))
        .collect::<Result<Vec<V>>>()?;
    Ok([Some(Pack::call_with(grads).axis(axis).run_on(g)?)])
}

/// d tile(x, multiples): the gradient reshaped to `[m0, d0, m1, d1, ...]`
/// (multiples interleaved with the input's dims) and summed over the
/// multiples' axes `0, 2, 4, ...`.
#[op_core::gradient(op = Tile)]
fn tile_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    let multiples = g.input(1);
    let index_type = g.input_dtype(1);
    let input_shape = Shape::call_with(g.input(0))
        .out_type(index_type)
        .run_on(g)?;
    let stacked = Pack::call_with([multiples, input_shape]).run_on(g)?;
    let interleaved = Transpose::call_with(stacked, int32s(g, &[1, 0])?).run_on(g)?;
    let split_shape = Reshape::call_with(interleaved, int32s(g, &[-1])?).run_on(g)?;
    let size = Size::call_with(split_shape.clone()).run_on(g)?;
    let axes = Range::call_with(int32(g, 0)?, size, int32(g, 2)?).run_on(g)?;
    let split = Reshape::call_with(g.grad(0)?, split_shape).run_on(g)?;
    Ok([Some(Sum::call_with(split, axes).run_on(g)?), None])
}

/// d broadcast_to(x, shape): the gradient summed over the axes along which
/// `x` was broadcast (`BroadcastGradientArgs`), reshaped to `x`'s shape.
#[op_core::gradient(op = BroadcastTo)]
fn broadcast_to_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    let input_shape = Shape::call_with(g.input(0))
        .out_type(g.input_dtype(1))
        .run_on(g)?;
    let (_, axes) = BroadcastGradientArgs::call_with(g.input(1), input_shape.clone()).run_on(g)?;
    let summed = Sum::call_with(g.grad(0)?, axes).keep_dims(true).run_on(g)?;
    Ok([
        Some(Reshape::call_with(summed, input_shape).run_on(g)?),
        None,
    ])
}

/// d fill(dims, value): the sum of the gradient, for `value`.
#[op_core::gradient(op = Fill)]
fn fill_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    let grad = g.grad(0)?;
    let rank = Rank::call_with(grad.clone()).run_on(g)?;
    let axes = Range::call_with(int32(g, 0)?, rank, int32(g, 1)?).run_on(g)?;
    Ok([None, Some(Sum::call_with(grad, axes).run_on(g)?)])
}

/// d slice(x, begin, size): the gradient padded with `begin` zeros before
/// and `shape(x) - size - begin` after, in each dimension.
#[op_core::gradient(op = Slice)]
fn slice_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 3]> {
    let (x, begin) = (g.input(0), g.input(1));
    let index_type = g.input_dtype(1);
    let rank = Rank::call_with(x.clone()).run_on(g)?;
    let slice_size = Shape::call_with(g.output(0))
        .out_type(index_type)
        .run_on(g)?;
    let column = Pack::call_with([rank, int32(g, 1)?]).run_on(g)?;
    let before = Reshape::call_with(begin.clone(), column.clone()).run_on(g)?;
    let input_shape = Shape::call_with(x).out_type(index_type).run_on(g)?;
    let rest = Sub::call_with(input_shape, slice_size).run_on(g)?;
    let after = Sub::call_with(rest, begin).run_on(g)?;
    let after = Reshape::call_with(after, column).run_on(g)?;
    let paddings = ConcatV2::call_with([before, after], int32(g, 1)?).run_on(g)?;
    Ok([
        Some(Pad::call_with(g.grad(0)?, paddings).run_on(g)?),
        None,
        None,
    ])
}

/// d pad(x, paddings): the gradient's slice that starts after the padding
/// before (the paddings' first column) and has `x`'s shape.
#[op_core::gradient(op = Pad)]
fn pad_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    let x = g.input(0);
    let rank = Rank::call_with(x.clone()).run_on(g)?;
    let column = Pack::call_with([rank, int32(g, 1)?]).run_on(g)?;
    let before = Slice::call_with(g.input(1), int32s(g, &[0, 0])?, column).run_on(g)?;
    let begin = Reshape::call_with(before, int32s(g, &[-1])?).run_on(g)?;
    let sizes = Shape::call_with(x).out_type(g.input_dtype(1)).run_on(g)?;
    Ok([
        Some(Slice::call_with(g.grad(0)?, begin, sizes).run_on(g)?),
        None,
    ])
}
