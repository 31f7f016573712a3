//! The resource behind a FIFO queue: [`FifoQueue`], TensorFlow's
//! `FIFOQueue`, a [`QueueInterface`] whose waits block on condition
//! variables and end at their deadline, at their cancellation, or when the
//! queue closes.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use op_core::error::quoted;
use op_core::resource::Resource;
use op_core::resource::queue::{QueueInterface, Tuple};
use op_core::wait::{CancelRegistration, Wait};
use op_core::{DType, Error, Result, TensorShape};

use crate::variable::tensor_bytes;

/// A queue of tuples, first in first out, of at most `capacity` elements:
/// TensorFlow's `FIFOQueue`.
///
/// Enqueues and closes are served in the order they arrive: an enqueue
/// waiting for room holds up the enqueues and the close behind it (so a
/// close without `cancel_pending_enqueues` lets the enqueues before it in
/// first). Dequeues take the oldest element; when several wait, any one of
/// them may get the next element. Every wait ends with an error at its
/// [`Wait`]'s deadline (`DeadlineExceeded`) or cancellation (`Cancelled`).
///
/// ```
/// use std::time::Duration;
/// use op_core::resource::queue::QueueInterface;
/// use op_core::wait::Wait;
/// use op_core::{Code, DType, Tensor};
/// use op_kernels::queue::FifoQueue;
///
/// let queue = FifoQueue::new("q", vec![DType::I32], vec![], Some(2))?;
/// queue.enqueue(vec![Tensor::scalar(1i32)], &Wait::forever())?;
/// queue.enqueue(vec![Tensor::scalar(2i32)], &Wait::forever())?;
/// // Full: a third waits for room, here for 1 ms.
/// let full = queue.enqueue(vec![Tensor::scalar(3i32)], &Wait::up_to(Duration::from_millis(1)));
/// assert_eq!(full.unwrap_err().code(), Code::DeadlineExceeded);
/// assert_eq!(queue.dequeue(&Wait::forever())?[0].scalar_value::<i32>()?, 1);
/// queue.close(false, &Wait::forever())?;
/// assert_eq!(queue.dequeue(&Wait::forever())?[0].scalar_value::<i32>()?, 2);
/// assert_eq!(queue.dequeue(&Wait::forever()).unwrap_err().code(), Code::OutOfRange);
/// # Ok::<(), op_core::Error>(())
/// ```
pub struct FifoQueue {
    name: String,
    dtypes: Vec<DType>,
    shapes: Vec<TensorShape>,
    capacity: Option<usize>,
    shared: Arc<Shared>,
}

/// The state and the condition variables, shared with the callbacks that
/// wake the waiters when a run is cancelled.
#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    /// Dequeues waiting for an element (or the close).
    readers: Condvar,
    /// Enqueues and closes waiting for their turn or for room.
    writers: Condvar,
}

#[derive(Default)]
struct State {
    elements: VecDeque<Tuple>,
    closed: bool,
    /// The enqueues and closes waiting, by id, in arrival order: only the
    /// first may go ahead.
    attempts: VecDeque<u64>,
    next_attempt: u64,
    /// Attempts with an id below this were cancelled by a close with
    /// `cancel_pending_enqueues` (and are no longer in `attempts`).
    cancelled_below: u64,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // The state is changed in single steps that cannot panic halfway
        // (a push, a pop, a flag), so a poisoned lock holds whole state.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wake_all(&self) {
        self.readers.notify_all();
        self.writers.notify_all();
    }
}

impl State {
    /// Removes attempt `id` from the line (it gave up or is done).
    fn leave(&mut self, id: u64) {
        if let Some(at) = self.attempts.iter().position(|&a| a == id) {
            self.attempts.remove(at);
        }
    }
}

/// The shapes of a `shapes` attr, each fully defined. `InvalidArgument`
/// for one that is not, with TensorFlow's message.
pub(crate) fn fully_defined(shapes: &[op_core::ShapeValue]) -> Result<Vec<TensorShape>> {
    shapes
        .iter()
        .map(|shape| {
            let sizes: Option<Vec<usize>> = if shape.unknown_rank {
                None
            } else {
                shape
                    .dims
                    .iter()
                    .map(|d| usize::try_from(d.size).ok())
                    .collect()
            };
            match sizes {
                Some(sizes) => TensorShape::try_new(sizes),
                None => Err(Error::invalid_argument(format!(
                    "Shape {shape} is not fully defined"
                ))),
            }
        })
        .collect()
}

impl FifoQueue {
    /// An open, empty queue named `name` (for messages) of tuples of
    /// `dtypes` (at least one) and, unless `shapes` is empty, of those
    /// shapes (one per dtype), holding at most `capacity` elements (`None`:
    /// no limit). `InvalidArgument` for no dtypes or a shape count that is
    /// neither, with TensorFlow's message.
    pub fn new(
        name: impl Into<String>,
        dtypes: Vec<DType>,
        shapes: Vec<TensorShape>,
        capacity: Option<usize>,
    ) -> Result<FifoQueue> {
        if dtypes.is_empty() {
            return Err(Error::invalid_argument(
                "a queue needs at least one component type",
            ));
        }
        if !shapes.is_empty() && shapes.len() != dtypes.len() {
            let types: Vec<String> = dtypes.iter().map(ToString::to_string).collect();
            let shapes: Vec<String> = shapes.iter().map(ToString::to_string).collect();
            return Err(Error::invalid_argument(format!(
                "Different number of component types.  Types: {}, Shapes: [{}]",
                types.join(", "),
                shapes.join(", ")
            )));
        }
        Ok(FifoQueue {
            name: name.into(),
            dtypes,
            shapes,
            capacity,
            shared: Arc::default(),
        })
    }

    /// The enqueues and closes waiting for their turn or for room (for
    /// diagnostics: it may change as soon as it is read).
    pub fn waiting(&self) -> usize {
        self.shared.lock().attempts.len()
    }

    /// Registers with `wait`'s cancellation, if any, a callback that wakes
    /// every waiter (under the lock, so no waiter misses it between its
    /// check and its wait).
    fn on_cancel<'a>(&self, wait: &Wait<'a>) -> Option<CancelRegistration<'a>> {
        let shared = self.shared.clone();
        wait.on_cancel(move || {
            let _state = shared.lock();
            shared.wake_all();
        })
    }

    /// Waits on `condvar` for at most what `wait` allows: the guard, or
    /// the error `wait.check` gives (`what` says what was waited for).
    fn wait_on<'g>(
        &self,
        condvar: &Condvar,
        state: MutexGuard<'g, State>,
        wait: &Wait<'_>,
        what: &str,
    ) -> std::result::Result<MutexGuard<'g, State>, (MutexGuard<'g, State>, Error)> {
        let left = match wait.check(|| format!("FIFOQueue {} {what}", quoted(&self.name))) {
            Ok(left) => left,
            Err(e) => return Err((state, e)),
        };
        Ok(match left {
            Some(left) => {
                condvar
                    .wait_timeout(state, left.max(Duration::from_micros(1)))
                    .unwrap_or_else(PoisonError::into_inner)
                    .0
            }
            None => condvar.wait(state).unwrap_or_else(PoisonError::into_inner),
        })
    }

    /// What an enqueue of a closed queue fails with (TensorFlow's words).
    fn closed_error(&self) -> Error {
        Error::cancelled(format!("FIFOQueue {} is closed.", quoted(&self.name)))
    }

    /// Waits until attempt `id` is first in line, then runs `step` on the
    /// state: `Some(result)` when the attempt is done (it then leaves the
    /// line), `None` to wait more. Leaves the line with the error when the
    /// wait ends or the attempt is cancelled by a close.
    fn attempt<T>(
        &self,
        wait: &Wait<'_>,
        what: &str,
        mut step: impl FnMut(&mut State) -> Option<Result<T>>,
    ) -> Result<T> {
        let _registration = self.on_cancel(wait);
        let mut state = self.shared.lock();
        let id = state.next_attempt;
        state.next_attempt += 1;
        state.attempts.push_back(id);
        loop {
            if id < state.cancelled_below {
                return Err(Error::cancelled("Enqueue operation was cancelled"));
            }
            if state.attempts.front() == Some(&id)
                && let Some(result) = step(&mut state)
            {
                state.leave(id);
                self.shared.wake_all();
                return result;
            }
            state = match self.wait_on(&self.shared.writers, state, wait, what) {
                Ok(state) => state,
                Err((mut state, e)) => {
                    state.leave(id);
                    // The next in line may go ahead now.
                    self.shared.writers.notify_all();
                    return Err(e);
                }
            };
        }
    }
}

impl QueueInterface for FifoQueue {
    fn name(&self) -> &str {
        &self.name
    }

    fn component_dtypes(&self) -> &[DType] {
        &self.dtypes
    }

    fn component_shapes(&self) -> &[TensorShape] {
        &self.shapes
    }

    fn capacity(&self) -> Option<usize> {
        self.capacity
    }

    fn size(&self) -> usize {
        self.shared.lock().elements.len()
    }

    fn is_closed(&self) -> bool {
        self.shared.lock().closed
    }

    fn enqueue(&self, tuple: Tuple, wait: &Wait<'_>) -> Result<()> {
        self.validate_tuple(&tuple)?;
        if self.is_closed() {
            return Err(self.closed_error());
        }
        let mut tuple = Some(tuple);
        self.attempt(wait, "is full", |state| {
            if state.closed {
                return Some(Err(self.closed_error()));
            }
            if self.capacity.is_some_and(|c| state.elements.len() >= c) {
                return None;
            }
            state.elements.extend(tuple.take());
            Some(Ok(()))
        })
    }

    fn dequeue(&self, wait: &Wait<'_>) -> Result<Tuple> {
        let _registration = self.on_cancel(wait);
        let mut state = self.shared.lock();
        loop {
            if let Some(tuple) = state.elements.pop_front() {
                // Room for the next enqueue.
                self.shared.writers.notify_all();
                return Ok(tuple);
            }
            if state.closed {
                return Err(Error::out_of_range(format!(
                    "FIFOQueue {} is closed and has insufficient elements (requested 1, current size 0)",
                    quoted(&self.name)
                )));
            }
            state = self
                .wait_on(&self.shared.readers, state, wait, "is empty")
                .map_err(|(_, e)| e)?;
        }
    }

    fn close(&self, cancel_pending_enqueues: bool, wait: &Wait<'_>) -> Result<()> {
        if cancel_pending_enqueues {
            let mut state = self.shared.lock();
            state.closed = true;
            state.cancelled_below = state.next_attempt;
            state.attempts.clear();
            self.shared.wake_all();
            return Ok(());
        }
        self.attempt(wait, "has enqueues waiting before the close", |state| {
            if state.closed {
                return Some(Err(Error::cancelled(format!(
                    "Queue {} is already closed.",
                    quoted(&self.name)
                ))));
            }
            state.closed = true;
            Some(Ok(()))
        })
    }
}

impl Resource for FifoQueue {
    /// `FIFOQueue 'q' (int32, float) of 3 elements, capacity 10, closed`:
    /// never the elements.
    fn debug_string(&self) -> String {
        let state = self.shared.lock();
        let types: Vec<String> = self.dtypes.iter().map(ToString::to_string).collect();
        let capacity = match self.capacity {
            Some(c) => format!(", capacity {c}"),
            None => String::new(),
        };
        format!(
            "FIFOQueue {} ({}) of {} elements{capacity}{}",
            quoted(&self.name),
            types.join(", "),
            state.elements.len(),
            if state.closed { ", closed" } else { "" }
        )
    }

    /// The elements' bytes (for `string`, each string's heap bytes too).
    fn memory_used(&self) -> usize {
        let state = self.shared.lock();
        let elements: usize = state.elements.iter().flatten().map(tensor_bytes).sum();
        size_of::<Self>() + elements
    }
}
