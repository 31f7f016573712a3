//! The arithmetic of `Range`, `FloorDiv`, `FloorMod` and `DivNoNan`, over elements
//! and slices, for every device's kernels to share, with TensorFlow's CPU
//! results:
//!
//! - integer floor division rounds toward negative infinity (`-7 // 2` is
//!   -4) and wraps where it overflows (the most negative value by -1);
//!   its remainder has the divisor's sign (`-7 % 3` is 2, `7 % -3` is
//!   -2); a divisor of 0 is an error ([`DIVISION_BY_ZERO`]);
//! - float floor division is `floor(x / y)`, and the remainder C's
//!   `fmod` moved to the divisor's sign (`-7.5 % 2` is 0.5); `half` and
//!   `bfloat16` are computed in `float`;
//! - a range's elements are `start + i * delta`, computed in its type;
//! - `DivNoNan` is 0 wherever the divisor is 0 (even for 0 / 0 and NaN /
//!   0), else the quotient.

use op_core::{Complex64, Complex128, Element, Error, Result, bf16, f16};

/// What TensorFlow says when an integer is divided by zero.
pub const DIVISION_BY_ZERO: &str = "Integer division by zero";

/// Element types with floor division and its remainder.
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

/// Element types a `Range` can have.
pub trait RangeElement: Element + Copy {
    /// The number of elements of the range from `start` toward `limit` by
    /// `delta`, with TensorFlow's checks and words: `delta` is not 0 and
    /// leads from `start` toward `limit`, and the count fits.
    fn range_len(start: Self, limit: Self, delta: Self) -> Result<usize>;
    /// Element `i` of the range: `start + i * delta`, in this type.
    fn nth(start: Self, delta: Self, i: usize) -> Self;
}

/// The checks every range makes, in TensorFlow's words.
fn check_range<T: PartialOrd + Default + std::fmt::Display>(
    start: T,
    limit: T,
    delta: T,
) -> Result<()> {
    let zero = T::default();
    if start > limit && delta > zero {
        return Err(Error::invalid_argument(format!(
            "Requires start <= limit when delta > 0: {start}/{limit}"
        )));
    }
    if start < limit && delta < zero {
        return Err(Error::invalid_argument(format!(
            "Requires start >= limit when delta < 0: {start}/{limit}"
        )));
    }
    if delta == zero {
        return Err(Error::invalid_argument(format!(
            "Requires delta != 0: {delta}"
        )));
    }
    Ok(())
}

/// The error for a range longer than memory can hold.
fn too_long() -> Error {
    Error::invalid_argument("Requires the range's size to fit in memory")
}

macro_rules! range_int {
    ($($t:ty),*) => {$(
        impl RangeElement for $t {
            fn range_len(start: Self, limit: Self, delta: Self) -> Result<usize> {
                check_range(start, limit, delta)?;
                // In 128 bits: the difference of two values of the type fits.
                let span = (i128::from(limit) - i128::from(start)).abs();
                let step = i128::from(delta).abs();
                usize::try_from((span + step - 1) / step).map_err(|_| too_long())
            }
            #[inline]
            fn nth(start: Self, delta: Self, i: usize) -> Self {
                // Within the range, so no overflow: `start + i * delta` lies
                // before `limit`.
                (i128::from(start) + i as i128 * i128::from(delta)) as $t
            }
        }
    )*};
}

macro_rules! range_float {
    ($($t:ty),*) => {$(
        impl RangeElement for $t {
            fn range_len(start: Self, limit: Self, delta: Self) -> Result<usize> {
                check_range(start, limit, delta)?;
                let size = ((limit - start) / delta).abs().ceil();
                // NaN (an infinite bound) and sizes past memory are errors.
                if !(size >= 0.0 && size < usize::MAX as $t) {
                    return Err(too_long());
                }
                Ok(size as usize)
            }
            #[inline]
            fn nth(start: Self, delta: Self, i: usize) -> Self {
                start + i as $t * delta
            }
        }
    )*};
}

range_int!(i32, i64);
range_float!(f32, f64);

/// Writes elements `offset..offset + output.len()` of the range from
/// `start` by `delta`.
///
/// ```
/// use op_kernels::math_extra::range_into;
/// let mut out = [0; 3];
/// range_into(5, -2, 0, &mut out);
/// assert_eq!(out, [5, 3, 1]);
/// ```
pub fn range_into<T: RangeElement>(start: T, delta: T, offset: usize, output: &mut [T]) {
    for (i, o) in output.iter_mut().enumerate() {
        *o = T::nth(start, delta, offset + i);
    }
}

/// Element types with `DivNoNan`'s division: 0 where the divisor is 0.
pub trait DivideNoNan: Element + Copy {
    /// `self / other`, or 0 if `other` is 0 (whatever `self` is, NaN
    /// included).
    fn div_no_nan(self, other: Self) -> Self;
}

macro_rules! divide_no_nan {
    ($($t:ty),*) => {$(
        impl DivideNoNan for $t {
            #[inline]
            fn div_no_nan(self, other: Self) -> Self {
                let zero = <$t>::default();
                if other == zero { zero } else { self / other }
            }
        }
    )*};
}

divide_no_nan!(f32, f64, Complex64, Complex128);

macro_rules! divide_no_nan_via_f32 {
    ($($t:ty),*) => {$(
        impl DivideNoNan for $t {
            #[inline]
            fn div_no_nan(self, other: Self) -> Self {
                <$t>::from_f32(self.to_f32().div_no_nan(other.to_f32()))
            }
        }
    )*};
}

divide_no_nan_via_f32!(f16, bf16);
