//! The GPU kernel of `Example` (seed 003's `kernel_example.cu.cc`): the
//! GPU's [`ExampleFunctor`], a CUDA map over 16-byte packs (`float4`,
//! `double2`, `int4`: as fast as a device-to-device copy), and its
//! registration for `float`, `double`, `int32` and `int64`.

use op_core::{Result, kernel};
use op_cuda::{GpuContext, GpuKernelSource};

use super::functor::{ExampleFunctor, example_op};
use super::math::Double;
use super::ops::Example;
use crate::gpu::elementwise::CudaElement;
use crate::gpu::{Gpu, GpuUnary};

/// `twice_<dtype>(const T* x, T* y, u64 n)`: `y[i] = 2 * x[i]` (wrapping
/// for integers, as [`Double`] does), through the prelude's `map`.
static TWICE: GpuKernelSource = GpuKernelSource {
    name: "example_twice",
    source: concat!(
        crate::cuda_prelude!(),
        r#"
template <typename T>
struct Twice {
    __device__ __forceinline__ T operator()(T x) const { return wrap_add(x, x); }
};
#define TWICE(T, suffix)                                                          \
    extern "C" __global__ void twice_##suffix(const T* x, T* y, u64 n) {          \
        map(Twice<T>(), x, y, n);                                                 \
    }
TWICE(float, f32)
TWICE(double, f64)
TWICE(int, i32)
TWICE(i64, i64)
"#
    ),
    entries: &["twice_f32", "twice_f64", "twice_i32", "twice_i64"],
};

op_core::inventory::submit! { op_cuda::kernel::RegisteredSource(&TWICE) }

/// Seed 003's `ExampleFunctor<GPUDevice, T>`: launches `twice_<dtype>`.
impl<T: Double + CudaElement> ExampleFunctor<T> for Gpu {
    fn compute(work: GpuUnary<'_, T>) -> Result<()> {
        let twice = work.gpu.function(&TWICE, &T::entry("twice"))?;
        // SAFETY: twice_<T>(const T*, T*, u64) is the prelude's `map`,
        // which touches elements 0..len of each buffer.
        unsafe { work.map(&twice) }
    }
}

/// Seed 003's `REGISTER_GPU(T)`: `ExampleOp<GPUDevice, T>`.
#[kernel(op = Example, device = "gpu", types(f32, f64, i32, i64))]
fn example_gpu<T: Double + CudaElement>(ctx: &mut GpuContext<'_, '_>) -> Result<()> {
    example_op::<Gpu, T>(ctx)
}
