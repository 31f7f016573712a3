//! The gradients of the math ops: TensorFlow's `math_grad.py` and
//! `nn_grad.py` (2.21) in Rust, one `#[gradient]` function per op, each
//! written once for both modes (tensors on a tape, outputs in a graph; see
//! [`op_core::gradient`]).
//!
//! The formulas are TensorFlow's, op for op and in the same order, so that
//! a gradient computed here rounds as TensorFlow's does and a graph of it
//! reads like TensorFlow's (`Sqrt`'s gradient is a `SqrtGrad` node, `Log`'s
//! a `Reciprocal` and a `Mul`). Complex values follow TensorFlow's
//! convention: the gradient of a holomorphic `f` is `grad * conj(f'(x))`,
//! hence the `Conj` of an input before it multiplies (skipped for real
//! values, as `math_ops.conj` returns a real tensor as it is). One
//! exception is TensorFlow's too: `SquaredDifference` of complex numbers
//! is real-valued, and its gradient `2 * grad * (x - y)` is the derivative
//! only for a real incoming gradient (which is what such a gradient is).
//!
//! # Broadcasting
//!
//! A binary op broadcasts its inputs, so the gradient flowing into its
//! output has the broadcast shape; each input's gradient is that summed
//! over the axes along which the input was stretched, then reshaped to the
//! input's shape ([`reduce_gradient_args`], TensorFlow's
//! `_ReduceGradientArgs`). As TensorFlow's `SmartBroadcastGradientArgs`
//! does, the axes are found from the static shapes where those decide
//! them ([`broadcast_reduction_axes`]), and no reduction is built when
//! none is needed (inputs of one known shape); otherwise, and always where
//! a rank or a deciding size is unknown, they are computed when the
//! gradient runs by `BroadcastGradientArgs(Shape(x), Shape(y))`. An eager
//! value's shape is always known, so a tape takes the static path. The
//! gradients of `FloorMod` and `DivNoNan` always take the dynamic one
//! ([`reduce_gradient_args_at_run_time`]), as TensorFlow's build it.
//!
//! # Not differentiable
//!
//! The comparisons (`Greater`, `Less`, `GreaterEqual`, `LessEqual`,
//! `Equal`) and `Range` carry no gradient, as TensorFlow's
//! `ops.NotDifferentiable` marks them, nor does `FloorDiv` (TensorFlow's
//! gradient of it is none for both inputs). `Select`'s condition and any
//! integer input get none either; `Cast` passes a gradient back only
//! between float and complex types.
//!
//! # Second derivatives
//!
//! The ops the gradients are built from have gradients too where
//! TensorFlow has them (`SqrtGrad`, `RsqrtGrad`, `TanhGrad`, `SigmoidGrad`,
//! `ReciprocalGrad`, `ReluGrad`, `Reciprocal`, `Conj`), so every gradient
//! here is itself differentiable.

use op_core::gradient::{Gradient, Value};
use op_core::shape_inference::PartialShape;
use op_core::{Complex64, Complex128, DType, Result, Tensor, bf16, f16};

use super::ops::{
    AddN, AddV2, Cast, Conj, Cos, DivNoNan, Equal, Exp, FloorDiv, FloorMod, Greater, GreaterEqual,
    LessEqual, Log, Maximum, Minimum, Mul, Neg, Pow, RealDiv, Reciprocal, ReciprocalGrad, Relu,
    ReluGrad, Rsqrt, RsqrtGrad, Select, SelectV2, Sigmoid, SigmoidGrad, Sin, Sqrt, SqrtGrad,
    Square, SquaredDifference, Sub, Tanh, TanhGrad,
};
use crate::array::{BroadcastGradientArgs, OnesLike, Reshape, Shape, ZerosLike};
use crate::reduction::Sum;

// ---- Building blocks ----

/// `a * b`.
fn mul<V: Value>(g: &Gradient<'_, V>, a: V, b: V) -> Result<V> {
    Mul::call_with(a, b).run_on(g)
}

/// `-x`.
fn neg<V: Value>(g: &Gradient<'_, V>, x: V) -> Result<V> {
    Neg::call_with(x).run_on(g)
}

/// `conj(x)` for a complex `x`; a real `x` as it is (`math_ops.conj`, which
/// adds no op for a real value). The other families' gradients use it too.
pub(crate) fn conj<V: Value>(g: &Gradient<'_, V>, x: V) -> Result<V> {
    if g.dtype_of(&x)?.is_complex() {
        Conj::call_with(x).run_on(g)
    } else {
        Ok(x)
    }
}

/// The number `value` as a scalar of `dtype`, a float or complex type (what
/// TensorFlow makes of a Python number multiplied with a tensor).
fn scalar<V: Value>(g: &Gradient<'_, V>, dtype: DType, value: f32) -> Result<V> {
    let tensor = match dtype {
        DType::F32 => Tensor::scalar(value),
        DType::F64 => Tensor::scalar(f64::from(value)),
        DType::F16 => Tensor::scalar(f16::from_f32(value)),
        DType::BF16 => Tensor::scalar(bf16::from_f32(value)),
        DType::Complex64 => Tensor::scalar(Complex64::new(value, 0.0)),
        DType::Complex128 => Tensor::scalar(Complex128::new(f64::from(value), 0.0)),
        other => {
            return Err(g.error(format_args!(
                "its formula needs the constant {value} as {other}, which has no gradient (only float and complex values do)"
            )));
        }
    };
    g.constant(tensor)
}

/// `value * x`, the constant in `x`'s dtype.
fn scale<V: Value>(g: &Gradient<'_, V>, value: f32, x: V) -> Result<V> {
    let c = scalar(g, g.dtype_of(&x)?, value)?;
    mul(g, c, x)
}

/// `x * value`, the constant in `x`'s dtype (TensorFlow's `grad * -2.0`
/// multiplies in this order).
fn times<V: Value>(g: &Gradient<'_, V>, x: V, value: f32) -> Result<V> {
    let c = scalar(g, g.dtype_of(&x)?, value)?;
    mul(g, x, c)
}

// ---- Broadcasting ----

/// The axes along which each of two operands of a broadcasting op was
/// stretched, from their static shapes (TensorFlow's
/// `_InferGradientReductionAxes`): axis `i` of the broadcast shape (the
/// operands aligned on the right) is `x`'s when `x`'s size there is 1 (or
/// `x` has no such axis) and `y`'s is not, and the reverse. `None` when a
/// rank is unknown or an axis where neither size is 1 has an unknown size
/// (whether it was stretched is then decided by the values' shapes).
pub fn broadcast_reduction_axes(
    x: &PartialShape,
    y: &PartialShape,
) -> Option<(Vec<i32>, Vec<i32>)> {
    let (x, y) = (x.0.as_ref()?, y.0.as_ref()?);
    let rank = x.len().max(y.len());
    // A missing leading axis counts as size 1.
    let size = |shape: &[Option<usize>], axis: usize| {
        let missing = rank - shape.len();
        if axis < missing {
            Some(1)
        } else {
            shape[axis - missing]
        }
    };
    let (mut x_axes, mut y_axes) = (Vec::new(), Vec::new());
    for axis in 0..rank {
        let (xd, yd) = (size(x, axis), size(y, axis));
        // Ranks are far below i32::MAX (TensorFlow's limit is 254).
        let index = axis as i32;
        if xd == Some(1) && yd != Some(1) {
            x_axes.push(index);
        } else if yd == Some(1) && xd != Some(1) {
            y_axes.push(index);
        } else if xd.is_none() || yd.is_none() {
            return None;
        }
    }
    Some((x_axes, y_axes))
}

/// `value`'s shape as a value: a constant where `shape` (its static shape)
/// is fully known, else a `Shape` op. `int32` as TensorFlow's, `int64`
/// for sizes beyond it.
fn shape_value<V: Value>(g: &Gradient<'_, V>, value: &V, shape: &PartialShape) -> Result<V> {
    let known: Option<Vec<usize>> = shape.0.as_ref().and_then(|d| d.iter().copied().collect());
    let Some(dims) = known else {
        return Shape::call_with(value.clone()).run_on(g);
    };
    let small: Option<Vec<i32>> = dims.iter().map(|&d| i32::try_from(d).ok()).collect();
    let tensor = match small {
        Some(dims) => Tensor::from_vec([dims.len()], dims)?,
        None => {
            let dims: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
            Tensor::from_vec([dims.len()], dims)?
        }
    };
    g.constant(tensor)
}

/// `grad` summed over `axes` (keeping them, as TensorFlow does) and
/// reshaped to `shape` (TensorFlow's `_ReduceGradientArg`).
fn sum_to<V: Value>(g: &Gradient<'_, V>, grad: V, axes: V, shape: V) -> Result<V> {
    let summed = Sum::call_with(grad, axes).keep_dims(true).run_on(g)?;
    Reshape::call_with(summed, shape).run_on(g)
}

/// The gradients `gx` and `gy` of the inputs `x` and `y` of a broadcasting
/// binary op, each of the broadcast shape, reduced to its input's shape
/// (TensorFlow's `_ReduceGradientArgs`): summed over the axes along which
/// the input was stretched, then reshaped to the input's shape. The axes
/// come from the static shapes where those decide them
/// ([`broadcast_reduction_axes`]; nothing is built for an input that was
/// not stretched), else from `BroadcastGradientArgs(Shape(x), Shape(y))`
/// when the gradient runs. A `None` stays `None`.
pub fn reduce_gradient_args<V: Value>(
    g: &Gradient<'_, V>,
    x: &V,
    y: &V,
    gx: Option<V>,
    gy: Option<V>,
) -> Result<(Option<V>, Option<V>)> {
    if gx.is_none() && gy.is_none() {
        return Ok((None, None));
    }
    let (x_shape, y_shape) = (g.shape_of(x)?, g.shape_of(y)?);
    let Some((x_axes, y_axes)) = broadcast_reduction_axes(&x_shape, &y_shape) else {
        return reduce_gradient_args_at_run_time(g, x, y, gx, gy);
    };
    // Known ranks (else no axes): a lower rank must be reshaped even with
    // nothing to sum.
    let (x_rank, y_rank) = (x_shape.rank(), y_shape.rank());
    let reduce =
        |grad: Option<V>, value: &V, shape: &PartialShape, axes: Vec<i32>, lower| match grad {
            Some(grad) if !axes.is_empty() || lower => {
                let axes = g.constant(Tensor::from_vec([axes.len()], axes)?)?;
                let target = shape_value(g, value, shape)?;
                sum_to(g, grad, axes, target).map(Some)
            }
            other => Ok(other),
        };
    Ok((
        reduce(gx, x, &x_shape, x_axes, x_rank < y_rank)?,
        reduce(gy, y, &y_shape, y_axes, y_rank < x_rank)?,
    ))
}

/// [`reduce_gradient_args`] with the axes always computed when the gradient
/// runs, by `BroadcastGradientArgs(Shape(x), Shape(y))`, whatever the static
/// shapes say.
fn reduce_gradient_args_at_run_time<V: Value>(
    g: &Gradient<'_, V>,
    x: &V,
    y: &V,
    gx: Option<V>,
    gy: Option<V>,
) -> Result<(Option<V>, Option<V>)> {
    let (sx, sy) = (
        Shape::call_with(x.clone()).run_on(g)?,
        Shape::call_with(y.clone()).run_on(g)?,
    );
    let (rx, ry) = BroadcastGradientArgs::call_with(sx.clone(), sy.clone()).run_on(g)?;
    let gx = gx.map(|gx| sum_to(g, gx, rx, sx)).transpose()?;
    let gy = gy.map(|gy| sum_to(g, gy, ry, sy)).transpose()?;
    Ok((gx, gy))
}

// ---- Unary ops ----

/// `-grad`.
#[op_core::gradient(op = Neg)]
fn neg_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    Ok([Some(neg(g, g.grad(0)?)?)])
}

/// `grad * (conj(x) * 2)`.
#[op_core::gradient(op = Square)]
fn square_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    let x = conj(g, g.input(0))?;
    let two_x = times(g, x, 2.0)?;
    Ok([Some(mul(g, g.grad(0)?, two_x)?)])
}

/// `SqrtGrad(y, grad)`: `grad * 0.5 / conj(y)`.
#[op_core::gradient(op = Sqrt)]
fn sqrt_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    Ok([Some(
        SqrtGrad::call_with(g.output(0), g.grad(0)?).run_on(g)?,
    )])
}

/// `RsqrtGrad(y, grad)`: `grad * -0.5 * conj(y)^3`.
#[op_core::gradient(op = Rsqrt)]
fn rsqrt_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    Ok([Some(
        RsqrtGrad::call_with(g.output(0), g.grad(0)?).run_on(g)?,
    )])
}

/// `grad * conj(y)`: `e^x` is its own derivative.
#[op_core::gradient(op = Exp)]
fn exp_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    let y = conj(g, g.output(0))?;
    Ok([Some(mul(g, g.grad(0)?, y)?)])
}

/// `grad * (1 / conj(x))`.
#[op_core::gradient(op = Log)]
fn log_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    let x = conj(g, g.input(0))?;
    let inverse = Reciprocal::call_with(x).run_on(g)?;
    Ok([Some(mul(g, g.grad(0)?, inverse)?)])
}

/// `grad * cos(conj(x))`.
#[op_core::gradient(op = Sin)]
fn sin_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    let x = conj(g, g.input(0))?;
    let cos = Cos::call_with(x).run_on(g)?;
    Ok([Some(mul(g, g.grad(0)?, cos)?)])
}

/// `-grad * sin(conj(x))`.
#[op_core::gradient(op = Cos)]
fn cos_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    let x = conj(g, g.input(0))?;
    let sin = Sin::call_with(x).run_on(g)?;
    let minus_grad = neg(g, g.grad(0)?)?;
    Ok([Some(mul(g, minus_grad, sin)?)])
}

/// `TanhGrad(conj(y), grad)`: `grad * (1 - y^2)`.
#[op_core::gradient(op = Tanh)]
fn tanh_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    let y = conj(g, g.output(0))?;
    Ok([Some(TanhGrad::call_with(y, g.grad(0)?).run_on(g)?)])
}

/// `SigmoidGrad(conj(y), grad)`: `grad * y * (1 - y)`.
#[op_core::gradient(op = Sigmoid)]
fn sigmoid_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    let y = conj(g, g.output(0))?;
    Ok([Some(SigmoidGrad::call_with(y, g.grad(0)?).run_on(g)?)])
}

/// `ReluGrad(grad, y)`: `grad` where the output is positive.
#[op_core::gradient(op = Relu)]
fn relu_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    Ok([Some(
        ReluGrad::call_with(g.grad(0)?, g.output(0)).run_on(g)?,
    )])
}

/// `ReciprocalGrad(y, grad)`: `-grad * conj(y)^2`.
#[op_core::gradient(op = Reciprocal)]
fn reciprocal_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    Ok([Some(
        ReciprocalGrad::call_with(g.output(0), g.grad(0)?).run_on(g)?,
    )])
}

/// `conj(grad)`.
#[op_core::gradient(op = Conj)]
fn conj_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    Ok([Some(conj(g, g.grad(0)?)?)])
}

// ---- Binary ops (broadcasting) ----

/// `grad` for both, each reduced to its input's shape.
#[op_core::gradient(op = AddV2)]
fn add_v2_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    let grad = g.grad(0)?;
    let (gx, gy) =
        reduce_gradient_args(g, &g.input(0), &g.input(1), Some(grad.clone()), Some(grad))?;
    Ok([gx, gy])
}

/// `grad` and `-grad`, each reduced to its input's shape.
#[op_core::gradient(op = Sub)]
fn sub_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    let grad = g.grad(0)?;
    let minus = neg(g, grad.clone())?;
    let (gx, gy) = reduce_gradient_args(g, &g.input(0), &g.input(1), Some(grad), Some(minus))?;
    Ok([gx, gy])
}

/// `grad * conj(y)` and `conj(x) * grad`, each reduced to its input's
/// shape.
#[op_core::gradient(op = Mul)]
fn mul_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    let (x, y, grad) = (g.input(0), g.input(1), g.grad(0)?);
    let gx = mul(g, grad.clone(), conj(g, y.clone())?)?;
    let gy = mul(g, conj(g, x.clone())?, grad)?;
    let (gx, gy) = reduce_gradient_args(g, &x, &y, Some(gx), Some(gy))?;
    Ok([gx, gy])
}

/// The gradients of `x` and `y` of a quotient `x / y` that `div` computes:
/// `div(grad, conj(y))` and `grad * div(div(-conj(x), conj(y)), conj(y))`
/// (TensorFlow's `_RealDivGrad` and `_DivNoNanGrad`), of the broadcast
/// shape.
fn quotient_grads<V: Value>(
    g: &Gradient<'_, V>,
    div: impl Fn(V, V) -> Result<V>,
) -> Result<(V, V)> {
    let (x, y, grad) = (g.input(0), g.input(1), g.grad(0)?);
    let (cx, cy) = (conj(g, x)?, conj(g, y)?);
    let gx = div(grad.clone(), cy.clone())?;
    let quotient = div(div(neg(g, cx)?, cy.clone())?, cy)?;
    Ok((gx, mul(g, grad, quotient)?))
}

/// `grad / conj(y)` and `grad * (-conj(x) / conj(y) / conj(y))`, each
/// reduced to its input's shape.
#[op_core::gradient(op = RealDiv)]
fn real_div_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    let (gx, gy) = quotient_grads(g, |a, b| RealDiv::call_with(a, b).run_on(g))?;
    let (gx, gy) = reduce_gradient_args(g, &g.input(0), &g.input(1), Some(gx), Some(gy))?;
    Ok([gx, gy])
}

/// `grad` and `-grad * floor_div(x, y)`, each reduced to its input's shape
/// by shapes computed when the gradient runs.
#[op_core::gradient(op = FloorMod)]
fn floor_mod_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    let (x, y, grad) = (g.input(0), g.input(1), g.grad(0)?);
    let floor_xy = FloorDiv::call_with(x.clone(), y.clone()).run_on(g)?;
    let gy = mul(g, grad.clone(), neg(g, floor_xy)?)?;
    let (gx, gy) = reduce_gradient_args_at_run_time(g, &x, &y, Some(grad), Some(gy))?;
    Ok([gx, gy])
}

/// `div_no_nan(grad, conj(y))` and `grad * div_no_nan(div_no_nan(-conj(x),
/// conj(y)), conj(y))`, each reduced to its input's shape by shapes
/// computed when the gradient runs.
#[op_core::gradient(op = DivNoNan)]
fn div_no_nan_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    let (gx, gy) = quotient_grads(g, |a, b| DivNoNan::call_with(a, b).run_on(g))?;
    let (x, y) = (g.input(0), g.input(1));
    let (gx, gy) = reduce_gradient_args_at_run_time(g, &x, &y, Some(gx), Some(gy))?;
    Ok([gx, gy])
}

/// `grad` to `x` where `selector(x, y)` holds, to `y` elsewhere, each
/// reduced to its input's shape (TensorFlow's `_MaximumMinimumGrad`).
fn maximum_minimum_grad<V: Value>(
    g: &Gradient<'_, V>,
    selector: fn(&Gradient<'_, V>, V, V) -> Result<V>,
) -> Result<[Option<V>; 2]> {
    let (x, y, grad) = (g.input(0), g.input(1), g.grad(0)?);
    let zeros = ZerosLike::call_with(grad.clone()).run_on(g)?;
    let x_mask = selector(g, x.clone(), y.clone())?;
    let select = |a, b| SelectV2::call_with(x_mask.clone(), a, b).run_on(g);
    let gx = select(grad.clone(), zeros.clone())?;
    let gy = select(zeros, grad)?;
    let (gx, gy) = reduce_gradient_args(g, &x, &y, Some(gx), Some(gy))?;
    Ok([gx, gy])
}

/// `grad` to `x` where `x >= y` (ties go to `x`), to `y` where `x < y`.
#[op_core::gradient(op = Maximum)]
fn maximum_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    maximum_minimum_grad(g, |g, x, y| GreaterEqual::call_with(x, y).run_on(g))
}

/// `grad` to `x` where `x <= y` (ties go to `x`), to `y` where `x > y`.
#[op_core::gradient(op = Minimum)]
fn minimum_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    maximum_minimum_grad(g, |g, x, y| LessEqual::call_with(x, y).run_on(g))
}

/// `grad * y * x^(y - 1)` and `grad * conj(z) * log(x)`, each reduced to
/// its input's shape. Where `x` is not positive (zero, for complex `x`),
/// `y`'s gradient is 0: `log(x)` is taken of 1 there and replaced by 0,
/// as TensorFlow does, rather than a false singularity (or, for a negative
/// real `x`, no sensible value).
#[op_core::gradient(op = Pow)]
fn pow_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    let (x, y, z, grad) = (g.input(0), g.input(1), g.output(0), g.grad(0)?);
    let (cx, cy) = (conj(g, x.clone())?, conj(g, y.clone())?);
    let dtype = g.dtype_of(&x)?;

    let one = scalar(g, dtype, 1.0)?;
    let y_minus_one = Sub::call_with(cy.clone(), one).run_on(g)?;
    let power = Pow::call_with(cx.clone(), y_minus_one).run_on(g)?;
    let gx = mul(g, mul(g, grad.clone(), cy)?, power)?;

    let zero = scalar(g, dtype, 0.0)?;
    let ones = OnesLike::call_with(x.clone()).run_on(g)?;
    let zeros = ZerosLike::call_with(x.clone()).run_on(g)?;
    let select = |c: &V, a, b| SelectV2::call_with(c.clone(), a, b).run_on(g);
    let log_x = if dtype.is_complex() {
        // TensorFlow's mask is `cx != 0`; `cx == 0` with the branches
        // swapped is the same choice.
        let is_zero = Equal::call_with(cx.clone(), zero).run_on(g)?;
        let safe_x = select(&is_zero, ones, cx)?;
        let log = Log::call_with(safe_x).run_on(g)?;
        select(&is_zero, zeros, log)?
    } else {
        let positive = Greater::call_with(cx.clone(), zero).run_on(g)?;
        let safe_x = select(&positive, cx, ones)?;
        let log = Log::call_with(safe_x).run_on(g)?;
        select(&positive, log, zeros)?
    };
    let gy = mul(g, mul(g, grad, conj(g, z)?)?, log_x)?;
    let (gx, gy) = reduce_gradient_args(g, &x, &y, Some(gx), Some(gy))?;
    Ok([gx, gy])
}

/// `2 * grad * (x - y)` and its negative, each reduced to its input's
/// shape.
#[op_core::gradient(op = SquaredDifference)]
fn squared_difference_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    let (x, y) = (g.input(0), g.input(1));
    let twice = scale(g, 2.0, g.grad(0)?)?;
    let difference = Sub::call_with(x.clone(), y.clone()).run_on(g)?;
    let x_grad = mul(g, twice, difference)?;
    let y_grad = neg(g, x_grad.clone())?;
    let (gx, gy) = reduce_gradient_args(g, &x, &y, Some(x_grad), Some(y_grad))?;
    Ok([gx, gy])
}

// ---- Selection, sums, conversion ----

/// None to the condition; `grad` to `t` where it holds and to `e` where it
/// does not (zeros elsewhere).
#[op_core::gradient(op = Select)]
fn select_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 3]> {
    let (c, grad) = (g.input(0), g.grad(0)?);
    let zeros = ZerosLike::call_with(g.input(1)).run_on(g)?;
    let gt = Select::call_with(c.clone(), grad.clone(), zeros.clone()).run_on(g)?;
    let ge = Select::call_with(c, zeros, grad).run_on(g)?;
    Ok([None, Some(gt), Some(ge)])
}

/// [`select_grad`] with broadcasting: each value's gradient is reduced
/// from the output's shape to its own.
#[op_core::gradient(op = SelectV2)]
fn select_v2_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 3]> {
    let (c, t, e, z, grad) = (g.input(0), g.input(1), g.input(2), g.output(0), g.grad(0)?);
    let zero = scalar(g, g.dtype_of(&grad)?, 0.0)?;
    let gt = SelectV2::call_with(c.clone(), grad.clone(), zero.clone()).run_on(g)?;
    let ge = SelectV2::call_with(c, zero, grad).run_on(g)?;
    let (gt, _) = reduce_gradient_args(g, &t, &z, Some(gt), None)?;
    let (ge, _) = reduce_gradient_args(g, &e, &z, Some(ge), None)?;
    Ok([None, gt, ge])
}

/// `grad` to every input (they all have the output's shape).
#[op_core::gradient(op = AddN)]
fn add_n_grad<V: Value>(g: &Gradient<'_, V>) -> Result<Vec<Option<V>>> {
    let grad = g.grad(0)?;
    Ok(vec![Some(grad); g.inputs().len()])
}

/// `grad` converted back to the input's type, between float and complex
/// types; none to or from any other type.
#[op_core::gradient(op = Cast)]
fn cast_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    let (source, grad) = (g.input_dtype(0), g.grad(0)?);
    let target = g.dtype_of(&grad)?;
    let float_like = |d: DType| d.is_float() || d.is_complex();
    if !float_like(source) || !float_like(target) {
        return Ok([None]);
    }
    if source == target {
        return Ok([Some(grad)]);
    }
    Ok([Some(Cast::call_with(grad, source).run_on(g)?)])
}

op_core::not_differentiable!(
    "Greater",
    "Less",
    "GreaterEqual",
    "LessEqual",
    "Equal",
    "Range",
    "FloorDiv"
);

// ---- The gradients of the gradient ops (second derivatives) ----

/// `x` in input `index`'s shape. The unary gradient ops take `y` and `dy`
/// of one element count whatever their shapes (`[3]` and `[1,3]`, as
/// TensorFlow's kernels do) and pair them element by element, so their
/// gradients pair them the same way: a value of one input's shape is
/// reshaped to the other's. Nothing is added where both shapes are
/// statically the same or not fully known (then they are the same in every
/// graph the ops' gradients build).
fn in_shape_of<V: Value>(g: &Gradient<'_, V>, x: V, index: usize) -> Result<V> {
    let (have, want) = (g.shape_of(&x)?, g.input_shape(index)?);
    let known = |s: &PartialShape| s.0.as_ref().is_some_and(|d| d.iter().all(Option::is_some));
    if have == want || !known(&have) || !known(&want) {
        return Ok(x);
    }
    let shape = shape_value(g, &g.input(index), &want)?;
    Reshape::call_with(x, shape).run_on(g)
}

/// `z = 0.5 * b / conj(a)`: `-conj(grad / a) * z` and `0.5 * grad / a`.
#[op_core::gradient(op = SqrtGrad)]
fn sqrt_grad_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    let ga = RealDiv::call_with(g.grad(0)?, g.input(0)).run_on(g)?;
    let minus_conj = neg(g, conj(g, ga.clone())?)?;
    let grad_a = mul(g, minus_conj, g.output(0))?;
    let grad_b = in_shape_of(g, scale(g, 0.5, ga)?, 1)?;
    Ok([Some(grad_a), Some(grad_b)])
}

/// `z = -0.5 * b * conj(a)^3`: `-1.5 * conj(grad) * b * conj(a)^2` and
/// `RsqrtGrad(conj(a), grad)`.
#[op_core::gradient(op = RsqrtGrad)]
fn rsqrt_grad_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    let (a, grad) = (conj(g, g.input(0))?, g.grad(0)?);
    let b = in_shape_of(g, g.input(1), 0)?;
    let cg = conj(g, grad.clone())?;
    let squared = Square::call_with(a.clone()).run_on(g)?;
    let grad_a = mul(g, mul(g, scale(g, -1.5, cg)?, b)?, squared)?;
    let grad_b = in_shape_of(g, RsqrtGrad::call_with(a, grad).run_on(g)?, 1)?;
    Ok([Some(grad_a), Some(grad_b)])
}

/// `z = b * (1 - a^2)`: `grad * -2 * conj(b) * conj(a)` and
/// `TanhGrad(conj(a), grad)`.
#[op_core::gradient(op = TanhGrad)]
fn tanh_grad_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    let (a, grad) = (conj(g, g.input(0))?, g.grad(0)?);
    let b = conj(g, in_shape_of(g, g.input(1), 0)?)?;
    let grad_a = mul(g, mul(g, times(g, grad.clone(), -2.0)?, b)?, a.clone())?;
    let grad_b = in_shape_of(g, TanhGrad::call_with(a, grad).run_on(g)?, 1)?;
    Ok([Some(grad_a), Some(grad_b)])
}

/// `z = b * a * (1 - a)`: `grad * conj(b) - 2 * grad * conj(b) * conj(a)`
/// and `SigmoidGrad(conj(a), grad)`.
#[op_core::gradient(op = SigmoidGrad)]
fn sigmoid_grad_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    let (a, grad) = (conj(g, g.input(0))?, g.grad(0)?);
    let b = conj(g, in_shape_of(g, g.input(1), 0)?)?;
    let gb = mul(g, grad.clone(), b)?;
    let twice = mul(g, scale(g, 2.0, gb.clone())?, a.clone())?;
    let grad_a = Sub::call_with(gb, twice).run_on(g)?;
    let grad_b = in_shape_of(g, SigmoidGrad::call_with(a, grad).run_on(g)?, 1)?;
    Ok([Some(grad_a), Some(grad_b)])
}

/// `z = -b * conj(a)^2`: `conj(grad) * -2 * b * conj(a)` and
/// `ReciprocalGrad(conj(a), grad)`.
#[op_core::gradient(op = ReciprocalGrad)]
fn reciprocal_grad_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    let (a, grad) = (conj(g, g.input(0))?, g.grad(0)?);
    let b = in_shape_of(g, g.input(1), 0)?;
    let cg = conj(g, grad.clone())?;
    let grad_a = mul(g, mul(g, times(g, cg, -2.0)?, b)?, a.clone())?;
    let grad_b = in_shape_of(g, ReciprocalGrad::call_with(a, grad).run_on(g)?, 1)?;
    Ok([Some(grad_a), Some(grad_b)])
}

/// `z = grad_in * (x > 0)`: `ReluGrad(grad, x)` to the gradient, zeros to
/// the features (piecewise constant).
#[op_core::gradient(op = ReluGrad)]
fn relu_grad_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    let x = g.input(1);
    let grad_in = ReluGrad::call_with(g.grad(0)?, x.clone()).run_on(g)?;
    let zeros = ZerosLike::call_with(x).run_on(g)?;
    Ok([Some(grad_in), Some(zeros)])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axes(x: &str, y: &str) -> Option<(Vec<i32>, Vec<i32>)> {
        broadcast_reduction_axes(&x.parse().unwrap(), &y.parse().unwrap())
    }

    #[test]
    fn reduction_axes_are_the_stretched_ones_where_static_shapes_decide_them() {
        assert_eq!(axes("[2,3]", "[3]"), Some((vec![], vec![0])));
        assert_eq!(axes("[2,1]", "[1,3]"), Some((vec![1], vec![0])));
        assert_eq!(axes("[]", "[2,3]"), Some((vec![0, 1], vec![])));
        assert_eq!(axes("[2,3]", "[2,3]"), Some((vec![], vec![])));
        // Only the rank differs: nothing to sum, but x must be reshaped.
        assert_eq!(axes("[3]", "[1,3]"), Some((vec![], vec![])));
        // An unknown size against 1 is stretched or equal: summing over it
        // is right either way.
        assert_eq!(axes("[?,3]", "[3]"), Some((vec![], vec![0])));
        assert_eq!(axes("[?,1]", "[1,?]"), Some((vec![1], vec![0])));
        assert_eq!(axes("[0,3]", "[1,3]"), Some((vec![], vec![0])));
    }

    #[test]
    fn reduction_axes_are_left_to_the_values_where_static_shapes_do_not_decide() {
        assert_eq!(axes("?", "[3]"), None);
        assert_eq!(axes("[2,3]", "?"), None);
        assert_eq!(axes("[?,3]", "[2,3]"), None);
        assert_eq!(axes("[?]", "[?]"), None);
    }
}
