//! `Examples>MultiplexDense`, the guide's `multiplex_1`/`multiplex_2` op:
//! elementwise `cond ? a : b`, like `np.where` without broadcasting.
//!
//! One generic kernel serves every dtype a tensor can hold but `resource`
//! (`realnumbertype`, `complex64`, `complex128`, `bool`, `string`,
//! `quantizedtype`). The shape function merges the three input shapes, so
//! a mismatch known before running is reported then.
//!
//! ```
//! use op_core::Tensor;
//! use op_kernels::multiplex::MultiplexDense;
//!
//! let cond = Tensor::from_vec([4], vec![true, false, false, true])?;
//! let a = Tensor::from_vec([4], vec![1i64, 2, 3, 4])?;
//! let b = Tensor::from_vec([4], vec![10i64, 20, 30, 40])?;
//! let out = MultiplexDense::call(cond, a, b).run()?;
//! assert_eq!(out.as_slice::<i64>()?, [1, 20, 30, 4]);
//! # Ok::<(), op_core::Error>(())
//! ```
//!
//! The files:
//!
//! - `ops.rs`: the op, [`MultiplexDense`].
//! - `math.rs`: the arithmetic, shared by every kernel: [`select`] (one
//!   element) and [`multiplex`] (slices).
//! - `cpu.rs`: the CPU kernel, with its shape checks.
//! - `grad.rs`: its gradient, to the branch each element was chosen from.

mod cpu;
mod grad;
mod math;
mod ops;

pub use math::{multiplex, select};
pub use ops::*;
