//! Batch find on a hash table of 1,000,000 `int64 -> float` entries: every
//! key looked up once per call, in a shuffled order, against baselines
//! measured in the same run.
//!
//! The table maps keys `0..1_000_000` to `key as f32`; each call looks up
//! all 1,000,000 keys in one fixed random permutation and returns a new
//! vector (or tensor) of the 1,000,000 values. Divan's `items/s` column is
//! keys per second (the target is 50 million on one thread).
//!
//! Baselines:
//!
//! - `baseline_dense_index`: `dense[key as usize]` for the same keys in the
//!   same order on a `Vec<f32>` of 1,000,000 values: the same random reads
//!   and output, with a perfect "hash" and no probing.
//! - `baseline_memcpy`: a copy of the output's 4 MB (`slice.to_vec()`).
//!
//! The table (one table, made and filled through the ops on a runtime
//! whose intra-op pool has one thread, so that these rows measure one
//! thread):
//!
//! - `resource_find_many`: `SimpleHashTable::find_many`, the resource's
//!   direct batch method (one read lock, the calling thread only).
//! - `op_prepared`: `Examples>SimpleHashTableFindMany` prepared once, run
//!   with `PreparedOp::run(vec![handle, keys, default])` (the keys tensor is
//!   shared, not copied); the output is a tensor.
//! - `op_call`: the same op through `OpCall` (the per-thread cache).
//! - `typed_find_many`: `SimpleHashTableHandle::find_many(&keys)`, which
//!   copies the keys into a tensor and runs the op.
//!
//! Threads: `op_threads(n)` is `op_prepared` on a runtime of its own whose
//! pool has `n` threads (`Runtime::with_threads`), with a table of its own
//! filled the same way; the kernel splits the keys into contiguous blocks
//! over the pool (`ThreadPool::shard_slice`) under one read lock. Rows
//! `1` and `2` show the scaling (the machine has two cores, so `2` shares
//! them with whatever else runs).
//!
//! The alternatives considered for the map, each a bare map of the same
//! entries with the same loop:
//!
//! - `std_hashmap::<H>`: `std::collections::HashMap<i64, f32, H>` with
//!   `map.get(key)` per key, for std's SipHash (`StdSipHash`, std's
//!   default), foldhash's `fast` and `quality` variants (seeded per map),
//!   and rustc-hash's FxHash (unseeded).
//! - `hashbrown_hashmap`: `hashbrown::HashMap` with foldhash `fast` (what
//!   `hashbrown::HashMap::new()` uses).
//! - `hash_table_blocked::<H>`: `hashbrown::HashTable<(i64, f32)>`, hashing
//!   a block of 128 keys before probing for them, for foldhash `fast` and
//!   FxHash: the resource's previous map and loop (`FoldhashFast`), without
//!   the lock. hashbrown does not say where a key's bucket is, so this loop
//!   cannot prefetch; the resource's own table (`resource_find_many`) can.
//!
//! The output is dropped inside the timed closure. The machine is noisy
//! (two cores shared with other work, and a last-level cache shared with
//! other machines): read each figure as a ratio against
//! `baseline_dense_index` from the same run, and compare the `fastest`
//! columns as well as the medians.
//!
//! Run with:
//!
//! ```text
//! cargo bench -p op-kernels --bench hash_table
//! ```

use std::hash::BuildHasher;
use std::sync::{Arc, LazyLock};

use divan::counter::ItemsCount;
use divan::{Bencher, black_box, black_box_drop};
use op_core::threads::ThreadPool;
use op_core::{DType, Op, OpCall, Runtime, Tensor};
use op_kernels::hash_table::{SimpleHashTableFindMany, SimpleHashTableHandle};

fn main() {
    op_kernels::link();
    divan::main();
}

/// Entries in the table, and keys looked up per call.
const ENTRIES: usize = 1_000_000;

/// Samples per benchmark (each is one call of about 2 to 100 ms).
const SAMPLES: u32 = 40;

/// The keys [`hash_table_blocked`] hashes before probing for them.
const BLOCK: usize = 128;

/// The value stored for `key`.
fn value_of(key: i64) -> f32 {
    key as f32
}

/// What every variant gives for a missing key (none is missing).
const DEFAULT: f32 = -1.0;

/// `0..n` in a fixed pseudo-random order (Fisher-Yates with SplitMix64).
fn shuffled(n: usize) -> Vec<i64> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let mut keys: Vec<i64> = (0..n as i64).collect();
    for i in (1..n).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        keys.swap(i, j);
    }
    keys
}

/// The keys looked up by every variant, in the same order.
static KEYS: LazyLock<Vec<i64>> = LazyLock::new(|| shuffled(ENTRIES));

/// A runtime whose kernels run on `threads` threads (a pool of its own).
fn runtime_with(threads: usize) -> Runtime {
    let pool = ThreadPool::new(threads).expect("a thread pool");
    Runtime::new().with_threads(Arc::new(pool))
}

/// The runtime of [`TABLE`]: one thread, so that the op variants measure
/// what the op adds to one thread's lookups.
static SINGLE: LazyLock<Runtime> = LazyLock::new(|| runtime_with(1));

/// A table on `runtime`, made and filled through the ops.
fn filled_table(runtime: &Runtime) -> SimpleHashTableHandle<'_, i64, f32> {
    let table =
        SimpleHashTableHandle::new_on(runtime, DEFAULT).expect("(int64, float) has kernels");
    let keys: Vec<i64> = (0..ENTRIES as i64).collect();
    let values: Vec<f32> = keys.iter().map(|k| value_of(*k)).collect();
    table
        .insert_many(&keys, &values)
        .expect("as many values as keys");
    table
}

/// The table under test, on [`SINGLE`].
static TABLE: LazyLock<SimpleHashTableHandle<'static, i64, f32>> =
    LazyLock::new(|| filled_table(&SINGLE));

fn items() -> ItemsCount {
    ItemsCount::new(ENTRIES)
}

/// Checks a variant's output once, outside the timing.
fn check(values: &[f32]) {
    let expected: Vec<f32> = KEYS.iter().map(|k| value_of(*k)).collect();
    assert!(values == expected, "wrong values");
}

/// Checks `find`'s answers once, then benchmarks it on every key.
fn bench_find<S: ?Sized>(bencher: Bencher, state: &S, find: impl Fn(&S, &[i64]) -> Vec<f32>) {
    let keys = &*KEYS;
    check(&find(state, keys));
    bencher.counter(items()).bench_local(|| {
        black_box_drop(find(black_box(state), black_box(keys)));
    });
}

/// Baseline: the same keys, in the same order, as indexes into a vector.
#[divan::bench(sample_count = SAMPLES)]
fn baseline_dense_index(bencher: Bencher) {
    let dense: Vec<f32> = (0..ENTRIES as i64).map(value_of).collect();
    bench_find(
        bencher,
        dense.as_slice(),
        |dense: &[f32], keys: &[i64]| -> Vec<f32> {
            keys.iter()
                .map(|k| *dense.get(*k as usize).unwrap_or(&DEFAULT))
                .collect()
        },
    );
}

/// Baseline: allocate the output and copy 4 MB into it.
#[divan::bench(sample_count = SAMPLES)]
fn baseline_memcpy(bencher: Bencher) {
    let source: Vec<f32> = (0..ENTRIES as i64).map(value_of).collect();
    bencher.counter(items()).bench_local(|| {
        black_box_drop(black_box(&source).to_vec());
    });
}

/// The resource's direct batch find.
#[divan::bench(sample_count = SAMPLES)]
fn resource_find_many(bencher: Bencher) {
    let table = TABLE.table().expect("the table exists");
    let keys = &*KEYS;
    check(&table.find_many(keys, &DEFAULT));
    bencher.counter(items()).bench_local(|| {
        black_box_drop(black_box(&table).find_many(black_box(keys), &DEFAULT));
    });
}

/// Benchmarks the FindMany op on `table`, prepared once on its runtime.
fn bench_prepared(bencher: Bencher, table: &SimpleHashTableHandle<'_, i64, f32>) {
    let prepared = table
        .runtime()
        .prepare(
            SimpleHashTableFindMany::NAME,
            &[DType::Resource.into(), DType::I64.into(), DType::F32.into()],
            &[],
        )
        .expect("FindMany has an (int64, float) kernel");
    let handle = table.handle().clone();
    let keys = Tensor::from_vec([ENTRIES], KEYS.clone()).expect("a vector");
    let default = Tensor::scalar(DEFAULT);
    let run = || {
        prepared
            .run(vec![handle.clone(), keys.clone(), default.clone()])
            .expect("FindMany runs")
    };
    check(run()[0].as_slice::<f32>().expect("float values"));
    bencher
        .counter(items())
        .bench_local(|| black_box_drop(run()));
}

/// The FindMany op, prepared once.
#[divan::bench(sample_count = SAMPLES)]
fn op_prepared(bencher: Bencher) {
    bench_prepared(bencher, &TABLE);
}

/// The FindMany op, prepared once, on a runtime of its own with `threads`
/// intra-op threads (and a table of its own).
#[divan::bench(sample_count = SAMPLES, args = [1, 2])]
fn op_threads(bencher: Bencher, threads: usize) {
    let runtime = runtime_with(threads);
    bench_prepared(bencher, &filled_table(&runtime));
}

/// The FindMany op through `OpCall` (a per-thread cache hit).
#[divan::bench(sample_count = SAMPLES)]
fn op_call(bencher: Bencher) {
    let handle = TABLE.handle().clone();
    let keys = Tensor::from_vec([ENTRIES], KEYS.clone()).expect("a vector");
    let default = Tensor::scalar(DEFAULT);
    let run = || {
        OpCall::new(black_box(SimpleHashTableFindMany::NAME))
            .input(&handle)
            .input(&keys)
            .input(&default)
            .run_on(&SINGLE)
            .expect("FindMany runs")
    };
    check(run()[0].as_slice::<f32>().expect("float values"));
    bencher
        .counter(items())
        .bench_local(|| black_box_drop(run()));
}

/// The typed API: copies the keys into a tensor and runs FindMany.
#[divan::bench(sample_count = SAMPLES)]
fn typed_find_many(bencher: Bencher) {
    let table = &*TABLE;
    let keys = &*KEYS;
    check(&table.find_many(keys).expect("FindMany runs"));
    bencher.counter(items()).bench_local(|| {
        black_box_drop(black_box(table).find_many(black_box(keys)));
    });
}

/// Gives each hasher considered a name of its own in divan's output.
macro_rules! named_hashers {
    ($($(#[$doc:meta])* $name:ident => $inner:ty,)*) => {$(
        $(#[$doc])*
        #[derive(Default)]
        struct $name($inner);

        impl BuildHasher for $name {
            type Hasher = <$inner as BuildHasher>::Hasher;

            fn build_hasher(&self) -> Self::Hasher {
                self.0.build_hasher()
            }
        }
    )*};
}

named_hashers! {
    /// std's default: SipHash-1-3, seeded per map.
    StdSipHash => std::hash::RandomState,
    /// foldhash's fast variant, seeded per map.
    FoldhashFast => foldhash::fast::RandomState,
    /// foldhash's quality variant (a final avalanche), seeded per map.
    FoldhashQuality => foldhash::quality::RandomState,
    /// rustc-hash's FxHash: one multiply, no seed.
    RustcFxHash => rustc_hash::FxBuildHasher,
}

/// `std::collections::HashMap` with hasher `H`, one `get` per key.
#[divan::bench(
    sample_count = SAMPLES,
    types = [StdSipHash, FoldhashFast, FoldhashQuality, RustcFxHash]
)]
fn std_hashmap<H: BuildHasher + Default>(bencher: Bencher) {
    let map: std::collections::HashMap<i64, f32, H> =
        (0..ENTRIES as i64).map(|k| (k, value_of(k))).collect();
    bench_find(
        bencher,
        &map,
        |map: &std::collections::HashMap<i64, f32, H>, keys: &[i64]| -> Vec<f32> {
            keys.iter()
                .map(|k| *map.get(k).unwrap_or(&DEFAULT))
                .collect()
        },
    );
}

/// `hashbrown::HashMap` with foldhash `fast`, one `get` per key.
#[divan::bench(sample_count = SAMPLES)]
fn hashbrown_hashmap(bencher: Bencher) {
    let map: hashbrown::HashMap<i64, f32, FoldhashFast> =
        (0..ENTRIES as i64).map(|k| (k, value_of(k))).collect();
    bench_find(
        bencher,
        &map,
        |map: &hashbrown::HashMap<i64, f32, FoldhashFast>, keys: &[i64]| -> Vec<f32> {
            keys.iter()
                .map(|k| *map.get(k).unwrap_or(&DEFAULT))
                .collect()
        },
    );
}

/// `hashbrown::HashTable` with hasher `H`, hashing blocks of keys before
/// probing for them (the resource's loop, without the lock).
#[divan::bench(sample_count = SAMPLES, types = [FoldhashFast, RustcFxHash])]
fn hash_table_blocked<H: BuildHasher + Default>(bencher: Bencher) {
    let hasher = H::default();
    let mut table = hashbrown::HashTable::<(i64, f32)>::with_capacity(ENTRIES);
    for k in 0..ENTRIES as i64 {
        table.insert_unique(hasher.hash_one(k), (k, value_of(k)), |(k, _)| {
            hasher.hash_one(k)
        });
    }
    bench_find(
        bencher,
        &table,
        |table: &hashbrown::HashTable<(i64, f32)>, keys: &[i64]| -> Vec<f32> {
            let mut values = Vec::with_capacity(keys.len());
            let mut hashes = [0u64; BLOCK];
            for block in keys.chunks(BLOCK) {
                for (hash, key) in hashes.iter_mut().zip(block) {
                    *hash = hasher.hash_one(key);
                }
                values.extend(hashes.iter().zip(block).map(|(hash, key)| {
                    table
                        .find(*hash, |(k, _)| k == key)
                        .map_or(DEFAULT, |(_, v)| *v)
                }));
            }
            values
        },
    );
}
