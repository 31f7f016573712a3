//! [`KernelContext`]: what a kernel sees while it computes (TensorFlow's
//! `OpKernelContext`).

use std::ops::Range;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use ndarray::ArrayViewD;
use op_spec::{ArgDef, DType};

use crate::allocator::HostAllocator;
use crate::device::DeviceState;
use crate::element::Element;
use crate::error::quoted;
use crate::op_instance::OpInstance;
use crate::resource::{Resource, ResourceMgr};
use crate::resource_handle::ResourceHandle;
use crate::runtime::placement::Placement;
use crate::shape::TensorShape;
use crate::tensor::Tensor;
use crate::threads::ThreadPool;
use crate::wait::{CancellationManager, Wait};
use crate::{Code, Device, Error, OpDef, Result};

/// Stands in for an input whose buffer was forwarded to an output.
static FORWARDED: LazyLock<Tensor> = LazyLock::new(|| Tensor::scalar(false));

/// The inputs, outputs and attrs of one kernel call.
///
/// Inputs and outputs are addressed by their flattened index (a list arg
/// takes one index per tensor) or by the arg's name. Errors name the op, the
/// node and the input or output at fault; the runtime adds the kernel and
/// node as context to any error `compute` returns.
///
/// ```
/// use op_core::{KernelContext, Result, Tensor};
///
/// // The body of a ZeroOut kernel: keep the first element, zero the rest.
/// fn zero_out(ctx: &mut KernelContext<'_>) -> Result<()> {
///     let dims = ctx.input(0)?.dims().to_vec();
///     let output = ctx.forward_input_or_allocate_output(0, 0, &dims)?;
///     let values = output.as_slice_mut::<i32>()?;
///     values.iter_mut().skip(1).for_each(|v| *v = 0);
///     Ok(())
/// }
/// ```
pub struct KernelContext<'a> {
    op: &'a OpDef,
    node: &'a OpInstance,
    inputs: &'a mut [Tensor],
    /// Inputs whose buffers went to an output; usually empty (no allocation).
    forwarded: Vec<usize>,
    outputs: &'a mut [Option<Tensor>],
    /// Buffers the caller placed outputs in, by output index
    /// ([`PreparedOp::run_placed`](crate::PreparedOp::run_placed)); empty
    /// otherwise. Behind a lock because outputs are made through `&self`
    /// (while inputs are borrowed), and a context is shared with the
    /// intra-op threads.
    placed: Mutex<&'a mut [Option<Tensor>]>,
    /// Whether `placed` is in use: ordinary calls skip the lock.
    placing: bool,
    /// The device's allocator, threads and resources.
    state: &'a DeviceState,
    /// Which outputs a device kernel makes in host memory.
    placement: &'a Placement,
    /// What cancels the call's waits: the run's, in a graph.
    cancellation: Option<&'a CancellationManager>,
}

impl<'a> KernelContext<'a> {
    /// A context over `inputs` (already checked against the node's input
    /// dtypes) and `outputs` (one `None` per output).
    pub(crate) fn new(
        op: &'a OpDef,
        node: &'a OpInstance,
        inputs: &'a mut [Tensor],
        outputs: &'a mut [Option<Tensor>],
        state: &'a DeviceState,
        placement: &'a Placement,
    ) -> Self {
        KernelContext {
            op,
            node,
            inputs,
            forwarded: Vec::new(),
            outputs,
            placed: Mutex::new(&mut []),
            placing: false,
            state,
            placement,
            cancellation: None,
        }
    }

    /// This context, whose waits `cancellation` cuts short.
    pub(crate) fn with_cancellation(
        mut self,
        cancellation: Option<&'a CancellationManager>,
    ) -> Self {
        self.cancellation = cancellation;
        self
    }

    /// What cancels this call's waits: the run's cancellation manager in a
    /// graph (cancelled when a node of the run fails), none for an eager
    /// call. See [`crate::wait`].
    pub fn cancellation(&self) -> Option<&'a CancellationManager> {
        self.cancellation
    }

    /// How long a kernel that blocks may wait in this call: up to
    /// `timeout` (none: as long as it takes), and until the call's
    /// [`cancellation`](Self::cancellation).
    pub fn wait(&self, timeout: Option<std::time::Duration>) -> Wait<'a> {
        let wait = Wait::forever().timeout(timeout);
        match self.cancellation {
            Some(c) => wait.cancelled_by(c),
            None => wait,
        }
    }

    /// This context, with `placed[i]` the buffer to make output `i` in
    /// when the kernel asks for one of its dtype and shape.
    pub(crate) fn with_placed(mut self, placed: &'a mut [Option<Tensor>]) -> Self {
        self.placing = placed.iter().any(Option::is_some);
        self.placed = Mutex::new(placed);
        self
    }

    /// The buffer placed for output `index`, taken, if there is one of
    /// `dtype` and shape `dims`.
    #[inline]
    pub(crate) fn take_placed(&self, index: usize, dtype: DType, dims: &[usize]) -> Option<Tensor> {
        if !self.placing {
            return None;
        }
        let mut placed = self.placed.lock().unwrap_or_else(PoisonError::into_inner);
        let slot = placed.get_mut(index)?;
        let fits = slot
            .as_ref()
            .is_some_and(|t| t.dtype() == dtype && t.dims() == dims);
        if fits { slot.take() } else { None }
    }

    /// The device the kernel runs on.
    #[inline]
    pub fn device(&self) -> Device {
        self.state.device
    }

    /// The device that holds the runtime's resources, which the handles
    /// this kernel makes name and the handles it reads must name: the
    /// runtime's device, also for a host kernel that a device runtime fell
    /// back to (see [`Runtime::strict_placement`](crate::Runtime::strict_placement)).
    #[inline]
    pub fn resource_device(&self) -> Device {
        self.state.resource_device
    }

    /// The runtime's intra-op thread pool, for splitting this call's work
    /// ([`ThreadPool::shard`]). The reference outlives the borrow of the
    /// context, so a kernel can hold it while it writes an output:
    ///
    /// ```
    /// # use op_core::{KernelContext, Result};
    /// fn negate(ctx: &mut KernelContext<'_>) -> Result<()> {
    ///     let threads = ctx.threads();
    ///     let values = ctx.forward_input_to_output(0, 0)?.as_slice_mut::<f32>()?;
    ///     threads.shard_slice(values, 1, |_, block| block.iter_mut().for_each(|v| *v = -*v));
    ///     Ok(())
    /// }
    /// ```
    #[inline]
    pub fn threads(&self) -> &'a ThreadPool {
        &self.state.threads
    }

    /// The runtime's allocator, which outputs come from.
    #[inline]
    pub fn allocator(&self) -> &'a HostAllocator {
        &self.state.allocator
    }

    /// The device's resource manager, for kernels of stateful ops.
    pub fn resource_manager(&self) -> &'a ResourceMgr {
        &self.state.resources
    }

    /// The op's definition.
    pub fn op_def(&self) -> &'a OpDef {
        self.op
    }

    /// The op's name.
    pub fn op_name(&self) -> &'a str {
        &self.op.name
    }

    /// The node: attr values and input and output dtypes.
    pub fn instance(&self) -> &'a OpInstance {
        self.node
    }

    /// The node's name.
    pub fn node_name(&self) -> &'a str {
        self.node.name()
    }

    /// The number of input tensors (list args flattened).
    pub fn num_inputs(&self) -> usize {
        self.inputs.len()
    }

    /// The number of output tensors (list args flattened).
    pub fn num_outputs(&self) -> usize {
        self.outputs.len()
    }

    /// An error with `code` whose message starts with the op and node:
    /// `op ReadVariableOp (node 'read'): message`, the form of every error
    /// the context itself returns.
    pub fn error(&self, code: Code, message: impl std::fmt::Display) -> Error {
        Error::new(code, format!("{}: {message}", self.node))
    }

    fn invalid(&self, message: std::fmt::Arguments<'_>) -> Error {
        self.error(Code::InvalidArgument, message)
    }

    /// Input tensor `index`.
    #[inline]
    pub fn input(&self, index: usize) -> Result<&Tensor> {
        if !self.forwarded.is_empty() && self.forwarded.contains(&index) {
            return Err(self.invalid(format_args!(
                "input {index} was forwarded to an output and can no longer be read"
            )));
        }
        self.inputs.get(index).ok_or_else(|| {
            self.invalid(format_args!(
                "asked for input {index}, but the op has {} input tensor(s)",
                self.inputs.len()
            ))
        })
    }

    /// The tensors of input arg number `arg` (in the op's input order): one
    /// for a single-tensor arg, any number for a list arg.
    pub fn input_arg(&self, arg: usize) -> Result<&[Tensor]> {
        let range = self.node.input_arg_range(arg).ok_or_else(|| {
            self.invalid(format_args!(
                "asked for input arg {arg}, but the op has {} input arg(s)",
                self.op.inputs.len()
            ))
        })?;
        self.check_not_forwarded(&range)?;
        Ok(&self.inputs[range])
    }

    fn check_not_forwarded(&self, range: &Range<usize>) -> Result<()> {
        match self.forwarded.iter().find(|i| range.contains(i)) {
            Some(i) => Err(self.invalid(format_args!(
                "input {i} was forwarded to an output and can no longer be read"
            ))),
            None => Ok(()),
        }
    }

    fn input_arg_index(&self, name: &str) -> Result<usize> {
        self.op
            .inputs
            .iter()
            .position(|a| a.name == name)
            .ok_or_else(|| {
                self.invalid(format_args!(
                    "has no input named '{name}' (inputs: {})",
                    arg_names(&self.op.inputs)
                ))
            })
    }

    /// The tensor of the single-tensor input arg `name`.
    pub fn input_by_name(&self, name: &str) -> Result<&Tensor> {
        self.input(self.single_input_index(name)?)
    }

    /// The flattened index of the single-tensor input arg `name`.
    fn single_input_index(&self, name: &str) -> Result<usize> {
        let arg = self.input_arg_index(name)?;
        if self.op.inputs[arg].is_list() {
            return Err(self.invalid(format_args!(
                "input '{name}' is a list of tensors: use input_list(\"{name}\")"
            )));
        }
        self.node
            .input_arg_range(arg)
            .map(|range| range.start)
            .ok_or_else(|| self.invalid(format_args!("has no input arg {arg}")))
    }

    /// The tensors of the list input arg `name` (`N * T` or `list(type)`).
    pub fn input_list(&self, name: &str) -> Result<&[Tensor]> {
        self.input_arg(self.input_arg_index(name)?)
    }

    /// A typed view of input `index`. Errors if its dtype is not `T`'s.
    pub fn input_view<T: Element>(&self, index: usize) -> Result<ArrayViewD<'_, T>> {
        self.input(index)?
            .view::<T>()
            .map_err(|e| self.invalid(format_args!("input {index}: {}", e.message())))
    }

    /// The elements of input `index`, in row-major order.
    #[inline]
    pub fn input_slice<T: Element>(&self, index: usize) -> Result<&[T]> {
        self.typed(index, self.input(index)?)
    }

    /// The elements of `tensor`, input `index`, or an error naming it.
    #[inline]
    pub(crate) fn typed<'t, T: Element>(
        &self,
        index: usize,
        tensor: &'t Tensor,
    ) -> Result<&'t [T]> {
        tensor
            .as_slice::<T>()
            .map_err(|e| self.invalid(format_args!("input {index}: {}", e.message())))
    }

    /// `input 1 ('key')`, or `input 2 ('xs'[1])` for a list element.
    pub(crate) fn describe_input(&self, index: usize) -> String {
        self.node.describe_input(self.op, index)
    }

    /// The value of input `index`, which must be a scalar; otherwise an
    /// `InvalidArgument` error naming the input and its shape.
    pub fn input_scalar<T: Element>(&self, index: usize) -> Result<T> {
        self.scalar_ref(index).cloned()
    }

    /// The value of input `index`, which must be a scalar, by reference.
    fn scalar_ref<T: Element>(&self, index: usize) -> Result<&T> {
        let tensor = self.input(index)?;
        if tensor.rank() != 0 {
            return Err(self.invalid(format_args!(
                "{} must be a scalar, but has shape {}",
                self.describe_input(index),
                tensor.shape()
            )));
        }
        tensor
            .as_slice::<T>()
            .map(|values| &values[0])
            .map_err(|e| self.invalid(format_args!("input {index}: {}", e.message())))
    }

    /// The elements of input `index`, which must be a vector; otherwise an
    /// `InvalidArgument` error naming the input and its shape.
    pub fn input_vector<T: Element>(&self, index: usize) -> Result<&[T]> {
        let tensor = self.input(index)?;
        if tensor.rank() != 1 {
            return Err(self.invalid(format_args!(
                "{} must be a vector, but has shape {}",
                self.describe_input(index),
                tensor.shape()
            )));
        }
        self.input_slice::<T>(index)
    }

    /// The resource that input `index` (a scalar `resource` tensor) refers
    /// to, as a `T` (TensorFlow's `LookupResource(ctx, HandleFromInput(ctx,
    /// index))`).
    ///
    /// The error names the op, the node and the input, and keeps the
    /// manager's code: `InvalidArgument` for a handle to another type of
    /// resource, `NotFound` for a resource that was deleted or never made.
    ///
    /// ```
    /// use op_core::resource::Resource;
    /// use op_core::{KernelContext, Result, Tensor};
    /// use std::sync::atomic::{AtomicI64, Ordering};
    ///
    /// struct Counter(AtomicI64);
    /// impl Resource for Counter {
    ///     fn debug_string(&self) -> String {
    ///         format!("Counter({})", self.0.load(Ordering::Relaxed))
    ///     }
    /// }
    ///
    /// // The kernel of `Increment(counter: resource) -> value: int64`.
    /// fn increment(ctx: &mut KernelContext<'_>) -> Result<()> {
    ///     let counter = ctx.resource::<Counter>(0)?;
    ///     let value = counter.0.fetch_add(1, Ordering::Relaxed) + 1;
    ///     ctx.set_output(0, Tensor::scalar(value))
    /// }
    /// ```
    pub fn resource<T: Resource>(&self, index: usize) -> Result<Arc<T>> {
        // The handle is borrowed, not cloned: this runs on every call of a
        // stateful op, and a handle holds four strings.
        let handle: &ResourceHandle = self.scalar_ref(index)?;
        if handle.device != self.state.resource_device {
            return Err(self.invalid(format_args!(
                "{}: resource {} is on device {}, and this kernel runs on device {}: a resource is used on the device that holds it",
                self.describe_input(index),
                quoted(&handle.name),
                handle.device,
                self.state.resource_device
            )));
        }
        self.state.resources.resource::<T>(handle).map_err(|e| {
            self.error(
                e.code(),
                format_args!("{}: {}", self.describe_input(index), e.message()),
            )
        })
    }

    /// The resource that the single-tensor input arg `name` refers to (see
    /// [`resource`](Self::resource)).
    pub fn resource_by_name<T: Resource>(&self, name: &str) -> Result<Arc<T>> {
        let index = self.single_input_index(name)?;
        self.resource(index)
    }

    /// Sets output `index` (of dtype `resource`) to a scalar handle that
    /// owns `resource`: the resource lives while some copy of the handle
    /// does, and is dropped with the last one (TensorFlow's ref-counting
    /// handles). The handle names the runtime's device ([`resource_device`](Self::resource_device)).
    pub fn set_resource_output<T: Resource>(
        &mut self,
        index: usize,
        resource: Arc<T>,
    ) -> Result<()> {
        let handle = ResourceHandle::owning(self.state.resource_device, resource);
        self.set_output(index, Tensor::scalar(handle))
    }

    /// The dtype that output `index` must have.
    #[inline]
    pub fn output_dtype(&self, index: usize) -> Result<DType> {
        self.node
            .output_types()
            .get(index)
            .copied()
            .ok_or_else(|| self.output_out_of_range(index))
    }

    fn output_out_of_range(&self, index: usize) -> Error {
        self.invalid(format_args!(
            "asked for output {index}, but the op has {} output tensor(s)",
            self.outputs.len()
        ))
    }

    /// The flattened index of the single-tensor output arg `name`.
    pub fn output_index(&self, name: &str) -> Result<usize> {
        let arg = self
            .op
            .outputs
            .iter()
            .position(|a| a.name == name)
            .ok_or_else(|| {
                self.invalid(format_args!(
                    "has no output named '{name}' (outputs: {})",
                    arg_names(&self.op.outputs)
                ))
            })?;
        if self.op.outputs[arg].is_list() {
            return Err(self.invalid(format_args!(
                "output '{name}' is a list of tensors: use output_range(\"{name}\")"
            )));
        }
        Ok(self.node.output_arg_range(arg).map_or(0, |r| r.start))
    }

    /// The flattened indices of the tensors of output arg `name`.
    pub fn output_range(&self, name: &str) -> Result<Range<usize>> {
        self.node.output_range(name).ok_or_else(|| {
            self.invalid(format_args!(
                "has no output named '{name}' (outputs: {})",
                arg_names(&self.op.outputs)
            ))
        })
    }

    /// Sets output `index` to `tensor`, which must have the output's dtype.
    pub fn set_output(&mut self, index: usize, tensor: Tensor) -> Result<()> {
        let expected = self.output_dtype(index)?;
        if tensor.dtype() != expected {
            return Err(self.invalid(format_args!(
                "output {index} must be {expected}, but the kernel produced {}",
                tensor.dtype()
            )));
        }
        self.outputs[index] = Some(tensor);
        Ok(())
    }

    /// Sets the single-tensor output arg `name` to `tensor`.
    pub fn set_output_by_name(&mut self, name: &str, tensor: Tensor) -> Result<()> {
        let index = self.output_index(name)?;
        self.set_output(index, tensor)
    }

    /// Allocates output `index` with shape `dims` from the runtime's
    /// allocator, filled with zeros (the element type's `Default`), and
    /// returns it for writing.
    ///
    /// The buffer may be one an earlier tensor used (see
    /// [`allocator`](crate::allocator)); zeroing it means a kernel never
    /// reads values it did not write. Elementwise kernels that write every
    /// element skip the zeroing through [`unary`](Self::unary) and its
    /// siblings.
    ///
    /// Returns an `InvalidArgument` error if the shape's element count or
    /// byte size does not fit in memory, and a `ResourceExhausted` error past
    /// the allocator's size limit or when memory runs out; both name the op,
    /// the node, the output and the shape.
    ///
    /// A kernel on a device other than the host (a GPU kernel) gets the
    /// output in the device's memory, from its backend's allocator, unless
    /// its registration keeps the output in host memory (`host_memory`) or
    /// the dtype lives only on the host (bools, strings, handles).
    pub fn allocate_output(&mut self, index: usize, dims: &[usize]) -> Result<&mut Tensor> {
        let tensor = self.new_output(index, dims, true)?;
        Ok(self.outputs[index].insert(tensor))
    }

    /// [`allocate_output`](Self::allocate_output) without the zeroing: the
    /// elements are unspecified (an earlier tensor's values), for a kernel
    /// that writes every one of them before reading any. On a device, this
    /// saves a pass over the memory.
    pub fn allocate_output_for_writing(
        &mut self,
        index: usize,
        dims: &[usize],
    ) -> Result<&mut Tensor> {
        let tensor = self.new_output(index, dims, false)?;
        Ok(self.outputs[index].insert(tensor))
    }

    /// A tensor of `dtype` and shape `dims` from the runtime's allocator,
    /// filled with zeros, that is not an output (TensorFlow's
    /// `allocate_temp`): scratch space, or an output built while inputs are
    /// still borrowed and then given to [`set_output`](Self::set_output).
    ///
    /// Returns the errors of [`allocate_output`](Self::allocate_output),
    /// naming the op and node.
    ///
    /// ```
    /// # use op_core::{KernelContext, Result};
    /// // out = in[0] + in[1] + ... for a list input of same-shaped floats.
    /// fn add_all(ctx: &mut KernelContext<'_>) -> Result<()> {
    ///     let inputs = ctx.input_list("in")?;
    ///     let mut sum = ctx.allocate_temp(op_core::DType::F32, inputs[0].dims())?;
    ///     let total = sum.as_slice_mut::<f32>()?;
    ///     for input in inputs {
    ///         total.iter_mut().zip(input.as_slice::<f32>()?).for_each(|(s, x)| *s += x);
    ///     }
    ///     ctx.set_output(0, sum)
    /// }
    /// ```
    ///
    /// A kernel on a device other than the host gets device memory for
    /// the dtypes a device holds (see [`device`](crate::device)).
    pub fn allocate_temp(&self, dtype: DType, dims: &[usize]) -> Result<Tensor> {
        let on_device = self.state.device.kind() != crate::DeviceType::Cpu
            && crate::runtime::placement::on_devices(dtype);
        let tensor = if on_device {
            self.state.device_backend().and_then(|backend| {
                Tensor::allocate_on_device(backend, self.state.device, dtype, dims, true)
            })
        } else {
            Tensor::allocate(&self.state.allocator, dtype, dims, true)
        };
        tensor.map_err(|e| {
            self.error(
                e.code(),
                format_args!("a temporary tensor: {}", e.message()),
            )
        })
    }

    /// A tensor for output `index` of shape `dims` from the runtime's
    /// allocator (zeros if `zeroed`, else for overwriting), not yet set.
    pub(crate) fn new_output(&self, index: usize, dims: &[usize], zeroed: bool) -> Result<Tensor> {
        let dtype = self.output_dtype(index)?;
        if let Some(mut placed) = self.take_placed(index, dtype, dims) {
            // A placed buffer holds what the caller's memory held: zeroed
            // here as a fresh one would be (it is plain, so it can be).
            if zeroed {
                placed.zero_plain();
            }
            return Ok(placed);
        }
        if !self.placement.output_on_host(self.state, index) {
            return self
                .state
                .device_backend()
                .and_then(|backend| {
                    Tensor::allocate_on_device(backend, self.state.device, dtype, dims, zeroed)
                })
                .map_err(|e| self.output_error(index, e));
        }
        Tensor::allocate(&self.state.allocator, dtype, dims, zeroed)
            .map_err(|e| self.output_error(index, e))
    }

    /// `e`, an error making output `index`, with the op, node and output.
    #[cold]
    pub(crate) fn output_error(&self, index: usize, e: Error) -> Error {
        self.error(
            e.code(),
            format_args!("output {index}{}: {}", self.output_name(index), e.message()),
        )
    }

    /// ` ('name')` for a single-tensor output, ` ('name'[i])` for a list
    /// element.
    fn output_name(&self, index: usize) -> String {
        match self.node.output_arg_of(index) {
            Some((arg, position)) if self.op.outputs[arg].is_list() => {
                format!(" ('{}'[{position}])", self.op.outputs[arg].name)
            }
            Some((arg, _)) => format!(" ('{}')", self.op.outputs[arg].name),
            None => String::new(),
        }
    }

    /// Allocates the single-tensor output arg `name` with shape `dims`.
    pub fn allocate_output_by_name(&mut self, name: &str, dims: &[usize]) -> Result<&mut Tensor> {
        let index = self.output_index(name)?;
        self.allocate_output(index, dims)
    }

    /// Output `index` becomes input `input`'s buffer, reshaped to `dims`, if
    /// nobody else holds that buffer and its dtype and element count fit;
    /// otherwise output `index` is allocated (zeroed) as by
    /// [`allocate_output`](Self::allocate_output). TensorFlow's
    /// `forward_input_or_allocate_output`.
    ///
    /// Either way the result is the output, with a buffer this kernel alone
    /// holds, so writing to it never copies. A forwarded input can no
    /// longer be read.
    pub fn forward_input_or_allocate_output(
        &mut self,
        input: usize,
        index: usize,
        dims: &[usize],
    ) -> Result<&mut Tensor> {
        let dtype = self.output_dtype(index)?;
        let candidate = self.input(input)?;
        let fits = candidate.is_unique()
            && candidate.dtype() == dtype
            && candidate.is_on_host() == self.placement.output_on_host(self.state, index)
            && TensorShape::try_new(dims)
                .is_ok_and(|s| s.num_elements() == candidate.num_elements());
        if !fits {
            return self.allocate_output(index, dims);
        }
        let mut tensor = self.take_input(input);
        if tensor.dims() != dims {
            // The reshaped tensor shares the buffer until `tensor` drops here.
            tensor = tensor.reshape(dims)?;
        }
        Ok(self.outputs[index].insert(tensor))
    }

    /// Output `index` becomes input `input` itself, for kernels that update
    /// their input's values in place (elementwise ops). Writing to the
    /// result copies the buffer first only if someone else holds it
    /// (copy-on-write), so an input the caller handed over is updated
    /// without a copy. The input's dtype must be the output's. The input
    /// can no longer be read.
    ///
    /// ```
    /// # use op_core::{KernelContext, Result};
    /// // Negate, in place when the caller handed the input over.
    /// fn negate(ctx: &mut KernelContext<'_>) -> Result<()> {
    ///     for v in ctx.forward_input_to_output(0, 0)?.as_slice_mut::<f32>()? {
    ///         *v = -*v;
    ///     }
    ///     Ok(())
    /// }
    /// ```
    pub fn forward_input_to_output(&mut self, input: usize, index: usize) -> Result<&mut Tensor> {
        let dtype = self.output_dtype(index)?;
        let candidate = self.input(input)?;
        if candidate.dtype() != dtype {
            return Err(self.invalid(format_args!(
                "{} is {}, but output {index} must be {dtype}",
                self.describe_input(input),
                candidate.dtype()
            )));
        }
        let mut tensor = self.take_input(input);
        if tensor.is_shared() {
            // Copy now, from the runtime's allocator, rather than on the
            // kernel's first write.
            let copy = if tensor.is_on_host() {
                tensor.unshared_copy(&self.state.allocator)
            } else {
                tensor.device_copy()
            };
            tensor = copy.map_err(|e| self.output_error(index, e))?;
        }
        Ok(self.outputs[index].insert(tensor))
    }

    /// The output slots, for helpers that checked the index and dtype.
    #[inline]
    pub(crate) fn outputs_mut(&mut self) -> &mut [Option<Tensor>] {
        self.outputs
    }

    /// Moves input `input` out (for forwarding); it can no longer be read.
    fn take_input(&mut self, input: usize) -> Tensor {
        self.forwarded.push(input);
        std::mem::replace(&mut self.inputs[input], FORWARDED.clone())
    }
}

fn arg_names(args: &[ArgDef]) -> String {
    let names: Vec<&str> = args.iter().map(|a| a.name.as_str()).collect();
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}
