//! Elementwise kernels: the op's arithmetic as a plain generic function of
//! elements, applied over slices by code shared by every kernel.
//!
//! This is seed 003's functor pattern in Rust. The op's math is one generic
//! function (`|x: &T| x.double()`: TensorFlow's `ExampleFunctor`), written
//! once for every element type; the slice functions here
//! ([`map_into`], [`map_in_place`], [`zip_map_into`], [`zip3_map_into`],
//! and for broadcasts [`zip_lanes_into`] and [`zip_lane_in_place`]) apply
//! it to a block of elements, the same way for the CPU kernel (block
//! by block over the runtime's threads) and for any other caller that holds
//! slices (a later lite runtime over its arena, a test); a GPU functor will
//! sit beside them.
//!
//! In a kernel, [`KernelContext::unary`] and its siblings do the rest:
//! they reuse the input's buffer when the caller handed it over (in place),
//! else allocate the output from the runtime's allocator *without* zeroing
//! it, and split the work over the runtime's threads by the cost given per
//! element (in CPU cycles: 1 for an add, about 20-50 for `sin` or `exp`).
//! Skipping the zeroing is safe because these helpers write every element
//! of the output from the function before anything can read it: a kernel
//! never sees what an earlier tensor left in reused memory.
//!
//! Binary and ternary ops broadcast their inputs NumPy style through
//! [`KernelContext::broadcast_binary`] and its siblings: inputs of one
//! shape are zipped, a one-element input is repeated, and anything else is
//! walked by a [`Broadcast`] plan (the [`broadcast`] module, plain index
//! arithmetic that a lite runtime can walk over its own slices). They too
//! write into an input's buffer when the caller handed it over and it has
//! as many elements as the output, so that chains of elementwise ops in a
//! graph run in place.
//!
//! ```
//! use op_core::{Element, KernelContext, Result, kernel, register_op};
//!
//! /// The arithmetic, once for every element type.
//! fn square<T: Element + Copy + std::ops::Mul<Output = T>>(x: &T) -> T {
//!     *x * *x
//! }
//!
//! #[register_op(attrs("T: {float, double}"), inputs("x: T"), outputs("y: T"))]
//! pub struct MySquare;
//!
//! #[kernel(op = MySquare, types(f32, f64))]
//! fn my_square<T: Element + Copy + std::ops::Mul<Output = T>>(ctx: &mut KernelContext<'_>) -> Result<()> {
//!     ctx.unary(0, 0, 1, square::<T>)
//! }
//!
//! // The same arithmetic over plain slices, outside any kernel.
//! let mut out = [0.0f32; 3];
//! op_core::elementwise::map_into(&[1.0, 2.0, 3.0], &mut out, square);
//! assert_eq!(out, [1.0, 4.0, 9.0]);
//! ```

pub mod broadcast;

use std::cell::Cell;
use std::sync::Mutex;

pub use broadcast::{Broadcast, Run};

use crate::context::KernelContext;
use crate::element::Element;
use crate::tensor::Tensor;
use crate::{Code, Error, Result, TensorShape};

/// `output[i] = f(&input[i])` for every `i` of the shorter of the two.
#[inline]
pub fn map_into<T, U>(input: &[T], output: &mut [U], f: impl Fn(&T) -> U) {
    for (out, x) in output.iter_mut().zip(input) {
        *out = f(x);
    }
}

/// `values[i] = f(&values[i])` for every `i`.
#[inline]
pub fn map_in_place<T>(values: &mut [T], f: impl Fn(&T) -> T) {
    for value in values {
        *value = f(value);
    }
}

/// `output[i] = f(&a[i], &b[i])` for every `i` of the shortest.
#[inline]
pub fn zip_map_into<A, B, U>(a: &[A], b: &[B], output: &mut [U], f: impl Fn(&A, &B) -> U) {
    for (out, (a, b)) in output.iter_mut().zip(a.iter().zip(b)) {
        *out = f(a, b);
    }
}

/// `output[i] = f(&a[i], &b[i], &c[i])` for every `i` of the shortest.
#[inline]
pub fn zip3_map_into<A, B, C, U>(
    a: &[A],
    b: &[B],
    c: &[C],
    output: &mut [U],
    f: impl Fn(&A, &B, &C) -> U,
) {
    for (out, ((a, b), c)) in output.iter_mut().zip(a.iter().zip(b).zip(c)) {
        *out = f(a, b, c);
    }
}

/// One operand's elements for a stretch of output elements, in a
/// broadcast: one element per output element, or one element for all of
/// them (a stretched operand, or a scalar).
#[derive(Debug)]
pub enum Lane<'a, T> {
    /// One element per output element.
    Each(&'a [T]),
    /// The same element for every output element.
    Same(&'a T),
}

impl<T> Clone for Lane<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Lane<'_, T> {}

impl<'a, T> Lane<'a, T> {
    /// The lane of a [`Run`]'s operand: `len` elements of `values` from
    /// `start` when `step` is 1, else the element at `start`.
    ///
    /// # Panics
    ///
    /// If the elements are not all in `values`.
    #[inline]
    pub fn of_run(values: &'a [T], start: usize, step: usize, len: usize) -> Lane<'a, T> {
        if step == 0 {
            Lane::Same(&values[start])
        } else {
            Lane::Each(&values[start..start + len])
        }
    }

    /// The element for output element `j`.
    #[inline]
    pub fn get(&self, j: usize) -> &'a T {
        match *self {
            Lane::Each(values) => &values[j],
            Lane::Same(value) => value,
        }
    }
}

/// `output[j] = f(a[j], b[j])` over two lanes (each one element per output
/// element, or one for all). Each combination of lanes is its own loop, so
/// that the common ones (two slices, a slice and a scalar) vectorize.
#[inline]
pub fn zip_lanes_into<A, B, U>(
    a: Lane<'_, A>,
    b: Lane<'_, B>,
    output: &mut [U],
    f: impl Fn(&A, &B) -> U,
) {
    match (a, b) {
        (Lane::Each(a), Lane::Each(b)) => zip_map_into(a, b, output, f),
        (Lane::Each(a), Lane::Same(b)) => map_into(a, output, |a| f(a, b)),
        (Lane::Same(a), Lane::Each(b)) => map_into(b, output, |b| f(a, b)),
        (Lane::Same(a), Lane::Same(b)) => output.iter_mut().for_each(|out| *out = f(a, b)),
    }
}

/// `values[j] = f(values[j], other[j])` over a lane (see
/// [`zip_lanes_into`]): a binary op written into its first operand's
/// buffer.
#[inline]
pub fn zip_lane_in_place<T>(values: &mut [T], other: Lane<'_, T>, f: impl Fn(&T, &T) -> T) {
    match other {
        Lane::Each(other) => {
            for (v, o) in values.iter_mut().zip(other) {
                *v = f(v, o);
            }
        }
        Lane::Same(o) => map_in_place(values, |v| f(v, o)),
    }
}

/// Whether an output of `count` elements of `T` is worth writing into an
/// input's buffer: not when it is small enough to live inside the tensor
/// (a scalar), where there is no buffer to save and a new one costs less
/// than forwarding.
#[inline]
fn worth_forwarding<T>(count: usize) -> bool {
    count.saturating_mul(size_of::<T>()) > crate::tensor::storage::SMALL_BYTES
}

/// The runs covering `range` of a broadcast output: `plan`'s, or without a
/// plan one run in which operand `k` walks along with the output when
/// `full[k]` (it has the output's element count) and repeats its one
/// element otherwise.
#[inline]
fn runs<const N: usize>(
    plan: Option<&Broadcast<N>>,
    full: [bool; N],
    range: std::ops::Range<usize>,
    mut run: impl FnMut(Run<N>),
) {
    match plan {
        Some(plan) => plan.for_each_run(range, run),
        None if range.is_empty() => {}
        None => run(Run {
            starts: full.map(|f| if f { range.start } else { 0 }),
            steps: full.map(usize::from),
            output: range,
        }),
    }
}

/// The first error of a sharded computation, by element index, so that the
/// error a caller sees does not depend on how the work was split.
struct FirstError(Mutex<Option<(usize, Error)>>);

impl FirstError {
    fn new() -> Self {
        FirstError(Mutex::new(None))
    }

    fn record(&self, index: usize, error: Error) {
        let mut first = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if first.as_ref().is_none_or(|(i, _)| index < *i) {
            *first = Some((index, error));
        }
    }

    fn into_result(self) -> Result<()> {
        match self.0.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some((_, error)) => Err(error),
            None => Ok(()),
        }
    }
}

/// The first error of one block of a fallible elementwise computation:
/// the element function writes the type's default in a failing element's
/// place and goes on, so that its loop has one exit and vectorizes when
/// nothing can fail (the infallible helpers never touch it). Blocks are
/// walked in order, so the first error kept is the block's lowest.
struct BlockError(Cell<Option<Error>>);

impl BlockError {
    fn new() -> Self {
        BlockError(Cell::new(None))
    }

    /// Keeps `error` if it is the block's first; the value to write.
    #[cold]
    fn keep<U: Default>(&self, error: Error) -> U {
        let first = self.0.take();
        self.0.set(Some(first.unwrap_or(error)));
        U::default()
    }

    /// Hands the block's error, if any, to `first` (for the block at
    /// `offset`).
    fn report(self, offset: usize, first: &FirstError) {
        if let Some(error) = self.0.into_inner() {
            first.record(offset, error);
        }
    }
}

/// Elementwise kernels (see the [module docs](crate::elementwise)).
impl KernelContext<'_> {
    /// Output `output` gets input `input`'s shape and `f` of each of its
    /// elements: in the input's own buffer when the caller handed it over
    /// (a unique buffer of the output's dtype), else in a new buffer from
    /// the runtime's allocator. The work is split over the runtime's
    /// threads when `cost_per_element` (in CPU cycles) times the count is
    /// worth it. Every output element is written by `f`.
    ///
    /// Returns an `InvalidArgument` error if the input or output is not of
    /// type `T`, and the errors of
    /// [`allocate_output`](Self::allocate_output).
    ///
    /// ```
    /// # use op_core::{KernelContext, Result};
    /// // The body of a kernel of `Negate(x: float) -> y: float`.
    /// fn negate(ctx: &mut KernelContext<'_>) -> Result<()> {
    ///     ctx.unary(0, 0, 1, |x: &f32| -x)
    /// }
    /// ```
    pub fn unary<T: Element>(
        &mut self,
        input: usize,
        output: usize,
        cost_per_element: usize,
        f: impl Fn(&T) -> T + Sync,
    ) -> Result<()> {
        let threads = self.threads();
        let candidate = self.input(input)?;
        if candidate.is_unique() && candidate.dtype() == T::DTYPE {
            self.expect_output_dtype::<T>(output)?;
            let values = self
                .forward_input_to_output(input, output)?
                .as_slice_mut::<T>()?;
            threads.shard_slice(values, cost_per_element, |_, block| {
                map_in_place(block, &f);
            });
            return Ok(());
        }
        self.unary_to(input, output, cost_per_element, f)
    }

    /// Output `output` gets input `input`'s shape and `f` of each of its
    /// elements, in a new buffer of type `U` (see [`unary`](Self::unary),
    /// which reuses the input's buffer when `U` is `T`).
    ///
    /// Returns an `InvalidArgument` error if the input is not of type `T`
    /// or the output of type `U`, and the errors of
    /// [`allocate_output`](Self::allocate_output).
    pub fn unary_to<T: Element, U: Element>(
        &mut self,
        input: usize,
        output: usize,
        cost_per_element: usize,
        f: impl Fn(&T) -> U + Sync,
    ) -> Result<()> {
        let tensor = self.input(input)?;
        let x = self.typed(input, tensor)?;
        let shape = tensor.shape_ref();
        let tensor =
            self.filled_output::<U>(output, shape, cost_per_element, |offset, block| {
                map_into(&x[offset..], block, &f);
            })?;
        self.outputs_mut()[output] = Some(tensor);
        Ok(())
    }

    /// Like [`unary_to`](Self::unary_to), for a function that may fail:
    /// the error of the first failing element (by index, however the work
    /// was split) is returned, and the output is not set.
    pub fn try_unary_to<T: Element, U: Element>(
        &mut self,
        input: usize,
        output: usize,
        cost_per_element: usize,
        f: impl Fn(&T) -> Result<U> + Sync,
    ) -> Result<()> {
        let tensor = self.input(input)?;
        let x = self.typed(input, tensor)?;
        let shape = tensor.shape_ref();
        let first_error = FirstError::new();
        let tensor =
            self.filled_output::<U>(output, shape, cost_per_element, |offset, block| {
                for (i, (out, x)) in block.iter_mut().zip(&x[offset..]).enumerate() {
                    match f(x) {
                        Ok(value) => *out = value,
                        Err(error) => return first_error.record(offset + i, error),
                    }
                }
            })?;
        first_error.into_result()?;
        self.outputs_mut()[output] = Some(tensor);
        Ok(())
    }

    /// Output `output` gets `f(a[i], b[i])` for the elements of inputs `a`
    /// and `b`, which must have one shape (no broadcasting), in a new buffer
    /// of type `U`, split over the runtime's threads like
    /// [`unary`](Self::unary).
    ///
    /// Returns an `InvalidArgument` error naming both inputs if their shapes
    /// differ, or if an input or the output has another type.
    pub fn binary<A: Element, B: Element, U: Element>(
        &mut self,
        [a, b]: [usize; 2],
        output: usize,
        cost_per_element: usize,
        f: impl Fn(&A, &B) -> U + Sync,
    ) -> Result<()> {
        let shape = self.same_shape(&[a, b])?;
        let (a, b) = (self.input_slice::<A>(a)?, self.input_slice::<B>(b)?);
        let tensor =
            self.filled_output::<U>(output, shape, cost_per_element, |offset, block| {
                zip_map_into(&a[offset..], &b[offset..], block, &f);
            })?;
        self.outputs_mut()[output] = Some(tensor);
        Ok(())
    }

    /// Output `output` gets `f(a[i], b[i], c[i])` for the elements of three
    /// inputs of one shape, like [`binary`](Self::binary).
    pub fn ternary<A: Element, B: Element, C: Element, U: Element>(
        &mut self,
        [a, b, c]: [usize; 3],
        output: usize,
        cost_per_element: usize,
        f: impl Fn(&A, &B, &C) -> U + Sync,
    ) -> Result<()> {
        let shape = self.same_shape(&[a, b, c])?;
        let a = self.input_slice::<A>(a)?;
        let (b, c) = (self.input_slice::<B>(b)?, self.input_slice::<C>(c)?);
        let tensor =
            self.filled_output::<U>(output, shape, cost_per_element, |offset, block| {
                zip3_map_into(&a[offset..], &b[offset..], &c[offset..], block, &f);
            })?;
        self.outputs_mut()[output] = Some(tensor);
        Ok(())
    }

    /// Output `output` gets `f(a, b)` for the elements of inputs `a` and
    /// `b` broadcast together, NumPy style: shapes align from the right, and
    /// a dimension of size 1 (or a missing one) stretches to the other's
    /// size. The output has the broadcast shape.
    ///
    /// It is written into the buffer of `a`, else of `b`, when the caller
    /// handed that input over (a unique buffer of type `T`) and it has as
    /// many elements as the output (TensorFlow's
    /// `forward_input_or_allocate_output({0, 1}, ...)`); otherwise, and for
    /// an output small enough to live inside its tensor (a scalar), into a
    /// new buffer from the runtime's allocator. Inputs of one shape are
    /// zipped, a one-element input is repeated, and other shapes are walked
    /// by a [`Broadcast`] plan; the work is split over the runtime's threads
    /// by `cost_per_element` (in CPU cycles), as [`unary`](Self::unary)
    /// does.
    ///
    /// Returns an `InvalidArgument` error naming both inputs and their
    /// shapes when they do not broadcast (`Incompatible shapes: [2] vs.
    /// [3]`, as TensorFlow says), or when an input or the output is not of
    /// type `T`; and the errors of [`allocate_output`](Self::allocate_output).
    ///
    /// ```
    /// # use op_core::{KernelContext, Result};
    /// // The body of a kernel of `Add(x: float, y: float) -> z: float`.
    /// fn add(ctx: &mut KernelContext<'_>) -> Result<()> {
    ///     ctx.broadcast_binary([0, 1], 0, 1, |x: &f32, y: &f32| x + y)
    /// }
    /// ```
    pub fn broadcast_binary<T: Element>(
        &mut self,
        inputs: [usize; 2],
        output: usize,
        cost_per_element: usize,
        f: impl Fn(&T, &T) -> T + Sync,
    ) -> Result<()> {
        self.binary_core(
            inputs,
            output,
            cost_per_element,
            |a: &T, b: &T, _: &BlockError| f(a, b),
        )
    }

    /// Like [`broadcast_binary`](Self::broadcast_binary), for a function
    /// that may fail (an integer power with a negative exponent): the error
    /// of the first failing element (by index, however the work was split)
    /// is returned, and the output is not set. Every element is computed,
    /// as in TensorFlow, which flags errors rather than stopping.
    pub fn try_broadcast_binary<T: Element>(
        &mut self,
        inputs: [usize; 2],
        output: usize,
        cost_per_element: usize,
        f: impl Fn(&T, &T) -> Result<T> + Sync,
    ) -> Result<()> {
        self.binary_core(
            inputs,
            output,
            cost_per_element,
            |a: &T, b: &T, errors: &BlockError| f(a, b).unwrap_or_else(|e| errors.keep(e)),
        )
    }

    /// Output `output` gets `f(a, b)` for inputs `a` and `b` broadcast
    /// together, in a new buffer of type `U` (see
    /// [`broadcast_binary`](Self::broadcast_binary), which reuses an input's
    /// buffer when the types allow): comparisons, and ops whose inputs are
    /// of other types than their output.
    ///
    /// Returns the errors of [`broadcast_binary`](Self::broadcast_binary).
    pub fn broadcast_binary_to<A: Element, B: Element, U: Element>(
        &mut self,
        inputs: [usize; 2],
        output: usize,
        cost_per_element: usize,
        f: impl Fn(&A, &B) -> U + Sync,
    ) -> Result<()> {
        self.binary_to_core(
            inputs,
            output,
            cost_per_element,
            |a: &A, b: &B, _: &BlockError| f(a, b),
        )
    }

    /// [`broadcast_binary`](Self::broadcast_binary) and
    /// [`try_broadcast_binary`](Self::try_broadcast_binary): in place when
    /// an input allows, else into a new buffer. `f` reports failures to
    /// the block's [`BlockError`].
    fn binary_core<T: Element>(
        &mut self,
        inputs: [usize; 2],
        output: usize,
        cost_per_element: usize,
        f: impl Fn(&T, &T, &BlockError) -> T + Sync,
    ) -> Result<()> {
        let counts = [self.input(inputs[0])?, self.input(inputs[1])?].map(Tensor::num_elements);
        // Only an input with as many elements as the output can become it,
        // so small ones (and one-element calls, the per-node cost of a
        // graph) go straight to a new buffer.
        if worth_forwarding::<T>(counts[0].max(counts[1])) {
            let shape = self.broadcast_shape(inputs)?;
            self.expect_output_dtype::<T>(output)?;
            for k in [0, 1] {
                let candidate = self.input(inputs[k])?;
                if candidate.is_unique()
                    && candidate.dtype() == T::DTYPE
                    && counts[k] == shape.num_elements()
                {
                    return self.binary_in_place(inputs, k, output, &shape, cost_per_element, f);
                }
            }
        }
        self.binary_to_core(inputs, output, cost_per_element, f)
    }

    /// The allocating half of the binary helpers: output `output`, of the
    /// inputs' broadcast shape, in a new buffer.
    fn binary_to_core<A: Element, B: Element, U: Element>(
        &mut self,
        [ia, ib]: [usize; 2],
        output: usize,
        cost_per_element: usize,
        f: impl Fn(&A, &B, &BlockError) -> U + Sync,
    ) -> Result<()> {
        let (ta, tb) = (self.input(ia)?, self.input(ib)?);
        let (a, b) = (self.typed::<A>(ia, ta)?, self.typed::<B>(ib, tb)?);
        let first_error = FirstError::new();
        let tensor = if ta.dims() == tb.dims() {
            // One shape: a plain zip, the commonest case and the cheapest.
            self.filled_output::<U>(output, ta.shape_ref(), cost_per_element, |offset, block| {
                let errors = BlockError::new();
                zip_map_into(&a[offset..], &b[offset..], block, |x, y| f(x, y, &errors));
                errors.report(offset, &first_error);
            })?
        } else {
            let shape = self.broadcast_shape([ia, ib])?;
            let plan = self.plan_if_needed([ta.dims(), tb.dims()], &shape)?;
            let full = [a.len(), b.len()].map(|n| n == shape.num_elements());
            self.filled_output::<U>(output, &shape, cost_per_element, |offset, block| {
                let errors = BlockError::new();
                runs(plan.as_ref(), full, offset..offset + block.len(), |run| {
                    let len = run.output.len();
                    let a = Lane::of_run(a, run.starts[0], run.steps[0], len);
                    let b = Lane::of_run(b, run.starts[1], run.steps[1], len);
                    let out = &mut block[run.output.start - offset..run.output.end - offset];
                    zip_lanes_into(a, b, out, |x, y| f(x, y, &errors));
                });
                errors.report(offset, &first_error);
            })?
        };
        first_error.into_result()?;
        self.outputs_mut()[output] = Some(tensor);
        Ok(())
    }

    /// The in-place half of the binary helpers: `inputs[k]` (which has the
    /// output's element count and a buffer the caller handed over) becomes
    /// output `output`, and `f` runs over it and the other input.
    fn binary_in_place<T: Element>(
        &mut self,
        inputs: [usize; 2],
        k: usize,
        output: usize,
        shape: &TensorShape,
        cost_per_element: usize,
        f: impl Fn(&T, &T, &BlockError) -> T + Sync,
    ) -> Result<()> {
        let threads = self.threads();
        // A handle on the other input's buffer, so that it can be read
        // while this input's buffer is the output being written.
        let other_index = inputs[1 - k];
        let other = self.input(other_index)?.clone();
        let other_values = self.typed::<T>(other_index, &other)?;
        let this_shape = self.input(inputs[k])?.shape();
        let plan = self.plan_if_needed([this_shape.dims(), other.dims()], shape)?;
        let other_full = other_values.len() == shape.num_elements();
        let values = self
            .forward_input_or_allocate_output(inputs[k], output, shape.dims())?
            .as_slice_mut::<T>()?;
        let first_error = FirstError::new();
        // Operand 0 of the runs is this input (the output), operand 1 the
        // other.
        threads.shard_slice(values, cost_per_element, |offset, block| {
            let errors = BlockError::new();
            runs(
                plan.as_ref(),
                [true, other_full],
                offset..offset + block.len(),
                |run| {
                    let len = run.output.len();
                    let other = Lane::of_run(other_values, run.starts[1], run.steps[1], len);
                    let out = &mut block[run.output.start - offset..run.output.end - offset];
                    // The function with this input's element first, whichever
                    // input it is.
                    if k == 0 {
                        zip_lane_in_place(out, other, |v, o| f(v, o, &errors));
                    } else {
                        zip_lane_in_place(out, other, |v, o| f(o, v, &errors));
                    }
                },
            );
            errors.report(offset, &first_error);
        });
        first_error.into_result()
    }

    /// Output `output` gets `f(c, t, e)` for the elements of inputs
    /// `inputs` (a condition and two values, as `SelectV2`) mapped onto the
    /// output by `plan`, which the kernel made from their shapes (or from
    /// shapes of the same element counts: `Select` treats a vector
    /// condition as `[n,1,...,1]`). The output has the plan's shape.
    ///
    /// It is written into the buffer of `t` (`inputs[1]`), else of `e`
    /// (`inputs[2]`), when the caller handed it over and it has the output's
    /// element count, as [`broadcast_binary`](Self::broadcast_binary) does;
    /// otherwise into a new buffer. The work is split over the runtime's
    /// threads.
    ///
    /// Returns an `InvalidArgument` error if an input's element count is
    /// not what the plan expects, or an input or the output has another
    /// type; and the errors of [`allocate_output`](Self::allocate_output).
    ///
    /// ```
    /// # use op_core::{Code, KernelContext, Result};
    /// use op_core::elementwise::Broadcast;
    ///
    /// // The body of a kernel of `Where3(c: bool, t: float, e: float) -> out: float`.
    /// fn where3(ctx: &mut KernelContext<'_>) -> Result<()> {
    ///     let dims = [0, 1, 2].map(|i| ctx.input(i).map(|t| t.dims().to_vec()));
    ///     let [c, t, e] = dims;
    ///     let (c, t, e) = (c?, t?, e?);
    ///     let plan = Broadcast::new([&c[..], &t[..], &e[..]])
    ///         .ok_or_else(|| ctx.error(Code::InvalidArgument, "shapes do not broadcast"))?;
    ///     ctx.broadcast_ternary(&plan, [0, 1, 2], 0, 1, |c: &bool, t: &f32, e: &f32| {
    ///         if *c { *t } else { *e }
    ///     })
    /// }
    /// ```
    pub fn broadcast_ternary<C: Element, T: Element>(
        &mut self,
        plan: &Broadcast<3>,
        inputs: [usize; 3],
        output: usize,
        cost_per_element: usize,
        f: impl Fn(&C, &T, &T) -> T + Sync,
    ) -> Result<()> {
        for (k, &input) in inputs.iter().enumerate() {
            let count = self.input(input)?.num_elements();
            if count != plan.operand_elements(k) {
                return Err(self.error(
                    Code::InvalidArgument,
                    format_args!(
                        "{} has {count} element(s), but the broadcast of shape {} expects {}",
                        self.describe_input(input),
                        plan.shape(),
                        plan.operand_elements(k)
                    ),
                ));
            }
        }
        self.expect_output_dtype::<T>(output)?;
        let threads = self.threads();
        let cond = self.input(inputs[0])?.clone();
        let cond = self.typed::<C>(inputs[0], &cond)?;
        for k in [1, 2] {
            let candidate = self.input(inputs[k])?;
            if !(worth_forwarding::<T>(plan.num_elements())
                && candidate.is_unique()
                && candidate.dtype() == T::DTYPE
                && plan.is_full(k))
            {
                continue;
            }
            let other_index = 3 - k;
            let other = self.input(inputs[other_index])?.clone();
            let other_values = self.typed::<T>(inputs[other_index], &other)?;
            let values = self
                .forward_input_or_allocate_output(inputs[k], output, plan.shape().dims())?
                .as_slice_mut::<T>()?;
            let g = |c: &C, v: &T, o: &T| if k == 1 { f(c, v, o) } else { f(c, o, v) };
            threads.shard_slice(values, cost_per_element, |offset, block| {
                plan.for_each_run(offset..offset + block.len(), |run| {
                    let len = run.output.len();
                    let c = Lane::of_run(cond, run.starts[0], run.steps[0], len);
                    let o = Lane::of_run(
                        other_values,
                        run.starts[other_index],
                        run.steps[other_index],
                        len,
                    );
                    let out = &mut block[run.output.start - offset..run.output.end - offset];
                    for (j, v) in out.iter_mut().enumerate() {
                        *v = g(c.get(j), v, o.get(j));
                    }
                });
            });
            return Ok(());
        }
        let t = self.input(inputs[1])?;
        let t = self.typed::<T>(inputs[1], t)?;
        let e = self.input(inputs[2])?;
        let e = self.typed::<T>(inputs[2], e)?;
        let tensor =
            self.filled_output::<T>(output, plan.shape(), cost_per_element, |offset, block| {
                plan.for_each_run(offset..offset + block.len(), |run| {
                    let len = run.output.len();
                    let c = Lane::of_run(cond, run.starts[0], run.steps[0], len);
                    let t = Lane::of_run(t, run.starts[1], run.steps[1], len);
                    let e = Lane::of_run(e, run.starts[2], run.steps[2], len);
                    let out = &mut block[run.output.start - offset..run.output.end - offset];
                    for (j, v) in out.iter_mut().enumerate() {
                        *v = f(c.get(j), t.get(j), e.get(j));
                    }
                });
            })?;
        self.outputs_mut()[output] = Some(tensor);
        Ok(())
    }

    /// The shape inputs `a` and `b` broadcast to, or an `InvalidArgument`
    /// error naming both and their shapes.
    fn broadcast_shape(&self, [a, b]: [usize; 2]) -> Result<TensorShape> {
        let (x, y) = (self.input(a)?, self.input(b)?);
        if x.dims() == y.dims() {
            return Ok(x.shape());
        }
        x.shape_ref().broadcast(y.shape_ref()).ok_or_else(|| {
            self.error(
                Code::InvalidArgument,
                format_args!(
                    "Incompatible shapes: {} vs. {} ({} and {} do not broadcast: aligned from the right, each pair of dimensions must be equal or one of them 1)",
                    x.shape(),
                    y.shape(),
                    self.describe_input(a),
                    self.describe_input(b)
                ),
            )
        })
    }

    /// The plan for two inputs of dims `dims` broadcast to `shape`, when
    /// one is needed: not when each input has either the output's element
    /// count or one element (then they are zipped or repeated without one).
    fn plan_if_needed(
        &self,
        dims: [&[usize]; 2],
        shape: &TensorShape,
    ) -> Result<Option<Broadcast<2>>> {
        let simple = |d: &[usize]| {
            let n: usize = d.iter().product();
            n == 1 || n == shape.num_elements()
        };
        if dims.iter().all(|d| simple(d)) {
            return Ok(None);
        }
        Broadcast::new(dims).map(Some).ok_or_else(|| {
            self.error(
                Code::Internal,
                format_args!("shapes {dims:?} do not broadcast to {shape}"),
            )
        })
    }

    /// A tensor of shape `shape` for output `output` (which must be of type
    /// `U`), allocated for overwriting, after `fill(offset, block)` ran on
    /// blocks covering it over the runtime's threads. The buffer is filled
    /// before it is shared, so no reference count is touched. Private:
    /// `fill` must write every element of its block, which only this
    /// module's callers guarantee.
    fn filled_output<U: Element>(
        &self,
        output: usize,
        shape: &TensorShape,
        cost_per_element: usize,
        fill: impl Fn(usize, &mut [U]) + Sync,
    ) -> Result<Tensor> {
        self.expect_output_dtype::<U>(output)?;
        let threads = self.threads();
        if let Some(mut placed) = self.take_placed(output, U::DTYPE, shape.dims()) {
            threads.shard_slice(placed.as_slice_mut::<U>()?, cost_per_element, fill);
            return Ok(placed);
        }
        Tensor::allocate_filled::<U>(self.allocator(), shape, |values| {
            threads.shard_slice(values, cost_per_element, fill);
        })
        .map_err(|e| self.output_error(output, e))
    }

    /// The shape the inputs `indices` share, or an `InvalidArgument` error
    /// naming the first two that differ.
    fn same_shape(&self, indices: &[usize]) -> Result<&TensorShape> {
        let first = self.input(indices[0])?;
        for &other in &indices[1..] {
            let tensor = self.input(other)?;
            if tensor.dims() != first.dims() {
                return Err(self.error(
                    Code::InvalidArgument,
                    format_args!(
                        "{} and {} must have the same shape, but they have shapes {} and {}",
                        self.describe_input(indices[0]),
                        self.describe_input(other),
                        first.shape(),
                        tensor.shape()
                    ),
                ));
            }
        }
        Ok(first.shape_ref())
    }

    /// An `InvalidArgument` error unless output `output` is of type `T`.
    fn expect_output_dtype<T: Element>(&self, output: usize) -> Result<()> {
        let dtype = self.output_dtype(output)?;
        if dtype == T::DTYPE {
            return Ok(());
        }
        Err(self.error(
            Code::InvalidArgument,
            format_args!(
                "output {output} must be {dtype}, but the kernel produces {}",
                T::DTYPE
            ),
        ))
    }
}
