//! Constants and placeholders: `Const`, `Placeholder` and
//! `PlaceholderWithDefault`, with TensorFlow's names, signatures and shape
//! functions. They are the leaves of a graph.
//!
//! | op | what it does | shape function |
//! | --- | --- | --- |
//! | [`Const`] | outputs the tensor of its `value` attr | [`const_shape`]: the value's |
//! | [`Placeholder`] | must be fed; running it is an `InvalidArgument` error | [`placeholder_shape`]: the `shape` attr |
//! | [`PlaceholderWithDefault`] | its input, unless fed | [`placeholder_with_default_shape`] |
//!
//! `Const`'s kernel turns its attr into a tensor once, when the kernel is
//! created; every run hands out that tensor, shared, so a consumer that
//! writes to it copies first and the constant never changes.
//!
//! The files:
//!
//! - `ops.rs`: the three ops and their shape functions.
//! - `cpu.rs`: their CPU kernels, for every dtype.
//! - `grad.rs`: `PlaceholderWithDefault`'s gradient (its input's, passed
//!   through); `Const` is not differentiable.
//! - `opcheck.rs`: how opcheck (`op_core::testing`) draws `Const`, and why
//!   it skips `Placeholder`.

mod cpu;
mod grad;
mod opcheck;
mod ops;

pub use cpu::{ConstKernel, PlaceholderKernel};
pub use ops::*;
