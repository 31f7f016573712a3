//! What the tests share: finding a GPU, or saying why a test is skipped.

#![allow(dead_code)]

#[allow(unused_imports)]
pub use op_cuda::testing::{gpu_or_skip, nvrtc_or_skip};

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
