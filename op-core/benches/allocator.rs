//! What a small tensor buffer costs: 64 bytes (16 floats), 64-byte
//! aligned, taken and given back, from the [`HostAllocator`] with each
//! thread's small-buffer lists (the default), from one with none
//! (`thread_cache_bytes(0)`: every buffer goes to the system), and from the
//! system allocator directly (`std::alloc`, the same layout) in the same
//! run.
//!
//! Each iteration takes `HELD` (100) buffers and then gives them all back,
//! as a gradient tape that keeps a step's outputs does (one at a time is
//! the eager loop without a tape). Divan reports the time per iteration;
//! divide by 100 for one buffer.
//!
//! Run with:
//!
//! ```text
//! cargo bench -p op-core --bench allocator
//! ```

use std::alloc::Layout;

use divan::{Bencher, black_box};
use op_core::allocator::{ALIGNMENT, AllocatorConfig, Block, HostAllocator};

fn main() {
    divan::main();
}

/// Buffers taken before any is given back.
const HELD: usize = 100;

/// 16 floats.
const BYTES: usize = 64;

/// Samples per benchmark, more than divan's default, to steady the
/// medians on a noisy machine.
const SAMPLES: u32 = 500;

/// Takes `HELD` blocks from `alloc` (one at a time when `at_once` is
/// false), then gives them back.
fn take_and_give_back(alloc: &HostAllocator, at_once: bool, held: &mut Vec<Block>) {
    for _ in 0..HELD {
        let block = alloc
            .allocate_for_overwrite(black_box(BYTES))
            .expect("64 bytes");
        if at_once {
            held.push(block);
        } else {
            drop(black_box(block));
        }
    }
    held.clear();
}

/// The default allocator: each thread keeps the small buffers it frees.
#[divan::bench(sample_count = SAMPLES, args = [false, true])]
fn thread_lists(bencher: Bencher, at_once: bool) {
    let alloc = HostAllocator::new(AllocatorConfig::default());
    let mut held = Vec::with_capacity(HELD);
    bencher.bench_local(|| take_and_give_back(&alloc, at_once, &mut held));
}

/// No thread lists: every small buffer comes from the system.
#[divan::bench(sample_count = SAMPLES, args = [false, true])]
fn no_thread_lists(bencher: Bencher, at_once: bool) {
    let alloc = HostAllocator::new(AllocatorConfig::default().thread_cache_bytes(0));
    let mut held = Vec::with_capacity(HELD);
    bencher.bench_local(|| take_and_give_back(&alloc, at_once, &mut held));
}

/// The system allocator alone, zeroing as a fresh block is: the floor
/// without any bookkeeping.
#[divan::bench(sample_count = SAMPLES, args = [false, true])]
fn system(bencher: Bencher, at_once: bool) {
    let layout = Layout::from_size_align(BYTES, ALIGNMENT).expect("a layout");
    let mut held: Vec<*mut u8> = Vec::with_capacity(HELD);
    bencher.bench_local(|| {
        for _ in 0..HELD {
            // SAFETY: the layout's size is nonzero.
            let ptr = unsafe { std::alloc::alloc_zeroed(black_box(layout)) };
            assert!(!ptr.is_null());
            if at_once {
                held.push(ptr);
            } else {
                // SAFETY: allocated just above with `layout`.
                unsafe { std::alloc::dealloc(black_box(ptr), layout) };
            }
        }
        for ptr in held.drain(..) {
            // SAFETY: each was allocated above with `layout`, once.
            unsafe { std::alloc::dealloc(ptr, layout) };
        }
    });
}
