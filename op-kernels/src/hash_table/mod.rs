//! `SimpleHashTable`, the guide's stateful op example ("Create a stateful
//! custom op"): a hash table held in a [`Resource`](op_core::resource::Resource) and reached through ops
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
//! kernel returns [`ResourceHandle::owning`](op_core::ResourceHandle::owning), and the other kernels resolve
//! it with [`KernelContext::resource`](op_core::KernelContext::resource), which rejects a table of another
//! dtype pair with `InvalidArgument`.
//!
//! [`SimpleHashTableHandle`] is the typed Rust API over the ops, like the
//! guide's Python class; it is [`Saveable`](op_core::checkpoint::Saveable) (checkpoints) through the
//! export and import ops.
//!
//! [`SimpleHashTable`] is also a lookup table as TensorFlow's table ops see
//! one: it implements [`LookupInterface`](op_core::resource::lookup::LookupInterface)
//! (batch find with one default or one per key, insert, remove, export,
//! import, over tensors), so code written against that trait works with
//! it and with any other table.
//!
//! ```
//! use op_kernels::hash_table::SimpleHashTableHandle;
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
//!
//! # The files
//!
//! - `element.rs`: the key and value types a table holds, [`TableKey`] and
//!   [`TableElement`].
//! - `resource.rs`: the resource, [`SimpleHashTable`], whose map is
//!   `flat_table.rs`'s open-addressing table, and its `LookupInterface`.
//! - `ops.rs`: the eight ops and their shape functions.
//! - `cpu.rs`: the CPU kernels, one generic function per op over the
//!   guide's 15 dtype pairs.
//! - `client.rs`: the typed API, [`SimpleHashTableHandle`] (with its
//!   checkpoint support).
//! - `opcheck.rs`: how opcheck (`op_core::testing`) draws tables, keys and
//!   values for the ops' contract tests.

mod client;
mod cpu;
mod element;
mod flat_table;
mod opcheck;
mod ops;
mod resource;

pub use client::SimpleHashTableHandle;
pub(crate) use cpu::table_kernels;
pub use element::{TableElement, TableKey};
pub use ops::*;
pub use resource::SimpleHashTable;
