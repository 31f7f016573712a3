//! The arithmetic of `Range`, for every device's kernels to share, with
//! TensorFlow's checks and messages: the length of a range from its
//! `start`, `limit` and `delta` (which the shape function uses too, when
//! the three are constants), and its elements, `start + i * delta`
//! computed in the range's type.

use op_core::{Element, Error, Result};

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
/// use op_kernels::math::range_into;
/// let mut out = [0; 3];
/// range_into(5, -2, 0, &mut out);
/// assert_eq!(out, [5, 3, 1]);
/// ```
pub fn range_into<T: RangeElement>(start: T, delta: T, offset: usize, output: &mut [T]) {
    for (i, o) in output.iter_mut().enumerate() {
        *o = T::nth(start, delta, offset + i);
    }
}
