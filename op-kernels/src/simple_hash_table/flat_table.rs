//! [`FlatTable`]: the open-addressing hash map behind
//! [`SimpleHashTable`](super::SimpleHashTable), laid out so that a batch of
//! lookups can prefetch the slot of each key a few keys ahead.
//!
//! Layout: one array of slots, a power of two of them, each either empty
//! or a whole entry (the key, its value and 16 bits of the key's hash), so
//! that a lookup of an integer key reads one cache line (sometimes the
//! next) and nothing else. A key's home slot is its hash's low bits; a key
//! that finds its home slot taken goes on to the next free one (linear
//! probing). The table grows (doubling) before it is more than 3/4 full,
//! so every probe ends at an empty slot. Removal shifts the entries after
//! the removed one back instead of leaving tombstones (backward-shift
//! deletion), so a table that sees many removals never slows down.
//!
//! hashbrown's `HashTable`, which the resource used before, keeps the
//! control bytes and the entries in two places (two dependent cache misses
//! per lookup on a large table) and does not say where a key's bucket is,
//! so a batch could not prefetch it.

use std::hash::{BuildHasher, Hash};

/// The fewest slots an allocated table has.
const MIN_SLOTS: usize = 8;

/// How many keys ahead of the one it looks up [`FlatTable::find_each`]
/// hashes and prefetches: enough lookups in flight to cover a memory
/// access, few enough that their lines stay in the L1 cache (a power of
/// two).
const LOOKAHEAD: usize = 16;

/// One slot: empty, or an entry with the top 16 bits of its key's hash.
///
/// The tag fits in the padding that the enum's discriminant leaves before
/// the key and the value (a slot of `(i64, f32)` is 16 bytes, with or
/// without it), and spares a string key's comparison (a read of its heap
/// bytes) for nearly every other key in the probe sequence.
enum Slot<K, V> {
    Empty,
    Full { tag: u16, key: K, value: V },
}

/// The tag stored with a key of this hash.
fn tag_of(hash: u64) -> u16 {
    (hash >> 48) as u16
}

/// The most entries `slots` slots may hold: 3/4 of them.
fn max_len(slots: usize) -> usize {
    slots / 4 * 3
}

/// The slots a table needs for `len` entries.
///
/// # Panics
///
/// If that number does not fit in a `usize` (a capacity overflow, as
/// std's collections panic).
fn slots_for(len: usize) -> usize {
    len.checked_mul(4)
        .map(|n| n.div_ceil(3).max(MIN_SLOTS))
        .and_then(usize::checked_next_power_of_two)
        .expect("hash table capacity overflow")
}

/// `n` empty slots.
fn empty_slots<K, V>(n: usize) -> Box<[Slot<K, V>]> {
    std::iter::repeat_with(|| Slot::Empty).take(n).collect()
}

/// Asks the processor to start loading the cache line that holds `value`
/// into its caches, without waiting for it (a no-op on other targets than
/// x86_64).
#[inline(always)]
fn prefetch<T>(value: &T) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse"))]
    // SAFETY: `_mm_prefetch` is a safe function that requires the `sse`
    // target feature, which the `cfg` above checks is enabled for this
    // build (it is part of the x86_64 baseline). The address is that of a
    // live reference, and a prefetch only hints at a read: it cannot fault
    // and changes no memory.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(value).cast());
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse")))]
    let _ = value;
}

/// An open-addressing hash map from `K` to `V` hashed with `S` (see the
/// [module docs](self)).
pub(crate) struct FlatTable<K, V, S> {
    /// Empty (no allocation) or a power of two of slots, at most 3/4 of
    /// them full.
    slots: Box<[Slot<K, V>]>,
    /// The number of full slots.
    len: usize,
    hasher: S,
}

impl<K: Eq + Hash, V, S: BuildHasher> FlatTable<K, V, S> {
    /// An empty table (no allocation) hashing with `hasher`.
    pub(crate) fn with_hasher(hasher: S) -> Self {
        FlatTable {
            slots: Box::default(),
            len: 0,
            hasher,
        }
    }

    /// An empty table with room for `len` entries, hashing with `hasher`.
    pub(crate) fn with_capacity_and_hasher(len: usize, hasher: S) -> Self {
        let mut table = Self::with_hasher(hasher);
        table.reserve(len);
        table
    }

    /// The number of entries.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The bytes of the slot array.
    pub(crate) fn allocation_size(&self) -> usize {
        size_of_val::<[Slot<K, V>]>(&self.slots)
    }

    fn hash(&self, key: &K) -> u64 {
        self.hasher.hash_one(key)
    }

    /// The index mask of a table with slots.
    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// Where `key`, of hash `hash`, is (`Ok`) or the empty slot that ends
    /// its probe sequence (`Err`). The table must have slots.
    fn probe(&self, hash: u64, key: &K) -> Result<usize, usize> {
        let mask = self.mask();
        let tag = tag_of(hash);
        let mut i = hash as usize & mask;
        loop {
            match &self.slots[i] {
                Slot::Empty => return Err(i),
                Slot::Full { tag: t, key: k, .. } if *t == tag && k == key => return Ok(i),
                Slot::Full { .. } => i = (i + 1) & mask,
            }
        }
    }

    /// The first empty slot of the probe sequence of `hash` (for a key
    /// known to be absent). The table must have slots.
    fn vacant(&self, hash: u64) -> usize {
        let mask = self.mask();
        let mut i = hash as usize & mask;
        while let Slot::Full { .. } = self.slots[i] {
            i = (i + 1) & mask;
        }
        i
    }

    /// The value of `key`, if the table has it, given its hash.
    fn get_hashed(&self, hash: u64, key: &K) -> Option<&V> {
        if self.slots.is_empty() {
            return None;
        }
        match self.probe(hash, key) {
            Ok(i) => match &self.slots[i] {
                Slot::Full { value, .. } => Some(value),
                Slot::Empty => None,
            },
            Err(_) => None,
        }
    }

    /// The value of `key`, if the table has it.
    pub(crate) fn get(&self, key: &K) -> Option<&V> {
        self.get_hashed(self.hash(key), key)
    }

    /// Calls `found(i, value)` for each `keys[i]`, in order, with its
    /// value if the table has it.
    ///
    /// The keys [`LOOKAHEAD`] positions ahead are hashed and their home
    /// slots prefetched while a key is looked up, so that a batch on a
    /// table much larger than the caches waits for many memory accesses at
    /// once rather than for one after another.
    #[inline]
    pub(crate) fn find_each(&self, keys: &[K], mut found: impl FnMut(usize, Option<&V>)) {
        if self.slots.is_empty() {
            (0..keys.len()).for_each(|i| found(i, None));
            return;
        }
        let mask = self.mask();
        let mut hashes = [0u64; LOOKAHEAD];
        for (hash, key) in hashes.iter_mut().zip(keys) {
            *hash = self.hash(key);
            prefetch(&self.slots[*hash as usize & mask]);
        }
        for (i, key) in keys.iter().enumerate() {
            let hash = hashes[i % LOOKAHEAD];
            if let Some(ahead) = keys.get(i + LOOKAHEAD) {
                let next = self.hash(ahead);
                prefetch(&self.slots[next as usize & mask]);
                hashes[i % LOOKAHEAD] = next;
            }
            found(i, self.get_hashed(hash, key));
        }
    }

    /// Sets the value of `key`; returns the value it replaces.
    pub(crate) fn insert(&mut self, key: K, value: V) -> Option<V> {
        let hash = self.hash(&key);
        let slot = if self.slots.is_empty() {
            None
        } else {
            match self.probe(hash, &key) {
                Ok(i) => match &mut self.slots[i] {
                    Slot::Full { value: old, .. } => return Some(std::mem::replace(old, value)),
                    Slot::Empty => None,
                },
                Err(i) if self.len < max_len(self.slots.len()) => Some(i),
                Err(_) => None,
            }
        };
        let i = match slot {
            Some(i) => i,
            None => {
                self.reserve(1);
                self.vacant(hash)
            }
        };
        self.slots[i] = Slot::Full {
            tag: tag_of(hash),
            key,
            value,
        };
        self.len += 1;
        None
    }

    /// Makes room for `additional` more entries without growing again.
    ///
    /// # Panics
    ///
    /// On a capacity overflow, with the table unchanged.
    pub(crate) fn reserve(&mut self, additional: usize) {
        let len = self
            .len
            .checked_add(additional)
            .expect("hash table capacity overflow");
        if len > max_len(self.slots.len()) {
            self.resize(slots_for(len));
        }
    }

    /// Moves every entry into a new array of `slots` slots (a power of two
    /// with room for them all).
    fn resize(&mut self, slots: usize) {
        let old = std::mem::replace(&mut self.slots, empty_slots(slots));
        for slot in old {
            if let Slot::Full { tag, key, value } = slot {
                let i = self.vacant(self.hash(&key));
                self.slots[i] = Slot::Full { tag, key, value };
            }
        }
    }

    /// Removes `key`; returns its value, if the table had it.
    pub(crate) fn remove(&mut self, key: &K) -> Option<V> {
        if self.slots.is_empty() {
            return None;
        }
        let mut hole = self.probe(self.hash(key), key).ok()?;
        let value = match std::mem::replace(&mut self.slots[hole], Slot::Empty) {
            Slot::Full { value, .. } => value,
            Slot::Empty => return None,
        };
        self.len -= 1;
        // Backward shift: each entry after the hole, up to the next empty
        // slot, moves into the hole if the hole lies on its probe sequence
        // (between its home slot and where it is, cyclically); then the
        // hole is where it was. No probe sequence is left with a gap.
        let mask = self.mask();
        let mut i = (hole + 1) & mask;
        while let Slot::Full { key, .. } = &self.slots[i] {
            let home = self.hash(key) as usize & mask;
            if i.wrapping_sub(home) & mask >= i.wrapping_sub(hole) & mask {
                self.slots.swap(hole, i);
                hole = i;
            }
            i = (i + 1) & mask;
        }
        Some(value)
    }

    /// Every entry, in slot order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.slots.iter().filter_map(|slot| match slot {
            Slot::Full { key, value, .. } => Some((key, value)),
            Slot::Empty => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;
    use std::hash::Hasher;

    /// A hasher that makes keys collide: the hash of key bytes `b` is
    /// `(b as u64 & keep) ^ flip`. With few bits kept, many keys share a
    /// home slot; with `flip` all ones, those homes are the last slots, so
    /// probe sequences wrap around the end of the array.
    #[derive(Clone, Copy, Debug)]
    struct Colliding {
        keep: u64,
        flip: u64,
    }

    struct CollidingHasher {
        bytes: u64,
        colliding: Colliding,
    }

    impl BuildHasher for Colliding {
        type Hasher = CollidingHasher;

        fn build_hasher(&self) -> CollidingHasher {
            CollidingHasher {
                bytes: 0,
                colliding: *self,
            }
        }
    }

    impl Hasher for CollidingHasher {
        fn write(&mut self, bytes: &[u8]) {
            for b in bytes {
                self.bytes = self.bytes.rotate_left(8) ^ u64::from(*b);
            }
        }

        fn finish(&self) -> u64 {
            (self.bytes & self.colliding.keep) ^ self.colliding.flip
        }
    }

    type Table = FlatTable<i32, i32, Colliding>;

    /// Checks what every operation must keep true: a power of two of
    /// slots (or none), at most 3/4 of them full, `len` full ones, and
    /// every entry reachable from its home slot without crossing an empty
    /// one, under its own tag.
    fn check_invariants(table: &Table) {
        let n = table.slots.len();
        assert!(
            n == 0 || (n.is_power_of_two() && n >= MIN_SLOTS),
            "{n} slots"
        );
        let full = table
            .slots
            .iter()
            .filter(|s| matches!(s, Slot::Full { .. }))
            .count();
        assert_eq!(full, table.len);
        assert!(table.len <= max_len(n));
        for (i, slot) in table.slots.iter().enumerate() {
            if let Slot::Full { tag, key, .. } = slot {
                let hash = table.hash(key);
                assert_eq!(*tag, tag_of(hash));
                let mut j = hash as usize & table.mask();
                while j != i {
                    assert!(
                        matches!(table.slots[j], Slot::Full { .. }),
                        "key {key} at {i} is cut off from its home by an empty slot at {j}"
                    );
                    j = (j + 1) & table.mask();
                }
            }
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        Insert(i32, i32),
        Remove(i32),
        Get(i32),
        FindEach(Vec<i32>),
        Reserve(usize),
        /// Rebuilds the table from its entries (an export, then an import).
        Rebuild,
    }

    fn op() -> impl Strategy<Value = Op> {
        // Few keys, so that inserts replace and removes find keys; some
        // share their low 16 bits (and, with the colliding hasher, more).
        let key = prop_oneof![0..48i32, (0..8i32).prop_map(|k| k << 16)];
        prop_oneof![
            6 => (key.clone(), any::<i32>()).prop_map(|(k, v)| Op::Insert(k, v)),
            4 => key.clone().prop_map(Op::Remove),
            2 => key.clone().prop_map(Op::Get),
            2 => proptest::collection::vec(key, 0..40).prop_map(Op::FindEach),
            1 => (0..100usize).prop_map(Op::Reserve),
            1 => Just(Op::Rebuild),
        ]
    }

    fn hasher() -> impl Strategy<Value = Colliding> {
        let keep = prop_oneof![Just(0), Just(1), Just(7), Just(0xFF), Just(u64::MAX)];
        let flip = prop_oneof![Just(0), Just(u64::MAX), Just(0xF0F0 << 48)];
        (keep, flip).prop_map(|(keep, flip)| Colliding { keep, flip })
    }

    fn config() -> ProptestConfig {
        ProptestConfig {
            // Miri runs a few small cases.
            cases: if cfg!(miri) { 3 } else { 512 },
            failure_persistence: None,
            ..ProptestConfig::default()
        }
    }

    proptest! {
        #![proptest_config(config())]

        /// Any sequence of operations, under hashes that collide in every
        /// way, leaves the table agreeing with a `HashMap` and its
        /// invariants whole.
        #[test]
        fn the_table_agrees_with_a_model_map(
            colliding in hasher(),
            ops in proptest::collection::vec(op(), 0..if cfg!(miri) { 40 } else { 200 }),
        ) {
            let mut table = Table::with_hasher(colliding);
            let mut model = HashMap::new();
            for op in ops {
                match op {
                    Op::Insert(k, v) => prop_assert_eq!(table.insert(k, v), model.insert(k, v)),
                    Op::Remove(k) => prop_assert_eq!(table.remove(&k), model.remove(&k)),
                    Op::Get(k) => prop_assert_eq!(table.get(&k), model.get(&k)),
                    Op::FindEach(keys) => {
                        let mut found = Vec::new();
                        table.find_each(&keys, |i, v| found.push((i, v.copied())));
                        let expected: Vec<_> =
                            keys.iter().enumerate().map(|(i, k)| (i, model.get(k).copied())).collect();
                        prop_assert_eq!(found, expected);
                    }
                    Op::Reserve(n) => {
                        table.reserve(n);
                        prop_assert!(table.len + n <= max_len(table.slots.len()));
                    }
                    Op::Rebuild => {
                        let mut fresh = Table::with_capacity_and_hasher(table.len(), colliding);
                        for (k, v) in table.iter() {
                            prop_assert_eq!(fresh.insert(*k, *v), None);
                        }
                        table = fresh;
                    }
                }
                check_invariants(&table);
                prop_assert_eq!(table.len(), model.len());
            }
            let entries: HashMap<i32, i32> = table.iter().map(|(k, v)| (*k, *v)).collect();
            prop_assert_eq!(entries, model);
        }
    }

    /// Batches of every length around the lookahead, on an empty table and
    /// a full one, find what single lookups find.
    #[test]
    fn find_each_handles_every_batch_length() {
        let mut table = FlatTable::with_hasher(foldhash::fast::RandomState::default());
        let lengths = [
            0,
            1,
            LOOKAHEAD - 1,
            LOOKAHEAD,
            LOOKAHEAD + 1,
            3 * LOOKAHEAD + 5,
        ];
        for filled in [false, true] {
            if filled {
                for k in 0..100i64 {
                    table.insert(k * 3, k);
                }
            }
            for n in lengths {
                let keys: Vec<i64> = (0..n as i64).map(|k| k * 7 % 300).collect();
                let mut found = Vec::new();
                table.find_each(&keys, |i, v| found.push((i, v.copied())));
                let expected: Vec<_> = keys
                    .iter()
                    .enumerate()
                    .map(|(i, k)| (i, table.get(k).copied()))
                    .collect();
                assert_eq!(found, expected, "{n} keys, filled: {filled}");
            }
        }
    }

    /// A table grows before it is more than 3/4 full, and `reserve` makes
    /// room in one step.
    #[test]
    fn growth_keeps_the_load_at_most_three_quarters() {
        let mut table = FlatTable::with_hasher(foldhash::fast::RandomState::default());
        assert_eq!(table.allocation_size(), 0);
        for k in 0..1000u32 {
            table.insert(k, ());
            assert!(table.len() * 4 <= table.slots.len() * 3);
        }
        assert_eq!(table.slots.len(), 2048);
        table.reserve(0);
        assert_eq!(table.slots.len(), 2048);
        table.reserve(536);
        assert_eq!(table.slots.len(), 2048);
        table.reserve(537);
        assert_eq!(table.slots.len(), 4096);
        assert_eq!(slots_for(6), 8);
        assert_eq!(slots_for(7), 16);
        assert_eq!(slots_for(1_000_000), 1 << 21);
        assert_eq!(size_of::<Slot<i64, f32>>(), 16);
    }

    #[test]
    #[should_panic(expected = "capacity overflow")]
    fn a_capacity_overflow_panics() {
        FlatTable::<u32, (), _>::with_hasher(foldhash::fast::RandomState::default())
            .reserve(usize::MAX / 2);
    }
}
