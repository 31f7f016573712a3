//! The arithmetic of the reductions, over slices, for every device's
//! kernels to share: one engine, generic over the element type and the
//! reducer.
//!
//! - [`Accumulate`]: the type sums, products and maxima are accumulated in
//!   (the element type itself, `f32` for `half` and `bfloat16`);
//! - [`Reducible`]: the element types, each with its accumulator;
//! - [`Reducer`]: what a reduction does ([`SumReducer`], [`ProdReducer`],
//!   [`MaxReducer`], [`MeanReducer`]: a sum, then a division);
//! - [`reduce_pass`]: one `[outer, reduced, inner]` pass over a part of its
//!   output, the loop every kernel runs;
//! - [`reduce_into`]: a whole [`ReductionPlan`], split over a thread pool
//!   (pass [`ThreadPool::single`] to run on the caller).

use std::ops::Range;
use std::sync::OnceLock;

use op_core::threads::{MIN_COST_PER_SHARD, ThreadPool};
use op_core::{Element, bf16, f16};

use super::axes::{Pass, ReductionPlan};

/// A type reductions accumulate in. Integers wrap on overflow, as
/// TensorFlow's do; the maximum of floats is NaN if any element is NaN.
pub trait Accumulate: Copy + Send + Sync + 'static {
    /// `0`: the sum of nothing.
    const ZERO: Self;
    /// `1`: the product of nothing.
    const ONE: Self;
    /// The lowest value (`-inf` for floats): the maximum of nothing.
    const LOWEST: Self;
    /// `self + other`.
    fn plus(self, other: Self) -> Self;
    /// `self * other`.
    fn times(self, other: Self) -> Self;
    /// The larger of the two (NaN if either is).
    fn maximum(self, other: Self) -> Self;
    /// `self / count`, for the mean of `count` elements whose sum is
    /// `self`: NaN for floats when `count` is 0, and 0 for integers
    /// (TensorFlow's results); integers divide truncating toward zero.
    fn mean_of(self, count: usize) -> Self;
}

macro_rules! accumulate_float {
    ($($t:ty),*) => {$(
        impl Accumulate for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const LOWEST: Self = <$t>::NEG_INFINITY;
            #[inline(always)]
            fn plus(self, other: Self) -> Self { self + other }
            #[inline(always)]
            fn times(self, other: Self) -> Self { self * other }
            #[inline(always)]
            fn maximum(self, other: Self) -> Self {
                // Once `self` is NaN, nothing compares greater: it stays.
                if other > self || other.is_nan() { other } else { self }
            }
            #[inline]
            fn mean_of(self, count: usize) -> Self { self / count as $t }
        }
    )*};
}

macro_rules! accumulate_int {
    ($($t:ty),*) => {$(
        impl Accumulate for $t {
            const ZERO: Self = 0;
            const ONE: Self = 1;
            const LOWEST: Self = <$t>::MIN;
            #[inline(always)]
            fn plus(self, other: Self) -> Self { self.wrapping_add(other) }
            #[inline(always)]
            fn times(self, other: Self) -> Self { self.wrapping_mul(other) }
            #[inline(always)]
            fn maximum(self, other: Self) -> Self { Ord::max(self, other) }
            #[inline]
            fn mean_of(self, count: usize) -> Self {
                // A count past the type's range exceeds any sum's size, so
                // the quotient is 0; a count of 0 means a sum of 0.
                match <$t>::try_from(count) {
                    Ok(0) | Err(_) => 0,
                    Ok(count) => self / count,
                }
            }
        }
    )*};
}

accumulate_float!(f32, f64);
accumulate_int!(i32, i64);

/// An element type the reduction kernels take, with the type it
/// accumulates in.
pub trait Reducible: Element + Copy + Send + Sync {
    /// The accumulator: `Self`, or `f32` for the 16-bit floats (whose sums
    /// would lose precision, or overflow, in 16 bits).
    type Acc: Accumulate;
    /// The element as an accumulator.
    fn to_acc(self) -> Self::Acc;
    /// An accumulated value as an element (rounded for the 16-bit floats).
    fn from_acc(acc: Self::Acc) -> Self;
}

macro_rules! reducible_as_itself {
    ($($t:ty),*) => {$(
        impl Reducible for $t {
            type Acc = $t;
            #[inline(always)]
            fn to_acc(self) -> $t { self }
            #[inline(always)]
            fn from_acc(acc: $t) -> $t { acc }
        }
    )*};
}

macro_rules! reducible_in_f32 {
    ($($t:ty),*) => {$(
        impl Reducible for $t {
            type Acc = f32;
            #[inline(always)]
            fn to_acc(self) -> f32 { self.to_f32() }
            #[inline(always)]
            fn from_acc(acc: f32) -> $t { <$t>::from_f32(acc) }
        }
    )*};
}

reducible_as_itself!(f32, f64, i32, i64);
reducible_in_f32!(f16, bf16);

/// What a reduction computes, over any accumulator: an identity, an
/// associative combination, and a last step given the element count.
pub trait Reducer: Copy + Send + Sync + 'static {
    /// The result of reducing nothing.
    fn identity<A: Accumulate>() -> A;
    /// Two partial results as one (associative and commutative, so that
    /// partial results may be combined in any grouping).
    fn combine<A: Accumulate>(a: A, b: A) -> A;
    /// The result from the combination of `count` elements.
    #[inline(always)]
    fn finish<A: Accumulate>(acc: A, _count: usize) -> A {
        acc
    }
}

/// Declares the reducers: each an identity and a combination (and
/// `Mean` a last step, the division).
macro_rules! reducers {
    ($(
        $(#[$doc:meta])*
        $name:ident: $identity:ident, $combine:ident $(, finish = $finish:ident)?;
    )*) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default)]
        pub struct $name;

        impl Reducer for $name {
            #[inline(always)]
            fn identity<A: Accumulate>() -> A {
                A::$identity
            }
            #[inline(always)]
            fn combine<A: Accumulate>(a: A, b: A) -> A {
                a.$combine(b)
            }
            $(
                #[inline]
                fn finish<A: Accumulate>(acc: A, count: usize) -> A {
                    acc.$finish(count)
                }
            )?
        }
    )*};
}

reducers! {
    /// `Sum`: the sum of the elements (0 for none).
    SumReducer: ZERO, plus;
    /// `Prod`: the product of the elements (1 for none).
    ProdReducer: ONE, times;
    /// `Max`: the largest element (the lowest value for none; NaN if any is
    /// NaN).
    MaxReducer: LOWEST, maximum;
    /// `Mean`: the sum divided by the count (NaN for no float elements, 0
    /// for no integer elements; integer means truncate toward zero).
    MeanReducer: ZERO, plus, finish = mean_of;
}

/// One step of a cumulative sum or product (`R`, [`SumReducer`] or
/// [`ProdReducer`]) over rows: `out[i] = prev[i] (+ or *) x[i]`,
/// accumulated as [`Reducible::Acc`] (and rounded once per step for the
/// 16-bit floats).
#[inline]
pub fn scan_step<T: Reducible, R: Reducer>(prev: &[T], x: &[T], out: &mut [T]) {
    for ((o, &p), &v) in out.iter_mut().zip(prev).zip(x) {
        *o = T::from_acc(R::combine(p.to_acc(), v.to_acc()));
    }
}

/// The order in which a cumulative sum or product (`Cumsum`, `Cumprod`)
/// visits the rows of its axis, and which input row each output row takes
/// in.
///
/// Output row `row` of a scan of `len` rows combines the input rows
/// before it (`exclusive`) or up to it, counted from the end when
/// `reverse`. [`rows`](Self::rows) lists `(row, previous, source)`: the
/// output row, the output row computed just before it (none for the
/// first), and the input row combined into it (none for the first row of
/// an exclusive scan, which is the reducer's identity: zeros, ones).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scan {
    /// The length of the scanned axis.
    pub len: usize,
    /// Whether each row leaves out its own input row.
    pub exclusive: bool,
    /// Whether the scan runs from the last row to the first.
    pub reverse: bool,
}

impl Scan {
    /// `(row, previous, source)` for each output row, in the scan's order.
    ///
    /// ```
    /// use op_kernels::reduction::Scan;
    /// let scan = Scan { len: 3, exclusive: true, reverse: true };
    /// let rows: Vec<_> = scan.rows().collect();
    /// assert_eq!(rows, [(2, None, None), (1, Some(2), Some(2)), (0, Some(1), Some(1))]);
    /// ```
    pub fn rows(self) -> impl Iterator<Item = (usize, Option<usize>, Option<usize>)> {
        (0..self.len).map(move |k| {
            let at = |k: usize| if self.reverse { self.len - 1 - k } else { k };
            let row = at(k);
            let previous = k.checked_sub(1).map(at);
            let source = if self.exclusive { previous } else { Some(row) };
            (row, previous, source)
        })
    }
}

/// The cumulative sum or product (`R`) along the middle axis of `x`, read
/// as the row-major `[outer, scan.len, inner]` array, into `out` (of
/// `x`'s length), one outer index after the other on the caller's thread.
///
/// ```
/// use op_kernels::reduction::{ProdReducer, Scan, SumReducer, scan_into};
/// let x = [1.0f32, 2.0, 3.0, 4.0];
/// let mut out = [0.0; 4];
/// let forward = Scan { len: 4, exclusive: false, reverse: false };
/// scan_into::<_, ProdReducer>(&x, forward, 1, &mut out);
/// assert_eq!(out, [1.0, 2.0, 6.0, 24.0]);
/// scan_into::<_, SumReducer>(&x, forward, 1, &mut out);
/// assert_eq!(out, [1.0, 3.0, 6.0, 10.0]);
/// let backward = Scan { len: 4, exclusive: true, reverse: true };
/// scan_into::<_, ProdReducer>(&x, backward, 1, &mut out);
/// assert_eq!(out, [24.0, 12.0, 4.0, 1.0]);
/// ```
pub fn scan_into<T: Reducible, R: Reducer>(x: &[T], scan: Scan, inner: usize, out: &mut [T]) {
    let chunk = scan.len * inner;
    if chunk == 0 {
        return;
    }
    for (x, out) in x.chunks(chunk).zip(out.chunks_mut(chunk)) {
        for rows in scan.rows() {
            scan_row::<T, R>(x, out, inner, rows, scan_step::<T, R>);
        }
    }
}

/// Output row `row` of one `[len, inner]` chunk of a cumulative sum or
/// product (`R`): `step(previous row, x[source], row)` when there are both
/// (the kernel passes a `step` that splits the row over threads, others
/// [`scan_step`]), `x[source]` for no previous row, `R`'s identity for
/// neither.
#[inline]
pub fn scan_row<T: Reducible, R: Reducer>(
    x: &[T],
    out: &mut [T],
    inner: usize,
    (row, previous, source): (usize, Option<usize>, Option<usize>),
    step: impl FnOnce(&[T], &[T], &mut [T]),
) {
    let rows = |r: usize| r * inner..(r + 1) * inner;
    match (previous, source) {
        (Some(p), Some(s)) => {
            // Rows of one chunk never overlap: split to borrow both.
            let (before, after) = out.split_at_mut(row.max(p) * inner);
            let (prev, target) = if p < row {
                (&before[rows(p)], &mut after[..inner])
            } else {
                (&after[..inner], &mut before[rows(row)])
            };
            step(prev, &x[rows(s)], target);
        }
        (None, Some(s)) => out[rows(row)].copy_from_slice(&x[rows(s)]),
        _ => out[rows(row)].fill(T::from_acc(R::identity())),
    }
}

/// Independent accumulators for a contiguous run: they break the chain of
/// dependent additions, so the loop vectorizes (and float sums round less).
const LANES: usize = 8;

/// `R` over a contiguous run of elements.
#[inline]
fn fold_run<X: Copy, A: Accumulate, R: Reducer>(run: &[X], load: &impl Fn(X) -> A) -> A {
    let mut lanes = [R::identity::<A>(); LANES];
    let mut chunks = run.chunks_exact(LANES);
    for chunk in &mut chunks {
        for (lane, x) in lanes.iter_mut().zip(chunk) {
            *lane = R::combine(*lane, load(*x));
        }
    }
    let mut acc = lanes.into_iter().fold(R::identity::<A>(), R::combine);
    for x in chunks.remainder() {
        acc = R::combine(acc, load(*x));
    }
    acc
}

/// One pass of `R`, over part of it: `input`, read as the row-major
/// `[outer, reduced, inner]` array of `pass`, is reduced over its middle
/// axis, over the rows `rows` (all of `0..pass.reduced`, or a part of them
/// when a long reduction is split), into the elements
/// `start..start + output.len()` of the `[outer, inner]` result. Each input
/// element goes through `load` (to the accumulator) and each result
/// through `finish`.
///
/// # Panics
///
/// If `input` is shorter than the pass reads or the output range or `rows`
/// are outside the pass (the callers derive them from the pass).
pub fn reduce_pass<X: Copy, A: Accumulate, Y, R: Reducer>(
    input: &[X],
    pass: Pass,
    rows: Range<usize>,
    start: usize,
    output: &mut [Y],
    load: impl Fn(X) -> A,
    finish: impl Fn(A) -> Y,
) {
    let Pass { reduced, inner, .. } = pass;
    if inner == 1 {
        // Each output element reduces a contiguous run.
        for (j, out) in output.iter_mut().enumerate() {
            let row = (start + j) * reduced;
            *out = finish(fold_run::<X, A, R>(
                &input[row + rows.start..row + rows.end],
                &load,
            ));
        }
        return;
    }
    // Each output element reduces a strided column: accumulate whole row
    // segments at once, a loop along contiguous memory that vectorizes.
    let mut acc: Vec<A> = Vec::with_capacity(inner.min(output.len()));
    let mut j = 0;
    while j < output.len() {
        let (outer_index, first) = ((start + j) / inner, (start + j) % inner);
        let len = (inner - first).min(output.len() - j);
        acc.clear();
        acc.resize(len, R::identity());
        let base = outer_index * reduced * inner + first;
        for r in rows.clone() {
            let segment = &input[base + r * inner..][..len];
            for (a, x) in acc.iter_mut().zip(segment) {
                *a = R::combine(*a, load(*x));
            }
        }
        for (out, a) in output[j..j + len].iter_mut().zip(&acc) {
            *out = finish(*a);
        }
        j += len;
    }
}

/// A long reduction into few outputs is split into at most this many
/// blocks of rows, each reduced into a partial result.
const MAX_ROW_BLOCKS: usize = 64;

/// Rows are split only when the output spans fewer cache lines than this
/// (else the output elements alone give enough blocks).
const ROW_SPLIT_LINES: usize = 16;

/// One whole pass of `R` over `input` into `output` (`pass.outputs()`
/// elements), split over `threads`: by output elements when there are
/// enough of them, else by blocks of rows of the reduced axis into partial
/// results that are then combined in order (a full reduction to one value
/// still uses every thread).
///
/// Which of the two, and the blocks of rows, follow from the pass alone,
/// never from the number of threads, which only decides how many blocks
/// run at once: a float sum associates the same way, so gives the same
/// bits, on any number of threads (opcheck checks 1 against 4).
fn run_pass<X, A, Y, R>(
    threads: &ThreadPool,
    input: &[X],
    pass: Pass,
    output: &mut [Y],
    load: impl Fn(X) -> A + Sync,
    finish: impl Fn(A) -> Y + Sync,
) where
    X: Copy + Sync,
    A: Accumulate,
    Y: Send,
    R: Reducer,
{
    let outputs = output.len();
    if outputs == 0 {
        return;
    }
    // `shard_slice` splits the output in whole cache lines: with few of
    // them, split the rows instead, in blocks each worth a shard of work.
    let lines = outputs.div_ceil((64 / size_of::<Y>().max(1)).max(1));
    let per_block = MIN_COST_PER_SHARD
        .div_ceil(outputs)
        .max(pass.reduced.div_ceil(MAX_ROW_BLOCKS))
        .max(1);
    let row_blocks = pass.reduced.div_ceil(per_block);
    if lines >= ROW_SPLIT_LINES || row_blocks <= 1 {
        threads.shard_slice(output, pass.reduced.max(1), |start, block| {
            reduce_pass::<X, A, Y, R>(input, pass, 0..pass.reduced, start, block, &load, &finish);
        });
        return;
    }
    let partials: Vec<OnceLock<Vec<A>>> = (0..row_blocks).map(|_| OnceLock::new()).collect();
    // One unit per block, each worth a block of its own.
    threads.shard(row_blocks, usize::MAX / row_blocks, |blocks| {
        for b in blocks {
            // `row_blocks` rounds up, so no block starts past the end;
            // the bound keeps that true whatever the sizes.
            let first = pass.reduced.min(b * per_block);
            let rows = first..pass.reduced.min((b + 1) * per_block);
            let mut partial = vec![R::identity::<A>(); outputs];
            reduce_pass::<X, A, A, R>(input, pass, rows, 0, &mut partial, &load, |a| a);
            let _ = partials[b].set(partial);
        }
    });
    for (j, out) in output.iter_mut().enumerate() {
        let acc = partials
            .iter()
            .filter_map(OnceLock::get)
            .fold(R::identity::<A>(), |acc, partial| {
                R::combine(acc, partial[j])
            });
        *out = finish(acc);
    }
}

/// The reduction `R` of `input` by `plan` into `output` (of
/// `plan.output_dims`' size), split over `threads`.
///
/// A plan of one pass writes the output directly; a plan of several keeps
/// its intermediate results in the accumulator type, so that 16-bit floats
/// round once, at the end.
///
/// ```
/// use op_core::threads::{MIN_COST_PER_SHARD, ThreadPool};
/// use op_kernels::reduction::{ReductionPlan, SumReducer, reduce_into};
///
/// // [[1, 2, 3], [4, 5, 6]] summed over axis 0.
/// let plan = ReductionPlan::new(&[2, 3], &[0], false)?;
/// let mut out = [0.0f32; 3];
/// reduce_into::<f32, SumReducer>(&ThreadPool::single(), &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &plan, &mut out);
/// assert_eq!(out, [5.0, 7.0, 9.0]);
/// # Ok::<(), op_core::Error>(())
/// ```
///
/// # Panics
///
/// If `input` or `output` does not have the size the plan was made for.
pub fn reduce_into<T: Reducible, R: Reducer>(
    threads: &ThreadPool,
    input: &[T],
    plan: &ReductionPlan,
    output: &mut [T],
) {
    let count = plan.reduced_count;
    let done = move |acc: T::Acc| T::from_acc(R::finish(acc, count));
    match plan.passes.as_slice() {
        [] => output.copy_from_slice(input),
        [pass] => {
            assert_eq!(input.len(), pass.inputs(), "input size");
            assert_eq!(output.len(), pass.outputs(), "output size");
            run_pass::<T, T::Acc, T, R>(threads, input, *pass, output, T::to_acc, done);
        }
        [first, middle @ .., last] => {
            assert_eq!(input.len(), first.inputs(), "input size");
            assert_eq!(output.len(), last.outputs(), "output size");
            let mut acc = vec![R::identity::<T::Acc>(); first.outputs()];
            run_pass::<T, T::Acc, T::Acc, R>(threads, input, *first, &mut acc, T::to_acc, |a| a);
            for pass in middle {
                let mut next = vec![R::identity::<T::Acc>(); pass.outputs()];
                run_pass::<T::Acc, T::Acc, T::Acc, R>(
                    threads,
                    &acc,
                    *pass,
                    &mut next,
                    |a| a,
                    |a| a,
                );
                acc = next;
            }
            run_pass::<T::Acc, T::Acc, T, R>(threads, &acc, *last, output, |a| a, done);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_maxima_propagate_nan_wherever_it_is() {
        for values in [
            [f32::NAN, 1.0, 2.0],
            [1.0, f32::NAN, 2.0],
            [1.0, 2.0, f32::NAN],
        ] {
            assert!(fold_run::<f32, f32, MaxReducer>(&values, &|x| x).is_nan());
        }
    }

    #[test]
    fn rows_split_into_blocks_are_each_reduced_once() {
        // 100_000 rows into one output: 64 blocks of 1563, the last short.
        let pool = ThreadPool::new(4).unwrap();
        let plan = ReductionPlan::new(&[100_000], &[0], false).unwrap();
        let input: Vec<i64> = (1..=100_000).collect();
        let mut out = [0i64];
        reduce_into::<i64, SumReducer>(&pool, &input, &plan, &mut out);
        assert_eq!(out, [5_000_050_000]);
    }

    #[test]
    fn a_float_sum_gives_the_same_bits_on_any_number_of_threads() {
        // Values whose sum rounds differently in every grouping.
        let input: Vec<f32> = (0..200_003)
            .map(|i| ((i * 7919) % 1000) as f32 * 1.37e-3 - 0.61)
            .collect();
        for (dims, axes) in [
            (vec![200_003], vec![0]),
            (vec![3, 66_667, 1], vec![1]),
            (vec![200_003, 1], vec![0]),
        ] {
            let dims: Vec<usize> = dims;
            let n: usize = dims.iter().product();
            let plan = ReductionPlan::new(&dims, &axes, false).unwrap();
            let mut results = Vec::new();
            for threads in [1, 2, 3, 4, 7] {
                let pool = ThreadPool::new(threads).unwrap();
                let mut out = vec![0.0f32; plan.output_dims.iter().product()];
                reduce_into::<f32, SumReducer>(&pool, &input[..n], &plan, &mut out);
                results.push(out.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
            }
            assert!(
                results.windows(2).all(|w| w[0] == w[1]),
                "{dims:?}: {results:?}"
            );
        }
    }

    #[test]
    fn integer_means_of_nothing_or_of_huge_counts_are_zero() {
        assert_eq!(0i32.mean_of(0), 0);
        assert_eq!(7i32.mean_of(usize::MAX), 0);
        assert_eq!((-7i64).mean_of(2), -3);
        assert!(0.0f32.mean_of(0).is_nan());
    }
}
