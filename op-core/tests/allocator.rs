//! The host allocator under threads: no buffer is ever handed to two live
//! owners, the cache stays within its bounds, and the counters add up.
//!
//! Every thread writes its own pattern (thread and round numbers) into each
//! buffer it gets and checks it before giving the buffer back, while holding
//! several buffers at once; a buffer handed out twice would show another
//! thread's pattern. A watchdog fails the test instead of hanging it if a
//! thread deadlocks.

use std::sync::mpsc;
use std::time::Duration;

use op_core::allocator::{AllocatorConfig, HostAllocator};
use op_core::{DType, OpCall, Runtime, Tensor};

/// Runs `jobs` on threads of their own and fails if they are not all done
/// within `limit` (a deadlock), or if one panics.
fn run_bounded(limit: Duration, jobs: Vec<Box<dyn FnOnce() + Send>>) {
    let (done, finished) = mpsc::channel();
    let count = jobs.len();
    let handles: Vec<_> = jobs
        .into_iter()
        .map(|job| {
            let done = done.clone();
            std::thread::spawn(move || {
                job();
                let _ = done.send(());
            })
        })
        .collect();
    for _ in 0..count {
        finished
            .recv_timeout(limit)
            .expect("a thread finished in time (no deadlock) and did not panic");
    }
    for handle in handles {
        handle.join().expect("no thread panicked");
    }
}

/// How long the threads of a test may take: far more than they need, so
/// that only a deadlock reaches it (Miri interprets, about 1000 times
/// slower).
fn watchdog() -> Duration {
    Duration::from_secs(if cfg!(miri) { 1800 } else { 60 })
}

/// Small buffers are not cached by default; these tests cache from 1 KiB
/// so that many sizes go through the cache.
fn caching_allocator(max_cached_bytes: usize) -> HostAllocator {
    HostAllocator::new(
        AllocatorConfig::default()
            .min_cached_bytes(1024)
            .max_cached_bytes(max_cached_bytes),
    )
}

/// The byte pattern thread `thread` writes in round `round`.
fn pattern(thread: usize, round: usize) -> [u8; 8] {
    ((thread as u64) << 32 | round as u64).to_le_bytes()
}

#[test]
fn no_buffer_is_handed_to_two_live_owners() {
    const THREADS: usize = 8;
    let rounds = if cfg!(miri) { 20 } else { 2000 };
    let alloc = caching_allocator(4 << 20);
    let jobs = (0..THREADS)
        .map(|thread| {
            let alloc = alloc.clone();
            Box::new(move || {
                // Sizes that share size classes, so threads compete for
                // the same free lists.
                let sizes: &[usize] = if cfg!(miri) {
                    &[1024, 1100, 1280, 2048]
                } else {
                    &[1024, 1100, 1280, 4096, 5000, 65536]
                };
                let mut held = std::collections::VecDeque::new();
                for round in 0..rounds {
                    let size = sizes[(round * 7 + thread) % sizes.len()];
                    let mut block = alloc.allocate_for_overwrite(size).unwrap();
                    for chunk in block.bytes_mut().chunks_mut(8) {
                        chunk.copy_from_slice(&pattern(thread, round)[..chunk.len()]);
                    }
                    held.push_back((round, block));
                    if held.len() > 5 {
                        let (round, block) = held.pop_front().unwrap();
                        for chunk in block.bytes().chunks(8) {
                            assert_eq!(
                                chunk,
                                &pattern(thread, round)[..chunk.len()],
                                "thread {thread} round {round}: another owner wrote here"
                            );
                        }
                    }
                }
            }) as Box<dyn FnOnce() + Send>
        })
        .collect();
    run_bounded(watchdog(), jobs);

    let stats = alloc.stats();
    assert_eq!(stats.bytes_in_use, 0, "{stats:?}");
    assert!(stats.bytes_cached <= 4 << 20, "{stats:?}");
    assert!(stats.hits > 0, "the cache served requests: {stats:?}");
    assert_eq!(
        stats.hits + stats.misses,
        (THREADS * rounds) as u64,
        "every request is a hit or a miss: {stats:?}"
    );
    assert!(stats.peak_bytes_in_use >= 6 * 1024, "{stats:?}");
}

#[test]
fn tensors_from_many_threads_keep_their_values() {
    // The same through kernels: a runtime with its own allocator, and
    // outputs big enough to be cached, made and checked on 4 threads.
    let n = if cfg!(miri) { 300 } else { 40_000 };
    let runtime = std::sync::Arc::new(Runtime::new().with_allocator(caching_allocator(64 << 20)));
    let jobs = (0..4)
        .map(|thread| {
            let runtime = runtime.clone();
            Box::new(move || {
                let rounds = if cfg!(miri) { 8 } else { 200 };
                let mut held = Vec::new();
                for round in 0..rounds {
                    let value = (thread * 1000 + round) as f32;
                    let input = Tensor::from_vec([n], vec![value; n]).unwrap();
                    let output = OpCall::new("Test>Double")
                        .input(&input)
                        .run_on(&runtime)
                        .unwrap()
                        .pop()
                        .unwrap();
                    held.push((value, output));
                    if held.len() > 3 {
                        let (value, output) = held.remove(0);
                        let values = output.as_slice::<f32>().unwrap();
                        assert!(values.iter().all(|v| *v == 2.0 * value));
                    }
                }
            }) as Box<dyn FnOnce() + Send>
        })
        .collect();
    run_bounded(watchdog(), jobs);
    let stats = runtime.allocator().stats();
    assert_eq!(stats.bytes_in_use, 0, "{stats:?}");
    assert!(stats.hits > 0, "{stats:?}");
}

/// `y = 2 * x` on floats, through the elementwise helper.
#[op_core::register_op(
    name = "Test>Double",
    inputs("x: float"),
    outputs("y: float"),
    shape = "unchanged"
)]
struct Double;

#[op_core::kernel(op = Double)]
fn double(ctx: &mut op_core::KernelContext<'_>) -> op_core::Result<()> {
    ctx.unary(0, 0, 1, |x: &f32| 2.0 * x)
}

#[test]
fn a_reused_buffer_is_zeroed_for_a_kernel_that_asks_for_zeros() {
    let alloc = caching_allocator(1 << 20);
    let runtime = Runtime::new().with_allocator(alloc.clone());
    // Fill a cached buffer with non-zero values, then let it go.
    let input = Tensor::from_vec([1000], vec![3.0f32; 1000]).unwrap();
    let doubled = OpCall::new("Test>Double")
        .input(&input)
        .run_on(&runtime)
        .unwrap();
    assert_eq!(doubled[0].as_slice::<f32>().unwrap()[0], 6.0);
    let before = alloc.stats();
    drop(doubled);
    // The next output of that size is that buffer, and reads as zeros.
    let zeros = OpCall::new("Test>Zeros")
        .input(Tensor::scalar(1000i64))
        .run_on(&runtime)
        .unwrap();
    assert_eq!(alloc.stats().hits, before.hits + 1, "the buffer was reused");
    assert!(
        zeros[0]
            .as_slice::<f32>()
            .unwrap()
            .iter()
            .all(|v| *v == 0.0)
    );
    assert_eq!(Tensor::zeros(DType::F32, [1000]).unwrap(), zeros[0]);
}

/// A vector of `n` zeros, made by `allocate_output` and not written.
#[op_core::register_op(name = "Test>Zeros", inputs("n: int64"), outputs("zeros: float"))]
struct Zeros;

#[op_core::kernel(op = Zeros)]
fn zeros(ctx: &mut op_core::KernelContext<'_>) -> op_core::Result<()> {
    let n = ctx.input_scalar::<i64>(0)?;
    ctx.allocate_output(0, &[n as usize])?;
    Ok(())
}
