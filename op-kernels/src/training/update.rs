//! What every device's kernel of a training op does before the math:
//! find the variables its handles reach (each of dtype `T`, all
//! distinct), lock them in one global order, and check that each has a
//! value of the variable's shape, as the gradient has; with the errors
//! that name the op, the node and the input.

use std::sync::Arc;

use op_core::error::quoted;
use op_core::{Code, Element, Error, KernelContext, ResourceHandle, Result};

use super::math::AdamParams;
use super::ops::ResourceApplyAdam;
use crate::variable::{Var, VarGuard};

/// `ResourceApplyAdam`'s scalar inputs (3 to 8) and `use_nesterov`, read
/// the same way by its CPU and GPU kernels.
pub(super) fn adam_params<T: Element>(
    ctx: &KernelContext<'_>,
    attrs: &ResourceApplyAdam,
) -> Result<AdamParams<T>> {
    Ok(AdamParams {
        beta1_power: ctx.input_scalar(3)?,
        beta2_power: ctx.input_scalar(4)?,
        lr: ctx.input_scalar(5)?,
        beta1: ctx.input_scalar(6)?,
        beta2: ctx.input_scalar(7)?,
        epsilon: ctx.input_scalar(8)?,
        nesterov: attrs.use_nesterov,
    })
}

/// `input 1 ('accum')`: input `index` and its name (the training ops have
/// no list inputs, so an input's index is its arg's).
pub(super) fn describe(ctx: &KernelContext<'_>, index: usize) -> String {
    match ctx.op_def().inputs.get(index) {
        Some(arg) => format!("input {index} ('{}')", arg.name),
        None => format!("input {index}"),
    }
}

/// The name of the variable that input `index` refers to, for messages.
fn variable_name(ctx: &KernelContext<'_>, index: usize) -> String {
    ctx.input_scalar::<ResourceHandle>(index)
        .map(|h| quoted(&h.name).to_string())
        .unwrap_or_else(|_| "?".to_owned())
}

/// The error for an uninitialized variable (TensorFlow's "Attempting to use
/// uninitialized variables").
pub(super) fn uninitialized(ctx: &KernelContext<'_>, index: usize, detail: &str) -> Error {
    ctx.error(
        Code::FailedPrecondition,
        format_args!(
            "{}: variable {} is uninitialized{detail}: assign it a value (run its initializer) before updating it",
            describe(ctx, index),
            variable_name(ctx, index),
        ),
    )
}

/// The variables that the resource inputs `inputs` refer to: each a `Var`
/// of dtype `T`, all distinct.
pub(super) fn variables<T: Element, const N: usize>(
    ctx: &KernelContext<'_>,
    inputs: [usize; N],
) -> Result<[Arc<Var>; N]> {
    let mut found: Vec<Arc<Var>> = Vec::with_capacity(N);
    for index in inputs {
        let var = ctx.resource::<Var>(index).map_err(|e| match e.code() {
            // A named variable is made by its first assign.
            Code::NotFound => uninitialized(ctx, index, " (never assigned, or destroyed)"),
            _ => e,
        })?;
        if var.dtype() != T::DTYPE {
            return Err(ctx.error(
                Code::InvalidArgument,
                format_args!(
                    "{}: variable {} has dtype {}, but T is {}: the variables and the other inputs must have one dtype",
                    describe(ctx, index),
                    variable_name(ctx, index),
                    var.dtype(),
                    T::DTYPE
                ),
            ));
        }
        if let Some(k) = found.iter().position(|other| Arc::ptr_eq(other, &var)) {
            return Err(ctx.error(
                Code::InvalidArgument,
                format_args!(
                    "{} and {} are the same variable {}: each must be a variable of its own",
                    describe(ctx, inputs[k]),
                    describe(ctx, index),
                    variable_name(ctx, index)
                ),
            ));
        }
        found.push(var);
    }
    found
        .try_into()
        .map_err(|_| Error::internal("a variable went missing"))
}

/// Locks every variable for writing, in the order of their addresses (a
/// global order: two updates of overlapping variables never deadlock);
/// returns the guards in the order of `vars`.
pub(super) fn lock_all<const N: usize>(vars: &[Arc<Var>; N]) -> Result<[VarGuard<'_>; N]> {
    let mut order: [usize; N] = std::array::from_fn(|i| i);
    order.sort_by_key(|&i| Arc::as_ptr(&vars[i]).addr());
    let mut guards: Vec<(usize, VarGuard<'_>)> =
        order.iter().map(|&i| (i, vars[i].lock())).collect();
    guards.sort_by_key(|(i, _)| *i);
    guards
        .into_iter()
        .map(|(_, guard)| guard)
        .collect::<Vec<_>>()
        .try_into()
        .map_err(|_| Error::internal("a variable's lock went missing"))
}

/// Checks that each locked variable of inputs `inputs` has a value, and
/// the shape of the first (the variable) and of `grad` (input
/// `grad_index`): what every device's update needs before it touches the
/// elements.
pub(super) fn check_shapes<const N: usize>(
    ctx: &KernelContext<'_>,
    guards: &[VarGuard<'_>; N],
    inputs: [usize; N],
    grad_index: usize,
) -> Result<()> {
    let mut dims: Vec<&[usize]> = Vec::with_capacity(N);
    for (guard, &index) in guards.iter().zip(&inputs) {
        let value = guard.value().ok_or_else(|| uninitialized(ctx, index, ""))?;
        dims.push(value.dims());
    }
    let grad = ctx.input(grad_index)?;
    let mut shaped: Vec<(usize, &[usize])> =
        inputs.iter().copied().zip(dims.iter().copied()).collect();
    shaped.push((grad_index, grad.dims()));
    let (first, var_dims) = shaped[0];
    for &(index, other) in &shaped[1..] {
        if other != var_dims {
            let shape = |dims: &[usize]| op_core::TensorShape::try_new(dims).map(|s| s.to_string());
            return Err(ctx.error(
                Code::InvalidArgument,
                format_args!(
                    "{} has shape {}, but the variable of {} has shape {}: they must have the same shape",
                    describe(ctx, index),
                    shape(other)?,
                    describe(ctx, first),
                    shape(var_dims)?
                ),
            ));
        }
    }
    Ok(())
}
