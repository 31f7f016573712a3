//! The caching device allocator: steady-state ops never ask the driver
//! for memory.
//!
//! `cuMemAlloc` and `cuMemFree` cost microseconds and `cuMemFree`
//! synchronizes the device, so a freed block goes back to a free list of
//! its size class instead, and the next allocation of that class takes
//! it. All the device's work runs on one stream, and stream order makes
//! the reuse safe without waiting: every kernel that used the block was
//! queued before the block came back, every kernel of its next owner is
//! queued after (PyTorch's caching allocator relies on the same order and
//! records events only for blocks used on other streams).
//!
//! Size classes follow PyTorch's rounding: small sizes round up to a
//! multiple of 512 bytes, large ones to a quarter of their power of two,
//! so no block wastes more than a quarter of its size. A cap bounds the
//! bytes kept in free lists; [`GpuDevice::empty_cache`](crate::GpuDevice::empty_cache) gives them
//! all back, and an allocation the driver refuses (out of memory) empties
//! the cache and tries once more.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use cudarc::driver::sys::{CUdeviceptr, CUstream};
use op_core::Result;

use crate::driver::driver_error;

/// The smallest block, and the granularity of small ones.
pub const MIN_BLOCK: usize = 512;

/// Requests up to this size round to a multiple of [`MIN_BLOCK`].
pub const SMALL_LIMIT: usize = 1 << 20;

/// How many size classes split each power of two above [`SMALL_LIMIT`].
pub const DIVISIONS: usize = 4;

/// The bytes free lists may hold by default (blocks returned past it go
/// back to the driver).
pub const DEFAULT_CACHE_LIMIT: usize = 4 << 30;

/// The size of the block that serves a request of `bytes` bytes: a
/// multiple of 512 up to 1 MiB, then the next quarter step of the power
/// of two at or below the request (1.25, 1.5, 1.75 or 2 times it).
///
/// ```
/// use op_cuda::allocator::size_class;
/// assert_eq!(size_class(0), 512);
/// assert_eq!(size_class(513), 1024);
/// assert_eq!(size_class((1 << 20) + 1), (1 << 20) + (1 << 18));
/// assert_eq!(size_class(400_000_000), 402_653_184); // 1.5 x 2^28
/// ```
pub fn size_class(bytes: usize) -> usize {
    if bytes <= SMALL_LIMIT {
        return bytes.max(1).next_multiple_of(MIN_BLOCK);
    }
    let power = 1usize << (usize::BITS - 1 - bytes.leading_zeros());
    let step = power / DIVISIONS;
    bytes.next_multiple_of(step)
}

/// What the allocator did, for tests and tuning.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AllocatorStats {
    /// Allocations the driver made (cache misses).
    pub driver_allocs: u64,
    /// Blocks given back to the driver (over the cap, or emptied).
    pub driver_frees: u64,
    /// Allocations served from a free list.
    pub hits: u64,
    /// Bytes in free lists now.
    pub bytes_cached: usize,
    /// Bytes in blocks handed out and not yet returned.
    pub bytes_in_use: usize,
}

/// One device's caching allocator. Raw: it hands out device pointers;
/// [`CudaBuffer`](crate::CudaBuffer) is the owning handle that returns
/// them.
#[derive(Debug)]
pub struct CachingAllocator {
    state: Mutex<State>,
    /// The stream all allocations are ordered on.
    stream: StreamHandle,
    /// Whether the driver has stream-ordered allocation
    /// (`cuMemAllocAsync`), which does not synchronize the device.
    async_alloc: bool,
}

#[derive(Debug)]
struct State {
    free: BTreeMap<usize, Vec<CUdeviceptr>>,
    limit: usize,
    stats: AllocatorStats,
}

/// The raw stream, shareable across threads.
#[derive(Debug, Clone, Copy)]
struct StreamHandle(CUstream);

// SAFETY: a `CUstream` is a handle the driver lets any thread use (with
// the stream's context current, which every caller binds first).
unsafe impl Send for StreamHandle {}
// SAFETY: as for `Send`; the handle itself is never mutated.
unsafe impl Sync for StreamHandle {}

impl CachingAllocator {
    /// An empty cache for blocks used on `stream`, whose context must be
    /// current on the threads that call it.
    pub(crate) fn new(stream: CUstream, async_alloc: bool) -> CachingAllocator {
        CachingAllocator {
            state: Mutex::new(State {
                free: BTreeMap::new(),
                limit: DEFAULT_CACHE_LIMIT,
                stats: AllocatorStats::default(),
            }),
            stream: StreamHandle(stream),
            async_alloc,
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A block of [`size_class`]`(bytes)` bytes: from the free list, or
    /// from the driver. The caller binds the device's context first.
    pub(crate) fn allocate(&self, bytes: usize) -> Result<(CUdeviceptr, usize)> {
        let class = size_class(bytes);
        {
            let mut state = self.state();
            if let Some(ptr) = state.free.get_mut(&class).and_then(Vec::pop) {
                state.stats.hits += 1;
                state.stats.bytes_cached -= class;
                state.stats.bytes_in_use += class;
                return Ok((ptr, class));
            }
        }
        let ptr = match self.driver_alloc(class) {
            Ok(ptr) => ptr,
            Err(_) => {
                // Out of memory, perhaps because the cache holds it: give
                // the cached blocks back and try once more.
                self.empty_cache()?;
                self.driver_alloc(class)
                    .map_err(|e| driver_error(&format!("allocating {class} bytes on the GPU"), e))?
            }
        };
        let mut state = self.state();
        state.stats.driver_allocs += 1;
        state.stats.bytes_in_use += class;
        Ok((ptr, class))
    }

    fn driver_alloc(
        &self,
        class: usize,
    ) -> std::result::Result<CUdeviceptr, cudarc::driver::DriverError> {
        if self.async_alloc {
            // SAFETY: the stream is the device's live stream and its
            // context is current (the caller bound it).
            unsafe { cudarc::driver::result::malloc_async(self.stream.0, class) }
        } else {
            // SAFETY: the device's context is current.
            unsafe { cudarc::driver::result::malloc_sync(class) }
        }
    }

    /// Takes back a block [`allocate`](Self::allocate) gave out, whose
    /// last use is queued on the stream.
    pub(crate) fn release(&self, ptr: CUdeviceptr, class: usize) {
        let mut state = self.state();
        state.stats.bytes_in_use -= class;
        if state.stats.bytes_cached + class <= state.limit {
            state.stats.bytes_cached += class;
            state.free.entry(class).or_default().push(ptr);
            return;
        }
        state.stats.driver_frees += 1;
        drop(state);
        self.driver_free(ptr);
    }

    fn driver_free(&self, ptr: CUdeviceptr) {
        // A failed free (a device lost mid-run) leaks the block; there is
        // nobody to tell from a drop.
        let _ = if self.async_alloc {
            // SAFETY: `ptr` came from the driver and no one holds it (it
            // was returned); the free is ordered after its last use on
            // the stream.
            unsafe { cudarc::driver::result::free_async(ptr, self.stream.0) }
        } else {
            // SAFETY: as above; `cuMemFree` waits for the device first.
            unsafe { cudarc::driver::result::free_sync(ptr) }
        };
    }

    /// Gives every cached block back to the driver. The caller binds the
    /// device's context first.
    pub(crate) fn empty_cache(&self) -> Result<()> {
        let blocks = {
            let mut state = self.state();
            state.stats.bytes_cached = 0;
            std::mem::take(&mut state.free)
        };
        let mut freed = 0;
        for ptr in blocks.into_values().flatten() {
            self.driver_free(ptr);
            freed += 1;
        }
        self.state().stats.driver_frees += freed;
        Ok(())
    }

    /// Sets the most bytes the free lists may hold (blocks returned past
    /// it go back to the driver); does not shrink the cache now.
    pub fn set_cache_limit(&self, bytes: usize) {
        self.state().limit = bytes;
    }

    /// What the allocator has done so far.
    pub fn stats(&self) -> AllocatorStats {
        self.state().stats
    }
}
