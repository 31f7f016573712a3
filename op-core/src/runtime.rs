//! Running ops: [`Runtime`] selects and caches kernels, [`PreparedOp`] runs a
//! cached kernel, [`OpCall`] runs an op by name with tensors and attrs.
//!
//! A kernel is created once per distinct node (op, input dtypes, resolved
//! attrs, node name) and shared by every later call, from any thread. Each
//! call checks its inputs against the node, catches a panicking kernel
//! (it becomes an `Internal` error; the runtime stays usable), and checks
//! that the kernel set every output.

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, PoisonError, Weak};

use op_spec::{AttrValue, DType, OpDef};
use rustc_hash::{FxHashMap, FxHasher};

use crate::allocator::HostAllocator;
use crate::context::KernelContext;
use crate::device::DeviceState;
use crate::kernel::{KernelConstruction, OpKernel};
use crate::op_instance::{InputTypes, OpInstance};
use crate::registry::{KernelRegistration, Registry};
use crate::resource::ResourceMgr;
use crate::shape_inference::{self, PartialShape, ShapeFn};
use crate::tensor::Tensor;
use crate::threads::ThreadPool;
use crate::unwind::catch_panic;
use crate::{Device, Error, Result};

/// Selects, creates and caches kernels for one device over one registry.
///
/// It caches *kernels* (one per distinct node), never *results*: every call
/// runs the kernel, and no two calls are merged, however alike their
/// inputs. That is what stateful ops (those with `resource` inputs or
/// outputs, or marked `stateful`) need: two `Insert`s with the same inputs
/// both insert, and a `Find` after them sees both.
///
/// ```standalone_crate
/// use op_core::{AttrValue, DType, Runtime, Tensor};
/// # op_core::inventory::submit! { op_core::registry::OpRegistration::new("Twice", || op_core::OpDefBuilder::new("Twice").input("x: float").output("y: float").build(), file!(), line!()) }
/// # fn twice(ctx: &mut op_core::KernelContext<'_>, _: &()) -> op_core::Result<()> {
/// #     let y: Vec<f32> = ctx.input_slice::<f32>(0)?.iter().map(|v| v * 2.0).collect();
/// #     let dims = ctx.input(0)?.dims().to_vec();
/// #     ctx.set_output(0, Tensor::from_vec(dims, y)?)
/// # }
/// # op_core::inventory::submit! { op_core::registry::KernelRegistration::new("Twice", op_core::DeviceType::Cpu, "twice", |c| op_core::FnKernel::<()>::create(c, twice), file!(), line!()) }
///
/// let runtime = Runtime::global();
/// let x = Tensor::from_vec([2], vec![1.0f32, 2.5])?;
/// let y = runtime.run("Twice", vec![x], &[])?;
/// assert_eq!(y[0].as_slice::<f32>()?, [2.0, 5.0]);
///
/// // Prepared once, run many times: no lookup per call.
/// let twice = runtime.prepare("Twice", &[DType::F32.into()], &[])?;
/// let y = twice.run(vec![Tensor::from_vec([1], vec![4.0f32])?])?;
/// assert_eq!(y[0].as_slice::<f32>()?, [8.0]);
/// # Ok::<(), op_core::Error>(())
/// ```
pub struct Runtime {
    registry: Arc<Registry>,
    /// Unique among all runtimes ever made (never reused): what the
    /// per-thread call caches key their entries by.
    id: u64,
    /// One slot per node key; a slot's lock is held while its kernel is
    /// created, so each kernel is created once, while other nodes proceed.
    ///
    /// The runtime owns its prepared ops here: the per-thread call caches
    /// hold only `Weak`s, so dropping the runtime frees its kernels and,
    /// through them, its device state and resources. No slot is removed or
    /// emptied while the runtime lives: a call cache relies on that to use
    /// its `Weak` without upgrading it (see [`Hit::op`]).
    prepared: Mutex<HashMap<String, Arc<PreparedSlot>>>,
    /// Whether each call checks its outputs' shapes against the op's shape
    /// function.
    check_shapes: bool,
    /// The device's allocator, threads and resources, shared by this
    /// runtime's kernels.
    state: Arc<DeviceState>,
}

/// Where one node's prepared op goes once created.
type PreparedSlot = Mutex<Option<Arc<PreparedOp>>>;

static NEXT_RUNTIME_ID: AtomicU64 = AtomicU64::new(1);
static GLOBAL: LazyLock<Runtime> = LazyLock::new(Runtime::new);

impl Default for Runtime {
    fn default() -> Self {
        Runtime::new()
    }
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("device", &self.state.device)
            .field("ops", &self.registry.ops().count())
            .finish_non_exhaustive()
    }
}

impl Runtime {
    /// A CPU runtime over the global registry ([`Registry::global`]).
    pub fn new() -> Runtime {
        Runtime::with_registry(Registry::global().clone())
    }

    /// A CPU runtime over `registry`.
    pub fn with_registry(registry: Arc<Registry>) -> Runtime {
        Runtime {
            registry,
            id: NEXT_RUNTIME_ID.fetch_add(1, Ordering::Relaxed),
            prepared: Mutex::new(HashMap::new()),
            check_shapes: cfg!(debug_assertions),
            state: Arc::new(DeviceState::cpu()),
        }
    }

    /// The resource manager of this runtime's device, which its kernels
    /// share (`KernelContext::resource_manager`).
    pub fn resource_manager(&self) -> &Arc<ResourceMgr> {
        &self.state.resources
    }

    /// Whether every call checks its outputs' shapes against what the op's
    /// shape function infers from the input shapes, so that a shape function
    /// that disagrees with its kernel is caught. On by default in debug
    /// builds, off in release builds (it costs a shape inference per call).
    pub fn check_shapes(mut self, on: bool) -> Runtime {
        self.check_shapes = on;
        self
    }

    /// The same registry, running kernels of `device` instead.
    pub fn on_device(mut self, device: Device) -> Runtime {
        Arc::make_mut(&mut self.state).device = device;
        self
    }

    /// The same runtime, splitting kernels' work over `threads` instead of
    /// the shared pool ([`ThreadPool::global`], one thread per core).
    ///
    /// ```
    /// use op_core::Runtime;
    /// use op_core::threads::ThreadPool;
    /// use std::sync::Arc;
    ///
    /// let runtime = Runtime::new().with_threads(Arc::new(ThreadPool::new(2)?));
    /// assert_eq!(runtime.threads().num_threads(), 2);
    /// # Ok::<(), op_core::Error>(())
    /// ```
    pub fn with_threads(mut self, threads: Arc<ThreadPool>) -> Runtime {
        Arc::make_mut(&mut self.state).threads = threads;
        self
    }

    /// The intra-op thread pool this runtime's kernels split their work
    /// over.
    pub fn threads(&self) -> &Arc<ThreadPool> {
        &self.state.threads
    }

    /// The same runtime, allocating kernels' outputs from `allocator`
    /// instead of the shared one ([`HostAllocator::global`]): for a memory
    /// budget of its own, or statistics of its own.
    ///
    /// ```
    /// use op_core::Runtime;
    /// use op_core::allocator::{AllocatorConfig, HostAllocator};
    ///
    /// let allocator = HostAllocator::new(AllocatorConfig::default().max_cached_bytes(64 << 20));
    /// let runtime = Runtime::new().with_allocator(allocator.clone());
    /// assert!(runtime.allocator().same(&allocator));
    /// ```
    pub fn with_allocator(mut self, allocator: HostAllocator) -> Runtime {
        Arc::make_mut(&mut self.state).allocator = allocator;
        self
    }

    /// The allocator this runtime's kernels allocate outputs from.
    pub fn allocator(&self) -> &HostAllocator {
        &self.state.allocator
    }

    /// The shared CPU runtime over the global registry, which the typed
    /// wrappers that `#[register_op]` generates use.
    pub fn global() -> &'static Runtime {
        &GLOBAL
    }

    /// The registry this runtime takes ops and kernels from.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The device this runtime runs kernels on.
    pub fn device(&self) -> Device {
        self.state.device
    }

    /// The node for op `op` with inputs of these dtypes and these explicit
    /// attrs, with its kernel: created on the first call for each distinct
    /// node, then shared.
    pub fn prepare(
        &self,
        op: &str,
        inputs: &[InputTypes],
        attrs: &[(&str, AttrValue)],
    ) -> Result<Arc<PreparedOp>> {
        self.prepare_node(op, inputs, attrs, None)
    }

    fn prepare_node(
        &self,
        op: &str,
        inputs: &[InputTypes],
        attrs: &[(&str, AttrValue)],
        node_name: Option<&str>,
    ) -> Result<Arc<PreparedOp>> {
        let entry = self.registry.op(op)?;
        let mut node = entry.instance(inputs, attrs)?;
        if let Some(name) = node_name {
            node = node.with_name(name);
        }
        let key = node_key(&node);

        let slot = {
            let mut prepared = self.prepared.lock().unwrap_or_else(PoisonError::into_inner);
            prepared.entry(key).or_default().clone()
        };
        let mut slot = slot.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(prepared) = &*slot {
            return Ok(prepared.clone());
        }
        let registration = self
            .registry
            .select_kernel(entry, &node, self.state.device.kind())?;
        let construction =
            KernelConstruction::new(entry.def(), &node, self.state.device, &self.state.resources);
        let frame = || {
            format!(
                "while creating kernel {} for {}",
                registration.name,
                node.describe_with(registration.describe())
            )
        };
        let kernel = match catch_panic(|| (registration.create)(&construction)) {
            Ok(Ok(kernel)) => kernel,
            Ok(Err(error)) => return Err(error.with_context(frame())),
            Err(message) => {
                return Err(Error::internal(format!("panicked: {message}")).with_context(frame()));
            }
        };
        let prepared = Arc::new(PreparedOp {
            op: entry.def().clone(),
            node,
            state: self.state.clone(),
            kernel,
            registration,
            shape_check: if self.check_shapes {
                entry.shape_fn()
            } else {
                None
            },
        });
        *slot = Some(prepared.clone());
        Ok(prepared)
    }

    /// Runs op `op` on `inputs`, one tensor per input arg, with these
    /// explicit attrs (the others are inferred from the inputs or take their
    /// defaults). For list inputs, use [`OpCall`].
    pub fn run(
        &self,
        op: &str,
        inputs: Vec<Tensor>,
        attrs: &[(&str, AttrValue)],
    ) -> Result<Vec<Tensor>> {
        let mut call = OpCall::new(op);
        for input in inputs {
            call = call.input(input);
        }
        for (name, value) in attrs {
            call = call.attr(name, value.clone());
        }
        call.run_on(self)
    }
}

/// The canonical text of a node: two requests share a kernel exactly when
/// their nodes print the same.
fn node_key(node: &OpInstance) -> String {
    use std::fmt::Write;
    // The name's length keeps a `|` inside it from faking a separator.
    let name = node.name();
    let mut key = format!("{}|{}:{name}|", node.op(), name.len());
    for dtype in node.input_types() {
        let _ = write!(key, "{},", dtype.enum_value());
    }
    for (name, value) in node.attrs() {
        let _ = write!(key, "|{name}={value}");
    }
    key
}

/// A node with its kernel, ready to run any number of times from any
/// thread; what a graph node holds.
pub struct PreparedOp {
    op: Arc<OpDef>,
    node: OpInstance,
    /// The runtime's device: allocator, threads and resources.
    state: Arc<DeviceState>,
    kernel: Box<dyn OpKernel>,
    registration: &'static KernelRegistration,
    /// The shape function to check outputs against, when checking is on.
    shape_check: Option<ShapeFn>,
}

impl std::fmt::Debug for PreparedOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedOp")
            .field("node_name", &self.node.name())
            .field("node", &self.node)
            .field("kernel", &self.registration.name)
            .finish_non_exhaustive()
    }
}

impl PreparedOp {
    /// The op's definition.
    pub fn op_def(&self) -> &OpDef {
        &self.op
    }

    /// The node: resolved attrs and input and output dtypes.
    pub fn instance(&self) -> &OpInstance {
        &self.node
    }

    /// The node's name.
    pub fn node_name(&self) -> &str {
        self.node.name()
    }

    /// The registration of the kernel that runs it.
    pub fn kernel(&self) -> &'static KernelRegistration {
        self.registration
    }

    fn context_frame(&self) -> String {
        format!(
            "in kernel {} of {}",
            self.registration.name,
            self.node
                .describe_with(format_args!("device '{}'", self.state.device.kind()))
        )
    }

    /// Runs the kernel on `inputs` (flattened: a list arg contributes one
    /// tensor per element) and returns the outputs, flattened.
    ///
    /// An input the caller alone holds may have its buffer reused for an
    /// output (see [`KernelContext::forward_input_or_allocate_output`]).
    pub fn run(&self, mut inputs: Vec<Tensor>) -> Result<Vec<Tensor>> {
        let count = self.node.output_types().len();
        // One output (the common case) lives on the stack; more go in a Vec.
        let mut single: [Option<Tensor>; 1] = [None];
        let mut many: Vec<Option<Tensor>>;
        let outputs: &mut [Option<Tensor>] = if count == 1 {
            &mut single
        } else {
            many = Vec::with_capacity(count);
            many.resize(count, None);
            &mut many
        };
        self.run_into(&mut inputs, outputs)?;
        // The inputs are done with: their Vec's buffer holds the outputs
        // (no allocation when there are at least as many inputs as outputs).
        inputs.clear();
        inputs.extend(
            outputs
                .iter_mut()
                .map(|o| o.take().expect("run_into set it")),
        );
        Ok(inputs)
    }

    /// Runs the kernel on `inputs` (flattened) and puts the outputs in
    /// `outputs` (flattened, one slot per output tensor of the node): the
    /// entry point for callers that place tensors themselves and allocate
    /// nothing per call. Every slot is `Some` afterwards.
    ///
    /// An input the caller alone holds may have its buffer moved to an
    /// output; its slot in `inputs` then holds a placeholder (a scalar).
    ///
    /// ```standalone_crate
    /// use op_core::{DType, Runtime, Tensor};
    /// # op_core::inventory::submit! { op_core::registry::OpRegistration::new("Twice", || op_core::OpDefBuilder::new("Twice").input("x: float").output("y: float").build(), file!(), line!()) }
    /// # fn twice(ctx: &mut op_core::KernelContext<'_>, _: &()) -> op_core::Result<()> {
    /// #     ctx.unary(0, 0, 1, |x: &f32| x * 2.0)
    /// # }
    /// # op_core::inventory::submit! { op_core::registry::KernelRegistration::new("Twice", op_core::DeviceType::Cpu, "twice", |c| op_core::FnKernel::<()>::create(c, twice), file!(), line!()) }
    /// let twice = Runtime::global().prepare("Twice", &[DType::F32.into()], &[])?;
    /// let mut inputs = [Tensor::from_vec([2], vec![1.0f32, 2.0])?];
    /// let mut outputs = [None];
    /// twice.run_into(&mut inputs, &mut outputs)?;
    /// assert_eq!(outputs[0].as_ref().unwrap().as_slice::<f32>()?, [2.0, 4.0]);
    /// # Ok::<(), op_core::Error>(())
    /// ```
    pub fn run_into(&self, inputs: &mut [Tensor], outputs: &mut [Option<Tensor>]) -> Result<()> {
        self.check_inputs(inputs)?;
        if outputs.len() != self.node.output_types().len() {
            return Err(Error::invalid_argument(format!(
                "{} has {} output tensor(s), but {} slot(s) were given",
                self.node,
                self.node.output_types().len(),
                outputs.len()
            )));
        }
        // What the slots held before goes now (a fresh array of `None`s,
        // the usual case, has nothing to drop).
        if outputs.iter().any(Option::is_some) {
            outputs.fill(None);
        }
        let input_shapes: Option<Vec<PartialShape>> = self.shape_check.map(|_| {
            inputs
                .iter()
                .map(|t| PartialShape::known(t.dims()))
                .collect()
        });
        let result = {
            let mut ctx = KernelContext::new(&self.op, &self.node, inputs, outputs, &self.state);
            catch_panic(|| self.kernel.compute(&mut ctx))
        };
        match result {
            Ok(Ok(())) => {}
            Ok(Err(error)) => return Err(error.with_context(self.context_frame())),
            Err(message) => {
                return Err(Error::internal(format!("kernel panicked: {message}"))
                    .with_context(self.context_frame()));
            }
        }
        if let Some(missing) = outputs.iter().position(Option::is_none) {
            return Err(Error::internal(format!(
                "the kernel did not set output {missing} ({})",
                self.output_name(missing)
            ))
            .with_context(self.context_frame()));
        }
        if let (Some(shape_fn), Some(input_shapes)) = (self.shape_check, input_shapes) {
            self.check_output_shapes(shape_fn, &input_shapes, outputs)?;
        }
        Ok(())
    }

    /// Checks the outputs against what `shape_fn` infers from the inputs.
    #[cold]
    fn check_output_shapes(
        &self,
        shape_fn: ShapeFn,
        input_shapes: &[PartialShape],
        outputs: &[Option<Tensor>],
    ) -> Result<()> {
        let shapes: Vec<String> = input_shapes.iter().map(ToString::to_string).collect();
        let rejected = |e: Error| {
            Error::internal(format!(
                "the kernel accepted input shapes {}, but the op's shape function rejects them: {}",
                shapes.join(", "),
                e.message()
            ))
            .with_context(self.context_frame())
        };
        let mut c = shape_inference::InferenceContext::new(&self.op, &self.node, input_shapes, &[])
            .map_err(rejected)?;
        // A shape function that panics is a bug in the op: an error for the
        // caller, not a panic in it.
        let inferred = match catch_panic(|| shape_fn(&mut c)) {
            Ok(Ok(())) => c.output_shapes(),
            Ok(Err(e)) => return Err(rejected(e)),
            Err(message) => {
                return Err(Error::internal(format!(
                    "the op's shape function panicked on input shapes {}: {message}",
                    shapes.join(", ")
                ))
                .with_context(self.context_frame()));
            }
        };
        for (i, (output, expected)) in outputs.iter().zip(&inferred).enumerate() {
            let Some(output) = output else { continue };
            if !expected.is_compatible_with(output.dims()) {
                return Err(Error::internal(format!(
                    "output {i} ({}) has shape {}, but the op's shape function infers {expected} from input shapes {}: the kernel and the shape function disagree",
                    self.output_name(i),
                    output.shape(),
                    shapes.join(", ")
                ))
                .with_context(self.context_frame()));
            }
        }
        Ok(())
    }

    fn output_name(&self, index: usize) -> String {
        self.node
            .output_arg_of(index)
            .map(|(arg, _)| format!("'{}'", self.op.outputs[arg].name))
            .unwrap_or_default()
    }

    fn check_inputs(&self, inputs: &[Tensor]) -> Result<()> {
        let expected = self.node.input_types();
        if inputs.len() == expected.len()
            && inputs.iter().zip(expected).all(|(t, d)| t.dtype() == *d)
        {
            return Ok(());
        }
        Err(self.input_mismatch(inputs))
    }

    #[cold]
    fn input_mismatch(&self, inputs: &[Tensor]) -> Error {
        let expected = self.node.input_types();
        if inputs.len() != expected.len() {
            return Error::invalid_argument(format!(
                "{} was prepared for {} input tensor(s), got {}",
                self.node,
                expected.len(),
                inputs.len()
            ));
        }
        let Some(i) = (0..inputs.len()).find(|&i| inputs[i].dtype() != expected[i]) else {
            return Error::internal("input check failed without a mismatch");
        };
        let (arg, position) = self.node.input_arg_of(i).unwrap_or_default();
        let def = &self.op.inputs[arg];
        let position = if def.is_list() {
            format!("[{position}]")
        } else {
            String::new()
        };
        Error::invalid_argument(format!(
            "{}: input '{}'{position} must be {}, got a tensor of {}",
            self.node,
            def.name,
            expected[i],
            inputs[i].dtype()
        ))
    }
}

/// One call of an op by name: inputs (single tensors and lists), explicit
/// attrs, an optional node name; run on the global runtime or a given one.
///
/// Repeated calls with the same op, input dtypes and attrs reuse the kernel
/// through a per-thread cache, without locking.
///
/// ```standalone_crate
/// use op_core::{OpCall, Tensor};
/// # op_core::inventory::submit! { op_core::registry::OpRegistration::new("AddN2", || op_core::OpDefBuilder::new("AddN2").attr("N: int").input("in: N * int32").output("sum: int32").build(), file!(), line!()) }
/// # fn add_n(ctx: &mut op_core::KernelContext<'_>, _: &()) -> op_core::Result<()> {
/// #     let total: i32 = ctx.input_list("in")?.iter().map(|t| t.scalar_value::<i32>().unwrap()).sum();
/// #     ctx.set_output(0, Tensor::scalar(total))
/// # }
/// # op_core::inventory::submit! { op_core::registry::KernelRegistration::new("AddN2", op_core::DeviceType::Cpu, "add_n", |c| op_core::FnKernel::<()>::create(c, add_n), file!(), line!()) }
///
/// let sum = OpCall::new("AddN2")
///     .input_list([Tensor::scalar(1i32), Tensor::scalar(2i32), Tensor::scalar(3i32)])
///     .run()?;
/// assert_eq!(sum[0].scalar_value::<i32>()?, 6);
/// # Ok::<(), op_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct OpCall<'a> {
    op: &'a str,
    inputs: Vec<Tensor>,
    /// Per input arg: `None` for a single tensor, `Some(n)` for a list of n.
    /// Empty while every input arg is a single tensor (no allocation).
    args: Vec<Option<usize>>,
    attrs: Vec<(&'a str, AttrValue)>,
    node_name: Option<&'a str>,
}

impl<'a> OpCall<'a> {
    /// A call of op `op`.
    pub fn new(op: &'a str) -> Self {
        OpCall {
            op,
            // Most ops have at most four inputs; `run` gives the same Vec
            // back holding the outputs. (Inline storage would make the
            // builder's moves cost more than this one allocation.)
            inputs: Vec::with_capacity(4),
            args: Vec::new(),
            attrs: Vec::new(),
            node_name: None,
        }
    }

    /// Adds the next input arg: one tensor (a `&Tensor` is shared, a
    /// `Tensor` is handed over).
    pub fn input(mut self, tensor: impl Into<Tensor>) -> Self {
        self.inputs.push(tensor.into());
        if !self.args.is_empty() {
            self.args.push(None);
        }
        self
    }

    /// Adds the next input arg: a list of tensors.
    pub fn input_list<T: Into<Tensor>>(mut self, tensors: impl IntoIterator<Item = T>) -> Self {
        let before = self.inputs.len();
        if self.args.is_empty() {
            // Every earlier arg was a single tensor.
            self.args.resize(before, None);
        }
        self.inputs.extend(tensors.into_iter().map(Into::into));
        self.args.push(Some(self.inputs.len() - before));
        self
    }

    /// Sets attr `name` (again: the last value wins).
    pub fn attr(mut self, name: &'a str, value: impl Into<AttrValue>) -> Self {
        let value = value.into();
        match self.attrs.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = value,
            None => self.attrs.push((name, value)),
        }
        self
    }

    /// Names the node (in errors); defaults to the op's name.
    pub fn node_name(mut self, name: &'a str) -> Self {
        self.node_name = Some(name);
        self
    }

    /// Runs on [`Runtime::global`]; returns the outputs, flattened.
    pub fn run(self) -> Result<Vec<Tensor>> {
        self.run_on(Runtime::global())
    }

    /// Runs on `runtime`; returns the outputs, flattened.
    pub fn run_on(mut self, runtime: &Runtime) -> Result<Vec<Tensor>> {
        // Fast path: run the cached op while the per-thread cache is
        // borrowed, without touching its reference count. A kernel that
        // calls ops itself borrows the cache again, which shared borrows
        // allow (its misses then go uncached).
        if let Some(hit) = CallCache::lookup(runtime, &self) {
            return hit.op().run(std::mem::take(&mut self.inputs));
        }
        let prepared = self.prepared(runtime)?;
        prepared.run(self.inputs)
    }

    /// Runs on `runtime`, returning the `N` outputs as an array, with no
    /// `Vec` of outputs: what the typed wrappers call. An `Internal` error
    /// if the op has not `N` outputs.
    #[doc(hidden)]
    pub fn run_on_array<const N: usize>(mut self, runtime: &Runtime) -> Result<[Tensor; N]> {
        let cached: Hit<'_>;
        let fresh: Arc<PreparedOp>;
        let op: &PreparedOp = match CallCache::lookup(runtime, &self) {
            Some(hit) => {
                cached = hit;
                cached.op()
            }
            None => {
                fresh = self.prepared(runtime)?;
                &fresh
            }
        };
        let mut outputs: [Option<Tensor>; N] = std::array::from_fn(|_| None);
        op.run_into(&mut self.inputs, &mut outputs).map_err(|e| {
            match op.node.output_types().len() {
                count if count != N => {
                    Error::internal(format!("expected {N} output(s), the op produced {count}"))
                }
                _ => e,
            }
        })?;
        // `run_into` succeeded, so it filled every slot.
        Ok(outputs.map(|o| o.expect("run_into fills every output")))
    }

    /// Runs on [`Runtime::global`]; returns the outputs grouped by output
    /// arg (one tensor for a single output, n for a list output).
    pub fn run_grouped(self) -> Result<Vec<Vec<Tensor>>> {
        self.run_grouped_on(Runtime::global())
    }

    /// Runs on `runtime`; returns the outputs grouped by output arg.
    pub fn run_grouped_on(self, runtime: &Runtime) -> Result<Vec<Vec<Tensor>>> {
        let prepared = self.prepared(runtime)?;
        let mut flat = prepared.run(self.inputs)?.into_iter();
        let groups = (0..prepared.op.outputs.len())
            .map(|arg| {
                let len = prepared.node.output_arg_range(arg).map_or(0, |r| r.len());
                flat.by_ref().take(len).collect()
            })
            .collect();
        Ok(groups)
    }

    /// The prepared node for this call, from the per-thread cache when
    /// this thread made the same request before.
    pub fn prepared(&self, runtime: &Runtime) -> Result<Arc<PreparedOp>> {
        if let Some(prepared) =
            CallCache::lookup(runtime, self).and_then(|hit| hit.entry.prepared.upgrade())
        {
            return Ok(prepared);
        }
        let hash = self.request_hash(runtime.id);
        // The runtime's own `Arc` (it keeps it in its slot while it lives):
        // the cache holds a `Weak` to it.
        let prepared =
            runtime.prepare_node(self.op, &self.input_types(), &self.attrs, self.node_name)?;
        CallCache::insert(
            hash,
            CachedRequest::new(runtime.id, self),
            Arc::downgrade(&prepared),
        );
        Ok(prepared)
    }

    fn input_types(&self) -> Vec<InputTypes> {
        if self.args.is_empty() {
            return self
                .inputs
                .iter()
                .map(|t| InputTypes::Single(t.dtype()))
                .collect();
        }
        let mut next = 0;
        self.args
            .iter()
            .map(|arg| match arg {
                None => {
                    next += 1;
                    InputTypes::Single(self.inputs[next - 1].dtype())
                }
                Some(n) => {
                    next += n;
                    InputTypes::List(
                        self.inputs[next - n..next]
                            .iter()
                            .map(Tensor::dtype)
                            .collect(),
                    )
                }
            })
            .collect()
    }

    fn request_hash(&self, runtime: u64) -> u64 {
        let mut h = FxHasher::default();
        runtime.hash(&mut h);
        self.op.hash(&mut h);
        self.node_name.hash(&mut h);
        self.args.hash(&mut h);
        for t in &self.inputs {
            t.dtype().enum_value().hash(&mut h);
        }
        for (name, value) in &self.attrs {
            name.hash(&mut h);
            hash_attr_value(value, &mut h);
        }
        h.finish()
    }
}

/// Hashes the common attr values fully and the others by kind only (equal
/// hashes are confirmed by comparing the values).
fn hash_attr_value(value: &AttrValue, h: &mut FxHasher) {
    std::mem::discriminant(value).hash(h);
    match value {
        AttrValue::Int(i) => i.hash(h),
        AttrValue::Float(f) => f.to_bits().hash(h),
        AttrValue::Bool(b) => b.hash(h),
        AttrValue::Type(t) => t.enum_value().hash(h),
        AttrValue::String(s) => s.hash(h),
        _ => {}
    }
}

/// More distinct requests than this on one thread start the cache afresh.
const CALL_CACHE_LIMIT: usize = 4096;

/// One thread's prepared ops by request, with the last one found kept
/// aside: a loop that calls one op over and over skips the map.
#[derive(Default)]
struct CallCache {
    last: Option<Rc<CacheEntry>>,
    by_hash: FxHashMap<u64, Vec<Rc<CacheEntry>>>,
}

/// A request and its prepared op.
///
/// The op is held weakly: its runtime owns it, so that dropping the
/// runtime frees its kernels and resources even while threads that called
/// it keep their caches. An entry of a dropped runtime matches no live
/// runtime (ids are never reused) and costs only its request and the op's
/// empty allocation until the cache starts afresh.
struct CacheEntry {
    request: CachedRequest,
    prepared: Weak<PreparedOp>,
}

/// A cache entry that matched a call on the runtime it borrows. Only
/// [`CallCache::lookup`] makes one, after comparing the entry's runtime
/// id with the runtime's: what lets [`Hit::op`] skip the reference count.
struct Hit<'r> {
    entry: Rc<CacheEntry>,
    /// The runtime the entry matched, borrowed while the hit lives.
    runtime: PhantomData<&'r Runtime>,
}

impl Hit<'_> {
    /// The prepared op: a plain reference, no reference count touched (a
    /// hit costs no atomic operation, and threads calling one op share no
    /// counter).
    fn op(&self) -> &PreparedOp {
        // SAFETY: the entry was made (in `OpCall::prepared`) from the
        // `Arc` that `runtime.prepare_node` returned, which is the one
        // kept in the runtime's slot for the node. `lookup` made this hit
        // only for the runtime of the entry's id (ids are unique and never
        // reused), and that runtime stays borrowed for `'r`, which
        // outlives `&self`. A runtime never removes or empties a slot
        // while it lives, and the entry's `Weak` keeps the allocation. So
        // the strong count stays at least 1 while the reference lives, and
        // the pointer is to a live `PreparedOp`, only ever shared.
        unsafe { &*self.entry.prepared.as_ptr() }
    }
}

thread_local! {
    static CALL_CACHE: RefCell<CallCache> = RefCell::new(CallCache::default());
}

impl CallCache {
    /// The entry for `call` on runtime `runtime`, if this thread has one:
    /// the last one found if it matches (a loop calling one op over and
    /// over needs no hash), else by the request's hash. The entry is a
    /// cheap (non-atomic) clone, so the cache is not borrowed while its op
    /// runs: a kernel that calls ops itself uses the cache too.
    fn lookup<'r>(runtime: &'r Runtime, call: &OpCall<'_>) -> Option<Hit<'r>> {
        let id = runtime.id;
        let entry = CALL_CACHE.with(|cache| {
            let mut cache = cache.try_borrow_mut().ok()?;
            if let Some(last) = &cache.last
                && last.request.matches(id, call)
            {
                return Some(last.clone());
            }
            let hash = call.request_hash(id);
            let found = cache
                .by_hash
                .get(&hash)?
                .iter()
                .find(|entry| entry.request.matches(id, call))?
                .clone();
            cache.last = Some(found.clone());
            Some(found)
        })?;
        // `matches` compared the entry's runtime id with `runtime`'s.
        Some(Hit {
            entry,
            runtime: PhantomData,
        })
    }

    fn insert(hash: u64, request: CachedRequest, prepared: Weak<PreparedOp>) {
        CALL_CACHE.with(|cache| {
            // Busy only if a kernel prepares an op while the cache is being
            // updated around it: that request simply goes uncached.
            let Ok(mut cache) = cache.try_borrow_mut() else {
                return;
            };
            if cache.by_hash.len() >= CALL_CACHE_LIMIT {
                cache.by_hash.clear();
            }
            let entry = Rc::new(CacheEntry { request, prepared });
            cache.by_hash.entry(hash).or_default().push(entry.clone());
            cache.last = Some(entry);
        });
    }
}

/// An [`OpCall`]'s request, kept to confirm a cache hit.
struct CachedRequest {
    runtime: u64,
    op: String,
    node_name: Option<String>,
    args: Vec<Option<usize>>,
    dtypes: Vec<DType>,
    attrs: Vec<(String, AttrValue)>,
}

impl CachedRequest {
    fn new(runtime: u64, call: &OpCall<'_>) -> Self {
        CachedRequest {
            runtime,
            op: call.op.to_owned(),
            node_name: call.node_name.map(str::to_owned),
            args: call.args.clone(),
            dtypes: call.inputs.iter().map(Tensor::dtype).collect(),
            attrs: call
                .attrs
                .iter()
                .map(|(n, v)| ((*n).to_owned(), v.clone()))
                .collect(),
        }
    }

    fn matches(&self, runtime: u64, call: &OpCall<'_>) -> bool {
        // Counts first: they reject most mismatches without a loop.
        self.runtime == runtime
            && self.dtypes.len() == call.inputs.len()
            && self.attrs.len() == call.attrs.len()
            && self.args.len() == call.args.len()
            && self.op == call.op
            && self.node_name.as_deref() == call.node_name
            && self
                .dtypes
                .iter()
                .zip(&call.inputs)
                .all(|(d, t)| *d == t.dtype())
            && self.args == call.args
            && self
                .attrs
                .iter()
                .zip(&call.attrs)
                .all(|((n, v), (cn, cv))| n == cn && v == cv)
    }
}

/// The `N` outputs of a call as an array (for generated wrappers).
#[doc(hidden)]
pub fn outputs_array<T, const N: usize>(outputs: Vec<T>) -> Result<[T; N]> {
    let count = outputs.len();
    outputs
        .try_into()
        .map_err(|_| Error::internal(format!("expected {N} output(s), the op produced {count}")))
}

/// The one tensor of a single-tensor output group (for generated wrappers).
#[doc(hidden)]
pub fn single_output(group: Vec<Tensor>) -> Result<Tensor> {
    let [tensor] = outputs_array::<Tensor, 1>(group)?;
    Ok(tensor)
}

#[cfg(test)]
mod tests {
    //! The call cache's use of its `Weak`s (run under Miri in CI, with the
    //! crate's other unit tests): hits on a live runtime, and nothing kept
    //! of a dropped one.

    use super::*;
    use crate::kernel::FnKernel;
    use crate::registry::OpRegistration;
    use crate::{DeviceType, OpDefBuilder};

    fn twice(ctx: &mut KernelContext<'_>, _: &()) -> Result<()> {
        let x = ctx.input(0)?.scalar_value::<i32>()?;
        ctx.set_output(0, Tensor::scalar(2 * x))
    }

    static TWICE: OpRegistration = OpRegistration::new(
        "CacheTwice",
        || {
            OpDefBuilder::new("CacheTwice")
                .input("x: int32")
                .output("y: int32")
                .build()
        },
        file!(),
        line!(),
    );
    static TWICE_CPU: KernelRegistration = KernelRegistration::new(
        "CacheTwice",
        DeviceType::Cpu,
        "twice",
        |c| FnKernel::<()>::create(c, twice),
        file!(),
        line!(),
    );

    #[test]
    fn hits_use_the_live_runtime_s_op_and_a_dropped_runtime_keeps_nothing() {
        let registry = Arc::new(Registry::new([&TWICE], [&TWICE_CPU]));
        for round in 0..2 {
            let runtime = Runtime::with_registry(registry.clone());
            let call = || OpCall::new("CacheTwice").input(Tensor::scalar(round + 3));
            // A miss fills this thread's cache; then hits by both paths.
            let prepared = Arc::downgrade(&call().prepared(&runtime).unwrap());
            for _ in 0..2 {
                let y = call().run_on(&runtime).unwrap();
                assert_eq!(y[0].scalar_value::<i32>().unwrap(), 2 * (round + 3));
                let [y] = call().run_on_array::<1>(&runtime).unwrap();
                assert_eq!(y.scalar_value::<i32>().unwrap(), 2 * (round + 3));
            }
            let state = Arc::downgrade(&runtime.state);
            assert_eq!(prepared.strong_count(), 1, "only the runtime owns it");
            drop(runtime);
            assert!(prepared.upgrade().is_none(), "round {round}");
            assert!(state.upgrade().is_none(), "round {round}");
        }
    }
}
