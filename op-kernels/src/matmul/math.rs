//! The arithmetic of `MatMul` over matrix views, for every device's kernels
//! to share: [`Gemm`], one GEMM per element type, and [`matmul_into`],
//! which splits a product over a thread pool.
//!
//! Which GEMM:
//!
//! - `float`, `double`, `complex64`, `complex128`: ndarray's
//!   [`general_mat_mul`], that is the `matrixmultiply` crate's packed,
//!   vectorized kernels. They take any strides, so a transposed input is a
//!   transposed view of its buffer, never a copy.
//! - `int32`, `int64`: no maintained crate multiplies integer matrices
//!   (`matrixmultiply` and `gemm` are float-only; ndarray's fallback for
//!   other types is the textbook triple loop, which reads `b` down its
//!   columns). [`gemm_wrapping`] is the row-oriented loop instead: each row
//!   of the product accumulates `a[i, p] * b[p, ..]`, a loop along rows of
//!   `b` and of the product that vectorizes when `b` is not transposed.
//!   Products and sums wrap on overflow, as TensorFlow's do.
//! - `half`, `bfloat16`: converted to `f32`, multiplied as `float`, and
//!   rounded once at the end ([`to_f32`], [`from_f32`]; the kernel does
//!   this), so they accumulate in `f32`.

use op_core::ndarray::linalg::general_mat_mul;
use op_core::ndarray::{ArrayView2, ArrayViewMut2, Zip, s};
use op_core::threads::ThreadPool;
use op_core::{Complex64, Complex128, Element, bf16, f16};

/// An element type with a GEMM: `c = a · b` over 2-D views of any strides.
pub trait Gemm: Element + Copy + Send + Sync {
    /// `c = a · b`, overwriting `c`, for `a` of shape `[m, k]`, `b` of
    /// shape `[k, n]` and `c` of shape `[m, n]`.
    ///
    /// # Panics
    ///
    /// If the shapes do not fit together.
    fn gemm(a: ArrayView2<'_, Self>, b: ArrayView2<'_, Self>, c: ArrayViewMut2<'_, Self>);
}

macro_rules! gemm_by_ndarray {
    ($($t:ty => $one:expr, $zero:expr;)*) => {$(
        impl Gemm for $t {
            #[inline]
            fn gemm(a: ArrayView2<'_, Self>, b: ArrayView2<'_, Self>, mut c: ArrayViewMut2<'_, Self>) {
                general_mat_mul($one, &a, &b, $zero, &mut c);
            }
        }
    )*};
}

gemm_by_ndarray! {
    f32 => 1.0, 0.0;
    f64 => 1.0, 0.0;
    Complex64 => Complex64::new(1.0, 0.0), Complex64::new(0.0, 0.0);
    Complex128 => Complex128::new(1.0, 0.0), Complex128::new(0.0, 0.0);
}

/// Integers that multiply and add with wraparound.
pub trait WrappingMulAdd: Copy + Default {
    /// `self + a * b`, wrapping on overflow.
    fn mul_add_wrapping(self, a: Self, b: Self) -> Self;
}

macro_rules! gemm_wrapping_ints {
    ($($t:ty),*) => {$(
        impl WrappingMulAdd for $t {
            #[inline(always)]
            fn mul_add_wrapping(self, a: Self, b: Self) -> Self {
                self.wrapping_add(a.wrapping_mul(b))
            }
        }

        impl Gemm for $t {
            #[inline]
            fn gemm(a: ArrayView2<'_, Self>, b: ArrayView2<'_, Self>, c: ArrayViewMut2<'_, Self>) {
                gemm_wrapping(a, b, c);
            }
        }
    )*};
}

gemm_wrapping_ints!(i32, i64);

/// `c = a · b` for integers, wrapping on overflow: row `i` of `c` is the
/// sum over `p` of `a[i, p] * b[p, ..]`, so the inner loop runs along a row
/// of `b` and of `c`.
///
/// # Panics
///
/// If the shapes do not fit together.
pub fn gemm_wrapping<T: WrappingMulAdd>(
    a: ArrayView2<'_, T>,
    b: ArrayView2<'_, T>,
    mut c: ArrayViewMut2<'_, T>,
) {
    let (m, k) = a.dim();
    assert_eq!(b.nrows(), k, "inner dimensions");
    assert_eq!(c.dim(), (m, b.ncols()), "output shape");
    for (a_row, mut c_row) in a.rows().into_iter().zip(c.rows_mut()) {
        c_row.fill(T::default());
        for (a_ip, b_row) in a_row.iter().zip(b.rows()) {
            Zip::from(&mut c_row)
                .and(&b_row)
                .for_each(|c, b| *c = c.mul_add_wrapping(*a_ip, *b));
        }
    }
}

/// The product `a · b` (`[m, k]` by `[k, n]`) into `out`, the `[m, n]`
/// product in row-major order, split over `threads` by blocks of the
/// output (pass [`ThreadPool::single`] to run on the caller).
///
/// ```
/// use op_core::ndarray::ArrayView2;
/// use op_core::threads::ThreadPool;
/// use op_kernels::matmul::matmul_into;
///
/// let a = ArrayView2::from_shape((2, 2), &[1.0f32, 2.0, 3.0, 4.0])?;
/// let b = ArrayView2::from_shape((2, 1), &[5.0f32, 6.0])?;
/// let mut out = [0.0f32; 2];
/// // a · b, and aᵀ · b as a transposed view of the same buffer.
/// matmul_into(&ThreadPool::single(), a, b, &mut out);
/// assert_eq!(out, [17.0, 39.0]);
/// matmul_into(&ThreadPool::single(), a.t(), b, &mut out);
/// assert_eq!(out, [23.0, 34.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Panics
///
/// If the shapes do not fit together or `out` is not `m * n` long.
pub fn matmul_into<T: Gemm>(
    threads: &ThreadPool,
    a: ArrayView2<'_, T>,
    b: ArrayView2<'_, T>,
    out: &mut [T],
) {
    let (m, k) = a.dim();
    let n = b.ncols();
    assert_eq!(b.nrows(), k, "inner dimensions");
    assert_eq!(out.len(), m * n, "output size");
    // An output element costs k multiply-adds, several per cycle.
    let cost = (k / 4).max(1);
    threads.shard_slice(out, cost, |offset, block| {
        gemm_block(a, b, offset, block);
    });
}

/// The elements `offset..offset + block.len()` of `a · b` into `block`: a
/// leading part of a row, whole rows, a trailing part of a row, each one
/// GEMM over the matching views.
fn gemm_block<T: Gemm>(a: ArrayView2<'_, T>, b: ArrayView2<'_, T>, offset: usize, block: &mut [T]) {
    let n = b.ncols();
    let (mut row, col) = (offset / n, offset % n);
    let mut rest = block;
    if col != 0 {
        let len = (n - col).min(rest.len());
        let (head, tail) = rest.split_at_mut(len);
        T::gemm(
            a.slice(s![row..row + 1, ..]),
            b.slice(s![.., col..col + len]),
            matrix(head, 1, len),
        );
        (row, rest) = (row + 1, tail);
    }
    let rows = rest.len() / n;
    if rows > 0 {
        let (whole, tail) = rest.split_at_mut(rows * n);
        T::gemm(a.slice(s![row..row + rows, ..]), b, matrix(whole, rows, n));
        (row, rest) = (row + rows, tail);
    }
    if !rest.is_empty() {
        let len = rest.len();
        T::gemm(
            a.slice(s![row..row + 1, ..]),
            b.slice(s![.., ..len]),
            matrix(rest, 1, len),
        );
    }
}

/// `data` as a row-major `[rows, cols]` matrix (`rows * cols` elements).
fn matrix<T>(data: &mut [T], rows: usize, cols: usize) -> ArrayViewMut2<'_, T> {
    ArrayViewMut2::from_shape((rows, cols), data).expect("the block holds rows * cols elements")
}

/// 16-bit floats, multiplied in `f32`.
pub trait ViaF32: Element + Copy + Send + Sync {
    /// The value as an `f32` (exact).
    fn widen(self) -> f32;
    /// An `f32` rounded to this type.
    fn narrow(value: f32) -> Self;
}

macro_rules! via_f32 {
    ($($t:ty),*) => {$(
        impl ViaF32 for $t {
            #[inline(always)]
            fn widen(self) -> f32 { self.to_f32() }
            #[inline(always)]
            fn narrow(value: f32) -> Self { <$t>::from_f32(value) }
        }
    )*};
}

via_f32!(f16, bf16);

/// `values` as `f32`s, in the same order.
pub fn to_f32<T: ViaF32>(values: &[T]) -> Vec<f32> {
    values.iter().map(|v| v.widen()).collect()
}

/// `out[i] = values[i]`, rounded to `T`.
pub fn from_f32<T: ViaF32>(values: &[f32], out: &mut [T]) {
    op_core::elementwise::map_into(values, out, |v| T::narrow(*v));
}

#[cfg(test)]
mod tests {
    use super::*;
    use op_core::ndarray::Array2;

    #[test]
    fn integer_products_wrap() {
        let a = Array2::from_elem((1, 2), i32::MAX);
        let b = Array2::from_elem((2, 1), 2);
        let mut c = Array2::zeros((1, 1));
        i32::gemm(a.view(), b.view(), c.view_mut());
        assert_eq!(c[[0, 0]], i32::MAX.wrapping_mul(2).wrapping_mul(2));
    }

    #[test]
    fn blocks_that_start_and_end_inside_rows_cover_their_elements() {
        let a = Array2::from_shape_fn((3, 2), |(i, j)| (i * 2 + j) as i64);
        let b = Array2::from_shape_fn((2, 5), |(i, j)| (i * 5 + j) as i64 - 3);
        let expected = a.dot(&b);
        for offset in 0..15 {
            for len in 0..=15 - offset {
                let mut block = vec![0i64; len];
                gemm_block(a.view(), b.view(), offset, &mut block);
                let want: Vec<i64> = expected.iter().skip(offset).take(len).copied().collect();
                assert_eq!(block, want, "offset {offset}, len {len}");
            }
        }
    }
}
