//! MEAN and SUM over a set of axes, with `keep_dims`.
//!
//! Semantics are TensorFlow Lite's `reference/reduce.h` (`ReduceGeneric`,
//! `Mean`) and `tensorflow/lite/kernels/reduce.cc`: axes may be negative and
//! repeat (each counts once); an empty axis list copies the input; a
//! reduced axis is dropped from the shape, or kept as 1 with `keep_dims`.
//! Each output sums its elements in increasing input order, as the
//! reference does. MEAN divides the sum by the number of reduced elements:
//! floats give NaN for none, integers sum in 64 bits and truncate (0 for
//! none, as TensorFlow Lite). Integer SUM wraps. Rank at most
//! [`MAX_RANK`].

use op_core::{Error, Result};

use super::common::{
    MAX_RANK, Number, check_len, extend, for_each_offset, normalize_axis, num_elements, strides,
};

/// The reductions.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    /// `SUM`.
    Sum,
    /// `MEAN`.
    Mean,
}

/// The options of MEAN and SUM.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct ReduceParams {
    /// Keep reduced axes as dimensions of size 1.
    pub keep_dims: bool,
}

/// The reduced axes of a rank-`rank` input, as a bit set.
fn axis_mask<I: Copy + Into<i64>>(rank: usize, axes: &[I]) -> Result<u32> {
    let mut mask = 0u32;
    for &axis in axes {
        mask |= 1 << normalize_axis("reduction axis", axis.into(), rank)?;
    }
    Ok(mask)
}

/// The output shape of MEAN and SUM over `axes` (an int32 or int64 list).
///
/// ```
/// use op_lite::builtins::math::reduce::{ReduceParams, reduce_shape};
/// let drop = ReduceParams { keep_dims: false };
/// assert_eq!(reduce_shape(&[2, 3, 4], &[-1i32, 0, 2], &drop).unwrap(), [3]);
/// let keep = ReduceParams { keep_dims: true };
/// assert_eq!(reduce_shape(&[2, 3, 4], &[1i32], &keep).unwrap(), [2, 1, 4]);
/// ```
pub fn reduce_shape<I: Copy + Into<i64>>(
    input: &[usize],
    axes: &[I],
    params: &ReduceParams,
) -> Result<Vec<usize>> {
    extend::<MAX_RANK>("the reduction's input", input)?;
    num_elements(input)?;
    let mask = axis_mask(input.len(), axes)?;
    Ok(input
        .iter()
        .enumerate()
        .filter_map(|(i, &d)| match (mask & (1 << i) != 0, params.keep_dims) {
            (false, _) => Some(d),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect())
}

/// The element types of the reductions: `f32`, `i32`, `i64`.
pub trait ReduceElement: Number {
    /// What MEAN sums in (`i64` for integers).
    type Acc: Number;
    /// `self` widened.
    fn widen(self) -> Self::Acc;
    /// `sum / count` narrowed back (`count` may be 0).
    fn mean(sum: Self::Acc, count: usize) -> Self;
}

impl ReduceElement for f32 {
    type Acc = f32;
    fn widen(self) -> f32 {
        self
    }
    fn mean(sum: f32, count: usize) -> f32 {
        sum / count as f32
    }
}

macro_rules! reduce_int {
    ($($t:ty),*) => {$(
        impl ReduceElement for $t {
            type Acc = i64;
            fn widen(self) -> i64 {
                self.into()
            }
            fn mean(sum: i64, count: usize) -> $t {
                match i64::try_from(count) {
                    Ok(count) if count > 0 => sum.wrapping_div(count) as $t,
                    _ => 0,
                }
            }
        }
    )*};
}
reduce_int!(i32, i64);

/// MEAN or SUM of `input` over `axes`, into `output` of [`reduce_shape`]'s
/// size. Allocates nothing.
///
/// ```
/// use op_lite::builtins::math::reduce::{ReduceOp, reduce};
/// let mut out = [0.0f32; 2];
/// reduce(ReduceOp::Mean, &[2, 2], &[1.0, 2.0, 3.0, 5.0], &[1i32], &mut out).unwrap();
/// assert_eq!(out, [1.5, 4.0]);
/// ```
pub fn reduce<T: ReduceElement, I: Copy + Into<i64>>(
    op: ReduceOp,
    input_shape: &[usize],
    input: &[T],
    axes: &[I],
    output: &mut [T],
) -> Result<()> {
    let dims = extend::<MAX_RANK>("the reduction's input", input_shape)?;
    check_len("the reduction's input", input.len(), input_shape)?;
    let pad = MAX_RANK - input_shape.len();
    let mask = axis_mask(input_shape.len(), axes)? << pad;
    // The kept box (reduced axes set to 1) and the reduced box (kept axes
    // set to 1), both over the input's strides.
    let (mut kept, mut reduced) = ([1; MAX_RANK], [1; MAX_RANK]);
    for i in 0..MAX_RANK {
        if mask & (1 << i) != 0 {
            reduced[i] = dims[i];
        } else {
            kept[i] = dims[i];
        }
    }
    let out_len = num_elements(&kept)?;
    if output.len() != out_len {
        return Err(Error::invalid_argument(format!(
            "the reduction's output has {} elements, expected {out_len}",
            output.len()
        )));
    }
    let count = num_elements(&reduced)?;
    let st = strides(&dims);
    let mut out = output.iter_mut();
    for_each_offset(&kept, &st, |base| {
        let Some(o) = out.next() else { return };
        match op {
            ReduceOp::Sum => {
                let mut sum = T::ZERO;
                for_each_offset(&reduced, &st, |at| sum = sum.add(input[base + at]));
                *o = sum;
            }
            ReduceOp::Mean => {
                let mut sum = <T::Acc as Number>::ZERO;
                for_each_offset(&reduced, &st, |at| sum = sum.add(input[base + at].widen()));
                *o = T::mean(sum, count);
            }
        }
    });
    Ok(())
}
