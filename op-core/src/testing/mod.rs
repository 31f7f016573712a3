//! Per-op contract tests: `opcheck` runs every kernel of an op on random
//! inputs and checks what every op promises, whatever it computes
//! (PyTorch's `torch.library.opcheck`, for every op at once).
//!
//! For each kernel of the op (device x dtype), on cases drawn from the
//! OpDef's types and shapes its shape function accepts:
//!
//! - **shapes and dtypes**: the outputs have the node's output dtypes and
//!   shapes compatible with what the shape function infers, both from the
//!   input shapes alone and with every input's value known (as constant
//!   inputs are); a kernel that accepts inputs its shape function rejects
//!   fails too;
//! - **determinism**: a second run (on inputs it may reuse in place) and a
//!   run on several intra-op threads, with work split even when tiny
//!   ([`ThreadPool::with_min_cost_per_shard`](crate::threads::ThreadPool::with_min_cost_per_shard)),
//!   give the same outputs, element for element (NaNs equal), for ops that
//!   are not stateful;
//! - **errors, never panics**: on the first accepted cases, each input is
//!   given the wrong dtype, a rank more and a rank less, an empty first
//!   dimension, a zero-sized shape with a huge dimension, integers at their
//!   type's extremes, and special floats (NaN, infinities, zeros); each run
//!   must return a result (checked as above) or an error. A kernel that
//!   panics (a contained panic is an `Internal` error) or returns any
//!   other `Internal` error fails;
//! - **gradients**: where the op has a registered gradient, a
//!   [`GradientChecker`] compares its Jacobian with a numeric one on small
//!   accepted cases (the float64 kernels, or the float32 ones when there
//!   is no float64 kernel). op-core has no checker of its own (the
//!   algorithms live in op-autodiff, which depends on op-core): pass
//!   `op_autodiff::checker::opcheck_gradients` with
//!   `opcheck(..).gradient_checker(..)`; without one, gradients are not
//!   checked.
//!
//! It also warns about an op without a shape function, args and attrs
//! without docs (type and length attrs inferred from the inputs are
//! described by their args and exempt), a float op (one that may take and
//! give float or complex values, so that a gradient could flow through it)
//! with neither a gradient nor a `not_differentiable` mark, and a kernel
//! on which no
//! drawn case ran (every one was rejected: the op needs a generator).
//!
//! # Input generators and skips
//!
//! The generic case ([`Draw::generic`]) draws every input from the
//! OpDef and filters shapes through the shape function, which covers
//! elementwise, broadcasting, list and most shape ops. An op whose inputs
//! must satisfy what no OpDef says (a valid permutation, a variable's
//! handle) registers a generator, a function from a [`Draw`] to a
//! [`Case`], next to the op, with `inventory` (no macro needed, and it
//! costs a function pointer in the binary):
//!
//! ```
//! use op_core::testing::{Case, Draw, OpCheckRegistration};
//! use op_core::Result;
//!
//! /// Reshape: a target shape with the input's element count.
//! fn reshape_cases(d: &mut Draw<'_>) -> Result<Case> {
//!     let dtype = d.kernel_dtype("T").unwrap_or(op_core::DType::F32);
//!     let dims = d.dims(0..=3, 1..=3);
//!     let n = dims.iter().product::<usize>() as i64;
//!     let input = d.tensor(dtype, &dims)?;
//!     Ok(Case::new().input(input).input(d.int_tensor(op_core::DType::I32, &[2], &[n, 1])?))
//! }
//!
//! op_core::inventory::submit! {
//!     OpCheckRegistration::generator("MyReshape", reshape_cases, file!(), line!())
//! }
//! op_core::inventory::submit! {
//!     OpCheckRegistration::skip("MyPlaceholder", "only fails when run: it stands for a fed value", file!(), line!())
//! }
//! ```
//!
//! A generator may start from [`Draw::generic`] and replace one input.
//! [`Draw::kernel_dtype`] tells which types make the case run the kernel
//! being checked. A skip names its reason, which the report lists.
//! `opcheck("Op").generator(f)` uses `f` for one check instead of the
//! registered generator.
//!
//! # Running it
//!
//! With the `testing` feature (which brings proptest):
//! `op_core::testing::opcheck("Op").run()` gives a `Report` (per op:
//! kernels, dtypes, cases, failures with the kernel, inputs and what was
//! expected, warnings, skips); `opcheck_all()` checks every registered op;
//! `.assert_passes()` panics with the report when something failed (for a
//! test). `cargo xtask opcheck` runs it over every op the workspace
//! ships, with op-autodiff's gradient checker.
//!
//! [`files`] gives file readers' tests the files they must refuse (a FIFO,
//! `/dev/zero`, a directory) and the check that they do.
//!
//! Cases are drawn from a seed (fixed unless `.seed(..)` is given), so a
//! run is reproducible; a failing case is shrunk by proptest before it is
//! reported.

mod draw;
pub mod files;
mod generic;

#[cfg(feature = "testing")]
mod check;
#[cfg(feature = "testing")]
mod report;

pub use draw::{Case, Draw, Input};
pub use generic::COMMON_TYPES;

#[cfg(feature = "testing")]
pub use check::{OpCheck, opcheck, opcheck_all};
#[cfg(feature = "testing")]
pub use report::{Check, Failure, KernelReport, OpReport, Report};

use crate::Result;
use crate::tensor::Tensor;

/// An input generator: the inputs and attrs of one case of the kernel
/// [`Draw::kernel`] of the op [`Draw::op`], drawn from `d`.
pub type Generator = fn(&mut Draw<'_>) -> Result<Case>;

/// How opcheck draws an op's inputs: with a generator, or not at all.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum OpCheckPlan {
    /// Cases come from this generator instead of the generic one.
    Generator(Generator),
    /// The op is not checked, for this reason (which the report lists).
    Skip(&'static str),
}

/// An op's input generator or skip, submitted with `inventory` (see the
/// [module docs](self)).
#[derive(Debug)]
#[non_exhaustive]
pub struct OpCheckRegistration {
    /// The op it is for.
    pub op: &'static str,
    /// Its generator or skip.
    pub plan: OpCheckPlan,
    /// Where it was registered (`file!()`).
    pub file: &'static str,
    /// The line where it was registered (`line!()`).
    pub line: u32,
}

impl OpCheckRegistration {
    /// Op `op`'s cases come from `generator`; registered at `file:line`.
    pub const fn generator(
        op: &'static str,
        generator: Generator,
        file: &'static str,
        line: u32,
    ) -> Self {
        OpCheckRegistration {
            op,
            plan: OpCheckPlan::Generator(generator),
            file,
            line,
        }
    }

    /// Op `op` is not checked, because `reason`; registered at `file:line`.
    pub const fn skip(
        op: &'static str,
        reason: &'static str,
        file: &'static str,
        line: u32,
    ) -> Self {
        OpCheckRegistration {
            op,
            plan: OpCheckPlan::Skip(reason),
            file,
            line,
        }
    }
}

inventory::collect!(OpCheckRegistration);

/// The registrations for op `op` (normally one; more is a mistake the
/// report names).
pub fn registrations(op: &str) -> Vec<&'static OpCheckRegistration> {
    inventory::iter::<OpCheckRegistration>
        .into_iter()
        .filter(|r| r.op == op)
        .collect()
}

/// What a [`GradientChecker`] found for one function: how far the
/// registered gradients' Jacobian is from a numeric one.
#[derive(Clone, Debug, PartialEq)]
pub struct GradientComparison {
    /// The largest difference between the two Jacobians, relative to the
    /// larger entry where that exceeds 1 in magnitude (absolute below);
    /// NaN where one Jacobian has a NaN and the other not.
    pub max_error: f64,
    /// Where the largest difference is and both values there, for the
    /// report.
    pub detail: String,
}

/// Compares the Jacobian that registered gradients give for a function
/// with a numeric one: what opcheck's gradient check calls. op-autodiff
/// has the one to use (`op_autodiff::checker::opcheck_gradients`); any
/// function of this shape is one.
pub trait GradientChecker: Send + Sync {
    /// The comparison for `f` at `xs` (float tensors, each perturbed).
    fn compare(
        &self,
        f: &dyn Fn(&[Tensor]) -> Result<Tensor>,
        xs: &[Tensor],
    ) -> Result<GradientComparison>;
}

impl<F> GradientChecker for F
where
    F: Fn(&dyn Fn(&[Tensor]) -> Result<Tensor>, &[Tensor]) -> Result<GradientComparison>
        + Send
        + Sync,
{
    fn compare(
        &self,
        f: &dyn Fn(&[Tensor]) -> Result<Tensor>,
        xs: &[Tensor],
    ) -> Result<GradientComparison> {
        self(f, xs)
    }
}
