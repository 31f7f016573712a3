//! The CPU kernels of the lookup table ops. `MutableHashTableV2` makes (or
//! finds) its [`SimpleHashTable`] with [`ResourceOpState`]; the
//! `LookupTable*V2` kernels reach any table through its
//! [`LookupInterface`] ([`Resource::as_lookup`]), whatever its type.

use std::marker::PhantomData;
use std::sync::Arc;

use op_core::resource::lookup::LookupInterface;
use op_core::resource::{Resource, ResourceOpState};
use op_core::{
    Code, Error, KernelConstruction, KernelContext, ResourceHandle, Result, Tensor, kernel,
};

use super::ops::{
    LookupTableExportV2, LookupTableFindV2, LookupTableImportV2, LookupTableInsertV2,
    LookupTableRemoveV2, LookupTableSizeV2, MutableHashTableV2,
};
use crate::hash_table::{SimpleHashTable, TableElement, TableKey, table_kernels};

/// `MutableHashTableV2`'s kernel: a [`SimpleHashTable`] of the node's key
/// and value dtypes, shared by name, one per graph node, or a new one per
/// eager call ([`ResourceOpState`]'s rules).
pub(super) struct MutableHashTableOp<K, V> {
    state: ResourceOpState<SimpleHashTable<K, V>>,
    types: PhantomData<(K, V)>,
}

table_kernels! {
    MutableHashTableV2 =>
    impl<K: TableKey, V: TableElement> MutableHashTableOp<K, V> {
        fn new(c: &KernelConstruction<'_>) -> Result<Self> {
            let use_node_name_sharing = c.get_attr::<bool>("use_node_name_sharing")?;
            Ok(MutableHashTableOp {
                state: ResourceOpState::new(c, use_node_name_sharing)?,
                types: PhantomData,
            })
        }

        fn compute(&self, ctx: &mut KernelContext<'_>) -> Result<()> {
            self.state.set_handle_output(ctx, 0, || Ok(SimpleHashTable::new()))
        }
    }
}

/// The table input 0's handle reaches: any resource that is a lookup table.
/// `InvalidArgument` naming the node for a handle to another resource.
fn table(ctx: &KernelContext<'_>) -> Result<Arc<dyn Resource>> {
    let handle: ResourceHandle = ctx.input_scalar(0)?;
    let resource = ctx
        .resource_manager()
        .resource_dyn(&handle)
        .map_err(|e| ctx.error(e.code(), e.message()))?;
    if resource.as_lookup().is_none() {
        return Err(ctx.error(
            Code::InvalidArgument,
            format_args!(
                "input 0 (table_handle) is a handle to {}, which is not a lookup table",
                op_core::error::capped(&resource.debug_string())
            ),
        ));
    }
    Ok(resource)
}

/// Runs `f` on the table of input 0; its errors name the node.
fn with_table<T>(
    ctx: &KernelContext<'_>,
    f: impl FnOnce(&dyn LookupInterface) -> Result<T>,
) -> Result<T> {
    let resource = table(ctx)?;
    let lookup = resource.as_lookup().expect("checked by table()");
    f(lookup).map_err(|e: Error| ctx.error(e.code(), e.message()))
}

#[kernel(op = LookupTableFindV2)]
fn lookup_table_find_v2(ctx: &mut KernelContext<'_>) -> Result<Tensor> {
    with_table(ctx, |table| table.find(ctx.input(1)?, ctx.input(2)?))
}

#[kernel(op = LookupTableInsertV2)]
fn lookup_table_insert_v2(ctx: &mut KernelContext<'_>) -> Result<()> {
    with_table(ctx, |table| table.insert(ctx.input(1)?, ctx.input(2)?))
}

#[kernel(op = LookupTableRemoveV2)]
fn lookup_table_remove_v2(ctx: &mut KernelContext<'_>) -> Result<()> {
    with_table(ctx, |table| table.remove(ctx.input(1)?))
}

#[kernel(op = LookupTableSizeV2)]
fn lookup_table_size_v2(ctx: &mut KernelContext<'_>) -> Result<Tensor> {
    let size = with_table(ctx, |table| Ok(table.size()))?;
    Ok(Tensor::scalar(i64::try_from(size).unwrap_or(i64::MAX)))
}

#[kernel(op = LookupTableExportV2)]
fn lookup_table_export_v2(ctx: &mut KernelContext<'_>) -> Result<()> {
    let (keys, values) = with_table(ctx, |table| table.export())?;
    ctx.set_output(0, keys)?;
    ctx.set_output(1, values)
}

#[kernel(op = LookupTableImportV2)]
fn lookup_table_import_v2(ctx: &mut KernelContext<'_>) -> Result<()> {
    with_table(ctx, |table| table.import(ctx.input(1)?, ctx.input(2)?))
}
