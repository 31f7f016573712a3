//! Training: TensorFlow's ops that apply a gradient to a variable, the
//! update step of an optimizer.
//!
//! | op | update | shape function |
//! | --- | --- | --- |
//! | `ResourceApplyGradientDescent` | `var -= alpha * delta` | [`apply_gradient_descent_shape`] |
//! | `ResourceApplyMomentum` | `accum = accum * momentum + grad; var -= lr * accum` (or Nesterov's) | [`apply_momentum_shape`] |
//! | `ResourceApplyAdam` | Adam, with `beta1_power`/`beta2_power` given (or Nesterov's) | [`apply_adam_shape`] |
//!
//! The ops have TensorFlow's names, signatures (`T: numbertype`, the
//! variables as `resource` handles) and defaults, and TensorFlow's CPU
//! kernels: `float`, `double`, `half` and `bfloat16`, with its formulas
//! term for term (`math.rs`). They have no outputs: they update the
//! variables ([`Var`](crate::variable::Var)) their handles reach, in
//! place. They are not differentiable (a path through them carries no
//! gradient).
//!
//! Errors name the op, the node and the input: a variable never assigned
//! (or destroyed) is `FailedPrecondition`; a variable of another dtype than
//! `T`, a slot or gradient whose shape is not the variable's, a
//! hyperparameter that is not a scalar, and one variable passed twice (the
//! update would be meaningless; TensorFlow silently loses a write) are
//! `InvalidArgument`. Integer `T` passes the OpDef but has no kernel, as
//! in TensorFlow (`NotFound`, listing the kernels).
//!
//! `use_locking` is accepted and changes nothing: an update always holds
//! its variables' locks (TensorFlow without it lets updates race, which
//! safe Rust does not allow), taken in one global order so that two
//! updates never deadlock.
//!
//! # The files
//!
//! - `ops.rs`: the three ops and their shape functions (TensorFlow's: the
//!   scalars must be scalars, the gradient has the variable's shape, which
//!   a handle does not carry here, so it is unknown).
//! - `math.rs`: the updates over slices, [`gradient_descent`],
//!   [`momentum`] and [`adam`], over [`Real`], for every device's kernels.
//! - `update.rs`: what every device's kernel does first: find, lock and
//!   check the variables.
//! - `cpu.rs`: the CPU kernels: the slice functions split over the
//!   intra-op pool.
//! - `gpu.rs`: the GPU kernels (`float`, `double`): the same formulas in
//!   CUDA, over the variables' GPU buffers in place, the scalars read on
//!   the host.
//! - `opcheck.rs`: how opcheck (`op_core::testing`) draws variables, slots
//!   and hyperparameters for the ops' contract tests.

mod cpu;
#[cfg(feature = "gpu")]
mod gpu;
mod math;
mod opcheck;
mod ops;
mod update;

pub use math::{AdamParams, MomentumParams, Real, adam, gradient_descent, momentum};
pub use ops::*;

op_core::not_differentiable!(
    "ResourceApplyGradientDescent",
    "ResourceApplyMomentum",
    "ResourceApplyAdam"
);
