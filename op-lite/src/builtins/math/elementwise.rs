//! The elementwise builtins: the unary ops (SQUARE, SQRT, RSQRT, EXP, LOG,
//! SIN, COS, ABS, NEG, TANH, LOGISTIC, RELU, RELU6, LEAKY_RELU, GELU,
//! HARD_SWISH) and the binary ops with NumPy broadcasting (ADD, SUB, MUL,
//! DIV, MAXIMUM, MINIMUM, SQUARED_DIFFERENCE), whose fused activation is an
//! output clamp.
//!
//! Semantics are TensorFlow Lite's reference kernels:
//! `tensorflow/lite/kernels/internal/reference/` `elementwise.h`,
//! `logistic.h` (its cutoffs), `gelu.h` (exact through `erfc`, approximate
//! through `tanh`), `hard_swish.h`, `leaky_relu.h`, `add.h`, `sub.h`,
//! `mul.h`, `div.h`, `maximum_minimum.h`, `squared_difference.h`, and
//! `tensorflow/lite/kernels/kernel_util.cc` (`CalculateShapeForBroadcast`).
//! Comparisons follow C++'s (`a > b ? a : b`), so where NaN goes matches
//! TensorFlow Lite, not Rust's `f32::max`.
//!
//! Broadcasting takes inputs of rank at most [`MAX_RANK`] (6), as
//! TensorFlow Lite's broadcast kernels do.

use op_core::{Error, Result};

use super::common::{ActivationRange, MAX_RANK, Number, check_len, extend, strides};
use super::simd::{MulAdd, WithMulAdd, dispatch};
use crate::model::Activation;

/// A unary builtin, with its options.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum UnaryOp {
    /// `SQUARE`: `x * x`.
    Square,
    /// `SQRT`.
    Sqrt,
    /// `RSQRT`: `1 / sqrt(x)`.
    Rsqrt,
    /// `EXP`.
    Exp,
    /// `LOG`: the natural logarithm.
    Log,
    /// `SIN`.
    Sin,
    /// `COS`.
    Cos,
    /// `ABS` (float32, int32, int64; integers wrap at the minimum).
    Abs,
    /// `NEG` (float32, int32, int64; integers wrap at the minimum).
    Neg,
    /// `TANH`.
    Tanh,
    /// `LOGISTIC`: `1 / (1 + exp(-x))`, with TensorFlow Lite's cutoffs
    /// (`1` above 16.619047, `exp(x)` below -9).
    Logistic,
    /// `RELU`: `max(x, 0)`.
    Relu,
    /// `RELU6`: `min(max(x, 0), 6)`.
    Relu6,
    /// `LEAKY_RELU`: `x > 0 ? x : alpha * x`.
    LeakyRelu {
        /// The slope below zero.
        alpha: f32,
    },
    /// `GELU`: `x * Φ(x)`, exactly (`0.5 x erfc(-x / √2)`) or through
    /// TensorFlow's tanh approximation.
    Gelu {
        /// Use the tanh approximation.
        approximate: bool,
    },
    /// `HARD_SWISH`: `x * relu6(x + 3) / 6`.
    HardSwish,
}

/// The output shape of a unary op: the input's.
pub fn unary_shape(input: &[usize]) -> Result<Vec<usize>> {
    super::num_elements(input)?;
    Ok(input.to_vec())
}

/// The element types a unary op takes: `f32` for every op, `i32` and `i64`
/// for [`UnaryOp::Abs`] and [`UnaryOp::Neg`].
pub trait UnaryElement: Copy {
    /// Applies `op` to every element of `input`, into `output` (same
    /// length), or fails when `op` is not defined for the type.
    fn unary(op: UnaryOp, input: &[Self], output: &mut [Self]) -> Result<()>;
}

/// Applies the unary builtin `op` elementwise: `output[i] = op(input[i])`.
///
/// ```
/// use op_lite::builtins::math::elementwise::{UnaryOp, unary};
/// let mut out = [0.0f32; 3];
/// unary(UnaryOp::Relu6, &[-1.0f32, 2.5, 9.0], &mut out).unwrap();
/// assert_eq!(out, [0.0, 2.5, 6.0]);
/// ```
pub fn unary<T: UnaryElement>(op: UnaryOp, input: &[T], output: &mut [T]) -> Result<()> {
    if input.len() != output.len() {
        return Err(Error::invalid_argument(format!(
            "{op:?}: the output has {} elements, the input {}",
            output.len(),
            input.len()
        )));
    }
    T::unary(op, input, output)
}

/// `output[i] = f(input[i])`, one loop per op so that each vectorizes.
#[inline(always)]
fn map<T: Copy>(input: &[T], output: &mut [T], f: impl Fn(T) -> T) {
    for (o, &x) in output.iter_mut().zip(input) {
        *o = f(x);
    }
}

/// [`map`] compiled for AVX2 where the processor has it (eight lanes a
/// vector instead of SSE's four), for the ops whose element function is
/// long enough for that to matter (a polynomial, a division): the same
/// arithmetic either way (no fused multiply-adds), so the same results.
#[inline(always)]
fn map_wide(input: &[f32], output: &mut [f32], f: impl Fn(f32) -> f32) {
    struct Map<'a, F> {
        input: &'a [f32],
        output: &'a mut [f32],
        f: F,
    }
    impl<F: Fn(f32) -> f32> WithMulAdd for Map<'_, F> {
        type Output = ();
        #[inline(always)]
        fn run<A: MulAdd>(self, _: A) {
            map(self.input, self.output, self.f);
        }
    }
    dispatch(Map { input, output, f });
}

/// sqrt(2 / pi), as gelu.h's `kSqrt2dPi` (`M_2_SQRTPI * M_SQRT1_2`).
const SQRT_2_OVER_PI: f32 =
    (std::f64::consts::FRAC_2_SQRT_PI * std::f64::consts::FRAC_1_SQRT_2) as f32;

/// `tanh(x)` as Eigen's `generic_fast_tanh_float` computes it (what
/// TensorFlow Lite's optimized float TANH runs): an odd rational function
/// of degree 13 over 6 on `x` clamped to ±7.998811, and `x` itself where
/// `|x| < 0.0004` (±1 past 9). Within 5e-7, relative, of `tanh` (a dense grid below),
/// NaN stays NaN, and no libm call: the loop over a tensor vectorizes
/// (`f32::tanh` cost 12 ns an element, most of the mlp model's TANH node).
#[inline(always)]
fn tanh(x: f32) -> f32 {
    const CLAMP: f32 = 7.998_811_7;
    const A: [f32; 7] = [
        4.893_524_6e-3,
        6.372_619_3e-4,
        1.485_722_4e-5,
        5.122_297e-8,
        -8.604_672e-11,
        2.000_188e-13,
        -2.760_768_5e-16,
    ];
    const B: [f32; 4] = [4.893_525e-3, 2.268_434_6e-3, 1.185_347_1e-4, 1.198_258_4e-6];
    let c = x.clamp(-CLAMP, CLAMP);
    let x2 = c * c;
    let p = A.iter().rev().fold(0.0, |acc, &a| acc * x2 + a) * c;
    let q = B.iter().rev().fold(0.0, |acc, &b| acc * x2 + b);
    // Past 9, tanh rounds to ±1 in f32: exactly, as libm's.
    if x.abs() < 0.0004 {
        x
    } else if x.abs() > 9.0 {
        1.0f32.copysign(x)
    } else {
        p / q
    }
}

/// `exp(x)` without libm, branch-free so that the loops over a tensor
/// vectorize (libm's `expf`, a call per element, was most of the mlp
/// model's LOGISTIC and GELU nodes): Cephes' `expf` (`x = n ln 2 + r`,
/// `|r| <= ln 2 / 2`, a degree-7 polynomial for `exp(r)`), within 2 ulp
/// of `exp` (a dense grid below). `2^n` is applied in two halves, so that
/// results below `f32::MIN_POSITIVE` (`x` below about -87.3) come out
/// subnormal, rounded once, down to 0 below about -103.9; above about
/// 88.72 the result is infinite; NaN stays NaN.
#[inline(always)]
fn exp(x: f32) -> f32 {
    // 1.5 * 2^23: adding it rounds a float of magnitude below 2^22 to an
    // integer, which its low mantissa bits then hold.
    const ROUND: f32 = 12_582_912.0;
    // ln 2 in two parts, the first with few mantissa bits so that n times
    // it is exact.
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    const P: [f32; 6] = [
        1.987_569_1e-4,
        1.398_199_9e-3,
        8.333_452e-3,
        4.166_579_6e-2,
        0.166_666_65,
        0.5,
    ];
    // Past these the result is 0 or infinite whatever the rounding; the
    // clamp keeps NaN.
    let x = x.clamp(-104.0, 89.0);
    let t = x * std::f32::consts::LOG2_E + ROUND;
    let n = t - ROUND;
    let r = (x - n * LN2_HI) - n * LN2_LO;
    let p = P[1..].iter().fold(P[0], |acc, &c| acc * r + c);
    let y = p * (r * r) + r + 1.0;
    // n is in -150..=129 (any value for NaN, whose product stays NaN).
    let n = (t.to_bits() as i32).wrapping_sub(ROUND.to_bits() as i32);
    let half = n >> 1;
    let pow2 = |e: i32| f32::from_bits((e.wrapping_add(127) << 23) as u32);
    y * pow2(half) * pow2(n.wrapping_sub(half))
}

/// `erfc(x)` without libm, branch-free: Numerical Recipes' `erfcc`
/// (Chebyshev fit, relative error below 1.2e-7 for `x >= 0` in exact
/// arithmetic), with `erfc(-x) = 2 - erfc(x)`. Within 3e-6, relative,
/// of `erfc` over [-4, 4] (a dense grid below); past 4 the rounding of
/// `x * x` grows the error, to 1e-5 at 9, where GELU's results (`x` times
/// this, over 2) are below 1e-18.
#[inline(always)]
fn erfc(x: f32) -> f32 {
    const C: [f32; 10] = [
        0.170_872_77,
        -0.822_152_2,
        1.488_515_9,
        -1.135_204,
        0.278_868_07,
        -0.186_288_06,
        0.096_784_18,
        0.374_091_96,
        1.000_023_7,
        -1.265_512_2,
    ];
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = C[1..].iter().fold(C[0], |acc, &c| acc * t + c);
    let e = t * exp(poly - z * z);
    if x < 0.0 { 2.0 - e } else { e }
}

/// logistic.h's cutoffs: past them the result is 1, or `exp(x)`.
const LOGISTIC_UPPER: f32 = 16.619_047;
const LOGISTIC_LOWER: f32 = -9.0;

impl UnaryElement for f32 {
    fn unary(op: UnaryOp, input: &[f32], output: &mut [f32]) -> Result<()> {
        match op {
            UnaryOp::Square => map(input, output, |x| x * x),
            UnaryOp::Sqrt => map(input, output, f32::sqrt),
            UnaryOp::Rsqrt => map(input, output, |x| 1.0 / x.sqrt()),
            UnaryOp::Exp => map(input, output, f32::exp),
            UnaryOp::Log => map(input, output, f32::ln),
            UnaryOp::Sin => map(input, output, f32::sin),
            UnaryOp::Cos => map(input, output, f32::cos),
            UnaryOp::Abs => map(input, output, f32::abs),
            UnaryOp::Neg => map(input, output, |x| -x),
            UnaryOp::Tanh => map_wide(input, output, tanh),
            UnaryOp::Logistic => map_wide(input, output, |x| {
                // Selects, not branches, so that the loop vectorizes: one
                // exp for both sides of the lower cutoff.
                let low = x < LOGISTIC_LOWER;
                let e = exp(if low { x } else { -x });
                let y = if low { e } else { 1.0 / (1.0 + e) };
                if x > LOGISTIC_UPPER { 1.0 } else { y }
            }),
            UnaryOp::Relu => map(input, output, |x| if x < 0.0 { 0.0 } else { x }),
            // clamp keeps NaN, as the reference's comparisons do.
            UnaryOp::Relu6 => map(input, output, |x| x.clamp(0.0, 6.0)),
            UnaryOp::LeakyRelu { alpha } => {
                map(input, output, |x| if x > 0.0 { x } else { x * alpha })
            }
            UnaryOp::Gelu { approximate: false } => map_wide(input, output, |x| {
                0.5 * x * erfc(x * -std::f32::consts::FRAC_1_SQRT_2)
            }),
            UnaryOp::Gelu { approximate: true } => map(input, output, |x| {
                0.5 * x * (1.0 + (SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)).tanh())
            }),
            UnaryOp::HardSwish => map(input, output, |x| {
                // std::min(6, std::max(0, x + 3)), C++'s argument order.
                let lo = if 0.0 < x + 3.0 { x + 3.0 } else { 0.0 };
                let clamped = if lo < 6.0 { lo } else { 6.0 };
                x * clamped / 6.0
            }),
        }
        Ok(())
    }
}

macro_rules! unary_int {
    ($($t:ty),*) => {$(
        impl UnaryElement for $t {
            fn unary(op: UnaryOp, input: &[$t], output: &mut [$t]) -> Result<()> {
                match op {
                    UnaryOp::Abs => map(input, output, <$t>::wrapping_abs),
                    UnaryOp::Neg => map(input, output, <$t>::wrapping_neg),
                    _ => {
                        return Err(Error::unimplemented(format!(
                            "{op:?} is not defined for {}", stringify!($t)
                        )))
                    }
                }
                Ok(())
            }
        }
    )*};
}
unary_int!(i32, i64);

/// A binary builtin.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    /// `ADD`.
    Add,
    /// `SUB`.
    Sub,
    /// `MUL`.
    Mul,
    /// `DIV` (integers: truncating, and a zero divisor is an error).
    Div,
    /// `MAXIMUM`: `a > b ? a : b`.
    Maximum,
    /// `MINIMUM`: `a < b ? a : b`.
    Minimum,
    /// `SQUARED_DIFFERENCE`: `(a - b)²`.
    SquaredDifference,
}

/// A binary builtin with its fused activation (`Activation::None` for the
/// ops whose options have none: MAXIMUM, MINIMUM, SQUARED_DIFFERENCE).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct BinaryParams {
    /// The op.
    pub op: BinaryOp,
    /// The fused activation, applied as a clamp of the result.
    pub activation: Activation,
}

/// The broadcast shape of two inputs (NumPy's rule: trailing dimensions
/// equal, or one of them 1; a 0 against a 1 gives 0).
///
/// ```
/// use op_lite::builtins::math::elementwise::binary_shape;
/// assert_eq!(binary_shape(&[2, 1, 3], &[4, 1]).unwrap(), [2, 4, 3]);
/// assert!(binary_shape(&[2, 3], &[4]).is_err());
/// ```
pub fn binary_shape(a: &[usize], b: &[usize]) -> Result<Vec<usize>> {
    let (dims, rank) = broadcast(a, b)?;
    let out = dims[MAX_RANK - rank..].to_vec();
    super::num_elements(&out)?;
    Ok(out)
}

/// The broadcast shape of `a` and `b`, extended to [`MAX_RANK`], and the
/// rank of the result.
fn broadcast(a: &[usize], b: &[usize]) -> Result<([usize; MAX_RANK], usize)> {
    let ad = extend::<MAX_RANK>("the first input", a)?;
    let bd = extend::<MAX_RANK>("the second input", b)?;
    let mut out = [1; MAX_RANK];
    for i in 0..MAX_RANK {
        out[i] = match (ad[i], bd[i]) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => {
                return Err(Error::invalid_argument(format!(
                    "shapes {a} and {b} are not broadcastable",
                    a = op_core::error::dims(a),
                    b = op_core::error::dims(b)
                )));
            }
        };
    }
    Ok((out, a.len().max(b.len())))
}

/// The element types of the binary ops: `f32`, `i32` and `i64`. TensorFlow
/// Lite has all seven ops for float32 and int32 and all but DIV and
/// SQUARED_DIFFERENCE for int64.
pub trait BinaryElement: Number {
    /// `self / other` (integers truncate; the caller has ruled out zero).
    fn div(self, other: Self) -> Self;
    /// Fails when `divisors` holds a value this type cannot divide by.
    fn check_divisors(divisors: &[Self]) -> Result<()>;
}

impl BinaryElement for f32 {
    fn div(self, other: Self) -> Self {
        self / other
    }
    fn check_divisors(_: &[f32]) -> Result<()> {
        Ok(())
    }
}

macro_rules! binary_int {
    ($($t:ty),*) => {$(
        impl BinaryElement for $t {
            fn div(self, other: Self) -> Self {
                self.wrapping_div(other)
            }
            fn check_divisors(divisors: &[$t]) -> Result<()> {
                if divisors.contains(&0) {
                    return Err(Error::invalid_argument("DIV: division by zero"));
                }
                Ok(())
            }
        }
    )*};
}
binary_int!(i32, i64);

/// Applies the binary builtin `params.op` to `a` and `b` broadcast
/// together, then the fused activation: `out = act(op(a, b))`, `out`
/// holding the [`binary_shape`] of the two.
///
/// ```
/// use op_lite::builtins::math::elementwise::{BinaryOp, BinaryParams, binary};
/// use op_lite::model::Activation;
/// let params = BinaryParams { op: BinaryOp::Add, activation: Activation::Relu };
/// let mut out = [0.0f32; 4];
/// binary(params, &[2, 2], &[1.0, -2.0, 3.0, -4.0], &[2], &[0.5, 1.0], &mut out).unwrap();
/// assert_eq!(out, [1.5, 0.0, 3.5, 0.0]);
/// ```
pub fn binary<T: BinaryElement>(
    params: BinaryParams,
    a_shape: &[usize],
    a: &[T],
    b_shape: &[usize],
    b: &[T],
    out: &mut [T],
) -> Result<()> {
    check_len("the first input", a.len(), a_shape)?;
    check_len("the second input", b.len(), b_shape)?;
    // Compared by element: `==` on slices calls memcmp, a function call
    // that costs more than comparing the one to four dimensions inline.
    if a_shape.len() == b_shape.len() && a_shape.iter().zip(b_shape).all(|(x, y)| x == y) {
        // Nothing to broadcast: the common case, checked without extending
        // both shapes to MAX_RANK (which costs more than adding 4 floats).
        check_len("the output", out.len(), a_shape)?;
    } else {
        let (out_dims, _) = broadcast(a_shape, b_shape)?;
        check_len("the output", out.len(), &out_dims)?;
    }
    let act = ActivationRange::<T>::new(params.activation);
    match params.op {
        BinaryOp::Add => broadcast_apply(a_shape, a, b_shape, b, out, |x, y| act.apply(x.add(y))),
        BinaryOp::Sub => broadcast_apply(a_shape, a, b_shape, b, out, |x, y| act.apply(x.sub(y))),
        BinaryOp::Mul => broadcast_apply(a_shape, a, b_shape, b, out, |x, y| act.apply(x.mul(y))),
        BinaryOp::Div => {
            T::check_divisors(b)?;
            broadcast_apply(a_shape, a, b_shape, b, out, |x, y| act.apply(x.div(y)))
        }
        BinaryOp::Maximum => broadcast_apply(a_shape, a, b_shape, b, out, |x, y| {
            act.apply(if x > y { x } else { y })
        }),
        BinaryOp::Minimum => broadcast_apply(a_shape, a, b_shape, b, out, |x, y| {
            act.apply(if x < y { x } else { y })
        }),
        BinaryOp::SquaredDifference => broadcast_apply(a_shape, a, b_shape, b, out, |x, y| {
            let d = x.sub(y);
            act.apply(d.mul(d))
        }),
    }
}

/// `out = f(a, b)` with `a` and `b` broadcast together (lengths already
/// checked against the shapes).
#[inline(always)]
fn broadcast_apply<T: Copy>(
    a_shape: &[usize],
    a: &[T],
    b_shape: &[usize],
    b: &[T],
    out: &mut [T],
    f: impl Fn(T, T) -> T,
) -> Result<()> {
    // The shapes that need no index arithmetic: equal sizes, or a scalar.
    if a.len() == out.len() && b.len() == out.len() {
        for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
            *o = f(x, y);
        }
        return Ok(());
    }
    if b.len() == 1 && a.len() == out.len() {
        let y = b[0];
        for (o, &x) in out.iter_mut().zip(a) {
            *o = f(x, y);
        }
        return Ok(());
    }
    if a.len() == 1 && b.len() == out.len() {
        let x = a[0];
        for (o, &y) in out.iter_mut().zip(b) {
            *o = f(x, y);
        }
        return Ok(());
    }
    if out.is_empty() {
        return Ok(());
    }
    let ad = extend::<MAX_RANK>("the first input", a_shape)?;
    let bd = extend::<MAX_RANK>("the second input", b_shape)?;
    let (od, _) = broadcast(a_shape, b_shape)?;
    // Strides in each input per output index: 0 along a broadcast axis.
    let (a_full, b_full) = (strides(&ad), strides(&bd));
    let mut sa = [0; MAX_RANK];
    let mut sb = [0; MAX_RANK];
    for i in 0..MAX_RANK {
        sa[i] = if ad[i] == 1 { 0 } else { a_full[i] };
        sb[i] = if bd[i] == 1 { 0 } else { b_full[i] };
    }
    let inner = od[MAX_RANK - 1];
    let mut rows = out.chunks_exact_mut(inner);
    for i0 in 0..od[0] {
        for i1 in 0..od[1] {
            for i2 in 0..od[2] {
                for i3 in 0..od[3] {
                    for i4 in 0..od[4] {
                        let ao = i0 * sa[0] + i1 * sa[1] + i2 * sa[2] + i3 * sa[3] + i4 * sa[4];
                        let bo = i0 * sb[0] + i1 * sb[1] + i2 * sb[2] + i3 * sb[3] + i4 * sb[4];
                        let Some(row) = rows.next() else {
                            return Ok(());
                        };
                        match (sa[5], sb[5]) {
                            (0, 0) => row.fill(f(a[ao], b[bo])),
                            (0, _) => {
                                let x = a[ao];
                                for (o, &y) in row.iter_mut().zip(&b[bo..bo + inner]) {
                                    *o = f(x, y);
                                }
                            }
                            (_, 0) => {
                                let y = b[bo];
                                for (o, &x) in row.iter_mut().zip(&a[ao..ao + inner]) {
                                    *o = f(x, y);
                                }
                            }
                            _ => {
                                for ((o, &x), &y) in row
                                    .iter_mut()
                                    .zip(&a[ao..ao + inner])
                                    .zip(&b[bo..bo + inner])
                                {
                                    *o = f(x, y);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_division_truncates_and_refuses_zero() {
        let p = BinaryParams {
            op: BinaryOp::Div,
            activation: Activation::None,
        };
        let mut out = [0i32; 4];
        binary(p, &[4], &[7, -7, 7, -7], &[4], &[2, 2, -2, -2], &mut out).unwrap();
        assert_eq!(out, [3, -3, -3, 3]);
        assert!(binary(p, &[1], &[1], &[1], &[0], &mut out[..1]).is_err());
    }

    #[test]
    fn maximum_and_minimum_let_nan_through_as_cpp_does() {
        let max = BinaryParams {
            op: BinaryOp::Maximum,
            activation: Activation::None,
        };
        let mut out = [0.0f32; 2];
        binary(
            max,
            &[2],
            &[f32::NAN, 0.0],
            &[2],
            &[0.0, f32::NAN],
            &mut out,
        )
        .unwrap();
        assert_eq!(out[0], 0.0);
        assert!(out[1].is_nan());
    }

    #[test]
    fn zero_sized_dimensions_broadcast_against_one() {
        assert_eq!(binary_shape(&[0, 3], &[1, 3]).unwrap(), [0, 3]);
        assert!(binary_shape(&[0, 3], &[2, 3]).is_err());
        let p = BinaryParams {
            op: BinaryOp::Add,
            activation: Activation::None,
        };
        let mut out: [f32; 0] = [];
        binary(p, &[0, 3], &[], &[1, 3], &[1.0, 2.0, 3.0], &mut out).unwrap();
    }

    #[test]
    fn inputs_past_the_rank_cap_are_errors() {
        assert!(binary_shape(&[1; 7], &[1]).is_err());
    }

    /// Every `step`-th float from `lo` to `hi` (by their bits: a dense,
    /// log-spaced grid), both signs.
    fn grid(hi: f32, step: usize) -> impl Iterator<Item = f32> {
        (0..=hi.to_bits())
            .step_by(step)
            .flat_map(|b| [f32::from_bits(b), -f32::from_bits(b)])
    }

    #[test]
    fn the_polynomial_exp_is_within_2_ulp_of_exp_subnormals_and_overflow_included() {
        let mut worst = 0.0f64;
        for x in grid(110.0, 97) {
            let (got, want) = (exp(x), (x as f64).exp());
            if want > f32::MAX as f64 * (1.0 + f32::EPSILON as f64 / 2.0) {
                assert_eq!(got, f32::INFINITY, "exp({x})");
            } else if want < f32::MIN_POSITIVE as f64 {
                // Subnormal: one rounding of the exact value (to within a
                // subnormal ulp, 2^-149).
                let err = (got as f64 - want).abs();
                assert!(err <= 1.5e-45, "exp({x}): {got} vs {want}");
            } else {
                let err = (got as f64 - want).abs() / want / f32::EPSILON as f64;
                worst = worst.max(err);
                assert!(err <= 2.0, "exp({x}): {got} vs {want} ({err} ulp)");
            }
        }
        assert!(worst > 0.0);
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(f32::INFINITY), f32::INFINITY);
        assert_eq!(exp(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp(-200.0), 0.0);
        assert!(exp(f32::NAN).is_nan());
        assert!(exp(-f32::NAN).is_nan());
    }

    #[test]
    fn the_polynomial_erfc_is_within_3e_6_of_erfc() {
        for x in grid(9.0, 61).filter(|x| *x >= -4.0) {
            let (got, want) = (erfc(x) as f64, libm::erfc(x as f64));
            let tol = if x <= 4.0 { 3e-6 } else { 1e-5 };
            assert!(
                (got - want).abs() <= tol * want,
                "erfc({x}): {got} vs {want}"
            );
        }
        // Past 10, the tail of the normal distribution keeps decreasing,
        // to 0, and NaN stays NaN.
        assert!(erfc(10.0) < 3e-44 && erfc(12.0) == 0.0);
        assert_eq!(erfc(f32::INFINITY), 0.0);
        assert_eq!(erfc(f32::NEG_INFINITY), 2.0);
        assert!(erfc(f32::NAN).is_nan());
    }

    #[test]
    fn the_rational_tanh_is_within_5e_7_of_tanh_everywhere() {
        let (mut worst_abs, mut worst_rel) = (0.0f64, 0.0f64);
        let mut x = -12.0f32;
        while x <= 12.0 {
            let (got, want) = (tanh(x) as f64, (x as f64).tanh());
            worst_abs = worst_abs.max((got - want).abs());
            worst_rel = worst_rel.max((got - want).abs() / want.abs().max(1e-30));
            x += 1.0 / 4096.0;
        }
        // 4.2e-7 measured: a few ulp, far inside the 1e-5 checks against
        // LiteRT.
        assert!(
            worst_abs < 5e-7 && worst_rel < 5e-7,
            "abs {worst_abs:e}, rel {worst_rel:e}"
        );
        for x in [1e-30f32, -3e-5, 0.0, -0.0] {
            assert_eq!(tanh(x).to_bits(), x.to_bits());
        }
        assert_eq!(tanh(f32::INFINITY), 1.0);
        assert_eq!(tanh(f32::NEG_INFINITY), -1.0);
        assert!(tanh(f32::NAN).is_nan());
    }

    #[test]
    fn unary_ops_on_integers_are_abs_and_neg_only() {
        let mut out = [0i32; 2];
        unary(UnaryOp::Abs, &[i32::MIN, -3], &mut out).unwrap();
        assert_eq!(out, [i32::MIN, 3]);
        assert!(unary(UnaryOp::Exp, &[1i32, 2], &mut out).is_err());
    }
}
