//! The arithmetic of the training ops over plain slices, for every
//! device's kernels to share: [`gradient_descent`], [`momentum`] and
//! [`adam`], TensorFlow's `training_ops.cc` functors term for term.
//!
//! The element functions are written once over [`Real`]: `float` and
//! `double` as they are; `half` and `bfloat16` through their own operators,
//! which compute each operation in `float` and round the result, as Eigen
//! evaluates them on a CPU, so every intermediate is rounded where
//! TensorFlow's is.

use std::ops::{Add, Div, Mul, Sub};

use op_core::{Element, bf16, f16};

/// The element types the training ops update: `float`, `double`, `half`
/// and `bfloat16` (TensorFlow's CPU kernels' `TF_CALL_FLOAT_TYPES`).
pub trait Real:
    Element
    + Copy
    + Send
    + Sync
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
{
    /// `1`.
    const ONE: Self;
    /// The square root (NaN below 0).
    fn sqrt(self) -> Self;
}

impl Real for f32 {
    const ONE: f32 = 1.0;
    #[inline]
    fn sqrt(self) -> f32 {
        f32::sqrt(self)
    }
}

impl Real for f64 {
    const ONE: f64 = 1.0;
    #[inline]
    fn sqrt(self) -> f64 {
        f64::sqrt(self)
    }
}

macro_rules! real_in_float {
    ($($t:ty),*) => {$(
        impl Real for $t {
            const ONE: $t = <$t>::ONE;
            #[inline]
            fn sqrt(self) -> $t {
                <$t>::from_f32(self.to_f32().sqrt())
            }
        }
    )*};
}

real_in_float!(f16, bf16);

/// `var -= alpha * delta`, elementwise (`ResourceApplyGradientDescent`).
/// The slices have one length.
pub fn gradient_descent<T: Real>(var: &mut [T], alpha: T, delta: &[T]) {
    for (x, &d) in var.iter_mut().zip(delta) {
        *x = *x - d * alpha;
    }
}

/// The scalar inputs of [`momentum`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MomentumParams<T> {
    /// The learning rate.
    pub lr: T,
    /// The accumulator's decay.
    pub momentum: T,
    /// Whether to use Nesterov momentum.
    pub nesterov: bool,
}

/// One momentum step, elementwise (`ResourceApplyMomentum`): `accum =
/// accum * momentum + grad`, then `var -= accum * lr`, or with Nesterov
/// momentum `var -= grad * lr + accum * momentum * lr`. The slices have one
/// length.
pub fn momentum<T: Real>(var: &mut [T], accum: &mut [T], grad: &[T], p: MomentumParams<T>) {
    let MomentumParams {
        lr,
        momentum,
        nesterov,
    } = p;
    for ((x, a), &g) in var.iter_mut().zip(accum.iter_mut()).zip(grad) {
        *a = *a * momentum + g;
        *x = if nesterov {
            *x - (g * lr + *a * momentum * lr)
        } else {
            *x - *a * lr
        };
    }
}

/// The scalar inputs of [`adam`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdamParams<T> {
    /// `beta1` to the power of the step number (from 1).
    pub beta1_power: T,
    /// `beta2` to the power of the step number.
    pub beta2_power: T,
    /// The learning rate.
    pub lr: T,
    /// The first moment's decay.
    pub beta1: T,
    /// The second moment's decay.
    pub beta2: T,
    /// The term that keeps the division finite.
    pub epsilon: T,
    /// Whether to use Nesterov momentum.
    pub nesterov: bool,
}

impl<T: Real> AdamParams<T> {
    /// The step size, `lr * sqrt(1 - beta2_power) / (1 - beta1_power)`:
    /// computed once per update, then shared by every element.
    pub fn alpha(&self) -> T {
        self.lr * (T::ONE - self.beta2_power).sqrt() / (T::ONE - self.beta1_power)
    }
}

/// One Adam step, elementwise (`ResourceApplyAdam`), with `alpha` from
/// [`AdamParams::alpha`]: `m += (grad - m) * (1 - beta1)`, `v += (grad^2 -
/// v) * (1 - beta2)`, then `var -= m * alpha / (sqrt(v) + epsilon)`, or
/// with Nesterov momentum `var -= (grad * (1 - beta1) + beta1 * m) * alpha
/// / (sqrt(v) + epsilon)`. The slices have one length.
pub fn adam<T: Real>(
    var: &mut [T],
    m: &mut [T],
    v: &mut [T],
    grad: &[T],
    p: &AdamParams<T>,
    alpha: T,
) {
    let one_minus_beta1 = T::ONE - p.beta1;
    let one_minus_beta2 = T::ONE - p.beta2;
    let rows = var.iter_mut().zip(m.iter_mut()).zip(v.iter_mut()).zip(grad);
    for (((x, m), v), &g) in rows {
        *m = *m + (g - *m) * one_minus_beta1;
        *v = *v + (g * g - *v) * one_minus_beta2;
        let step = if p.nesterov {
            (g * one_minus_beta1 + p.beta1 * *m) * alpha
        } else {
            *m * alpha
        };
        *x = *x - step / (v.sqrt() + p.epsilon);
    }
}
