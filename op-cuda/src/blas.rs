//! Row-major matrix products with cuBLAS.
//!
//! cuBLAS is column-major; tensors are row-major. A row-major matrix read
//! column-major is its transpose, so row-major `C = op(A) op(B)` is
//! column-major `Cᵀ = op(B)ᵀ op(A)ᵀ`: the same call with the operands
//! swapped and `m` and `n` exchanged, and no copy ([`ColumnMajorGemm`]).

use std::ffi::c_int;

use cudarc::cublas::sys::cublasOperation_t;
use cudarc::driver::DeviceRepr;
use op_core::{Code, Error, Result};

use crate::buffer::DevicePtr;
use crate::device::GpuDevice;
use crate::driver::cublas_error;

/// A row-major product `C[m, n] = alpha * op(A) op(B) + beta * C`, where
/// `op(A)` is `[m, k]` (A is `[k, m]` if `transpose_a`) and `op(B)` is
/// `[k, n]` (B is `[n, k]` if `transpose_b`); all three dense.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GemmShape {
    /// Rows of C.
    pub m: usize,
    /// Columns of C.
    pub n: usize,
    /// The shared dimension.
    pub k: usize,
    /// Whether A is stored `[k, m]`.
    pub transpose_a: bool,
    /// Whether B is stored `[n, k]`.
    pub transpose_b: bool,
}

/// The column-major cuBLAS call for a [`GemmShape`]: its first operand is
/// B, its second A.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnMajorGemm {
    /// Whether cuBLAS transposes its first operand (B).
    pub transpose_first: bool,
    /// Whether cuBLAS transposes its second operand (A).
    pub transpose_second: bool,
    /// cuBLAS's m: the row-major n.
    pub m: usize,
    /// cuBLAS's n: the row-major m.
    pub n: usize,
    /// The shared dimension.
    pub k: usize,
    /// Leading dimension of the first operand (B's row length).
    pub ld_first: usize,
    /// Leading dimension of the second operand (A's row length).
    pub ld_second: usize,
    /// Leading dimension of C (its row length, n).
    pub ld_c: usize,
}

impl GemmShape {
    /// The column-major call computing this row-major product.
    ///
    /// ```
    /// use op_cuda::blas::GemmShape;
    /// let call = GemmShape { m: 2, n: 3, k: 4, transpose_a: false, transpose_b: true }.column_major();
    /// assert_eq!((call.m, call.n, call.k), (3, 2, 4));
    /// assert!(call.transpose_first && !call.transpose_second);
    /// assert_eq!((call.ld_first, call.ld_second, call.ld_c), (4, 4, 3));
    /// ```
    pub fn column_major(self) -> ColumnMajorGemm {
        let GemmShape {
            m,
            n,
            k,
            transpose_a,
            transpose_b,
        } = self;
        // A row-major matrix's leading dimension is its row length;
        // cuBLAS wants at least 1 even for an empty matrix.
        let row = |stored_cols: usize| stored_cols.max(1);
        ColumnMajorGemm {
            transpose_first: transpose_b,
            transpose_second: transpose_a,
            m: n,
            n: m,
            k,
            ld_first: row(if transpose_b { k } else { n }),
            ld_second: row(if transpose_a { m } else { k }),
            ld_c: row(n),
        }
    }
}

/// The element types cuBLAS multiplies here: `f32` (`cublasSgemm`) and
/// `f64` (`cublasDgemm`).
pub trait GemmScalar: DeviceRepr + Copy + private::Sealed {}
impl GemmScalar for f32 {}
impl GemmScalar for f64 {}

mod private {
    use super::*;

    /// The cuBLAS routine of a [`GemmScalar`].
    pub trait Sealed: Sized {
        /// Calls `cublas?gemm` with the column-major arguments.
        ///
        /// # Safety
        ///
        /// The pointers hold the matrices `call` describes, on the
        /// handle's device.
        #[allow(clippy::too_many_arguments)]
        unsafe fn gemm(
            handle: cudarc::cublas::sys::cublasHandle_t,
            call: &ColumnMajorGemm,
            dims: [c_int; 6],
            alpha: Self,
            first: DevicePtr<Self>,
            second: DevicePtr<Self>,
            beta: Self,
            c: DevicePtr<Self>,
        ) -> std::result::Result<(), cudarc::cublas::result::CublasError>;
    }

    macro_rules! sealed {
        ($t:ty, $routine:ident) => {
            impl Sealed for $t {
                unsafe fn gemm(
                    handle: cudarc::cublas::sys::cublasHandle_t,
                    call: &ColumnMajorGemm,
                    [m, n, k, ld_first, ld_second, ld_c]: [c_int; 6],
                    alpha: Self,
                    first: DevicePtr<Self>,
                    second: DevicePtr<Self>,
                    beta: Self,
                    c: DevicePtr<Self>,
                ) -> std::result::Result<(), cudarc::cublas::result::CublasError> {
                    // SAFETY: forwarded from this function's contract; alpha
                    // and beta are host values (cuBLAS's default pointer
                    // mode) read before the call returns.
                    unsafe {
                        cudarc::cublas::result::$routine(
                            handle,
                            operation(call.transpose_first),
                            operation(call.transpose_second),
                            m,
                            n,
                            k,
                            &alpha,
                            first.raw() as *const $t,
                            ld_first,
                            second.raw() as *const $t,
                            ld_second,
                            &beta,
                            c.raw() as *mut $t,
                            ld_c,
                        )
                    }
                }
            }
        };
    }

    sealed!(f32, sgemm);
    sealed!(f64, dgemm);

    fn operation(transpose: bool) -> cublasOperation_t {
        if transpose {
            cublasOperation_t::CUBLAS_OP_T
        } else {
            cublasOperation_t::CUBLAS_OP_N
        }
    }
}

impl GpuDevice {
    /// Row-major `C = alpha * op(A) op(B) + beta * C` with cuBLAS, queued
    /// on the device's stream. `m`, `n` or `k` zero is allowed (with
    /// `k == 0`, C becomes `beta * C`).
    ///
    /// Returns an `InvalidArgument` error for a dimension past `i32`
    /// (cuBLAS's limit), an `Unavailable` error without cuBLAS.
    ///
    /// # Safety
    ///
    /// `a`, `b` and `c` point to live memory of this device holding the
    /// dense matrices `shape` describes; `c` overlaps neither.
    pub unsafe fn gemm<T: GemmScalar>(
        &self,
        shape: GemmShape,
        alpha: T,
        a: DevicePtr<T>,
        b: DevicePtr<T>,
        beta: T,
        c: DevicePtr<T>,
    ) -> Result<()> {
        if shape.m == 0 || shape.n == 0 {
            return Ok(());
        }
        let call = shape.column_major();
        let int = |v: usize| {
            c_int::try_from(v).map_err(|_| {
                Error::new(
                    Code::InvalidArgument,
                    format!(
                        "a matrix product of shape {shape:?} is past cuBLAS's 32-bit dimensions"
                    ),
                )
            })
        };
        let dims = [
            int(call.m)?,
            int(call.n)?,
            int(call.k)?,
            int(call.ld_first)?,
            int(call.ld_second)?,
            int(call.ld_c)?,
        ];
        self.with_cublas(|blas| {
            self.bind()?;
            // SAFETY: the handle is this device's, on its stream; the
            // caller vouches for the pointers (this function's contract),
            // and B goes first, A second, as `column_major` says.
            unsafe { T::gemm(*blas.handle(), &call, dims, alpha, b, a, beta, c) }
                .map_err(|e| cublas_error("a matrix product (gemm)", e))
        })
    }
}
