//! The arithmetic of `Example`, over elements and slices, for every device's
//! kernel to share.

use op_core::Element;

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
