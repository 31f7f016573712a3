//! Elementwise kernels: the op's arithmetic as a plain generic function of
//! elements, applied over slices by code shared by every kernel.
//!
//! This is seed 003's functor pattern in Rust. The op's math is one generic
//! function (`|x: &T| x.double()`: TensorFlow's `ExampleFunctor`), written
//! once for every element type; the slice functions here
//! ([`map_into`], [`map_in_place`], [`zip_map_into`], [`zip3_map_into`])
//! apply it to a block of elements, the same way for the CPU kernel (block
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

use std::sync::Mutex;

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
