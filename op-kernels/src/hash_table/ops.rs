//! The declarations of the hash table ops and their shape functions.
//!
//! Every op here is `not_differentiable`: a table's contents are state,
//! not a function of the ops' inputs, so no gradient flows through a
//! lookup or an update (the guide's `tf.no_gradient` lines mark Create,
//! Find, Insert and Remove; Export and Import, and the batch ops, are
//! reads and writes of the same state, as TensorFlow marks its own lookup
//! tables' find, insert and initialize ops).

use op_core::shape_inference::InferenceContext;
use op_core::{Result, register_op};

// ---- Shape functions (the guide's `simple_hash_table_op.cc`) ----

/// Inputs `0..count` must be scalars (an unknown rank is taken to be 0).
fn scalar_inputs(c: &mut InferenceContext<'_>, count: usize) -> Result<()> {
    for i in 0..count {
        let input = c.input(i)?;
        c.with_rank(input, 0)?;
    }
    Ok(())
}

/// Inputs 0 and 1 must be scalars; no outputs (the guide's
/// `TwoScalarInputs`, for remove).
pub fn two_scalar_inputs(c: &mut InferenceContext<'_>) -> Result<()> {
    scalar_inputs(c, 2)
}

/// Inputs 0, 1 and 2 must be scalars; no outputs (the guide's
/// `ThreeScalarInputs`, for insert).
pub fn three_scalar_inputs(c: &mut InferenceContext<'_>) -> Result<()> {
    scalar_inputs(c, 3)
}

/// Inputs 0, 1 and 2 must be scalars, and output 0 is a scalar (the
/// guide's `ThreeScalarInputsScalarOutput`, for find).
pub fn three_scalar_inputs_scalar_output(c: &mut InferenceContext<'_>) -> Result<()> {
    three_scalar_inputs(c)?;
    op_core::shape_inference::library::scalar(c)
}

/// Export: the handle (input 0) must be a scalar; `keys` and `values` are
/// vectors of one unknown length (one dimension, shared by both outputs).
///
/// The guide's `ExportShapeFunction` leaves both outputs of unknown rank;
/// ours says what the kernel produces.
pub fn export_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    scalar_inputs(c, 1)?;
    let size = c.unknown_dim();
    let keys = c.vector(size);
    let values = c.vector(size);
    c.set_output(0, keys)?;
    c.set_output(1, values)
}

/// Import: the handle (input 0) must be a scalar, and `keys` (input 1) and
/// `values` (input 2) vectors of one length; no outputs.
///
/// The guide's `ImportShapeFunction` merges dimension 0 of `keys` with
/// dimension 0 of `values` but does not require `values` to be a vector;
/// ours does, as its kernel reads both as vectors.
pub fn import_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    scalar_inputs(c, 1)?;
    let keys = c.input(1)?;
    let keys = c.with_rank(keys, 1)?;
    let values = c.input(2)?;
    let values = c.with_rank(values, 1)?;
    let (n_keys, n_values) = (c.dim(keys, 0)?, c.dim(values, 0)?);
    c.merge_dim(n_keys, n_values)?;
    Ok(())
}

/// FindMany: the handle (input 0) and `default_value` (input 2) must be
/// scalars; `values` has the shape of `keys` (input 1), whatever it is.
pub fn find_many_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    scalar_inputs(c, 1)?;
    let default = c.input(2)?;
    c.with_rank(default, 0)?;
    let keys = c.input(1)?;
    c.set_output(0, keys)
}

/// InsertMany: the handle (input 0) must be a scalar, and `keys` (input 1)
/// and `values` (input 2) of one shape (any rank); no outputs.
pub fn insert_many_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    scalar_inputs(c, 1)?;
    let keys = c.input(1)?;
    let values = c.input(2)?;
    c.merge(keys, values)?;
    Ok(())
}

// ---- Ops (the guide's `REGISTER_OP`s, signatures exactly as there) ----

/// Creates an empty hash table and outputs an owning handle to it.
///
/// The table is freed when the last handle to it is dropped; there is no
/// op to delete it.
///
/// output: the handle, a scalar.
/// key_dtype: the type of the table's keys.
/// value_dtype: the type of the table's values.
#[register_op(
    name = "Examples>SimpleHashTableCreate",
    not_differentiable,
    outputs("output: resource"),
    attrs("key_dtype: type", "value_dtype: type"),
    shape = "scalar"
)]
pub struct SimpleHashTableCreate;

/// Looks up a key in a hash table; outputs its value, or the default.
///
/// resource_handle: the table, as made by `Examples>SimpleHashTableCreate`.
/// key: the key, a scalar.
/// default_value: the value to output when the table has no `key`, a scalar.
/// value: the value of `key`, or `default_value`.
#[register_op(
    name = "Examples>SimpleHashTableFind",
    not_differentiable,
    inputs(
        "resource_handle: resource",
        "key: key_dtype",
        "default_value: value_dtype"
    ),
    outputs("value: value_dtype"),
    attrs("key_dtype: type", "value_dtype: type"),
    shape_fn = three_scalar_inputs_scalar_output
)]
pub struct SimpleHashTableFind;

/// Sets the value of a key in a hash table.
///
/// resource_handle: the table.
/// key: the key, a scalar.
/// value: its new value, a scalar.
#[register_op(
    name = "Examples>SimpleHashTableInsert",
    not_differentiable,
    inputs("resource_handle: resource", "key: key_dtype", "value: value_dtype"),
    attrs("key_dtype: type", "value_dtype: type"),
    shape_fn = three_scalar_inputs
)]
pub struct SimpleHashTableInsert;

/// Removes a key from a hash table; `NotFound` if it has none.
///
/// resource_handle: the table.
/// key: the key, a scalar.
/// value_dtype: the dtype of the table's values.
#[register_op(
    name = "Examples>SimpleHashTableRemove",
    not_differentiable,
    inputs("resource_handle: resource", "key: key_dtype"),
    attrs("key_dtype: type", "value_dtype: type"),
    shape_fn = two_scalar_inputs
)]
pub struct SimpleHashTableRemove;

/// Outputs every key of a hash table and its value (to save the table).
///
/// table_handle: the table.
/// keys: the keys, a vector.
/// values: the value of each key, a vector of the same length.
/// key_dtype: the dtype of the table's keys.
/// value_dtype: the dtype of the table's values.
#[register_op(
    name = "Examples>SimpleHashTableExport",
    not_differentiable,
    inputs("table_handle: resource"),
    outputs("keys: key_dtype", "values: value_dtype"),
    attrs("key_dtype: type", "value_dtype: type"),
    shape_fn = export_shape
)]
pub struct SimpleHashTableExport;

/// Replaces the contents of a hash table (to restore a saved table).
///
/// table_handle: the table.
/// keys: the keys, a vector.
/// values: the value of each key, a vector of the same length.
#[register_op(
    name = "Examples>SimpleHashTableImport",
    not_differentiable,
    inputs("table_handle: resource", "keys: key_dtype", "values: value_dtype"),
    attrs("key_dtype: type", "value_dtype: type"),
    shape_fn = import_shape
)]
pub struct SimpleHashTableImport;

// ---- Batch ops (not in the guide) ----

/// Looks up many keys in a hash table at once; outputs the value of each,
/// or the default, in a tensor of the keys' shape.
///
/// The whole batch is looked up under one lock: it sees the table as it
/// was at one moment.
///
/// resource_handle: the table, as made by `Examples>SimpleHashTableCreate`.
/// keys: the keys, a tensor of any shape.
/// default_value: the value to output for a key the table does not have, a scalar.
/// values: the value of each key, or `default_value`; the shape of `keys`.
#[register_op(
    name = "Examples>SimpleHashTableFindMany",
    not_differentiable,
    inputs(
        "resource_handle: resource",
        "keys: key_dtype",
        "default_value: value_dtype"
    ),
    outputs("values: value_dtype"),
    attrs("key_dtype: type", "value_dtype: type"),
    shape_fn = find_many_shape
)]
pub struct SimpleHashTableFindMany;

/// Sets the values of many keys in a hash table at once (a later duplicate
/// key wins).
///
/// The whole batch is inserted under one lock: no other op sees part of it.
///
/// resource_handle: the table.
/// keys: the keys, a tensor of any shape.
/// values: the value of each key, a tensor of the shape of `keys`.
#[register_op(
    name = "Examples>SimpleHashTableInsertMany",
    not_differentiable,
    inputs("resource_handle: resource", "keys: key_dtype", "values: value_dtype"),
    attrs("key_dtype: type", "value_dtype: type"),
    shape_fn = insert_many_shape
)]
pub struct SimpleHashTableInsertMany;

#[cfg(test)]
mod tests {
    use op_core::Registry;

    #[test]
    fn every_hash_table_op_is_marked_not_differentiable() {
        let registry = Registry::global();
        let ops: Vec<&str> = registry
            .ops()
            .map(|op| op.def().name.as_str())
            .filter(|name| name.starts_with("Examples>SimpleHashTable"))
            .collect();
        assert_eq!(ops.len(), 8, "{ops:?}");
        for op in ops {
            let registration = registry.gradient(op).unwrap().expect(op);
            assert!(registration.functions.is_none(), "{op}");
            assert_eq!(registration.file, file!(), "{op}");
        }
    }
}
