//! The gradient of ZeroOut, the guide's `_zero_out_grad` (seed 001, "Implement
//! the gradient in Python") in Rust: only the first element of the input
//! reaches the output, so the input's gradient is the output gradient's
//! first element at the first position and zeros elsewhere.
//!
//! The guide's function, line by line:
//!
//! ```python
//! to_zero = op.inputs[0]
//! shape = array_ops.shape(to_zero)
//! index = array_ops.zeros_like(shape)
//! first_grad = array_ops.reshape(grad, [-1])[0]
//! to_zero_grad = sparse_ops.sparse_to_dense([index], shape, first_grad, 0)
//! ```
//!
//! Here the first element is `Slice(Reshape(grad, [-1]), [0], [1])`,
//! reshaped to `[1, ..., 1]`, and the dense tensor with it at `index` is
//! that padded with `index` zeros before and `shape - index - 1` after in
//! each dimension (`Pad`: no `SparseToDense` op is needed for one element).
//! An empty input has no first element: its gradient is an
//! `InvalidArgument` error from `Slice`, as the guide's fails on index 0.
//!
//! `ZeroOut` itself is int32 only, as in the guide, so no gradient ever
//! flows into it; the same function is registered for
//! `ZeroOutPolymorphic`, whose float and double forms train. The vector
//! forms (`ZeroOutPreserveIndex`, `ZeroOutVector`) are int32 only and have
//! none.

use op_core::Result;
use op_core::gradient::{Gradient, Value};

use super::ops::{ZeroOut, ZeroOutPolymorphic};
use crate::array::{OnesLike, Pack, Pad, Reshape, Shape, Slice, ZerosLike, int32s};
use crate::math::Sub;

/// The guide's `_zero_out_grad`: the gradient's first element at the first
/// position, zeros elsewhere.
fn zero_out_grad_of<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    let to_zero = g.input(0);
    let shape = Shape::call_with(to_zero).run_on(g)?;
    let index = ZerosLike::call_with(shape.clone()).run_on(g)?;
    let flat = Reshape::call_with(g.grad(0)?, int32s(g, &[-1])?).run_on(g)?;
    let first_grad = Slice::call_with(flat, int32s(g, &[0])?, int32s(g, &[1])?).run_on(g)?;
    // sparse_to_dense([index], shape, first_grad, 0).
    let ones = OnesLike::call_with(shape.clone()).run_on(g)?;
    let first_grad = Reshape::call_with(first_grad, ones.clone()).run_on(g)?;
    let last = Sub::call_with(shape, ones).run_on(g)?;
    let after = Sub::call_with(last, index.clone()).run_on(g)?;
    let paddings = Pack::call_with([index, after]).axis(1).run_on(g)?;
    let to_zero_grad = Pad::call_with(first_grad, paddings).run_on(g)?;
    Ok([Some(to_zero_grad)])
}

/// The gradient of the guide's ZeroOut (int32 only: never trained).
#[op_core::gradient(op = ZeroOut)]
fn zero_out_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    zero_out_grad_of(g)
}

/// The gradient of the polymorphic ZeroOut (float, double, int32).
#[op_core::gradient(op = ZeroOutPolymorphic)]
fn zero_out_polymorphic_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    zero_out_grad_of(g)
}
