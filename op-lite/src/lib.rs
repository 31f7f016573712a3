//! The lite runtime: TensorFlow Lite's execution model, in Rust.
//!
//! A deployment runtime runs one model, converted ahead of time, as fast and
//! as predictably as it can: it reads a `.tflite` flatbuffer
//! ([`model`]), finds a kernel for every node through an op resolver, runs
//! each kernel's `prepare` once to fix shapes and plan one memory arena, and
//! then `invoke`s the nodes in order without allocating.
//!
//! # Why a crate of its own
//!
//! The framework's eager and graph runtimes (`op-core`) dispatch by op name
//! and dtype on every call, hand tensors around by reference count and
//! allocate outputs as they go: right for research and training, wrong for
//! a phone. This crate has its own execution model (a fixed plan, kernels
//! with TensorFlow Lite's init/prepare/invoke/free phases, tensors that are
//! slices of one arena) and its own file format, and a deployment build
//! should not pull in the training side (gradients, checkpoints, graphs).
//! It depends on `op-core` without default features, for the dtypes and the
//! error type that the whole framework shares.

pub mod builtins;
pub mod model;

pub use model::Model;
