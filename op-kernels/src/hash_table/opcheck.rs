//! How opcheck (`op_core::testing`) draws the hash table ops' inputs:
//! their `resource` input must be a table's handle, which only
//! `SimpleHashTableCreate` makes. Each case makes a fresh table of the
//! kernel's key and value types, holding a few random entries, and draws
//! keys and values of those types in the shapes each op takes (scalars,
//! or vectors of one length). The ops are stateful, so opcheck does not
//! compare their results from run to run.

use op_core::testing::{Case, Draw, OpCheckRegistration};
use op_core::{DType, OpCall, Result, Tensor, inventory};

/// The kernel's key and value types.
fn types(d: &Draw<'_>) -> (DType, DType) {
    (
        d.kernel_dtype("key_dtype").unwrap_or(DType::I64),
        d.kernel_dtype("value_dtype").unwrap_or(DType::F32),
    )
}

/// A new table of these types holding 0 to 3 random entries, and their
/// keys.
fn table(d: &mut Draw<'_>, key: DType, value: DType) -> Result<(Tensor, Tensor)> {
    let handle = OpCall::new("Examples>SimpleHashTableCreate")
        .attr("key_dtype", key)
        .attr("value_dtype", value)
        .run()?
        .remove(0);
    let n = d.size(0..=3);
    let (keys, values) = (d.tensor(key, &[n])?, d.tensor(value, &[n])?);
    OpCall::new("Examples>SimpleHashTableInsertMany")
        .input(&handle)
        .input(&keys)
        .input(values)
        .run()?;
    Ok((handle, keys))
}

/// Find: a table, a key, a default value.
fn find_cases(d: &mut Draw<'_>) -> Result<Case> {
    let (k, v) = types(d);
    Ok(Case::new()
        .input(table(d, k, v)?.0)
        .input(d.tensor(k, &[])?)
        .input(d.tensor(v, &[])?))
}

/// FindMany: a table, keys of any shape, a default value.
fn find_many_cases(d: &mut Draw<'_>) -> Result<Case> {
    let (k, v) = types(d);
    let dims = d.dims(0..=2, 0..=3);
    Ok(Case::new()
        .input(table(d, k, v)?.0)
        .input(d.tensor(k, &dims)?)
        .input(d.tensor(v, &[])?))
}

/// Insert: a table, a key, a value.
fn insert_cases(d: &mut Draw<'_>) -> Result<Case> {
    find_cases(d)
}

/// InsertMany and Import: a table, keys and values, vectors of one
/// length.
fn insert_many_cases(d: &mut Draw<'_>) -> Result<Case> {
    let (k, v) = types(d);
    let n = d.size(0..=4);
    Ok(Case::new()
        .input(table(d, k, v)?.0)
        .input(d.tensor(k, &[n])?)
        .input(d.tensor(v, &[n])?))
}

/// Remove: a table and, mostly, one of its keys (removing a key it does
/// not hold is an error).
fn remove_cases(d: &mut Draw<'_>) -> Result<Case> {
    let (k, v) = types(d);
    let (table, keys) = table(d, k, v)?;
    let key = match keys.num_elements() {
        n if n > 0 && d.chance(0.8) => {
            // One of the keys, whatever their type: a slice of one.
            let at = d.below(n);
            OpCall::new("Slice")
                .input(keys)
                .input(Tensor::from_vec([1], vec![at as i32])?)
                .input(Tensor::from_vec([1], vec![1i32])?)
                .run()?
                .remove(0)
                .reshape([])?
        }
        _ => d.tensor(k, &[])?,
    };
    Ok(Case::new().input(table).input(key).attr("value_dtype", v))
}

/// Export: a table.
fn export_cases(d: &mut Draw<'_>) -> Result<Case> {
    let (k, v) = types(d);
    Ok(Case::new()
        .input(table(d, k, v)?.0)
        .attr("key_dtype", k)
        .attr("value_dtype", v))
}

inventory::submit! {
    OpCheckRegistration::generator("Examples>SimpleHashTableFind", find_cases, file!(), line!())
}
inventory::submit! {
    OpCheckRegistration::generator("Examples>SimpleHashTableFindMany", find_many_cases, file!(), line!())
}
inventory::submit! {
    OpCheckRegistration::generator("Examples>SimpleHashTableInsert", insert_cases, file!(), line!())
}
inventory::submit! {
    OpCheckRegistration::generator("Examples>SimpleHashTableInsertMany", insert_many_cases, file!(), line!())
}
inventory::submit! {
    OpCheckRegistration::generator("Examples>SimpleHashTableImport", insert_many_cases, file!(), line!())
}
inventory::submit! {
    OpCheckRegistration::generator("Examples>SimpleHashTableRemove", remove_cases, file!(), line!())
}
inventory::submit! {
    OpCheckRegistration::generator("Examples>SimpleHashTableExport", export_cases, file!(), line!())
}
