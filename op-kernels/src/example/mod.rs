//! `Example`, the guide's functor example (seed 003's `ExampleFunctor`):
//! doubles its input, on the CPU and on a GPU, with one kernel body.
//!
//! The seed's three parts, in Rust:
//!
//! | seed 003 | here |
//! | --- | --- |
//! | `template <typename Device, typename T> struct ExampleFunctor` (`kernel_example.h`) | the trait [`ExampleFunctor<T>`], implemented by a [`Device`](crate::device::Device) |
//! | `ExampleOp<Device, T>::Compute`: grab the input, allocate the output, call the functor | [`example_op::<D, T>`]: one generic body; the device makes the output (the input's buffer when the caller handed it over, else a new one) |
//! | `ExampleFunctor<CPUDevice, T>` and `REGISTER_CPU(T)` (`kernel_example.cc`) | `cpu.rs`: the functor for [`Cpu`](crate::device::Cpu), [`Double::double`] split over the runtime's threads, registered for every real and complex type |
//! | `ExampleFunctor<GPUDevice, T>`, the CUDA kernel, `REGISTER_GPU(T)` (`kernel_example.cu.cc`) | `gpu.rs` (the `gpu` feature): the functor for `Gpu`, a CUDA map over 16-byte packs (`float4`, `double2`, `int4`; as fast as a device-to-device copy), registered for `float`, `double`, `int32`, `int64` |
//!
//! ```ignore
//! pub trait ExampleFunctor<T: Element>: Device {
//!     fn compute(work: Self::Unary<'_, T>) -> Result<()>;
//! }
//!
//! pub fn example_op<D: ExampleFunctor<T>, T: Element>(ctx: &mut D::Context<'_, '_>) -> Result<()> {
//!     let work = D::unary_output::<T>(ctx, 0, 0)?;
//!     D::compute(work).map_err(|e| D::node_error(ctx, e))
//! }
//!
//! impl<T: Double> ExampleFunctor<T> for Cpu { ... work.map(1, |x: &T| x.double()) }
//! impl<T: Double + CudaElement> ExampleFunctor<T> for Gpu { ... launch twice_<dtype> }
//!
//! #[kernel(op = Example, types(realnumbertype, complex64, complex128))]
//! fn example<T: Double>(ctx: &mut KernelContext<'_>) -> Result<()> { example_op::<Cpu, T>(ctx) }
//! #[kernel(op = Example, device = "gpu", types(f32, f64, i32, i64))]
//! fn example_gpu<T: Double + CudaElement>(ctx: &mut GpuContext<'_, '_>) -> Result<()> { example_op::<Gpu, T>(ctx) }
//! ```
//!
//! On the CPU the behaviour is what `KernelContext::unary` gives: in place
//! when the input was handed over, a new unzeroed buffer otherwise, large
//! inputs split over the threads. [`times_two_into`] applies the same
//! arithmetic to plain slices (what a lite runtime or a test does).
//!
//! The files:
//!
//! - `ops.rs`: the op, [`Example`] (and its generated [`ExampleCall`]).
//! - `math.rs`: the arithmetic, shared by every kernel: [`Double`],
//!   [`times_two_into`], [`times_two`].
//! - `functor.rs`: [`ExampleFunctor`] and the shared body [`example_op`].
//! - `cpu.rs`: the CPU functor and kernels.
//! - `gpu.rs`: the GPU functor, its CUDA source and kernels.
//! - `grad.rs`: its gradient, the incoming one doubled (by `Example`).

mod cpu;
mod functor;
#[cfg(feature = "gpu")]
mod gpu;
mod grad;
mod math;
mod ops;

pub use functor::{ExampleFunctor, example_op};
pub use math::{Double, times_two, times_two_into};
pub use ops::*;
