//! The arithmetic of the ops that gradients are built from: `SqrtGrad`,
//! `RsqrtGrad`, `TanhGrad`, `SigmoidGrad`, `ReciprocalGrad` (each a
//! function of an op's output `y` and the gradient `dy` flowing into it)
//! and `ReluGrad`, over elements, for every device's kernels to share.
//!
//! Each is TensorFlow's CPU formula, with its order of operations, so that
//! `half` and `bfloat16`, which round after every operation, round where
//! TensorFlow's do. Eigen has two forms of each functor
//! (`cwise_ops_gradients.h`): a vectorized one, which computes all but the
//! last few elements of a tensor, and a scalar one for those, which
//! multiply in another order (`(0.5 * dy) / conj(y)` against `(0.5 /
//! conj(y)) * dy`) and so can differ in the last bit. We take the
//! vectorized form, what TensorFlow computes for nearly every element:
//!
//! - `SqrtGrad` is `(0.5 / conj(y)) * dy`, `RsqrtGrad` `(-0.5 * (c * c)) *
//!   (c * dy)` with `c = conj(y)`, `ReciprocalGrad` `-(c * c) * dy`, each
//!   product made 0 where its second factor is 0 (Eigen's `mul_no_nan`), so
//!   that an infinite or zero `y` with a zero `dy` gives 0, not NaN;
//! - `TanhGrad` is `dy * (1 - y * y)` and `SigmoidGrad` `dy * (y * (1 -
//!   y))`, `y` taken as it is (their gradient functions pass `conj(y)`);
//! - `ReluGrad` multiplies the gradient by 1 or 0 (`relu_op_functor.h`), so
//!   a NaN or infinite gradient where the feature is not positive gives NaN,
//!   and a negative one `-0`.

use super::binary::Arithmetic;
use super::unary::Floating;

/// `a * b`, or 0 where `b` is 0 (`-0` too) whatever `a` is (Eigen's
/// `mul_no_nan`).
#[inline]
fn mul_no_nan<T: Floating>(a: T, b: T) -> T {
    let zero = T::constant(0.0);
    if b == zero { zero } else { a.mul(b) }
}

/// `SqrtGrad`: `0.5 / conj(y) * dy`, the gradient of `y = sqrt(x)`; 0 where
/// `dy` is 0.
#[inline]
pub fn sqrt_grad<T: Floating>(y: T, dy: T) -> T {
    mul_no_nan(T::constant(0.5).divide(y.conj()), dy)
}

/// `RsqrtGrad`: `-0.5 * conj(y)^2 * (conj(y) * dy)`, the gradient of `y = 1
/// / sqrt(x)`; 0 where `dy` or `conj(y) * dy` is 0.
#[inline]
pub fn rsqrt_grad<T: Floating>(y: T, dy: T) -> T {
    let c = y.conj();
    mul_no_nan(T::constant(-0.5).mul(c.mul(c)), mul_no_nan(c, dy))
}

/// `ReciprocalGrad`: `-conj(y)^2 * dy`, the gradient of `y = 1 / x`; 0
/// where `dy` is 0.
#[inline]
pub fn reciprocal_grad<T: Floating>(y: T, dy: T) -> T {
    let c = y.conj();
    mul_no_nan(c.mul(c).negate(), dy)
}

/// `TanhGrad`: `dy * (1 - y * y)`, the gradient of `y = tanh(x)`.
#[inline]
pub fn tanh_grad<T: Floating>(y: T, dy: T) -> T {
    dy.mul(T::constant(1.0).sub(y.mul(y)))
}

/// `SigmoidGrad`: `dy * (y * (1 - y))`, the gradient of `y = sigmoid(x)`.
#[inline]
pub fn sigmoid_grad<T: Floating>(y: T, dy: T) -> T {
    dy.mul(y.mul(T::constant(1.0).sub(y)))
}

/// `ReluGrad`: `gradient` where `feature > 0`, else `gradient * 0` (a
/// product, as TensorFlow's: a NaN or infinite gradient gives NaN there,
/// a negative one `-0`); `feature` may be `Relu`'s input or its output.
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
        // TensorFlow (vectorized): SqrtGrad(y=[0, 0], dy=[0, 1]) = [0,
        // inf]; RsqrtGrad(y=[inf, 0], dy=[0, 1]) = [0, 0];
        // ReciprocalGrad(y=[inf, 0], dy=[0, 1]) = [0, -0].
        assert_eq!(sqrt_grad(0.0f32, 0.0), 0.0);
        assert_eq!(sqrt_grad(0.0f32, 1.0), f32::INFINITY);
        assert_eq!(rsqrt_grad(f32::INFINITY, 0.0), 0.0);
        assert!(rsqrt_grad(0.0f32, 1.0).is_sign_positive());
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
            sqrt_grad(f16::from_f32(3.0), f16::from_f32(2.0)),
            (f16::from_f32(0.5) / f16::from_f32(3.0)) * f16::from_f32(2.0)
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
