//! The queue ops (`FIFOQueueV2`, `QueueEnqueueV2`, `QueueDequeueV2`,
//! `QueueSizeV2`, `QueueCloseV2`), eagerly: first in first out, which queue
//! a call gets (a new one per eager call, one per shared name), waiting for
//! elements and for room with and without timeouts, closing (what is left
//! still comes out, waiters are woken with `OutOfRange`, pending enqueues
//! are let in or cancelled), TensorFlow's errors, `DestroyResourceOp`, the
//! resource against a model, cancellation, and producers and consumers on
//! threads under a watchdog.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

use op_core::resource::Resource;
use op_core::resource::queue::{Queue, QueueInterface};
use op_core::wait::{CancellationManager, Wait};
use op_core::{Code, DType, Error, OpCall, ResourceHandle, Runtime, ShapeValue, Tensor};
use op_kernels::queue::{FifoQueue, FifoQueueHandle, FifoQueueV2};
use proptest::prelude::*;

mod common;
use common::{assert_contains, run_jobs};

const ENQUEUE: &str = "QueueEnqueueV2";
const DEQUEUE: &str = "QueueDequeueV2";
const SIZE: &str = "QueueSizeV2";

/// A generous bound for a wait that must end.
const LONG: Duration = Duration::from_secs(30);

fn i32_queue() -> FifoQueueHandle<'static> {
    FifoQueueHandle::new(&[DType::I32]).unwrap()
}

fn push(queue: &FifoQueueHandle<'_>, value: i32) {
    queue.enqueue([Tensor::scalar(value)]).unwrap();
}

fn pop(queue: &FifoQueueHandle<'_>) -> Result<i32, Error> {
    Ok(queue.dequeue()?[0].scalar_value::<i32>().unwrap())
}

/// The queue a handle owns or names.
fn resource_of(queue: &FifoQueueHandle<'_>) -> Arc<Queue> {
    let handle: ResourceHandle = queue.handle().scalar_value().unwrap();
    queue
        .runtime()
        .resource_manager()
        .resource::<Queue>(&handle)
        .unwrap()
}

fn size_of_handle(handle: &Tensor) -> i32 {
    OpCall::new(SIZE).input(handle).run().unwrap()[0]
        .scalar_value()
        .unwrap()
}

#[test]
fn tuples_come_out_first_in_first_out() {
    let queue = FifoQueueHandle::new(&[DType::I32, DType::String, DType::F32]).unwrap();
    for i in 0..5 {
        queue
            .enqueue([
                Tensor::from_vec([i as usize], vec![i; i as usize]).unwrap(),
                Tensor::scalar(format!("#{i}").into_bytes()),
                Tensor::scalar(i as f32 / 2.0),
            ])
            .unwrap();
    }
    assert_eq!(queue.size().unwrap(), 5);
    for i in 0..5 {
        let tuple = queue.dequeue().unwrap();
        assert_eq!(tuple.len(), 3);
        assert_eq!(tuple[0].dims(), [i as usize], "any shape, kept");
        assert_eq!(tuple[0].as_slice::<i32>().unwrap(), vec![i; i as usize]);
        assert_eq!(
            tuple[1].scalar_value::<Vec<u8>>().unwrap(),
            format!("#{i}").into_bytes()
        );
        assert_eq!(tuple[2].scalar_value::<f32>().unwrap(), i as f32 / 2.0);
    }
    assert_eq!(queue.size().unwrap(), 0);
}

#[test]
fn each_eager_call_without_a_shared_name_makes_a_new_queue() {
    // The report: "pushed 1 value into a; size of b = [1]".
    let a = FifoQueueV2::call(vec![DType::I32]).run().unwrap();
    let b = FifoQueueV2::call(vec![DType::I32]).run().unwrap();
    OpCall::new(ENQUEUE)
        .input(&a)
        .input_list([Tensor::scalar(1i32)])
        .run()
        .unwrap();
    assert_eq!(size_of_handle(&a), 1);
    assert_eq!(size_of_handle(&b), 0, "b is a queue of its own");
    for handle in [&a, &b] {
        assert!(handle.scalar_value::<ResourceHandle>().unwrap().is_owning());
    }

    // On threads too: each call, a queue.
    let handles: Vec<Tensor> = std::thread::scope(|s| {
        let made: Vec<_> = (0..4)
            .map(|_| s.spawn(|| FifoQueueV2::call(vec![DType::I32]).run().unwrap()))
            .collect();
        made.into_iter().map(|t| t.join().unwrap()).collect()
    });
    let queues: Vec<Arc<Queue>> = handles
        .iter()
        .map(|h| {
            Runtime::global()
                .resource_manager()
                .resource::<Queue>(&h.scalar_value().unwrap())
                .unwrap()
        })
        .collect();
    for (i, q) in queues.iter().enumerate() {
        for other in &queues[i + 1..] {
            assert!(!Arc::ptr_eq(q, other));
            assert_ne!(q.name(), other.name(), "named apart in messages");
        }
    }
}

#[test]
fn every_call_with_a_shared_name_reaches_one_queue() {
    let runtime = Runtime::new();
    let make = || {
        FifoQueueHandle::builder(&[DType::I32])
            .shared_name("jobs")
            .build_on(&runtime)
            .unwrap()
    };
    let first = make();
    assert_eq!(first.name(), "jobs");
    std::thread::scope(|s| {
        for t in 0..4 {
            let make = &make;
            s.spawn(move || push(&make(), t));
        }
    });
    assert_eq!(make().size().unwrap(), 4);
    let handle: ResourceHandle = first.handle().scalar_value().unwrap();
    assert!(!handle.is_owning());
    assert_eq!(
        (handle.container.as_str(), handle.name.as_str()),
        ("localhost", "jobs")
    );
    // Another container is another queue.
    let elsewhere = FifoQueueHandle::builder(&[DType::I32])
        .shared_name("jobs")
        .container("elsewhere")
        .build_on(&runtime)
        .unwrap();
    assert_eq!(elsewhere.size().unwrap(), 0);
}

#[test]
fn a_shared_queue_of_other_types_shapes_or_capacity_is_invalid_argument() {
    let runtime = Runtime::new();
    FifoQueueHandle::builder(&[DType::I32, DType::F32])
        .shapes(&[&[2], &[]])
        .capacity(10)
        .shared_name("s")
        .build_on(&runtime)
        .unwrap();
    let cases = [
        (
            FifoQueueHandle::builder(&[DType::I32])
                .shapes(&[&[2]])
                .capacity(10),
            "Shared queue 's' has component types (int32, float) but requested component types were (int32)",
        ),
        (
            FifoQueueHandle::builder(&[DType::I32, DType::F32])
                .shapes(&[&[2], &[]])
                .capacity(5),
            "Shared queue 's' has capacity 10 but requested capacity was 5",
        ),
        (
            FifoQueueHandle::builder(&[DType::I32, DType::F32]).shapes(&[&[2], &[]]),
            "Shared queue 's' has capacity 10 but requested capacity was -1 (no limit)",
        ),
        (
            FifoQueueHandle::builder(&[DType::I32, DType::F32])
                .shapes(&[&[3], &[]])
                .capacity(10),
            "Shared queue 's' has component shapes [[2], []] but requested component shapes were [[3], []]",
        ),
    ];
    for (builder, message) in cases {
        let err = builder.shared_name("s").build_on(&runtime).unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{err}");
        assert_contains(&err, &["op FIFOQueueV2 (node 'FIFOQueueV2')", message]);
    }
}

#[test]
fn bad_attrs_are_invalid_argument_with_tensorflows_messages() {
    let err = FifoQueueHandle::builder(&[DType::I32, DType::F32])
        .shapes(&[&[2]])
        .build()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &["Different number of component types.  Types: int32, float, Shapes: [[2]]"],
    );

    let err = FifoQueueV2::call(vec![DType::I32])
        .shapes(vec![ShapeValue::from_sizes(&[-1])])
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["Shape [?] is not fully defined"]);

    let err = FifoQueueV2::call(vec![]).run().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");

    let queue = i32_queue();
    let err = OpCall::new(DEQUEUE)
        .input(queue.handle())
        .attr("component_types", vec![DType::I32])
        .attr("timeout_ms", -2i64)
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &["attr timeout_ms must be -1 (no timeout) or at least 0, got -2"],
    );
}

#[test]
fn tuples_of_other_types_counts_or_shapes_are_invalid_argument() {
    let queue = FifoQueueHandle::builder(&[DType::I32, DType::F32])
        .shapes(&[&[2], &[]])
        .shared_name("typed")
        .build()
        .unwrap();
    let cases = [
        (
            vec![Tensor::scalar(1.0f32), Tensor::scalar(1.0f32)],
            "the queue 'typed' holds tuples of (int32, float), but the components given are (float, float)",
        ),
        (
            vec![Tensor::from_vec([2], vec![1i32, 2]).unwrap()],
            "the queue 'typed' holds tuples of (int32, float), but the components given are (int32)",
        ),
        (
            vec![
                Tensor::from_vec([3], vec![1i32, 2, 3]).unwrap(),
                Tensor::scalar(1.0f32),
            ],
            "Shape mismatch in tuple component 0. Expected [2], got [3]",
        ),
    ];
    for (tuple, message) in cases {
        let err = queue.enqueue(tuple).unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{err}");
        assert_contains(
            &err,
            &["op QueueEnqueueV2 (node 'QueueEnqueueV2')", message],
        );
    }
    assert_eq!(queue.size().unwrap(), 0, "nothing went in");

    let err = OpCall::new(DEQUEUE)
        .input(queue.handle())
        .attr("component_types", vec![DType::I32])
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &["the queue 'typed' holds tuples of (int32, float), but component_types is (int32)"],
    );

    // A handle to something else.
    let variable = op_kernels::variable::Variable::new(Tensor::scalar(1i32)).unwrap();
    let err = OpCall::new(SIZE)
        .input(variable.handle())
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &[
            "input 0 ('handle')",
            "not a op_core::resource::queue::Queue",
        ],
    );
}

#[test]
fn a_dequeue_waits_for_an_enqueue() {
    let queue = i32_queue();
    std::thread::scope(|s| {
        let consumer = s.spawn(|| pop(&queue));
        std::thread::sleep(Duration::from_millis(20));
        assert!(!consumer.is_finished(), "it waits");
        push(&queue, 7);
        assert_eq!(consumer.join().unwrap().unwrap(), 7);
    });
}

#[test]
fn a_dequeue_with_a_timeout_gives_up_with_deadline_exceeded() {
    let queue = i32_queue();
    let start = Instant::now();
    let err = queue
        .dequeue_timeout(Duration::from_millis(30))
        .unwrap_err();
    assert!(start.elapsed() >= Duration::from_millis(30));
    assert_eq!(err.code(), Code::DeadlineExceeded);
    assert_contains(
        &err,
        &[
            "op QueueDequeueV2 (node 'QueueDequeueV2')",
            &format!(
                "timed out after 30 ms: FIFOQueue '{}' is empty",
                queue.name()
            ),
        ],
    );
    // Timeout 0 takes what is there without waiting.
    push(&queue, 1);
    let tuple = queue.dequeue_timeout(Duration::ZERO).unwrap();
    assert_eq!(tuple[0].scalar_value::<i32>().unwrap(), 1);
    let err = queue.dequeue_timeout(Duration::ZERO).unwrap_err();
    assert_eq!(err.code(), Code::DeadlineExceeded);
}

#[test]
fn an_enqueue_waits_for_room_in_a_full_queue() {
    let queue = FifoQueueHandle::builder(&[DType::I32])
        .capacity(2)
        .build()
        .unwrap();
    push(&queue, 1);
    push(&queue, 2);
    let err = queue
        .enqueue_timeout([Tensor::scalar(3i32)], Duration::from_millis(10))
        .unwrap_err();
    assert_eq!(err.code(), Code::DeadlineExceeded);
    assert_contains(&err, &["is full"]);
    assert_eq!(queue.size().unwrap(), 2, "nothing added");
    std::thread::scope(|s| {
        let producer = s.spawn(|| push(&queue, 3));
        std::thread::sleep(Duration::from_millis(20));
        assert!(!producer.is_finished(), "it waits for room");
        assert_eq!(pop(&queue).unwrap(), 1);
        producer.join().unwrap();
    });
    assert_eq!((pop(&queue).unwrap(), pop(&queue).unwrap()), (2, 3));

    // Capacity 0 takes nothing (TensorFlow accepts it too).
    let none = FifoQueueHandle::builder(&[DType::I32])
        .capacity(0)
        .build()
        .unwrap();
    let err = none
        .enqueue_timeout([Tensor::scalar(1i32)], Duration::ZERO)
        .unwrap_err();
    assert_eq!(err.code(), Code::DeadlineExceeded);
}

#[test]
fn a_closed_queue_gives_what_is_left_then_out_of_range() {
    let queue = i32_queue();
    push(&queue, 1);
    push(&queue, 2);
    queue.close().unwrap();
    assert_eq!(pop(&queue).unwrap(), 1);
    assert_eq!(pop(&queue).unwrap(), 2);
    let err = pop(&queue).unwrap_err();
    assert_eq!(err.code(), Code::OutOfRange);
    assert_contains(
        &err,
        &[&format!(
            "FIFOQueue '{}' is closed and has insufficient elements (requested 1, current size 0)",
            queue.name()
        )],
    );

    let err = queue.enqueue([Tensor::scalar(3i32)]).unwrap_err();
    assert_eq!(err.code(), Code::Cancelled);
    assert_contains(&err, &[&format!("FIFOQueue '{}' is closed.", queue.name())]);

    let err = queue.close().unwrap_err();
    assert_eq!(err.code(), Code::Cancelled);
    assert_contains(
        &err,
        &[&format!("Queue '{}' is already closed.", queue.name())],
    );
    // Closing with cancel_pending_enqueues does not mind.
    queue.close_cancelling_enqueues().unwrap();
}

#[test]
fn closing_wakes_every_waiting_dequeue_with_out_of_range() {
    let queue = i32_queue();
    std::thread::scope(|s| {
        let waiters: Vec<_> = (0..4).map(|_| s.spawn(|| pop(&queue))).collect();
        std::thread::sleep(Duration::from_millis(20));
        assert!(waiters.iter().all(|w| !w.is_finished()));
        queue.close().unwrap();
        for waiter in waiters {
            assert_eq!(waiter.join().unwrap().unwrap_err().code(), Code::OutOfRange);
        }
    });
}

/// Waits until `n` enqueues or closes wait in `queue`'s line.
fn until_waiting(queue: &FifoQueueHandle<'_>, n: usize) {
    let queue = resource_of(queue);
    let fifo = queue.downcast_ref::<FifoQueue>().unwrap();
    let deadline = Instant::now() + LONG;
    while fifo.waiting() < n {
        assert!(Instant::now() < deadline, "{n} never waited");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// A queue of capacity 1 holding 1.
fn full_queue_of_one() -> FifoQueueHandle<'static> {
    let queue = FifoQueueHandle::builder(&[DType::I32])
        .capacity(1)
        .build()
        .unwrap();
    push(&queue, 1);
    queue
}

#[test]
fn a_close_lets_the_waiting_enqueues_in_first() {
    let queue = full_queue_of_one();
    std::thread::scope(|s| {
        let producer = s.spawn(|| push(&queue, 2));
        until_waiting(&queue, 1);
        let closer = s.spawn(|| queue.close());
        until_waiting(&queue, 2);
        std::thread::sleep(Duration::from_millis(20));
        assert!(!closer.is_finished(), "the close waits behind the enqueue");
        assert!(!resource_of(&queue).is_closed());
        assert_eq!(pop(&queue).unwrap(), 1);
        producer.join().unwrap();
        closer.join().unwrap().unwrap();
    });
    assert_eq!(pop(&queue).unwrap(), 2, "the pending enqueue went in");
    assert_eq!(pop(&queue).unwrap_err().code(), Code::OutOfRange);
}

#[test]
fn a_close_cancelling_enqueues_fails_the_waiting_ones() {
    let queue = full_queue_of_one();
    std::thread::scope(|s| {
        let producers: Vec<_> = (2..5)
            .map(|v| {
                let queue = &queue;
                s.spawn(move || queue.enqueue([Tensor::scalar(v)]))
            })
            .collect();
        until_waiting(&queue, 3);
        queue.close_cancelling_enqueues().unwrap();
        assert_eq!(
            resource_of(&queue)
                .downcast_ref::<FifoQueue>()
                .unwrap()
                .waiting(),
            0
        );
        for producer in producers {
            let err = producer.join().unwrap().unwrap_err();
            assert_eq!(err.code(), Code::Cancelled);
            assert_contains(&err, &["Enqueue operation was cancelled"]);
        }
    });
    assert_eq!(pop(&queue).unwrap(), 1, "what was in stays");
    assert_eq!(pop(&queue).unwrap_err().code(), Code::OutOfRange);
}

#[test]
fn destroying_queue_handles() {
    let runtime = Runtime::new();
    let destroy = |handle: &Tensor, ignore: bool| {
        OpCall::new("DestroyResourceOp")
            .input(handle)
            .attr("ignore_lookup_error", ignore)
            .run_on(&runtime)
    };
    // An owned queue: destroying its handle succeeds and does nothing,
    // whatever `ignore_lookup_error` says (as TensorFlow's ref-counting
    // handles: checked with TensorFlow 2.21). It goes with its last handle.
    let owned = FifoQueueHandle::builder(&[DType::I32])
        .build_on(&runtime)
        .unwrap();
    push(&owned, 1);
    destroy(owned.handle(), false).unwrap();
    destroy(owned.handle(), true).unwrap();
    assert_eq!(pop(&owned).unwrap(), 1, "still there");
    let weak = Arc::downgrade(&resource_of(&owned));
    drop(owned);
    assert!(weak.upgrade().is_none(), "gone with its handle");

    // A shared queue: removed from the manager.
    let shared = FifoQueueHandle::builder(&[DType::I32])
        .shared_name("doomed")
        .build_on(&runtime)
        .unwrap();
    push(&shared, 1);
    destroy(shared.handle(), false).unwrap();
    assert_eq!(shared.size().unwrap_err().code(), Code::NotFound);
    assert_eq!(
        destroy(shared.handle(), false).unwrap_err().code(),
        Code::NotFound
    );
    destroy(shared.handle(), true).unwrap();
    let again = FifoQueueHandle::builder(&[DType::I32])
        .shared_name("doomed")
        .build_on(&runtime)
        .unwrap();
    assert_eq!(again.size().unwrap(), 0, "made afresh");
}

#[test]
fn the_resource_describes_itself_briefly() {
    let queue = FifoQueue::new("q", vec![DType::I32, DType::F32], vec![], Some(10)).unwrap();
    assert_eq!(
        queue.debug_string(),
        "FIFOQueue 'q' (int32, float) of 0 elements, capacity 10"
    );
    let empty = queue.memory_used();
    queue
        .enqueue(
            vec![
                Tensor::from_vec([100], vec![0i32; 100]).unwrap(),
                Tensor::scalar(0.0f32),
            ],
            &Wait::forever(),
        )
        .unwrap();
    assert_eq!(queue.memory_used(), empty + 404);
    queue.close(false, &Wait::forever()).unwrap();
    assert_eq!(
        queue.debug_string(),
        "FIFOQueue 'q' (int32, float) of 1 elements, capacity 10, closed"
    );
}

#[test]
fn a_cancelled_wait_ends_with_cancelled() {
    let queue = FifoQueue::new("q", vec![DType::I32], vec![], Some(0)).unwrap();
    let cancellation = CancellationManager::new();
    std::thread::scope(|s| {
        let reader = s.spawn(|| queue.dequeue(&Wait::forever().cancelled_by(&cancellation)));
        let writer = s.spawn(|| {
            queue.enqueue(
                vec![Tensor::scalar(1i32)],
                &Wait::forever().cancelled_by(&cancellation),
            )
        });
        std::thread::sleep(Duration::from_millis(20));
        assert!(!reader.is_finished() && !writer.is_finished());
        cancellation.start_cancel();
        assert_eq!(reader.join().unwrap().unwrap_err().code(), Code::Cancelled);
        assert_eq!(writer.join().unwrap().unwrap_err().code(), Code::Cancelled);
    });
    // The cancelled enqueue left the line: the next one is served.
    let queue = FifoQueue::new("q", vec![DType::I32], vec![], Some(1)).unwrap();
    let cancellation = CancellationManager::new();
    queue
        .enqueue(vec![Tensor::scalar(1i32)], &Wait::forever())
        .unwrap();
    std::thread::scope(|s| {
        let first = s.spawn(|| {
            queue.enqueue(
                vec![Tensor::scalar(2i32)],
                &Wait::forever().cancelled_by(&cancellation),
            )
        });
        std::thread::sleep(Duration::from_millis(10));
        let second = s.spawn(|| queue.enqueue(vec![Tensor::scalar(3i32)], &Wait::up_to(LONG)));
        std::thread::sleep(Duration::from_millis(10));
        cancellation.start_cancel();
        assert_eq!(first.join().unwrap().unwrap_err().code(), Code::Cancelled);
        queue.dequeue(&Wait::forever()).unwrap();
        second.join().unwrap().unwrap();
    });
    let last = queue.dequeue(&Wait::forever()).unwrap();
    assert_eq!(last[0].scalar_value::<i32>().unwrap(), 3);
}

/// N producers each enqueue their values (the last one done closes the
/// queue) while M consumers dequeue until the queue is closed and empty:
/// every value comes out exactly once, each consumer sees each producer's
/// values in order, and the close wakes every consumer. A hang fails the
/// test (the watchdog of `run_jobs`).
#[test]
fn producers_and_consumers_on_threads_see_every_value_once() {
    const PRODUCERS: i64 = 4;
    const CONSUMERS: usize = 3;
    const EACH: i64 = 500;
    let queue = FifoQueueHandle::builder(&[DType::I64, DType::I64])
        .capacity(8)
        .build()
        .unwrap();
    let done = Arc::new(AtomicI64::new(0));
    let (sink, collected) = std::sync::mpsc::channel::<Vec<(i64, i64)>>();
    let mut jobs: Vec<(String, Box<dyn FnOnce() + Send>)> = Vec::new();
    for p in 0..PRODUCERS {
        let (queue, done) = (queue.clone(), done.clone());
        jobs.push((
            format!("producer {p}"),
            Box::new(move || {
                for i in 0..EACH {
                    queue
                        .enqueue([Tensor::scalar(p), Tensor::scalar(i)])
                        .unwrap();
                }
                if done.fetch_add(1, Ordering::SeqCst) + 1 == PRODUCERS {
                    queue.close().unwrap();
                }
            }),
        ));
    }
    for c in 0..CONSUMERS {
        let (queue, sink) = (queue.clone(), sink.clone());
        jobs.push((
            format!("consumer {c}"),
            Box::new(move || {
                let mut got = Vec::new();
                loop {
                    match queue.dequeue() {
                        Ok(t) => got.push((
                            t[0].scalar_value::<i64>().unwrap(),
                            t[1].scalar_value::<i64>().unwrap(),
                        )),
                        Err(e) if e.code() == Code::OutOfRange => break,
                        Err(e) => panic!("{e}"),
                    }
                }
                sink.send(got).unwrap();
            }),
        ));
    }
    drop(sink);
    run_jobs(jobs, LONG);
    check_each_value_once(collected.iter().collect(), PRODUCERS, EACH);
}

/// Every `(producer, i)` for `i < each` is in exactly one consumer's list,
/// and each list has each producer's values in increasing order.
fn check_each_value_once(consumed: Vec<Vec<(i64, i64)>>, producers: i64, each: i64) {
    let mut seen = HashSet::new();
    for list in &consumed {
        for p in 0..producers {
            let mine: Vec<i64> = list
                .iter()
                .filter(|(q, _)| *q == p)
                .map(|(_, i)| *i)
                .collect();
            assert!(mine.windows(2).all(|w| w[0] < w[1]), "producer {p}'s order");
        }
        for value in list {
            assert!(seen.insert(*value), "{value:?} dequeued twice");
        }
    }
    assert_eq!(seen.len() as i64, producers * each, "every value dequeued");
}

/// A change to a queue, for the model check.
#[derive(Clone, Debug)]
enum Step {
    Enqueue(i32),
    Dequeue,
    Close(bool),
}

proptest! {
    /// The resource against a `VecDeque`, one thread, never waiting
    /// (timeout 0): what would wait is `DeadlineExceeded` and changes
    /// nothing.
    #[test]
    fn the_queue_agrees_with_a_model(
        capacity in prop::option::of(0usize..4),
        steps in prop::collection::vec(prop_oneof![
            4 => any::<i32>().prop_map(Step::Enqueue),
            4 => Just(Step::Dequeue),
            1 => any::<bool>().prop_map(Step::Close),
        ], 0..40),
    ) {
        let queue = FifoQueue::new("m", vec![DType::I32], vec![], capacity).unwrap();
        let now = Wait::up_to(Duration::ZERO);
        let mut model = VecDeque::new();
        let mut closed = false;
        for step in steps {
            match step {
                Step::Enqueue(v) => {
                    let result = queue.enqueue(vec![Tensor::scalar(v)], &now);
                    let code = result.err().map(|e| e.code());
                    if closed {
                        prop_assert_eq!(code, Some(Code::Cancelled));
                    } else if capacity.is_some_and(|c| model.len() >= c) {
                        prop_assert_eq!(code, Some(Code::DeadlineExceeded));
                    } else {
                        prop_assert_eq!(code, None);
                        model.push_back(v);
                    }
                }
                Step::Dequeue => match (queue.dequeue(&now), model.pop_front()) {
                    (Ok(t), Some(v)) => prop_assert_eq!(t[0].scalar_value::<i32>().unwrap(), v),
                    (Err(e), None) => prop_assert_eq!(
                        e.code(),
                        if closed { Code::OutOfRange } else { Code::DeadlineExceeded }
                    ),
                    (got, expected) => prop_assert!(false, "{got:?} but the model has {expected:?}"),
                },
                Step::Close(cancel) => {
                    let result = queue.close(cancel, &now);
                    prop_assert_eq!(result.is_err(), closed && !cancel);
                    closed = true;
                }
            }
            prop_assert_eq!(queue.size(), model.len());
            prop_assert_eq!(queue.is_closed(), closed);
        }
    }
}
