//! The counting global allocator of the zero-allocation tests: the system
//! allocator, counting the allocations (and reallocations) that threads
//! make while they have counting on. A test binary installs it with
//!
//! ```ignore
//! mod counting;
//! #[global_allocator]
//! static ALLOCATOR: counting::Counting = counting::Counting;
//! ```
//!
//! and measures a closure with [`allocations`].

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The system allocator, counting.
pub struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<usize> = const { Cell::new(0) };
}

fn count_one() {
    // `try_with`: the thread's locals may be gone while it exits.
    let _ = COUNTING.try_with(|on| {
        if on.get() {
            let _ = COUNT.try_with(|n| n.set(n.get() + 1));
        }
    });
}

// SAFETY: every method forwards to `System` with the caller's arguments,
// which the caller guarantees as `GlobalAlloc` requires; the count is in
// const-initialized thread-locals, so counting allocates nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: forwarded, see the impl.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: forwarded, see the impl.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        // SAFETY: forwarded, see the impl.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded, see the impl.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// How many allocations `f` makes on this thread (with [`Counting`] as the
/// binary's global allocator; 0 otherwise).
pub fn allocations(f: impl FnOnce()) -> usize {
    COUNT.with(|n| n.set(0));
    COUNTING.with(|on| on.set(true));
    f();
    COUNTING.with(|on| on.set(false));
    COUNT.with(|n| n.get())
}
