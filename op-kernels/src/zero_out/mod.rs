//! ZeroOut, the guide's first op, in each of its forms: keep one element of
//! the input, zero the others.
//!
//! TensorFlow registers each form under the one name `ZeroOut`, replacing
//! the previous; here they live side by side, so each has its own name.
//!
//! The files:
//!
//! - `ops.rs`: the four ops ([`ZeroOut`], [`ZeroOutPolymorphic`],
//!   [`ZeroOutPreserveIndex`], [`ZeroOutVector`]) and the shape function of
//!   the vector-only forms, [`vector_shape`].
//! - `checks.rs`: the checks every device's kernels make (the guide's
//!   `OP_REQUIRES`): `preserve_index >= 0` when a kernel is created, the
//!   input's rank and the index's range on each call.
//! - `cpu.rs`: their CPU kernels, among them the stateful
//!   [`ZeroOutPreserveIndexKernel`].
//! - `gpu.rs` (the `gpu` feature): their GPU kernels, for the same types:
//!   one CUDA kernel storing zeros and the kept element, in the input's
//!   buffer when the caller handed it over.
//! - `grad.rs`: the guide's `_zero_out_grad`, for `ZeroOut` and
//!   `ZeroOutPolymorphic`.

mod checks;
mod cpu;
#[cfg(feature = "gpu")]
mod gpu;
mod grad;
mod ops;

pub use cpu::ZeroOutPreserveIndexKernel;
#[cfg(feature = "gpu")]
pub use gpu::ZeroOutPreserveIndexGpuKernel;
pub use ops::*;
