//! The arithmetic of the binary ops (`AddV2`, `Sub`, `Mul`, `RealDiv`,
//! `Maximum`, `Minimum`, `Pow`, `SquaredDifference`, `FloorDiv`,
//! `FloorMod`, `DivNoNan`), the comparisons (`Greater`, `Less`, `Equal`)
//! and `AddN`'s sum, over elements and slices, for every device's kernels
//! to share. Broadcasting is not here: the kernels apply these functions
//! through
//! [`KernelContext::broadcast_binary`](op_core::KernelContext::broadcast_binary),
//! and a lite runtime through a [`Broadcast`](op_core::elementwise::Broadcast)
//! plan.
//!
//! As TensorFlow's CPU kernels do:
//!
//! - integers wrap on overflow (`Add`, `Sub`, `Mul`, `Pow`,
//!   `SquaredDifference`, `AddN`);
//! - an integer to a negative integer power is an error ([`POW_ERROR`]);
//! - integer floor division rounds toward negative infinity (`-7 // 2` is
//!   -4) and wraps where it overflows (the most negative value by -1);
//!   its remainder has the divisor's sign (`-7 % 3` is 2, `7 % -3` is
//!   -2); a divisor of 0 is an error ([`DIVISION_BY_ZERO`]);
//! - float floor division is `floor(x / y)`, and the remainder C's
//!   `fmod` moved to the divisor's sign (`-7.5 % 2` is 0.5);
//! - `DivNoNan` is 0 wherever the divisor is 0 (even for 0 / 0 and NaN /
//!   0), else the quotient;
//! - `Maximum` and `Minimum` propagate NaN, and otherwise return the first
//!   operand on a tie (`Maximum(-0.0, 0.0)` is `-0.0`);
//! - `SquaredDifference` of complex numbers is `(x - y) * conj(x - y)`, a
//!   complex number with a zero imaginary part;
//! - `half` and `bfloat16` are computed in `float` and rounded;
//! - comparisons of NaN are false, and `Equal` of NaN too.

use op_core::{Complex, Complex64, Complex128, Element, Error, Result, bf16, f16};

/// What TensorFlow says when an integer is raised to a negative integer
/// power.
pub const POW_ERROR: &str = "Integers to negative integer powers are not allowed";

/// Element types with `+`, `-` and `*`: every number type (integers wrap on
/// overflow).
pub trait Arithmetic: Element + Copy {
    /// `self + other`.
    fn add(self, other: Self) -> Self;
    /// `self - other`.
    fn sub(self, other: Self) -> Self;
    /// `self * other`.
    fn mul(self, other: Self) -> Self;
    /// `(self - other)^2`; for complex numbers `(x - y) * conj(x - y)`.
    #[inline]
    fn squared_difference(self, other: Self) -> Self {
        let d = self.sub(other);
        d.mul(d)
    }
}

macro_rules! arithmetic_wrapping {
    ($($t:ty),*) => {$(
        impl Arithmetic for $t {
            #[inline]
            fn add(self, other: Self) -> Self { self.wrapping_add(other) }
            #[inline]
            fn sub(self, other: Self) -> Self { self.wrapping_sub(other) }
            #[inline]
            fn mul(self, other: Self) -> Self { self.wrapping_mul(other) }
        }
    )*};
}

/// `Arithmetic` by the operators, for floats and complex numbers: the
/// braces hold any further items (complex's own `squared_difference`).
macro_rules! arithmetic_ops {
    ($extra:tt $($t:ty),*) => {$(
        impl Arithmetic for $t {
            #[inline]
            fn add(self, other: Self) -> Self { self + other }
            #[inline]
            fn sub(self, other: Self) -> Self { self - other }
            #[inline]
            fn mul(self, other: Self) -> Self { self * other }
            arithmetic_ops!(@items $extra);
        }
    )*};
    (@items { $($item:tt)* }) => { $($item)* };
}

arithmetic_wrapping!(i8, i16, i32, i64, u8, u16, u32, u64);
arithmetic_ops!({} f32, f64, f16, bf16);
arithmetic_ops!(
    {
        #[inline]
        fn squared_difference(self, other: Self) -> Self {
            let d = self - other;
            d * d.conj()
        }
    }
    Complex64, Complex128
);

/// Element types with `RealDiv`: floats and complex numbers (TensorFlow
/// registers no integer kernel for it).
pub trait Divide: Element + Copy {
    /// `self / other` (IEEE: `1 / 0` is infinity, `0 / 0` NaN).
    fn divide(self, other: Self) -> Self;
}

macro_rules! divide {
    ($($t:ty),*) => {$(
        impl Divide for $t {
            #[inline]
            fn divide(self, other: Self) -> Self { self / other }
        }
    )*};
}

divide!(f32, f64, f16, bf16, Complex64, Complex128);

/// Element types with `Pow`: floats, complex numbers and signed integers.
pub trait Power: Element + Copy {
    /// `self` to the power `exponent`. For integers, a negative exponent is
    /// an `InvalidArgument` error ([`POW_ERROR`]) and the result wraps on
    /// overflow; floats and complex numbers never fail.
    fn power(self, exponent: Self) -> Result<Self>;
}

macro_rules! power_integer {
    ($($t:ty),*) => {$(
        impl Power for $t {
            #[inline]
            fn power(self, exponent: Self) -> Result<Self> {
                if exponent < 0 {
                    return Err(Error::invalid_argument(POW_ERROR));
                }
                // Exponentiation by squaring, wrapping as C++ does in
                // practice (the result is the true power modulo 2^bits).
                let (mut base, mut e, mut result) = (self, exponent, 1 as $t);
                while e > 0 {
                    if e & 1 == 1 {
                        result = result.wrapping_mul(base);
                    }
                    base = base.wrapping_mul(base);
                    e >>= 1;
                }
                Ok(result)
            }
        }
    )*};
}

power_integer!(i8, i16, i32, i64);

impl Power for f32 {
    #[inline]
    fn power(self, exponent: Self) -> Result<Self> {
        Ok(self.powf(exponent))
    }
}

impl Power for f64 {
    #[inline]
    fn power(self, exponent: Self) -> Result<Self> {
        Ok(self.powf(exponent))
    }
}

macro_rules! power_via_f32 {
    ($($t:ty),*) => {$(
        impl Power for $t {
            #[inline]
            fn power(self, exponent: Self) -> Result<Self> {
                Ok(<$t>::from_f32(self.to_f32().powf(exponent.to_f32())))
            }
        }
    )*};
}

power_via_f32!(f16, bf16);

macro_rules! power_complex {
    ($($f:ty),*) => {$(
        impl Power for Complex<$f> {
            #[inline]
            fn power(self, exponent: Self) -> Result<Self> {
                Ok(self.powc(exponent))
            }
        }
    )*};
}

power_complex!(f32, f64);

/// What TensorFlow says when an integer is divided by zero (`FloorDiv`,
/// `FloorMod`).
pub const DIVISION_BY_ZERO: &str = "Integer division by zero";

/// Element types with floor division and its remainder (`FloorDiv`,
/// `FloorMod`): every real type.
pub trait FloorDivide: Element + Copy {
    /// `floor(self / other)`; an error for an integer division by zero.
    fn floor_div(self, other: Self) -> Result<Self>;
    /// `self - floor(self / other) * other`, with `other`'s sign; an error
    /// for an integer division by zero.
    fn floor_mod(self, other: Self) -> Result<Self>;
}

macro_rules! floor_divide_signed {
    ($($t:ty),*) => {$(
        impl FloorDivide for $t {
            #[inline]
            fn floor_div(self, other: Self) -> Result<Self> {
                if other == 0 {
                    return Err(Error::invalid_argument(DIVISION_BY_ZERO));
                }
                let q = self.wrapping_div(other);
                let r = self.wrapping_rem(other);
                Ok(if r != 0 && ((r < 0) != (other < 0)) { q.wrapping_sub(1) } else { q })
            }
            #[inline]
            fn floor_mod(self, other: Self) -> Result<Self> {
                if other == 0 {
                    return Err(Error::invalid_argument(DIVISION_BY_ZERO));
                }
                let r = self.wrapping_rem(other);
                Ok(if r != 0 && ((r < 0) != (other < 0)) { r.wrapping_add(other) } else { r })
            }
        }
    )*};
}

macro_rules! floor_divide_unsigned {
    ($($t:ty),*) => {$(
        impl FloorDivide for $t {
            #[inline]
            fn floor_div(self, other: Self) -> Result<Self> {
                self.checked_div(other).ok_or_else(|| Error::invalid_argument(DIVISION_BY_ZERO))
            }
            #[inline]
            fn floor_mod(self, other: Self) -> Result<Self> {
                self.checked_rem(other).ok_or_else(|| Error::invalid_argument(DIVISION_BY_ZERO))
            }
        }
    )*};
}

macro_rules! floor_divide_float {
    ($($t:ty),*) => {$(
        impl FloorDivide for $t {
            #[inline]
            fn floor_div(self, other: Self) -> Result<Self> {
                Ok((self / other).floor())
            }
            #[inline]
            fn floor_mod(self, other: Self) -> Result<Self> {
                // Rust's `%` on floats is C's `fmod` (the dividend's sign).
                let r = self % other;
                Ok(if r != 0.0 && ((r < 0.0) != (other < 0.0)) { r + other } else { r })
            }
        }
    )*};
}

macro_rules! floor_divide_via_f32 {
    ($($t:ty),*) => {$(
        impl FloorDivide for $t {
            #[inline]
            fn floor_div(self, other: Self) -> Result<Self> {
                self.to_f32().floor_div(other.to_f32()).map(<$t>::from_f32)
            }
            #[inline]
            fn floor_mod(self, other: Self) -> Result<Self> {
                self.to_f32().floor_mod(other.to_f32()).map(<$t>::from_f32)
            }
        }
    )*};
}

floor_divide_signed!(i8, i16, i32, i64);
floor_divide_unsigned!(u8, u16, u32, u64);
floor_divide_float!(f32, f64);
floor_divide_via_f32!(f16, bf16);

/// Element types with `DivNoNan`'s division: those of [`Divide`], whose
/// quotient it is wherever the divisor is not 0.
pub trait DivideNoNan: Divide {
    /// `self / other`, or 0 if `other` is 0 (whatever `self` is, NaN
    /// included).
    #[inline]
    fn div_no_nan(self, other: Self) -> Self {
        let zero = Self::default();
        if other == zero {
            zero
        } else {
            self.divide(other)
        }
    }
}

impl<T: Divide> DivideNoNan for T {}

/// Whether `x` is NaN (`x != x`): false for every type but the floats.
#[inline]
fn is_nan<T: PartialEq>(x: &T) -> bool {
    #[allow(clippy::eq_op)]
    let nan = x != x;
    nan
}

/// `Maximum`: NaN if either is NaN, else the larger, else (a tie) `x`.
#[inline]
pub fn maximum<T: Copy + PartialOrd>(x: T, y: T) -> T {
    if is_nan(&x) {
        x
    } else if is_nan(&y) || x < y {
        y
    } else {
        x
    }
}

/// `Minimum`: NaN if either is NaN, else the smaller, else (a tie) `x`.
#[inline]
pub fn minimum<T: Copy + PartialOrd>(x: T, y: T) -> T {
    if is_nan(&x) {
        x
    } else if is_nan(&y) || y < x {
        y
    } else {
        x
    }
}

/// `acc[i] = acc[i] + x[i]` for every `i` of the shorter: one input of
/// `AddN` added into the running sum.
#[inline]
pub fn add_into<T: Arithmetic>(acc: &mut [T], x: &[T]) {
    for (a, x) in acc.iter_mut().zip(x) {
        *a = a.add(*x);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_powers_wrap_and_refuse_negative_exponents() {
        assert_eq!(2i32.power(10).unwrap(), 1024);
        assert_eq!(2i32.power(40).unwrap(), 0);
        assert_eq!(3i64.power(70).unwrap(), 3i64.wrapping_pow(70));
        assert_eq!((-2i8).power(7).unwrap(), -128);
        assert_eq!(0i16.power(0).unwrap(), 1);
        let err = 2i32.power(-1).unwrap_err();
        assert_eq!(err.code(), op_core::Code::InvalidArgument);
        assert_eq!(err.message(), POW_ERROR);
        assert!(2.0f32.power(-1.0).is_ok());
    }

    #[test]
    fn maximum_and_minimum_propagate_nan_and_keep_the_first_on_ties() {
        assert!(maximum(f32::NAN, 1.0).is_nan());
        assert!(maximum(1.0, f32::NAN).is_nan());
        assert!(minimum(f64::NAN, 1.0).is_nan());
        assert!(minimum(1.0, f64::NAN).is_nan());
        assert!(maximum(-0.0f32, 0.0).is_sign_negative());
        assert!(minimum(0.0f32, -0.0).is_sign_positive());
        assert_eq!(maximum(3u8, 200), 200);
        assert_eq!(minimum(-3i64, 2), -3);
        assert!(maximum(bf16::NAN, bf16::ONE).is_nan());
    }

    #[test]
    fn div_no_nan_of_sixteen_bit_floats_is_the_float_quotient_rounded() {
        macro_rules! check_every_dividend {
            ($t:ty) => {
                for bits in 0..=u16::MAX {
                    for y in [3.0f32, -0.1, 1e-3, 65504.0, 0.0, -0.0] {
                        let (x, y) = (<$t>::from_bits(bits), <$t>::from_f32(y));
                        let want = if y.to_f32() == 0.0 {
                            <$t>::ZERO
                        } else {
                            <$t>::from_f32(x.to_f32() / y.to_f32())
                        };
                        let got = x.div_no_nan(y);
                        let same =
                            got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan());
                        assert!(same, "{x} / {y}: {got} vs {want}");
                    }
                }
            };
        }
        check_every_dividend!(f16);
        check_every_dividend!(bf16);
    }

    #[test]
    fn squared_difference_of_complex_numbers_is_real() {
        let d = Complex64::new(1.0, 2.0).squared_difference(Complex64::new(0.0, 0.0));
        assert_eq!(d, Complex64::new(5.0, 0.0));
        assert_eq!(3i32.squared_difference(-4), 49);
        assert_eq!(
            i32::MIN.squared_difference(1),
            i32::MAX.wrapping_mul(i32::MAX)
        );
    }
}
