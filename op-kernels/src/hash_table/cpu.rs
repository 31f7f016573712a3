//! The CPU kernels of the hash table ops.

use std::sync::Arc;

use op_core::{Code, KernelContext, Result, Tensor, kernel};

use super::element::{TableElement, TableKey};
use super::ops::{
    SimpleHashTableCreate, SimpleHashTableExport, SimpleHashTableFind, SimpleHashTableFindMany,
    SimpleHashTableImport, SimpleHashTableInsert, SimpleHashTableInsertMany, SimpleHashTableRemove,
};
use super::resource::SimpleHashTable;

/// Stamps the guide's 15 (key, value) dtype pairs on each kernel (a
/// function or an impl): its `REGISTER_KERNEL(key_dtype, value_dtype)`
/// list, in its order.
macro_rules! table_kernels {
    ($($op:ident => $kernel:item)*) => {$(
        #[kernel(
            op = $op,
            types(key_dtype = int32, value_dtype = double),
            types(key_dtype = int32, value_dtype = float),
            types(key_dtype = int32, value_dtype = int32),
            types(key_dtype = int32, value_dtype = string),
            types(key_dtype = int64, value_dtype = double),
            types(key_dtype = int64, value_dtype = float),
            types(key_dtype = int64, value_dtype = int32),
            types(key_dtype = int64, value_dtype = int64),
            types(key_dtype = int64, value_dtype = string),
            types(key_dtype = string, value_dtype = bool),
            types(key_dtype = string, value_dtype = double),
            types(key_dtype = string, value_dtype = float),
            types(key_dtype = string, value_dtype = int32),
            types(key_dtype = string, value_dtype = int64),
            types(key_dtype = string, value_dtype = string),
        )]
        $kernel
    )*};
}

// Also stamped on TensorFlow's generic table, `MutableHashTableV2`
// (`crate::lookup`), which holds the same table.
pub(crate) use table_kernels;

// The kernels take the table as a typed `#[resource]` parameter (the
// guide's `GetResource` with its type check, generated): a handle to a
// table of another dtype pair is an `InvalidArgument` error naming the op,
// node and input and both table types.
table_kernels! {
    SimpleHashTableCreate =>
    fn simple_hash_table_create<K: TableKey, V: TableElement>(
        _ctx: &mut KernelContext<'_>,
    ) -> Result<Arc<SimpleHashTable<K, V>>> {
        Ok(Arc::new(SimpleHashTable::new()))
    }

    SimpleHashTableFind =>
    fn simple_hash_table_find<K: TableKey, V: TableElement>(
        ctx: &mut KernelContext<'_>,
        #[resource] resource_handle: &SimpleHashTable<K, V>,
    ) -> Result<Tensor> {
        let key: K = ctx.input_scalar(1)?;
        let default: V = ctx.input_scalar(2)?;
        Ok(Tensor::scalar(resource_handle.find(&key, &default)))
    }

    SimpleHashTableInsert =>
    fn simple_hash_table_insert<K: TableKey, V: TableElement>(
        ctx: &mut KernelContext<'_>,
        #[resource] resource_handle: &SimpleHashTable<K, V>,
    ) -> Result<()> {
        let key: K = ctx.input_scalar(1)?;
        let value: V = ctx.input_scalar(2)?;
        resource_handle.insert(key, value);
        Ok(())
    }

    SimpleHashTableRemove =>
    fn simple_hash_table_remove<K: TableKey, V: TableElement>(
        ctx: &mut KernelContext<'_>,
        #[resource] resource_handle: &SimpleHashTable<K, V>,
    ) -> Result<()> {
        let key: K = ctx.input_scalar(1)?;
        resource_handle.remove(&key).map(drop)
    }

    SimpleHashTableExport =>
    fn simple_hash_table_export<K: TableKey, V: TableElement>(
        ctx: &mut KernelContext<'_>,
        #[resource] table_handle: &SimpleHashTable<K, V>,
    ) -> Result<()> {
        let (keys, values) = table_handle.export();
        let n = keys.len();
        ctx.set_output(0, Tensor::from_vec([n], keys)?)?;
        ctx.set_output(1, Tensor::from_vec([n], values)?)
    }

    SimpleHashTableImport =>
    fn simple_hash_table_import<K: TableKey, V: TableElement>(
        ctx: &mut KernelContext<'_>,
        #[resource] table_handle: &SimpleHashTable<K, V>,
    ) -> Result<()> {
        let keys = ctx.input_vector::<K>(1)?;
        let values = ctx.input_vector::<V>(2)?;
        table_handle.import(keys, values)
    }

    SimpleHashTableFindMany =>
    fn simple_hash_table_find_many<K: TableKey, V: TableElement>(
        ctx: &mut KernelContext<'_>,
        #[resource] resource_handle: &SimpleHashTable<K, V>,
    ) -> Result<Tensor> {
        let default: V = ctx.input_scalar(2)?;
        let dims = ctx.input(1)?.dims().to_vec();
        let keys = ctx.input_slice::<K>(1)?;
        let values = resource_handle.find_many_on(ctx.threads(), keys, &default);
        Tensor::from_vec(dims, values)
    }

    SimpleHashTableInsertMany =>
    fn simple_hash_table_insert_many<K: TableKey, V: TableElement>(
        ctx: &mut KernelContext<'_>,
        #[resource] resource_handle: &SimpleHashTable<K, V>,
    ) -> Result<()> {
        let (keys, values) = (ctx.input(1)?, ctx.input(2)?);
        if keys.dims() != values.dims() {
            return Err(ctx.error(
                Code::InvalidArgument,
                format_args!(
                    "input 1 ('keys') and input 2 ('values') must have one shape, but have shapes {} and {}",
                    keys.shape(),
                    values.shape()
                ),
            ));
        }
        resource_handle.insert_many(ctx.input_slice::<K>(1)?, ctx.input_slice::<V>(2)?)
    }
}
