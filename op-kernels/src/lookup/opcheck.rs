//! How opcheck (`op_core::testing`) draws the generic table ops' inputs:
//! their `resource` input must be a table's handle, which only
//! `MutableHashTableV2` makes. Each case makes a fresh table of a drawn
//! (key, value) dtype pair, holding a few random entries, and draws keys
//! and values of those types in the shapes each op takes. The ops are
//! stateful, so opcheck does not compare their results from run to run.

use op_core::testing::{Case, Draw, OpCheckRegistration};
use op_core::{DType, OpCall, Result, Tensor, inventory};

/// Some of `MutableHashTableV2`'s (key, value) dtype pairs.
const PAIRS: [(DType, DType); 4] = [
    (DType::I64, DType::F32),
    (DType::I32, DType::F64),
    (DType::String, DType::I64),
    (DType::I64, DType::String),
];

/// A drawn (key, value) pair and a new table of it with 0 to 3 random
/// entries.
fn table(d: &mut Draw<'_>) -> Result<(DType, DType, Tensor)> {
    let (key, value) = PAIRS[d.below(PAIRS.len())];
    let handle = OpCall::new("MutableHashTableV2")
        .attr("key_dtype", key)
        .attr("value_dtype", value)
        .run()?
        .remove(0);
    let n = d.size(0..=3);
    OpCall::new("LookupTableInsertV2")
        .input(&handle)
        .input(d.tensor(key, &[n])?)
        .input(d.tensor(value, &[n])?)
        .run()?;
    Ok((key, value, handle))
}

/// Find: a table, keys of any shape, a scalar default.
fn find_cases(d: &mut Draw<'_>) -> Result<Case> {
    let (k, v, table) = table(d)?;
    let dims = d.dims(0..=2, 0..=3);
    Ok(Case::new()
        .input(table)
        .input(d.tensor(k, &dims)?)
        .input(d.tensor(v, &[])?))
}

/// Insert and Import: a table, keys and values of one shape.
fn insert_cases(d: &mut Draw<'_>) -> Result<Case> {
    let (k, v, table) = table(d)?;
    let dims = d.dims(1..=1, 0..=4);
    Ok(Case::new()
        .input(table)
        .input(d.tensor(k, &dims)?)
        .input(d.tensor(v, &dims)?))
}

/// Remove: a table and keys.
fn remove_cases(d: &mut Draw<'_>) -> Result<Case> {
    let (k, _, table) = table(d)?;
    let dims = d.dims(0..=2, 0..=3);
    Ok(Case::new().input(table).input(d.tensor(k, &dims)?))
}

/// Size: a table.
fn size_cases(d: &mut Draw<'_>) -> Result<Case> {
    Ok(Case::new().input(table(d)?.2))
}

/// Export: a table, with its dtypes as the outputs' attrs.
fn export_cases(d: &mut Draw<'_>) -> Result<Case> {
    let (k, v, table) = table(d)?;
    Ok(Case::new().input(table).attr("Tkeys", k).attr("Tvalues", v))
}

inventory::submit! {
    OpCheckRegistration::generator("LookupTableFindV2", find_cases, file!(), line!())
}
inventory::submit! {
    OpCheckRegistration::generator("LookupTableInsertV2", insert_cases, file!(), line!())
}
inventory::submit! {
    OpCheckRegistration::generator("LookupTableImportV2", insert_cases, file!(), line!())
}
inventory::submit! {
    OpCheckRegistration::generator("LookupTableRemoveV2", remove_cases, file!(), line!())
}
inventory::submit! {
    OpCheckRegistration::generator("LookupTableSizeV2", size_cases, file!(), line!())
}
inventory::submit! {
    OpCheckRegistration::generator("LookupTableExportV2", export_cases, file!(), line!())
}
