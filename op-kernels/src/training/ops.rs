//! The declarations of the training ops (TensorFlow's `training_ops.cc`
//! signatures) and their shape functions.

use op_core::shape_inference::{InferenceContext, ShapeHandle};
use op_core::{Result, register_op};

// ---- Shape functions (TensorFlow's, for resource variables) ----

/// Checks that each input in `scalars` is a scalar (an unknown rank is
/// taken to be 0).
fn scalars(c: &mut InferenceContext<'_>, scalars: &[usize]) -> Result<()> {
    for &i in scalars {
        let s = c.input(i)?;
        c.with_rank(s, 0)?;
    }
    Ok(())
}

/// The shape a variable's value must have, as known from its handle:
/// unknown, since a handle here carries no shape (TensorFlow reads it from
/// the handle's `shape_and_type`, and falls back to unknown too).
fn variable_shape(c: &mut InferenceContext<'_>) -> ShapeHandle {
    c.unknown_shape()
}

/// Merges `grad`'s shape into `s`: an error if both are known and differ.
fn merge_grad(c: &mut InferenceContext<'_>, s: ShapeHandle, grad: usize) -> Result<ShapeHandle> {
    let grad = c.input(grad)?;
    c.merge(s, grad)
}

/// `ResourceApplyGradientDescent`: `alpha` is a scalar; `delta` has the
/// variable's shape. No outputs.
pub fn apply_gradient_descent_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let s = variable_shape(c);
    scalars(c, &[1])?;
    merge_grad(c, s, 2)?;
    Ok(())
}

/// `ResourceApplyMomentum`: `lr` and `momentum` are scalars; `grad` has the
/// variable's (and the accumulator's) shape. No outputs.
pub fn apply_momentum_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let s = variable_shape(c);
    scalars(c, &[2])?;
    merge_grad(c, s, 3)?;
    scalars(c, &[4])
}

/// `ResourceApplyAdam`: the six hyperparameters and powers are scalars;
/// `grad` has the variable's (and the slots') shape. No outputs.
pub fn apply_adam_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let s = variable_shape(c);
    scalars(c, &[3, 4, 5, 6, 7, 8])?;
    merge_grad(c, s, 9)?;
    Ok(())
}

// ---- Ops (TensorFlow's `training_ops.cc` signatures) ----

/// Updates a variable by gradient descent: `var -= alpha * delta`.
///
/// var: the variable's handle.
/// alpha: the learning rate, a scalar.
/// delta: the change, of the variable's shape.
#[register_op(
    attrs("T: numbertype"),
    inputs("var: resource", "alpha: T", "delta: T"),
    stateful,
    shape_fn = apply_gradient_descent_shape
)]
pub struct ResourceApplyGradientDescent {
    /// Whether the update holds the variable's lock (TensorFlow's
    /// `use_locking`). Accepted; updates here always hold it, as safe
    /// Rust cannot write to a value others may be writing.
    #[attr(default = false)]
    pub use_locking: bool,
}

/// Updates a variable by the momentum scheme: `accum = accum * momentum +
/// grad`, then `var -= lr * accum`, or with Nesterov momentum `var -= lr *
/// grad + lr * momentum * accum`.
///
/// var: the variable's handle.
/// accum: the accumulator's handle, a variable of the same shape.
/// lr: the learning rate, a scalar.
/// grad: the gradient, of the variable's shape.
/// momentum: the momentum, a scalar.
#[register_op(
    attrs("T: numbertype"),
    inputs(
        "var: resource",
        "accum: resource",
        "lr: T",
        "grad: T",
        "momentum: T"
    ),
    stateful,
    shape_fn = apply_momentum_shape
)]
pub struct ResourceApplyMomentum {
    /// Whether the update holds the variables' locks; accepted, and always
    /// so here (see [`ResourceApplyGradientDescent::use_locking`]).
    #[attr(default = false)]
    pub use_locking: bool,
    /// Whether to use Nesterov momentum.
    #[attr(default = false)]
    pub use_nesterov: bool,
}

/// Updates a variable by the Adam algorithm: `lr_t = lr * sqrt(1 -
/// beta2_power) / (1 - beta1_power)`, `m += (grad - m) * (1 - beta1)`,
/// `v += (grad^2 - v) * (1 - beta2)`, then `var -= lr_t * m / (sqrt(v) +
/// epsilon)`, or with Nesterov momentum `var -= lr_t * (grad * (1 - beta1)
/// + beta1 * m) / (sqrt(v) + epsilon)`.
///
/// var: the variable's handle.
/// m: the first moment's handle, a variable of the same shape.
/// v: the second moment's handle, a variable of the same shape.
/// beta1_power: `beta1` to the power of the step number (from 1).
/// beta2_power: `beta2` to the power of the step number.
/// lr: the learning rate, a scalar.
/// beta1: the first moment's decay, a scalar.
/// beta2: the second moment's decay, a scalar.
/// epsilon: the term that keeps the division finite, a scalar.
/// grad: the gradient, of the variable's shape.
#[register_op(
    attrs("T: numbertype"),
    inputs(
        "var: resource",
        "m: resource",
        "v: resource",
        "beta1_power: T",
        "beta2_power: T",
        "lr: T",
        "beta1: T",
        "beta2: T",
        "epsilon: T",
        "grad: T"
    ),
    stateful,
    shape_fn = apply_adam_shape
)]
pub struct ResourceApplyAdam {
    /// Whether the update holds the variables' locks; accepted, and always
    /// so here (see [`ResourceApplyGradientDescent::use_locking`]).
    #[attr(default = false)]
    pub use_locking: bool,
    /// Whether to use Nesterov momentum.
    #[attr(default = false)]
    pub use_nesterov: bool,
}
