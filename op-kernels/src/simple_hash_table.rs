//! `SimpleHashTable`, the guide's stateful op example ("Create a stateful
//! custom op"): a hash table held in a [`Resource`] and reached through ops
//! that pass its handle around: the guide's six, plus two batch ops (the
//! guide notes that real lookup tables take many keys per call).
//!
//! | op | what it does | shape function |
//! | --- | --- | --- |
//! | `Examples>SimpleHashTableCreate` | a new, empty table; outputs an owning handle | the library's `scalar` (the guide's `ScalarOutput`) |
//! | `Examples>SimpleHashTableFind` | the value of a key, or the default | [`three_scalar_inputs_scalar_output`] |
//! | `Examples>SimpleHashTableInsert` | sets a key's value | [`three_scalar_inputs`] |
//! | `Examples>SimpleHashTableRemove` | removes a key (`NotFound` if absent) | [`two_scalar_inputs`] |
//! | `Examples>SimpleHashTableExport` | every key and value, as two vectors | [`export_shape`] |
//! | `Examples>SimpleHashTableImport` | replaces the contents with two vectors | [`import_shape`] |
//! | `Examples>SimpleHashTableFindMany` | the value of each key of a tensor of any shape, or the default | [`find_many_shape`] |
//! | `Examples>SimpleHashTableInsertMany` | sets the values of a tensor of keys | [`insert_many_shape`] |
//!
//! Each op has a kernel for each of the guide's 15 (key, value) dtype
//! pairs (`REGISTER_KERNEL(int32, double)` ... `REGISTER_KERNEL(tstring,
//! tstring)`), all from one generic function per op. Every kernel takes the
//! table's lock once, so each call is atomic, batch calls included.
//!
//! The table lives exactly as long as a handle to it does: the create
//! kernel returns [`ResourceHandle::owning`], and the other kernels resolve
//! it with [`KernelContext::resource`], which rejects a table of another
//! dtype pair with `InvalidArgument`.
//!
//! [`SimpleHashTableHandle`] is the typed Rust API over the ops, like the
//! guide's Python class; it is [`Saveable`] (checkpoints) through the
//! export and import ops.
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
//! table.insert_many(&[1, 2], &[10.0, 20.0])?;
//! assert_eq!(table.find_many(&[2, 3, 1])?, [20.0, -999.0, 10.0]);
//! # Ok::<(), op_core::Error>(())
//! ```
//!
//! # The map and its hasher
//!
//! The map is an open-addressing table of our own (`flat_table.rs`)
//! hashed with [`foldhash::fast::RandomState`]: each table gets its own
//! seed (from a per-process random seed and a per-table counter), so keys
//! cannot be chosen in advance to collide (some HashDoS resistance, unlike
//! an unseeded hasher such as FxHash), and the order a table exports in
//! does not cluster the keys of another table it is imported into
//! ([`import`](SimpleHashTable::import) builds its new map with a fresh
//! seed too). With std's SipHash, batch lookups were three to seven times
//! slower.
//!
//! # Why this layout
//!
//! A batch lookup in a table much larger than the caches (1,000,000
//! `(i64, f32)` entries are 32 MB) waits on memory for each key. hashbrown
//! (std's map, which the resource used before) keeps a table's control
//! bytes apart from its entries, so a lookup there is two dependent cache
//! misses, and it does not say where a key's bucket is, so a batch cannot
//! fetch the buckets of later keys early. Our table keeps groups of four
//! slots in one 64-byte cache line each (the four 16-bit tags, keys and
//! values), so a lookup of an integer key is one line, whose address
//! follows from the hash alone:
//!
//! - [`SimpleHashTable::find_many`] hashes the key 32 positions ahead of
//!   the one it looks up and prefetches its home group (x86_64's
//!   `prefetcht0`; nothing on other targets), so up to 32 lookups' memory
//!   accesses can be in flight at once instead of a few. That call is the
//!   table's only `unsafe` block.
//! - A group is searched by comparing the key's tag with the group's four
//!   tags in one 64-bit word; keys are compared only where a tag matches.
//!   A first version that probed slot by slot (one branch per slot)
//!   mispredicted: 8 to 10 ns a key even on a table that fits in the
//!   caches, about twice hashbrown's; the group search is about as fast as
//!   hashbrown there.
//! - Linear probing by groups, at most 3/4 full (the table doubles before
//!   that), with backward-shift deletion: no tombstones, so removals never
//!   slow later lookups.
//! - Memory: a `(i64, f32)` slot is 16 bytes (hashbrown's is 17, with its
//!   control byte). A group is padded to whole cache lines, which costs
//!   up to a third more for pairs whose four slots do not fill them (a
//!   group of `(i64, f64)` slots is 72 bytes of 128).
//!
//! [`SimpleHashTable::find_many_on`] (what the FindMany kernel calls, with
//! the runtime's intra-op pool) also splits a big batch into contiguous
//! blocks over the pool's threads, under one read lock.
//!
//! Measured with `benches/hash_table.rs` (1,000,000 shuffled keys, all
//! present, in one call) on a two-core AMD EPYC VM with nothing else
//! running in it, in million keys per second, median (fastest sample):
//!
//! | variant | one run | range of medians over 4 runs |
//! | --- | --- | --- |
//! | `baseline_dense_index` (a `Vec` indexed by key) | 428 (489) | 294-428 |
//! | `hash_table_blocked::FoldhashFast` (the previous map and loop) | 18.9 (23.6) | 10.5-21.6 |
//! | `resource_find_many` (one thread) | 36.6 (58.3) | 36.6-60.7 |
//! | `op_prepared` (the op, one thread) | 56.3 (59.3) | 37.3-56.3 |
//! | `op_threads(1)` | 57.6 (65.5) | 36.4-62.1 |
//! | `op_threads(2)` | 78.2 (98.0) | 62.2-138 |
//!
//! The host's other machines make the memory's latency vary from run to
//! run and within one (within a run, the hashbrown loop's median is up to
//! twice its fastest sample), so compare rows within a run:
//! `resource_find_many`'s fastest sample was 58-65 M keys/s in every run,
//! 2.3 to 2.8 times the previous loop's fastest in the same run. Two
//! threads gave 1.2 to 2.8 times one thread's median.

mod flat_table;

use std::fmt;
use std::hash::Hash;
use std::marker::PhantomData;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use flat_table::FlatTable;
use foldhash::fast::RandomState;
use op_core::checkpoint::{Saveable, take_tensors};
use op_core::error::QUOTE_LIMIT;
use op_core::resource::Resource;
use op_core::shape_inference::InferenceContext;
use op_core::threads::ThreadPool;
use op_core::{
    Code, DType, Element, Error, KernelContext, Op, OpCall, ResourceHandle, Result, Runtime,
    Tensor, kernel, op_requires, register_op,
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

    /// Escaped and quoted; a key past [`QUOTE_LIMIT`] bytes is cut, with
    /// its length (a message must not echo a huge key).
    fn describe(&self) -> String {
        if self.len() <= QUOTE_LIMIT {
            return format!("\"{}\"", self.escape_ascii());
        }
        format!(
            "\"{}…\" ({} bytes)",
            self[..QUOTE_LIMIT].escape_ascii(),
            self.len()
        )
    }
}

/// An element type that a table can use as a key: `int32`, `int64` and
/// `string`.
pub trait TableKey: TableElement + Eq + Hash {}

impl<T: TableElement + Eq + Hash> TableKey for T {}

/// The bytes of a table above which a lookup is taken to miss the caches
/// (for [`lookup_cost`]).
const CACHED_TABLE_BYTES: usize = 8 << 20;

/// The rough cost of one lookup of a batch in `table`, in CPU cycles, for
/// [`ThreadPool::shard_slice`], as measured on one thread (at 2.45 GHz):
/// about 5 ns (12 cycles) in a table that the caches hold (up to 100,000
/// `(i64, f32)` entries, 2.6 MB), about 16 ns (40 cycles) in one of
/// 1,000,000 (32 MB, `benches/hash_table.rs`), where each lookup waits on
/// memory. So a batch is split over threads from about 1,700 keys in a
/// small table, 500 in a large one.
fn lookup_cost<K, V>(table: &Map<K, V>) -> usize {
    if table.allocation_size() <= CACHED_TABLE_BYTES {
        12
    } else {
        40
    }
}

/// The map of a [`SimpleHashTable`].
type Map<K, V> = FlatTable<K, V, RandomState>;

/// The guide's `SimpleHashTableResource`: a map from `K` to `V` behind a
/// reader-writer lock, shared by the kernels that hold its handle.
///
/// Every method takes the lock once, so each is atomic; the batch methods
/// ([`find_many`](Self::find_many), [`find_many_on`](Self::find_many_on),
/// [`insert_many`](Self::insert_many), [`import`](Self::import)) handle
/// many keys for one lock. The map is hashed with a per-table random seed
/// (see the [module docs](self)).
pub struct SimpleHashTable<K, V> {
    table: RwLock<Map<K, V>>,
}

impl<K, V> Default for SimpleHashTable<K, V> {
    fn default() -> Self {
        SimpleHashTable {
            table: RwLock::new(FlatTable::with_hasher(RandomState::default())),
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

/// The value of each key in `table`, or `default`, in the keys' order.
fn find_all<K: TableKey, V: TableElement>(table: &Map<K, V>, keys: &[K], default: &V) -> Vec<V> {
    let mut values = Vec::with_capacity(keys.len());
    table.find_each(keys, |_, value| {
        values.push(value.unwrap_or(default).clone());
    });
    values
}

impl<K: TableKey, V: TableElement> SimpleHashTable<K, V> {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    // A thread that panicked while holding the lock left the map whole
    // (nothing in the map's code can panic between two changes to its
    // slots: it hashes and compares integers and byte strings, and
    // allocates a grown array before it moves any entry), so a poisoned
    // lock is used as is.
    fn read(&self) -> RwLockReadGuard<'_, Map<K, V>> {
        self.table.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, Map<K, V>> {
        self.table.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.read().len()
    }

    /// Whether the table has no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
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
        let removed = self.write().remove(key);
        removed.ok_or_else(|| {
            Error::not_found(format!("Key for remove not found: {}", key.describe()))
        })
    }

    /// Every key and its value, in the same (unspecified) order.
    pub fn export(&self) -> (Vec<K>, Vec<V>) {
        let table = self.read();
        let mut keys = Vec::with_capacity(table.len());
        let mut values = Vec::with_capacity(table.len());
        for (k, v) in table.iter() {
            keys.push(k.clone());
            values.push(v.clone());
        }
        (keys, values)
    }

    /// Replaces the contents with `keys[i] -> values[i]` (a later
    /// duplicate key wins). `InvalidArgument`, and the table unchanged, if
    /// the lengths differ.
    ///
    /// The new map is built before the lock is taken; the lock is held only
    /// to swap it in, so readers see the old contents or the new, never a
    /// mix, and are not held up while it is built. It has a seed of its
    /// own, so keys exported from this table in its slot order do not
    /// pile up in the new one.
    pub fn import(&self, keys: &[K], values: &[V]) -> Result<()> {
        check_lengths(keys.len(), values.len())?;
        let mut fresh = FlatTable::with_capacity_and_hasher(keys.len(), RandomState::default());
        for (k, v) in keys.iter().zip(values) {
            fresh.insert(k.clone(), v.clone());
        }
        let old = std::mem::replace(&mut *self.write(), fresh);
        // The old map is freed after the lock is released.
        drop(old);
        Ok(())
    }

    /// The value of each key, or `default`, in the keys' order, under one
    /// lock, on the calling thread.
    ///
    /// The keys a few positions ahead of each lookup are hashed and their
    /// slots prefetched, so that the lookups' cache misses overlap.
    pub fn find_many(&self, keys: &[K], default: &V) -> Vec<V> {
        find_all(&self.read(), keys, default)
    }

    /// As [`find_many`](Self::find_many), with the keys split over
    /// `threads` when there are enough of them to be worth it (see
    /// [`ThreadPool::shard_slice`]): the lock is taken once, and each
    /// thread looks up a contiguous block of the keys into its block of the
    /// output.
    pub fn find_many_on(&self, threads: &ThreadPool, keys: &[K], default: &V) -> Vec<V> {
        let table = self.read();
        let table: &Map<K, V> = &table;
        let cost = lookup_cost(table);
        if threads.num_blocks(keys.len(), cost) <= 1 {
            return find_all(table, keys, default);
        }
        let mut values = vec![default.clone(); keys.len()];
        threads.shard_slice(&mut values, cost, |offset, block| {
            let keys = &keys[offset..offset + block.len()];
            table.find_each(keys, |i, value| {
                if let Some(value) = value {
                    block[i].clone_from(value);
                }
            });
        });
        values
    }

    /// Sets `keys[i] -> values[i]` under one lock (a later duplicate key
    /// wins). `InvalidArgument`, and the table unchanged, if the lengths
    /// differ.
    pub fn insert_many(&self, keys: &[K], values: &[V]) -> Result<()> {
        check_lengths(keys.len(), values.len())?;
        let mut table = self.write();
        // As std's `HashMap::extend`: room for every key in an empty table,
        // for half of them (some may be present) in one that is not.
        let room = if table.len() == 0 {
            keys.len()
        } else {
            keys.len().div_ceil(2)
        };
        table.reserve(room);
        for (k, v) in keys.iter().zip(values) {
            table.insert(k.clone(), v.clone());
        }
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

    /// The map's allocation (its slots, at its capacity) plus the bytes of
    /// string keys and values.
    fn memory_used(&self) -> usize {
        let table = self.read();
        let mut bytes = size_of::<Self>() + table.allocation_size();
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
    inputs("resource_handle: resource", "keys: key_dtype", "values: value_dtype"),
    attrs("key_dtype: type", "value_dtype: type"),
    shape_fn = insert_many_shape
)]
pub struct SimpleHashTableInsertMany;

// ---- Kernels ----

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

// ---- The typed API (the guide's Python `SimpleHashTable` class) ----

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

/// The checkpoint key of a table's keys.
const KEYS_KEY: &str = "keys";

/// The checkpoint key of a table's values.
const VALUES_KEY: &str = "values";

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
