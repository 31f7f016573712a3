//! `Example`, the guide's functor example (seed 003's `ExampleFunctor`):
//! doubles its input.
//!
//! The arithmetic is one generic function, [`Double::double`], written once
//! for every element type; the kernel applies it with
//! [`KernelContext::unary`](op_core::KernelContext::unary), which writes in
//! the input's buffer when the caller handed it over, else in a buffer from
//! the runtime's allocator, and splits large inputs over the runtime's
//! threads. [`times_two_into`] applies the same function to plain slices
//! (what a lite runtime or a test does), and a GPU functor will sit beside
//! it.
//!
//! The files:
//!
//! - `ops.rs`: the op, [`Example`] (and its generated [`ExampleCall`]).
//! - `math.rs`: the arithmetic, shared by every kernel: [`Double`],
//!   [`times_two_into`], [`times_two`].
//! - `cpu.rs`: the CPU kernel.
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
