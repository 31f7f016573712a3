//! The gradients of `Sum`, `Mean`, `Max` and `Prod`, with TensorFlow's
//! formulas (`tensorflow/python/ops/math_grad.py`, TensorFlow 2.21), each
//! written once for both modes. Axes may be a scalar or a vector, negative,
//! of either index type, and `keep_dims` either way: the gradient is first
//! reshaped to the shape the output has with `keep_dims`
//! ([`reduced_shape`], TensorFlow's `reduced_shape`), then broadcast back
//! over the reduced axes.
//!
//! | op | gradient of `input` |
//! | --- | --- |
//! | `Sum` | the gradient broadcast over the reduced axes |
//! | `Mean` | `Sum`'s, divided by the number of elements each output averages |
//! | `Max` | the gradient where the input equals the maximum, shared among ties |
//! | `Prod` | the gradient times the product of the other elements, as two exclusive `Cumprod`s (no division, so zeros are handled) |
//!
//! TensorFlow's fast paths for statically known shapes are left out: the
//! shape ops here run on shape vectors, cheap beside the gradient itself,
//! and one path serves both modes. Where TensorFlow's `Mean` and `Prod`
//! gather the sizes of the reduced dimensions, these divide element
//! counts, which gives the same numbers without a `Gather` op: `Mean`'s
//! factor is `size(input) // max(size(output), 1)` (TensorFlow's own
//! formula for known shapes), and `Prod`'s split of the input into reduced
//! and kept elements is `[size(input) // max(size(output), 1),
//! size(output)]`.
//!
//! The scans' gradients are TensorFlow's too: `Cumsum`'s is the cumulative
//! sum of the gradient in the other direction; `Cumprod`'s divides such a
//! sum by the input with `DivNoNan`, so where an input element is 0 its
//! gradient is 0, which is TensorFlow's result there, not the derivative.

use op_core::gradient::{Gradient, Value};
use op_core::{DType, Result};

use super::ops::{Cumprod, Cumsum, Max, Mean, Prod, Sum};
use crate::array::{
    BroadcastTo, ConcatV2, DynamicStitch, Fill, InvertPermutation, ListDiff, Pack, Rank, Reshape,
    Shape, Size, Transpose, int32, int32s, to_int32,
};
use crate::math::{AddV2, Cast, DivNoNan, Equal, FloorDiv, FloorMod, Maximum, Mul, Range, RealDiv};

/// The shape a reduction of a tensor of shape `input_shape` (an int32
/// vector) over `axes` has with `keep_dims`: `input_shape` with a 1 at each
/// reduced axis (TensorFlow's `reduced_shape`: the axes made non-negative,
/// then `DynamicStitch` of the dims and ones).
pub fn reduced_shape<V: Value>(g: &Gradient<'_, V>, input_shape: V, axes: V) -> Result<V> {
    let axes = to_int32(g, axes)?;
    let rank = Size::call_with(input_shape.clone()).run_on(g)?;
    let shifted = AddV2::call_with(axes, rank.clone()).run_on(g)?;
    let axes = FloorMod::call_with(shifted, rank.clone()).run_on(g)?;
    let all = Range::call_with(int32(g, 0)?, rank, int32(g, 1)?).run_on(g)?;
    let axes_shape = Shape::call_with(axes.clone()).run_on(g)?;
    let ones = Fill::call_with(axes_shape, int32(g, 1)?).run_on(g)?;
    DynamicStitch::call_with([all, axes], [input_shape, ones]).run_on(g)
}

/// `grad` (of a reduction's output) reshaped to the output's shape with
/// `keep_dims`, and the input's shape: what every reduction's gradient
/// starts from.
fn grad_with_kept_dims<V: Value>(g: &Gradient<'_, V>) -> Result<(V, V)> {
    let input_shape = Shape::call_with(g.input(0)).run_on(g)?;
    let mut grad = g.grad(0)?;
    if !g.attr::<bool>("keep_dims")? {
        let kept = reduced_shape(g, input_shape.clone(), g.input(1))?;
        grad = Reshape::call_with(grad, kept).run_on(g)?;
    }
    Ok((grad, input_shape))
}

/// d sum(x) = grad broadcast back over the reduced axes.
fn sum_grad_of<V: Value>(g: &Gradient<'_, V>) -> Result<V> {
    let (grad, input_shape) = grad_with_kept_dims(g)?;
    BroadcastTo::call_with(grad, input_shape).run_on(g)
}

/// d sum(x, axes) = broadcast_to(grad, shape(x)).
#[op_core::gradient(op = Sum)]
fn sum_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    Ok([Some(sum_grad_of(g)?), None])
}

/// d mean(x, axes) = d sum(x, axes) / (elements per output).
#[op_core::gradient(op = Mean)]
fn mean_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    let sum_grad = sum_grad_of(g)?;
    let factor = elements_per_output(g)?;
    let factor = Cast::call_with(factor, g.input_dtype(0)).run_on(g)?;
    Ok([Some(RealDiv::call_with(sum_grad, factor).run_on(g)?), None])
}

/// How many input elements each output element of the reduction
/// combines: `size(input) // max(size(output), 1)`, an int64 scalar.
fn elements_per_output<V: Value>(g: &Gradient<'_, V>) -> Result<V> {
    let input_size = Size::call_with(g.input(0)).out_type(DType::I64).run_on(g)?;
    let output_size = Size::call_with(g.output(0))
        .out_type(DType::I64)
        .run_on(g)?;
    let one = g.constant(op_core::Tensor::scalar(1i64))?;
    let output_size = Maximum::call_with(output_size, one).run_on(g)?;
    FloorDiv::call_with(input_size, output_size).run_on(g)
}

/// d max(x, axes): the gradient where `x` equals the maximum, divided by
/// how many elements do (TensorFlow's `_MinOrMaxGrad`).
#[op_core::gradient(op = Max)]
fn max_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    let (x, axes) = (g.input(0), g.input(1));
    let mut y = g.output(0);
    let mut grad = g.grad(0)?;
    let kept = if g.attr::<bool>("keep_dims")? {
        Shape::call_with(y.clone()).run_on(g)?
    } else {
        let input_shape = Shape::call_with(x.clone()).run_on(g)?;
        let kept = reduced_shape(g, input_shape, axes.clone())?;
        y = Reshape::call_with(y, kept.clone()).run_on(g)?;
        grad = Reshape::call_with(grad, kept.clone()).run_on(g)?;
        kept
    };
    let dtype = g.input_dtype(0);
    let equal = Equal::call_with(y, x).run_on(g)?;
    let indicators = Cast::call_with(equal, dtype).run_on(g)?;
    let count = Sum::call_with(indicators.clone(), axes).run_on(g)?;
    let count = Reshape::call_with(count, kept).run_on(g)?;
    let share = RealDiv::call_with(indicators, count).run_on(g)?;
    Ok([Some(Mul::call_with(share, grad).run_on(g)?), None])
}

/// d prod(x, axes): the gradient times, for each element, the product of
/// the other elements it was multiplied with (TensorFlow's `_ProdGrad`):
/// the input transposed so that the reduced axes come first, seen as a
/// `[reduced, kept]` matrix, and the exclusive products from both ends
/// multiplied, then transposed back.
#[op_core::gradient(op = Prod)]
fn prod_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    let x = g.input(0);
    let (grad, input_shape) = grad_with_kept_dims(g)?;
    let grad = BroadcastTo::call_with(grad, input_shape.clone()).run_on(g)?;

    let axes = Reshape::call_with(g.input(1), int32s(g, &[-1])?).run_on(g)?;
    let axes = to_int32(g, axes)?;
    let rank = Rank::call_with(x.clone()).run_on(g)?;
    let shifted = AddV2::call_with(axes, rank.clone()).run_on(g)?;
    let reduced = FloorMod::call_with(shifted, rank.clone()).run_on(g)?;
    let all = Range::call_with(int32(g, 0)?, rank, int32(g, 1)?).run_on(g)?;
    let (other, _) = ListDiff::call_with(all, reduced.clone()).run_on(g)?;
    let perm = ConcatV2::call_with([reduced, other], int32(g, 0)?).run_on(g)?;

    let reduced_num = elements_per_output(g)?;
    let other_num = Size::call_with(g.output(0))
        .out_type(DType::I64)
        .run_on(g)?;
    let permuted = Transpose::call_with(x, perm.clone()).run_on(g)?;
    let permuted_shape = Shape::call_with(permuted.clone()).run_on(g)?;
    let matrix_shape = Pack::call_with([reduced_num, other_num]).run_on(g)?;
    let matrix = Reshape::call_with(permuted, matrix_shape).run_on(g)?;

    let zero = int32(g, 0)?;
    let left = Cumprod::call_with(matrix.clone(), zero.clone())
        .exclusive(true)
        .run_on(g)?;
    let right = Cumprod::call_with(matrix, zero)
        .exclusive(true)
        .reverse(true)
        .run_on(g)?;
    let others = Mul::call_with(left, right).run_on(g)?;
    let others = Reshape::call_with(others, permuted_shape).run_on(g)?;
    let inverse = InvertPermutation::call_with(perm).run_on(g)?;
    let others = Transpose::call_with(others, inverse).run_on(g)?;
    let out = Mul::call_with(grad, others).run_on(g)?;
    Ok([Some(Reshape::call_with(out, input_shape).run_on(g)?), None])
}

/// d cumsum(x, axis) = cumsum(grad, axis) in the other direction.
#[op_core::gradient(op = Cumsum)]
fn cumsum_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    let exclusive: bool = g.attr("exclusive")?;
    let reverse: bool = g.attr("reverse")?;
    let grad = Cumsum::call_with(g.grad(0)?, g.input(1))
        .exclusive(exclusive)
        .reverse(!reverse)
        .run_on(g)?;
    Ok([Some(grad), None])
}

/// d cumprod(x, axis) = div_no_nan(cumsum(cumprod(x) * grad) in the other
/// direction, x) (TensorFlow's `_CumprodGrad`).
#[op_core::gradient(op = Cumprod)]
fn cumprod_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    let (x, axis) = (g.input(0), g.input(1));
    let exclusive: bool = g.attr("exclusive")?;
    let reverse: bool = g.attr("reverse")?;
    let prod = Cumprod::call_with(x.clone(), axis.clone())
        .exclusive(exclusive)
        .reverse(reverse)
        .run_on(g)?;
    let weighted = Mul::call_with(prod, g.grad(0)?).run_on(g)?;
    let out = Cumsum::call_with(weighted, axis)
        .exclusive(exclusive)
        .reverse(!reverse)
        .run_on(g)?;
    Ok([Some(DivNoNan::call_with(out, x).run_on(g)?), None])
}
