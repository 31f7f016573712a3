//! `Example`, the guide's functor example (seed 003's `ExampleFunctor`):
//! doubles its input.
//!
//! The arithmetic is one generic function, [`Double::double`], written once
//! for every element type; the kernel applies it with
//! [`KernelContext::unary`], which writes in the input's buffer when the
//! caller handed it over, else in a buffer from the runtime's allocator, and
//! splits large inputs over the runtime's threads. [`times_two_into`] applies the
//! same function to plain slices (what a lite runtime or a test does), and a
//! GPU functor will sit beside it.

use op_core::{Element, KernelContext, Result, kernel, register_op};

/// Element types that can be doubled. Integers wrap on overflow, as
/// TensorFlow's do.
pub trait Double: Element + Copy {
    /// `2 * self`.
    fn double(self) -> Self;
}

macro_rules! double_by_add {
    ($($t:ty),*) => {$(
        impl Double for $t {
            #[inline]
            fn double(self) -> Self { self + self }
        }
    )*};
}

macro_rules! double_wrapping {
    ($($t:ty),*) => {$(
        impl Double for $t {
            #[inline]
            fn double(self) -> Self { self.wrapping_add(self) }
        }
    )*};
}

double_by_add!(
    f32,
    f64,
    op_core::f16,
    op_core::bf16,
    op_core::Complex64,
    op_core::Complex128
);
double_wrapping!(i8, i16, i32, i64, u8, u16, u32, u64);

/// The arithmetic over slices: `output[i] = 2 * input[i]` (the loop
/// vectorizes).
pub fn times_two_into<T: Double>(input: &[T], output: &mut [T]) {
    op_core::elementwise::map_into(input, output, |x| x.double());
}

/// The arithmetic into a new `Vec`: the direct call that benchmarks
/// compare the op's dispatch against.
pub fn times_two<T: Double>(input: &[T]) -> Vec<T> {
    input.iter().map(|x| x.double()).collect()
}

/// What one element costs, in CPU cycles, for splitting work over threads.
const COST_PER_ELEMENT: usize = 1;

/// Doubles every element of its input.
///
/// The guide's example of a kernel shared between devices through a
/// functor.
///
/// input: any numeric tensor.
/// input_times_two: `2 * input`, elementwise.
#[register_op(
    attrs("T: numbertype"),
    inputs("input: T"),
    outputs("input_times_two: T"),
    shape = "unchanged"
)]
pub struct Example;

#[kernel(op = Example, types(realnumbertype, complex64, complex128))]
fn example<T: Double>(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.unary(0, 0, COST_PER_ELEMENT, |x: &T| x.double())
}
