//! The arithmetic of TensorFlow Lite's builtin ops, as plain functions over
//! slices, with TensorFlow Lite's semantics (its reference kernels,
//! `tensorflow/lite/kernels/internal/reference/*.h`, each module citing its
//! file).
//!
//! Every op has the same three parts:
//!
//! - a params struct (the op's builtin options, plain values);
//! - a `*_shape` function computing the output shape from the input shapes
//!   and params, which the kernel's `prepare` calls: every invalid input is
//!   a typed [`op_core::Error`], never a panic, and sizes are
//!   overflow-checked;
//! - the compute function, which writes into a caller-provided `&mut [T]`
//!   output (and, where an op needs one, a `&mut [T]` scratch buffer of
//!   `*_scratch_len` elements, a temporary the kernel requests in
//!   `prepare`). Compute functions check that the slices match the shapes
//!   and **never allocate**: shapes and strides live in fixed arrays of at
//!   most [`MAX_RANK`] dimensions (TensorFlow Lite caps most ops at 4 to 6;
//!   each op says its cap), so `invoke` stays allocation-free.
//!
//! | module | ops |
//! | --- | --- |
//! | [`elementwise`] | unary SQUARE ... HARD_SWISH; binary ADD ... SQUARED_DIFFERENCE with broadcasting and fused activations |
//! | [`conv`] | CONV_2D (im2col + GEMM), DEPTHWISE_CONV_2D; the padding arithmetic |
//! | [`pool`] | AVERAGE_POOL_2D, MAX_POOL_2D |
//! | [`fully_connected`] | FULLY_CONNECTED |
//! | [`softmax`] | SOFTMAX |
//! | [`reduce`] | MEAN, SUM |
//! | [`shape_ops`] | TRANSPOSE, CONCATENATION, PACK, STRIDED_SLICE, SLICE, PAD, GATHER, CUMSUM, CAST |
//! | [`batch_matmul`] | BATCH_MATMUL |
//!
//! Matrix products go through nano-gemm (see `gemm.rs` for
//! why: it is the GEMM that does not allocate per call), single-threaded.

mod common;
mod conv_direct;
mod gemm;
mod simd;

pub mod batch_matmul;
pub mod conv;
pub mod elementwise;
pub mod fully_connected;
pub mod pool;
pub mod reduce;
pub mod shape_ops;
pub mod softmax;

pub use common::{ActivationRange, MAX_RANK, Number, num_elements};
