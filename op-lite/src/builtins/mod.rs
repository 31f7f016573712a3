//! TensorFlow Lite's builtin op library.
//!
//! [`math`] holds the arithmetic of every builtin as plain functions over
//! slices: what the lite kernels (and GPU kernels, as their reference) call
//! once the interpreter has placed their tensors.
//!
//! [`BuiltinOpResolver`] registers every builtin kernel of this crate;
//! [`builtin_kernel`] finds one by code, for resolvers that register only
//! the ops some models use.
pub mod math;

mod kernels;
mod resolver;

pub use resolver::{BuiltinKernel, BuiltinOpResolver, builtin_kernel};
