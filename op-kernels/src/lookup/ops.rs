//! The declarations of TensorFlow's generic lookup table ops
//! (`lookup_ops.cc`: `MutableHashTableV2` and the `LookupTable*V2` ops)
//! and their shape functions.
//!
//! Every op here is `not_differentiable`, as TensorFlow marks its table
//! ops (`lookup_ops.py`'s `ops.NotDifferentiable`): a table's contents are
//! state.

use op_core::shape_inference::InferenceContext;
use op_core::{DType, Result, register_op};

use crate::variable::{scalar_handle, scalar_handle_scalar_output};

// ---- Shape functions ----

/// `LookupTableFindV2`: the handle must be a scalar; the values' shape is
/// unknown (TensorFlow reads the table's value shape from the handle's
/// shapes and types, which a handle does not carry here).
pub fn find_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    scalar_handle(c)?;
    let unknown = c.unknown_shape();
    c.set_output(0, unknown)
}

/// `LookupTableExportV2`: the handle must be a scalar; `keys` is a vector
/// of unknown length, `values` of unknown shape (TensorFlow's own).
pub fn export_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    scalar_handle(c)?;
    let length = c.unknown_dim();
    let keys = c.vector(length);
    c.set_output(0, keys)?;
    let values = c.unknown_shape();
    c.set_output(1, values)
}

// ---- Ops ----

/// Creates an empty hash table that uses tensors as the backing store.
///
/// It uses "open addressing" with quadratic reprobing to resolve
/// collisions. This op creates a mutable hash table, specifying the type of
/// its keys and values. Each value must be a scalar. Data can be inserted
/// into the table using the insert operations. It does not support the
/// initialization operation.
///
/// With a `shared_name` (or, with `use_node_name_sharing`, the node's
/// name), every node and call naming it in `container` reaches one table
/// in the runtime's resource manager; otherwise each graph node has a table
/// of its own for all its runs, and each eager call makes a new one.
///
/// table_handle: the handle to a table.
#[register_op(
    name = "MutableHashTableV2",
    outputs("table_handle: resource"),
    stateful,
    not_differentiable,
    shape = "scalar"
)]
pub struct MutableHashTableV2 {
    /// If non-empty, this table is placed in the given container.
    /// Otherwise, a default container is used.
    #[attr(default = "")]
    pub container: String,
    /// If non-empty, this table is shared under the given name across
    /// multiple sessions.
    #[attr(default = "")]
    pub shared_name: String,
    /// If true and shared_name is empty, the table is shared using the node
    /// name.
    #[attr(default = false)]
    pub use_node_name_sharing: bool,
    /// Type of the table keys.
    pub key_dtype: DType,
    /// Type of the table values.
    pub value_dtype: DType,
}

/// Looks up keys in a table, outputs the corresponding values.
///
/// The tensor `keys` must of the same type as the keys of the table. The
/// output `values` is of the type of the table values.
///
/// The scalar `default_value` is the value output for keys not present in
/// the table. It must also be of the same type as the table values.
///
/// table_handle: Handle to the table.
/// keys: Any shape.  Keys to look up.
/// default_value: The value of keys the table does not hold: a scalar, or
///   one per key (the shape of `keys`).
/// values: Same shape as `keys`.  Values found in the table, or `default_values`
///   for missing keys.
#[register_op(
    name = "LookupTableFindV2",
    attrs("Tin: type", "Tout: type"),
    inputs("table_handle: resource", "keys: Tin", "default_value: Tout"),
    outputs("values: Tout"),
    stateful,
    not_differentiable,
    shape_fn = find_shape
)]
pub struct LookupTableFindV2;

/// Updates the table to associates keys with values.
///
/// The tensor `keys` must be of the same type as the keys of the table.
/// The tensor `values` must be of the type of the table values.
///
/// table_handle: Handle to the table.
/// keys: Any shape.  Keys to look up.
/// values: Values to associate with keys.
#[register_op(
    name = "LookupTableInsertV2",
    attrs("Tin: type", "Tout: type"),
    inputs("table_handle: resource", "keys: Tin", "values: Tout"),
    stateful,
    not_differentiable,
    shape_fn = scalar_handle
)]
pub struct LookupTableInsertV2;

/// Removes keys and its associated values from a table.
///
/// The tensor `keys` must of the same type as the keys of the table. Keys
/// not already in the table are silently ignored.
///
/// table_handle: Handle to the table.
/// keys: Any shape.  Keys of the elements to remove.
#[register_op(
    name = "LookupTableRemoveV2",
    attrs("Tin: type"),
    inputs("table_handle: resource", "keys: Tin"),
    stateful,
    not_differentiable,
    shape_fn = scalar_handle
)]
pub struct LookupTableRemoveV2;

/// Computes the number of elements in the given table.
///
/// table_handle: Handle to the table.
/// size: Scalar that contains number of elements in the table.
#[register_op(
    name = "LookupTableSizeV2",
    inputs("table_handle: resource"),
    outputs("size: int64"),
    stateful,
    not_differentiable,
    shape_fn = scalar_handle_scalar_output
)]
pub struct LookupTableSizeV2;

/// Outputs all keys and values in the table.
///
/// Tkeys: the table's key dtype.
/// Tvalues: the table's value dtype.
/// table_handle: Handle to the table.
/// keys: Vector of all keys present in the table.
/// values: Tensor of all values in the table. Indexed in parallel with `keys`.
#[register_op(
    name = "LookupTableExportV2",
    attrs("Tkeys: type", "Tvalues: type"),
    inputs("table_handle: resource"),
    outputs("keys: Tkeys", "values: Tvalues"),
    stateful,
    not_differentiable,
    shape_fn = export_shape
)]
pub struct LookupTableExportV2;

/// Replaces the contents of the table with the specified keys and values.
///
/// The tensor `keys` must be of the same type as the keys of the table.
/// The tensor `values` must be of the type of the table values.
///
/// table_handle: Handle to the table.
/// keys: Any shape.  Keys to look up.
/// values: Values to associate with keys.
#[register_op(
    name = "LookupTableImportV2",
    attrs("Tin: type", "Tout: type"),
    inputs("table_handle: resource", "keys: Tin", "values: Tout"),
    stateful,
    not_differentiable,
    shape_fn = scalar_handle
)]
pub struct LookupTableImportV2;
