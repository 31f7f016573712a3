//! The gradients of the graph leaves: `PlaceholderWithDefault` passes the
//! gradient to its default as `Identity` does (TensorFlow's `_IdGrad`);
//! `Const` is not differentiable, as in TensorFlow. `Placeholder` has no
//! inputs, so it needs nothing.

use op_core::Result;
use op_core::gradient::{Gradient, Value};

use super::ops::PlaceholderWithDefault;

op_core::not_differentiable!("Const");

/// d placeholder_with_default(input) = grad.
#[op_core::gradient(op = PlaceholderWithDefault)]
fn placeholder_with_default_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    Ok([Some(g.grad(0)?)])
}
