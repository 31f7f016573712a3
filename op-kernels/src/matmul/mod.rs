//! `MatMul`: the product of two matrices, with TensorFlow's OpDef
//! (`transpose_a`, `transpose_b`, and `grad_a`/`grad_b`, which TensorFlow's
//! gradient code sets as hints for its optimizer and the kernels ignore),
//! shape function and results.
//!
//! The product runs on a maintained GEMM where one exists: ndarray's
//! `general_mat_mul` (the `matrixmultiply` crate) for `float`, `double`,
//! `complex64` and `complex128`, over views of the inputs' buffers (a
//! transposed input is a transposed view, not a copy). `int32` and `int64`
//! use a row-oriented loop that wraps on overflow (no maintained crate
//! multiplies integer matrices); `half` and `bfloat16` are converted to
//! `f32`, multiplied as `float` and rounded once. [`Gemm`] says which per
//! type. The output is split over the runtime's intra-op threads in blocks
//! of elements, each block one GEMM call (or three, when it starts or ends
//! inside a row).
//!
//! Errors: inputs that are not matrices, and inner dimensions that differ
//! (naming both inputs' shapes and the transposes), are `InvalidArgument`.
//!
//! The files:
//!
//! - `ops.rs`: the op, [`MatMul`], and its shape function [`matmul_shape`].
//! - `math.rs`: the GEMMs ([`Gemm`], [`gemm_wrapping`]) and the split over
//!   threads ([`matmul_into`]), shared by every device's kernels.
//! - `cpu.rs`: the CPU kernels.
//! - `gpu.rs` (feature `gpu`): the GPU kernels, `float` and `double`
//!   through cuBLAS.
//! - `grad.rs`: its gradient, TensorFlow's four cases of the transposes.

mod cpu;
#[cfg(feature = "gpu")]
mod gpu;
mod grad;
mod math;
mod ops;

pub use math::{Gemm, ViaF32, WrappingMulAdd, from_f32, gemm_wrapping, matmul_into, to_f32};
pub use ops::*;
