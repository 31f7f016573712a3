//! `Example`, the guide's functor example: doubles its input.
//!
//! The computation is a functor over a slice, shared by every kernel of the
//! op; a GPU functor would sit beside [`times_two`] with the same shape.

use op_core::{Element, KernelContext, Result, Tensor, kernel, register_op};

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

/// The CPU functor: `output[i] = 2 * input[i]`, collected into a new buffer
/// (no zero-fill pass, and the loop vectorizes).
pub fn times_two<T: Double>(input: &[T]) -> Vec<T> {
    input.iter().map(|x| x.double()).collect()
}

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
    let input = ctx.input(0)?;
    let doubled = times_two(input.as_slice::<T>()?);
    let output = Tensor::from_vec(input.dims(), doubled)?;
    ctx.set_output(0, output)
}
