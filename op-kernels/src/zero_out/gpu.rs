//! The GPU kernels of the ZeroOut ops: the CPU kernels' checks
//! ([`checks`](super::checks)), then one CUDA kernel that writes zeros
//! and the kept element, in the input's buffer when the caller handed it
//! over (as the CPU kernels do), else in a new one.

use op_core::{FromKernelContext, KernelConstruction, KernelContext, Result, kernel};
use op_cuda::{GpuContext, GpuKernelSource};

use super::checks;
use super::ops::{ZeroOut, ZeroOutPolymorphic, ZeroOutPreserveIndex, ZeroOutVector};
use crate::device::Device;
use crate::gpu::Gpu;
use crate::gpu::elementwise::{CudaElement, launch_packed};

/// `zero_out_<dtype>(const T* x, T* y, u64 n, u64 keep)`: `y[i] = 0`
/// for `i != keep`, `y[keep] = x[keep]`; `x` may be `y`. Zeros are stored
/// in 16-byte packs when `y` is aligned; only the kept element is read.
static ZERO_OUT: GpuKernelSource = GpuKernelSource {
    name: "zero_out",
    source: concat!(
        crate::cuda_prelude!(),
        r#"
template <typename T>
__device__ __forceinline__ void zero_out(const T* x, T* y, u64 n, u64 keep) {
    constexpr int N = Pack<T>::N;
    u64 done = 0;
    if (((u64)y & 15) == 0) {
        Pack<T>* ys = reinterpret_cast<Pack<T>*>(y);
        const u64 packs = n / N;
        for (u64 i = thread_index(); i < packs; i += thread_count()) {
            Pack<T> p;
#pragma unroll
            for (int k = 0; k < N; ++k) p.v[k] = T(0);
            if (keep / N == i) p.v[keep % N] = x[keep];
            ys[i] = p;
        }
        done = packs * N;
    }
    for (u64 i = done + thread_index(); i < n; i += thread_count()) {
        y[i] = i == keep ? x[i] : T(0);
    }
}
#define ZERO_OUT(T, suffix)                                                           \
    extern "C" __global__ void zero_out_##suffix(const T* x, T* y, u64 n, u64 keep) { \
        zero_out(x, y, n, keep);                                                      \
    }
ZERO_OUT(float, f32)
ZERO_OUT(double, f64)
ZERO_OUT(int, i32)
"#
    ),
    entries: &["zero_out_f32", "zero_out_f64", "zero_out_i32"],
};

op_core::inventory::submit! { op_cuda::kernel::RegisteredSource(&ZERO_OUT) }

/// Output 0 is input 0 with every element but the one at `keep` (in
/// range, or the input is empty) set to zero.
fn zero_out_generic<T: CudaElement>(ctx: &mut GpuContext<'_, '_>, keep: usize) -> Result<()> {
    let work = Gpu::unary_output::<T>(ctx, 0, 0)?;
    let launched = (|| {
        let zero_out = work.gpu.function(&ZERO_OUT, &T::entry("zero_out"))?;
        let args = (work.input, work.output, work.len as u64, keep as u64);
        // SAFETY: zero_out_<T>(const T*, T*, u64 n, u64 keep) writes
        // elements 0..n of y and reads x[keep] (keep < n, or n == 0 and
        // nothing runs); both buffers hold n elements of T.
        unsafe { launch_packed::<T>(&work.gpu, &zero_out, work.len, &args) }
    })();
    launched.map_err(|e| Gpu::node_error(ctx, e))
}

#[kernel(op = ZeroOut, device = "gpu")]
fn zero_out_int32_gpu(ctx: &mut GpuContext<'_, '_>) -> Result<()> {
    zero_out_generic::<i32>(ctx, 0)
}

#[kernel(op = ZeroOutPolymorphic, device = "gpu", types(f32, f64, i32))]
fn zero_out_polymorphic_gpu<T: CudaElement>(ctx: &mut GpuContext<'_, '_>) -> Result<()> {
    zero_out_generic::<T>(ctx, 0)
}

/// `ZeroOutPreserveIndex` on a GPU: `preserve_index` read and checked
/// once, when the kernel is created, as on the CPU.
pub struct ZeroOutPreserveIndexGpuKernel {
    preserve_index: usize,
}

#[kernel(op = ZeroOutPreserveIndex, device = "gpu")]
impl ZeroOutPreserveIndexGpuKernel {
    fn new(ctx: &KernelConstruction<'_>) -> Result<Self> {
        Ok(ZeroOutPreserveIndexGpuKernel {
            preserve_index: checks::preserve_index(ctx)?,
        })
    }

    fn compute(&self, ctx: &mut KernelContext<'_>) -> Result<()> {
        checks::vector_with_index(ctx, self.preserve_index)?;
        let mut ctx = GpuContext::from_kernel_context(ctx)?;
        zero_out_generic::<i32>(&mut ctx, self.preserve_index)
    }
}

#[kernel(op = ZeroOutVector, device = "gpu")]
fn zero_out_vector_gpu(ctx: &mut GpuContext<'_, '_>) -> Result<()> {
    checks::vector(ctx)?;
    zero_out_generic::<i32>(ctx, 0)
}
