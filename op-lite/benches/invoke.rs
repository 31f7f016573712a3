//! The interpreter's per-node overhead: `invoke` on a chain of 1,000 tiny
//! ADD nodes (`t[k+1] = t[k] + c`, 4 floats each), against a baseline in
//! the same run: the same 1,000 additions as direct calls of the same
//! function (`add_into`, what the ADD kernel's invoke calls) over buffers
//! laid out as the arena lays them out (two intermediates, alternating).
//!
//! ```sh
//! cargo bench -p op-lite --bench invoke
//! ```
//!
//! divan prints both (per run of 1,000 nodes, and items per second, one
//! item a node); the last lines give ns per node for each, the overhead
//! per node, and the ratio, from the medians of a plain timing loop, and
//! the same for `invoke_profiled` (what timing each node costs).

#[path = "../tests/common/mod.rs"]
mod common;

use std::hint::black_box;
use std::time::Instant;

use common::{add_chain, add_into, resolver};
use divan::Bencher;
use divan::counter::ItemsCount;
use op_lite::Interpreter;
use op_lite::interpreter::Profile;

const NODES: usize = 1000;
const LEN: usize = 4;

fn main() {
    divan::main();
    // `cargo test --benches` runs each benchmark once, as a test; the
    // summary is for real runs.
    if !std::env::args().any(|arg| arg == "--test") {
        summary();
    }
}

fn ready_interpreter() -> Interpreter {
    let mut interpreter = Interpreter::new(&add_chain(NODES, LEN), &resolver()).unwrap();
    interpreter.allocate_tensors().unwrap();
    interpreter.set_input(0, &[0.5f32; LEN]).unwrap();
    interpreter
}

/// The baseline's buffers: input, constant, two intermediates, output.
struct Buffers {
    x: Vec<f32>,
    c: Vec<f32>,
    t: [Vec<f32>; 2],
    y: Vec<f32>,
}

impl Buffers {
    fn new() -> Buffers {
        Buffers {
            x: vec![0.5; LEN],
            c: vec![1.0; LEN],
            t: [vec![0.0; LEN], vec![0.0; LEN]],
            y: vec![0.0; LEN],
        }
    }

    /// The 1,000 additions, one direct call each.
    fn run(&mut self) {
        let [t0, t1] = &mut self.t;
        add_into(black_box(&self.x), &self.c, t0);
        for k in 1..NODES - 1 {
            if k % 2 == 1 {
                add_into(black_box(t0), &self.c, t1);
            } else {
                add_into(black_box(t1), &self.c, t0);
            }
        }
        let last = if NODES.is_multiple_of(2) { &*t0 } else { &*t1 };
        add_into(black_box(last), &self.c, &mut self.y);
    }
}

#[divan::bench]
fn interpreter_invoke(bencher: Bencher) {
    let mut interpreter = ready_interpreter();
    bencher
        .counter(ItemsCount::new(NODES))
        .bench_local(|| interpreter.invoke().unwrap());
    assert_eq!(
        interpreter.output::<f32>(0).unwrap(),
        [NODES as f32 + 0.5; LEN]
    );
}

#[divan::bench]
fn direct_calls(bencher: Bencher) {
    let mut buffers = Buffers::new();
    bencher
        .counter(ItemsCount::new(NODES))
        .bench_local(|| buffers.run());
    assert_eq!(buffers.y, [NODES as f32 + 0.5; LEN]);
}

/// The median time of `f` over `samples` samples of `iters` calls, in
/// nanoseconds per call.
fn median_ns(samples: usize, iters: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..samples)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..iters {
                f();
            }
            start.elapsed().as_nanos() as f64 / iters as f64
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[samples / 2]
}

fn summary() {
    let mut interpreter = ready_interpreter();
    let mut buffers = Buffers::new();
    let invoke = median_ns(101, 200, || interpreter.invoke().unwrap()) / NODES as f64;
    let direct = median_ns(101, 200, || buffers.run()) / NODES as f64;
    let mut profile = Profile::new(&interpreter);
    let profiled = median_ns(101, 200, || {
        interpreter.invoke_profiled(&mut profile).unwrap();
    }) / NODES as f64;
    println!(
        "invoke: {invoke:.2} ns/node; direct calls: {direct:.2} ns/node; \
         overhead: {:.2} ns/node; ratio invoke/direct: {:.2}; \
         invoke_profiled (two clock reads a node): {profiled:.2} ns/node",
        invoke - direct,
        invoke / direct
    );
}
