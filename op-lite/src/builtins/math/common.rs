//! What the builtins' math shares: the rank cap, checked element counts,
//! shapes padded into fixed arrays (so that compute functions index without
//! allocating), the element trait of the arithmetic ops, and fused
//! activations as an output clamp with C++'s comparison semantics.
//!
//! TensorFlow Lite caps most ops at rank 4 to 6 (`RuntimeShape` arrays,
//! `NdArrayDesc<N>`); here every op takes at most [`MAX_RANK`] dimensions
//! (fewer where TensorFlow Lite allows fewer, as each op says), so that
//! strides and indices live in `[usize; MAX_RANK]` on the stack.

use op_core::{Error, Result};

use crate::model::Activation;

/// The most dimensions any builtin here takes (TensorFlow Lite's broadcast
/// and transpose limit).
pub const MAX_RANK: usize = 6;

/// The number of elements of `shape`, or an error when the product
/// overflows `usize`.
///
/// ```
/// use op_lite::builtins::math::num_elements;
/// assert_eq!(num_elements(&[2, 3, 4]).unwrap(), 24);
/// assert_eq!(num_elements(&[]).unwrap(), 1);
/// assert!(num_elements(&[usize::MAX, 2]).is_err());
/// ```
#[inline]
pub fn num_elements(shape: &[usize]) -> Result<usize> {
    match shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d)) {
        Some(n) => Ok(n),
        None => Err(too_many_elements(shape)),
    }
}

#[cold]
#[inline(never)]
fn too_many_elements(shape: &[usize]) -> Error {
    Error::invalid_argument(format!(
        "shape {shape} has more elements than fit in memory",
        shape = op_core::error::dims(shape)
    ))
}

/// Fails unless `shape` has at most `max` dimensions.
pub(crate) fn check_max_rank(what: &str, shape: &[usize], max: usize) -> Result<()> {
    if shape.len() > max {
        return Err(Error::invalid_argument(format!(
            "{what} has rank {} (shape {shape}); at most {max} is supported",
            shape.len(),
            shape = op_core::error::dims(shape)
        )));
    }
    Ok(())
}

/// Fails unless `shape` has exactly `rank` dimensions.
pub(crate) fn check_rank(what: &str, shape: &[usize], rank: usize) -> Result<()> {
    if shape.len() != rank {
        return Err(Error::invalid_argument(format!(
            "{what} must have rank {rank}, got shape {shape}",
            shape = op_core::error::dims(shape)
        )));
    }
    Ok(())
}

/// Fails unless a buffer of `len` elements holds exactly a tensor of
/// `shape`.
// Inlined with its error path cold: every kernel calls it once per input
// and output on each invoke (a few ns of the ADD chain's per-node time).
#[inline]
pub(crate) fn check_len(what: &str, len: usize, shape: &[usize]) -> Result<()> {
    check_len_of("", what, len, shape)
}

/// [`check_len`] for `what` of `op` (`"CONV_2D"`, `"the input"`): the
/// message names both, and nothing is formatted unless it fails.
#[inline]
pub(crate) fn check_len_of(op: &str, what: &str, len: usize, shape: &[usize]) -> Result<()> {
    let want = num_elements(shape)?;
    if len != want {
        return Err(wrong_len(op, what, len, shape, want));
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn wrong_len(op: &str, what: &str, len: usize, shape: &[usize], want: usize) -> Error {
    let sep = if op.is_empty() { "" } else { ": " };
    Error::invalid_argument(format!(
        "{op}{sep}{what} has {len} elements, but its shape {shape} needs {want}",
        shape = op_core::error::dims(shape)
    ))
}

/// `axis` in `[-rank, rank)` as an index in `[0, rank)`.
pub(crate) fn normalize_axis(what: &str, axis: i64, rank: usize) -> Result<usize> {
    let r = rank as i64;
    if axis < -r || axis >= r {
        return Err(Error::invalid_argument(format!(
            "{what} {axis} is out of range for rank {rank} (expected [{}, {rank}))",
            -r
        )));
    }
    Ok(if axis < 0 {
        (axis + r) as usize
    } else {
        axis as usize
    })
}

/// `shape` padded with leading ones to `N` dimensions, as TensorFlow Lite's
/// `RuntimeShape::ExtendedShape` does.
pub(crate) fn extend<const N: usize>(what: &str, shape: &[usize]) -> Result<[usize; N]> {
    check_max_rank(what, shape, N)?;
    let mut dims = [1; N];
    dims[N - shape.len()..].copy_from_slice(shape);
    Ok(dims)
}

/// Row-major strides of `dims` (in elements).
pub(crate) fn strides<const N: usize>(dims: &[usize; N]) -> [usize; N] {
    let mut strides = [0; N];
    let mut stride = 1usize;
    for i in (0..N).rev() {
        strides[i] = stride;
        stride = stride.wrapping_mul(dims[i]);
    }
    strides
}

/// Calls `f(offset)` for every element of the sub-box `dims` of an array
/// with `strides`, in row-major order.
#[inline]
pub(crate) fn for_each_offset(
    dims: &[usize; MAX_RANK],
    strides: &[usize; MAX_RANK],
    mut f: impl FnMut(usize),
) {
    for i0 in 0..dims[0] {
        let o0 = i0 * strides[0];
        for i1 in 0..dims[1] {
            let o1 = o0 + i1 * strides[1];
            for i2 in 0..dims[2] {
                let o2 = o1 + i2 * strides[2];
                for i3 in 0..dims[3] {
                    let o3 = o2 + i3 * strides[3];
                    for i4 in 0..dims[4] {
                        let o4 = o3 + i4 * strides[4];
                        for i5 in 0..dims[5] {
                            f(o4 + i5 * strides[5]);
                        }
                    }
                }
            }
        }
    }
}

/// The element types of the arithmetic builtins: `f32`, `i32` and `i64`.
///
/// Integer arithmetic wraps on overflow (TensorFlow Lite's C++ leaves it
/// undefined; two's complement hardware wraps).
pub trait Number: Copy + PartialOrd + Default + std::fmt::Debug + Send + Sync + 'static {
    /// 0.
    const ZERO: Self;
    /// The lowest value (`std::numeric_limits<T>::lowest()`).
    const LOWEST: Self;
    /// The highest finite value (`std::numeric_limits<T>::max()`).
    const HIGHEST: Self;
    /// `self + other`.
    fn add(self, other: Self) -> Self;
    /// `self - other`.
    fn sub(self, other: Self) -> Self;
    /// `self * other`.
    fn mul(self, other: Self) -> Self;
    /// A small integer constant (activation bounds).
    fn from_i8(value: i8) -> Self;
}

macro_rules! number_int {
    ($($t:ty),*) => {$(
        impl Number for $t {
            const ZERO: Self = 0;
            const LOWEST: Self = <$t>::MIN;
            const HIGHEST: Self = <$t>::MAX;
            fn add(self, other: Self) -> Self { self.wrapping_add(other) }
            fn sub(self, other: Self) -> Self { self.wrapping_sub(other) }
            fn mul(self, other: Self) -> Self { self.wrapping_mul(other) }
            fn from_i8(value: i8) -> Self { value.into() }
        }
    )*};
}
number_int!(i32, i64);

impl Number for f32 {
    const ZERO: Self = 0.0;
    const LOWEST: Self = f32::MIN;
    const HIGHEST: Self = f32::MAX;
    fn add(self, other: Self) -> Self {
        self + other
    }
    fn sub(self, other: Self) -> Self {
        self - other
    }
    fn mul(self, other: Self) -> Self {
        self * other
    }
    fn from_i8(value: i8) -> Self {
        value.into()
    }
}

/// A fused activation as the output clamp TensorFlow Lite's kernels apply
/// (`CalculateActivationRange` then `ActivationFunctionWithMinMax`).
///
/// `None` clamps to the type's finite range, as the reference kernels do
/// (LiteRT's reference ADD turns `inf` into `f32::MAX`); `Relu` to
/// `[0, max]`, `Relu6` to `[0, 6]`, `ReluN1To1` to `[-1, 1]`. TensorFlow
/// Lite's float kernels treat `Tanh` and `SignBit` as `None`, and so does
/// this. NaN passes through, as C++'s `std::min(std::max(x, lo), hi)` lets
/// it.
///
/// ```
/// use op_lite::builtins::math::ActivationRange;
/// use op_lite::model::Activation;
/// let relu6 = ActivationRange::<f32>::new(Activation::Relu6);
/// assert_eq!(relu6.apply(7.5), 6.0);
/// assert_eq!(relu6.apply(-1.0), 0.0);
/// assert!(relu6.apply(f32::NAN).is_nan());
/// ```
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct ActivationRange<T> {
    /// The lower bound.
    pub min: T,
    /// The upper bound.
    pub max: T,
}

impl<T: Number> ActivationRange<T> {
    /// The range of `activation` for `T`.
    pub fn new(activation: Activation) -> Self {
        let (min, max) = match activation {
            Activation::Relu => (T::ZERO, T::HIGHEST),
            Activation::Relu6 => (T::ZERO, T::from_i8(6)),
            Activation::ReluN1To1 => (T::from_i8(-1), T::from_i8(1)),
            Activation::None | Activation::Tanh | Activation::SignBit => (T::LOWEST, T::HIGHEST),
        };
        ActivationRange { min, max }
    }

    /// `x` clamped, as `std::min(std::max(x, min), max)`.
    #[inline(always)]
    pub fn apply(&self, x: T) -> T {
        let x = if x < self.min { self.min } else { x };
        if self.max < x { self.max } else { x }
    }

    /// Clamps every element of `values` in place.
    pub fn apply_all(&self, values: &mut [T]) {
        for v in values {
            *v = self.apply(*v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strides_are_row_major() {
        assert_eq!(strides(&[2, 3, 4]), [12, 4, 1]);
    }

    #[test]
    fn shapes_extend_with_leading_ones_up_to_the_cap() {
        assert_eq!(extend::<4>("x", &[3, 5]).unwrap(), [1, 1, 3, 5]);
        assert!(extend::<2>("x", &[1, 2, 3]).is_err());
    }

    #[test]
    fn axes_normalize_from_both_ends_and_reject_out_of_range() {
        assert_eq!(normalize_axis("axis", -1, 3).unwrap(), 2);
        assert_eq!(normalize_axis("axis", 0, 3).unwrap(), 0);
        assert!(normalize_axis("axis", 3, 3).is_err());
        assert!(normalize_axis("axis", -4, 3).is_err());
        assert!(normalize_axis("axis", 0, 0).is_err());
    }

    #[test]
    fn activation_ranges_are_tensorflow_lites() {
        assert_eq!(
            ActivationRange::<f32>::new(Activation::None).apply(f32::INFINITY),
            f32::MAX
        );
        assert_eq!(
            ActivationRange::<f32>::new(Activation::Relu).apply(-3.0),
            0.0
        );
        assert_eq!(
            ActivationRange::<f32>::new(Activation::ReluN1To1).apply(-3.0),
            -1.0
        );
        assert_eq!(ActivationRange::<i32>::new(Activation::Relu6).apply(9), 6);
        assert_eq!(
            ActivationRange::<f32>::new(Activation::Tanh).apply(9.0),
            9.0
        );
    }
}
