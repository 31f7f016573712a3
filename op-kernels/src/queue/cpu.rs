//! The CPU kernels of the queue ops. `FIFOQueueV2` makes (or finds) its
//! queue with [`ResourceOpState`]; the others reach any [`Queue`] through
//! its [`QueueInterface`](op_core::resource::queue::QueueInterface). The
//! kernels that wait (enqueue, dequeue, close) say they may block, so a
//! graph runs them on threads of their own.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use op_core::error::quoted;
use op_core::resource::ResourceOpState;
use op_core::resource::queue::Queue;
use op_core::{
    Code, DType, Error, KernelConstruction, KernelContext, Result, Tensor, TensorShape, kernel,
};

use super::ops::{FifoQueueV2, QueueCloseV2, QueueDequeueV2, QueueEnqueueV2, QueueSizeV2};
use super::resource::{FifoQueue, fully_defined};

/// The timeout a `timeout_ms` attr gives: none for -1, else that many
/// milliseconds. `InvalidArgument` below -1.
fn timeout(timeout_ms: i64) -> Result<Option<Duration>> {
    match timeout_ms {
        -1 => Ok(None),
        ms => u64::try_from(ms)
            .map(|ms| Some(Duration::from_millis(ms)))
            .map_err(|_| {
                Error::invalid_argument(format!(
                    "attr timeout_ms must be -1 (no timeout) or at least 0, got {ms}"
                ))
            }),
    }
}

/// `(int32, float)`: a tuple's dtypes, for messages.
fn types_text(dtypes: impl IntoIterator<Item = DType>) -> String {
    let names: Vec<String> = dtypes.into_iter().map(|d| d.to_string()).collect();
    format!("({})", names.join(", "))
}

/// `InvalidArgument` naming the op and node unless `given` (what the
/// node's `what` says) are the queue's component dtypes.
fn check_signature(
    ctx: &KernelContext<'_>,
    queue: &Queue,
    given: &[DType],
    what: &str,
) -> Result<()> {
    if given == queue.component_dtypes() {
        return Ok(());
    }
    Err(ctx.error(
        Code::InvalidArgument,
        format_args!(
            "the queue {} holds tuples of {}, but {what} {}",
            quoted(queue.name()),
            types_text(queue.component_dtypes().iter().copied()),
            types_text(given.iter().copied())
        ),
    ))
}

/// A queue's error, naming the op and node.
fn in_node(ctx: &KernelContext<'_>, e: Error) -> Error {
    ctx.error(e.code(), e.message())
}

/// Generated names of the queues private to a node or an eager call.
static NEXT_PRIVATE: AtomicU64 = AtomicU64::new(0);

/// `FIFOQueueV2`'s kernel: its queue is shared by name, one per graph node,
/// or a new one per eager call ([`ResourceOpState`]'s rules).
pub(super) struct FifoQueueOp {
    state: ResourceOpState<Queue>,
    dtypes: Vec<DType>,
    shapes: Vec<TensorShape>,
    capacity: Option<usize>,
}

#[kernel(op = FifoQueueV2)]
impl FifoQueueOp {
    fn new(c: &KernelConstruction<'_>) -> Result<Self> {
        let attrs: FifoQueueV2 = c.attrs()?;
        let capacity = usize::try_from(attrs.capacity).ok();
        let shapes = fully_defined(&attrs.shapes)?;
        // The attrs are checked once, here, by making a queue of them.
        FifoQueue::new("", attrs.component_types.clone(), shapes.clone(), capacity)?;
        Ok(FifoQueueOp {
            state: ResourceOpState::new(c, false)?,
            dtypes: attrs.component_types,
            shapes,
            capacity,
        })
    }

    fn compute(&self, ctx: &mut KernelContext<'_>) -> Result<()> {
        let info = self.state.container_info();
        let private = info.resource_is_private_to_kernel();
        let queue = self.state.get_or_create(ctx, || {
            let name = if private {
                let n = NEXT_PRIVATE.fetch_add(1, Ordering::Relaxed);
                format!("_{n}_{}", ctx.node_name())
            } else {
                info.name().to_owned()
            };
            let queue = FifoQueue::new(
                name,
                self.dtypes.clone(),
                self.shapes.clone(),
                self.capacity,
            )?;
            Ok(Queue::new(queue))
        })?;
        if !private {
            self.check_shared(ctx, &queue)?;
        }
        let handle = self.state.handle(ctx, queue);
        ctx.set_output(0, Tensor::scalar(handle))
    }
}

impl FifoQueueOp {
    /// `InvalidArgument` unless the shared queue found is a FIFO queue of
    /// this node's types, shapes and capacity (TensorFlow's
    /// `MatchesNodeDef`, with its messages).
    fn check_shared(&self, ctx: &KernelContext<'_>, queue: &Arc<Queue>) -> Result<()> {
        let name = quoted(queue.name());
        let mismatch = |message: String| Err(ctx.error(Code::InvalidArgument, message));
        let Some(fifo) = queue.downcast_ref::<FifoQueue>() else {
            return mismatch(format!(
                "Shared queue {name} is not a FIFOQueue: {}",
                queue.debug_string()
            ));
        };
        use op_core::resource::queue::QueueInterface as _;
        if fifo.component_dtypes() != self.dtypes.as_slice() {
            return mismatch(format!(
                "Shared queue {name} has component types {} but requested component types were {}",
                types_text(fifo.component_dtypes().iter().copied()),
                types_text(self.dtypes.iter().copied())
            ));
        }
        if fifo.capacity() != self.capacity {
            let text = |c: Option<usize>| c.map_or("-1 (no limit)".to_owned(), |c| c.to_string());
            return mismatch(format!(
                "Shared queue {name} has capacity {} but requested capacity was {}",
                text(fifo.capacity()),
                text(self.capacity)
            ));
        }
        if fifo.component_shapes() != self.shapes.as_slice() {
            let text = |shapes: &[TensorShape]| {
                let shapes: Vec<String> = shapes.iter().map(ToString::to_string).collect();
                format!("[{}]", shapes.join(", "))
            };
            return mismatch(format!(
                "Shared queue {name} has component shapes {} but requested component shapes were {}",
                text(fifo.component_shapes()),
                text(&self.shapes)
            ));
        }
        Ok(())
    }
}

/// `QueueEnqueueV2`'s kernel.
pub(super) struct EnqueueKernel {
    timeout: Option<Duration>,
}

#[kernel(op = QueueEnqueueV2)]
impl EnqueueKernel {
    fn new(c: &KernelConstruction<'_>) -> Result<Self> {
        let attrs: QueueEnqueueV2 = c.attrs()?;
        Ok(EnqueueKernel {
            timeout: timeout(attrs.timeout_ms)?,
        })
    }

    fn compute(&self, ctx: &mut KernelContext<'_>) -> Result<()> {
        let queue = ctx.resource::<Queue>(0)?;
        let components = ctx.input_list("components")?;
        let dtypes: Vec<DType> = components.iter().map(Tensor::dtype).collect();
        check_signature(ctx, &queue, &dtypes, "the components given are")?;
        let tuple = components.to_vec();
        queue
            .enqueue(tuple, &ctx.wait(self.timeout))
            .map_err(|e| in_node(ctx, e))
    }

    fn may_block(&self) -> bool {
        true
    }
}

/// `QueueDequeueV2`'s kernel.
pub(super) struct DequeueKernel {
    dtypes: Vec<DType>,
    timeout: Option<Duration>,
}

#[kernel(op = QueueDequeueV2)]
impl DequeueKernel {
    fn new(c: &KernelConstruction<'_>) -> Result<Self> {
        let attrs: QueueDequeueV2 = c.attrs()?;
        Ok(DequeueKernel {
            dtypes: attrs.component_types,
            timeout: timeout(attrs.timeout_ms)?,
        })
    }

    fn compute(&self, ctx: &mut KernelContext<'_>) -> Result<()> {
        let queue = ctx.resource::<Queue>(0)?;
        check_signature(ctx, &queue, &self.dtypes, "component_types is")?;
        let tuple = queue
            .dequeue(&ctx.wait(self.timeout))
            .map_err(|e| in_node(ctx, e))?;
        for (i, component) in tuple.into_iter().enumerate() {
            ctx.set_output(i, component)?;
        }
        Ok(())
    }

    fn may_block(&self) -> bool {
        true
    }
}

#[kernel(op = QueueSizeV2)]
fn queue_size(_ctx: &mut KernelContext<'_>, #[resource] handle: &Queue) -> Result<Tensor> {
    // A size past int32 (TensorFlow's type for it) reads as the largest.
    let size = i32::try_from(handle.size()).unwrap_or(i32::MAX);
    Ok(Tensor::scalar(size))
}

/// `QueueCloseV2`'s kernel: a close without `cancel_pending_enqueues`
/// waits behind the enqueues before it.
pub(super) struct CloseKernel {
    cancel_pending_enqueues: bool,
}

#[kernel(op = QueueCloseV2)]
impl CloseKernel {
    fn new(c: &KernelConstruction<'_>) -> Result<Self> {
        let attrs: QueueCloseV2 = c.attrs()?;
        Ok(CloseKernel {
            cancel_pending_enqueues: attrs.cancel_pending_enqueues,
        })
    }

    fn compute(&self, ctx: &mut KernelContext<'_>) -> Result<()> {
        let queue = ctx.resource::<Queue>(0)?;
        queue
            .close(self.cancel_pending_enqueues, &ctx.wait(None))
            .map_err(|e| in_node(ctx, e))
    }

    fn may_block(&self) -> bool {
        true
    }
}
