//! `SimpleHashTable`, the guide's stateful op example ("Create a stateful
//! custom op"): a hash table held in a [`Resource`] and reached through six
//! ops that pass its handle around.
//!
//! | op | what it does | shape function |
//! | --- | --- | --- |
//! | `Examples>SimpleHashTableCreate` | a new, empty table; outputs an owning handle | the library's `scalar` (the guide's `ScalarOutput`) |
//! | `Examples>SimpleHashTableFind` | the value of a key, or the default | [`three_scalar_inputs_scalar_output`] |
//! | `Examples>SimpleHashTableInsert` | sets a key's value | [`three_scalar_inputs`] |
//! | `Examples>SimpleHashTableRemove` | removes a key (`NotFound` if absent) | [`two_scalar_inputs`] |
//! | `Examples>SimpleHashTableExport` | every key and value, as two vectors | [`export_shape`] |
//! | `Examples>SimpleHashTableImport` | replaces the contents with two vectors | [`import_shape`] |
//!
//! Each op has a kernel for each of the guide's 15 (key, value) dtype
//! pairs (`REGISTER_KERNEL(int32, double)` ... `REGISTER_KERNEL(tstring,
//! tstring)`), all from one generic function per op.
//!
//! The table lives exactly as long as a handle to it does: the create
//! kernel returns [`ResourceHandle::owning`], and the other kernels resolve
//! it with [`ResourceMgr::resource`](op_core::resource::ResourceMgr::resource),
//! which rejects a table of another dtype pair with `InvalidArgument`.
//!
//! [`SimpleHashTableHandle`] is the typed Rust API over the ops, like the
//! guide's Python class:
//!
//! ```
//! use op_kernels::simple_hash_table::SimpleHashTableHandle;
//!
//! let table = SimpleHashTableHandle::<i32, f32>::new(-999.0)?;
//! assert_eq!(table.find(1)?, -999.0);
//! table.insert(1, 100.0)?;
//! assert_eq!(table.find(1)?, 100.0);
//! table.remove(1)?;
//! assert_eq!(table.find_or(1, -1.0)?, -1.0);
//! # Ok::<(), op_core::Error>(())
//! ```

use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;
use std::marker::PhantomData;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use op_core::resource::Resource;
use op_core::shape_inference::InferenceContext;
use op_core::{
    Code, DEVICE_CPU, DType, Element, Error, KernelContext, Op, OpCall, ResourceHandle, Result,
    Runtime, Tensor, kernel, op_requires, register_op,
};

/// An element type that a table holds as a key or a value: `int32`,
/// `int64`, `float`, `double`, `bool` and `string` (`Vec<u8>`).
pub trait TableElement: Element {
    /// The bytes this element holds on the heap (for
    /// [`Resource::memory_used`]).
    fn heap_bytes(&self) -> usize {
        0
    }

    /// The element as text, for messages.
    fn describe(&self) -> String;
}

macro_rules! table_element_by_display {
    ($($t:ty),*) => {$(
        impl TableElement for $t {
            fn describe(&self) -> String {
                self.to_string()
            }
        }
    )*};
}

table_element_by_display!(i32, i64, f32, f64, bool);

impl TableElement for Vec<u8> {
    fn heap_bytes(&self) -> usize {
        self.capacity()
    }

    fn describe(&self) -> String {
        format!("\"{}\"", self.escape_ascii())
    }
}

/// An element type that a table can use as a key: `int32`, `int64` and
/// `string`.
pub trait TableKey: TableElement + Eq + Hash {}

impl<T: TableElement + Eq + Hash> TableKey for T {}

/// The guide's `SimpleHashTableResource`: a map from `K` to `V` behind a
/// reader-writer lock, shared by the kernels that hold its handle.
///
/// Every method takes the lock once, so each is atomic; the batch methods
/// ([`find_many`](Self::find_many), [`insert_many`](Self::insert_many))
/// handle many keys for one lock.
pub struct SimpleHashTable<K, V> {
    table: RwLock<HashMap<K, V>>,
}

impl<K, V> Default for SimpleHashTable<K, V> {
    fn default() -> Self {
        SimpleHashTable {
            table: RwLock::new(HashMap::new()),
        }
    }
}

impl<K: TableKey, V: TableElement> fmt::Debug for SimpleHashTable<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.debug_string())
    }
}

/// `InvalidArgument` unless `keys` and `values` have one length.
fn check_lengths(keys: usize, values: usize) -> Result<()> {
    op_requires!(
        keys == values,
        Code::InvalidArgument,
        "keys and values must have one length, but there are {keys} key(s) and {values} value(s)"
    );
    Ok(())
}

impl<K: TableKey, V: TableElement> SimpleHashTable<K, V> {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    // A thread that panicked while holding the lock left the map whole
    // (every update is a single map operation), so a poisoned lock is used
    // as is.
    fn read(&self) -> RwLockReadGuard<'_, HashMap<K, V>> {
        self.table.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, HashMap<K, V>> {
        self.table.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.read().len()
    }

    /// Whether the table has no entries.
    pub fn is_empty(&self) -> bool {
        self.read().is_empty()
    }

    /// The value of `key`, or `default` if the table has none.
    pub fn find(&self, key: &K, default: &V) -> V {
        self.read().get(key).unwrap_or(default).clone()
    }

    /// Sets the value of `key`; returns the value it replaces, if any.
    pub fn insert(&self, key: K, value: V) -> Option<V> {
        self.write().insert(key, value)
    }

    /// Removes `key` and returns its value. `NotFound` if the table has
    /// no such key (as the guide's `Remove`).
    pub fn remove(&self, key: &K) -> Result<V> {
        self.write().remove(key).ok_or_else(|| {
            Error::not_found(format!("Key for remove not found: {}", key.describe()))
        })
    }

    /// Every key and its value, in the same (unspecified) order.
    pub fn export(&self) -> (Vec<K>, Vec<V>) {
        self.read()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .unzip()
    }

    /// Replaces the contents with `keys[i] -> values[i]` (a later
    /// duplicate key wins). `InvalidArgument`, and the table unchanged, if
    /// the lengths differ.
    pub fn import(&self, keys: &[K], values: &[V]) -> Result<()> {
        check_lengths(keys.len(), values.len())?;
        let mut table = self.write();
        table.clear();
        table.extend(keys.iter().cloned().zip(values.iter().cloned()));
        Ok(())
    }

    /// The value of each key, or `default`, under one lock.
    pub fn find_many(&self, keys: &[K], default: &V) -> Vec<V> {
        let table = self.read();
        keys.iter()
            .map(|k| table.get(k).unwrap_or(default).clone())
            .collect()
    }

    /// Sets `keys[i] -> values[i]` under one lock (a later duplicate key
    /// wins). `InvalidArgument`, and the table unchanged, if the lengths
    /// differ.
    pub fn insert_many(&self, keys: &[K], values: &[V]) -> Result<()> {
        check_lengths(keys.len(), values.len())?;
        let mut table = self.write();
        table.reserve(keys.len());
        table.extend(keys.iter().cloned().zip(values.iter().cloned()));
        Ok(())
    }
}

impl<K: TableKey, V: TableElement> Resource for SimpleHashTable<K, V> {
    /// `SimpleHashTable<int64, float> of 1000 entries`: the dtypes and the
    /// size, never the contents.
    fn debug_string(&self) -> String {
        format!(
            "SimpleHashTable<{}, {}> of {} entries",
            K::DTYPE,
            V::DTYPE,
            self.len()
        )
    }

    /// An estimate: the map's slots (key, value and a control byte each, at
    /// its capacity) plus the bytes of string keys and values.
    fn memory_used(&self) -> usize {
        let table = self.read();
        let slot = size_of::<K>() + size_of::<V>() + 1;
        let mut bytes = size_of::<Self>() + table.capacity() * slot;
        if K::DTYPE == DType::String || V::DTYPE == DType::String {
            bytes += table
                .iter()
                .map(|(k, v)| k.heap_bytes() + v.heap_bytes())
                .sum::<usize>();
        }
        bytes
    }
}

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
    inputs("resource_handle: resource", "key: key_dtype", "value: value_dtype"),
    attrs("key_dtype: type", "value_dtype: type"),
    shape_fn = three_scalar_inputs
)]
pub struct SimpleHashTableInsert;

/// Removes a key from a hash table; `NotFound` if it has none.
///
/// resource_handle: the table.
/// key: the key, a scalar.
#[register_op(
    name = "Examples>SimpleHashTableRemove",
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
#[register_op(
    name = "Examples>SimpleHashTableExport",
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
    inputs("table_handle: resource", "keys: key_dtype", "values: value_dtype"),
    attrs("key_dtype: type", "value_dtype: type"),
    shape_fn = import_shape
)]
pub struct SimpleHashTableImport;

// ---- Kernels ----

/// The table that input 0's handle refers to (the guide's `GetResource`).
/// A table of another dtype pair is an `InvalidArgument` error that names
/// the pair the node asked for.
fn table_of<K: TableKey, V: TableElement>(
    ctx: &KernelContext<'_>,
) -> Result<Arc<SimpleHashTable<K, V>>> {
    let handle: ResourceHandle = ctx.input_scalar(0)?;
    ctx.resource_manager()
        .resource::<SimpleHashTable<K, V>>(&handle)
        .map_err(|e| match e.code() {
            Code::InvalidArgument => Error::invalid_argument(format!(
                "the table's key and value dtypes are not key_dtype={} and value_dtype={}: {}",
                K::DTYPE,
                V::DTYPE,
                e.message()
            )),
            _ => e,
        })
}

/// Stamps the guide's 15 (key, value) dtype pairs on each kernel function:
/// its `REGISTER_KERNEL(key_dtype, value_dtype)` list, in its order.
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

table_kernels! {
    SimpleHashTableCreate =>
    fn simple_hash_table_create<K: TableKey, V: TableElement>(
        ctx: &mut KernelContext<'_>,
    ) -> Result<()> {
        let table = Arc::new(SimpleHashTable::<K, V>::new());
        let handle = ResourceHandle::owning(DEVICE_CPU, table);
        ctx.set_output(0, Tensor::scalar(handle))
    }

    SimpleHashTableFind =>
    fn simple_hash_table_find<K: TableKey, V: TableElement>(
        ctx: &mut KernelContext<'_>,
    ) -> Result<()> {
        let table = table_of::<K, V>(ctx)?;
        let key: K = ctx.input_scalar(1)?;
        let default: V = ctx.input_scalar(2)?;
        ctx.set_output(0, Tensor::scalar(table.find(&key, &default)))
    }

    SimpleHashTableInsert =>
    fn simple_hash_table_insert<K: TableKey, V: TableElement>(
        ctx: &mut KernelContext<'_>,
    ) -> Result<()> {
        let table = table_of::<K, V>(ctx)?;
        let key: K = ctx.input_scalar(1)?;
        let value: V = ctx.input_scalar(2)?;
        table.insert(key, value);
        Ok(())
    }

    SimpleHashTableRemove =>
    fn simple_hash_table_remove<K: TableKey, V: TableElement>(
        ctx: &mut KernelContext<'_>,
    ) -> Result<()> {
        let table = table_of::<K, V>(ctx)?;
        let key: K = ctx.input_scalar(1)?;
        table.remove(&key).map(drop)
    }

    SimpleHashTableExport =>
    fn simple_hash_table_export<K: TableKey, V: TableElement>(
        ctx: &mut KernelContext<'_>,
    ) -> Result<()> {
        let table = table_of::<K, V>(ctx)?;
        let (keys, values) = table.export();
        let n = keys.len();
        ctx.set_output(0, Tensor::from_vec([n], keys)?)?;
        ctx.set_output(1, Tensor::from_vec([n], values)?)
    }

    SimpleHashTableImport =>
    fn simple_hash_table_import<K: TableKey, V: TableElement>(
        ctx: &mut KernelContext<'_>,
    ) -> Result<()> {
        let table = table_of::<K, V>(ctx)?;
        let keys = ctx.input_vector::<K>(1)?;
        let values = ctx.input_vector::<V>(2)?;
        table.import(keys, values)
    }
}

// ---- The typed API (the guide's Python `SimpleHashTable` class) ----

/// A hash table made and used through the ops, typed: the Rust
/// counterpart of the guide's Python `SimpleHashTable` class.
///
/// It holds the table's handle (a scalar `resource` tensor), so the table
/// lives while this value or one of its clones (which share the table)
/// does. Single-key methods run one op each; [`find_many`](Self::find_many)
/// and [`insert_many`](Self::insert_many) call the table's batch methods
/// directly, under one lock.
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

    /// The value [`find`](Self::find) gives for a missing key.
    pub fn default_value(&self) -> &V {
        &self.default
    }

    /// The table itself, for direct (batch) access.
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
        value[0].scalar_value::<V>()
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

    /// Every key and its value, in the same (unspecified) order
    /// (`Examples>SimpleHashTableExport`).
    pub fn export(&self) -> Result<(Vec<K>, Vec<V>)> {
        let outputs = OpCall::new(SimpleHashTableExport::NAME)
            .input(&self.handle)
            .attr("key_dtype", K::DTYPE)
            .attr("value_dtype", V::DTYPE)
            .run_on(self.runtime)?;
        Ok((
            outputs[0].as_slice::<K>()?.to_vec(),
            outputs[1].as_slice::<V>()?.to_vec(),
        ))
    }

    /// Replaces the contents with `keys[i] -> values[i]`;
    /// `InvalidArgument` if the lengths differ
    /// (`Examples>SimpleHashTableImport`).
    pub fn import(&self, keys: Vec<K>, values: Vec<V>) -> Result<()> {
        let (n_keys, n_values) = (keys.len(), values.len());
        OpCall::new(SimpleHashTableImport::NAME)
            .input(&self.handle)
            .input(Tensor::from_vec([n_keys], keys)?)
            .input(Tensor::from_vec([n_values], values)?)
            .run_on(self.runtime)
            .map(drop)
    }

    /// The value of each key, or the table's default, under one lock
    /// ([`SimpleHashTable::find_many`]).
    pub fn find_many(&self, keys: &[K]) -> Result<Vec<V>> {
        Ok(self.table()?.find_many(keys, &self.default))
    }

    /// Sets `keys[i] -> values[i]` under one lock
    /// ([`SimpleHashTable::insert_many`]).
    pub fn insert_many(&self, keys: &[K], values: &[V]) -> Result<()> {
        self.table()?.insert_many(keys, values)
    }
}
