//! What the tests share: finding a GPU, or saying why a test is skipped.

#![allow(dead_code)]

use std::sync::Arc;

use op_cuda::GpuDevice;
use op_cuda::driver::{self, Library};

/// GPU 0, or `None` after printing why the test is skipped (so that a run
/// without a GPU shows it did not test the GPU, rather than passing
/// silently).
pub fn gpu_or_skip() -> Option<Arc<GpuDevice>> {
    match GpuDevice::get(0) {
        Ok(gpu) => Some(gpu),
        Err(e) => {
            println!("skipped: {}", e.message());
            None
        }
    }
}

/// Whether NVRTC can be loaded, printing why not.
pub fn nvrtc_or_skip() -> bool {
    match driver::require(Library::Nvrtc) {
        Ok(()) => true,
        Err(e) => {
            println!("skipped: {}", e.message());
            false
        }
    }
}

/// The x2 kernel of the GPU tests and the bench: scalar, and float4 where
/// the pointers are 16-byte aligned.
pub static TWICE: op_cuda::GpuKernelSource = op_cuda::GpuKernelSource {
    name: "twice",
    source: r#"
extern "C" __global__ void twice_f32(const float* x, float* y, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)blockDim.x * gridDim.x) {
        y[i] = 2.0f * x[i];
    }
}
extern "C" __global__ void twice4_f32(const float4* x, float4* y, unsigned long long n4) {
    for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n4;
         i += (unsigned long long)blockDim.x * gridDim.x) {
        float4 v = x[i];
        y[i] = make_float4(2.0f * v.x, 2.0f * v.y, 2.0f * v.z, 2.0f * v.w);
    }
}
"#,
    entries: &["twice_f32", "twice4_f32"],
};
