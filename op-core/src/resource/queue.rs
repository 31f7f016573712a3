//! [`QueueInterface`]: what every queue is to the ops that use one
//! (TensorFlow's `QueueInterface`, `queue_interface.h`), and [`Queue`],
//! the resource those ops' handles reach, which holds any queue.
//!
//! A queue holds *tuples*: each element is one tensor per component, of
//! the queue's component dtypes (and shapes, when it has them). Enqueue
//! and dequeue may wait, for room and for an element: they take a
//! [`Wait`] (a deadline, a cancellation), and their kernels say they may
//! block ([`OpKernel::may_block`](crate::OpKernel::may_block)), so that a
//! graph runs them where waiting holds up no other node.
//!
//! The queue ops (op-kernels' `queue` family: `QueueEnqueueV2`,
//! `QueueDequeueV2`, `QueueSizeV2`, `QueueCloseV2`) work on any [`Queue`]:
//! a new kind of queue implements [`QueueInterface`], and its create op
//! outputs a handle to `Queue::new(its_queue)`.

use std::any::Any;

use crate::resource::Resource;
use crate::shape::TensorShape;
use crate::tensor::Tensor;
use crate::wait::Wait;
use crate::{DType, Error, Result};

/// One element of a queue: a tensor per component.
pub type Tuple = Vec<Tensor>;

/// A queue of tuples, as the queue ops see it (TensorFlow's
/// `QueueInterface`).
///
/// Every method is safe to call from many threads at once; a call that
/// waits gives up with `DeadlineExceeded` at its [`Wait`]'s deadline and
/// with `Cancelled` when its cancellation manager is cancelled.
pub trait QueueInterface: Resource {
    /// The queue's name, for messages (its shared name, or a generated
    /// one).
    fn name(&self) -> &str;

    /// The dtype of each component.
    fn component_dtypes(&self) -> &[DType];

    /// The shape of each component, or none (an empty slice) when the
    /// queue takes components of any shape.
    fn component_shapes(&self) -> &[TensorShape];

    /// The most elements the queue holds, or `None` for no limit.
    fn capacity(&self) -> Option<usize>;

    /// The number of elements in the queue now.
    fn size(&self) -> usize;

    /// Whether the queue was closed.
    fn is_closed(&self) -> bool;

    /// Adds `tuple` (checked with [`validate_tuple`](Self::validate_tuple)),
    /// waiting for room while the queue is full. `Cancelled` if the queue
    /// is closed, or is closed with `cancel_pending_enqueues` while this
    /// waits. TensorFlow's `TryEnqueue`.
    fn enqueue(&self, tuple: Tuple, wait: &Wait<'_>) -> Result<()>;

    /// Takes the next element, waiting for one while the queue is empty.
    /// `OutOfRange` once the queue is closed and empty, including for a
    /// dequeue that was waiting when it closed. TensorFlow's `TryDequeue`.
    fn dequeue(&self, wait: &Wait<'_>) -> Result<Tuple>;

    /// Closes the queue: later enqueues fail, and dequeues fail once the
    /// elements left are taken. With `cancel_pending_enqueues`, enqueues
    /// waiting for room fail with `Cancelled`; without it, they are let in
    /// first (the close waits behind them), and closing a closed queue is
    /// `Cancelled`. TensorFlow's `Close`.
    fn close(&self, cancel_pending_enqueues: bool, wait: &Wait<'_>) -> Result<()>;

    /// `InvalidArgument` unless `tuple` has one tensor per component, of
    /// its dtype and, when the queue has shapes, of its shape; the
    /// messages are TensorFlow's (`ValidateTuple`).
    fn validate_tuple(&self, tuple: &[Tensor]) -> Result<()> {
        let dtypes = self.component_dtypes();
        if tuple.len() != dtypes.len() {
            return Err(Error::invalid_argument(format!(
                "Wrong number of components in tuple. Expected {}, got {}",
                dtypes.len(),
                tuple.len()
            )));
        }
        for (i, (tensor, &dtype)) in tuple.iter().zip(dtypes).enumerate() {
            if tensor.dtype() != dtype {
                return Err(Error::invalid_argument(format!(
                    "Type mismatch in tuple component {i}. Expected {dtype}, got {}",
                    tensor.dtype()
                )));
            }
        }
        for (i, (tensor, shape)) in tuple.iter().zip(self.component_shapes()).enumerate() {
            if tensor.dims() != shape.dims() {
                return Err(Error::invalid_argument(format!(
                    "Shape mismatch in tuple component {i}. Expected {shape}, got {}",
                    tensor.shape()
                )));
            }
        }
        Ok(())
    }
}

/// The resource a queue handle reaches: any [`QueueInterface`], so that
/// the queue ops work on every kind of queue.
///
/// ```
/// use op_core::resource::queue::{Queue, QueueInterface};
/// # use op_core::resource::Resource;
/// # use op_core::wait::Wait;
/// # use op_core::{DType, Result, TensorShape};
/// # use op_core::resource::queue::Tuple;
/// # struct Never;
/// # impl Resource for Never { fn debug_string(&self) -> String { "Never".into() } }
/// # impl QueueInterface for Never {
/// #     fn name(&self) -> &str { "never" }
/// #     fn component_dtypes(&self) -> &[DType] { &[DType::I32] }
/// #     fn component_shapes(&self) -> &[TensorShape] { &[] }
/// #     fn capacity(&self) -> Option<usize> { Some(0) }
/// #     fn size(&self) -> usize { 0 }
/// #     fn is_closed(&self) -> bool { true }
/// #     fn enqueue(&self, _: Tuple, _: &Wait<'_>) -> Result<()> { Err(op_core::Error::cancelled("closed")) }
/// #     fn dequeue(&self, _: &Wait<'_>) -> Result<Tuple> { Err(op_core::Error::out_of_range("closed")) }
/// #     fn close(&self, _: bool, _: &Wait<'_>) -> Result<()> { Ok(()) }
/// # }
///
/// let queue = Queue::new(Never);
/// assert_eq!(queue.name(), "never");                 // the interface, through `Deref`
/// assert!(queue.downcast_ref::<Never>().is_some());  // the queue itself
/// ```
pub struct Queue {
    queue: Box<dyn QueueInterface>,
}

impl Queue {
    /// The resource holding `queue`.
    pub fn new(queue: impl QueueInterface) -> Queue {
        Queue {
            queue: Box::new(queue),
        }
    }

    /// The queue, as a `T`, if it is one.
    pub fn downcast_ref<T: QueueInterface>(&self) -> Option<&T> {
        let any: &dyn Any = &*self.queue;
        any.downcast_ref::<T>()
    }
}

impl std::ops::Deref for Queue {
    type Target = dyn QueueInterface;

    fn deref(&self) -> &Self::Target {
        &*self.queue
    }
}

impl Resource for Queue {
    /// The queue's own.
    fn debug_string(&self) -> String {
        self.queue.debug_string()
    }

    /// The queue's own.
    fn memory_used(&self) -> usize {
        self.queue.memory_used()
    }
}

impl std::fmt::Debug for Queue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.debug_string())
    }
}
