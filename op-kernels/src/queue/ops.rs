//! The declarations of the queue ops (TensorFlow's `data_flow_ops.cc`
//! signatures) and their shape functions.
//!
//! Every op here is `not_differentiable`, as TensorFlow marks its queue
//! ops (`data_flow_grad.py`): a queue's contents are state, and no
//! gradient flows through it.

use op_core::shape_inference::InferenceContext;
use op_core::{DType, Result, ShapeValue, register_op};

use crate::variable::{scalar_handle, scalar_handle_scalar_output};

// ---- Shape functions ----

/// `QueueDequeueV2`: the handle must be a scalar; each component's shape
/// is unknown (TensorFlow reads them from the handle's shapes and types,
/// which a handle does not carry here).
pub fn dequeue_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    scalar_handle(c)?;
    for i in 0..c.num_outputs() {
        let unknown = c.unknown_shape();
        c.set_output(i, unknown)?;
    }
    Ok(())
}

// ---- Ops (TensorFlow's `data_flow_ops.cc` signatures) ----

/// A queue that produces elements in first-in first-out order.
///
/// Each element is a tuple of one tensor per component. With a
/// `shared_name`, every node and call naming it in `container` reaches one
/// queue (in the runtime's resource manager). Without one, each graph node
/// has a queue of its own for all its runs, and each eager call makes a new
/// queue; the handle owns it, and it goes with the handle's last copy.
///
/// handle: the handle to the queue, a scalar.
#[register_op(
    name = "FIFOQueueV2",
    outputs("handle: resource"),
    stateful,
    not_differentiable,
    shape = "scalar"
)]
pub struct FifoQueueV2 {
    /// The type of each component in a value.
    #[attr(min = 1)]
    pub component_types: Vec<DType>,
    /// The shape of each component in a value: none (the shapes of the
    /// elements are not constrained) or one fully defined shape per
    /// component.
    #[attr(default = [], min = 0)]
    pub shapes: Vec<ShapeValue>,
    /// The upper bound on the number of elements in this queue; negative
    /// numbers mean no limit.
    #[attr(default = -1)]
    pub capacity: i64,
    /// If non-empty, this queue is placed in the given container;
    /// otherwise, a default container is used.
    #[attr(default = "")]
    pub container: String,
    /// If non-empty, this queue is shared under the given name.
    #[attr(default = "")]
    pub shared_name: String,
}

/// Enqueues a tuple of one or more tensors in the given queue.
///
/// If the queue is full, this waits until the tuple is enqueued (or
/// `timeout_ms` elapses). `Cancelled` if the queue is closed, or is
/// closed with `cancel_pending_enqueues` while this waits.
///
/// handle: the handle to a queue.
/// components: one or more tensors from which the enqueued tensors should
///   be taken, one per component of the queue's tuples.
#[register_op(
    attrs("Tcomponents: list(type) >= 1"),
    inputs("handle: resource", "components: Tcomponents"),
    stateful,
    not_differentiable,
    shape_fn = scalar_handle
)]
pub struct QueueEnqueueV2 {
    /// How long to wait for room in a full queue, in milliseconds: -1 (the
    /// default) waits as long as it takes; past a finite timeout the call
    /// is `DeadlineExceeded`. (TensorFlow does not support timeouts yet.)
    #[attr(default = -1)]
    pub timeout_ms: i64,
}

/// Dequeues a tuple of one or more tensors from the given queue.
///
/// If the queue is empty, this waits until an element is there (or
/// `timeout_ms` elapses). `OutOfRange` once the queue is closed and
/// empty, also for a dequeue that was waiting when it closed.
///
/// handle: the handle to a queue.
/// components: the dequeued tuple, one tensor per component.
#[register_op(
    inputs("handle: resource"),
    outputs("components: component_types"),
    stateful,
    not_differentiable,
    shape_fn = dequeue_shape
)]
pub struct QueueDequeueV2 {
    /// The type of each component in a tuple: the queue's.
    #[attr(min = 1)]
    pub component_types: Vec<DType>,
    /// How long to wait for an element of an empty queue, in
    /// milliseconds: -1 (the default) waits as long as it takes; past a
    /// finite timeout the call is `DeadlineExceeded`. (TensorFlow does not
    /// support timeouts yet.)
    #[attr(default = -1)]
    pub timeout_ms: i64,
}

/// Computes the number of elements in the given queue.
///
/// handle: the handle to a queue.
/// size: the number of elements, a scalar.
#[register_op(
    inputs("handle: resource"),
    outputs("size: int32"),
    stateful,
    not_differentiable,
    shape_fn = scalar_handle_scalar_output
)]
pub struct QueueSizeV2;

/// Closes the given queue.
///
/// No more elements will be enqueued: later enqueues fail with
/// `Cancelled`. Dequeues go on succeeding while elements remain, then
/// fail with `OutOfRange` instead of waiting. Without
/// `cancel_pending_enqueues`, enqueues waiting for room are let in first
/// (the close waits behind them), and closing a closed queue is
/// `Cancelled`.
///
/// handle: the handle to a queue.
#[register_op(
    inputs("handle: resource"),
    stateful,
    not_differentiable,
    shape_fn = scalar_handle
)]
pub struct QueueCloseV2 {
    /// If true, all pending enqueue requests that are blocked on the given
    /// queue will be cancelled.
    #[attr(default = false)]
    pub cancel_pending_enqueues: bool,
}
