//! The matrix product behind CONV_2D (after im2col), FULLY_CONNECTED and
//! BATCH_MATMUL: `dst = lhs · rhs` over strided `f32` matrices, one safe
//! function around one `unsafe` call.
//!
//! # Why nano-gemm
//!
//! The interpreter's `invoke` must not allocate, and the usual GEMM crates
//! do on every call: `matrixmultiply` 0.3.11 allocates its packing buffer
//! (`make_packing_buffer`, one allocation per call), and `gemm` 0.19 a
//! packing buffer and a `Vec<bool>` (one or two allocations per call
//! outside its matrix-vector paths). Both measured under a counting global
//! allocator, with `nano-gemm` 0.2.2, faer's small-matrix kernels, which
//! pack into stack buffers and allocated nothing. Its speed on this
//! machine (2 cores, AVX2, single-threaded, f32, the lite runtime's
//! layouts; GFLOP/s, more is better):
//!
//! | m x k x n | matrixmultiply | gemm | nano-gemm |
//! | --- | --- | --- | --- |
//! | 1024 x 144 x 32 (a 3x3 conv, 16 to 32 channels, 32x32) | 61 | 91 | 67 (83 with the filter transposed) |
//! | 32 x 256 x 256 | 61 | 62 | 55 |
//! | 256 x 256 x 256 | 82 | 91 | 72 |
//! | 1 x 256 x 256 (matrix-vector) | 4 | 32 | 4 |
//!
//! nano-gemm is within 10 to 25% of the best without allocating; its
//! matrix-vector case is slow, so products with few rows go through
//! [`matmul`]'s dot-product path instead (17 GFLOP/s on the same case).
//! nano-gemm runs on the calling thread: the interpreter decides about
//! threads.

use op_core::{Error, Result};

/// An `f32` matrix in a slice: element `(i, j)` is at
/// `data[i * row_stride + j * col_stride]`.
#[derive(Copy, Clone, Debug)]
pub(crate) struct MatRef<'a> {
    pub data: &'a [f32],
    pub rows: usize,
    pub cols: usize,
    pub row_stride: usize,
    pub col_stride: usize,
}

/// A mutable [`MatRef`].
#[derive(Debug)]
pub(crate) struct MatMut<'a> {
    pub data: &'a mut [f32],
    pub rows: usize,
    pub cols: usize,
    pub row_stride: usize,
    pub col_stride: usize,
}

impl<'a> MatRef<'a> {
    /// A row-major `rows x cols` matrix.
    pub fn row_major(data: &'a [f32], rows: usize, cols: usize) -> Self {
        MatRef {
            data,
            rows,
            cols,
            row_stride: cols,
            col_stride: 1,
        }
    }

    /// The transpose, a view of the same data.
    pub fn t(self) -> Self {
        MatRef {
            data: self.data,
            rows: self.cols,
            cols: self.rows,
            row_stride: self.col_stride,
            col_stride: self.row_stride,
        }
    }
}

impl<'a> MatMut<'a> {
    /// A row-major `rows x cols` matrix.
    pub fn row_major(data: &'a mut [f32], rows: usize, cols: usize) -> Self {
        MatMut {
            data,
            rows,
            cols,
            row_stride: cols,
            col_stride: 1,
        }
    }
}

/// Fails unless every element of a `rows x cols` matrix with these strides
/// lies inside a slice of `len` elements.
fn check_fits(
    what: &str,
    len: usize,
    rows: usize,
    cols: usize,
    rs: usize,
    cs: usize,
) -> Result<()> {
    if rows == 0 || cols == 0 {
        return Ok(());
    }
    let last = (rows - 1)
        .checked_mul(rs)
        .and_then(|r| (cols - 1).checked_mul(cs).and_then(|c| r.checked_add(c)));
    match last {
        Some(last) if last < len && rs <= isize::MAX as usize && cs <= isize::MAX as usize => {
            Ok(())
        }
        _ => Err(Error::internal(format!(
            "{what}: a {rows}x{cols} matrix with strides ({rs}, {cs}) does not fit in {len} elements"
        ))),
    }
}

/// Products with at most this many rows take the dot-product path: nano-gemm
/// vectorizes over rows of the (column-major) destination, and a
/// matrix-vector product has one.
const DOT_MAX_ROWS: usize = 2;

/// `dst = lhs · rhs`, overwriting `dst` (whatever it held, NaN included).
///
/// Any strides work; the fastest layout has `dst` and `rhs` with contiguous
/// rows (`col_stride == 1`), which nano-gemm multiplies in place. Others go
/// through its copying kernel (about 20% slower on a convolution's
/// product), so a caller that multiplies by a transposed `rhs` often may
/// pack it once with [`transpose_into`]. A product of at most
/// [`DOT_MAX_ROWS`] rows against an `rhs` with contiguous columns (a
/// fully connected layer's weights) takes the dot-product path.
///
/// Fails (an internal error: callers check shapes first) when the shapes
/// disagree or a view reaches past its slice.
pub(crate) fn matmul(dst: MatMut<'_>, lhs: MatRef<'_>, rhs: MatRef<'_>) -> Result<()> {
    let (m, k, n) = (lhs.rows, lhs.cols, rhs.cols);
    if rhs.rows != k || dst.rows != m || dst.cols != n {
        return Err(Error::internal(format!(
            "matmul of {m}x{k} by {}x{n} into {}x{}",
            rhs.rows, dst.rows, dst.cols
        )));
    }
    check_fits(
        "matmul lhs",
        lhs.data.len(),
        m,
        k,
        lhs.row_stride,
        lhs.col_stride,
    )?;
    check_fits(
        "matmul rhs",
        rhs.data.len(),
        k,
        n,
        rhs.row_stride,
        rhs.col_stride,
    )?;
    check_fits(
        "matmul dst",
        dst.data.len(),
        m,
        n,
        dst.row_stride,
        dst.col_stride,
    )?;
    if m == 0 || n == 0 {
        return Ok(());
    }
    if k == 0 {
        for i in 0..m {
            for j in 0..n {
                dst.data[i * dst.row_stride + j * dst.col_stride] = 0.0;
            }
        }
        return Ok(());
    }
    if m <= DOT_MAX_ROWS && lhs.col_stride == 1 && rhs.row_stride == 1 {
        dot_rows(dst, lhs, rhs);
        return Ok(());
    }
    // nano-gemm is column-major: compute dst^T = rhs^T · lhs^T, so that
    // dst's and rhs's contiguous rows are the unit row strides of its
    // column-major destination and left operand.
    let (a, b) = (rhs.t(), lhs.t());
    let (m, n) = (n, m);
    let (d_rs, d_cs) = (dst.col_stride, dst.row_stride);
    let plan = if d_rs == 1 && a.row_stride == 1 {
        nano_gemm::Plan::new_colmajor_lhs_and_dst_f32(m, n, k)
    } else {
        nano_gemm::Plan::new_f32(m, n, k)
    };
    // SAFETY: check_fits showed that every element (i, j) of the three
    // views, at i * row_stride + j * col_stride, lies inside its slice, and
    // that the strides fit in isize; `dst` is borrowed mutably, so it
    // aliases neither input. The plan was made for these m, n, k (all
    // nonzero) and, when column-major, for unit row strides of its
    // destination and left operand, checked just above. With alpha = 0
    // nano-gemm's kernels write dst without reading it (tested below on
    // NaN-filled destinations, in every layout).
    unsafe {
        plan.execute_unchecked(
            m,
            n,
            k,
            dst.data.as_mut_ptr(),
            d_rs as isize,
            d_cs as isize,
            a.data.as_ptr(),
            a.row_stride as isize,
            a.col_stride as isize,
            b.data.as_ptr(),
            b.row_stride as isize,
            b.col_stride as isize,
            0.0,
            1.0,
            false,
            false,
        );
    }
    Ok(())
}

/// Copies `src` into `scratch` as a row-major matrix (its first
/// `rows * cols` elements) and returns that copy: how a caller gives
/// [`matmul`] an `rhs` with contiguous rows.
pub(crate) fn transpose_into<'s>(src: MatRef<'_>, scratch: &'s mut [f32]) -> Result<MatRef<'s>> {
    let (rows, cols) = (src.rows, src.cols);
    check_fits(
        "transpose source",
        src.data.len(),
        rows,
        cols,
        src.row_stride,
        src.col_stride,
    )?;
    let len = rows
        .checked_mul(cols)
        .ok_or_else(|| Error::internal("transpose size overflows"))?;
    let available = scratch.len();
    let Some(out) = scratch.get_mut(..len) else {
        return Err(Error::internal(format!(
            "scratch of {available} elements cannot hold a {rows}x{cols} matrix"
        )));
    };
    // Walk the source in its storage order where it is transposed, so that
    // reads stay sequential (the writes stride instead).
    if src.row_stride < src.col_stride {
        for j in 0..cols {
            for i in 0..rows {
                out[i * cols + j] = src.data[i * src.row_stride + j * src.col_stride];
            }
        }
    } else {
        for (i, row) in out.chunks_exact_mut(cols.max(1)).enumerate().take(rows) {
            for (j, o) in row.iter_mut().enumerate() {
                *o = src.data[i * src.row_stride + j * src.col_stride];
            }
        }
    }
    Ok(MatRef::row_major(out, rows, cols))
}

/// `dst = lhs · rhs` for a few rows of `lhs` (contiguous rows) against
/// contiguous columns of `rhs`: one dot product per element, eight lanes
/// wide so that the compiler vectorizes it.
fn dot_rows(dst: MatMut<'_>, lhs: MatRef<'_>, rhs: MatRef<'_>) {
    let k = lhs.cols;
    for i in 0..lhs.rows {
        let a = &lhs.data[i * lhs.row_stride..][..k];
        for j in 0..rhs.cols {
            let b = &rhs.data[j * rhs.col_stride..][..k];
            dst.data[i * dst.row_stride + j * dst.col_stride] = dot(a, b);
        }
    }
}

/// `a · b`, over eight partial sums.
#[inline]
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let (a8, a_tail) = a.as_chunks::<8>();
    let (b8, b_tail) = b.as_chunks::<8>();
    let mut acc = [0.0f32; 8];
    for (x, y) in a8.iter().zip(b8) {
        for l in 0..8 {
            acc[l] += x[l] * y[l];
        }
    }
    let mut sum = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
    for (x, y) in a_tail.iter().zip(b_tail) {
        sum += x * y;
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(m: usize, k: usize, n: usize, a: &[f32], b: &[f32]) -> Vec<f32> {
        let mut c = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..n {
                c[i * n + j] = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
            }
        }
        c
    }

    fn values(n: usize, seed: usize) -> Vec<f32> {
        (0..n)
            .map(|i| ((i * 7 + seed) % 13) as f32 * 0.25 - 1.5)
            .collect()
    }

    #[test]
    fn products_of_every_small_size_match_the_naive_loop_over_a_nan_filled_destination() {
        for m in 0..7 {
            for k in 0..6 {
                for n in 0..7 {
                    let a = values(m * k, 1);
                    let b = values(k * n, 2);
                    let mut c = vec![f32::NAN; m * n];
                    matmul(
                        MatMut::row_major(&mut c, m, n),
                        MatRef::row_major(&a, m, k),
                        MatRef::row_major(&b, k, n),
                    )
                    .unwrap();
                    let want = naive(m, k, n, &a, &b);
                    for (x, y) in c.iter().zip(&want) {
                        assert!((x - y).abs() < 1e-4, "{m}x{k}x{n}: {c:?} vs {want:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn transposed_operands_and_large_sizes_match_the_naive_loop() {
        let (m, k, n) = (70, 33, 65);
        let a = values(m * k, 3);
        let bt = values(n * k, 4); // rhs stored transposed, n x k
        let b: Vec<f32> = (0..k * n).map(|i| bt[(i % n) * k + i / n]).collect();
        let want = naive(m, k, n, &a, &b);
        let mut scratch = vec![f32::NAN; k * n + 3];
        let packed = transpose_into(MatRef::row_major(&bt, n, k).t(), &mut scratch).unwrap();
        assert_eq!(packed.data, &b[..]);
        // lhs transposed too (stored k x m): any lhs strides are fine.
        let at: Vec<f32> = (0..k * m).map(|i| a[(i % m) * k + i / m]).collect();
        for lhs in [
            MatRef::row_major(&a, m, k),
            MatRef::row_major(&at, k, m).t(),
        ] {
            let mut c = vec![f32::NAN; m * n];
            matmul(MatMut::row_major(&mut c, m, n), lhs, packed).unwrap();
            for (x, y) in c.iter().zip(&want) {
                assert!((x - y).abs() < 1e-3, "{x} vs {y}");
            }
        }
        // Unpacked: nano-gemm's copying kernel, in place.
        let bt_view = MatRef::row_major(&bt, n, k).t();
        for lhs in [
            MatRef::row_major(&a, m, k),
            MatRef::row_major(&at, k, m).t(),
        ] {
            let mut c = vec![f32::NAN; m * n];
            matmul(MatMut::row_major(&mut c, m, n), lhs, bt_view).unwrap();
            for (x, y) in c.iter().zip(&want) {
                assert!((x - y).abs() < 1e-3, "{x} vs {y}");
            }
        }
    }

    #[test]
    fn views_past_their_slices_are_errors() {
        let a = [0.0f32; 5];
        let mut c = [0.0f32; 4];
        let err = matmul(
            MatMut::row_major(&mut c, 2, 2),
            MatRef::row_major(&a, 2, 3),
            MatRef::row_major(&a, 3, 2),
        );
        assert!(err.is_err());
    }
}
