//! The declarations of the variable ops (TensorFlow's
//! `resource_variable_ops.cc` signatures) and their shape functions.

use op_core::shape_inference::InferenceContext;
use op_core::{DType, Result, ShapeValue, register_op};

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
    /// A name for the variable in TensorFlow's debugging output; the kernels
    /// ignore it.
    #[attr(default = "")]
    pub debug_name: String,
    /// The type of the variable's value.
    pub dtype: DType,
    /// The shape of the variable's value, possibly partly known (checked
    /// by [`Variable`](super::Variable), not by the kernels).
    pub shape: ShapeValue,
    /// The devices a TensorFlow variable may be placed on besides its own
    /// (empty: only its own); the kernels ignore it, as there is one
    /// device here.
    #[attr(default = [])]
    pub allowed_devices: Vec<String>,
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
/// resource (an anonymous variable, a queue or table made without a
/// shared name) is in no manager: destroying it succeeds and does nothing,
/// whatever `ignore_lookup_error` says, as TensorFlow's `DeleteResource`
/// does for ref-counting handles (checked with TensorFlow 2.21); it is
/// freed with its last handle.
///
/// resource: the handle of the resource to delete.
#[register_op(inputs("resource: resource"), stateful, shape_fn = scalar_handle)]
pub struct DestroyResourceOp {
    /// Whether a resource that does not exist is not an error.
    #[attr(default = true)]
    pub ignore_lookup_error: bool,
}
