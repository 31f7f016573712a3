//! [`FlatTable`]: the open-addressing hash map behind
//! [`SimpleHashTable`](super::SimpleHashTable), laid out so that a batch of
//! lookups can prefetch the cache line of each key a few keys ahead.
//!
//! Layout: one array of groups of four slots, a power of two of groups,
//! each group aligned to a cache line and holding its slots' tags, keys
//! and values together (a group of `(i64, f32)` entries is one 64-byte
//! line). A slot's tag is 0 when the slot is empty, else 15 bits of its
//! key's hash with the top bit set. So a lookup of an integer key reads
//! one line, and nothing else, nearly always.
//!
//! A key's home is a group, chosen by its hash's low bits; the key lives
//! in the first free slot from the start of that group on, in slot order
//! (linear probing with buckets of four). A lookup compares the key's tag
//! with the group's four tags at once (one 64-bit word, SWAR), and
//! compares keys only where a tag matches: the key is in the group, or
//! absent if the group has an empty slot, or further on (rarely). So the
//! branches a lookup takes do not depend on which slot holds the key. The
//! table grows (doubling) before it is more than 3/4 full, so every probe
//! ends at an empty slot. Removal shifts the entries after the removed one
//! back instead of leaving tombstones (backward-shift deletion), so a
//! table that sees many removals never slows down.
//!
//! An empty slot holds `K::default()` and `V::default()` (for strings, an
//! empty `Vec`, which allocates nothing), so the layout needs no `unsafe`.
//!
//! hashbrown's `HashTable`, which the resource used before, keeps its
//! control bytes and its entries in two arrays (two dependent cache
//! misses per lookup on a large table) and does not say where a key's
//! bucket is, so a batch could not prefetch it.

use std::hash::{BuildHasher, Hash};

/// The slots of a group.
const GROUP: usize = 4;

/// The fewest slots an allocated table has.
const MIN_SLOTS: usize = 2 * GROUP;

/// How many keys ahead of the one it looks up [`FlatTable::find_each`]
/// hashes and prefetches: enough lookups in flight to cover a memory
/// access, few enough that their lines stay in the L1 cache (a power of
/// two).
const LOOKAHEAD: usize = 32;

/// The lowest bit of each of a group's four 16-bit tags.
const LANES_LOW: u64 = 0x0001_0001_0001_0001;

/// The top bit of each of a group's four 16-bit tags: set in full slots.
const LANES_HIGH: u64 = 0x8000_8000_8000_8000;

/// Four slots, aligned to a cache line.
#[repr(align(64))]
struct Group<K, V> {
    /// The tag of slot `j` in bits `16 * j ..16 * j + 16`: 0 if the slot
    /// is empty, else [`tag_of`] its key's hash.
    tags: u64,
    keys: [K; GROUP],
    values: [V; GROUP],
}

impl<K: Default, V: Default> Group<K, V> {
    fn empty() -> Self {
        Group {
            tags: 0,
            keys: Default::default(),
            values: Default::default(),
        }
    }
}

impl<K, V> Group<K, V> {
    /// The tag of slot `j`.
    fn tag(&self, j: usize) -> u16 {
        (self.tags >> (16 * j)) as u16
    }

    /// Sets the tag of slot `j`.
    fn set_tag(&mut self, j: usize, tag: u16) {
        self.tags = self.tags & !(0xFFFF << (16 * j)) | u64::from(tag) << (16 * j);
    }

    /// A mask with the top bit of each slot's lane set where the slot's
    /// tag may be `tag` (a tag of [`tag_of`]): every slot whose tag is
    /// `tag`, and rarely another full one (the SWAR zero test can flag a
    /// lane above a true match), so a match must be confirmed by comparing
    /// keys. Never an empty slot: its lane of `tags ^ tag` has the top bit
    /// set, which the test requires clear.
    fn candidates(&self, tag: u16) -> u64 {
        let x = self.tags ^ (LANES_LOW * u64::from(tag));
        x.wrapping_sub(LANES_LOW) & !x & LANES_HIGH
    }

    /// A mask with the top bit of each empty slot's lane set.
    fn empties(&self) -> u64 {
        !self.tags & LANES_HIGH
    }
}

/// The slot of the lowest lane set in a nonzero lane mask.
fn first_lane(mask: u64) -> usize {
    mask.trailing_zeros() as usize / 16
}

/// The tag stored with a key of this hash: 15 bits of it, with the top bit
/// set (so that it is never 0, the tag of an empty slot).
fn tag_of(hash: u64) -> u16 {
    (hash >> 48) as u16 | 0x8000
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
    /// Empty (no allocation) or a power of two of groups, at most 3/4 of
    /// their slots full. Slot `i` is slot `i % GROUP` of group
    /// `i / GROUP`.
    groups: Box<[Group<K, V>]>,
    /// The number of full slots.
    len: usize,
    hasher: S,
}

impl<K, V, S> FlatTable<K, V, S> {
    /// An empty table (no allocation) hashing with `hasher`.
    pub(crate) fn with_hasher(hasher: S) -> Self {
        FlatTable {
            groups: Box::default(),
            len: 0,
            hasher,
        }
    }

    /// The number of entries.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The bytes of the group array.
    pub(crate) fn allocation_size(&self) -> usize {
        size_of_val::<[Group<K, V>]>(&self.groups)
    }
}

impl<K: Eq + Hash + Default, V: Default, S: BuildHasher> FlatTable<K, V, S> {
    /// An empty table with room for `len` entries, hashing with `hasher`.
    pub(crate) fn with_capacity_and_hasher(len: usize, hasher: S) -> Self {
        let mut table = Self::with_hasher(hasher);
        table.reserve(len);
        table
    }

    /// The number of slots.
    fn slots(&self) -> usize {
        self.groups.len() * GROUP
    }

    fn hash(&self, key: &K) -> u64 {
        self.hasher.hash_one(key)
    }

    /// The home group of a key of hash `hash`. The table must have groups.
    fn home(&self, hash: u64) -> usize {
        hash as usize & (self.groups.len() - 1)
    }

    /// The group after `g`, cyclically.
    fn next_group(&self, g: usize) -> usize {
        (g + 1) & (self.groups.len() - 1)
    }

    /// Where `key`, of hash `hash`, is: its group and slot in the group
    /// (`Ok`), or (`Err`) the first empty slot from the start of its home
    /// group on, where it would go. The table must have groups.
    #[inline]
    fn probe(&self, hash: u64, key: &K) -> Result<(usize, usize), (usize, usize)> {
        let tag = tag_of(hash);
        let mut g = self.home(hash);
        loop {
            let group = &self.groups[g];
            let mut candidates = group.candidates(tag);
            while candidates != 0 {
                let j = first_lane(candidates);
                if group.keys[j] == *key {
                    return Ok((g, j));
                }
                candidates &= candidates - 1;
            }
            let empties = group.empties();
            if empties != 0 {
                return Err((g, first_lane(empties)));
            }
            g = self.next_group(g);
        }
    }

    /// The value of `key`, of hash `hash`, if the table has it.
    #[inline]
    fn get_hashed(&self, hash: u64, key: &K) -> Option<&V> {
        if self.groups.is_empty() {
            return None;
        }
        let (g, j) = self.probe(hash, key).ok()?;
        Some(&self.groups[g].values[j])
    }

    /// The value of `key`, if the table has it.
    pub(crate) fn get(&self, key: &K) -> Option<&V> {
        self.get_hashed(self.hash(key), key)
    }

    /// Calls `found(i, value)` for each `keys[i]`, in order, with its
    /// value if the table has it.
    ///
    /// The keys [`LOOKAHEAD`] positions ahead are hashed and their home
    /// groups prefetched while a key is looked up, so that a batch on a
    /// table much larger than the caches waits for many memory accesses at
    /// once rather than for one after another.
    #[inline]
    pub(crate) fn find_each(&self, keys: &[K], mut found: impl FnMut(usize, Option<&V>)) {
        if self.groups.is_empty() {
            (0..keys.len()).for_each(|i| found(i, None));
            return;
        }
        let mut hashes = [0u64; LOOKAHEAD];
        for (hash, key) in hashes.iter_mut().zip(keys) {
            *hash = self.hash(key);
            prefetch(&self.groups[self.home(*hash)]);
        }
        for (i, key) in keys.iter().enumerate() {
            let hash = hashes[i % LOOKAHEAD];
            if let Some(ahead) = keys.get(i + LOOKAHEAD) {
                let next = self.hash(ahead);
                prefetch(&self.groups[self.home(next)]);
                hashes[i % LOOKAHEAD] = next;
            }
            found(i, self.get_hashed(hash, key));
        }
    }

    /// Puts an entry in the empty slot `j` of group `g`.
    fn fill(&mut self, (g, j): (usize, usize), tag: u16, key: K, value: V) {
        let group = &mut self.groups[g];
        group.set_tag(j, tag);
        group.keys[j] = key;
        group.values[j] = value;
    }

    /// Empties slot `j` of group `g`; returns its tag, key and value.
    fn take(&mut self, (g, j): (usize, usize)) -> (u16, K, V) {
        let group = &mut self.groups[g];
        let tag = group.tag(j);
        group.set_tag(j, 0);
        let key = std::mem::take(&mut group.keys[j]);
        (tag, key, std::mem::take(&mut group.values[j]))
    }

    /// Sets the value of `key`; returns the value it replaces.
    pub(crate) fn insert(&mut self, key: K, value: V) -> Option<V> {
        let hash = self.hash(&key);
        let vacant = if self.groups.is_empty() {
            None
        } else {
            match self.probe(hash, &key) {
                Ok((g, j)) => {
                    return Some(std::mem::replace(&mut self.groups[g].values[j], value));
                }
                Err(slot) if self.len < max_len(self.slots()) => Some(slot),
                Err(_) => None,
            }
        };
        let slot = match vacant {
            Some(slot) => slot,
            None => {
                self.reserve(1);
                self.vacant(hash)
            }
        };
        self.fill(slot, tag_of(hash), key, value);
        self.len += 1;
        None
    }

    /// The first empty slot from the start of the home group of `hash` on
    /// (for a key known to be absent). The table must have groups.
    fn vacant(&self, hash: u64) -> (usize, usize) {
        let mut g = self.home(hash);
        loop {
            let empties = self.groups[g].empties();
            if empties != 0 {
                return (g, first_lane(empties));
            }
            g = self.next_group(g);
        }
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
        if len > max_len(self.slots()) {
            self.resize(slots_for(len));
        }
    }

    /// Moves every entry into a new array of `slots` slots (a power of two,
    /// at least [`MIN_SLOTS`], with room for them all).
    fn resize(&mut self, slots: usize) {
        let groups = std::iter::repeat_with(Group::empty)
            .take(slots / GROUP)
            .collect();
        let old = std::mem::replace(&mut self.groups, groups);
        for group in old {
            let Group { tags, keys, values } = group;
            for (j, (key, value)) in keys.into_iter().zip(values).enumerate() {
                let tag = (tags >> (16 * j)) as u16;
                if tag != 0 {
                    let slot = self.vacant(self.hash(&key));
                    self.fill(slot, tag, key, value);
                }
            }
        }
    }

    /// Removes `key`; returns its value, if the table had it.
    pub(crate) fn remove(&mut self, key: &K) -> Option<V> {
        if self.groups.is_empty() {
            return None;
        }
        let (g, j) = self.probe(self.hash(key), key).ok()?;
        let (_, _, value) = self.take((g, j));
        self.len -= 1;
        // Backward shift, slot by slot: each entry after the hole, up to
        // the next empty slot, moves into the hole if the hole lies on its
        // probe sequence (from the first slot of its home group to where
        // it is, cyclically); then the hole is where it was. No probe
        // sequence is left with a gap.
        let mask = self.slots() - 1;
        let at = |i: usize| (i / GROUP, i % GROUP);
        let mut hole = g * GROUP + j;
        let mut i = (hole + 1) & mask;
        loop {
            let (g, j) = at(i);
            let group = &self.groups[g];
            if group.tag(j) == 0 {
                break;
            }
            let start = self.home(self.hash(&group.keys[j])) * GROUP;
            if i.wrapping_sub(start) & mask >= i.wrapping_sub(hole) & mask {
                let (tag, key, value) = self.take((g, j));
                self.fill(at(hole), tag, key, value);
                hole = i;
            }
            i = (i + 1) & mask;
        }
        Some(value)
    }

    /// Every entry, in slot order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.groups.iter().flat_map(|group| {
            (0..GROUP)
                .filter(|j| group.tag(*j) != 0)
                .map(|j| (&group.keys[j], &group.values[j]))
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
    /// groups (or none), at most 3/4 of the slots full, `len` full ones,
    /// and every entry reachable from the first slot of its home group
    /// without crossing an empty slot, under its own tag; empty slots hold
    /// default keys and values.
    fn check_invariants(table: &Table) {
        let n = table.slots();
        assert!(
            n == 0 || (n.is_power_of_two() && n >= MIN_SLOTS),
            "{n} slots"
        );
        let slot = |i: usize| {
            let group = &table.groups[i / GROUP];
            let j = i % GROUP;
            (group.tag(j), group.keys[j], group.values[j])
        };
        let full = (0..n).filter(|i| slot(*i).0 != 0).count();
        assert_eq!(full, table.len);
        assert!(table.len <= max_len(n));
        for i in 0..n {
            let (tag, key, value) = slot(i);
            if tag == 0 {
                assert_eq!((key, value), (0, 0), "empty slot {i}");
                continue;
            }
            let hash = table.hash(&key);
            assert_eq!(tag, tag_of(hash));
            let mut j = table.home(hash) * GROUP;
            while j != i {
                assert!(
                    slot(j).0 != 0,
                    "key {key} at {i} is cut off from its home by an empty slot at {j}"
                );
                j = (j + 1) % n;
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
                        prop_assert!(table.len + n <= max_len(table.slots()));
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
            assert!(table.len() * 4 <= table.slots() * 3);
        }
        assert_eq!(table.slots(), 2048);
        table.reserve(0);
        assert_eq!(table.slots(), 2048);
        table.reserve(536);
        assert_eq!(table.slots(), 2048);
        table.reserve(537);
        assert_eq!(table.slots(), 4096);
        assert_eq!(slots_for(6), 8);
        assert_eq!(slots_for(7), 16);
        assert_eq!(slots_for(1_000_000), 1 << 21);
        assert_eq!(size_of::<Group<i64, f32>>(), 64);
        assert_eq!(size_of::<Group<i64, f64>>(), 128);
    }

    #[test]
    #[should_panic(expected = "capacity overflow")]
    fn a_capacity_overflow_panics() {
        FlatTable::<u32, (), _>::with_hasher(foldhash::fast::RandomState::default())
            .reserve(usize::MAX / 2);
    }
}
