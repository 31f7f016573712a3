//! The data-movement builtins: TRANSPOSE, CONCATENATION, PACK,
//! STRIDED_SLICE, SLICE, PAD, GATHER, CUMSUM and CAST. Generic over the
//! element type (any `Copy` value; CUMSUM needs arithmetic, CAST converts);
//! index tensors are int32 or int64 (`I: Into<i64>`).
//!
//! Semantics are TensorFlow Lite's reference kernels:
//! `reference/transpose.h` (rank at most 6), `reference/concatenation.h`,
//! `reference/strided_slice.h` with `strided_slice_logic.h` and the mask
//! handling of `tensorflow/lite/kernels/strided_slice.cc` (rank at most 5
//! after new axes), `reference/slice.h` (rank at most 5), `reference/pad.h`
//! (rank at most 5), `tensorflow/lite/kernels/gather.cc`,
//! `optimized_ops::CumSum` and `tensorflow/lite/kernels/cast.cc`. Where
//! TensorFlow Lite reads out of bounds or leaves behaviour undefined (a
//! gather index out of range, a shrunk axis past the end), these return an
//! error.

use op_core::{Error, Result};

use super::common::{
    MAX_RANK, Number, check_len, extend, for_each_offset, normalize_axis, num_elements, strides,
};

/// TRANSPOSE's output shape: `output[i] = input[perm[i]]`, `perm` a
/// permutation of `0..rank` (rank at most [`MAX_RANK`]).
///
/// ```
/// use op_lite::builtins::math::shape_ops::transpose_shape;
/// assert_eq!(transpose_shape(&[2, 3, 4], &[2i32, 0, 1]).unwrap(), [4, 2, 3]);
/// assert!(transpose_shape(&[2, 3], &[0i32, 0]).is_err());
/// ```
pub fn transpose_shape<I: Copy + Into<i64>>(input: &[usize], perm: &[I]) -> Result<Vec<usize>> {
    let p = permutation(input, perm)?;
    Ok(p[..input.len()].iter().map(|&i| input[i]).collect())
}

/// `perm` checked against `input`, as indices.
fn permutation<I: Copy + Into<i64>>(input: &[usize], perm: &[I]) -> Result<[usize; MAX_RANK]> {
    extend::<MAX_RANK>("TRANSPOSE: the input", input)?;
    num_elements(input)?;
    if perm.len() != input.len() {
        return Err(Error::invalid_argument(format!(
            "TRANSPOSE: the permutation has {} entries for an input of rank {}",
            perm.len(),
            input.len()
        )));
    }
    let mut out = [0; MAX_RANK];
    let mut seen = 0u32;
    for (i, &p) in perm.iter().enumerate() {
        let p: i64 = p.into();
        if p < 0 || p >= input.len() as i64 || seen & (1 << p) != 0 {
            return Err(Error::invalid_argument(format!(
                "TRANSPOSE: the permutation {} is not a permutation of 0..{}",
                op_core::error::dims(&perm.iter().map(|&p| p.into()).collect::<Vec<i64>>()),
                input.len()
            )));
        }
        seen |= 1 << p;
        out[i] = p as usize;
    }
    Ok(out)
}

/// TRANSPOSE into `output` of [`transpose_shape`].
pub fn transpose<T: Copy, I: Copy + Into<i64>>(
    input_shape: &[usize],
    input: &[T],
    perm: &[I],
    output: &mut [T],
) -> Result<()> {
    let p = permutation(input_shape, perm)?;
    check_len("TRANSPOSE: the input", input.len(), input_shape)?;
    check_len("TRANSPOSE: the output", output.len(), input_shape)?;
    let rank = input_shape.len();
    let pad = MAX_RANK - rank;
    let in_strides = strides(&extend::<MAX_RANK>("", input_shape)?);
    // Walk the output in order; each step moves the input by the permuted
    // stride.
    let (mut dims, mut st) = ([1; MAX_RANK], [0; MAX_RANK]);
    for i in 0..rank {
        dims[pad + i] = input_shape[p[i]];
        st[pad + i] = in_strides[pad + p[i]];
    }
    let mut out = output.iter_mut();
    for_each_offset(&dims, &st, |at| {
        if let Some(o) = out.next() {
            *o = input[at];
        }
    });
    Ok(())
}

/// CONCATENATION's output shape: the inputs joined along `axis`
/// (negative counts from the end). Every input has the same rank (at least
/// 1) and the same dimensions off the axis.
///
/// ```
/// use op_lite::builtins::math::shape_ops::concatenation_shape;
/// assert_eq!(concatenation_shape(&[&[2, 3], &[2, 5]], -1).unwrap(), [2, 8]);
/// ```
pub fn concatenation_shape(inputs: &[&[usize]], axis: i64) -> Result<Vec<usize>> {
    let (_, out) = concat_geometry(inputs.iter().copied(), axis)?;
    Ok(out)
}

/// The axis and the output shape of a concatenation of `shapes`.
fn concat_geometry<'a>(
    mut shapes: impl Iterator<Item = &'a [usize]>,
    axis: i64,
) -> Result<(usize, Vec<usize>)> {
    let Some(first) = shapes.next() else {
        return Err(Error::invalid_argument(
            "CONCATENATION needs at least one input",
        ));
    };
    extend::<MAX_RANK>("CONCATENATION: an input", first)?;
    let axis = normalize_axis("CONCATENATION: the axis", axis, first.len())?;
    let mut out = first.to_vec();
    for shape in shapes {
        if shape.len() != first.len()
            || shape
                .iter()
                .zip(first)
                .enumerate()
                .any(|(i, (a, b))| i != axis && a != b)
        {
            return Err(Error::invalid_argument(format!(
                "CONCATENATION: input shapes {first} and {shape} differ off axis {axis}",
                first = op_core::error::dims(first),
                shape = op_core::error::dims(shape)
            )));
        }
        out[axis] = out[axis]
            .checked_add(shape[axis])
            .ok_or_else(|| Error::invalid_argument("CONCATENATION: the output size overflows"))?;
    }
    num_elements(&out)?;
    Ok((axis, out))
}

/// CONCATENATION of `inputs` (shape and data pairs, iterated once per
/// outer index, so cheap to clone: `(0..n).map(|i| ...)`) along `axis`,
/// into `output` of [`concatenation_shape`]. Allocates nothing.
///
/// ```
/// use op_lite::builtins::math::shape_ops::concatenation;
/// let (a, b) = ([1, 2, 3, 4], [5, 6]);
/// let mut out = [0; 6];
/// let inputs = [(&[2usize, 2][..], &a[..]), (&[2, 1][..], &b[..])];
/// concatenation(1, inputs.iter().copied(), &mut out).unwrap();
/// assert_eq!(out, [1, 2, 5, 3, 4, 6]);
/// ```
pub fn concatenation<'a, T: Copy + 'a>(
    axis: i64,
    inputs: impl Iterator<Item = (&'a [usize], &'a [T])> + Clone,
    output: &mut [T],
) -> Result<()> {
    let mut out_count = 0usize;
    let mut axis_index = 0;
    let mut first: Option<&[usize]> = None;
    for (i, (shape, data)) in inputs.clone().enumerate() {
        check_len("CONCATENATION: an input", data.len(), shape)?;
        let f = *first.get_or_insert(shape);
        extend::<MAX_RANK>("CONCATENATION: an input", shape)?;
        axis_index = normalize_axis("CONCATENATION: the axis", axis, f.len())?;
        if shape.len() != f.len()
            || shape
                .iter()
                .zip(f)
                .enumerate()
                .any(|(d, (a, b))| d != axis_index && a != b)
        {
            return Err(Error::invalid_argument(format!(
                "CONCATENATION: input {i} has shape {shape}, which differs from {f} off axis {axis_index}",
                shape = op_core::error::dims(shape),
                f = op_core::error::dims(f)
            )));
        }
        out_count += data.len();
    }
    let Some(first) = first else {
        return Err(Error::invalid_argument(
            "CONCATENATION needs at least one input",
        ));
    };
    if output.len() != out_count {
        return Err(Error::invalid_argument(format!(
            "CONCATENATION: the output has {} elements, the inputs {out_count}",
            output.len()
        )));
    }
    let outer: usize = first[..axis_index].iter().product();
    let inner: usize = first[axis_index + 1..].iter().product();
    join(
        outer,
        inputs.map(|(shape, data)| (shape[axis_index] * inner, data)),
        output,
    );
    Ok(())
}

/// For each of `outer` blocks, copies each input's next `chunk` elements
/// into `output` in turn.
fn join<'a, T: Copy + 'a>(
    outer: usize,
    inputs: impl Iterator<Item = (usize, &'a [T])> + Clone,
    output: &mut [T],
) {
    let mut at = 0;
    for o in 0..outer {
        for (chunk, data) in inputs.clone() {
            output[at..at + chunk].copy_from_slice(&data[o * chunk..(o + 1) * chunk]);
            at += chunk;
        }
    }
}

/// PACK's output shape: `count` inputs of shape `input` stacked along a new
/// axis `axis` (in `[-(rank + 1), rank]`).
///
/// ```
/// use op_lite::builtins::math::shape_ops::pack_shape;
/// assert_eq!(pack_shape(&[2, 3], 4, -1).unwrap(), [2, 3, 4]);
/// ```
pub fn pack_shape(input: &[usize], count: usize, axis: i64) -> Result<Vec<usize>> {
    if input.len() >= MAX_RANK {
        return Err(Error::invalid_argument(format!(
            "PACK: inputs of rank {} would give more than {MAX_RANK} dimensions",
            input.len()
        )));
    }
    if count == 0 {
        return Err(Error::invalid_argument("PACK needs at least one input"));
    }
    let axis = normalize_axis("PACK: the axis", axis, input.len() + 1)?;
    let mut out = input.to_vec();
    out.insert(axis, count);
    num_elements(&out)?;
    Ok(out)
}

/// PACK of `inputs` (all of shape `input_shape`) along a new `axis`, into
/// `output` of [`pack_shape`]. Allocates nothing.
pub fn pack<'a, T: Copy + 'a>(
    input_shape: &[usize],
    axis: i64,
    inputs: impl Iterator<Item = &'a [T]> + Clone,
    output: &mut [T],
) -> Result<()> {
    let axis = normalize_axis("PACK: the axis", axis, input_shape.len() + 1)?;
    let size = num_elements(input_shape)?;
    let mut count = 0usize;
    for (i, data) in inputs.clone().enumerate() {
        // The index formatted only on failure: this runs in invoke.
        check_len("PACK: an input", data.len(), input_shape)
            .map_err(|e| e.with_context(format!("PACK: input {i}")))?;
        count += 1;
    }
    if Some(output.len()) != size.checked_mul(count) {
        return Err(Error::invalid_argument(format!(
            "PACK: the output has {} elements, {count} inputs of {input_shape} need {}",
            output.len(),
            size.saturating_mul(count),
            input_shape = op_core::error::dims(input_shape)
        )));
    }
    let inner: usize = input_shape[axis..].iter().product();
    let outer: usize = input_shape[..axis].iter().product();
    join(outer, inputs.map(|data| (inner, data)), output);
    Ok(())
}

/// STRIDED_SLICE's options (bit `i` of a mask refers to entry `i` of
/// `begin`, `end` and `strides`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct StridedSliceParams {
    /// Ignore `begin[i]`: start at the first element (the last for a
    /// negative stride).
    pub begin_mask: i32,
    /// Ignore `end[i]`: run to the end (the start for a negative stride).
    pub end_mask: i32,
    /// Entry `i` stands for as many full axes as the input needs (one bit
    /// at most).
    pub ellipsis_mask: i32,
    /// Entry `i` inserts a new axis of size 1.
    pub new_axis_mask: i32,
    /// Entry `i` takes the single element at `begin[i]` and drops the axis.
    pub shrink_axis_mask: i32,
    /// `end` is relative to `begin` (`end = begin + end`).
    pub offset: bool,
}

/// The most dimensions a strided slice works over, new axes included
/// (TensorFlow Lite's `kStridedSliceMaxDimensions`).
pub const MAX_STRIDED_SLICE_RANK: usize = 5;
const SR: usize = MAX_STRIDED_SLICE_RANK;

/// A strided slice resolved against its input: per effective axis, where
/// it starts, how far each step goes and how many steps, and whether the
/// axis stays in the output.
#[derive(Debug)]
struct SlicePlan {
    dims: usize,
    /// The input shape with the new axes inserted.
    input: [usize; SR],
    start: [usize; SR],
    step: [isize; SR],
    count: [usize; SR],
    shrink: u32,
}

impl SlicePlan {
    fn output_shape(&self) -> Vec<usize> {
        (0..self.dims)
            .filter(|&i| self.shrink & (1 << i) == 0)
            .map(|i| self.count[i])
            .collect()
    }
}

/// TensorFlow Lite's `BuildStridedSliceParams` (the ellipsis and new axes
/// expanded into begin and end masks over the effective dimensions), then
/// `StartForAxis` and `StopForAxis` for each.
fn plan_strided_slice<I: Copy + Into<i64>>(
    input: &[usize],
    begin: &[I],
    end: &[I],
    strides: &[I],
    p: &StridedSliceParams,
) -> Result<SlicePlan> {
    num_elements(input)?;
    let n = begin.len();
    if end.len() != n || strides.len() != n || n > 32 {
        return Err(Error::invalid_argument(format!(
            "STRIDED_SLICE: begin, end and strides have {}, {} and {} entries",
            n,
            end.len(),
            strides.len()
        )));
    }
    let bit = |mask: i32, i: usize| i < 32 && (mask as u32) & (1 << i) != 0;
    if (0..n).filter(|&i| bit(p.ellipsis_mask, i)).count() > 1 {
        return Err(Error::invalid_argument(
            "STRIDED_SLICE: the ellipsis mask has more than one bit set (one ellipsis at most)",
        ));
    }
    let num_add_axis = (0..n)
        .filter(|&i| !bit(p.ellipsis_mask, i) && bit(p.new_axis_mask, i))
        .count();
    let dims = input.len() + num_add_axis;
    if dims > SR || dims == 0 {
        return Err(Error::invalid_argument(format!(
            "STRIDED_SLICE works over 1 to {SR} dimensions; the input {input} with {num_add_axis} new axes has {dims}",
            input = op_core::error::dims(input)
        )));
    }
    // Which effective dimensions the ellipsis covers, and which are new.
    let (mut ellipsis, mut new_axis) = (0u32, 0u32);
    let (mut ellipsis_start, mut expanded) = (dims, 0usize);
    let mut i = 0;
    while i < dims {
        if bit(p.ellipsis_mask, i) {
            ellipsis_start = i;
            let end_idx = (i + 1).max(
                (i + 1 + num_add_axis + input.len())
                    .saturating_sub(n)
                    .min(dims),
            );
            expanded = end_idx - i - 1;
            while i < end_idx {
                ellipsis |= 1 << i;
                i += 1;
            }
            continue;
        }
        if bit(p.new_axis_mask, i.saturating_sub(expanded)) {
            new_axis |= 1 << i;
        }
        i += 1;
    }
    let mut plan = SlicePlan {
        dims,
        input: [1; SR],
        start: [0; SR],
        step: [1; SR],
        count: [1; SR],
        shrink: 0,
    };
    let (mut added_ellipsis, mut added_axes) = (0usize, 0usize);
    for i in 0..dims {
        // (begin, end, stride, begin masked, end masked)
        let (b, e, s, bm, em);
        if ellipsis & (1 << i) != 0 {
            added_ellipsis = i
                .checked_sub(ellipsis_start)
                .ok_or_else(|| masks_do_not_fit(input))?;
            plan.input[i] = input_dim(input, i - added_axes)?;
            (b, e, s, bm, em) = (0, 0, 1, true, true);
        } else if new_axis & (1 << i) != 0 {
            plan.input[i] = 1;
            added_axes += 1;
            (b, e, s, bm, em) = (0, 1, 1, false, false);
        } else if i >= n + expanded {
            plan.input[i] = input_dim(input, i - added_axes)?;
            (b, e, s, bm, em) = (0, 0, 1, true, true);
        } else {
            let orig = i - added_ellipsis;
            plan.input[i] = input_dim(input, i - added_axes)?;
            let (Some(&stride), Some(&begin_v), Some(&end_v)) =
                (strides.get(orig), begin.get(orig), end.get(orig))
            else {
                return Err(masks_do_not_fit(input));
            };
            let (stride, begin_v, mut end_v): (i64, i64, i64) =
                (stride.into(), begin_v.into(), end_v.into());
            if p.offset {
                end_v = begin_v.saturating_add(end_v);
            }
            (b, e, s) = (begin_v, end_v, stride);
            (bm, em) = (bit(p.begin_mask, orig), bit(p.end_mask, orig));
            if bit(p.shrink_axis_mask, orig) {
                plan.shrink |= 1 << i;
            }
        }
        if s == 0 {
            return Err(Error::invalid_argument("STRIDED_SLICE: a stride is zero"));
        }
        let size = plan.input[i] as i64;
        let shrink = plan.shrink & (1 << i) != 0;
        // StartForAxis.
        let start = if size == 0 {
            0
        } else {
            let mut start = if bm {
                if s > 0 { i64::MIN } else { i64::MAX }
            } else {
                b
            };
            if start < 0 {
                start = start.saturating_add(size);
            }
            if s > 0 {
                start.clamp(0, size)
            } else {
                start.clamp(-1, size - 1)
            }
        };
        // StopForAxis.
        let stop = if size == 0 {
            0
        } else if shrink {
            start + 1
        } else {
            let mut stop = if em {
                if s > 0 { i64::MAX } else { i64::MIN }
            } else {
                e
            };
            if stop < 0 {
                stop = stop.saturating_add(size);
            }
            if s > 0 {
                stop.clamp(0, size)
            } else {
                stop.clamp(-1, size - 1)
            }
        };
        if shrink && !(0..size).contains(&start) {
            return Err(Error::invalid_argument(format!(
                "STRIDED_SLICE: index {b} of the shrunk axis {i} is out of bounds for size {size}"
            )));
        }
        let span = stop - start;
        // ceil(span / s), at least 0.
        let count = if (span > 0) == (s > 0) && span != 0 {
            (span.unsigned_abs()).div_ceil(s.unsigned_abs()) as usize
        } else {
            0
        };
        plan.start[i] = start.max(0) as usize;
        plan.step[i] = s as isize;
        plan.count[i] = if shrink { 1 } else { count };
    }
    num_elements(&plan.count[..dims])?;
    Ok(plan)
}

/// STRIDED_SLICE's output shape, for int32 or int64 `begin`, `end` and
/// `strides` of one entry per slice spec.
///
/// ```
/// use op_lite::builtins::math::shape_ops::{StridedSliceParams, strided_slice_shape};
/// // x[1, ::-1, tf.newaxis] on a [2, 3, 4] input.
/// let p = StridedSliceParams { shrink_axis_mask: 1, new_axis_mask: 4, ..Default::default() };
/// let shape = strided_slice_shape(&[2, 3, 4], &[1i32, 0, 0], &[2, 0, 0], &[1, -1, 1], &StridedSliceParams {
///     begin_mask: 2, end_mask: 2, ..p
/// }).unwrap();
/// assert_eq!(shape, [3, 1, 4]);
/// ```
pub fn strided_slice_shape<I: Copy + Into<i64>>(
    input: &[usize],
    begin: &[I],
    end: &[I],
    strides: &[I],
    params: &StridedSliceParams,
) -> Result<Vec<usize>> {
    Ok(plan_strided_slice(input, begin, end, strides, params)?.output_shape())
}

/// STRIDED_SLICE into `output` of [`strided_slice_shape`]. Allocates
/// nothing.
pub fn strided_slice<T: Copy, I: Copy + Into<i64>>(
    input_shape: &[usize],
    input: &[T],
    begin: &[I],
    end: &[I],
    strides_: &[I],
    params: &StridedSliceParams,
    output: &mut [T],
) -> Result<()> {
    let plan = plan_strided_slice(input_shape, begin, end, strides_, params)?;
    check_len("STRIDED_SLICE: the input", input.len(), input_shape)?;
    let count = num_elements(&plan.count[..plan.dims])?;
    if output.len() != count {
        return Err(Error::invalid_argument(format!(
            "STRIDED_SLICE: the output has {} elements, the slice {count}",
            output.len()
        )));
    }
    if count == 0 {
        return Ok(());
    }
    // Walk the slice with signed steps over the effective input's strides,
    // padded to MAX_RANK with unit axes in front.
    let pad = MAX_RANK - plan.dims;
    let (mut dims, mut input_dims) = ([1; MAX_RANK], [1; MAX_RANK]);
    dims[pad..].copy_from_slice(&plan.count[..plan.dims]);
    input_dims[pad..].copy_from_slice(&plan.input[..plan.dims]);
    let st = strides(&input_dims);
    let mut base = 0isize;
    let mut step = [0isize; MAX_RANK];
    for i in 0..plan.dims {
        base += (plan.start[i] * st[pad + i]) as isize;
        step[pad + i] = plan.step[i] * st[pad + i] as isize;
    }
    let mut out = output.iter_mut();
    for i0 in 0..dims[0] as isize {
        for i1 in 0..dims[1] as isize {
            for i2 in 0..dims[2] as isize {
                for i3 in 0..dims[3] as isize {
                    for i4 in 0..dims[4] as isize {
                        let row = base
                            + i0 * step[0]
                            + i1 * step[1]
                            + i2 * step[2]
                            + i3 * step[3]
                            + i4 * step[4];
                        for i5 in 0..dims[5] as isize {
                            if let Some(o) = out.next() {
                                *o = input[(row + i5 * step[5]) as usize];
                            }
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// The most dimensions SLICE and PAD take (TensorFlow Lite's cap).
pub const MAX_SLICE_RANK: usize = 5;

/// SLICE's output shape: `size[i]` elements from `begin[i]` along each
/// axis, `-1` meaning to the end.
///
/// ```
/// use op_lite::builtins::math::shape_ops::slice_shape;
/// assert_eq!(slice_shape(&[4, 5], &[1i32, 2], &[2, -1]).unwrap(), [2, 3]);
/// assert!(slice_shape(&[4, 5], &[3i32, 0], &[2, 1]).is_err());
/// ```
pub fn slice_shape<I: Copy + Into<i64>>(
    input: &[usize],
    begin: &[I],
    size: &[I],
) -> Result<Vec<usize>> {
    let (_, out) = slice_geometry(input, begin, size)?;
    Ok(out[..input.len()].to_vec())
}

fn slice_geometry<I: Copy + Into<i64>>(
    input: &[usize],
    begin: &[I],
    size: &[I],
) -> Result<([usize; MAX_SLICE_RANK], [usize; MAX_SLICE_RANK])> {
    extend::<MAX_SLICE_RANK>("SLICE: the input", input)?;
    num_elements(input)?;
    if begin.len() != input.len() || size.len() != input.len() {
        return Err(Error::invalid_argument(format!(
            "SLICE: begin and size have {} and {} entries for an input of rank {}",
            begin.len(),
            size.len(),
            input.len()
        )));
    }
    let (mut starts, mut sizes) = ([0; MAX_SLICE_RANK], [0; MAX_SLICE_RANK]);
    for i in 0..input.len() {
        let (b, s, d): (i64, i64, i64) = (begin[i].into(), size[i].into(), input[i] as i64);
        let s = if s == -1 { d - b } else { s };
        if b < 0 || s < 0 || b.checked_add(s).is_none_or(|e| e > d) {
            return Err(Error::invalid_argument(format!(
                "SLICE: begin {} and size {} are out of range for dimension {i} of {input}",
                b,
                size[i].into(),
                input = op_core::error::dims(input)
            )));
        }
        (starts[i], sizes[i]) = (b as usize, s as usize);
    }
    Ok((starts, sizes))
}

/// SLICE into `output` of [`slice_shape`]. Allocates nothing.
pub fn slice<T: Copy, I: Copy + Into<i64>>(
    input_shape: &[usize],
    input: &[T],
    begin: &[I],
    size: &[I],
    output: &mut [T],
) -> Result<()> {
    let (starts, sizes) = slice_geometry(input_shape, begin, size)?;
    check_len("SLICE: the input", input.len(), input_shape)?;
    let rank = input_shape.len();
    check_len("SLICE: the output", output.len(), &sizes[..rank])?;
    let pad = MAX_RANK - rank;
    let st = strides(&extend::<MAX_RANK>("", input_shape)?);
    let mut dims = [1; MAX_RANK];
    dims[pad..].copy_from_slice(&sizes[..rank]);
    let base: usize = (0..rank).map(|i| starts[i] * st[pad + i]).sum();
    let mut out = output.iter_mut();
    for_each_offset(&dims, &st, |at| {
        if let Some(o) = out.next() {
            *o = input[base + at];
        }
    });
    Ok(())
}

/// PAD's output shape: `paddings` is `[rank, 2]` (before and after each
/// axis, non-negative), flattened.
///
/// ```
/// use op_lite::builtins::math::shape_ops::pad_shape;
/// assert_eq!(pad_shape(&[2, 3], &[1i32, 0, 2, 2]).unwrap(), [3, 7]);
/// ```
pub fn pad_shape<I: Copy + Into<i64>>(input: &[usize], paddings: &[I]) -> Result<Vec<usize>> {
    let (_, out) = pad_geometry(input, paddings)?;
    Ok(out[..input.len()].to_vec())
}

fn pad_geometry<I: Copy + Into<i64>>(
    input: &[usize],
    paddings: &[I],
) -> Result<([usize; MAX_SLICE_RANK], [usize; MAX_SLICE_RANK])> {
    extend::<MAX_SLICE_RANK>("PAD: the input", input)?;
    if paddings.len() != 2 * input.len() {
        return Err(Error::invalid_argument(format!(
            "PAD: the paddings have {} entries, expected [{}, 2]",
            paddings.len(),
            input.len()
        )));
    }
    let (mut before, mut out) = ([0; MAX_SLICE_RANK], [0; MAX_SLICE_RANK]);
    for i in 0..input.len() {
        let (b, a): (i64, i64) = (paddings[2 * i].into(), paddings[2 * i + 1].into());
        let total = usize::try_from(b)
            .ok()
            .zip(usize::try_from(a).ok())
            .and_then(|(b, a)| input[i].checked_add(b)?.checked_add(a).map(|t| (b, t)));
        let Some((b, t)) = total else {
            return Err(Error::invalid_argument(format!(
                "PAD: paddings ({b}, {a}) of dimension {i} must be non-negative and fit"
            )));
        };
        (before[i], out[i]) = (b, t);
    }
    num_elements(&out[..input.len()])?;
    Ok((before, out))
}

/// PAD (and PADV2, with its constant) into `output` of [`pad_shape`]:
/// `value` around the input. Allocates nothing.
pub fn pad<T: Copy, I: Copy + Into<i64>>(
    input_shape: &[usize],
    input: &[T],
    paddings: &[I],
    value: T,
    output: &mut [T],
) -> Result<()> {
    let (before, out_dims) = pad_geometry(input_shape, paddings)?;
    check_len("PAD: the input", input.len(), input_shape)?;
    let rank = input_shape.len();
    check_len("PAD: the output", output.len(), &out_dims[..rank])?;
    output.fill(value);
    let pad = MAX_RANK - rank;
    let out_st = strides(&extend::<MAX_RANK>("", &out_dims[..rank])?);
    let base: usize = (0..rank).map(|i| before[i] * out_st[pad + i]).sum();
    let mut values = input.iter();
    let dims = extend::<MAX_RANK>("", input_shape)?;
    for_each_offset(&dims, &out_st, |at| {
        if let Some(&v) = values.next() {
            output[base + at] = v;
        }
    });
    Ok(())
}

/// GATHER's options.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct GatherParams {
    /// The axis of `params` to gather along (negative counts from the end).
    pub axis: i64,
    /// Leading dimensions shared by `params` and `indices` (negative counts
    /// from the end of `indices`).
    pub batch_dims: i64,
}

/// Dimension `k` of a strided slice's input, or an error when the masks
/// (new axes against the ellipsis) make more dimensions than the input has.
fn input_dim(input: &[usize], k: usize) -> Result<usize> {
    input.get(k).copied().ok_or_else(|| masks_do_not_fit(input))
}

#[cold]
fn masks_do_not_fit(input: &[usize]) -> Error {
    Error::invalid_argument(format!(
        "STRIDED_SLICE: the new-axis and ellipsis masks do not fit an input of shape {input}",
        input = op_core::error::dims(input)
    ))
}

/// `(batch, outer, axis_size, inner, coords)` and the axis and batch
/// dimensions. Allocates nothing: the compute function calls it.
fn gather_geometry(
    params: &[usize],
    indices: &[usize],
    p: &GatherParams,
) -> Result<([usize; 5], usize, usize)> {
    num_elements(params)?;
    num_elements(indices)?;
    let axis = normalize_axis("GATHER: the axis", p.axis, params.len())?;
    let batch_dims = if p.batch_dims < 0 {
        p.batch_dims + indices.len() as i64
    } else {
        p.batch_dims
    };
    if batch_dims < 0 || batch_dims as usize > axis || batch_dims as usize > indices.len() {
        return Err(Error::invalid_argument(format!(
            "GATHER: batch_dims {} must be in [0, min(axis {axis}, indices rank {})]",
            p.batch_dims,
            indices.len()
        )));
    }
    let bd = batch_dims as usize;
    if params[..bd] != indices[..bd] {
        return Err(Error::invalid_argument(format!(
            "GATHER: the first {bd} dimensions of the params {params} and the indices {indices} differ",
            params = op_core::error::dims(params),
            indices = op_core::error::dims(indices)
        )));
    }
    let sizes = [
        params[..bd].iter().product(),
        params[bd..axis].iter().product(),
        params[axis],
        params[axis + 1..].iter().product(),
        indices[bd..].iter().product(),
    ];
    Ok((sizes, axis, bd))
}

/// GATHER's output shape: `params[:axis] + indices[batch_dims:] +
/// params[axis + 1:]`.
///
/// ```
/// use op_lite::builtins::math::shape_ops::{GatherParams, gather_shape};
/// let p = GatherParams { axis: 1, batch_dims: 0 };
/// assert_eq!(gather_shape(&[3, 5, 2], &[4, 1], &p).unwrap(), [3, 4, 1, 2]);
/// ```
pub fn gather_shape(params: &[usize], indices: &[usize], p: &GatherParams) -> Result<Vec<usize>> {
    let (_, axis, bd) = gather_geometry(params, indices, p)?;
    let mut out = params[..axis].to_vec();
    out.extend_from_slice(&indices[bd..]);
    out.extend_from_slice(&params[axis + 1..]);
    num_elements(&out)?;
    Ok(out)
}

/// GATHER into `output` of [`gather_shape`]; an index outside `[0,
/// params[axis])` is an error (TensorFlow Lite's "gather index out of
/// bounds"), found before anything is written.
pub fn gather<T: Copy, I: Copy + Into<i64>>(
    p: &GatherParams,
    params_shape: &[usize],
    params: &[T],
    indices_shape: &[usize],
    indices: &[I],
    output: &mut [T],
) -> Result<()> {
    let ([batch, outer, axis_size, inner, coords], _, _) =
        gather_geometry(params_shape, indices_shape, p)?;
    check_len("GATHER: the params", params.len(), params_shape)?;
    check_len("GATHER: the indices", indices.len(), indices_shape)?;
    let expected = num_elements(&[batch, outer, coords, inner])?;
    if output.len() != expected {
        return Err(Error::invalid_argument(format!(
            "GATHER: the output has {} elements, expected {expected}",
            output.len(),
        )));
    }
    if let Some(bad) = indices
        .iter()
        .map(|&i| i.into())
        .find(|&i| i < 0 || i >= axis_size as i64)
    {
        return Err(Error::invalid_argument(format!(
            "GATHER: index {bad} is out of bounds for an axis of size {axis_size}"
        )));
    }
    let mut rows = output.chunks_exact_mut(inner.max(1));
    for b in 0..batch {
        for o in 0..outer {
            for &index in &indices[b * coords..(b + 1) * coords] {
                let from = ((b * outer + o) * axis_size + index.into() as usize) * inner;
                if let Some(row) = rows.next() {
                    row.copy_from_slice(&params[from..from + inner]);
                }
            }
        }
    }
    Ok(())
}

/// CUMSUM's options.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct CumSumParams {
    /// Each output excludes its own element (the first is 0).
    pub exclusive: bool,
    /// Sum from the end of the axis.
    pub reverse: bool,
}

/// CUMSUM's output shape: the input's (`axis` must be in range).
pub fn cumsum_shape(input: &[usize], axis: i64) -> Result<Vec<usize>> {
    num_elements(input)?;
    normalize_axis("CUMSUM: the axis", axis, input.len())?;
    Ok(input.to_vec())
}

/// CUMSUM along `axis` into `output` of the input's shape (integers wrap).
///
/// ```
/// use op_lite::builtins::math::shape_ops::{CumSumParams, cumsum};
/// let mut out = [0; 4];
/// let p = CumSumParams { exclusive: true, reverse: true };
/// cumsum(&p, &[4], &[1, 2, 3, 4], 0, &mut out).unwrap();
/// assert_eq!(out, [9, 7, 4, 0]);
/// ```
pub fn cumsum<T: Number>(
    params: &CumSumParams,
    input_shape: &[usize],
    input: &[T],
    axis: i64,
    output: &mut [T],
) -> Result<()> {
    num_elements(input_shape)?;
    let axis = normalize_axis("CUMSUM: the axis", axis, input_shape.len())?;
    check_len("CUMSUM: the input", input.len(), input_shape)?;
    check_len("CUMSUM: the output", output.len(), input_shape)?;
    let outer: usize = input_shape[..axis].iter().product();
    let len = input_shape[axis];
    let inner: usize = input_shape[axis + 1..].iter().product();
    for o in 0..outer {
        for i in 0..inner {
            let mut acc = T::ZERO;
            for step in 0..len {
                let a = if params.reverse { len - 1 - step } else { step };
                let at = (o * len + a) * inner + i;
                if params.exclusive {
                    output[at] = acc;
                    acc = acc.add(input[at]);
                } else {
                    acc = acc.add(input[at]);
                    output[at] = acc;
                }
            }
        }
    }
    Ok(())
}

/// A conversion CAST performs, as TensorFlow Lite's `cast.cc` does it.
pub trait CastTo<U> {
    /// `self` as a `U`.
    fn cast(self) -> U;
}

macro_rules! cast_as {
    ($($from:ty => $($to:ty),*;)*) => {$($(
        impl CastTo<$to> for $from {
            fn cast(self) -> $to {
                self as $to
            }
        }
    )*)*};
}
// Integer narrowing wraps; float to int64 saturates (NaN to 0) where C++'s
// static_cast is undefined.
cast_as! {
    f32 => f32, i64;
    i32 => f32, i32, i64;
    i64 => f32, i32, i64;
    // The small integers widen exactly: a float model's uint8 image input
    // is cast to float32 first.
    u8 => f32, i32, i64;
    i8 => f32, i32, i64;
    i16 => f32, i32, i64;
}

impl CastTo<i32> for f32 {
    /// cast.cc's float-to-int32: saturating, NaN to `i32::MAX`.
    fn cast(self) -> i32 {
        // nextafterf((float)INT32_MAX, 0), the largest float below 2^31.
        const MAX_BELOW: f32 = 2_147_483_520.0;
        if self <= MAX_BELOW {
            (if self < i32::MIN as f32 {
                i32::MIN as f32
            } else {
                self
            }) as i32
        } else {
            i32::MAX
        }
    }
}

macro_rules! cast_bool {
    ($($t:ty: $zero:expr, $one:expr;)*) => {$(
        impl CastTo<bool> for $t {
            fn cast(self) -> bool {
                self != $zero
            }
        }
        impl CastTo<$t> for bool {
            fn cast(self) -> $t {
                if self { $one } else { $zero }
            }
        }
    )*};
}
cast_bool! {
    f32: 0.0, 1.0;
    i32: 0, 1;
    i64: 0, 1;
}

impl CastTo<bool> for bool {
    fn cast(self) -> bool {
        self
    }
}

/// CAST elementwise from `A` to `B` (float32, int32, int64, bool; and
/// from uint8, int8, int16), into `output` of the same length.
///
/// ```
/// use op_lite::builtins::math::shape_ops::cast;
/// let mut out = [0i32; 4];
/// cast(&[f32::NAN, 3e9, -1.7, 2.9], &mut out).unwrap();
/// assert_eq!(out, [i32::MAX, i32::MAX, -1, 2]);
/// ```
pub fn cast<A: CastTo<B> + Copy, B>(input: &[A], output: &mut [B]) -> Result<()> {
    if input.len() != output.len() {
        return Err(Error::invalid_argument(format!(
            "CAST: the output has {} elements, the input {}",
            output.len(),
            input.len()
        )));
    }
    for (o, &x) in output.iter_mut().zip(input) {
        *o = x.cast();
    }
    Ok(())
}
