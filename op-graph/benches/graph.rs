//! The graph runner against its same-run baselines (issue 13, section 6).
//!
//! - **Per-node overhead**: a chain of 1,000 nodes on a one-element float
//!   tensor (`AddV2` of the value and a constant 1 when that op is
//!   registered, else `Example`, which doubles), run as a plan
//!   (`chain/graph`) against the same 1,000 prepared kernels called one
//!   after another with `PreparedOp::run_into` (`chain/prepared_eager`).
//!   Targets: at most 150 ns per node, at most 1.5x the baseline.
//! - **Branches**: two independent 512x512 float matrix products (`MatMul`
//!   when registered, else the tests' `TestMatMul`, ndarray's product),
//!   fed one input and fetched both, with one intra-op thread, on 1
//!   (`branches/one_thread`) and 2 (`branches/two_threads`) inter-op
//!   threads. Target: two threads at least 1.7x faster. What the machine
//!   itself allows: the same two products on two plain threads
//!   (`branches/two_std_threads`).
//! - **Memory**: a chain of 20 elementwise nodes (`Example`) on 1e7 floats
//!   (40 MB), fed a tensor handed over (`elementwise/graph`), against 20
//!   doublings from one preallocated buffer into another
//!   (`elementwise/preallocated_copies`, the same arithmetic and memory
//!   traffic without a runtime). Target: at least 0.8x as fast. Before
//!   the benchmarks run, the peak of the allocator's live bytes in one
//!   such run is printed (target: at most 3 buffers of 40 MB).
//! - **Nodes that wait**: a run of a plan that enqueues a constant in a FIFO
//!   queue and dequeues it (`queue/graph`: both nodes may block, so each
//!   runs on a thread of its own), against the same enqueue and dequeue
//!   called eagerly (`queue/eager`). No target: the difference is what the
//!   two threads started per run cost.
//!
//! Run with:
//!
//! ```text
//! cargo bench -p op-graph --bench graph
//! ```

use std::sync::Arc;

use divan::{Bencher, black_box, black_box_drop};
use op_core::allocator::{AllocatorConfig, HostAllocator};
use op_core::threads::ThreadPool;
use op_core::{AttrValue, DType, InputTypes, PreparedOp, Registry, Runtime, Tensor};
use op_graph::{Graph, GraphBuilder, NewNode, Output, Plan, Session};
use op_kernels::example::{Example, times_two_into};

#[path = "../tests/common/mod.rs"]
mod common;

fn main() {
    common::link();
    // Only on a full run: a run filtered to one benchmark (to profile it)
    // skips the 40 MB runs.
    if std::env::args().skip(1).all(|arg| arg.starts_with('-')) {
        report_memory();
    }
    divan::main();
}

/// A runtime with one intra-op thread (and, if given, its own allocator):
/// the figures then measure the graph, not the kernels' sharding.
fn runtime(allocator: Option<HostAllocator>) -> Arc<Runtime> {
    let runtime = Runtime::new().with_threads(Arc::new(ThreadPool::single()));
    Arc::new(match allocator {
        Some(allocator) => runtime.with_allocator(allocator),
        None => runtime,
    })
}

fn session(graph: Graph, runtime: Arc<Runtime>, threads: usize) -> Session {
    Session::builder(graph)
        .runtime(runtime)
        .inter_op_threads(threads)
        .build()
        .expect("a session")
}

// ---- Per-node overhead ----

const CHAIN: usize = 1000;

/// The chain of `CHAIN` nodes, its placeholder `x` and its last output.
fn chain() -> (Graph, Output, Output) {
    let add = Registry::global().get("AddV2").is_some();
    let mut g = Graph::new();
    let x = g
        .add(
            NewNode::new("Placeholder")
                .name("x")
                .attr("dtype", DType::F32)
                .attr("shape", op_core::ShapeValue::from_sizes(&[1])),
        )
        .expect("x")
        .output(0);
    let one = g
        .add(
            NewNode::new("Const")
                .name("one")
                .attr(
                    "value",
                    Tensor::from_vec([1], vec![1.0f32])
                        .expect("one")
                        .to_tensor_value()
                        .expect("one"),
                )
                .attr("dtype", DType::F32),
        )
        .expect("one")
        .output(0);
    let mut y = x;
    for _ in 0..CHAIN {
        let node = match add {
            true => NewNode::new("AddV2").input(y).input(one),
            false => NewNode::new("Example").input(y),
        };
        y = g.add(node).expect("a chain node").output(0);
    }
    (g, x, y)
}

struct ChainBench {
    plan: Arc<Plan>,
    /// The chain's kernels, prepared as the plan's, in order, with the
    /// constant input of each (for `AddV2`).
    prepared: Vec<(Arc<PreparedOp>, Option<Tensor>)>,
}

fn chain_bench() -> ChainBench {
    let (graph, x, y) = chain();
    let runtime = runtime(None);
    let one = Tensor::from_vec([1], vec![1.0f32]).expect("one");
    let prepared = graph
        .nodes()
        .iter()
        .filter(|n| n.op() != "Placeholder" && n.op() != "Const")
        .map(|n| {
            let inputs: Vec<InputTypes> = n
                .instance()
                .input_types()
                .iter()
                .map(|d| (*d).into())
                .collect();
            let attrs: Vec<(&str, AttrValue)> = n
                .attrs()
                .iter()
                .map(|(k, v)| (k.as_str(), v.clone()))
                .collect();
            let op = runtime
                .prepare_named(n.op(), &inputs, &attrs, n.name())
                .expect("a chain kernel");
            (op, (n.inputs().len() == 2).then(|| one.clone()))
        })
        .collect();
    let session = session(graph, runtime, 1);
    let plan = session
        .plan()
        .feed(x)
        .fetch(y)
        .build()
        .expect("the chain's plan");
    ChainBench { plan, prepared }
}

fn chain_input() -> Tensor {
    Tensor::from_vec([1], vec![0.5f32]).expect("an input")
}

#[divan::bench_group(sample_count = 200)]
mod chain {
    use super::*;

    /// The plan: 1,000 nodes per run.
    #[divan::bench]
    fn graph(bencher: Bencher) {
        let bench = chain_bench();
        bencher
            .counter(divan::counter::ItemsCount::new(CHAIN))
            .bench_local(|| black_box_drop(bench.plan.run([chain_input()]).expect("a run")));
    }

    /// The same kernels, called one after another on caller-owned slots.
    #[divan::bench]
    fn prepared_eager(bencher: Bencher) {
        let bench = chain_bench();
        bencher
            .counter(divan::counter::ItemsCount::new(CHAIN))
            .bench_local(|| {
                let mut y = chain_input();
                for (op, constant) in &bench.prepared {
                    let mut outputs = [None];
                    match constant {
                        Some(c) => op.run_into(&mut [y, c.clone()], &mut outputs),
                        None => op.run_into(&mut [y], &mut outputs),
                    }
                    .expect("a call");
                    let [out] = outputs;
                    y = out.expect("an output");
                }
                black_box_drop(y);
            });
    }
}

// ---- Branches ----

const SIDE: usize = 512;

fn branches_plan(threads: usize) -> (Arc<Plan>, Tensor) {
    let b = GraphBuilder::new();
    let x = b.placeholder("x", DType::F32, [SIDE, SIDE]).expect("x");
    let matrix = |seed: usize| {
        let values = (0..SIDE * SIDE)
            .map(|i| ((i * seed) % 13) as f32 / 13.0)
            .collect();
        Tensor::from_vec([SIDE, SIDE], values).expect("a matrix")
    };
    let mut products = Vec::new();
    for seed in [3, 7] {
        let w = b.constant(matrix(seed)).expect("w");
        let product = match Registry::global().get("MatMul") {
            Some(_) => {
                let id = b
                    .graph_mut()
                    .add(NewNode::new("MatMul").input(x).input(w))
                    .expect("MatMul");
                id.output(0)
            }
            None => common::TestMatMul::call_with(x, w)
                .run_on(&b)
                .expect("TestMatMul"),
        };
        products.push(product);
    }
    let session = session(b.into_graph(), runtime(None), threads);
    let plan = session
        .plan()
        .feed(x)
        .fetch(products[0])
        .fetch(products[1])
        .build()
        .expect("the branches' plan");
    assert_eq!(plan.is_parallel(), threads > 1);
    (plan, matrix(5))
}

#[divan::bench_group(sample_count = 30)]
mod branches {
    use super::*;

    #[divan::bench]
    fn one_thread(bencher: Bencher) {
        let (plan, x) = branches_plan(1);
        bencher.bench_local(|| black_box_drop(plan.run([black_box(&x).clone()]).expect("a run")));
    }

    #[divan::bench]
    fn two_threads(bencher: Bencher) {
        let (plan, x) = branches_plan(2);
        bencher.bench_local(|| black_box_drop(plan.run([black_box(&x).clone()]).expect("a run")));
    }

    /// What the machine allows: the two products on two threads of
    /// their own, no graph (`std::thread::scope`).
    #[divan::bench]
    fn two_std_threads(bencher: Bencher) {
        let (_, x) = branches_plan(1);
        let runtime = runtime(None);
        let (op, attrs) = match Registry::global().get("MatMul") {
            Some(_) => ("MatMul", Vec::new()),
            None => ("TestMatMul", Vec::new()),
        };
        let product = runtime
            .prepare(op, &[DType::F32.into(), DType::F32.into()], &attrs)
            .expect("a product");
        let w = [x.clone(), x.clone()];
        bencher.bench_local(|| {
            std::thread::scope(|scope| {
                for w in &w {
                    let (product, x) = (&product, &x);
                    scope.spawn(move || black_box_drop(product.run(vec![x.clone(), w.clone()])));
                }
            });
        });
    }
}

// ---- Memory ----

const ELEMENTS: usize = 10_000_000;
const STEPS: usize = 20;

fn elementwise_plan(runtime: Arc<Runtime>) -> Arc<Plan> {
    let b = GraphBuilder::new();
    let x = b.placeholder("x", DType::F32, [ELEMENTS]).expect("x");
    let mut y = x;
    for _ in 0..STEPS {
        y = Example::call_with(y).run_on(&b).expect("Example");
    }
    let session = session(b.into_graph(), runtime, 1);
    session
        .plan()
        .feed(x)
        .fetch(y)
        .build()
        .expect("the chain's plan")
}

fn big_input() -> Tensor {
    Tensor::from_vec([ELEMENTS], vec![1.0f32; ELEMENTS]).expect("a 40 MB input")
}

/// Prints the allocator's peak live bytes over one run, with the input
/// handed over and with the input kept by the caller.
fn report_memory() {
    let allocator = HostAllocator::new(AllocatorConfig::default());
    let plan = elementwise_plan(runtime(Some(allocator.clone())));
    let buffer = (4 * ELEMENTS) as f64;
    drop(plan.run([big_input()]).expect("a run"));
    let handed_over = allocator.stats().peak_bytes_in_use;
    allocator.reset_peak();
    let kept = big_input();
    drop(plan.run([kept.clone()]).expect("a run"));
    let shared = allocator.stats().peak_bytes_in_use;
    eprintln!(
        "elementwise chain of {STEPS} on 1e7 floats: peak allocator bytes in use {handed_over} \
         ({:.2} buffers of 40 MB) with the input handed over, {shared} ({:.2} buffers) with the \
         input kept by the caller",
        handed_over as f64 / buffer,
        shared as f64 / buffer
    );
}

#[divan::bench_group(sample_count = 20)]
mod elementwise {
    use super::*;

    /// 20 nodes in place in the fed buffer.
    #[divan::bench]
    fn graph(bencher: Bencher) {
        let plan = elementwise_plan(runtime(None));
        bencher
            .with_inputs(big_input)
            .bench_local_values(|x| plan.run([x]).expect("a run"));
    }

    /// 20 doublings, alternating between two preallocated buffers.
    #[divan::bench]
    fn preallocated_copies(bencher: Bencher) {
        let mut a = vec![1.0f32; ELEMENTS];
        let mut b = vec![0.0f32; ELEMENTS];
        bencher.bench_local(|| {
            for _ in 0..STEPS / 2 {
                times_two_into(black_box(&a), &mut b);
                times_two_into(black_box(&b), &mut a);
            }
        });
    }
}

// ---- Nodes that wait ----

/// A plan that enqueues a constant in the node `q`'s queue and dequeues
/// it, in one run on one inter-op thread.
fn queue_plan() -> Arc<Plan> {
    let b = GraphBuilder::new();
    let q = op_kernels::queue::FifoQueueV2::call_with(vec![DType::F32])
        .run_on(&b)
        .expect("q");
    let one = b.constant(Tensor::scalar(1.0f32)).expect("one");
    op_kernels::queue::QueueEnqueueV2::call_with(q, [one])
        .node_name("enqueue")
        .run_on(&b)
        .expect("enqueue");
    let value = op_kernels::queue::QueueDequeueV2::call_with(q, vec![DType::F32])
        .run_on(&b)
        .expect("dequeue");
    let session = session(b.into_graph(), runtime(None), 1);
    session
        .plan()
        .fetch(value[0])
        .target("enqueue")
        .build()
        .expect("the queue's plan")
}

#[divan::bench_group(sample_count = 100)]
mod queue {
    use super::*;

    #[divan::bench]
    fn graph(bencher: Bencher) {
        let plan = queue_plan();
        bencher.bench_local(|| black_box_drop(plan.run([]).expect("a run")));
    }

    #[divan::bench]
    fn eager(bencher: Bencher) {
        let queue = op_kernels::queue::FifoQueueHandle::new(&[DType::F32]).expect("a queue");
        let one = Tensor::scalar(1.0f32);
        bencher.bench_local(|| {
            queue.enqueue([black_box(&one).clone()]).expect("enqueue");
            black_box_drop(queue.dequeue().expect("dequeue"))
        });
    }
}
