//! Queues: TensorFlow's FIFO queue (`tf.queue.FIFOQueue`), a
//! [`QueueInterface`](op_core::resource::queue::QueueInterface) resource
//! shared by the ops that pass its handle, for handing tuples of tensors
//! from producers to consumers, on threads or between a graph's nodes.
//!
//! | op | what it does | shape function |
//! | --- | --- | --- |
//! | `FIFOQueueV2` | a handle to a FIFO queue: shared by name, one per graph node, or a new one per eager call | the library's `scalar` |
//! | `QueueEnqueueV2` | adds a tuple, waiting for room in a full queue | [`scalar_handle`](crate::variable::scalar_handle) |
//! | `QueueDequeueV2` | takes the oldest tuple, waiting for one in an empty queue | [`dequeue_shape`]: unknown |
//! | `QueueSizeV2` | the number of tuples in the queue | [`scalar_handle_scalar_output`](crate::variable::scalar_handle_scalar_output) |
//! | `QueueCloseV2` | closes the queue, optionally cancelling the enqueues waiting | [`scalar_handle`](crate::variable::scalar_handle) |
//!
//! The ops have TensorFlow's names, signatures and defaults, and its
//! errors:
//!
//! - an enqueue of a closed queue is `Cancelled` ("FIFOQueue 'q' is
//!   closed."), as is one waiting for room when the queue is closed with
//!   `cancel_pending_enqueues` ("Enqueue operation was cancelled");
//! - a dequeue of a closed, empty queue is `OutOfRange` ("FIFOQueue 'q' is
//!   closed and has insufficient elements (requested 1, current size
//!   0)"), and closing wakes the dequeues waiting with that error;
//! - closing without `cancel_pending_enqueues` waits until the enqueues
//!   already waiting for room are in (their elements stay dequeuable), and
//!   closing a closed queue that way is `Cancelled`;
//! - a tuple of the wrong dtypes, count or (for a queue with shapes)
//!   shapes is `InvalidArgument`, as is a `FIFOQueueV2` whose shared queue
//!   has other component types, shapes or capacity.
//!
//! **Timeouts.** `timeout_ms` (of enqueue and dequeue) is -1 by default:
//! wait as long as it takes. TensorFlow rejects any other value ("Timeout
//! not supported yet"); here a value of 0 or more is a deadline, after
//! which the call fails with `DeadlineExceeded` and changes nothing (0:
//! do not wait at all).
//!
//! **Which queue.** A `FIFOQueueV2` with a `shared_name` reaches the queue
//! of that name in its `container` of the runtime's resource manager
//! (made on first use), from every node and every call. Without one, a
//! graph node has one queue for all its runs, and each eager call makes a
//! new queue (as each `tf.queue.FIFOQueue(...)` in TensorFlow's eager mode
//! does), owned by the handle it returns: the queue goes with the last
//! copy of that handle. `DestroyResourceOp` removes a shared queue from
//! the manager, and does nothing to an owned one.
//!
//! **Waiting in graphs.** The enqueue, dequeue and close kernels may wait
//! ([`OpKernel::may_block`](op_core::OpKernel::may_block)): a graph's
//! session runs each on a thread of its own, so a dequeue that waits for
//! an enqueue of the same run does not hold up that enqueue, whatever the
//! size of the inter-op pool. When a node of the run fails, the run's
//! waits are cancelled (`Cancelled`), so a failed run does not hang on a
//! dequeue whose enqueue will never come. An eager call waits on the
//! caller's thread.
//!
//! ```
//! use op_core::{DType, Tensor};
//! use op_kernels::queue::FifoQueueHandle;
//!
//! let queue = FifoQueueHandle::builder(&[DType::I32, DType::String]).capacity(10).build()?;
//! queue.enqueue([Tensor::scalar(1i32), Tensor::scalar(b"one".to_vec())])?;
//! queue.enqueue([Tensor::scalar(2i32), Tensor::scalar(b"two".to_vec())])?;
//! assert_eq!(queue.size()?, 2);
//!
//! let first = queue.dequeue()?;
//! assert_eq!(first[0].scalar_value::<i32>()?, 1);
//! queue.close()?;
//! assert_eq!(queue.dequeue()?[0].scalar_value::<i32>()?, 2);   // what is left still comes out
//! assert_eq!(queue.dequeue().unwrap_err().code(), op_core::Code::OutOfRange);
//! # Ok::<(), op_core::Error>(())
//! ```
//!
//! Producers and consumers on threads share a queue through its handle
//! (a clone shares the queue):
//!
//! ```
//! use op_core::{Code, DType, Tensor};
//! use op_kernels::queue::FifoQueueHandle;
//!
//! let queue = FifoQueueHandle::builder(&[DType::I64]).capacity(4).build()?;
//! let total = std::thread::scope(|s| {
//!     let consumer = s.spawn(|| {
//!         let mut total = 0;
//!         loop {
//!             match queue.dequeue() {
//!                 Ok(tuple) => total += tuple[0].scalar_value::<i64>().unwrap(),
//!                 Err(e) if e.code() == Code::OutOfRange => return total,
//!                 Err(e) => panic!("{e}"),
//!             }
//!         }
//!     });
//!     for i in 1..=100i64 {
//!         queue.enqueue([Tensor::scalar(i)]).unwrap();   // waits while 4 are queued
//!     }
//!     queue.close().unwrap();
//!     consumer.join().unwrap()
//! });
//! assert_eq!(total, 5050);
//! # Ok::<(), op_core::Error>(())
//! ```
//!
//! A new kind of queue implements `QueueInterface` and outputs a handle to
//! [`Queue::new`](op_core::resource::queue::Queue::new) of it; the four
//! queue ops then work on it too.
//!
//! # The files
//!
//! - `resource.rs`: the resource, [`FifoQueue`]: the elements, the line of
//!   enqueues and closes, the waits.
//! - `ops.rs`: the five ops and the dequeue's shape function.
//! - `cpu.rs`: the CPU kernels.
//! - `client.rs`: the typed API, [`FifoQueueHandle`].
//! - `opcheck.rs`: how opcheck (`op_core::testing`) draws queues and
//!   tuples for the ops' contract tests (every wait bounded by a timeout).

mod client;
mod cpu;
mod opcheck;
mod ops;
mod resource;

pub use client::{FifoQueueBuilder, FifoQueueHandle};
pub use ops::*;
pub use resource::FifoQueue;
