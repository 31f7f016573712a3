//! The gradients of `FloorMod` and `Conj`, with TensorFlow's formulas
//! (`math_grad.py`); `Range` and `FloorDiv` are not differentiable (as in
//! TensorFlow: `Range` is marked so, and `FloorDiv`'s gradient is none for
//! both inputs).

use op_core::Result;
use op_core::gradient::{Gradient, Value};

use super::ops::{Conj, FloorDiv, FloorMod};
use crate::array::{BroadcastGradientArgs, Reshape, Shape};
use crate::math::{Mul, Neg};
use crate::reduction::Sum;

op_core::not_differentiable!("Range", "FloorDiv");

/// `grad` (of a broadcasting binary op's output) summed over the axes
/// `axes` along which input `x` was broadcast, in `x`'s shape `shape`
/// (TensorFlow's `_ReduceGradientArg`).
fn reduce_to<V: Value>(g: &Gradient<'_, V>, grad: V, axes: V, shape: V) -> Result<V> {
    let summed = Sum::call_with(grad, axes).keep_dims(true).run_on(g)?;
    Reshape::call_with(summed, shape).run_on(g)
}

/// d floor_mod(x, y) = (grad, -grad * floor_div(x, y)), each summed over
/// the axes its input was broadcast along.
#[op_core::gradient(op = FloorMod)]
fn floor_mod_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    let (x, y, grad) = (g.input(0), g.input(1), g.grad(0)?);
    let floor_xy = FloorDiv::call_with(x.clone(), y.clone()).run_on(g)?;
    let negated = Neg::call_with(floor_xy).run_on(g)?;
    let gy = Mul::call_with(grad.clone(), negated).run_on(g)?;
    let sx = Shape::call_with(x).run_on(g)?;
    let sy = Shape::call_with(y).run_on(g)?;
    let (rx, ry) = BroadcastGradientArgs::call_with(sx.clone(), sy.clone()).run_on(g)?;
    Ok([
        Some(reduce_to(g, grad, rx, sx)?),
        Some(reduce_to(g, gy, ry, sy)?),
    ])
}

/// d conj(x) = conj(grad).
#[op_core::gradient(op = Conj)]
fn conj_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    Ok([Some(Conj::call_with(g.grad(0)?).run_on(g)?)])
}
