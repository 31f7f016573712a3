//! Kernels that wait for other kernels (a queue's dequeue for an enqueue):
//! how long they may wait ([`Wait`]) and what cuts a wait short
//! ([`CancellationManager`], TensorFlow's).
//!
//! A kernel that may wait says so ([`OpKernel::may_block`](crate::OpKernel::may_block)),
//! so that a graph's executor runs it on a thread of its own; the
//! executor gives each run a cancellation manager and cancels it when a
//! node of the run fails, which wakes the waiting kernels of that run with
//! a `Cancelled` error instead of leaving them waiting for what will never
//! come. An eager call has none: it waits on the caller's thread until its
//! deadline, if it has one.
//!
//! A resource that blocks registers, for each wait, a callback that wakes
//! its waiters ([`CancellationManager::register`]) and checks
//! [`Wait::check`] each time it wakes:
//!
//! ```
//! use std::sync::{Arc, Condvar, Mutex};
//! use std::time::Duration;
//! use op_core::Code;
//! use op_core::wait::{CancellationManager, Wait};
//!
//! /// A latch: `wait_open` blocks until `open`.
//! #[derive(Default)]
//! struct Latch {
//!     state: Mutex<bool>,
//!     changed: Condvar,
//! }
//!
//! fn wait_open(latch: &Arc<Latch>, wait: &Wait<'_>) -> op_core::Result<()> {
//!     let wake = latch.clone();
//!     let _registration = wait.on_cancel(move || {
//!         // Under the lock, so the waiter cannot miss it between its
//!         // check and its wait.
//!         let _state = wake.state.lock().unwrap();
//!         wake.changed.notify_all();
//!     });
//!     let mut open = latch.state.lock().unwrap();
//!     while !*open {
//!         let timeout = wait.check(|| "the latch is closed".to_owned())?;
//!         open = match timeout {
//!             Some(left) => latch.changed.wait_timeout(open, left).unwrap().0,
//!             None => latch.changed.wait(open).unwrap(),
//!         };
//!     }
//!     Ok(())
//! }
//!
//! let latch = Arc::new(Latch::default());
//! let err = wait_open(&latch, &Wait::up_to(Duration::from_millis(1))).unwrap_err();
//! assert_eq!(err.code(), Code::DeadlineExceeded);
//!
//! let cancellation = CancellationManager::new();
//! std::thread::scope(|s| {
//!     let waiter = s.spawn(|| wait_open(&latch, &Wait::forever().cancelled_by(&cancellation)));
//!     cancellation.start_cancel();
//!     assert_eq!(waiter.join().unwrap().unwrap_err().code(), Code::Cancelled);
//! });
//! ```

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::{Error, Result};

/// A callback run when its manager is cancelled.
type Callback = Arc<dyn Fn() + Send + Sync>;

#[derive(Default)]
struct State {
    cancelled: bool,
    next: u64,
    callbacks: Vec<(u64, Callback)>,
}

/// Cancels the waits of one run: TensorFlow's `CancellationManager`.
/// [`start_cancel`](Self::start_cancel) runs every registered callback
/// once; a callback registered after that is not kept, and the caller
/// learns the manager is cancelled.
#[derive(Default)]
pub struct CancellationManager {
    state: Mutex<State>,
}

impl std::fmt::Debug for CancellationManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.lock();
        f.debug_struct("CancellationManager")
            .field("cancelled", &state.cancelled)
            .field("callbacks", &state.callbacks.len())
            .finish()
    }
}

impl CancellationManager {
    /// A manager not cancelled, with no callbacks.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // The state is a flag and a list, whole between any two statements.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether [`start_cancel`](Self::start_cancel) was called.
    pub fn is_cancelled(&self) -> bool {
        self.lock().cancelled
    }

    /// Cancels: marks the manager cancelled, then runs every registered
    /// callback, on this thread, outside the manager's lock (a callback
    /// may take the locks its waiter holds). Calls after the first do
    /// nothing.
    pub fn start_cancel(&self) {
        let callbacks = {
            let mut state = self.lock();
            if state.cancelled {
                return;
            }
            state.cancelled = true;
            std::mem::take(&mut state.callbacks)
        };
        for (_, callback) in callbacks {
            callback();
        }
    }

    /// Runs `callback` when the manager is cancelled, until the returned
    /// registration is dropped; `None`, and `callback` dropped unrun, if
    /// it is cancelled already (TensorFlow's `RegisterCallback` returning
    /// false). A callback may still run just after its registration is
    /// dropped, if cancellation had already taken it: it must be harmless
    /// then (waking waiters is).
    pub fn register(
        &self,
        callback: impl Fn() + Send + Sync + 'static,
    ) -> Option<CancelRegistration<'_>> {
        let mut state = self.lock();
        if state.cancelled {
            return None;
        }
        let id = state.next;
        state.next += 1;
        state.callbacks.push((id, Arc::new(callback)));
        Some(CancelRegistration { manager: self, id })
    }
}

/// A callback registered with a [`CancellationManager`]; dropping it
/// removes the callback.
#[must_use = "dropping the registration removes the callback at once"]
pub struct CancelRegistration<'a> {
    manager: &'a CancellationManager,
    id: u64,
}

impl std::fmt::Debug for CancelRegistration<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelRegistration")
            .field("id", &self.id)
            .finish()
    }
}

impl Drop for CancelRegistration<'_> {
    fn drop(&mut self) {
        let removed = {
            let mut state = self.manager.lock();
            let at = state.callbacks.iter().position(|(id, _)| *id == self.id);
            at.map(|at| state.callbacks.swap_remove(at))
        };
        // The callback (and what it holds) goes outside the lock.
        drop(removed);
    }
}

/// How long one blocking call may wait: until a deadline or forever, and
/// until a cancellation manager, if any, is cancelled.
#[derive(Clone, Copy, Debug)]
pub struct Wait<'a> {
    deadline: Option<(Instant, Duration)>,
    cancellation: Option<&'a CancellationManager>,
}

impl Default for Wait<'_> {
    fn default() -> Self {
        Wait::forever()
    }
}

impl<'a> Wait<'a> {
    /// No deadline and no cancellation.
    pub fn forever() -> Self {
        Wait {
            deadline: None,
            cancellation: None,
        }
    }

    /// A deadline `timeout` from now (zero: do not wait at all).
    pub fn up_to(timeout: Duration) -> Self {
        Wait::forever().timeout(Some(timeout))
    }

    /// This wait with a deadline `timeout` from now, or none.
    pub fn timeout(mut self, timeout: Option<Duration>) -> Self {
        self.deadline = timeout.map(|t| {
            // A timeout too long to add is as good as none.
            (Instant::now().checked_add(t).unwrap_or_else(far_future), t)
        });
        self
    }

    /// This wait, cut short when `cancellation` is cancelled.
    pub fn cancelled_by(mut self, cancellation: &'a CancellationManager) -> Self {
        self.cancellation = Some(cancellation);
        self
    }

    /// The cancellation manager, if any.
    pub fn cancellation(&self) -> Option<&'a CancellationManager> {
        self.cancellation
    }

    /// The timeout the deadline was set from, if any.
    pub fn timeout_duration(&self) -> Option<Duration> {
        self.deadline.map(|(_, t)| t)
    }

    /// Registers `wake` with the cancellation manager, if there is one
    /// and it is not cancelled yet (see [`CancellationManager::register`]);
    /// keep the registration for as long as the wait lasts.
    pub fn on_cancel(
        &self,
        wake: impl Fn() + Send + Sync + 'static,
    ) -> Option<CancelRegistration<'a>> {
        self.cancellation.and_then(|c| c.register(wake))
    }

    /// Before each wait (first, and after each wake-up): `Cancelled` if
    /// the manager is cancelled, `DeadlineExceeded` (saying what was
    /// waited for: `waiting_for()`) if the deadline has passed, else how
    /// long the wait may last (`None`: as long as it takes).
    pub fn check(&self, waiting_for: impl FnOnce() -> String) -> Result<Option<Duration>> {
        if self
            .cancellation
            .is_some_and(CancellationManager::is_cancelled)
        {
            return Err(Error::cancelled(format!(
                "cancelled while waiting: {}",
                waiting_for()
            )));
        }
        match self.deadline {
            None => Ok(None),
            Some((deadline, timeout)) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(Error::deadline_exceeded(format!(
                        "timed out after {} ms: {}",
                        timeout.as_millis(),
                        waiting_for()
                    )));
                }
                Ok(Some(left))
            }
        }
    }
}

/// An instant far enough ahead to stand for "never".
fn far_future() -> Instant {
    // About 30 years: later than any run, and addable on every platform.
    Instant::now() + Duration::from_secs(30 * 365 * 24 * 3600)
}
