//! The arithmetic of the ops that gradients are built from: `SqrtGrad`,
//! `RsqrtGrad`, `TanhGrad`, `SigmoidGrad`, `ReciprocalGrad` (each a
//! function of an op's output `y` and the gradient `dy` flowing into it)
//! and `ReluGrad`, over elements, for every device's kernels to share.
//!
//! Each is TensorFlow's CPU formula (Eigen's scalar functors in
//! `cwise_ops_gradients.h`, `relu_op_functor.h`), with its order of
//! operations, so that `half` and `bfloat16`, which round after every
//! operation, round where TensorFlow's do:
//!
//! - `SqrtGrad`, `RsqrtGrad` and `ReciprocalGrad` give 0 where `dy` is 0,
//!   whatever `y` is (an infinite or zero `y` does not make a NaN);
//! - `y` is conjugated where TensorFlow's functor conjugates it (`SqrtGrad`,
//!   `RsqrtGrad`, `ReciprocalGrad`); `TanhGrad` and `SigmoidGrad` take it as
//!   it is (their gradient functions pass `conj(y)`);
//! - `ReluGrad` multiplies `dy` by 1 or 0, so a NaN or infinite gradient
//!   where the feature is not positive gives NaN, and a negative one `-0`.
//!
//! TensorFlow's vectorized path computes `SqrtGrad` as `(0.5 / conj(y)) *
//! dy` rather than `(0.5 * dy) / conj(y)`, so results can differ from
//! TensorFlow's in the last bit.

use super::binary::Arithmetic;
use super::unary::Floating;

/// Whether `x` is zero (`-0` too).
#[inline]
fn is_zero<T: Floating>(x: T) -> bool {
    x == T::constant(0.0)
}

/// `SqrtGrad`: `0.5 * dy / conj(y)`, the gradient of `y = sqrt(x)`; 0 where
/// `dy` is 0.
#[inline]
pub fn sqrt_grad<T: Floating>(y: T, dy: T) -> T {
    if is_zero(dy) {
        return T::constant(0.0);
    }
    T::constant(0.5).mul(dy).divide(y.conj())
}

/// `RsqrtGrad`: `-0.5 * dy * conj(y)^3`, the gradient of `y = 1 / sqrt(x)`;
/// 0 where `dy` is 0.
#[inline]
pub fn rsqrt_grad<T: Floating>(y: T, dy: T) -> T {
    if is_zero(dy) {
        return T::constant(0.0);
    }
    let c = y.conj();
    T::constant(-0.5).mul(dy.mul(c)).mul(c.mul(c))
}

/// `ReciprocalGrad`: `-conj(y)^2 * dy`, the gradient of `y = 1 / x`; 0
/// where `dy` is 0.
#[inline]
pub fn reciprocal_grad<T: Floating>(y: T, dy: T) -> T {
    if is_zero(dy) {
        return T::constant(0.0);
    }
    let c = y.conj();
    c.negate().mul(c).mul(dy)
}

/// `TanhGrad`: `dy * (1 - y * y)`, the gradient of `y = tanh(x)`.
#[inline]
pub fn tanh_grad<T: Floating>(y: T, dy: T) -> T {
    dy.mul(T::constant(1.0).sub(y.mul(y)))
}

/// `SigmoidGrad`: `dy * y * (1 - y)`, the gradient of `y = sigmoid(x)`.
#[inline]
pub fn sigmoid_grad<T: Floating>(y: T, dy: T) -> T {
    dy.mul(y).mul(T::constant(1.0).sub(y))
}

/// `ReluGrad`: `gradient` where `feature > 0`, else `gradient * 0` (see
/// the [module docs](self) for why a product); `feature` may be `Relu`'s
/// input or its output.
#[inline]
pub fn relu_grad<T: Arithmetic + PartialOrd>(gradient: T, feature: T) -> T {
    if feature > T::default() {
        gradient
    } else {
        gradient.mul(T::default())
    }
}

#[cfg(test)]
mod tests {
    use op_core::{Complex64, bf16, f16};

    use super::*;

    #[test]
    fn a_zero_gradient_gives_zero_even_where_y_is_zero_or_infinite() {
        // TensorFlow: SqrtGrad(y=[0, 0], dy=[0, 1]) = [0, inf];
        // RsqrtGrad(y=[inf, 0], dy=[0, 1]) = [0, -0];
        // ReciprocalGrad(y=[inf, 0], dy=[0, 1]) = [0, -0].
        assert_eq!(sqrt_grad(0.0f32, 0.0), 0.0);
        assert_eq!(sqrt_grad(0.0f32, 1.0), f32::INFINITY);
        assert_eq!(rsqrt_grad(f32::INFINITY, 0.0), 0.0);
        assert!(rsqrt_grad(0.0f32, 1.0).is_sign_negative());
        assert_eq!(reciprocal_grad(f64::INFINITY, 0.0), 0.0);
        assert!(reciprocal_grad(0.0f64, 1.0).is_sign_negative());
        assert!(tanh_grad(f32::INFINITY, 0.0).is_nan());
    }

    #[test]
    fn the_formulas_are_tensorflows() {
        assert_eq!(sqrt_grad(2.0f64, 3.0), 0.75);
        assert_eq!(rsqrt_grad(2.0f64, 3.0), -12.0);
        assert_eq!(reciprocal_grad(2.0f64, 3.0), -12.0);
        assert_eq!(tanh_grad(0.5f64, 2.0), 1.5);
        assert_eq!(sigmoid_grad(0.25f64, 2.0), 0.375);
        assert_eq!(
            sqrt_grad(f16::from_f32(3.0), f16::from_f32(1.0)),
            f16::from_f32(0.5) / f16::from_f32(3.0)
        );
        assert_eq!(
            tanh_grad(bf16::from_f32(0.5), bf16::ONE),
            bf16::from_f32(0.75)
        );
        // Complex: conj(y) where the functor conjugates.
        let (y, dy) = (Complex64::new(1.0, 1.0), Complex64::new(2.0, 0.0));
        assert_eq!(sqrt_grad(y, dy), Complex64::new(0.5, 0.5));
        assert_eq!(reciprocal_grad(y, dy), Complex64::new(0.0, 4.0));
        assert_eq!(tanh_grad(y, dy), Complex64::new(2.0, -4.0));
    }

    #[test]
    fn relu_grad_multiplies_by_zero_where_the_feature_is_not_positive() {
        // TensorFlow: ReluGrad([-3, nan, 2, inf], [-1, -1, 0, 0]) =
        // [-0, nan, 0, nan].
        assert!(relu_grad(-3.0f32, -1.0).is_sign_negative());
        assert!(relu_grad(f32::NAN, -1.0).is_nan());
        assert_eq!(relu_grad(2.0f32, 0.0), 0.0);
        assert!(relu_grad(f32::INFINITY, 0.0).is_nan());
        assert_eq!(relu_grad(5.0f32, 1e-30), 5.0);
        assert_eq!(relu_grad(7i32, 3), 7);
        assert_eq!(relu_grad(7u8, 0), 0);
    }
}
