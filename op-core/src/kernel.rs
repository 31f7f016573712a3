//! Kernels: the code that runs an op on one device for some dtypes.
//!
//! A kernel is any [`OpKernel`]: an object created once per distinct node
//! (op, attrs and input dtypes), then asked to [`compute`](OpKernel::compute)
//! any number of times, possibly from several threads at once. It is created
//! from a [`KernelConstruction`], where it reads and checks its attrs once, as
//! TensorFlow's `OpKernel` constructor does.
//!
//! Authors rarely implement [`OpKernel`] by hand: `#[kernel]` on a function
//! registers a [`FnKernel`], and `#[kernel]` on an `impl` block with `new`
//! and `compute` implements the trait and registers it.

use std::sync::Arc;

use crate::context::KernelContext;
use crate::op_instance::{FromAttrValue, OpInstance};
use crate::resource::{Resource, ResourceMgr};
use crate::tensor::Tensor;
use crate::{Device, DeviceType, OpDef, Result};

/// The CPU device type (TensorFlow's `DEVICE_CPU`).
pub const DEVICE_CPU: DeviceType = DeviceType::Cpu;
/// The GPU device type (TensorFlow's `DEVICE_GPU`).
pub const DEVICE_GPU: DeviceType = DeviceType::Gpu;

/// An op's implementation for one device and one set of dtypes.
///
/// Kernels may be called concurrently from several threads, hence `Send +
/// Sync`; keep per-call state in locals, not in `self`.
///
/// ```
/// use op_core::{KernelContext, OpKernel, Result};
///
/// /// Doubles its `float` input.
/// struct TimesTwo;
///
/// impl OpKernel for TimesTwo {
///     fn compute(&self, ctx: &mut KernelContext<'_>) -> Result<()> {
///         let doubled: Vec<f32> = ctx.input_slice::<f32>(0)?.iter().map(|x| x * 2.0).collect();
///         let dims = ctx.input(0)?.dims().to_vec();
///         ctx.set_output(0, op_core::Tensor::from_vec(dims, doubled)?)
///     }
/// }
/// ```
pub trait OpKernel: Send + Sync + 'static {
    /// Reads the inputs from `ctx` and sets every output.
    fn compute(&self, ctx: &mut KernelContext<'_>) -> Result<()>;

    /// Whether `compute` may wait for another kernel (a queue's dequeue
    /// waiting for an enqueue): TensorFlow's `AsyncOpKernel`. An executor
    /// runs such a kernel on a thread of its own, so that its waiting holds
    /// up no other node (a graph's dequeue and the enqueue it waits for may
    /// be in one run), and cancels its wait through
    /// [`KernelContext::cancellation`] when the run fails. A kernel that
    /// waits should honour that cancellation and, where the op has one, a
    /// timeout ([`KernelContext::wait`]). Default: `false`.
    fn may_block(&self) -> bool {
        false
    }
}

/// What a kernel sees when it is created: the op, the node with every attr
/// resolved, and the device (TensorFlow's `OpKernelConstruction`).
#[derive(Clone, Copy)]
pub struct KernelConstruction<'a> {
    pub(crate) op: &'a OpDef,
    pub(crate) node: &'a OpInstance,
    pub(crate) device: Device,
    pub(crate) resources: &'a ResourceMgr,
    pub(crate) eager: bool,
}

impl<'a> KernelConstruction<'a> {
    /// A construction for `node` of `op` on `device`, for running a kernel by
    /// hand (the runtime builds these itself).
    pub fn new(
        op: &'a OpDef,
        node: &'a OpInstance,
        device: Device,
        resources: &'a ResourceMgr,
    ) -> Self {
        KernelConstruction {
            op,
            node,
            device,
            resources,
            eager: false,
        }
    }

    /// This construction, for a kernel of eager calls (`eager`) or of one
    /// node (the default); see [`is_eager`](Self::is_eager).
    pub fn eager(mut self, eager: bool) -> Self {
        self.eager = eager;
        self
    }

    /// Whether the kernel serves eager calls ([`OpCall`](crate::OpCall),
    /// the typed wrappers): the runtime shares one kernel among every call
    /// of a like node, though each call is an op execution of its own, as
    /// each is in TensorFlow's eager mode. A kernel that keeps state for
    /// its node should keep none across eager calls: a resource op with no
    /// shared name makes a fresh resource on each eager call
    /// ([`ResourceOpState`](crate::resource::ResourceOpState)), but one
    /// per node in a graph, across its runs. `false` for a graph's node
    /// ([`Runtime::prepare_named`](crate::Runtime::prepare_named),
    /// [`Runtime::prepare`](crate::Runtime::prepare)).
    pub fn is_eager(&self) -> bool {
        self.eager
    }

    /// The device's resource manager, for kernels of stateful ops.
    pub fn resource_manager(&self) -> &'a ResourceMgr {
        self.resources
    }

    /// The op's definition.
    pub fn op_def(&self) -> &'a OpDef {
        self.op
    }

    /// The op instance: its name, every attr's value and the input and
    /// output dtypes.
    pub fn instance(&self) -> &'a OpInstance {
        self.node
    }

    /// The node's name, for messages.
    pub fn node_name(&self) -> &'a str {
        self.node.name()
    }

    /// The device the kernel runs on.
    pub fn device(&self) -> Device {
        self.device
    }

    /// The value of attr `name` as a Rust value (TensorFlow's `GetAttr`).
    pub fn get_attr<T: FromAttrValue>(&self, name: &str) -> Result<T> {
        self.node.get_attr(name)
    }

    /// All the op's attrs parsed into the struct `A` (what `#[register_op]`
    /// generates for the fields of an op struct).
    pub fn attrs<A: OpAttrs>(&self) -> Result<A> {
        A::from_node(self.node)
    }
}

impl std::fmt::Debug for KernelConstruction<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelConstruction")
            .field("op", &self.op.name)
            .field("node_name", &self.node.name())
            .field("device", &self.device)
            .field("eager", &self.eager)
            .finish_non_exhaustive()
    }
}

/// A Rust value holding an op's attrs, parsed from a node.
///
/// `#[register_op]` implements it for the op struct: each field receives the
/// attr of its name, already checked against the op's constraints (type,
/// minimum, allowed values). `()` stands for "no attrs needed".
pub trait OpAttrs: Sized + Send + Sync + 'static {
    /// Reads the attrs from `node`.
    fn from_node(node: &OpInstance) -> Result<Self>;
}

impl OpAttrs for () {
    fn from_node(_: &OpInstance) -> Result<()> {
        Ok(())
    }
}

/// What a `#[kernel]` function may return inside its `Result`: nothing
/// (`()`, it set its outputs through the context), a [`Tensor`] for output
/// 0, or a resource (`Arc<R>`), which becomes an owning handle in output 0
/// (see [`KernelContext::set_resource_output`]): how a create op returns
/// the resource it made.
///
/// ```
/// use std::sync::Arc;
/// use op_core::kernel::KernelReturn;
/// use op_core::resource::Resource;
///
/// struct Counter;
/// impl Resource for Counter {
///     fn debug_string(&self) -> String {
///         "Counter".into()
///     }
/// }
///
/// fn returns<R: KernelReturn>(_: R) {}
/// returns(());
/// returns(op_core::Tensor::scalar(1.0f32));
/// returns(Arc::new(Counter));
/// ```
#[diagnostic::on_unimplemented(
    message = "a kernel function cannot return `Result<{Self}>`",
    label = "a kernel returns `Result<()>` (outputs set through `ctx`), `Result<Tensor>` (output 0) or `Result<Arc<R>>` for a resource `R` (an owning handle in output 0)"
)]
pub trait KernelReturn {
    /// Stores the value in `ctx`'s outputs.
    fn store(self, ctx: &mut KernelContext<'_>) -> Result<()>;
}

impl KernelReturn for () {
    #[inline]
    fn store(self, _: &mut KernelContext<'_>) -> Result<()> {
        Ok(())
    }
}

impl KernelReturn for Tensor {
    /// Sets output 0.
    fn store(self, ctx: &mut KernelContext<'_>) -> Result<()> {
        ctx.set_output(0, self)
    }
}

impl<R: Resource> KernelReturn for Arc<R> {
    /// Sets output 0 to an owning handle of the resource.
    fn store(self, ctx: &mut KernelContext<'_>) -> Result<()> {
        ctx.set_resource_output(0, self)
    }
}

/// A device's view of a kernel call, made from the [`KernelContext`]: what
/// a device kernel function takes instead of `&mut KernelContext<'_>`
/// (op-cuda's `GpuContext`, with the device's stream, compiled kernels and
/// device pointers). `#[kernel]` converts the context for a function whose
/// first parameter is `&mut` such a type:
///
/// ```ignore
/// #[kernel(op = Example, device = "gpu", types(f32))]
/// fn example_gpu(ctx: &mut GpuContext<'_, '_>) -> Result<()> { ... }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a kernel context",
    label = "a kernel function's first parameter is `ctx: &mut KernelContext<'_>`, or `&mut` a device's context (`GpuContext<'_, '_>`, from op-cuda)"
)]
pub trait FromKernelContext<'c, 'a: 'c>: Sized {
    /// The device's view of `ctx`, or why the call cannot run on the
    /// device (the kernel's device is not the backend's, say).
    fn from_kernel_context(ctx: &'c mut KernelContext<'a>) -> Result<Self>;
}

/// The signature of a kernel function: the context and the parsed attrs.
pub type KernelFn<A> = fn(&mut KernelContext<'_>, &A) -> Result<()>;

/// A kernel made of a function and the attrs it reads, parsed once when the
/// kernel is created: what `#[kernel]` on a function registers.
pub struct FnKernel<A> {
    attrs: A,
    function: KernelFn<A>,
}

impl<A: OpAttrs> FnKernel<A> {
    /// Parses the attrs from `construction` and boxes the kernel.
    pub fn create(
        construction: &KernelConstruction<'_>,
        function: KernelFn<A>,
    ) -> Result<Box<dyn OpKernel>> {
        Ok(Box::new(FnKernel {
            attrs: construction.attrs::<A>()?,
            function,
        }))
    }
}

impl<A: OpAttrs> OpKernel for FnKernel<A> {
    #[inline]
    fn compute(&self, ctx: &mut KernelContext<'_>) -> Result<()> {
        (self.function)(ctx, &self.attrs)
    }
}

/// Creates a kernel for a node: one per kernel registration.
pub type CreateKernelFn = fn(&KernelConstruction<'_>) -> Result<Box<dyn OpKernel>>;
