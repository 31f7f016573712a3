//! A run allocates per run, never per node: a plan of 100 nodes and one
//! of 400 make the same number of allocations per run (the kernels here,
//! `Identity`, allocate nothing themselves).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use op_core::{DType, Runtime, Tensor};
use op_graph::{GraphBuilder, Plan, Session};
use op_kernels::identity::Identity;

/// The system allocator, counting allocations.
struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// A plan of `n` `Identity` nodes after a placeholder, on a runtime that
/// does not check output shapes (a check that allocates, on in debug
/// builds).
fn identity_chain(n: usize) -> Arc<Plan> {
    let b = GraphBuilder::new();
    let x = b.placeholder("x", DType::F32, "[?]").unwrap();
    let mut y = x;
    for _ in 0..n {
        y = Identity::call_with(y).run_on(&b).unwrap();
    }
    let runtime = Arc::new(Runtime::new().check_shapes(false));
    let session = Session::builder(b.into_graph())
        .runtime(runtime)
        .inter_op_threads(1)
        .build()
        .unwrap();
    session.plan().feed(x).fetch(y).build().unwrap()
}

/// Allocations of one run of `plan` (after a first run, which makes the
/// run state).
///
/// The counter is process-wide, so another thread of the test harness can
/// add to one run's count (CI saw 4 for one run where the others made 1).
/// Such noise only ever adds, while an allocation per node would show in
/// every run, so the fewest over several runs is the figure.
fn allocations_per_run(plan: &Plan) -> usize {
    let input = Tensor::from_vec([4], vec![1.0f32; 4]).unwrap();
    plan.run([input.clone()]).unwrap();
    (0..8)
        .map(|_| {
            let before = ALLOCATIONS.load(Ordering::Relaxed);
            let out = plan.run([input.clone()]).unwrap();
            let count = ALLOCATIONS.load(Ordering::Relaxed) - before;
            assert_eq!(out[0], input);
            count
        })
        .min()
        .unwrap()
}

#[test]
fn a_run_allocates_nothing_per_node() {
    op_kernels::link();
    let short = allocations_per_run(&identity_chain(100));
    let long = allocations_per_run(&identity_chain(400));
    assert_eq!(short, long, "allocations per run grow with the nodes");
    assert!(short <= 2, "{short} allocations per run");
}
