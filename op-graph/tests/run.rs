//! Running graphs: feeds, fetches and targets, pruning, control edges and
//! stateful nodes, errors, parallel branches, and buffers: reused along
//! chains, freed after their last consumer.

use std::sync::Arc;

use op_core::allocator::{AllocatorConfig, HostAllocator};
use op_core::threads::ThreadPool;
use op_core::{Code, DType, Runtime, ShapeValue, Tensor};
use op_graph::{Graph, GraphBuilder, NewNode, Output, Session};
use op_kernels::constant::PlaceholderWithDefault;
use op_kernels::example::Example;
use op_kernels::identity::{Identity, IdentityN, NoOp};
use op_kernels::variable::{AssignVariableOp, ReadVariableOp, VarHandleOp};

mod common;
use common::{TestCopyDouble, TestCounted, TestFail, TestMatMul, TestRendezvous, assert_contains};

fn floats(values: &[f32]) -> Tensor {
    Tensor::from_vec([values.len()], values.to_vec()).unwrap()
}

fn session(graph: Graph, threads: usize) -> Session {
    Session::builder(graph)
        .inter_op_threads(threads)
        .build()
        .unwrap()
}

/// `x` (a `[?]` float placeholder) doubled `n` times; the last node is
/// named `y`.
fn chain(n: usize) -> (Graph, Output, Output) {
    let b = GraphBuilder::new();
    let x = b.placeholder("x", DType::F32, "[?]").unwrap();
    let mut y = x;
    for i in 0..n {
        let call = Example::call_with(y);
        y = if i + 1 == n {
            call.node_name("y").run_on(&b)
        } else {
            call.run_on(&b)
        }
        .unwrap();
    }
    (b.into_graph(), x, y)
}

#[test]
fn the_same_wrapper_gives_the_same_numbers_eagerly_and_in_a_graph() {
    common::link();
    let x = Tensor::from_vec([2, 2], vec![1.0f32, -2.0, 3.5, 0.25]).unwrap();
    let w = Tensor::from_vec([2, 1], vec![0.5f32, 4.0]).unwrap();
    let eager = Example::call(TestMatMul::call(&x, &w).run().unwrap())
        .run()
        .unwrap();

    let b = GraphBuilder::new();
    let xs = b.placeholder("x", DType::F32, "[?,2]").unwrap();
    let ws = b.constant(&w).unwrap();
    let ys = Example::call_with(TestMatMul::call_with(xs, ws).run_on(&b).unwrap())
        .run_on(&b)
        .unwrap();
    let session = session(b.into_graph(), 1);
    let graph = session.runner().feed(xs, x).fetch(ys).run().unwrap();
    assert_eq!(graph, [eager]);
    assert_eq!(graph[0].as_slice::<f32>().unwrap(), [-15.0, 5.5]);
}

#[test]
fn fetches_by_name_and_index_come_back_in_the_order_asked() {
    common::link();
    let b = GraphBuilder::new();
    let a = b.placeholder("a", DType::I32, "[]").unwrap();
    let f = b.placeholder("f", DType::F32, "[2]").unwrap();
    IdentityN::call_with([f, a]).run_on(&b).unwrap();
    let s = session(b.into_graph(), 1);
    let out = s
        .runner()
        .feed("a:0", Tensor::scalar(7i32))
        .feed("f", floats(&[1.0, 2.0]))
        .fetch("IdentityN:1")
        .fetch("IdentityN")
        .fetch("a")
        .fetch("IdentityN:1")
        .run()
        .unwrap();
    assert_eq!(out[0], Tensor::scalar(7i32));
    assert_eq!(out[1], floats(&[1.0, 2.0]));
    assert_eq!(out[2], Tensor::scalar(7i32));
    assert_eq!(out[3], Tensor::scalar(7i32));
}

#[test]
fn a_plan_is_made_once_per_kind_of_run_and_runs_many_times() {
    common::link();
    let (graph, x, y) = chain(3);
    let s = session(graph, 1);
    let plan = s.plan().feed(x).fetch(y).build().unwrap();
    let again = s.plan().feed("x").fetch("y").build().unwrap();
    assert!(Arc::ptr_eq(&plan, &again));
    let names: Vec<String> = plan
        .nodes()
        .map(|n| s.graph().node(n).unwrap().name().to_owned())
        .collect();
    assert_eq!(
        names,
        ["Example", "Example_1", "y"],
        "the fed placeholder does not run"
    );
    assert_eq!(
        plan.feeds().map(|t| t.to_string()).collect::<Vec<_>>(),
        ["x"]
    );
    assert_eq!(
        plan.fetches().map(|t| t.to_string()).collect::<Vec<_>>(),
        ["y"]
    );
    for i in 0..10 {
        let out = plan.run([floats(&[i as f32])]).unwrap();
        assert_eq!(out[0].as_slice::<f32>().unwrap(), [8.0 * i as f32]);
    }
}

#[test]
fn nodes_that_nothing_needs_are_pruned_and_their_failures_do_not_matter() {
    common::link();
    let b = GraphBuilder::new();
    let x = b.placeholder("x", DType::F32, "[?]").unwrap();
    let bad = TestFail::call_with(x).node_name("bad").run_on(&b).unwrap();
    let good = Example::call_with(x).node_name("good").run_on(&b).unwrap();
    Example::call_with(bad)
        .node_name("after_bad")
        .run_on(&b)
        .unwrap();
    let s = session(b.into_graph(), 2);
    let plan = s.plan().feed(x).fetch(good).build().unwrap();
    assert_eq!(plan.nodes().count(), 1);
    assert_eq!(plan.run([floats(&[1.5])]).unwrap()[0], floats(&[3.0]));

    // Fetched, the failing branch is an error naming its node, with the
    // kernel's own error and code.
    let err = s
        .runner()
        .feed(x, floats(&[1.0]))
        .fetch("after_bad")
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert_eq!(
        err.message(),
        "op TestFail (node 'bad'): this op always fails"
    );
    assert_contains(&err, &["in node 'bad' (op TestFail) of the graph"]);
}

#[test]
fn a_fed_output_overrides_its_producer_which_then_does_not_run() {
    common::link();
    let b = GraphBuilder::new();
    let x = b.placeholder("x", DType::F32, "[?]").unwrap();
    let bad = TestFail::call_with(x).node_name("bad").run_on(&b).unwrap();
    let y = Example::call_with(bad).run_on(&b).unwrap();
    let s = session(b.into_graph(), 1);
    let out = s
        .runner()
        .feed("bad", floats(&[2.0]))
        .fetch(y)
        .fetch(bad)
        .run()
        .unwrap();
    assert_eq!(out, [floats(&[4.0]), floats(&[2.0])]);
}

#[test]
fn an_unfed_placeholder_is_tensorflows_error_naming_it() {
    common::link();
    let (graph, _, y) = chain(2);
    let s = session(graph, 1);
    let err = s.runner().fetch(y).run().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &[
            "You must feed a value for placeholder tensor 'x' with dtype float and shape [?]",
            "in node 'x' (op Placeholder) of the graph",
        ],
    );
}

#[test]
fn a_placeholder_with_default_gives_its_default_unless_fed() {
    common::link();
    let b = GraphBuilder::new();
    let d = b.constant(floats(&[1.0, 2.0])).unwrap();
    let p = PlaceholderWithDefault::call_with(d, ShapeValue::from_sizes(&[-1]))
        .node_name("p")
        .run_on(&b)
        .unwrap();
    let y = Example::call_with(p).run_on(&b).unwrap();
    let s = session(b.into_graph(), 1);
    assert_eq!(s.runner().fetch(y).run().unwrap(), [floats(&[2.0, 4.0])]);
    let fed = s
        .runner()
        .feed(p, floats(&[5.0, 6.0, 7.0]))
        .fetch(y)
        .run()
        .unwrap();
    assert_eq!(fed, [floats(&[10.0, 12.0, 14.0])]);
}

#[test]
fn feeds_of_the_wrong_dtype_or_shape_are_errors_naming_the_feed() {
    common::link();
    let b = GraphBuilder::new();
    let x = b.placeholder("x", DType::F32, "[?,3]").unwrap();
    let y = Example::call_with(x).run_on(&b).unwrap();
    let s = session(b.into_graph(), 1);
    let run = |t: Tensor| s.runner().feed("x", t).fetch(y).run().unwrap_err();
    let err = run(Tensor::from_vec([1, 3], vec![1i32, 2, 3]).unwrap());
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &[
            "feed 0 ('x') must be a float tensor of shape [?,3], but a int32 tensor of shape [1,3] was given",
        ],
    );
    let err = run(Tensor::from_vec([3], vec![1.0f32, 2.0, 3.0]).unwrap());
    assert_contains(
        &err,
        &["of shape [?,3], but a float tensor of shape [3] was given"],
    );
    let err = run(Tensor::from_vec([1, 2], vec![1.0f32, 2.0]).unwrap());
    assert_contains(&err, &["[1,2] was given"]);
    // The plan stays usable.
    let ok = s
        .runner()
        .feed(
            "x",
            Tensor::from_vec([1, 3], vec![1.0f32, 2.0, 3.0]).unwrap(),
        )
        .fetch(y)
        .run()
        .unwrap();
    assert_eq!(ok[0].as_slice::<f32>().unwrap(), [2.0, 4.0, 6.0]);
}

#[test]
fn unknown_fetches_feeds_and_targets_are_typed_errors() {
    common::link();
    let (graph, x, y) = chain(1);
    let s = session(graph, 1);
    let err = s.runner().fetch("z").run().unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_contains(&err, &["no node named 'z'", "in fetch 'z'"]);
    let err = s.runner().fetch("y:1").run().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &[
            "node 'y' (op Example) has 1 output(s), so it has no output 1",
            "in fetch 'y:1'",
        ],
    );
    let err = s.runner().fetch("y:one").run().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    let err = s
        .runner()
        .feed("xx", floats(&[1.0]))
        .fetch(y)
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_contains(&err, &["did you mean 'x'?", "in feed 'xx'"]);
    let err = s.runner().target("init").run().unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_contains(&err, &["in target 'init'"]);
    let err = s
        .runner()
        .feed(x, floats(&[1.0]))
        .feed("x:0", floats(&[1.0]))
        .fetch(y)
        .run()
        .unwrap_err();
    assert_contains(&err, &["'x' is fed twice"]);
    // Ids of another graph.
    let (other, _, other_y) = chain(1);
    drop(other);
    let err = s.runner().fetch(other_y).run().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["belongs to graph #", "in fetch"]);
    // A plan takes exactly its feeds.
    let plan = s.plan().feed(x).fetch(y).build().unwrap();
    let err = plan.run([]).unwrap_err();
    assert_contains(&err, &["the plan takes 1 feed(s) ('x'), but 0 were given"]);
    let err = plan.run([floats(&[1.0]), floats(&[2.0])]).unwrap_err();
    assert_contains(&err, &["but 2 were given"]);
}

/// `v = 3` (`init`), `update: v = 2 * v` after a read; `read` reads `v`
/// after `update`.
fn variable_graph() -> Graph {
    let b = GraphBuilder::new();
    let v = VarHandleOp::call_with(DType::F32, ShapeValue::from_sizes(&[]))
        .shared_name("graph_test_v")
        .node_name("v")
        .run_on(&b)
        .unwrap();
    let three = b.constant(Tensor::scalar(3.0f32)).unwrap();
    AssignVariableOp::call_with(v, three)
        .node_name("init")
        .run_on(&b)
        .unwrap();
    let old = ReadVariableOp::call_with(v, DType::F32)
        .node_name("old")
        .run_on(&b)
        .unwrap();
    let doubled = Example::call_with(old).run_on(&b).unwrap();
    AssignVariableOp::call_with(v, doubled)
        .node_name("update")
        .run_on(&b)
        .unwrap();
    let update = b.last_node().unwrap();
    {
        let _after = b.control_dependencies(&[update]);
        ReadVariableOp::call_with(v, DType::F32)
            .node_name("read")
            .run_on(&b)
            .unwrap();
    }
    b.into_graph()
}

#[test]
fn control_edges_order_stateful_nodes_and_targets_run_once_per_run() {
    common::link();
    for threads in [1, 2] {
        // A runtime of its own: its resource manager holds this test's
        // variable.
        let s = Session::builder(variable_graph())
            .runtime(Arc::new(Runtime::new()))
            .inter_op_threads(threads)
            .build()
            .unwrap();
        s.runner().target("init").run().unwrap();
        for n in 1..=4 {
            // `read` runs after `update` (its control input), which runs
            // once per run.
            let out = s.runner().fetch("read").run().unwrap();
            assert_eq!(out[0].scalar_value::<f32>().unwrap(), 3.0 * 2f32.powi(n));
        }
        s.runner().target("update").run().unwrap();
        let out = s.runner().fetch("old").run().unwrap();
        assert_eq!(out[0].scalar_value::<f32>().unwrap(), 3.0 * 32.0);
    }
}

#[test]
fn a_noop_target_runs_its_control_inputs() {
    common::link();
    let b = GraphBuilder::with_graph(variable_graph());
    let init = b.graph().find_node("init").unwrap();
    {
        let _after = b.control_dependencies(&[init]);
        NoOp::call_with::<Output>()
            .node_name("group")
            .run_on(&b)
            .unwrap();
    }
    let s = Session::builder(b.into_graph())
        .runtime(Arc::new(Runtime::new()))
        .inter_op_threads(1)
        .build()
        .unwrap();
    let plan = s.plan().target("group").build().unwrap();
    assert_eq!(plan.nodes().count(), 4, "v, Const, init, group");
    plan.run([]).unwrap();
    assert_eq!(
        s.runner().fetch("old").run().unwrap()[0],
        Tensor::scalar(3.0f32)
    );
}

#[test]
fn independent_branches_run_in_parallel_with_deterministic_results() {
    common::link();
    let b = GraphBuilder::new();
    let x = b.placeholder("x", DType::F32, "[64,64]").unwrap();
    let mut outputs = Vec::new();
    for branch in 0..4 {
        let mut y = x;
        for _ in 0..3 {
            y = TestMatMul::call_with(y, x).run_on(&b).unwrap();
        }
        if branch % 2 == 0 {
            y = Example::call_with(y).run_on(&b).unwrap();
        }
        outputs.push(y);
    }
    let sum = IdentityN::call_with(outputs.clone()).run_on(&b).unwrap();
    let graph = Arc::new(b.into_graph());
    let values: Vec<f32> = (0..64 * 64)
        .map(|i| ((i % 17) as f32 - 8.0) / 16.0)
        .collect();
    let x_value = Tensor::from_vec([64, 64], values).unwrap();

    let one = session_over(&graph, 1);
    let expected = one
        .runner()
        .feed(x, x_value.clone())
        .fetch(sum[0])
        .fetch(sum[3])
        .fetch(outputs[1])
        .run()
        .unwrap();
    let two = session_over(&graph, 2);
    let plan = two
        .plan()
        .feed(x)
        .fetch(sum[0])
        .fetch(sum[3])
        .fetch(outputs[1])
        .build()
        .unwrap();
    assert!(plan.is_parallel());
    for _ in 0..100 {
        assert_eq!(plan.run([x_value.clone()]).unwrap(), expected);
    }
}

#[test]
fn two_independent_branches_run_at_the_same_time_on_two_inter_op_threads() {
    common::link();
    let b = GraphBuilder::new();
    let x = b.placeholder("x", DType::F32, "[1]").unwrap();
    let left = TestRendezvous::call_with(x, 2).run_on(&b).unwrap();
    let right = TestRendezvous::call_with(x, 2).run_on(&b).unwrap();
    let s = session(b.into_graph(), 2);
    common::ARRIVED.store(0, std::sync::atomic::Ordering::SeqCst);
    // Each branch waits until the other is under way: one thread running
    // them in turn would never finish the first.
    let out = s
        .runner()
        .feed(x, floats(&[1.0]))
        .fetch(left)
        .fetch(right)
        .run()
        .unwrap();
    assert_eq!(out, [floats(&[1.0]), floats(&[1.0])]);
}

fn session_over(graph: &Arc<Graph>, threads: usize) -> Session {
    Session::builder(graph.clone())
        .inter_op_threads(threads)
        .build()
        .unwrap()
}

#[test]
fn a_failing_branch_of_a_parallel_run_is_the_error_and_the_plan_stays_usable() {
    common::link();
    let b = GraphBuilder::new();
    let x = b.placeholder("x", DType::F32, "[?]").unwrap();
    let left = Example::call_with(x).run_on(&b).unwrap();
    let bad = TestFail::call_with(x).node_name("bad").run_on(&b).unwrap();
    let right = Example::call_with(bad).run_on(&b).unwrap();
    let s = session(b.into_graph(), 2);
    for _ in 0..20 {
        let err = s
            .runner()
            .feed(x, floats(&[1.0]))
            .fetch(left)
            .fetch(right)
            .run()
            .unwrap_err();
        assert_eq!(err.code(), Code::FailedPrecondition);
        assert_contains(&err, &["in node 'bad' (op TestFail) of the graph"]);
    }
    let ok = s
        .runner()
        .feed(x, floats(&[1.0]))
        .fetch(left)
        .run()
        .unwrap();
    assert_eq!(ok, [floats(&[2.0])]);
}

#[test]
fn a_plan_runs_from_many_threads_at_once() {
    common::link();
    let (graph, x, y) = chain(8);
    let s = session(graph, 2);
    let plan = s.plan().feed(x).fetch(y).build().unwrap();
    std::thread::scope(|scope| {
        for t in 0..4 {
            let plan = &plan;
            scope.spawn(move || {
                for i in 0..200 {
                    let v = (t * 1000 + i) as f32;
                    let out = plan.run([floats(&[v, -v])]).unwrap();
                    assert_eq!(out[0], floats(&[256.0 * v, -256.0 * v]));
                }
            });
        }
    });
}

#[test]
fn a_chain_of_in_place_kernels_reuses_the_fed_buffer_all_along() {
    common::link();
    let b = GraphBuilder::new();
    let x = b.placeholder("x", DType::F32, "[?]").unwrap();
    let mut y = x;
    for i in 0..6 {
        y = match i % 3 {
            1 => Identity::call_with(y).run_on(&b),
            _ => Example::call_with(y).run_on(&b),
        }
        .unwrap();
    }
    let graph = Arc::new(b.into_graph());
    for threads in [1, 2] {
        let s = session_over(&graph, threads);
        let value = Tensor::from_vec([1000], vec![1.0f32; 1000]).unwrap();
        let at = value.as_slice::<f32>().unwrap().as_ptr();
        let out = s.runner().feed(x, value).fetch(y).run().unwrap();
        assert_eq!(out[0].as_slice::<f32>().unwrap(), [16.0f32; 1000]);
        assert_eq!(
            out[0].as_slice::<f32>().unwrap().as_ptr(),
            at,
            "{threads} thread(s)"
        );
        assert!(out[0].is_unique());
    }
}

#[test]
fn a_value_read_by_two_nodes_is_not_changed_in_place_by_either() {
    common::link();
    let b = GraphBuilder::new();
    let x = b.placeholder("x", DType::F32, "[?]").unwrap();
    let a = Example::call_with(x).run_on(&b).unwrap();
    let left = Example::call_with(a).run_on(&b).unwrap();
    let right = Example::call_with(a).run_on(&b).unwrap();
    let both = IdentityN::call_with([left, right, a]).run_on(&b).unwrap();
    let graph = Arc::new(b.into_graph());
    for threads in [1, 2] {
        let s = session_over(&graph, threads);
        for _ in 0..50 {
            let out = s
                .runner()
                .feed(x, floats(&[1.0, 2.0]))
                .fetch(both[0])
                .fetch(both[1])
                .fetch(a)
                .run()
                .unwrap();
            assert_eq!(
                out,
                [
                    floats(&[4.0, 8.0]),
                    floats(&[4.0, 8.0]),
                    floats(&[2.0, 4.0])
                ]
            );
        }
    }
}

/// A runtime with an allocator of its own, and one intra-op thread.
fn counted_runtime() -> (Arc<Runtime>, HostAllocator) {
    let allocator = HostAllocator::new(AllocatorConfig::default());
    let runtime = Runtime::new()
        .with_allocator(allocator.clone())
        .with_threads(Arc::new(ThreadPool::single()));
    (Arc::new(runtime), allocator)
}

#[test]
fn intermediates_are_freed_after_their_last_consumer() {
    common::link();
    const N: usize = 1 << 20;
    let b = GraphBuilder::new();
    let x = b.placeholder("x", DType::F32, [N]).unwrap();
    let mut y = x;
    for _ in 0..10 {
        y = TestCopyDouble::call_with(y).run_on(&b).unwrap();
    }
    let (runtime, allocator) = counted_runtime();
    let s = Session::builder(b.into_graph())
        .runtime(runtime)
        .inter_op_threads(1)
        .build()
        .unwrap();
    let out = s
        .runner()
        .feed(x, Tensor::from_vec([N], vec![1.0f32; N]).unwrap())
        .fetch(y)
        .run()
        .unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap()[N - 1], 1024.0);
    let stats = allocator.stats();
    let buffer = 4 * N;
    // Each node's input and output, never more: ten outputs were made.
    assert!(
        stats.peak_bytes_in_use <= 2 * buffer + buffer / 4,
        "peak {} bytes for {buffer}-byte buffers",
        stats.peak_bytes_in_use
    );
    assert!(
        stats.bytes_in_use <= buffer + buffer / 4,
        "only the fetched value lives"
    );
    drop(out);
    assert_eq!(allocator.stats().bytes_in_use, 0);
}

#[test]
fn a_chain_of_elementwise_nodes_keeps_at_most_one_buffer_live() {
    common::link();
    const N: usize = 1 << 20;
    let (graph, x, y) = chain(20);
    let (runtime, allocator) = counted_runtime();
    let s = Session::builder(graph)
        .runtime(runtime)
        .inter_op_threads(1)
        .build()
        .unwrap();
    let plan = s.plan().feed(x).fetch(y).build().unwrap();
    // A fed tensor the caller keeps: the first node copies it once, and
    // the rest work in that copy.
    let kept = Tensor::from_vec([N], vec![1.0f32; N]).unwrap();
    let out = plan.run([kept.clone()]).unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap()[0], 1048576.0);
    assert_eq!(
        kept.as_slice::<f32>().unwrap()[0],
        1.0,
        "the caller's tensor is unchanged"
    );
    let stats = allocator.stats();
    assert!(
        stats.peak_bytes_in_use <= 4 * N + N,
        "peak {}",
        stats.peak_bytes_in_use
    );
    drop(out);
    // A fed tensor handed over: no buffer at all from the allocator.
    allocator.reset_peak();
    let out = plan
        .run([Tensor::from_vec([N], vec![1.0f32; N]).unwrap()])
        .unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap()[0], 1048576.0);
    assert_eq!(allocator.stats().peak_bytes_in_use, 0);
}

#[test]
fn a_session_runs_on_the_shared_pool_of_a_thread_per_core_unless_given_its_own() {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    assert_eq!(
        Session::new(Graph::new()).unwrap().inter_op_threads(),
        cores
    );
    let own = Session::builder(Graph::new())
        .inter_op_threads(3)
        .build()
        .unwrap();
    assert_eq!(own.inter_op_threads(), 3);
    let err = Session::builder(Graph::new())
        .inter_op_threads(0)
        .build()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
}

#[test]
fn a_node_without_a_kernel_for_its_dtype_is_an_error_naming_it_when_planned() {
    common::link();
    let mut g = Graph::new();
    let x = g
        .add(
            NewNode::new("Placeholder")
                .name("x")
                .attr("dtype", DType::QInt8)
                .attr("shape", ShapeValue::from_sizes(&[2])),
        )
        .unwrap();
    // Example's op allows qint8; no kernel takes it.
    g.add(NewNode::new("Example").name("e").input(x.output(0)))
        .unwrap();
    let s = session(g, 1);
    let err = s.plan().feed("x").fetch("e").build().unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_contains(
        &err,
        &[
            "no kernel for op 'Example'",
            "while preparing node 'e' (op Example) to run",
        ],
    );
    // The placeholder alone plans.
    s.plan().feed("x").fetch("x").build().unwrap();
}

#[test]
fn each_nodes_kernel_is_prepared_once_and_shared_by_every_plan_and_run() {
    common::link();
    let b = GraphBuilder::new();
    let x = b.placeholder("x", DType::F32, "[?]").unwrap();
    let a = TestCounted::call_with(x)
        .node_name("counted_a")
        .run_on(&b)
        .unwrap();
    let c = TestCounted::call_with(a)
        .node_name("counted_b")
        .run_on(&b)
        .unwrap();
    // A runtime of its own: no kernel of these names exists yet.
    let s = Session::builder(b.into_graph())
        .runtime(Arc::new(Runtime::new()))
        .inter_op_threads(1)
        .build()
        .unwrap();
    let before = common::COUNTED_KERNELS.load(std::sync::atomic::Ordering::SeqCst);
    let created = || common::COUNTED_KERNELS.load(std::sync::atomic::Ordering::SeqCst) - before;
    let first = s.plan().feed(x).fetch(a).build().unwrap();
    assert_eq!(created(), 1);
    let second = s.plan().feed(x).fetch(c).fetch(a).build().unwrap();
    assert_eq!(created(), 2, "the plans share node counted_a's kernel");
    for _ in 0..5 {
        first.run([floats(&[1.0])]).unwrap();
        second.run([floats(&[1.0])]).unwrap();
        s.runner().feed(x, floats(&[1.0])).fetch(c).run().unwrap();
    }
    assert_eq!(created(), 2);
}

#[test]
fn graphs_sessions_and_plans_are_shared_between_threads() {
    fn shared<T: Send + Sync>() {}
    shared::<Graph>();
    shared::<Session>();
    shared::<op_graph::Plan>();
    shared::<Output>();
}

#[test]
fn a_plan_of_many_feeds_names_the_first_few_when_given_too_few() {
    common::link();
    let b = GraphBuilder::new();
    let feeds: Vec<Output> = (0..20)
        .map(|i| b.placeholder(&format!("x{i}"), DType::F32, "[1]").unwrap())
        .collect();
    let s = Session::new(b.into_graph()).unwrap();
    let mut plan = s.plan();
    for x in &feeds {
        plan = plan.feed(*x);
    }
    let plan = plan.fetch(feeds[0]).build().unwrap();
    let err = plan.run([]).unwrap_err();
    assert_contains(
        &err,
        &[
            "the plan takes 20 feed(s) ('x0', 'x1', 'x2', 'x3', 'x4', 'x5', 'x6', 'x7' and 12 more \
           (20 in all)), but 0 were given",
        ],
    );
}
