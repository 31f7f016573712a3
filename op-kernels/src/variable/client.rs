//! The typed API over the variable ops (`tf.Variable`): [`Variable`].

use std::fmt;
use std::sync::Arc;

use op_core::checkpoint::{Saveable, take_tensors};
use op_core::error::quoted;
use op_core::{DType, Error, Op, OpCall, ResourceHandle, Result, Runtime, ShapeValue, Tensor};

use super::ops::{
    AssignVariableOp, DestroyResourceOp, ReadVariableOp, VarHandleOp, VarIsInitializedOp,
};
use super::resource::Var;

/// A variable made and used through the ops: the Rust counterpart of
/// `tf.Variable`.
///
/// It holds the variable's handle (a scalar `resource` tensor), its dtype
/// and its declared shape (possibly partly known). Like `tf.Variable`,
/// [`assign`](Self::assign) and restoring from a checkpoint check a value
/// against the dtype and shape before running `AssignVariableOp`. Clones
/// share the variable.
///
/// An anonymous variable ([`new`](Self::new),
/// [`uninitialized`](Self::uninitialized)) lives while this value, a clone
/// or a copy of its handle does; a named one ([`named`](Self::named))
/// lives in the runtime's resource manager until
/// [`destroy`](Self::destroy).
///
/// ```
/// use op_core::{DType, ShapeValue, Tensor};
/// use op_kernels::variable::Variable;
///
/// // Two handles of one named variable share it.
/// let a = Variable::named("", "doc_counter", DType::I32, ShapeValue::from_sizes(&[]))?;
/// let b = Variable::named("", "doc_counter", DType::I32, ShapeValue::from_sizes(&[]))?;
/// assert!(!a.is_initialized()?);
/// a.assign(Tensor::scalar(7i32))?;
/// assert_eq!(b.read()?.scalar_value::<i32>()?, 7);
/// b.destroy()?;
/// assert!(!a.is_initialized()?);
/// # Ok::<(), op_core::Error>(())
/// ```
#[derive(Clone)]
pub struct Variable<'r> {
    runtime: &'r Runtime,
    handle: Tensor,
    name: String,
    dtype: DType,
    shape: ShapeValue,
}

impl fmt::Debug for Variable<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Variable")
            .field("name", &self.name)
            .field("dtype", &self.dtype)
            .field("shape", &format_args!("{}", self.shape))
            .finish()
    }
}

/// Whether `dims` fits `shape`: the same rank (unless unknown) and the same
/// size in each known dimension.
fn is_compatible(shape: &ShapeValue, dims: &[usize]) -> bool {
    shape.unknown_rank
        || (shape.dims.len() == dims.len()
            && shape
                .dims
                .iter()
                .zip(dims)
                .all(|(d, &n)| d.size < 0 || d.size == n as i64))
}

impl Variable<'static> {
    /// A new anonymous variable on [`Runtime::global`] holding `initial`,
    /// of its dtype and shape.
    pub fn new(initial: impl Into<Tensor>) -> Result<Self> {
        Self::new_on(Runtime::global(), initial)
    }

    /// A new anonymous variable on [`Runtime::global`] with no value yet.
    pub fn uninitialized(dtype: DType, shape: ShapeValue) -> Result<Self> {
        Self::uninitialized_on(Runtime::global(), dtype, shape)
    }

    /// A handle to the variable `container`/`shared_name` on
    /// [`Runtime::global`] (see [`named_on`](Variable::named_on)).
    pub fn named(
        container: &str,
        shared_name: &str,
        dtype: DType,
        shape: ShapeValue,
    ) -> Result<Self> {
        Self::named_on(Runtime::global(), container, shared_name, dtype, shape)
    }
}

impl<'r> Variable<'r> {
    /// A new anonymous variable on `runtime` holding `initial`, of its
    /// dtype and shape (`VarHandleOp` with an empty `shared_name`, then
    /// `AssignVariableOp`). `NotFound` (no kernel) for a dtype a variable
    /// cannot hold (`resource`).
    pub fn new_on(runtime: &'r Runtime, initial: impl Into<Tensor>) -> Result<Self> {
        let initial = initial.into();
        let sizes: Vec<i64> = initial.dims().iter().map(|&n| n as i64).collect();
        let variable =
            Self::uninitialized_on(runtime, initial.dtype(), ShapeValue::from_sizes(&sizes))?;
        variable.assign(initial)?;
        Ok(variable)
    }

    /// A new anonymous variable on `runtime` with no value yet; its values
    /// must fit `shape` (which may be partly known or of unknown rank).
    pub fn uninitialized_on(runtime: &'r Runtime, dtype: DType, shape: ShapeValue) -> Result<Self> {
        Self::handle_op(runtime, "", "", dtype, shape)
    }

    /// A handle to the variable `shared_name` in `container` (empty: the
    /// default container) of `runtime`'s resource manager: every handle
    /// with that name reaches one variable. The variable exists from its
    /// first [`assign`](Self::assign) until [`destroy`](Self::destroy).
    ///
    /// `InvalidArgument` for an empty `shared_name` (use
    /// [`uninitialized_on`](Self::uninitialized_on) for an anonymous
    /// variable) or a name or container TensorFlow rejects (a name
    /// starting with `_`, a container with characters outside
    /// `[A-Za-z0-9_.\-/]`).
    pub fn named_on(
        runtime: &'r Runtime,
        container: &str,
        shared_name: &str,
        dtype: DType,
        shape: ShapeValue,
    ) -> Result<Self> {
        if shared_name.is_empty() {
            return Err(Error::invalid_argument(
                "a named variable needs a non-empty shared_name (an empty one makes an anonymous variable: use Variable::uninitialized_on)",
            ));
        }
        Self::handle_op(runtime, container, shared_name, dtype, shape)
    }

    fn handle_op(
        runtime: &'r Runtime,
        container: &str,
        shared_name: &str,
        dtype: DType,
        shape: ShapeValue,
    ) -> Result<Self> {
        let mut outputs = OpCall::new(VarHandleOp::NAME)
            .attr("container", container)
            .attr("shared_name", shared_name)
            .attr("dtype", dtype)
            .attr("shape", shape.clone())
            .run_on(runtime)?;
        let handle = outputs.swap_remove(0);
        let name = handle.scalar_value::<ResourceHandle>()?.name;
        Ok(Variable {
            runtime,
            handle,
            name,
            dtype,
            shape,
        })
    }

    /// The handle: a scalar `resource` tensor, for calling the ops
    /// directly.
    pub fn handle(&self) -> &Tensor {
        &self.handle
    }

    /// The variable's name: its `shared_name`, or a generated
    /// `_anonymous_<n>`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The dtype of the variable's values.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The shape the variable's values must fit.
    pub fn shape(&self) -> &ShapeValue {
        &self.shape
    }

    /// The variable itself, for direct access. `NotFound` for a named
    /// variable that was never assigned or was destroyed.
    pub fn var(&self) -> Result<Arc<Var>> {
        let handle = self.handle.scalar_value::<ResourceHandle>()?;
        self.runtime.resource_manager().resource::<Var>(&handle)
    }

    /// The current value (`ReadVariableOp`). `FailedPrecondition` (an
    /// anonymous variable) or `NotFound` (a named one) before the first
    /// assign.
    pub fn read(&self) -> Result<Tensor> {
        let mut outputs = OpCall::new(ReadVariableOp::NAME)
            .input(&self.handle)
            .attr("dtype", self.dtype)
            .run_on(self.runtime)?;
        Ok(outputs.swap_remove(0))
    }

    /// `InvalidArgument` unless `value` has the variable's dtype and fits
    /// its shape; `action` says what was being done, for the message.
    fn check(&self, value: &Tensor, action: &str) -> Result<()> {
        if value.dtype() != self.dtype {
            return Err(Error::invalid_argument(format!(
                "{action} variable {}: the value has dtype {}, but the variable's dtype is {}",
                quoted(&self.name),
                value.dtype(),
                self.dtype
            )));
        }
        if !is_compatible(&self.shape, value.dims()) {
            return Err(Error::invalid_argument(format!(
                "{action} variable {}: the value has shape {}, which does not fit the variable's shape {}",
                quoted(&self.name),
                value.shape(),
                self.shape
            )));
        }
        Ok(())
    }

    /// Replaces the value (`AssignVariableOp`); the first assign of a
    /// named variable creates it. `InvalidArgument`, and the variable
    /// unchanged, if `value` has another dtype or does not fit the
    /// variable's [`shape`](Self::shape).
    pub fn assign(&self, value: impl Into<Tensor>) -> Result<()> {
        let value = value.into();
        self.check(&value, "cannot assign to")?;
        OpCall::new(AssignVariableOp::NAME)
            .input(&self.handle)
            .input(value)
            .run_on(self.runtime)
            .map(drop)
    }

    /// Whether the variable exists and has a value (`VarIsInitializedOp`).
    pub fn is_initialized(&self) -> Result<bool> {
        let outputs = OpCall::new(VarIsInitializedOp::NAME)
            .input(&self.handle)
            .run_on(self.runtime)?;
        outputs[0].scalar_value::<bool>()
    }

    /// Removes a named variable from the resource manager
    /// (`DestroyResourceOp` with `ignore_lookup_error=false`): later reads
    /// are `NotFound` until an assign creates it again. `NotFound` if it
    /// does not exist. Does nothing for an anonymous variable, which is
    /// freed with its last handle.
    pub fn destroy(&self) -> Result<()> {
        OpCall::new(DestroyResourceOp::NAME)
            .input(&self.handle)
            .attr("ignore_lookup_error", false)
            .run_on(self.runtime)
            .map(drop)
    }
}

/// The checkpoint key of a variable's value.
const VALUE_KEY: &str = "value";

impl Saveable for Variable<'_> {
    /// One tensor, `value` (read with `ReadVariableOp`): an error if the
    /// variable has no value.
    fn serialize_to_tensors(&self) -> Result<Vec<(String, Tensor)>> {
        Ok(vec![(VALUE_KEY.to_owned(), self.read()?)])
    }

    /// Assigns the `value` tensor (with `AssignVariableOp`) after checking
    /// it: `NotFound` if there is no `value` key, `InvalidArgument` for
    /// another key, a second `value`, or a value of another dtype or of a
    /// shape that does not fit the variable's. On error the variable is
    /// unchanged.
    fn restore_from_tensors(&self, tensors: Vec<(String, Tensor)>) -> Result<()> {
        let object = format!("variable {}", quoted(&self.name));
        let [value] = take_tensors(tensors, [VALUE_KEY], &object, "variable")?;
        self.check(&value, "cannot restore")?;
        self.assign(value)
    }
}
