//! What the GPU kernels share (the `gpu` feature): the CUDA backend linked
//! in, and the CUDA C++ every family's `gpu.rs` builds on.
//!
//! A family's GPU kernels sit in its `gpu.rs` beside `cpu.rs`, written as
//! `#[kernel(op = X, device = "gpu", types(...))]` functions over a
//! [`GpuContext`](op_cuda::GpuContext). Their CUDA C++ is a `static`
//! [`GpuKernelSource`](op_cuda::GpuKernelSource), compiled by NVRTC once
//! per process and GPU, and registered with
//! `inventory::submit! { op_cuda::kernel::RegisteredSource(&SOURCE) }` so
//! that `tests/gpu_sources.rs` compiles every one of them with NVRTC, on
//! machines without a GPU too.
//!
//! [`elementwise`]: the [`Gpu`] device of kernels written once over a
//! [`Device`](crate::device::Device), the CUDA prelude of the elementwise
//! sources (`map` over 16-byte packs, wrapping integer arithmetic) and
//! launching over packs. The GPU kernels of `Example`, the ZeroOut ops and
//! the elementwise math ops build on it.

// Names op-cuda, so that a program linking op-kernels links the CUDA
// backend (its inventory registration) too.
pub use op_cuda as cuda;

pub mod elementwise;

pub use elementwise::{Gpu, GpuUnary};
