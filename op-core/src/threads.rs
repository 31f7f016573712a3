//! Intra-op parallelism: the thread pool a runtime's kernels split their
//! work over, and [`ThreadPool::shard`], TensorFlow's `Shard` from
//! `work_sharder.h`.
//!
//! A kernel says how much work it has (`total` units) and roughly what one
//! unit costs (in CPU cycles; 1 for an add, a few tens for a
//! transcendental). Work that costs less than about two shards' worth
//! ([`MIN_COST_PER_SHARD`] cycles each) runs inline on the calling thread,
//! with no pool overhead: a one-element call costs a multiplication and a
//! comparison. Larger work is split into contiguous blocks run on the pool
//! (at most four per thread, so that a busy thread's blocks are stolen by
//! the others).
//!
//! A panic inside a block reaches the caller once every block has finished
//! (the runtime turns it into an `Internal` error for that call, with the
//! panic's location, and prints nothing); the pool's threads survive it, and
//! the pool stays usable.
//!
//! ```
//! use op_core::threads::ThreadPool;
//! use std::sync::atomic::{AtomicU64, Ordering};
//!
//! let pool = ThreadPool::new(2)?;
//! // Sum 0..1e6, split over the pool's threads.
//! let sum = AtomicU64::new(0);
//! pool.shard(1_000_000, 1, |range| {
//!     let part: u64 = range.map(|i| i as u64).sum();
//!     sum.fetch_add(part, Ordering::Relaxed);
//! });
//! assert_eq!(sum.into_inner(), 499_999_500_000);
//!
//! // Double a slice in place, block by block.
//! let mut values = vec![1.0f32; 100_000];
//! pool.shard_slice(&mut values, 1, |_offset, block| {
//!     block.iter_mut().for_each(|v| *v *= 2.0);
//! });
//! assert!(values.iter().all(|&v| v == 2.0));
//! # Ok::<(), op_core::Error>(())
//! ```

use std::ops::Range;
use std::sync::{Arc, LazyLock};

use rayon::prelude::*;

use crate::unwind::Containment;
use crate::{Error, Result};

/// The least work, in cycles, worth a block of its own (TensorFlow's
/// `kMinCostPerShard`): below twice this, work runs inline.
pub const MIN_COST_PER_SHARD: usize = 10_000;

/// Blocks per thread, at most: more than one, so that a thread that is
/// slow (the machine is busy) has its later blocks taken by the others.
const BLOCKS_PER_THREAD: usize = 4;

/// A pool of threads for splitting one kernel's work (TensorFlow's
/// `intra_op_parallelism_threads`).
///
/// A [`Runtime`](crate::Runtime) owns one, shared by its kernels through
/// [`KernelContext::threads`](crate::KernelContext::threads). A pool of one
/// thread has no threads of its own: all work runs on the caller.
pub struct ThreadPool {
    /// `None` for a pool of one thread.
    pool: Option<rayon::ThreadPool>,
    threads: usize,
    /// The least work worth a block ([`MIN_COST_PER_SHARD`] unless a test
    /// lowered it with [`with_min_cost_per_shard`](Self::with_min_cost_per_shard)).
    min_cost_per_shard: usize,
}

impl std::fmt::Debug for ThreadPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThreadPool")
            .field("threads", &self.threads)
            .finish()
    }
}

/// The pool of runtimes that do not name one: as many threads as cores.
static GLOBAL: LazyLock<Arc<ThreadPool>> = LazyLock::new(|| {
    // Under Miri, one thread: rayon's epoch-based memory reclamation
    // (crossbeam-epoch) trips Miri's Stacked Borrows model, which would
    // hide what the Miri runs are for, this crate's own unsafe code.
    let threads = if cfg!(miri) {
        1
    } else {
        std::thread::available_parallelism().map_or(1, usize::from)
    };
    Arc::new(ThreadPool::new(threads).unwrap_or_else(|_| ThreadPool::single()))
});

impl ThreadPool {
    /// A pool of `threads` threads (at least 1).
    ///
    /// Returns an `InvalidArgument` error for 0 threads, and a
    /// `ResourceExhausted` error if the system refuses to start the threads.
    pub fn new(threads: usize) -> Result<ThreadPool> {
        if threads == 0 {
            return Err(Error::invalid_argument(
                "a thread pool needs at least 1 thread, got 0",
            ));
        }
        if threads == 1 {
            return Ok(ThreadPool::single());
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("opkit-intra-op-{i}"))
            .build()
            .map_err(|e| {
                Error::resource_exhausted(format!(
                    "starting an intra-op thread pool of {threads} threads: {e}"
                ))
            })?;
        Ok(ThreadPool {
            pool: Some(pool),
            threads,
            min_cost_per_shard: MIN_COST_PER_SHARD,
        })
    }

    /// A pool that runs everything on the calling thread.
    pub fn single() -> ThreadPool {
        ThreadPool {
            pool: None,
            threads: 1,
            min_cost_per_shard: MIN_COST_PER_SHARD,
        }
    }

    /// The same pool, splitting work of at least `cycles` cycles per block
    /// (at least 1) instead of [`MIN_COST_PER_SHARD`]: with 1, even a
    /// two-element call is split. For tests: a kernel's small inputs then
    /// go through the same split as large ones, so that a result that
    /// depends on the split (`op_core::testing`'s thread check) shows on
    /// inputs small enough to check quickly.
    ///
    /// ```
    /// use op_core::threads::ThreadPool;
    ///
    /// let pool = ThreadPool::new(2)?.with_min_cost_per_shard(1);
    /// assert_eq!(pool.num_blocks(4, 1), 4);
    /// assert_eq!(ThreadPool::new(2)?.num_blocks(4, 1), 1);
    /// # Ok::<(), op_core::Error>(())
    /// ```
    pub fn with_min_cost_per_shard(mut self, cycles: usize) -> ThreadPool {
        self.min_cost_per_shard = cycles.max(1);
        self
    }

    /// The pool shared by runtimes that were not given one: one thread per
    /// core (`std::thread::available_parallelism`), started on first use.
    pub fn global() -> &'static Arc<ThreadPool> {
        &GLOBAL
    }

    /// The number of threads work is split over.
    pub fn num_threads(&self) -> usize {
        self.threads
    }

    /// The number of blocks `total` units of `cost_per_unit` cycles each
    /// are split into: 1 (run inline) for small work.
    #[inline]
    pub fn num_blocks(&self, total: usize, cost_per_unit: usize) -> usize {
        if self.threads == 1 || total < 2 {
            return 1;
        }
        let blocks = total.saturating_mul(cost_per_unit.max(1)) / self.min_cost_per_shard;
        blocks
            .min(self.threads * BLOCKS_PER_THREAD)
            .min(total)
            .max(1)
    }

    /// Calls `work` on ranges that together cover `0..total` exactly once
    /// each, in parallel when the work is worth it (see the
    /// [module docs](self)); `cost_per_unit` is one unit's rough cost in
    /// cycles. Returns when every range is done.
    ///
    /// # Panics
    ///
    /// If `work` panics; the panic reaches the caller after the other
    /// ranges are done, and the pool stays usable.
    #[inline]
    pub fn shard(&self, total: usize, cost_per_unit: usize, work: impl Fn(Range<usize>) + Sync) {
        let blocks = self.num_blocks(total, cost_per_unit);
        let Some(pool) = self.pool.as_ref().filter(|_| blocks > 1) else {
            if total > 0 {
                work(0..total);
            }
            return;
        };
        let block = total.div_ceil(blocks);
        // A contained caller's blocks panic silently too, on any thread.
        let containment = Containment::here();
        pool.install(|| {
            (0..blocks).into_par_iter().for_each(|b| {
                let start = b * block;
                let end = total.min(start + block);
                if start < end {
                    containment.run(|| work(start..end));
                }
            });
        });
    }

    /// Splits `data` into contiguous blocks and calls `work(offset, block)`
    /// on each (`offset` is the index of the block's first element in
    /// `data`), in parallel when the work is worth it; `cost_per_unit` is
    /// one element's rough cost in cycles. Returns when every block is done.
    ///
    /// # Panics
    ///
    /// If `work` panics, as [`shard`](Self::shard) does.
    #[inline]
    pub fn shard_slice<T: Send>(
        &self,
        data: &mut [T],
        cost_per_unit: usize,
        work: impl Fn(usize, &mut [T]) + Sync,
    ) {
        let blocks = self.num_blocks(data.len(), cost_per_unit);
        let Some(pool) = self.pool.as_ref().filter(|_| blocks > 1) else {
            if !data.is_empty() {
                work(0, data);
            }
            return;
        };
        // Blocks of whole cache lines, so that two threads never write to
        // one line.
        let per_line = (64 / size_of::<T>().max(1)).max(1);
        let block = data.len().div_ceil(blocks).next_multiple_of(per_line);
        let containment = Containment::here();
        pool.install(|| {
            data.par_chunks_mut(block)
                .enumerate()
                .for_each(|(b, chunk)| containment.run(|| work(b * block, chunk)));
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// The ranges `shard` hands out, sorted.
    fn ranges(pool: &ThreadPool, total: usize, cost: usize) -> Vec<Range<usize>> {
        let seen = Mutex::new(Vec::new());
        pool.shard(total, cost, |r| seen.lock().unwrap().push(r));
        let mut seen = seen.into_inner().unwrap();
        seen.sort_by_key(|r| r.start);
        seen
    }

    #[test]
    #[cfg_attr(miri, ignore = "rayon's crossbeam-epoch trips Stacked Borrows")]
    fn ranges_cover_the_work_exactly_once() {
        let pool = ThreadPool::new(3).unwrap();
        for total in [0, 1, 2, 7, 100, 9_999, 100_000, 1_000_003] {
            for cost in [0, 1, 50, 10_000] {
                let seen = ranges(&pool, total, cost);
                let mut next = 0;
                for r in &seen {
                    assert_eq!(r.start, next, "total {total} cost {cost}: {seen:?}");
                    assert!(r.end > r.start);
                    next = r.end;
                }
                assert_eq!(next, total);
                assert!(seen.len() <= 3 * BLOCKS_PER_THREAD);
            }
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "rayon's crossbeam-epoch trips Stacked Borrows")]
    fn small_work_runs_inline_in_one_range() {
        let pool = ThreadPool::new(4).unwrap();
        assert_eq!(ranges(&pool, 1, 1_000_000), vec![0..1]);
        assert_eq!(ranges(&pool, 19_999, 1), vec![0..19_999]);
        assert_eq!(pool.num_blocks(1_000_000, 1), 16);
        let caller = std::thread::current().id();
        pool.shard(10, 1, |_| assert_eq!(std::thread::current().id(), caller));
        assert_eq!(ThreadPool::single().num_blocks(1 << 30, 100), 1);
    }

    #[test]
    fn zero_threads_is_an_error() {
        let err = ThreadPool::new(0).unwrap_err();
        assert_eq!(err.code(), crate::Code::InvalidArgument);
    }
}
