//! The guide's list ops: inputs and outputs that are lists of tensors.
//!
//! The guide declares them without saying what they compute; ours pass a
//! list through unchanged (`list(type)` in and out) or add same-shaped
//! tensors elementwise (`N * T` in, one `T` out).
//!
//! The files:
//!
//! - `ops.rs`: the six ops, from [`PolymorphicListExample`] to
//!   [`MinimumLengthPolymorphicListExample`].
//! - `cpu.rs`: their CPU kernels, over two shared functions: pass a list
//!   through, or add a list's tensors.

mod cpu;
mod ops;

pub use ops::*;
