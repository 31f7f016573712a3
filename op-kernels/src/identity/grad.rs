//! The gradients of the identities (TensorFlow's `_IdGrad` and
//! `_IdNGrad`): the gradient passes through unchanged. `StopGradient` is
//! not differentiable: that is its purpose. `NoOp` has no outputs, so no
//! gradient reaches it.

use op_core::Result;
use op_core::gradient::{Gradient, Value};

use super::ops::{Identity, IdentityN};

op_core::not_differentiable!("StopGradient");

/// d identity(x) = grad.
#[op_core::gradient(op = Identity)]
fn identity_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    Ok([Some(g.grad(0)?)])
}

/// d identity_n(x_0, ..., x_n-1) = (grad_0, ..., grad_n-1); an output
/// nobody used passes no gradient to its input.
#[op_core::gradient(op = IdentityN)]
fn identity_n_grad<V: Value>(g: &Gradient<'_, V>) -> Result<Vec<Option<V>>> {
    Ok(g.output_grads().to_vec())
}
