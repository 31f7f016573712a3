//! The typed API over the queue ops (`tf.queue.FIFOQueue`):
//! [`FifoQueueHandle`] and its [`FifoQueueBuilder`].

use std::fmt;
use std::time::Duration;

use op_core::resource::queue::Queue;
use op_core::{DType, Op, OpCall, ResourceHandle, Result, Runtime, ShapeValue, Tensor};

use super::ops::{FifoQueueV2, QueueCloseV2, QueueDequeueV2, QueueEnqueueV2, QueueSizeV2};

/// A FIFO queue made and used through the ops: the Rust counterpart of
/// `tf.queue.FIFOQueue`.
///
/// It holds the queue's handle (a scalar `resource` tensor) and its
/// component dtypes. Clones share the queue, from any thread. A queue
/// without a shared name lives while this value, a clone or a copy of its
/// handle does; a named one lives in the runtime's resource manager.
///
/// ```
/// use std::time::Duration;
/// use op_core::{Code, DType, Tensor};
/// use op_kernels::queue::FifoQueueHandle;
///
/// let queue = FifoQueueHandle::new(&[DType::F32])?;
/// let err = queue.dequeue_timeout(Duration::from_millis(1)).unwrap_err();
/// assert_eq!(err.code(), Code::DeadlineExceeded);
/// queue.enqueue([Tensor::scalar(0.5f32)])?;
/// assert_eq!(queue.dequeue()?[0].scalar_value::<f32>()?, 0.5);
/// # Ok::<(), op_core::Error>(())
/// ```
#[derive(Clone)]
pub struct FifoQueueHandle<'r> {
    runtime: &'r Runtime,
    handle: Tensor,
    name: String,
    dtypes: Vec<DType>,
}

impl fmt::Debug for FifoQueueHandle<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FifoQueueHandle")
            .field("name", &self.name)
            .field("dtypes", &self.dtypes)
            .finish()
    }
}

/// The options of a new queue (`FIFOQueueV2`'s attrs): see
/// [`FifoQueueHandle::builder`].
#[derive(Clone, Debug)]
pub struct FifoQueueBuilder {
    dtypes: Vec<DType>,
    shapes: Vec<ShapeValue>,
    capacity: Option<usize>,
    container: String,
    shared_name: String,
}

impl FifoQueueBuilder {
    /// Each component of a tuple must have this shape (one per dtype,
    /// fully defined); by default, components of any shape.
    pub fn shapes(mut self, shapes: &[&[usize]]) -> Self {
        self.shapes = shapes
            .iter()
            .map(|dims| {
                let sizes: Vec<i64> = dims.iter().map(|&n| n as i64).collect();
                ShapeValue::from_sizes(&sizes)
            })
            .collect();
        self
    }

    /// At most `capacity` elements (enqueues wait for room); by default,
    /// no limit.
    pub fn capacity(mut self, capacity: usize) -> Self {
        self.capacity = Some(capacity);
        self
    }

    /// The queue named `shared_name` in the runtime's resource manager,
    /// shared by every handle of that name; by default a queue of its own.
    pub fn shared_name(mut self, shared_name: &str) -> Self {
        self.shared_name = shared_name.to_owned();
        self
    }

    /// The container of a shared queue; by default the manager's.
    pub fn container(mut self, container: &str) -> Self {
        self.container = container.to_owned();
        self
    }

    /// Makes (or, with a shared name, finds) the queue on
    /// [`Runtime::global`].
    pub fn build(self) -> Result<FifoQueueHandle<'static>> {
        self.build_on(Runtime::global())
    }

    /// Makes (or finds) the queue on `runtime` (`FIFOQueueV2`): its
    /// errors, such as `InvalidArgument` for shapes that do not fit the
    /// dtypes or a shared queue of other types.
    pub fn build_on(self, runtime: &Runtime) -> Result<FifoQueueHandle<'_>> {
        let capacity = self
            .capacity
            .map_or(-1, |c| i64::try_from(c).unwrap_or(i64::MAX));
        let mut outputs = OpCall::new(FifoQueueV2::NAME)
            .attr("component_types", self.dtypes.clone())
            .attr("shapes", self.shapes)
            .attr("capacity", capacity)
            .attr("container", self.container.as_str())
            .attr("shared_name", self.shared_name.as_str())
            .run_on(runtime)?;
        let handle = outputs.swap_remove(0);
        let name = runtime
            .resource_manager()
            .resource::<Queue>(&handle.scalar_value::<ResourceHandle>()?)?
            .name()
            .to_owned();
        Ok(FifoQueueHandle {
            runtime,
            handle,
            name,
            dtypes: self.dtypes,
        })
    }
}

/// `timeout_ms` for a timeout.
fn millis(timeout: Duration) -> i64 {
    i64::try_from(timeout.as_millis()).unwrap_or(i64::MAX)
}

impl FifoQueueHandle<'static> {
    /// A new queue of tuples of `dtypes`, with no limit, on
    /// [`Runtime::global`].
    pub fn new(dtypes: &[DType]) -> Result<Self> {
        Self::builder(dtypes).build()
    }
}

impl<'r> FifoQueueHandle<'r> {
    /// The options of a new queue of tuples of `dtypes`.
    pub fn builder(dtypes: &[DType]) -> FifoQueueBuilder {
        FifoQueueBuilder {
            dtypes: dtypes.to_vec(),
            shapes: Vec::new(),
            capacity: None,
            container: String::new(),
            shared_name: String::new(),
        }
    }

    /// The handle: a scalar `resource` tensor, for calling the ops
    /// directly.
    pub fn handle(&self) -> &Tensor {
        &self.handle
    }

    /// The queue's name: its shared name, or a generated one.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The dtype of each component.
    pub fn dtypes(&self) -> &[DType] {
        &self.dtypes
    }

    /// The runtime the ops run on.
    pub fn runtime(&self) -> &'r Runtime {
        self.runtime
    }

    fn enqueue_with(&self, tuple: Vec<Tensor>, timeout_ms: i64) -> Result<()> {
        OpCall::new(QueueEnqueueV2::NAME)
            .input(&self.handle)
            .input_list(tuple)
            .attr("timeout_ms", timeout_ms)
            .run_on(self.runtime)
            .map(drop)
    }

    /// Adds a tuple (`QueueEnqueueV2`), waiting for room while the queue
    /// is full. `Cancelled` if the queue is (or gets) closed.
    pub fn enqueue(&self, tuple: impl IntoIterator<Item = Tensor>) -> Result<()> {
        self.enqueue_with(tuple.into_iter().collect(), -1)
    }

    /// [`enqueue`](Self::enqueue), waiting at most `timeout`:
    /// `DeadlineExceeded` (and nothing added) past it.
    pub fn enqueue_timeout(
        &self,
        tuple: impl IntoIterator<Item = Tensor>,
        timeout: Duration,
    ) -> Result<()> {
        self.enqueue_with(tuple.into_iter().collect(), millis(timeout))
    }

    fn dequeue_with(&self, timeout_ms: i64) -> Result<Vec<Tensor>> {
        OpCall::new(QueueDequeueV2::NAME)
            .input(&self.handle)
            .attr("component_types", self.dtypes.clone())
            .attr("timeout_ms", timeout_ms)
            .run_on(self.runtime)
    }

    /// Takes the oldest tuple (`QueueDequeueV2`), waiting for one while
    /// the queue is empty. `OutOfRange` once it is closed and empty.
    pub fn dequeue(&self) -> Result<Vec<Tensor>> {
        self.dequeue_with(-1)
    }

    /// [`dequeue`](Self::dequeue), waiting at most `timeout`:
    /// `DeadlineExceeded` past it.
    pub fn dequeue_timeout(&self, timeout: Duration) -> Result<Vec<Tensor>> {
        self.dequeue_with(millis(timeout))
    }

    /// The number of tuples in the queue (`QueueSizeV2`).
    pub fn size(&self) -> Result<usize> {
        let outputs = OpCall::new(QueueSizeV2::NAME)
            .input(&self.handle)
            .run_on(self.runtime)?;
        Ok(usize::try_from(outputs[0].scalar_value::<i32>()?).unwrap_or(0))
    }

    fn close_with(&self, cancel_pending_enqueues: bool) -> Result<()> {
        OpCall::new(QueueCloseV2::NAME)
            .input(&self.handle)
            .attr("cancel_pending_enqueues", cancel_pending_enqueues)
            .run_on(self.runtime)
            .map(drop)
    }

    /// Closes the queue (`QueueCloseV2`) once the enqueues waiting for
    /// room are in: later enqueues fail, dequeues fail once it is empty.
    /// `Cancelled` if it is closed already.
    pub fn close(&self) -> Result<()> {
        self.close_with(false)
    }

    /// Closes the queue at once, failing the enqueues waiting for room
    /// with `Cancelled` (`cancel_pending_enqueues`).
    pub fn close_cancelling_enqueues(&self) -> Result<()> {
        self.close_with(true)
    }
}
