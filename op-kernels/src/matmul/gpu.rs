//! The GPU kernels of `MatMul`: `float` and `double` through cuBLAS
//! ([`GpuDevice::gemm`](op_cuda::GpuDevice::gemm), row-major, the
//! transposes passed to cuBLAS rather than copied). The shapes are checked
//! as on the CPU ([`product_dims`]).

use op_core::{Result, kernel};
use op_cuda::GpuContext;
use op_cuda::blas::{GemmScalar, GemmShape};

use super::cpu::product_dims;
use super::ops::MatMul;

/// An element type cuBLAS multiplies, with its 1 and 0 (alpha and beta).
pub trait GpuGemm: GemmScalar + op_core::Element {
    /// `1`.
    const ONE: Self;
    /// `0`.
    const ZERO: Self;
}

impl GpuGemm for f32 {
    const ONE: f32 = 1.0;
    const ZERO: f32 = 0.0;
}

impl GpuGemm for f64 {
    const ONE: f64 = 1.0;
    const ZERO: f64 = 0.0;
}

#[kernel(op = MatMul, device = "gpu", types(f32, f64))]
fn matmul_gpu<T: GpuGemm>(ctx: &mut GpuContext<'_, '_>, attrs: &MatMul) -> Result<()> {
    let (a, b) = (ctx.input(0)?.clone(), ctx.input(1)?.clone());
    let (m, n) = product_dims(ctx, &a, &b, attrs)?;
    let k = if attrs.transpose_a {
        a.dims()[0]
    } else {
        a.dims()[1]
    };
    if k == 0 {
        // An empty sum: zeros (allocate_output zeroes), no cuBLAS call.
        ctx.allocate_output::<T>(0, &[m, n])?;
        return Ok(());
    }
    let (a, b) = (ctx.input_ptr::<T>(0)?, ctx.input_ptr::<T>(1)?);
    let c = ctx.allocate_output_for_writing::<T>(0, &[m, n])?;
    let shape = GemmShape {
        m,
        n,
        k,
        transpose_a: attrs.transpose_a,
        transpose_b: attrs.transpose_b,
    };
    // SAFETY: a and b are the inputs, dense row-major matrices of the
    // shapes `shape` describes (checked by product_dims); c is the new
    // output of [m, n] elements, overlapping neither; all three are this
    // GPU's memory, live for the call (the context holds them).
    unsafe { ctx.gpu().gemm(shape, T::ONE, a, b, T::ZERO, c) }
        .map_err(|e| ctx.error(e.code(), e.message()))
}
