//! `Cast`'s conversions between element types: [`CastSource::cast`], for
//! every pair of `float`, `double`, `half`, `bfloat16`, the signed and
//! unsigned integers, `bool`, `complex64` and `complex128`, and the slice
//! function [`cast_into`] that every device's kernel shares.
//!
//! What each conversion does, and where it departs from TensorFlow (a
//! float out of an integer type's range, `Truncate` from `double` to
//! `complex64`), is in the [family docs](crate::math#conversions).

use op_core::{Complex, Complex64, Complex128, Element, bf16, f16};

/// A type that `Cast` converts to, from each kind of source value.
pub trait CastTarget: Element + Copy {
    /// From a signed integer (every signed source widens to `i64` first,
    /// which changes no result).
    fn from_i64(v: i64) -> Self;
    /// From an unsigned integer (widened to `u64` first).
    fn from_u64(v: u64) -> Self;
    /// From a `float` (and `half` and `bfloat16`, widened exactly).
    fn from_f32(v: f32) -> Self;
    /// From a `double`.
    fn from_f64(v: f64) -> Self;
    /// From a `bool`: 1 or 0.
    fn from_bool(v: bool) -> Self;
    /// From a `complex64`: its real part, for the real types.
    #[inline]
    fn from_complex64(v: Complex64) -> Self {
        Self::from_f32(v.re)
    }
    /// From a `complex128`: its real part, for the real types.
    #[inline]
    fn from_complex128(v: Complex128) -> Self {
        Self::from_f64(v.re)
    }
}

/// A type that `Cast` converts from.
pub trait CastSource: Element + Copy {
    /// `self` as a `D` (see the [family docs](crate::math#conversions)).
    fn cast<D: CastTarget>(self) -> D;
}

/// Integers and `float`, `double`: Rust's `as` is C++'s `static_cast`
/// where C++ defines it (and saturates where it does not).
macro_rules! target_primitive {
    ($($t:ty),*) => {$(
        impl CastTarget for $t {
            #[inline]
            fn from_i64(v: i64) -> Self { v as $t }
            #[inline]
            fn from_u64(v: u64) -> Self { v as $t }
            #[inline]
            fn from_f32(v: f32) -> Self { v as $t }
            #[inline]
            fn from_f64(v: f64) -> Self { v as $t }
            #[inline]
            fn from_bool(v: bool) -> Self { u8::from(v) as $t }
        }
    )*};
}

/// 16-bit floats: every value goes through `float`, as Eigen converts.
macro_rules! target_half {
    ($($t:ty),*) => {$(
        impl CastTarget for $t {
            #[inline]
            fn from_i64(v: i64) -> Self { <$t>::from_f32(v as f32) }
            #[inline]
            fn from_u64(v: u64) -> Self { <$t>::from_f32(v as f32) }
            #[inline]
            fn from_f32(v: f32) -> Self { <$t>::from_f32(v) }
            #[inline]
            fn from_f64(v: f64) -> Self { <$t>::from_f32(v as f32) }
            #[inline]
            fn from_bool(v: bool) -> Self { if v { <$t>::ONE } else { <$t>::ZERO } }
        }
    )*};
}

macro_rules! target_complex {
    ($($f:ty),*) => {$(
        impl CastTarget for Complex<$f> {
            #[inline]
            fn from_i64(v: i64) -> Self { Complex::new(v as $f, 0.0) }
            #[inline]
            fn from_u64(v: u64) -> Self { Complex::new(v as $f, 0.0) }
            #[inline]
            fn from_f32(v: f32) -> Self { Complex::new(v as $f, 0.0) }
            #[inline]
            fn from_f64(v: f64) -> Self { Complex::new(v as $f, 0.0) }
            #[inline]
            fn from_bool(v: bool) -> Self { Complex::new(u8::from(v) as $f, 0.0) }
            #[inline]
            fn from_complex64(v: Complex64) -> Self { Complex::new(v.re as $f, v.im as $f) }
            #[inline]
            fn from_complex128(v: Complex128) -> Self { Complex::new(v.re as $f, v.im as $f) }
        }
    )*};
}

target_primitive!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);
target_half!(f16, bf16);
target_complex!(f32, f64);

impl CastTarget for bool {
    #[inline]
    fn from_i64(v: i64) -> Self {
        v != 0
    }
    #[inline]
    fn from_u64(v: u64) -> Self {
        v != 0
    }
    #[inline]
    fn from_f32(v: f32) -> Self {
        v != 0.0
    }
    #[inline]
    fn from_f64(v: f64) -> Self {
        v != 0.0
    }
    #[inline]
    fn from_bool(v: bool) -> Self {
        v
    }
}

macro_rules! source {
    ($via:ident: $($t:ty),*) => {$(
        impl CastSource for $t {
            #[inline]
            fn cast<D: CastTarget>(self) -> D { source!(@convert $via, self) }
        }
    )*};
    (@convert signed, $v:expr) => { D::from_i64($v as i64) };
    (@convert unsigned, $v:expr) => { D::from_u64($v as u64) };
    (@convert float, $v:expr) => { D::from_f32($v) };
    (@convert double, $v:expr) => { D::from_f64($v) };
    (@convert half, $v:expr) => { D::from_f32($v.to_f32()) };
    (@convert boolean, $v:expr) => { D::from_bool($v) };
    (@convert complex64, $v:expr) => { D::from_complex64($v) };
    (@convert complex128, $v:expr) => { D::from_complex128($v) };
}

source!(signed: i8, i16, i32, i64);
source!(unsigned: u8, u16, u32, u64);
source!(float: f32);
source!(double: f64);
source!(half: f16, bf16);
source!(boolean: bool);
source!(complex64: Complex64);
source!(complex128: Complex128);

/// `output[i] = input[i] as D` for every `i` of the shorter.
#[inline]
pub fn cast_into<S: CastSource, D: CastTarget>(input: &[S], output: &mut [D]) {
    op_core::elementwise::map_into(input, output, |x| x.cast());
}

/// `x` with the low bits of its mantissa cleared so that it keeps `bits`
/// significant bits (the hidden one included): what TensorFlow's
/// `Truncate` does before narrowing a `double` to a type of `bits` mantissa
/// bits (24 for `float`, 11 for `half`). NaN is left as it is.
///
/// ```
/// use op_kernels::math::truncate_mantissa;
/// let x = 1.9999999999f64;
/// assert_eq!(truncate_mantissa(x, 24) as f32, 1.9999999);
/// assert_eq!(x as f32, 2.0);
/// ```
#[inline]
pub fn truncate_mantissa(x: f64, bits: u32) -> f64 {
    if x.is_nan() {
        return x;
    }
    let cleared = f64::MANTISSA_DIGITS.saturating_sub(bits).min(63);
    f64::from_bits(x.to_bits() & (u64::MAX << cleared))
}

/// The sources whose mantissas `Truncate` cuts: `double` and
/// `complex128` (both parts).
pub trait TruncateMantissa: CastSource {
    /// `self` with every mantissa cut to `bits` significant bits (see
    /// [`truncate_mantissa`]).
    fn truncate_mantissa(self, bits: u32) -> Self;
}

impl TruncateMantissa for f64 {
    #[inline]
    fn truncate_mantissa(self, bits: u32) -> Self {
        truncate_mantissa(self, bits)
    }
}

impl TruncateMantissa for Complex128 {
    #[inline]
    fn truncate_mantissa(self, bits: u32) -> Self {
        Complex::new(
            truncate_mantissa(self.re, bits),
            truncate_mantissa(self.im, bits),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_wrap_and_floats_truncate_toward_zero_saturating() {
        assert_eq!(((1i64 << 40) + 1).cast::<i32>(), 1);
        assert_eq!((-1i64).cast::<u8>(), 255);
        assert_eq!(300u16.cast::<i8>(), 44);
        assert_eq!(2.7f32.cast::<i32>(), 2);
        assert_eq!((-2.7f64).cast::<i64>(), -2);
        assert_eq!(1e10f32.cast::<i32>(), i32::MAX);
        assert_eq!((-1e10f64).cast::<i32>(), i32::MIN);
        assert_eq!(f32::NAN.cast::<i64>(), 0);
        assert_eq!(300.0f64.cast::<i8>(), 127);
        assert_eq!((-1.0f32).cast::<u8>(), 0);
        assert_eq!(f16::from_f32(-2.5).cast::<i16>(), -2);
    }

    #[test]
    fn floats_round_to_nearest_even_and_sixteen_bits_go_through_float() {
        assert_eq!(16_777_217i64.cast::<f32>(), 16_777_216.0);
        assert_eq!(16_777_217i64.cast::<bf16>(), bf16::from_f32(16_777_216.0));
        assert_eq!(65_520.0f64.cast::<f16>(), f16::INFINITY);
        assert_eq!(2049.0f64.cast::<f16>(), f16::from_f32(2048.0));
        assert_eq!(1e300f64.cast::<f32>(), f32::INFINITY);
        assert_eq!(bf16::from_f32(3.0).cast::<f16>(), f16::from_f32(3.0));
    }

    #[test]
    fn bools_and_complex_numbers() {
        assert!(f32::NAN.cast::<bool>());
        assert!(!(-0.0f64).cast::<bool>());
        assert_eq!(true.cast::<f16>(), f16::ONE);
        assert_eq!(true.cast::<Complex64>(), Complex64::new(1.0, 0.0));
        let z = Complex64::new(2.7, -3.0);
        assert_eq!(z.cast::<i32>(), 2);
        assert!(!Complex64::new(0.0, 1.0).cast::<bool>());
        assert_eq!(z.cast::<Complex128>(), Complex128::new(2.7f32 as f64, -3.0));
        assert_eq!(5u8.cast::<Complex128>(), Complex128::new(5.0, 0.0));
    }

    #[test]
    fn truncation_clears_the_bits_the_target_cannot_hold() {
        let x = 1.9999999999f64;
        assert_eq!(truncate_mantissa(x, 24) as f32, 1.9999999);
        assert_eq!(
            f16::from_f32(truncate_mantissa(x, 11) as f32),
            f16::from_f32(1.999)
        );
        assert!(truncate_mantissa(f64::NAN, 24).is_nan());
        assert_eq!(truncate_mantissa(-3.0000001, 24) as f32, -3.0);
    }
}
