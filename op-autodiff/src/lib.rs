//! Gradients and training.
//!
//! Gradient functions are registered next to their ops with
//! `#[gradient(op = ...)]` (see [`op_core::gradient`](mod@op_core::gradient)); this crate holds
//! the algorithms that use them, as burn-autodiff does for burn:
//!
//! - `symbolic`: `gradients(graph, ys, xs, grad_ys)`, TensorFlow's
//!   `tf.gradients`, adding the backward pass to a graph;
//! - `tape`: the eager `GradientTape`, which records the ops run on its
//!   thread while it is active and differentiates them;
//! - `checker`: the gradient checker, the registered gradients' Jacobian
//!   against central differences (`tf.test.compute_gradient`);
//! - `optimizers`: `Sgd`, `Momentum` and `Adam`, which apply gradients to
//!   variables, eagerly and in graphs.
//!
//! Why a crate of its own: symbolic gradients need op-graph, and the
//! optimizers need op-kernels' training ops and variables, while op-core
//! (which generated code names) must need neither; the lite runtime needs
//! none of this.

pub mod checker;
pub mod optimizers;
pub mod symbolic;
pub mod tape;

pub use checker::{GradientCheck, compute_gradient};
pub use optimizers::{Adam, Momentum, Optimizer, OptimizerBuilder, Sgd};
pub use symbolic::{Gradients, Unconnected, gradients};
pub use tape::{GradientOptions, GradientTape, TapeOptions};
