//! Host memory for tensors: [`HostAllocator`], a caching allocator that
//! keeps freed large buffers and hands them out again.
//!
//! A fresh buffer from the operating system costs a page fault per 4 KiB the
//! first time it is written (about 10,000 faults for a 40 MB output), which
//! caps an elementwise kernel at a fraction of memory bandwidth. So, in the
//! spirit of PyTorch's CPU caching allocator and TensorFlow's BFC allocator,
//! a buffer of at least [`AllocatorConfig::min_cached_bytes`] goes back to a
//! free list of its *size class* when its last tensor is gone, and the next
//! request of that class takes it without a system call.
//!
//! - **Size classes:** four per power of two (`2^k`, `1.25 * 2^k`,
//!   `1.5 * 2^k`, `1.75 * 2^k`), so a buffer wastes at most a fifth of its
//!   size and one class serves many nearby sizes.
//! - **Bounded:** at most [`AllocatorConfig::max_cached_bytes`] are kept; a
//!   buffer freed past that goes back to the system at once.
//!   [`HostAllocator::trim`] gives every cached buffer back; a failed system
//!   allocation trims and tries once more before it is an error.
//! - **Threads:** each size class has its own lock-free queue, so the fast
//!   path takes no lock; the counters are relaxed atomics.
//! - **Small buffers** (below `min_cached_bytes`: a scalar's gradient, a
//!   short vector) fault in no pages, but the system allocator is slow to
//!   align them to [`ALIGNMENT`] (glibc's `posix_memalign` takes neither
//!   its thread cache nor its fast bins). So each thread keeps the small
//!   buffers it frees in free lists of its own, up to
//!   [`AllocatorConfig::thread_cache_bytes`], for its next request of
//!   their size class: no lock, no atomic operation, no system call. The
//!   lists serve one allocator at a time (the one whose buffer the thread
//!   freed first while they were empty), and go back to the system when
//!   the thread ends or calls [`HostAllocator::trim`].
//! - **Safety of reuse:** a buffer is reused only after the last tensor using
//!   it is gone (the tensor's reference count owns it). Memory is never
//!   handed out uninitialized: a fresh buffer is zeroed by the system, and a
//!   reused one holds what its last tensor wrote. [`allocate_zeroed`]
//!   clears a reused buffer; [`allocate_for_overwrite`] does not, and is
//!   only used by code that writes every element before anything reads
//!   (the elementwise helpers of
//!   [`KernelContext`](crate::KernelContext)), so a kernel never sees values
//!   it did not write.
//! - **Limits:** one buffer may not exceed
//!   [`AllocatorConfig::max_tensor_bytes`] (by default the machine's
//!   physical memory): past it, allocation is a `ResourceExhausted` error
//!   instead of an abort or an out-of-memory kill later.
//!
//! ```
//! use op_core::allocator::{AllocatorConfig, HostAllocator};
//!
//! let alloc = HostAllocator::new(AllocatorConfig::default().max_cached_bytes(64 << 20));
//! let block = alloc.allocate_zeroed(1 << 20)?;
//! assert_eq!(alloc.stats().bytes_in_use, 1 << 20);
//! drop(block);
//! let again = alloc.allocate_zeroed(1 << 20)?; // the same buffer, cleared
//! let stats = alloc.stats();
//! assert_eq!((stats.hits, stats.misses), (1, 1));
//! assert!(again.bytes().iter().all(|&b| b == 0));
//! # Ok::<(), op_core::Error>(())
//! ```
//!
//! [`allocate_zeroed`]: HostAllocator::allocate_zeroed
//! [`allocate_for_overwrite`]: HostAllocator::allocate_for_overwrite

use std::alloc::Layout;
use std::cell::RefCell;
use std::fmt;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, OnceLock, Weak};

use crossbeam_queue::ArrayQueue;

use crate::{Error, Result};

/// The alignment of every buffer: a cache line, and enough for any SIMD
/// load (TensorFlow's `EIGEN_MAX_ALIGN_BYTES`).
pub const ALIGNMENT: usize = 64;

/// Size classes per power of two.
const CLASSES_PER_DOUBLING: usize = 4;

/// Free buffers one size class holds at most (beyond the byte bound).
const FREE_PER_CLASS: usize = 64;

/// Free buffers one size class of a thread's cache holds at most (beyond
/// [`AllocatorConfig::thread_cache_bytes`]): enough for the outputs a
/// gradient tape keeps over a step of small ops.
const THREAD_FREE_PER_CLASS: usize = 256;

/// The settings of a [`HostAllocator`].
///
/// ```
/// use op_core::allocator::AllocatorConfig;
/// let config = AllocatorConfig::default()
///     .max_cached_bytes(256 << 20)
///     .max_tensor_bytes(1 << 30);
/// assert_eq!(config.max_cached_bytes, 256 << 20);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct AllocatorConfig {
    /// Bytes of freed buffers kept for reuse, at most (default 1 GiB).
    pub max_cached_bytes: usize,
    /// Buffers smaller than this are not kept in the shared cache: they
    /// fault in no pages (default 64 KiB). Their threads keep them instead
    /// (see [`thread_cache_bytes`](Self::thread_cache_bytes)).
    pub min_cached_bytes: usize,
    /// Bytes of freed small buffers (below
    /// [`min_cached_bytes`](Self::min_cached_bytes)) each thread keeps for
    /// its next requests, at most (default 256 KiB; 0 keeps none).
    pub thread_cache_bytes: usize,
    /// The largest buffer handed out (default: the machine's physical
    /// memory where it is known, else `isize::MAX`).
    pub max_tensor_bytes: usize,
}

impl Default for AllocatorConfig {
    fn default() -> Self {
        AllocatorConfig {
            max_cached_bytes: 1 << 30,
            min_cached_bytes: 64 << 10,
            thread_cache_bytes: 256 << 10,
            max_tensor_bytes: physical_memory().unwrap_or(isize::MAX as usize),
        }
    }
}

impl AllocatorConfig {
    /// Sets [`max_cached_bytes`](Self::max_cached_bytes).
    pub fn max_cached_bytes(mut self, bytes: usize) -> Self {
        self.max_cached_bytes = bytes;
        self
    }

    /// Sets [`min_cached_bytes`](Self::min_cached_bytes) (at least 1).
    pub fn min_cached_bytes(mut self, bytes: usize) -> Self {
        self.min_cached_bytes = bytes.max(1);
        self
    }

    /// Sets [`thread_cache_bytes`](Self::thread_cache_bytes).
    pub fn thread_cache_bytes(mut self, bytes: usize) -> Self {
        self.thread_cache_bytes = bytes;
        self
    }

    /// Sets [`max_tensor_bytes`](Self::max_tensor_bytes).
    pub fn max_tensor_bytes(mut self, bytes: usize) -> Self {
        self.max_tensor_bytes = bytes.min(isize::MAX as usize);
        self
    }
}

/// The machine's physical memory in bytes, from `/proc/meminfo`.
fn physical_memory() -> Option<usize> {
    if cfg!(miri) {
        // Miri models memory in its own, much larger, representation: a
        // small limit keeps a test of huge tensors from exhausting the host.
        return Some(1 << 30);
    }
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// A snapshot of a [`HostAllocator`]'s counters.
///
/// Sizes are the buffers' class sizes (what the allocator holds), not the
/// sizes asked for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AllocatorStats {
    /// Bytes of buffers handed out and not yet freed.
    pub bytes_in_use: usize,
    /// The most `bytes_in_use` has been since the allocator was made or
    /// [`reset_peak`](HostAllocator::reset_peak) was called.
    pub peak_bytes_in_use: usize,
    /// Bytes of freed buffers kept for reuse in the shared cache (not the
    /// small buffers threads keep).
    pub bytes_cached: usize,
    /// Requests of a size the shared cache keeps served from it.
    pub hits: u64,
    /// Requests of a size the shared cache keeps that went to the system.
    pub misses: u64,
    /// Freed buffers given back to the system because the cache was full.
    pub returned: u64,
}

/// A caching allocator of host memory for tensors (see the
/// [module docs](self)).
///
/// Cloning gives another handle to the same allocator. Runtimes share
/// [`HostAllocator::global`] unless given their own
/// ([`Runtime::with_allocator`](crate::Runtime::with_allocator)).
#[derive(Clone)]
pub struct HostAllocator {
    shared: Arc<Shared>,
}

struct Shared {
    config: AllocatorConfig,
    /// One queue of free buffers per size class, made on first use.
    free: Box<[OnceLock<ArrayQueue<FreeBuffer>>]>,
    in_use: AtomicUsize,
    peak: AtomicUsize,
    cached: AtomicUsize,
    hits: AtomicU64,
    misses: AtomicU64,
    returned: AtomicU64,
}

/// A free buffer of one size class (the queue says which).
struct FreeBuffer(NonNull<u8>);

// SAFETY: a free buffer is plain memory that no one references; whoever
// pops it from the queue owns it.
unsafe impl Send for FreeBuffer {}

static GLOBAL: LazyLock<HostAllocator> =
    LazyLock::new(|| HostAllocator::new(AllocatorConfig::default()));

impl HostAllocator {
    /// An allocator with `config`.
    pub fn new(config: AllocatorConfig) -> HostAllocator {
        let classes = class_count();
        HostAllocator {
            shared: Arc::new(Shared {
                config,
                free: (0..classes).map(|_| OnceLock::new()).collect(),
                in_use: AtomicUsize::new(0),
                peak: AtomicUsize::new(0),
                cached: AtomicUsize::new(0),
                hits: AtomicU64::new(0),
                misses: AtomicU64::new(0),
                returned: AtomicU64::new(0),
            }),
        }
    }

    /// The allocator of the default runtimes and of tensors made outside a
    /// kernel ([`Tensor::zeros`](crate::Tensor::zeros)), with the default
    /// [`AllocatorConfig`].
    pub fn global() -> &'static HostAllocator {
        &GLOBAL
    }

    /// The allocator's settings.
    pub fn config(&self) -> &AllocatorConfig {
        &self.shared.config
    }

    /// The counters now.
    pub fn stats(&self) -> AllocatorStats {
        let s = &self.shared;
        AllocatorStats {
            bytes_in_use: s.in_use.load(Ordering::Relaxed),
            peak_bytes_in_use: s.peak.load(Ordering::Relaxed),
            bytes_cached: s.cached.load(Ordering::Relaxed),
            hits: s.hits.load(Ordering::Relaxed),
            misses: s.misses.load(Ordering::Relaxed),
            returned: s.returned.load(Ordering::Relaxed),
        }
    }

    /// Starts [`AllocatorStats::peak_bytes_in_use`] again from the bytes in
    /// use now.
    pub fn reset_peak(&self) {
        let s = &self.shared;
        s.peak
            .store(s.in_use.load(Ordering::Relaxed), Ordering::Relaxed);
    }

    /// Whether `self` and `other` are handles to one allocator.
    pub fn same(&self, other: &HostAllocator) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// Gives every buffer in the shared cache back to the system, and
    /// those this thread keeps for this allocator.
    pub fn trim(&self) {
        self.shared.trim();
        let _ = THREAD_CACHE.try_with(|cache| {
            if let Ok(mut cache) = cache.try_borrow_mut()
                && cache.is_for(&self.shared)
            {
                cache.clear();
            }
        });
    }

    /// A buffer of `size` bytes, all zero.
    ///
    /// Returns a `ResourceExhausted` error if `size` exceeds
    /// [`AllocatorConfig::max_tensor_bytes`] or the system has no memory
    /// left.
    pub fn allocate_zeroed(&self, size: usize) -> Result<Block> {
        let (mut block, reused) = self.allocate(size)?;
        if reused {
            block.bytes_mut().fill(0);
        }
        Ok(block)
    }

    /// A buffer of `size` bytes whose contents are unspecified: zeros, or
    /// what an earlier tensor wrote there. Only for code that writes every
    /// byte before reading any.
    ///
    /// Returns the errors of [`allocate_zeroed`](Self::allocate_zeroed).
    pub fn allocate_for_overwrite(&self, size: usize) -> Result<Block> {
        self.allocate(size).map(|(block, _)| block)
    }

    /// Checks `size` against the limit (before anything else, so that an
    /// impossible request costs nothing).
    pub fn check_size(&self, size: usize) -> Result<()> {
        let limit = self.shared.config.max_tensor_bytes;
        if size > limit {
            return Err(Error::resource_exhausted(format!(
                "{size} bytes is more than the largest buffer this allocator hands out ({limit} bytes, AllocatorConfig::max_tensor_bytes)"
            )));
        }
        Ok(())
    }

    /// A block of at least `size` bytes, and whether it was reused.
    fn allocate(&self, size: usize) -> Result<(Block, bool)> {
        self.check_size(size)?;
        let shared = &self.shared;
        let (class, capacity) = class_of(size);
        if capacity >= shared.config.min_cached_bytes {
            let queue = shared.free[class].get();
            if let Some(FreeBuffer(ptr)) = queue.and_then(ArrayQueue::pop) {
                shared.cached.fetch_sub(capacity, Ordering::Relaxed);
                shared.hits.fetch_add(1, Ordering::Relaxed);
                return Ok((self.block(ptr, size, class, capacity), true));
            }
            shared.misses.fetch_add(1, Ordering::Relaxed);
        } else if shared.config.thread_cache_bytes > 0
            && let Some(ptr) = THREAD_CACHE
                .try_with(|cache| cache.try_borrow_mut().ok()?.take(shared, class))
                .ok()
                .flatten()
        {
            return Ok((self.block(ptr, size, class, capacity), true));
        }
        let layout = Layout::from_size_align(capacity, ALIGNMENT)
            .map_err(|_| Error::resource_exhausted(format!("{size} bytes cannot be allocated")))?;
        let ptr = match system_alloc_zeroed(layout) {
            Some(ptr) => ptr,
            None => {
                // The cache may hold what the system lacks.
                shared.trim();
                system_alloc_zeroed(layout).ok_or_else(|| {
                    Error::resource_exhausted(format!(
                        "out of memory allocating {size} bytes ({} bytes in use)",
                        shared.in_use.load(Ordering::Relaxed)
                    ))
                })?
            }
        };
        Ok((self.block(ptr, size, class, capacity), false))
    }

    fn block(&self, ptr: NonNull<u8>, size: usize, class: usize, capacity: usize) -> Block {
        let s = &self.shared;
        let in_use = s.in_use.fetch_add(capacity, Ordering::Relaxed) + capacity;
        s.peak.fetch_max(in_use, Ordering::Relaxed);
        Block {
            ptr,
            size,
            class,
            capacity,
            owner: self.clone(),
        }
    }
}

impl fmt::Debug for HostAllocator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostAllocator")
            .field("config", &self.shared.config)
            .field("stats", &self.stats())
            .finish()
    }
}

impl HostAllocator {
    /// Takes a block's memory back: into this thread's cache if small and
    /// there is room, else see [`Shared::release`].
    fn release(&self, ptr: NonNull<u8>, class: usize, capacity: usize) {
        let shared = &self.shared;
        if capacity < shared.config.min_cached_bytes
            && shared.config.thread_cache_bytes > 0
            && THREAD_CACHE
                .try_with(|cache| {
                    cache
                        .try_borrow_mut()
                        .is_ok_and(|mut cache| cache.keep(shared, ptr, class, capacity))
                })
                .unwrap_or(false)
        {
            shared.in_use.fetch_sub(capacity, Ordering::Relaxed);
            return;
        }
        shared.release(ptr, class, capacity);
    }
}

impl Shared {
    fn trim(&self) {
        for (class, queue) in self.free.iter().enumerate() {
            let Some(queue) = queue.get() else { continue };
            let capacity = class_size(class);
            while let Some(FreeBuffer(ptr)) = queue.pop() {
                self.cached.fetch_sub(capacity, Ordering::Relaxed);
                // SAFETY: `ptr` came from `system_alloc_zeroed` with this
                // class's capacity and ALIGNMENT, and the queue owned it.
                unsafe { system_dealloc(ptr, capacity) };
            }
        }
    }

    /// Takes a block's memory back: into its class's queue if it is of a
    /// size the shared cache keeps and the cache has room, else to the
    /// system.
    fn release(&self, ptr: NonNull<u8>, class: usize, capacity: usize) {
        self.in_use.fetch_sub(capacity, Ordering::Relaxed);
        if capacity >= self.config.min_cached_bytes {
            let room = self.cached.fetch_add(capacity, Ordering::Relaxed) + capacity
                <= self.config.max_cached_bytes;
            if room {
                let queue = self.free[class].get_or_init(|| ArrayQueue::new(FREE_PER_CLASS));
                if queue.push(FreeBuffer(ptr)).is_ok() {
                    return;
                }
            }
            self.cached.fetch_sub(capacity, Ordering::Relaxed);
            self.returned.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: `ptr` came from `system_alloc_zeroed` with `capacity` and
        // ALIGNMENT, and its block, the only owner, is being dropped.
        unsafe { system_dealloc(ptr, capacity) };
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.trim();
    }
}

/// A thread's own free lists of small buffers (see the [module
/// docs](self)), for one allocator at a time.
struct ThreadCache {
    /// The allocator whose buffers the lists hold. Weak, so that a dropped
    /// allocator's shared cache goes at once; its `Shared` stays allocated
    /// while this points at it, so no other allocator takes its address.
    owner: Weak<Shared>,
    /// The bytes in the lists.
    bytes: usize,
    /// Free buffers by size class.
    free: Vec<Vec<NonNull<u8>>>,
}

thread_local! {
    static THREAD_CACHE: RefCell<ThreadCache> = const {
        RefCell::new(ThreadCache {
            owner: Weak::new(),
            bytes: 0,
            free: Vec::new(),
        })
    };
}

impl ThreadCache {
    /// Whether the lists hold `shared`'s buffers.
    fn is_for(&self, shared: &Arc<Shared>) -> bool {
        std::ptr::eq(self.owner.as_ptr(), Arc::as_ptr(shared))
    }

    /// A free buffer of `class` from `shared`, if the lists have one.
    #[inline]
    fn take(&mut self, shared: &Arc<Shared>, class: usize) -> Option<NonNull<u8>> {
        if !self.is_for(shared) {
            return None;
        }
        let ptr = self.free.get_mut(class)?.pop()?;
        self.bytes -= class_size(class);
        Some(ptr)
    }

    /// Keeps `ptr` (a buffer of `class`, whose size is `capacity`, from
    /// `shared`) if there is room for it; returns whether it did.
    #[inline]
    fn keep(
        &mut self,
        shared: &Arc<Shared>,
        ptr: NonNull<u8>,
        class: usize,
        capacity: usize,
    ) -> bool {
        if self.bytes + capacity > shared.config.thread_cache_bytes {
            return false;
        }
        if !self.is_for(shared) {
            if self.owner.strong_count() > 0 && self.bytes > 0 {
                return false;
            }
            // Lists that are empty, or whose allocator is gone, serve the
            // allocator that frees here next.
            self.clear();
            self.owner = Arc::downgrade(shared);
        }
        if self.free.len() <= class {
            self.free.resize_with(class + 1, Vec::new);
        }
        let list = &mut self.free[class];
        if list.len() >= THREAD_FREE_PER_CLASS {
            return false;
        }
        list.push(ptr);
        self.bytes += capacity;
        true
    }

    /// Gives every buffer in the lists back to the system.
    fn clear(&mut self) {
        for (class, list) in self.free.iter_mut().enumerate() {
            for ptr in list.drain(..) {
                // SAFETY: `ptr` came from `system_alloc_zeroed` with this
                // class's size and ALIGNMENT (`keep` takes only such
                // buffers), and the list owned it.
                unsafe { system_dealloc(ptr, class_size(class)) };
            }
        }
        self.bytes = 0;
    }
}

impl Drop for ThreadCache {
    fn drop(&mut self) {
        self.clear();
    }
}

/// `layout`'s bytes, zeroed, or `None` when the system has none.
fn system_alloc_zeroed(layout: Layout) -> Option<NonNull<u8>> {
    // SAFETY: the layout's size is nonzero (callers ask for at least 1 byte).
    NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) })
}

/// Frees memory from [`system_alloc_zeroed`].
///
/// # Safety
///
/// `ptr` must come from `system_alloc_zeroed` with a layout of `capacity`
/// bytes and [`ALIGNMENT`], and must not be used afterwards.
unsafe fn system_dealloc(ptr: NonNull<u8>, capacity: usize) {
    // SAFETY: the caller's contract; the layout is the one it was
    // allocated with, which was valid then.
    unsafe {
        std::alloc::dealloc(
            ptr.as_ptr(),
            Layout::from_size_align_unchecked(capacity, ALIGNMENT),
        )
    };
}

/// The smallest class is 4 bytes (`2^2`); the largest `isize::MAX + 1`.
const MIN_CLASS_SHIFT: u32 = 2;

fn class_count() -> usize {
    (usize::BITS - MIN_CLASS_SHIFT) as usize * CLASSES_PER_DOUBLING
}

/// The size class of `size` (at least 4) and the class's size.
fn class_of(size: usize) -> (usize, usize) {
    let size = size.max(1 << MIN_CLASS_SHIFT);
    // The step between classes in `size`'s doubling: a quarter of its
    // power of two.
    let shift = usize::BITS - 1 - size.leading_zeros() - 2;
    let capacity = size.next_multiple_of(1 << shift);
    // Rounding up may reach the next power of two: index from the result.
    let power = usize::BITS - 1 - capacity.leading_zeros();
    let quarter = (capacity >> (power - 2)) - CLASSES_PER_DOUBLING;
    let class = (power - MIN_CLASS_SHIFT) as usize * CLASSES_PER_DOUBLING + quarter;
    (class, capacity)
}

/// The size of class `class`.
fn class_size(class: usize) -> usize {
    let power = class / CLASSES_PER_DOUBLING + MIN_CLASS_SHIFT as usize;
    let quarter = class % CLASSES_PER_DOUBLING;
    (CLASSES_PER_DOUBLING + quarter) << (power - 2)
}

/// A buffer from a [`HostAllocator`], returned to it when dropped.
///
/// Its bytes are always initialized (zeroed by the system, or written by an
/// earlier owner), so they can be read and written as bytes without
/// `unsafe`, and viewed as any element type for which every bit pattern is
/// a value.
pub struct Block {
    ptr: NonNull<u8>,
    /// The bytes asked for.
    size: usize,
    /// The size class.
    class: usize,
    /// The bytes allocated (the class's size).
    capacity: usize,
    owner: HostAllocator,
}

// SAFETY: a block owns its memory exclusively (like a `Box<[u8]>`); shared
// references only read it.
unsafe impl Send for Block {}
// SAFETY: as above: `&Block` only gives `&[u8]`.
unsafe impl Sync for Block {}

impl Block {
    /// The bytes asked for.
    pub fn len(&self) -> usize {
        self.size
    }

    /// Whether the block has no bytes.
    pub fn is_empty(&self) -> bool {
        self.size == 0
    }

    /// The bytes allocated: the size class, at least [`len`](Self::len).
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The allocator the block returns to.
    pub fn allocator(&self) -> &HostAllocator {
        &self.owner
    }

    /// The block's bytes.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` points to `capacity >= size` bytes owned by this
        // block, all initialized (see the type's docs), aligned for u8; no
        // `&mut` exists while `&self` does.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.size) }
    }

    /// The block's bytes, for writing.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `bytes`, and `&mut self` makes this the only
        // reference.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.size) }
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        self.owner.release(self.ptr, self.class, self.capacity);
    }
}

impl fmt::Debug for Block {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Block")
            .field("len", &self.size)
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_round_up_by_at_most_a_quarter_and_index_consistently() {
        let mut last = class_of(4);
        for size in (4..5000).chain([1 << 16, (1 << 16) + 1, 3 << 20, usize::MAX >> 1]) {
            let (class, capacity) = class_of(size);
            assert!(capacity >= size, "{size}");
            assert!(capacity - size <= size / 4, "{size} -> {capacity}");
            assert_eq!(class_size(class), capacity, "{size}");
            assert!(class < class_count(), "{size}");
            if size < 5000 {
                // Classes grow with sizes; one class has one capacity.
                assert!(class > last.0 || (class == last.0 && capacity == last.1));
                last = (class, capacity);
            }
        }
        assert_eq!(class_of(1 << 20), (class_of(1 << 20).0, 1 << 20));
        assert_eq!(class_of((1 << 20) + 1).1, 5 << 18);
        assert_eq!(class_of(7 << 18).1, 7 << 18);
        assert_eq!(class_of((7 << 18) + 1).1, 1 << 21);
    }

    #[test]
    fn a_freed_buffer_is_reused_and_a_reused_zeroed_one_is_cleared() {
        let alloc = HostAllocator::new(AllocatorConfig::default().min_cached_bytes(1024));
        let mut block = alloc.allocate_for_overwrite(4000).unwrap();
        assert!(
            block.bytes().iter().all(|&b| b == 0),
            "fresh memory is zeroed"
        );
        block.bytes_mut().fill(7);
        let ptr = block.bytes().as_ptr();
        drop(block);
        assert_eq!(alloc.stats().bytes_cached, 4096);
        let again = alloc.allocate_for_overwrite(3900).unwrap();
        assert_eq!(again.bytes().as_ptr(), ptr);
        assert!(again.bytes().iter().all(|&b| b == 7), "not cleared");
        drop(again);
        let zeroed = alloc.allocate_zeroed(4096).unwrap();
        assert_eq!(zeroed.bytes().as_ptr(), ptr);
        assert!(zeroed.bytes().iter().all(|&b| b == 0));
        let stats = alloc.stats();
        assert_eq!((stats.hits, stats.misses), (2, 1));
        assert_eq!(stats.bytes_in_use, 4096);
        assert_eq!(stats.bytes_cached, 0);
    }

    /// An allocator that keeps buffers from 1 KiB in its shared cache,
    /// and `thread_cache_bytes` of smaller ones per thread.
    fn small_buffer_allocator(thread_cache_bytes: usize) -> HostAllocator {
        HostAllocator::new(
            AllocatorConfig::default()
                .min_cached_bytes(1024)
                .thread_cache_bytes(thread_cache_bytes),
        )
    }

    /// `count` blocks of `size` bytes from `alloc`, each filled with 7s.
    fn filled(alloc: &HostAllocator, size: usize, count: usize) -> Vec<Block> {
        (0..count)
            .map(|_| {
                let mut block = alloc.allocate_for_overwrite(size).unwrap();
                block.bytes_mut().fill(7);
                block
            })
            .collect()
    }

    /// How many of `count` new blocks of `size` bytes are reused ones
    /// (filled by [`filled`]: fresh memory is zeroed), dropped after.
    fn reused(alloc: &HostAllocator, size: usize, count: usize) -> usize {
        let blocks: Vec<Block> = (0..count)
            .map(|_| alloc.allocate_for_overwrite(size).unwrap())
            .collect();
        blocks
            .iter()
            .filter(|b| b.bytes().iter().all(|&x| x == 7))
            .count()
    }

    #[test]
    fn small_buffers_are_kept_by_their_thread_not_the_shared_cache() {
        let alloc = small_buffer_allocator(1 << 10);
        drop(filled(&alloc, 100, 1));
        let stats = alloc.stats();
        assert_eq!((stats.hits, stats.misses, stats.bytes_cached), (0, 0, 0));
        assert_eq!(stats.peak_bytes_in_use, 112, "the class of 100 bytes");
        assert_eq!(stats.bytes_in_use, 0);
        // The next request of its class takes it back, as it was (zeroed
        // on request).
        let again = alloc.allocate_for_overwrite(100).unwrap();
        assert!(again.bytes().iter().all(|&b| b == 7));
        assert_eq!(alloc.stats().bytes_in_use, 112);
        let ptr = again.bytes().as_ptr();
        drop(again);
        let zeroed = alloc.allocate_zeroed(100).unwrap();
        assert_eq!(zeroed.bytes().as_ptr(), ptr);
        assert!(zeroed.bytes().iter().all(|&b| b == 0));
        // Another thread has lists of its own.
        drop(zeroed);
        drop(filled(&alloc, 100, 1));
        let elsewhere = std::thread::scope(|s| s.spawn(|| reused(&alloc, 100, 1)).join());
        assert_eq!(elsewhere.unwrap(), 0);
        assert_eq!(reused(&alloc, 100, 1), 1);
    }

    #[test]
    fn a_threads_lists_are_bounded_and_trim_empties_them() {
        // Room for two buffers of 112 bytes.
        let alloc = small_buffer_allocator(300);
        drop(filled(&alloc, 100, 4));
        assert_eq!(reused(&alloc, 100, 4), 2);
        alloc.trim();
        assert_eq!(reused(&alloc, 100, 2), 0);
        // None kept at all.
        let none = small_buffer_allocator(0);
        drop(filled(&none, 100, 2));
        assert_eq!(reused(&none, 100, 2), 0);
    }

    #[test]
    fn a_threads_lists_serve_one_allocator_at_a_time() {
        let a = small_buffer_allocator(1 << 10);
        let b = small_buffer_allocator(1 << 10);
        a.trim();
        drop(filled(&a, 100, 1));
        // b's buffer goes back to the system: the lists hold a's.
        drop(filled(&b, 100, 1));
        assert_eq!(reused(&b, 100, 1), 0);
        assert_eq!(reused(&a, 100, 1), 1);
        // Once a is gone, its buffers go and the lists serve b.
        drop(filled(&a, 100, 1));
        drop(a);
        drop(filled(&b, 100, 1));
        assert_eq!(reused(&b, 100, 1), 1);
        assert_eq!(b.stats().bytes_in_use, 0);
    }

    #[test]
    fn the_cache_is_bounded_and_trim_empties_it() {
        let alloc = HostAllocator::new(
            AllocatorConfig::default()
                .min_cached_bytes(1024)
                .max_cached_bytes(10_000),
        );
        let blocks: Vec<Block> = (0..4)
            .map(|_| alloc.allocate_zeroed(4096).unwrap())
            .collect();
        assert_eq!(alloc.stats().peak_bytes_in_use, 4 * 4096);
        drop(blocks);
        let stats = alloc.stats();
        assert_eq!(stats.bytes_cached, 2 * 4096, "two fit under 10,000 bytes");
        assert_eq!(stats.returned, 2);
        alloc.trim();
        assert_eq!(alloc.stats().bytes_cached, 0);
    }

    #[test]
    fn a_buffer_past_the_limit_is_resource_exhausted() {
        let alloc = HostAllocator::new(AllocatorConfig::default().max_tensor_bytes(1 << 20));
        let err = alloc.allocate_zeroed((1 << 20) + 1).unwrap_err();
        assert_eq!(err.code(), crate::Code::ResourceExhausted);
        assert!(err.message().contains("1048577 bytes"), "{err}");
        assert!(alloc.allocate_zeroed(1 << 20).is_ok());
    }
}
