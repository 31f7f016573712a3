//! Queues in graphs: one queue per `FIFOQueueV2` node across runs and
//! plans, a dequeue that waits for an enqueue of the same run (on one
//! thread, or any size of inter-op pool) without deadlock, a failed run
//! that cancels its waiting dequeue, timeouts, and producers and consumers
//! running a session's plans on threads.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use op_core::{Code, DType, Error, OpCall, Runtime, Tensor};
use op_graph::{Graph, GraphBuilder, Output, Session};
use op_kernels::queue::{FifoQueueV2, QueueCloseV2, QueueDequeueV2, QueueEnqueueV2, QueueSizeV2};

mod common;
use common::{TestFail, assert_contains};

/// A bound for what must finish: past it the test fails instead of
/// hanging.
const LONG: Duration = Duration::from_secs(60);

/// Runs `f` on a thread of its own and returns its result, or fails the
/// test if it has not returned within [`LONG`] (a deadlock).
fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (done, result) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(f());
    });
    result
        .recv_timeout(LONG)
        .unwrap_or_else(|_| panic!("{what}: still running after {LONG:?} (a deadlock?)"))
}

/// A session of its own runtime: the runtime's kernels (and so the queue
/// a node keeps) are shared by the sessions of like-named nodes on it, and
/// these tests' graphs all have a node `q`.
fn session(graph: Graph, threads: usize) -> Arc<Session> {
    Arc::new(
        Session::builder(graph)
            .runtime(Arc::new(Runtime::new()))
            .inter_op_threads(threads)
            .build()
            .unwrap(),
    )
}

/// A graph with one node, the queue `q` of int32 scalars of `capacity`
/// (negative: no limit).
fn queue_node(capacity: i64) -> (GraphBuilder, Output) {
    common::link();
    let b = GraphBuilder::new();
    let q = FifoQueueV2::call_with(vec![DType::I32])
        .capacity(capacity)
        .node_name("q")
        .run_on(&b)
        .unwrap();
    (b, q)
}

/// The queue node `q` of int32 scalars of `capacity` (negative: no
/// limit), `x` a placeholder, `enqueue` of `x`, `dequeue`, `size` and
/// `close`.
fn queue_graph(capacity: i64) -> Graph {
    let (b, q) = queue_node(capacity);
    let x = b.placeholder("x", DType::I32, "[]").unwrap();
    QueueEnqueueV2::call_with(q, [x])
        .node_name("enqueue")
        .run_on(&b)
        .unwrap();
    QueueDequeueV2::call_with(q, vec![DType::I32])
        .node_name("dequeue")
        .run_on(&b)
        .unwrap();
    QueueSizeV2::call_with(q)
        .node_name("size")
        .run_on(&b)
        .unwrap();
    QueueCloseV2::call_with(q)
        .node_name("close")
        .run_on(&b)
        .unwrap();
    b.into_graph()
}

fn enqueue(s: &Session, value: i32) -> Result<(), Error> {
    s.runner()
        .feed("x", Tensor::scalar(value))
        .target("enqueue")
        .run()
        .map(drop)
}

fn dequeue(s: &Session) -> Result<i32, Error> {
    let out = s.runner().fetch("dequeue").run()?;
    Ok(out[0].scalar_value::<i32>().unwrap())
}

fn size(s: &Session) -> i32 {
    s.runner().fetch("size").run().unwrap()[0]
        .scalar_value()
        .unwrap()
}

#[test]
fn a_queue_node_has_one_queue_for_all_its_runs() {
    for threads in [1, 4] {
        let s = session(queue_graph(-1), threads);
        for v in 1..=3 {
            enqueue(&s, v).unwrap();
        }
        assert_eq!(size(&s), 3, "three runs, one queue (threads {threads})");
        assert_eq!(dequeue(&s).unwrap(), 1, "another plan, the same queue");
        assert_eq!(dequeue(&s).unwrap(), 2);
        // An eager call is not the node: a queue of its own.
        let eager = FifoQueueV2::call(vec![DType::I32]).run().unwrap();
        let eager_size = QueueSizeV2::call(&eager).run().unwrap();
        assert_eq!(eager_size.scalar_value::<i32>().unwrap(), 0);
        assert_eq!(size(&s), 1);
        s.runner().target("close").run().unwrap();
        assert_eq!(dequeue(&s).unwrap(), 3);
        let err = dequeue(&s).unwrap_err();
        assert_eq!(err.code(), Code::OutOfRange, "{err}");
        assert_contains(
            &err,
            &[
                "is closed and has insufficient elements",
                "in node 'dequeue'",
            ],
        );
    }
}

/// A graph whose `dequeue_<i>` nodes (made first, so that a one-thread
/// run would reach them first) wait for the `enqueue_<i>` nodes of the
/// same run; nothing orders them.
fn same_run_graph(pairs: usize) -> Graph {
    let (b, q) = queue_node(-1);
    for i in 0..pairs {
        let name = format!("dequeue_{i}");
        OpCall::with_values("QueueDequeueV2")
            .input(q)
            .attr("component_types", vec![DType::I32])
            .node_name(&name)
            .run_on(&b)
            .unwrap();
    }
    for i in 0..pairs {
        let value = b.constant(Tensor::scalar(i as i32)).unwrap();
        let name = format!("enqueue_{i}");
        OpCall::with_values("QueueEnqueueV2")
            .input(q)
            .input_list([value])
            .node_name(&name)
            .run_on(&b)
            .unwrap();
    }
    b.into_graph()
}

#[test]
fn a_dequeue_waiting_for_an_enqueue_of_the_same_run_does_not_deadlock() {
    for (pairs, threads) in [(1, 1), (1, 2), (3, 1), (3, 2), (8, 4)] {
        let s = session(same_run_graph(pairs), threads);
        let mut values = within("the run", move || {
            let mut runner = s.runner();
            for i in 0..pairs {
                runner = runner
                    .fetch(format!("dequeue_{i}").as_str())
                    .target(format!("enqueue_{i}").as_str());
            }
            let out = runner.run().unwrap();
            let values: Vec<i32> = out.iter().map(|t| t.scalar_value().unwrap()).collect();
            values
        });
        values.sort_unstable();
        let expected: Vec<i32> = (0..pairs as i32).collect();
        assert_eq!(values, expected, "{pairs} pairs on {threads} thread(s)");
    }
}

/// A queue `q` of int32 scalars and its `dequeue`, with a timeout
/// (`timeout_ms`, -1 for none).
fn dequeue_graph(timeout_ms: i64) -> GraphBuilder {
    let (b, q) = queue_node(-1);
    QueueDequeueV2::call_with(q, vec![DType::I32])
        .timeout_ms(timeout_ms)
        .node_name("dequeue")
        .run_on(&b)
        .unwrap();
    b
}

/// A `dequeue` that nothing enqueues for, and a node `fail` that fails.
fn failing_graph() -> Graph {
    let b = dequeue_graph(-1);
    let x = b.constant(Tensor::scalar(1.0f32)).unwrap();
    TestFail::call_with(x).node_name("fail").run_on(&b).unwrap();
    b.into_graph()
}

#[test]
fn a_failed_run_cancels_its_waiting_dequeue_and_reports_the_failure() {
    for threads in [1, 2] {
        let s = session(failing_graph(), threads);
        let err = within("the failed run", move || {
            s.runner()
                .fetch("dequeue")
                .target("fail")
                .run()
                .unwrap_err()
        });
        assert_eq!(err.code(), Code::FailedPrecondition, "{err}");
        assert_contains(&err, &["this op always fails", "in node 'fail'"]);
    }
}

#[test]
fn a_graph_dequeue_with_a_timeout_ends_with_deadline_exceeded() {
    let s = session(dequeue_graph(10).into_graph(), 1);
    let err = s.runner().fetch("dequeue").run().unwrap_err();
    assert_eq!(err.code(), Code::DeadlineExceeded, "{err}");
    assert_contains(
        &err,
        &["timed out after 10 ms", "is empty", "in node 'dequeue'"],
    );
}

/// Producer threads run the enqueue plan of one session, consumer threads
/// its dequeue plan until the queue is closed and empty (the last producer
/// runs the close): every value comes out exactly once, and the close ends
/// every consumer's waiting run with `OutOfRange`.
#[test]
fn producers_and_consumers_running_a_sessions_plans_see_every_value_once() {
    const PRODUCERS: i32 = 3;
    const CONSUMERS: usize = 3;
    const EACH: i32 = 200;
    let s = session(queue_graph(4), 2);
    let consumed = within("the producers and consumers", move || {
        let done = Arc::new(AtomicI64::new(0));
        std::thread::scope(|scope| {
            for p in 0..PRODUCERS {
                let (s, done) = (&s, done.clone());
                scope.spawn(move || {
                    for i in 0..EACH {
                        enqueue(s, p * EACH + i).unwrap();
                    }
                    if done.fetch_add(1, Ordering::SeqCst) + 1 == i64::from(PRODUCERS) {
                        s.runner().target("close").run().unwrap();
                    }
                });
            }
            let consumers: Vec<_> = (0..CONSUMERS)
                .map(|_| {
                    let s = &s;
                    scope.spawn(move || {
                        let mut got = Vec::new();
                        loop {
                            match dequeue(s) {
                                Ok(v) => got.push(v),
                                Err(e) if e.code() == Code::OutOfRange => return got,
                                Err(e) => panic!("{e}"),
                            }
                        }
                    })
                })
                .collect();
            consumers
                .into_iter()
                .map(|c| c.join().unwrap())
                .collect::<Vec<Vec<i32>>>()
        })
    });
    let mut all: Vec<i32> = consumed.iter().flatten().copied().collect();
    for list in &consumed {
        for p in 0..PRODUCERS {
            let mine: Vec<i32> = list.iter().copied().filter(|v| v / EACH == p).collect();
            assert!(mine.windows(2).all(|w| w[0] < w[1]), "producer {p}'s order");
        }
    }
    all.sort_unstable();
    let expected: Vec<i32> = (0..PRODUCERS * EACH).collect();
    assert_eq!(all, expected, "every value dequeued exactly once");
}
