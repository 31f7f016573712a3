//! The executor seam: whatever runs or records one op call.
//!
//! An [`OpCall`] (and every typed wrapper that `#[register_op]` generates)
//! describes one call: the op, its inputs, its explicit attrs and an
//! optional node name. An [`Executor`] decides what the call means:
//!
//! - the eager [`Runtime`](crate::Runtime) selects a kernel and runs it now;
//! - a tape (a decorator over another executor, as burn-autodiff's
//!   `Autodiff<B>` wraps a backend) runs the call through the executor it
//!   wraps and records it for the backward pass;
//! - a graph builder adds a node and returns symbolic outputs.
//!
//! So one wrapper serves all three: `.run()` runs on the global runtime,
//! `.run_on(&executor)` on any executor whose values the call holds. A
//! call's values are the executor's [`Executor::Value`]: tensors for the
//! runtime and a tape, a graph's outputs for a graph builder.
//!
//! ```standalone_crate
//! use std::cell::RefCell;
//! use op_core::executor::Executor;
//! use op_core::{OpCall, Result, Runtime, Tensor};
//! # op_core::inventory::submit! { op_core::registry::OpRegistration::new("Neg1", || op_core::OpDefBuilder::new("Neg1").input("x: int32").output("y: int32").build(), file!(), line!()) }
//! # fn neg(ctx: &mut op_core::KernelContext<'_>, _: &()) -> op_core::Result<()> {
//! #     ctx.unary(0, 0, 1, |x: &i32| -x)
//! # }
//! # op_core::inventory::submit! { op_core::registry::KernelRegistration::new("Neg1", op_core::DeviceType::Cpu, "neg", |c| op_core::FnKernel::<()>::create(c, neg), file!(), line!()) }
//!
//! /// Runs every call eagerly and remembers which ops ran.
//! struct Logged<'r> {
//!     runtime: &'r Runtime,
//!     ops: RefCell<Vec<String>>,
//! }
//!
//! impl Executor for Logged<'_> {
//!     type Value = Tensor;
//!     fn execute(&self, call: OpCall<'_>) -> Result<Vec<Tensor>> {
//!         self.ops.borrow_mut().push(call.op().to_owned());
//!         self.runtime.execute(call)
//!     }
//!     fn execute_grouped(&self, call: OpCall<'_>) -> Result<Vec<Vec<Tensor>>> {
//!         self.ops.borrow_mut().push(call.op().to_owned());
//!         self.runtime.execute_grouped(call)
//!     }
//! }
//!
//! let logged = Logged { runtime: Runtime::global(), ops: RefCell::default() };
//! let y = OpCall::new("Neg1").input(Tensor::scalar(3i32)).run_on(&logged)?;
//! assert_eq!(y[0].scalar_value::<i32>()?, -3);
//! assert_eq!(*logged.ops.borrow(), ["Neg1"]);
//! # Ok::<(), op_core::Error>(())
//! ```

use crate::runtime::OpCall;
use crate::{Error, Result};

/// Runs or records one op call (see the [module docs](self)).
///
/// Implemented by the eager [`Runtime`](crate::Runtime); the tape and the
/// graph builder are the next implementations. A decorator implements it
/// by delegating to the executor it wraps.
pub trait Executor {
    /// What flows between ops: [`Tensor`](crate::Tensor) for the runtime
    /// and a tape; a symbolic output for a graph builder.
    type Value;

    /// Runs (or records) `call`; returns its outputs, flattened (a list
    /// output contributes one value per element).
    fn execute(&self, call: OpCall<'_, Self::Value>) -> Result<Vec<Self::Value>>;

    /// Runs (or records) `call`; returns its outputs grouped by output arg
    /// (one value for a single output, n for a list output).
    fn execute_grouped(&self, call: OpCall<'_, Self::Value>) -> Result<Vec<Vec<Self::Value>>>;

    /// Runs (or records) `call`, whose op has `N` output values; returns
    /// them as an array. What typed wrappers of ops without list outputs
    /// call; the runtime overrides it to skip the `Vec` of outputs.
    fn execute_array<const N: usize>(
        &self,
        call: OpCall<'_, Self::Value>,
    ) -> Result<[Self::Value; N]>
    where
        Self: Sized,
    {
        crate::__private::outputs_array(self.execute(call)?)
    }
}

/// The error when an op gave `count` output values where `N` were
/// expected: a wrapper and its op disagree, a bug, not bad input.
pub(crate) fn wrong_output_count<const N: usize>(count: usize) -> Error {
    Error::internal(format!("expected {N} output(s), the op produced {count}"))
}

/// An executor behind a reference or a smart pointer is the executor
/// (generic calls do not deref: `run_on(&arc)` with `arc: Arc<Runtime>`
/// works through these).
macro_rules! forward_executor {
    ($($pointer:ty),*) => {$(
        impl<E: Executor> Executor for $pointer {
            type Value = E::Value;

            fn execute(&self, call: OpCall<'_, E::Value>) -> Result<Vec<E::Value>> {
                (**self).execute(call)
            }

            fn execute_grouped(&self, call: OpCall<'_, E::Value>) -> Result<Vec<Vec<E::Value>>> {
                (**self).execute_grouped(call)
            }

            fn execute_array<const N: usize>(
                &self,
                call: OpCall<'_, E::Value>,
            ) -> Result<[E::Value; N]> {
                (**self).execute_array(call)
            }
        }
    )*};
}

forward_executor!(&E, std::sync::Arc<E>, Box<E>, std::sync::LazyLock<E>);
