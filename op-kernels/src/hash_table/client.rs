//! The typed API over the hash table ops (the guide's Python
//! `SimpleHashTable` class): [`SimpleHashTableHandle`].

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use op_core::checkpoint::{Saveable, take_tensors};
use op_core::{
    Code, DType, Element, Error, Op, OpCall, ResourceHandle, Result, Runtime, Tensor, op_requires,
};

use super::element::{TableElement, TableKey};
use super::ops::{
    SimpleHashTableCreate, SimpleHashTableExport, SimpleHashTableFind, SimpleHashTableFindMany,
    SimpleHashTableImport, SimpleHashTableInsert, SimpleHashTableInsertMany, SimpleHashTableRemove,
};
use super::resource::{KEYS_KEY, SimpleHashTable, VALUES_KEY};

/// A hash table made and used through the ops, typed: the Rust
/// counterpart of the guide's Python `SimpleHashTable` class.
///
/// It holds the table's handle (a scalar `resource` tensor), so the table
/// lives while this value or one of its clones (which share the table)
/// does. Every method runs one op: single keys with the guide's ops,
/// [`find_many`](Self::find_many) and [`insert_many`](Self::insert_many)
/// with the batch ops (one lock per call). [`table`](Self::table) gives
/// the resource itself, for direct calls without the runtime.
///
/// It is [`Saveable`]: its checkpoint tensors are `keys` and `values`,
/// from `Examples>SimpleHashTableExport`, restored with
/// `Examples>SimpleHashTableImport`.
///
/// `K` is `i32`, `i64` or `Vec<u8>` (string) and `V` one of the values the
/// guide registers for it; another pair fails in [`new`](Self::new) with
/// `NotFound` (no kernel).
pub struct SimpleHashTableHandle<'r, K, V> {
    runtime: &'r Runtime,
    handle: Tensor,
    default: V,
    key: PhantomData<fn() -> K>,
}

impl<K, V: Clone> Clone for SimpleHashTableHandle<'_, K, V> {
    fn clone(&self) -> Self {
        SimpleHashTableHandle {
            runtime: self.runtime,
            handle: self.handle.clone(),
            default: self.default.clone(),
            key: PhantomData,
        }
    }
}

impl<K: TableKey, V: TableElement> fmt::Debug for SimpleHashTableHandle<'_, K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SimpleHashTableHandle")
            .field("handle", &self.handle)
            .field("default", &self.default)
            .finish()
    }
}

impl<K: TableKey, V: TableElement> SimpleHashTableHandle<'static, K, V> {
    /// A new, empty table on [`Runtime::global`], whose
    /// [`find`](Self::find) gives `default` for a missing key.
    pub fn new(default: V) -> Result<Self> {
        Self::new_on(Runtime::global(), default)
    }
}

/// The elements of a vector tensor, without a copy when the caller holds
/// the only reference to its buffer (an op's fresh output).
fn into_vec<T: Element>(tensor: Tensor) -> Result<Vec<T>> {
    let n = tensor.num_elements();
    let array = tensor.into_array::<T>()?;
    if !array.is_standard_layout() {
        return Ok(array.iter().cloned().collect());
    }
    match array.into_raw_vec_and_offset() {
        (vec, Some(0) | None) if vec.len() == n => Ok(vec),
        (vec, offset) => {
            let start = offset.unwrap_or(0);
            vec.get(start..start.saturating_add(n))
                .map(<[T]>::to_vec)
                .ok_or_else(|| {
                    Error::internal(format!(
                        "a tensor of {n} elements has a buffer of {} from offset {start}",
                        vec.len()
                    ))
                })
        }
    }
}

impl<'r, K: TableKey, V: TableElement> SimpleHashTableHandle<'r, K, V> {
    /// A new, empty table, made and used on `runtime`.
    pub fn new_on(runtime: &'r Runtime, default: V) -> Result<Self> {
        let mut outputs = OpCall::new(SimpleHashTableCreate::NAME)
            .attr("key_dtype", K::DTYPE)
            .attr("value_dtype", V::DTYPE)
            .run_on(runtime)?;
        Ok(SimpleHashTableHandle {
            runtime,
            handle: outputs.swap_remove(0),
            default,
            key: PhantomData,
        })
    }

    /// The handle: a scalar `resource` tensor, for calling the ops directly.
    pub fn handle(&self) -> &Tensor {
        &self.handle
    }

    /// The runtime whose ops this table runs.
    pub fn runtime(&self) -> &'r Runtime {
        self.runtime
    }

    /// The value [`find`](Self::find) gives for a missing key.
    pub fn default_value(&self) -> &V {
        &self.default
    }

    /// The table itself, for direct calls (its batch methods among them)
    /// without the runtime.
    pub fn table(&self) -> Result<Arc<SimpleHashTable<K, V>>> {
        let handle = self.handle.scalar_value::<ResourceHandle>()?;
        self.runtime
            .resource_manager()
            .resource::<SimpleHashTable<K, V>>(&handle)
    }

    /// The value of `key`, or the table's default (`Examples>SimpleHashTableFind`).
    pub fn find(&self, key: K) -> Result<V> {
        self.find_or(key, self.default.clone())
    }

    /// The value of `key`, or `default` (the Python class's
    /// `dynamic_default_value`).
    pub fn find_or(&self, key: K, default: V) -> Result<V> {
        let value = OpCall::new(SimpleHashTableFind::NAME)
            .input(&self.handle)
            .input(Tensor::scalar(key))
            .input(Tensor::scalar(default))
            .run_on(self.runtime)?;
        value
            .first()
            .ok_or_else(|| {
                Error::internal(format!("op {} gave no output", SimpleHashTableFind::NAME))
            })?
            .scalar_value::<V>()
    }

    /// Sets the value of `key` (`Examples>SimpleHashTableInsert`).
    pub fn insert(&self, key: K, value: V) -> Result<()> {
        OpCall::new(SimpleHashTableInsert::NAME)
            .input(&self.handle)
            .input(Tensor::scalar(key))
            .input(Tensor::scalar(value))
            .run_on(self.runtime)
            .map(drop)
    }

    /// Removes `key`; `NotFound` if the table has none
    /// (`Examples>SimpleHashTableRemove`).
    pub fn remove(&self, key: K) -> Result<()> {
        OpCall::new(SimpleHashTableRemove::NAME)
            .input(&self.handle)
            .input(Tensor::scalar(key))
            .attr("value_dtype", V::DTYPE)
            .run_on(self.runtime)
            .map(drop)
    }

    /// The outputs of `Examples>SimpleHashTableExport`: the keys and the
    /// values, two vectors.
    fn export_tensors(&self) -> Result<(Tensor, Tensor)> {
        let mut outputs = OpCall::new(SimpleHashTableExport::NAME)
            .input(&self.handle)
            .attr("key_dtype", K::DTYPE)
            .attr("value_dtype", V::DTYPE)
            .run_on(self.runtime)?;
        let values = outputs.pop();
        let keys = outputs.pop();
        keys.zip(values).ok_or_else(|| {
            Error::internal(format!(
                "op {} gave {} output(s), not 2",
                SimpleHashTableExport::NAME,
                outputs.len()
            ))
        })
    }

    /// Every key and its value, in the same (unspecified) order
    /// (`Examples>SimpleHashTableExport`).
    pub fn export(&self) -> Result<(Vec<K>, Vec<V>)> {
        let (keys, values) = self.export_tensors()?;
        Ok((into_vec(keys)?, into_vec(values)?))
    }

    /// Replaces the contents with `keys[i] -> values[i]`;
    /// `InvalidArgument`, and the table unchanged, if the lengths differ
    /// (`Examples>SimpleHashTableImport`).
    pub fn import(&self, keys: Vec<K>, values: Vec<V>) -> Result<()> {
        let (n_keys, n_values) = (keys.len(), values.len());
        self.import_tensors(
            Tensor::from_vec([n_keys], keys)?,
            Tensor::from_vec([n_values], values)?,
        )
    }

    fn import_tensors(&self, keys: Tensor, values: Tensor) -> Result<()> {
        OpCall::new(SimpleHashTableImport::NAME)
            .input(&self.handle)
            .input(keys)
            .input(values)
            .run_on(self.runtime)
            .map(drop)
    }

    /// The value of each key, or the table's default, under one lock
    /// (`Examples>SimpleHashTableFindMany`).
    pub fn find_many(&self, keys: &[K]) -> Result<Vec<V>> {
        self.find_many_or(keys, self.default.clone())
    }

    /// The value of each key, or `default`, under one lock
    /// (`Examples>SimpleHashTableFindMany`).
    pub fn find_many_or(&self, keys: &[K], default: V) -> Result<Vec<V>> {
        let keys = Tensor::from_vec([keys.len()], keys.to_vec())?;
        into_vec(self.find_tensor_or(keys, default)?)
    }

    /// The value of each key of `keys` (a tensor of any shape, shared
    /// without a copy when passed as `&Tensor`), or the table's default, as
    /// a tensor of the same shape (`Examples>SimpleHashTableFindMany`).
    pub fn find_tensor(&self, keys: impl Into<Tensor>) -> Result<Tensor> {
        self.find_tensor_or(keys, self.default.clone())
    }

    /// As [`find_tensor`](Self::find_tensor), with `default` for the keys
    /// the table does not have.
    pub fn find_tensor_or(&self, keys: impl Into<Tensor>, default: V) -> Result<Tensor> {
        let mut outputs = OpCall::new(SimpleHashTableFindMany::NAME)
            .input(&self.handle)
            .input(keys)
            .input(Tensor::scalar(default))
            .run_on(self.runtime)?;
        outputs.pop().ok_or_else(|| {
            Error::internal(format!(
                "op {} gave no output",
                SimpleHashTableFindMany::NAME
            ))
        })
    }

    /// Sets `keys[i] -> values[i]` under one lock; `InvalidArgument`, and
    /// the table unchanged, if the lengths differ
    /// (`Examples>SimpleHashTableInsertMany`).
    pub fn insert_many(&self, keys: &[K], values: &[V]) -> Result<()> {
        self.insert_tensors(
            Tensor::from_vec([keys.len()], keys.to_vec())?,
            Tensor::from_vec([values.len()], values.to_vec())?,
        )
    }

    /// Sets each key of `keys` to the value at the same position of
    /// `values`, two tensors of one shape (any rank), under one lock
    /// (`Examples>SimpleHashTableInsertMany`).
    pub fn insert_tensors(&self, keys: impl Into<Tensor>, values: impl Into<Tensor>) -> Result<()> {
        OpCall::new(SimpleHashTableInsertMany::NAME)
            .input(&self.handle)
            .input(keys)
            .input(values)
            .run_on(self.runtime)
            .map(drop)
    }
}

impl<K: TableKey, V: TableElement> SimpleHashTableHandle<'_, K, V> {
    /// `InvalidArgument` unless `tensor`, restored as `key`, is a vector of
    /// `dtype` (the table's `attr`).
    fn check_restored(&self, key: &str, tensor: &Tensor, attr: &str, dtype: DType) -> Result<()> {
        op_requires!(
            tensor.dtype() == dtype,
            Code::InvalidArgument,
            "cannot restore SimpleHashTable<{}, {}>: tensor '{key}' has dtype {}, but the table's {attr} is {dtype}",
            K::DTYPE,
            V::DTYPE,
            tensor.dtype()
        );
        op_requires!(
            tensor.rank() == 1,
            Code::InvalidArgument,
            "cannot restore SimpleHashTable<{}, {}>: tensor '{key}' must be a vector, but has shape {}",
            K::DTYPE,
            V::DTYPE,
            tensor.shape()
        );
        Ok(())
    }
}

impl<K: TableKey, V: TableElement> Saveable for SimpleHashTableHandle<'_, K, V> {
    /// Two tensors from `Examples>SimpleHashTableExport`: `keys` (a vector
    /// of `key_dtype`) and `values` (a vector of `value_dtype` of the same
    /// length), the value of `keys[i]` at `values[i]`.
    fn serialize_to_tensors(&self) -> Result<Vec<(String, Tensor)>> {
        let (keys, values) = self.export_tensors()?;
        Ok(vec![
            (KEYS_KEY.to_owned(), keys),
            (VALUES_KEY.to_owned(), values),
        ])
    }

    /// Replaces the contents with `keys` and `values` (with
    /// `Examples>SimpleHashTableImport`, which swaps the whole map in under
    /// one lock) after checking them: `NotFound` if either key is missing;
    /// `InvalidArgument` for another key, a key given twice, a tensor of
    /// another dtype than the table's (naming the key and both dtypes), one
    /// that is not a vector, or vectors of two lengths. On error the table
    /// is unchanged.
    fn restore_from_tensors(&self, tensors: Vec<(String, Tensor)>) -> Result<()> {
        let what = || format!("SimpleHashTable<{}, {}>", K::DTYPE, V::DTYPE);
        let [keys, values] = take_tensors(tensors, [KEYS_KEY, VALUES_KEY], &what(), "table")?;
        self.check_restored(KEYS_KEY, &keys, "key_dtype", K::DTYPE)?;
        self.check_restored(VALUES_KEY, &values, "value_dtype", V::DTYPE)?;
        op_requires!(
            keys.num_elements() == values.num_elements(),
            Code::InvalidArgument,
            "cannot restore {}: tensors '{KEYS_KEY}' and '{VALUES_KEY}' must have one length, but have {} and {} elements",
            what(),
            keys.num_elements(),
            values.num_elements()
        );
        self.import_tensors(keys, values)
    }
}
