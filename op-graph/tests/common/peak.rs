//! The peak of live heap bytes while a closure runs: a global allocator
//! that, on a thread that has measuring on, adds each allocation's size and
//! takes off each release's, keeping the highest total. A test or bench
//! binary installs it with
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOCATOR: common::peak::Tracking = common::peak::Tracking;
//! ```
//!
//! and measures with [`peak_bytes`]. Only the measuring thread counts, so
//! other tests of the binary running meanwhile do not add to the figure;
//! the code measured must do its work on that thread.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The system allocator, tracking live bytes on measuring threads.
pub struct Tracking;

thread_local! {
    static MEASURING: Cell<bool> = const { Cell::new(false) };
    /// Live bytes allocated since measuring began (negative when more was
    /// released than allocated: memory from before).
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn track(delta: isize) {
    // `try_with`: the thread's locals may be gone while it exits.
    let _ = MEASURING.try_with(|on| {
        if on.get() {
            let live = LIVE.with(|live| {
                live.set(live.get() + delta);
                live.get()
            });
            PEAK.with(|peak| peak.set(peak.get().max(live)));
        }
    });
}

fn size(bytes: usize) -> isize {
    isize::try_from(bytes).unwrap_or(isize::MAX)
}

// SAFETY: every method forwards to `System` with the caller's arguments,
// which the caller guarantees as `GlobalAlloc` requires; the counts are in
// const-initialized thread-locals, so tracking allocates nothing.
unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        track(size(layout.size()));
        // SAFETY: forwarded, see the impl.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        track(size(layout.size()));
        // SAFETY: forwarded, see the impl.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // Counted as a new block before the old one goes, as a move would be.
        track(size(new_size));
        track(-size(layout.size()));
        // SAFETY: forwarded, see the impl.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        track(-size(layout.size()));
        // SAFETY: forwarded, see the impl.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// What `f` returns, and the most heap bytes it held at once on this thread
/// (with [`Tracking`] as the binary's global allocator; 0 otherwise),
/// counting what it returns.
pub fn peak_bytes<T>(f: impl FnOnce() -> T) -> (T, usize) {
    LIVE.with(|live| live.set(0));
    PEAK.with(|peak| peak.set(0));
    MEASURING.with(|on| on.set(true));
    let value = f();
    MEASURING.with(|on| on.set(false));
    let peak = PEAK.with(Cell::get);
    (value, usize::try_from(peak).unwrap_or(0))
}
