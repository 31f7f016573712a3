//! The gradients of `FloorMod` and `DivNoNan`, with TensorFlow's
//! formulas (`math_grad.py`); `Range` and `FloorDiv` are not
//! differentiable (as in TensorFlow: `Range` is marked so, and
//! `FloorDiv`'s gradient is none for both inputs).

use op_core::Result;
use op_core::gradient::{Gradient, Value};

use super::ops::{DivNoNan, FloorDiv, FloorMod};
use crate::array::{BroadcastGradientArgs, Reshape, Shape};
use crate::math::Conj;
use crate::math::{Mul, Neg};
use crate::reduction::Sum;

op_core::not_differentiable!("Range", "FloorDiv");

/// `value`'s complex conjugate, or `value` itself for real types
/// (TensorFlow's `math_ops.conj`, which adds no op for them).
pub(crate) fn conj<V: Value>(g: &Gradient<'_, V>, value: V) -> Result<V> {
    if g.dtype_of(&value)?.is_complex() {
        return Conj::call_with(value).run_on(g);
    }
    Ok(value)
}

/// The gradients `gx` and `gy` of a broadcasting binary op's inputs `x`
/// and `y`, each summed over the axes its input was broadcast along and
/// reshaped to its shape (TensorFlow's `_ReduceGradientArgs`).
fn reduce_both<V: Value>(g: &Gradient<'_, V>, gx: V, gy: V) -> Result<[Option<V>; 2]> {
    let sx = Shape::call_with(g.input(0)).run_on(g)?;
    let sy = Shape::call_with(g.input(1)).run_on(g)?;
    let (rx, ry) = BroadcastGradientArgs::call_with(sx.clone(), sy.clone()).run_on(g)?;
    let reduce = |grad: V, axes: V, shape: V| -> Result<V> {
        let summed = Sum::call_with(grad, axes).keep_dims(true).run_on(g)?;
        Reshape::call_with(summed, shape).run_on(g)
    };
    Ok([Some(reduce(gx, rx, sx)?), Some(reduce(gy, ry, sy)?)])
}

/// d floor_mod(x, y) = (grad, -grad * floor_div(x, y)), each summed over
/// the axes its input was broadcast along.
#[op_core::gradient(op = FloorMod)]
fn floor_mod_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    let grad = g.grad(0)?;
    let floor_xy = FloorDiv::call_with(g.input(0), g.input(1)).run_on(g)?;
    let negated = Neg::call_with(floor_xy).run_on(g)?;
    let gy = Mul::call_with(grad.clone(), negated).run_on(g)?;
    reduce_both(g, grad, gy)
}

/// d div_no_nan(x, y) = (div_no_nan(grad, y), grad * div_no_nan(div_no_nan(-x,
/// y), y)), with the conjugates of `x` and `y`, each summed over the axes
/// its input was broadcast along.
#[op_core::gradient(op = DivNoNan)]
fn div_no_nan_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    let (x, y) = (conj(g, g.input(0))?, conj(g, g.input(1))?);
    let grad = g.grad(0)?;
    let gx = DivNoNan::call_with(grad.clone(), y.clone()).run_on(g)?;
    let minus_x = Neg::call_with(x).run_on(g)?;
    let once = DivNoNan::call_with(minus_x, y.clone()).run_on(g)?;
    let twice = DivNoNan::call_with(once, y).run_on(g)?;
    let gy = Mul::call_with(grad, twice).run_on(g)?;
    reduce_both(g, gx, gy)
}
