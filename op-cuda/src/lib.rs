//! NVIDIA GPUs for opkit, through [cudarc]: device memory with a caching
//! allocator, kernels written in CUDA C++ and compiled at run time with
//! NVRTC, cuBLAS matrix products, and the runtime's GPU backend.
//!
//! # Why a crate of its own
//!
//! cudarc, and with it the dynamic loading of the CUDA driver, NVRTC and
//! cuBLAS, is a heavy dependency that the spec parser (op-spec), the core
//! runtime (op-core) and the lite runtime (op-lite) must not pull in: they
//! build and run on machines without CUDA. op-core holds only the seam
//! ([`op_core::device`]); this crate implements it. op-kernels depends on
//! it for its GPU kernels, and a program that wants GPUs links it
//! (`use op_cuda as _;` registers the backend).
//!
//! # No GPU, no CUDA
//!
//! The crate builds without a CUDA toolkit and runs without a GPU:
//! libraries are loaded at run time (cudarc's `dynamic-loading`), probed
//! before use ([`driver`]), and their absence is an `Unavailable`
//! [`op_core::Error`] ("no CUDA driver: libcuda.so was not found"), never
//! a panic. NVRTC works without a GPU, so kernels' sources can be compiled
//! (and checked) on a machine that has only NVRTC ([`kernel::compile`]).
//!
//! # CUDA versions
//!
//! The bindings are cudarc's for CUDA 12.6 (`cuda-12060`). The driver API
//! is backward compatible: a 12.6 program runs on any driver from 12.6 on,
//! CUDA 13 drivers included (they keep the older entry points), while
//! bindings for 13.0 call entry points a 12.x driver lacks. Kernels are
//! compiled to PTX for the device's compute capability, which the driver
//! finishes for the GPU; the NVRTC in use must not be newer than the
//! driver (PTX from a newer NVRTC is refused by an older driver). NVRTC is
//! found as `libnvrtc.so`, `libnvrtc.so.12` (the `nvidia-cuda-nvrtc-cu12`
//! wheel) and the other names cudarc tries, on `LD_LIBRARY_PATH`.
//!
//! # Layout
//!
//! - [`driver`]: probing the libraries, errors.
//! - [`GpuDevice`] ([`device`]): one per GPU and process: context, stream,
//!   allocator, compiled kernels, cuBLAS handle.
//! - [`allocator`]: the caching allocator; [`CudaBuffer`] and
//!   [`DevicePtr`] ([`buffer`]): device memory as tensors hold it and as
//!   kernels take it.
//! - [`CudaBackend`] ([`backend`]): op-core's `DeviceBackend`.
//! - [`GpuKernelSource`] ([`kernel`]): CUDA C++ compiled once per process
//!   and device; [`launch`]: grids and arguments.
//! - [`GpuContext`] ([`context`]): what a GPU kernel function takes.
//! - [`blas`]: row-major gemm with cuBLAS.
//! - [`foreign`]: our kernels inside another runtime's GPU work (its
//!   stream joined to ours with events, its memory lent as our buffers):
//!   how the TensorFlow plugin runs them.
//! - [`testing`]: GPU 0 for a test, compiling every registered kernel
//!   source (with NVRTC, which needs no GPU), and (the `harness`
//!   feature) a test harness that shows a test this machine cannot run as
//!   `ignored`, with the reason.

pub mod allocator;
pub mod backend;
pub mod blas;
pub mod buffer;
pub mod context;
pub mod device;
pub mod driver;
pub mod foreign;
pub mod kernel;
pub mod launch;
pub mod testing;

pub use backend::{CUDA, CudaBackend};
pub use buffer::{CudaBuffer, DevicePtr};
pub use context::GpuContext;
pub use cudarc;
pub use device::GpuDevice;
pub use driver::device_count;
pub use kernel::GpuKernelSource;
