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

use op_core::threads::ThreadPool;
use op_core::{Error, KernelContext, Result, kernel};

use super::math::{self, MomentumParams, Real};
use super::ops::{ResourceApplyAdam, ResourceApplyGradientDescent, ResourceApplyMomentum};
use super::update::{adam_params, check_shapes, describe, lock_all, uninitialized, variables};
use crate::variable::VarGuard;

/// The rough cost of one element's update in CPU cycles, for splitting
/// work over threads: a few multiply-adds; Adam adds a square root and a
/// division.
const GRADIENT_DESCENT_COST: usize = 2;
const MOMENTUM_COST: usize = 5;
const ADAM_COST: usize = 40;

/// The elements of the locked variables of inputs `inputs`, mutably, after
/// checking that each has a value and the shape of the first (the
/// variable) and of `grad` (input `grad_index`).
fn values_mut<'g, T: Real, const N: usize>(
    ctx: &KernelContext<'_>,
    guards: &'g mut [VarGuard<'_>; N],
    inputs: [usize; N],
    grad_index: usize,
) -> Result<[&'g mut [T]; N]> {
    check_shapes(ctx, guards, inputs, grad_index)?;
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
    let params = adam_params::<T>(ctx, attrs)?;
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
