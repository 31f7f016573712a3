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
//! - `cpu.rs`: their CPU kernels, among them the stateful
//!   [`ZeroOutPreserveIndexKernel`].
//! - `grad.rs`: the guide's `_zero_out_grad`, for `ZeroOut` and
//!   `ZeroOutPolymorphic`.

mod cpu;
mod grad;
mod ops;

pub use cpu::ZeroOutPreserveIndexKernel;
pub use ops::*;
