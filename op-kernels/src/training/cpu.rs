//! The CPU kernels of the training ops: each finds its variables, checks
//! every input, locks the variables (in one global order, so two updates
//! never wait on each other), and runs [`math`](super::math)'s slice
//! function over the values in place, split over the intra-op pool when
//! they are large.
//!
//! Updates happen in the variables' own buffers. A buffer that a reader
//! still shares (a `ReadVariableOp` output someone holds) is copied first
//! (copy-on-write), so what a reader got never changes under it, as in
//! TensorFlow's copy-on-read mode.

use std::sync::Arc;

use op_core::error::quoted;
use op_core::threads::ThreadPool;
use op_core::{Code, Error, KernelContext, ResourceHandle, Result, kernel};

use super::math::{self, AdamParams, MomentumParams, Real};
use super::ops::{ResourceApplyAdam, ResourceApplyGradientDescent, ResourceApplyMomentum};
use crate::variable::{Var, VarGuard};

/// The rough cost of one element's update in CPU cycles, for splitting
/// work over threads: a few multiply-adds; Adam adds a square root and a
/// division.
const GRADIENT_DESCENT_COST: usize = 2;
const MOMENTUM_COST: usize = 5;
const ADAM_COST: usize = 40;

/// `input 1 ('accum')`: input `index` and its name (the training ops have
/// no list inputs, so an input's index is its arg's).
fn describe(ctx: &KernelContext<'_>, index: usize) -> String {
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
fn uninitialized(ctx: &KernelContext<'_>, index: usize, detail: &str) -> Error {
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
fn variables<T: Real, const N: usize>(
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
fn lock_all<const N: usize>(vars: &[Arc<Var>; N]) -> Result<[VarGuard<'_>; N]> {
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

/// The elements of the locked variables of inputs `inputs`, mutably, after
/// checking that each has a value and the shape of the first (the
/// variable) and of `grad` (input `grad_index`).
fn values_mut<'g, T: Real, const N: usize>(
    ctx: &KernelContext<'_>,
    guards: &'g mut [VarGuard<'_>; N],
    inputs: [usize; N],
    grad_index: usize,
) -> Result<[&'g mut [T]; N]> {
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
    let mut values = Vec::with_capacity(N);
    for (guard, &index) in guards.iter_mut().zip(&inputs) {
        let elements = guard
            .elements_mut::<T>()
            .map_err(|e| {
                ctx.error(
                    e.code(),
                    format_args!("{}: {}", describe(ctx, index), e.message()),
                )
            })?
            .ok_or_else(|| uninitialized(ctx, index, ""))?;
        values.push(elements);
    }
    values
        .try_into()
        .map_err(|_| Error::internal("a variable's value went missing"))
}

/// Runs `update` over `slots` (slices of one length, updated in place) and
/// `grad` (of that length too), in blocks over `threads` when the work is
/// worth it: `update` gets matching blocks of each.
fn shard_update<T: Real, const N: usize>(
    threads: &ThreadPool,
    cost_per_element: usize,
    slots: [&mut [T]; N],
    grad: &[T],
    update: impl Fn([&mut [T]; N], &[T]) + Sync,
) {
    let len = grad.len();
    let blocks = threads.num_blocks(len, cost_per_element);
    if blocks <= 1 {
        return update(slots, grad);
    }
    let block = len.div_ceil(blocks);
    let mut parts = slots.map(|slot| slot.chunks_mut(block));
    let mut work: Vec<([&mut [T]; N], &[T])> = grad
        .chunks(block)
        .map(|g| (parts.each_mut().map(|p| p.next().unwrap_or_default()), g))
        .collect();
    threads.shard_slice(
        &mut work,
        cost_per_element.saturating_mul(block),
        |_, items| {
            for (slots, g) in items {
                update(slots.each_mut().map(std::mem::take), g);
            }
        },
    );
}

#[kernel(op = ResourceApplyGradientDescent, types(float, double, half, bfloat16))]
fn resource_apply_gradient_descent<T: Real>(ctx: &mut KernelContext<'_>) -> Result<()> {
    let alpha: T = ctx.input_scalar(1)?;
    let delta = ctx.input_slice::<T>(2)?;
    let vars = variables::<T, 1>(ctx, [0])?;
    let mut guards = lock_all(&vars)?;
    let [var] = values_mut::<T, 1>(ctx, &mut guards, [0], 2)?;
    shard_update(
        ctx.threads(),
        GRADIENT_DESCENT_COST,
        [var],
        delta,
        |[var], delta| math::gradient_descent(var, alpha, delta),
    );
    Ok(())
}

#[kernel(op = ResourceApplyMomentum, types(float, double, half, bfloat16))]
fn resource_apply_momentum<T: Real>(
    ctx: &mut KernelContext<'_>,
    attrs: &ResourceApplyMomentum,
) -> Result<()> {
    let params = MomentumParams {
        lr: ctx.input_scalar(2)?,
        momentum: ctx.input_scalar(4)?,
        nesterov: attrs.use_nesterov,
    };
    let grad = ctx.input_slice::<T>(3)?;
    let vars = variables::<T, 2>(ctx, [0, 1])?;
    let mut guards = lock_all(&vars)?;
    let slots = values_mut::<T, 2>(ctx, &mut guards, [0, 1], 3)?;
    shard_update(
        ctx.threads(),
        MOMENTUM_COST,
        slots,
        grad,
        |[var, accum], grad| math::momentum(var, accum, grad, params),
    );
    Ok(())
}

#[kernel(op = ResourceApplyAdam, types(float, double, half, bfloat16))]
fn resource_apply_adam<T: Real>(
    ctx: &mut KernelContext<'_>,
    attrs: &ResourceApplyAdam,
) -> Result<()> {
    let params = AdamParams {
        beta1_power: ctx.input_scalar(3)?,
        beta2_power: ctx.input_scalar(4)?,
        lr: ctx.input_scalar(5)?,
        beta1: ctx.input_scalar(6)?,
        beta2: ctx.input_scalar(7)?,
        epsilon: ctx.input_scalar(8)?,
        nesterov: attrs.use_nesterov,
    };
    let alpha = params.alpha();
    let grad = ctx.input_slice::<T>(9)?;
    let vars = variables::<T, 3>(ctx, [0, 1, 2])?;
    let mut guards = lock_all(&vars)?;
    let slots = values_mut::<T, 3>(ctx, &mut guards, [0, 1, 2], 9)?;
    shard_update(
        ctx.threads(),
        ADAM_COST,
        slots,
        grad,
        |[var, m, v], grad| math::adam(var, m, v, grad, &params, alpha),
    );
    Ok(())
}
