//! Variables: TensorFlow's resource variables (`tf.Variable`), a tensor
//! held in a [`Resource`] and reached through ops that pass its handle.
//!
//! | op | what it does | shape function |
//! | --- | --- | --- |
//! | `VarHandleOp` | a handle to a variable: named (`shared_name`) or a new anonymous one | the library's `scalar` |
//! | `ReadVariableOp` | the variable's value | [`read_variable_shape`]: unknown |
//! | `AssignVariableOp` | replaces the value (creates a named variable on first assign) | [`scalar_handle`] |
//! | `VarIsInitializedOp` | whether the variable exists and has a value | [`scalar_handle_scalar_output`] |
//! | `DestroyResourceOp` | deletes the named resource a handle refers to (any type) | [`scalar_handle`] |
//!
//! The ops have TensorFlow's names, signatures and defaults (of
//! `VarHandleOp`'s attrs, `debug_name` and `allowed_devices` are left out).
//! `VarHandleOp`, `ReadVariableOp` and `AssignVariableOp` have a kernel for
//! each dtype a variable can hold: `realnumbertype`, `complex64`,
//! `complex128`, `bool`, `string` and `quantizedtype`, all from one generic
//! function per op.
//!
//! # Named and anonymous variables
//!
//! - **Named** (`shared_name` not empty): `VarHandleOp` outputs a handle
//!   naming `container`/`shared_name` in the runtime's
//!   [`ResourceMgr`](op_core::resource::ResourceMgr) (TensorFlow's
//!   `ContainerInfo` rules: an empty container is the manager's default,
//!   `localhost`). It does not create the variable: the first
//!   `AssignVariableOp` does ([`lookup_or_create`](op_core::resource::ResourceMgr::lookup_or_create)),
//!   with the dtype of the value it assigns. Every handle with that name
//!   reaches the same variable, which lives in the manager until
//!   `DestroyResourceOp` removes it.
//! - **Anonymous** (`shared_name` empty, the default): each run of
//!   `VarHandleOp` makes a new, uninitialized variable of the `dtype` attr
//!   and outputs an *owning* handle to it, as TensorFlow's eager mode does.
//!   The variable lives exactly as long as some copy of that handle does.
//!   (TensorFlow's graph-mode alternative, the node's name as the shared
//!   name, would make every unnamed `VarHandleOp` call here share one
//!   variable, since calls of one op share a node name.)
//!
//! `DestroyResourceOp` of an owning handle succeeds and does nothing, as
//! TensorFlow's `DeleteResource` does for ref-counting handles: an
//! anonymous variable is in no manager, other copies of the handle may
//! still use it, and it is freed when the last copy is dropped.
//!
//! Reads and assigns take the variable's lock once each: a read sees one
//! whole assigned value, never a mix of two. A read shares the value's
//! buffer (no copy); writing to the tensor it returned copies it first
//! (copy-on-write), so the variable never changes behind a reader's back.
//!
//! # The typed API
//!
//! [`Variable`] is the Rust counterpart of `tf.Variable`; each method runs
//! the ops above:
//!
//! ```
//! use op_core::Tensor;
//! use op_kernels::variable::Variable;
//!
//! let v = Variable::new(Tensor::from_vec([3], vec![1i64, 2, 3])?)?;
//! assert_eq!(v.read()?.as_slice::<i64>()?, [1, 2, 3]);
//! v.assign(Tensor::from_vec([3], vec![4i64, 5, 6])?)?;
//! assert_eq!(v.read()?.as_slice::<i64>()?, [4, 5, 6]);
//! # Ok::<(), op_core::Error>(())
//! ```

use std::fmt;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use op_core::checkpoint::{Saveable, take_tensors};
use op_core::error::quoted;
use op_core::resource::{ContainerInfo, Resource};
use op_core::shape_inference::InferenceContext;
use op_core::{
    Code, DType, Element, Error, KernelContext, Op, OpCall, ResourceHandle, Result, Runtime,
    ShapeValue, Tensor, kernel, register_op,
};

// ---- The resource ----

/// A variable: a dtype, and a value of that dtype once assigned
/// (TensorFlow's `Var`).
///
/// The value sits behind a reader-writer lock: [`value`](Self::value)
/// returns the current tensor (sharing its buffer), and
/// [`assign`](Self::assign) replaces it whole, so readers never see a
/// partly written value.
///
/// ```
/// use op_core::{DType, Tensor};
/// use op_core::resource::Resource;
/// use op_kernels::variable::Var;
///
/// let var = Var::new(DType::I64);
/// assert!(!var.is_initialized());
/// assert_eq!(var.debug_string(), "Var<int64, uninitialized>");
/// var.assign(Tensor::from_vec([10], vec![1i64; 10])?, false)?;
/// assert_eq!(var.debug_string(), "Var<int64, [10]>");
/// # Ok::<(), op_core::Error>(())
/// ```
pub struct Var {
    dtype: DType,
    value: RwLock<Option<Tensor>>,
}

impl Var {
    /// An uninitialized variable of `dtype`.
    pub fn new(dtype: DType) -> Var {
        Var {
            dtype,
            value: RwLock::new(None),
        }
    }

    /// A variable holding `value` (of `value`'s dtype).
    pub fn with_value(value: Tensor) -> Var {
        Var {
            dtype: value.dtype(),
            value: RwLock::new(Some(value)),
        }
    }

    // An assign replaces the value in one step, so a lock poisoned by a
    // panicking thread still guards a whole value: it is used as is.
    fn read_lock(&self) -> RwLockReadGuard<'_, Option<Tensor>> {
        self.value.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write_lock(&self) -> RwLockWriteGuard<'_, Option<Tensor>> {
        self.value.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// The dtype, fixed when the variable is made.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Whether a value has been assigned.
    pub fn is_initialized(&self) -> bool {
        self.read_lock().is_some()
    }

    /// The current value (sharing its buffer), or `None` before the first
    /// assign.
    pub fn value(&self) -> Option<Tensor> {
        self.read_lock().clone()
    }

    /// Replaces the value with `value`.
    ///
    /// `InvalidArgument`, and the variable unchanged, if `value`'s dtype is
    /// not the variable's, or if `validate_shape` is set, the variable has
    /// a value, and `value`'s shape is not that value's (TensorFlow's
    /// `AssignVariableOp` with `validate_shape=true`).
    pub fn assign(&self, value: Tensor, validate_shape: bool) -> Result<()> {
        if value.dtype() != self.dtype {
            return Err(Error::invalid_argument(format!(
                "cannot assign a value of dtype {} to a variable of dtype {}",
                value.dtype(),
                self.dtype
            )));
        }
        let mut slot = self.write_lock();
        if validate_shape
            && let Some(current) = &*slot
            && current.dims() != value.dims()
        {
            return Err(Error::invalid_argument(format!(
                "cannot assign a value of shape {} to a variable of shape {} (validate_shape=true)",
                value.shape(),
                current.shape()
            )));
        }
        let old = slot.replace(value);
        // The old value is freed (if this was its last user) outside the lock.
        drop(slot);
        drop(old);
        Ok(())
    }
}

impl fmt::Debug for Var {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.debug_string())
    }
}

impl Resource for Var {
    /// `Var<int64, [10]>`: the dtype and the value's shape
    /// (`uninitialized` before the first assign), never the contents.
    fn debug_string(&self) -> String {
        match &*self.read_lock() {
            Some(value) => format!("Var<{}, {}>", self.dtype, value.shape()),
            None => format!("Var<{}, uninitialized>", self.dtype),
        }
    }

    /// The value's bytes (for `string`, each string's heap bytes too),
    /// whether or not other tensors share the buffer, plus the variable
    /// itself.
    fn memory_used(&self) -> usize {
        let slot = self.read_lock();
        let Some(value) = &*slot else {
            return size_of::<Self>();
        };
        let elements = match value.dtype().size_of() {
            Some(size) => value.num_elements() * size,
            None => match value.as_slice::<Vec<u8>>() {
                Ok(strings) => strings
                    .iter()
                    .map(|s| size_of::<Vec<u8>>() + s.capacity())
                    .sum(),
                Err(_) => value.num_elements() * size_of::<ResourceHandle>(),
            },
        };
        size_of::<Self>() + elements
    }
}

// ---- Shape functions ----

/// Input 0 (the handle) must be a scalar (an unknown rank is taken to be
/// 0); no outputs. For `AssignVariableOp` and `DestroyResourceOp`.
pub fn scalar_handle(c: &mut InferenceContext<'_>) -> Result<()> {
    let handle = c.input(0)?;
    c.with_rank(handle, 0)?;
    Ok(())
}

/// Input 0 (the handle) must be a scalar; output 0 is a scalar. For
/// `VarIsInitializedOp`.
pub fn scalar_handle_scalar_output(c: &mut InferenceContext<'_>) -> Result<()> {
    scalar_handle(c)?;
    op_core::shape_inference::library::scalar(c)
}

/// `ReadVariableOp`: the handle must be a scalar; the value's shape is
/// unknown (a handle carries no shape here: TensorFlow reads it from the
/// handle's `shape_and_type`).
pub fn read_variable_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    scalar_handle(c)?;
    let unknown = c.unknown_shape();
    c.set_output(0, unknown)
}

// ---- Ops (TensorFlow's `resource_variable_ops.cc` signatures) ----

/// Creates a handle to a variable.
///
/// With a `shared_name`, the handle names the variable `shared_name` in
/// `container` (created by the first `AssignVariableOp`, shared by every
/// handle of that name). With an empty `shared_name`, each run makes a
/// new, uninitialized anonymous variable and outputs an owning handle: the
/// variable lives while a copy of the handle does.
///
/// resource: the handle, a scalar.
#[register_op(outputs("resource: resource"), stateful, shape = "scalar")]
pub struct VarHandleOp {
    /// The container of a named variable; empty for the manager's default.
    /// Unused for an anonymous variable.
    #[attr(default = "")]
    pub container: String,
    /// The variable's name in the container; empty for a new anonymous
    /// variable.
    #[attr(default = "")]
    pub shared_name: String,
    /// The type of the variable's value.
    pub dtype: DType,
    /// The shape of the variable's value, possibly partly known (checked
    /// by [`Variable`], not by the kernels).
    pub shape: ShapeValue,
}

/// Reads the value of a variable.
///
/// `NotFound` if a named variable was never assigned (or was destroyed),
/// `FailedPrecondition` if an anonymous one was never assigned.
///
/// resource: the variable's handle.
/// value: the variable's value.
#[register_op(
    inputs("resource: resource"),
    outputs("value: dtype"),
    stateful,
    shape_fn = read_variable_shape
)]
pub struct ReadVariableOp {
    /// The variable's dtype.
    pub dtype: DType,
}

/// Assigns a new value to a variable, creating a named variable of the
/// value's dtype on its first assign.
///
/// resource: the variable's handle.
/// value: the new value, of the variable's dtype.
#[register_op(
    inputs("resource: resource", "value: dtype"),
    stateful,
    shape_fn = scalar_handle
)]
pub struct AssignVariableOp {
    /// The variable's dtype.
    pub dtype: DType,
    /// Whether `value` must have the shape of the variable's current value
    /// (when it has one).
    #[attr(default = false)]
    pub validate_shape: bool,
}

/// Whether a variable exists and has been assigned a value.
///
/// resource: the variable's handle.
/// is_initialized: a scalar bool.
#[register_op(
    inputs("resource: resource"),
    outputs("is_initialized: bool"),
    stateful,
    shape_fn = scalar_handle_scalar_output
)]
pub struct VarIsInitializedOp;

/// Deletes the resource a handle names from its resource manager, whatever
/// its type.
///
/// The resource itself is freed once nobody uses it. An owning handle's
/// resource is in no manager: destroying it succeeds and does nothing (it
/// is freed with its last handle).
///
/// resource: the handle of the resource to delete.
#[register_op(inputs("resource: resource"), stateful, shape_fn = scalar_handle)]
pub struct DestroyResourceOp {
    /// Whether a resource that does not exist is not an error.
    #[attr(default = true)]
    pub ignore_lookup_error: bool,
}

// ---- Kernels ----

/// The variable of the handle in input 0, or the `NotFound` error that
/// says it was never assigned (or was destroyed) and names it.
fn variable_of(ctx: &KernelContext<'_>, handle: &ResourceHandle) -> Result<Arc<Var>> {
    ctx.resource::<Var>(0).map_err(|e| match e.code() {
        Code::NotFound => {
            let container = if handle.container.is_empty() {
                ctx.resource_manager().default_container()
            } else {
                &handle.container
            };
            ctx.error(
                Code::NotFound,
                format_args!(
                    "variable {} in container {} was never assigned, or was destroyed ({})",
                    quoted(&handle.name),
                    quoted(container),
                    e.message()
                ),
            )
        }
        _ => e,
    })
}

/// The element types a variable can hold (every `Element` but `resource`).
macro_rules! variable_kernels {
    ($($op:ident => $kernel:item)*) => {$(
        #[kernel(
            op = $op,
            types(dtype = [realnumbertype, complex64, complex128, bool, string, quantizedtype])
        )]
        $kernel
    )*};
}

variable_kernels! {
    VarHandleOp =>
    fn var_handle_op<T: Element>(ctx: &mut KernelContext<'_>, attrs: &VarHandleOp) -> Result<()> {
        if attrs.shared_name.is_empty() {
            return ctx.set_resource_output(0, Arc::new(Var::new(T::DTYPE)));
        }
        let info = ContainerInfo::new(
            ctx.resource_manager(),
            &attrs.container,
            &attrs.shared_name,
            ctx.node_name(),
            true,
        )
        .map_err(|e| ctx.error(e.code(), e.message()))?;
        let handle = ResourceHandle::named::<Var>(ctx.device(), info.container(), info.name());
        ctx.set_output(0, Tensor::scalar(handle))
    }

    ReadVariableOp =>
    fn read_variable_op<T: Element>(ctx: &mut KernelContext<'_>) -> Result<()> {
        let handle: ResourceHandle = ctx.input_scalar(0)?;
        let var = variable_of(ctx, &handle)?;
        if var.dtype() != T::DTYPE {
            return Err(ctx.error(Code::InvalidArgument,
                format_args!(
                    "cannot read variable {} of dtype {} as {} (attr dtype)",
                    quoted(&handle.name),
                    var.dtype(),
                    T::DTYPE
                ),
            ));
        }
        let value = var.value().ok_or_else(|| {
            ctx.error(Code::FailedPrecondition,
                format_args!(
                    "variable {} was never assigned: it has no value to read",
                    quoted(&handle.name)
                ),
            )
        })?;
        ctx.set_output(0, value)
    }

    AssignVariableOp =>
    fn assign_variable_op<T: Element>(
        ctx: &mut KernelContext<'_>,
        attrs: &AssignVariableOp,
    ) -> Result<()> {
        let handle: ResourceHandle = ctx.input_scalar(0)?;
        let var = match ctx.resource::<Var>(0) {
            Ok(var) => var,
            // The first assign of a named variable creates it.
            Err(e) if e.code() == Code::NotFound && !handle.is_owning() => ctx
                .resource_manager()
                .lookup_or_create(&handle.container, &handle.name, || Ok(Var::new(T::DTYPE)))?,
            Err(e) => return Err(e),
        };
        if var.dtype() != T::DTYPE {
            return Err(ctx.error(Code::InvalidArgument,
                format_args!(
                    "cannot assign a {} value (input 1 'value') to variable {}, which has dtype {}",
                    T::DTYPE,
                    quoted(&handle.name),
                    var.dtype()
                ),
            ));
        }
        let value = ctx.input(1)?.clone();
        var.assign(value, attrs.validate_shape).map_err(|e| {
            ctx.error(e.code(),
                format_args!("variable {}: {}", quoted(&handle.name), e.message()),
            )
        })
    }
}

#[kernel(op = VarIsInitializedOp)]
fn var_is_initialized_op(ctx: &mut KernelContext<'_>) -> Result<()> {
    let initialized = match ctx.resource::<Var>(0) {
        Ok(var) => var.is_initialized(),
        Err(e) if e.code() == Code::NotFound => false,
        Err(e) => return Err(e),
    };
    ctx.set_output(0, Tensor::scalar(initialized))
}

#[kernel(op = DestroyResourceOp)]
fn destroy_resource_op(ctx: &mut KernelContext<'_>, attrs: &DestroyResourceOp) -> Result<()> {
    let handle: ResourceHandle = ctx.input_scalar(0)?;
    if handle.is_owning() {
        // In no manager; freed with the last copy of its handle.
        return Ok(());
    }
    match ctx.resource_manager().delete_handle(&handle) {
        Ok(()) => Ok(()),
        Err(e) if e.code() == Code::NotFound && attrs.ignore_lookup_error => Ok(()),
        Err(e) => Err(ctx.error(
            e.code(),
            format_args!(
                "cannot destroy resource {} (ignore_lookup_error={}): {}",
                quoted(&handle.name),
                attrs.ignore_lookup_error,
                e.message()
            ),
        )),
    }
}

// ---- The typed API (`tf.Variable`) ----

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
