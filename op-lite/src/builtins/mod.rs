//! TensorFlow Lite's builtin op library.
//!
//! [`math`] holds the arithmetic of every builtin as plain functions over
//! slices: what the lite kernels (and GPU kernels, as their reference) call
//! once the interpreter has placed their tensors.

pub mod math;
