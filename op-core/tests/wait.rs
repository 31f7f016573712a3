//! Waiting kernels: `Wait`'s deadlines, the `CancellationManager`, a
//! kernel's `may_block` (from `#[kernel]` on an impl) and the
//! cancellation a prepared op runs with.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use op_core::wait::{CancellationManager, Wait};
use op_core::{
    Code, KernelConstruction, KernelContext, OpCall, Result, Runtime, Tensor, kernel, register_op,
};

#[test]
fn cancel_runs_each_registered_callback_once() {
    let manager = CancellationManager::new();
    let runs = Arc::new(AtomicUsize::new(0));
    let count = |runs: &Arc<AtomicUsize>| {
        let runs = runs.clone();
        move || {
            runs.fetch_add(1, Ordering::SeqCst);
        }
    };
    let kept = manager.register(count(&runs)).unwrap();
    let dropped = manager.register(count(&runs)).unwrap();
    drop(dropped);
    assert!(!manager.is_cancelled());
    manager.start_cancel();
    assert!(manager.is_cancelled());
    assert_eq!(runs.load(Ordering::SeqCst), 1, "the dropped one is gone");
    manager.start_cancel();
    assert_eq!(runs.load(Ordering::SeqCst), 1, "once");
    drop(kept);
    assert!(
        manager.register(count(&runs)).is_none(),
        "too late: the caller learns it is cancelled"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[test]
fn a_wait_checks_its_deadline_and_its_cancellation() {
    assert_eq!(Wait::forever().check(|| "x".into()).unwrap(), None);
    let err = Wait::up_to(Duration::ZERO)
        .check(|| "the queue 'q' is empty".into())
        .unwrap_err();
    assert_eq!(err.code(), Code::DeadlineExceeded);
    assert_eq!(
        err.message(),
        "timed out after 0 ms: the queue 'q' is empty"
    );
    let left = Wait::up_to(Duration::from_secs(60))
        .check(|| unreachable!())
        .unwrap()
        .unwrap();
    assert!(left <= Duration::from_secs(60) && left > Duration::from_secs(59));
    // A timeout too long to add to now is no deadline to speak of.
    assert!(
        Wait::up_to(Duration::MAX)
            .check(|| unreachable!())
            .unwrap()
            .is_some()
    );

    let manager = CancellationManager::new();
    let wait = Wait::up_to(Duration::from_secs(60)).cancelled_by(&manager);
    assert!(wait.check(|| unreachable!()).is_ok());
    manager.start_cancel();
    let err = wait.check(|| "an element".into()).unwrap_err();
    assert_eq!(err.code(), Code::Cancelled);
    assert_eq!(err.message(), "cancelled while waiting: an element");
    assert!(wait.on_cancel(|| {}).is_none());
}

/// Waits until its call is cancelled, or `timeout_ms` (negative: no
/// timeout).
#[register_op(name = "Test>WaitForCancel", outputs("waited: bool"), shape = "scalar")]
struct WaitForCancel {
    #[attr(default = -1)]
    timeout_ms: i64,
}

/// Never signalled but by cancellation.
#[derive(Default)]
struct Latch {
    lock: Mutex<()>,
    woken: Condvar,
}

struct WaitKernel {
    timeout: Option<Duration>,
}

#[kernel(op = WaitForCancel)]
impl WaitKernel {
    fn new(c: &KernelConstruction<'_>) -> Result<Self> {
        let attrs: WaitForCancel = c.attrs()?;
        Ok(WaitKernel {
            timeout: u64::try_from(attrs.timeout_ms)
                .ok()
                .map(Duration::from_millis),
        })
    }

    fn compute(&self, ctx: &mut KernelContext<'_>) -> Result<()> {
        let latch = Arc::new(Latch::default());
        let wait = ctx.wait(self.timeout);
        let wake = latch.clone();
        let _registration = wait.on_cancel(move || {
            let _lock = wake.lock.lock().unwrap();
            wake.woken.notify_all();
        });
        let mut lock = latch.lock.lock().unwrap();
        loop {
            lock = match wait.check(|| "nothing".into())? {
                Some(left) => latch.woken.wait_timeout(lock, left).unwrap().0,
                None => latch.woken.wait(lock).unwrap(),
            };
        }
    }

    fn may_block(&self) -> bool {
        true
    }
}

/// Returns at once.
#[register_op(name = "Test>Quick", outputs("done: bool"), shape = "scalar")]
struct Quick;

#[kernel(op = Quick)]
fn quick(_ctx: &mut KernelContext<'_>) -> Result<Tensor> {
    Ok(Tensor::scalar(true))
}

#[test]
fn a_kernel_says_it_may_block_and_waits_until_its_deadline_eagerly() {
    let runtime = Runtime::new();
    let prepared = runtime.prepare("Test>WaitForCancel", &[], &[]).unwrap();
    assert!(prepared.may_block());
    let quick = OpCall::new("Test>Quick").prepared(&runtime).unwrap();
    assert!(!quick.may_block(), "the default");

    let start = Instant::now();
    let err = WaitForCancel::call().timeout_ms(20).run().unwrap_err();
    assert_eq!(err.code(), Code::DeadlineExceeded, "{err}");
    assert!(start.elapsed() >= Duration::from_millis(20));
    assert!(
        err.to_string()
            .contains("in kernel WaitKernel of op Test>WaitForCancel (node 'Test>WaitForCancel'"),
        "{err}"
    );
}

#[test]
fn a_prepared_op_run_cancellable_is_woken_by_its_cancellation() {
    let runtime = Runtime::new();
    let prepared = runtime.prepare("Test>WaitForCancel", &[], &[]).unwrap();
    let manager = CancellationManager::new();
    std::thread::scope(|s| {
        let waiter = s.spawn(|| {
            let mut outputs = [None];
            prepared.run_cancellable(&mut [], &mut outputs, &manager)
        });
        std::thread::sleep(Duration::from_millis(20));
        assert!(!waiter.is_finished(), "it waits");
        manager.start_cancel();
        let err = waiter.join().unwrap().unwrap_err();
        assert_eq!(err.code(), Code::Cancelled, "{err}");
    });
    // Already cancelled: it does not wait at all.
    let mut outputs = [None];
    let err = prepared
        .run_cancellable(&mut [], &mut outputs, &manager)
        .unwrap_err();
    assert_eq!(err.code(), Code::Cancelled);
}
