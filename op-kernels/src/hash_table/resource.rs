//! The resource behind a hash table: [`SimpleHashTable`], a
//! [`FlatTable`] behind a lock, and its [`LookupInterface`] (TensorFlow's
//! interface of every lookup table, over tensors).

use std::fmt;
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use foldhash::fast::RandomState;
use op_core::checkpoint::{Saveable, take_tensors};
use op_core::resource::Resource;
use op_core::resource::lookup::LookupInterface;
use op_core::threads::ThreadPool;
use op_core::{Code, DType, Error, Result, Tensor, TensorShape, op_requires};

use super::element::{TableElement, TableKey};
use super::flat_table::FlatTable;

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
/// (see the [module docs](super)).
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

    /// The table is saved in saved models (its [`Saveable`] impl).
    fn saveable(&self) -> Option<&dyn Saveable> {
        Some(self)
    }

    /// The table, for TensorFlow's generic table ops ([`crate::lookup`]).
    fn as_lookup(&self) -> Option<&dyn LookupInterface> {
        Some(self)
    }
}

/// The checkpoint key of a table's keys.
pub(super) const KEYS_KEY: &str = "keys";

/// The checkpoint key of a table's values.
pub(super) const VALUES_KEY: &str = "values";

/// The table's state as a checkpoint or saved model holds it: the same two
/// tensors as [`SimpleHashTableHandle`](super::SimpleHashTableHandle)'s,
/// `keys` (a vector of `K`) and `values` (of `V`, as long), the value of
/// `keys[i]` at `values[i]`. Restoring replaces the contents, after
/// checking both tensors ([`LookupInterface::check_import_arguments`]);
/// on error the table is unchanged.
///
/// ```
/// use op_core::checkpoint::Saveable;
/// use op_kernels::hash_table::SimpleHashTable;
///
/// let table = SimpleHashTable::<i64, f32>::new();
/// table.insert(7, 0.5);
/// let copy = SimpleHashTable::<i64, f32>::new();
/// copy.restore_from_tensors(table.serialize_to_tensors()?)?;
/// assert_eq!(copy.find(&7, &-1.0), 0.5);
/// # Ok::<(), op_core::Error>(())
/// ```
impl<K: TableKey, V: TableElement> Saveable for SimpleHashTable<K, V> {
    fn serialize_to_tensors(&self) -> Result<Vec<(String, Tensor)>> {
        let (keys, values) = LookupInterface::export(self)?;
        Ok(vec![
            (KEYS_KEY.to_owned(), keys),
            (VALUES_KEY.to_owned(), values),
        ])
    }

    fn restore_from_tensors(&self, tensors: Vec<(String, Tensor)>) -> Result<()> {
        let what = format!("SimpleHashTable<{}, {}>", K::DTYPE, V::DTYPE);
        let [keys, values] = take_tensors(tensors, [KEYS_KEY, VALUES_KEY], &what, "table")?;
        LookupInterface::import(self, &keys, &values)
            .map_err(|e| e.with_context(format!("restoring {what}")))
    }
}

/// The table as TensorFlow's ops see a lookup table: keys and values of
/// its dtypes in tensors, each key a scalar, each value a scalar. Each
/// method takes the table's lock once, as the typed methods do.
///
/// [`remove`](LookupInterface::remove) here ignores keys the table does
/// not hold, as TensorFlow's tables do; the guide's
/// [`SimpleHashTable::remove`] (and its op) is `NotFound` for one.
///
/// ```
/// use op_core::Tensor;
/// use op_core::resource::lookup::LookupInterface;
/// use op_kernels::hash_table::SimpleHashTable;
///
/// let table: &dyn LookupInterface = &SimpleHashTable::<i64, f32>::new();
/// table.insert(&Tensor::from_vec([2], vec![1i64, 2])?, &Tensor::from_vec([2], vec![0.5f32, 1.5])?)?;
/// let keys = Tensor::from_vec([2, 2], vec![1i64, 3, 2, 1])?;
/// let found = table.find(&keys, &Tensor::scalar(-1.0f32))?;
/// assert_eq!(found.dims(), [2, 2]);
/// assert_eq!(found.as_slice::<f32>()?, [0.5, -1.0, 1.5, 0.5]);
/// # Ok::<(), op_core::Error>(())
/// ```
impl<K: TableKey, V: TableElement> LookupInterface for SimpleHashTable<K, V> {
    fn key_dtype(&self) -> DType {
        K::DTYPE
    }

    fn value_dtype(&self) -> DType {
        V::DTYPE
    }

    fn value_shape(&self) -> TensorShape {
        TensorShape::scalar()
    }

    fn size(&self) -> usize {
        self.len()
    }

    /// One default for every key (a scalar) goes through the batch lookup
    /// ([`find_many`](SimpleHashTable::find_many)); a default per key (the
    /// keys' shape) through one lookup a key, under one lock.
    fn find(&self, keys: &Tensor, default_value: &Tensor) -> Result<Tensor> {
        self.check_find_arguments(keys, default_value)?;
        let ks = keys.as_slice::<K>()?;
        let defaults = default_value.as_slice::<V>()?;
        let values = if default_value.dims().is_empty() {
            self.find_many(ks, &defaults[0])
        } else {
            let table = self.read();
            ks.iter()
                .zip(defaults)
                .map(|(k, default)| table.get(k).unwrap_or(default).clone())
                .collect()
        };
        Tensor::from_vec(keys.dims(), values)
    }

    fn insert(&self, keys: &Tensor, values: &Tensor) -> Result<()> {
        self.check_insert_arguments(keys, values)?;
        self.insert_many(keys.as_slice::<K>()?, values.as_slice::<V>()?)
    }

    fn remove(&self, keys: &Tensor) -> Result<()> {
        self.check_remove_arguments(keys)?;
        let keys = keys.as_slice::<K>()?;
        let mut table = self.write();
        for k in keys {
            table.remove(k);
        }
        Ok(())
    }

    /// Two vectors.
    fn export(&self) -> Result<(Tensor, Tensor)> {
        let (keys, values) = SimpleHashTable::export(self);
        let n = keys.len();
        Ok((Tensor::from_vec([n], keys)?, Tensor::from_vec([n], values)?))
    }

    fn import(&self, keys: &Tensor, values: &Tensor) -> Result<()> {
        self.check_import_arguments(keys, values)?;
        SimpleHashTable::import(self, keys.as_slice::<K>()?, values.as_slice::<V>()?)
    }
}
