//! Running ops: [`Runtime`] selects and caches kernels, [`PreparedOp`] runs a
//! cached kernel, [`OpCall`] runs an op by name with tensors and attrs.
//!
//! A kernel is created once per distinct node (op, input dtypes, resolved
//! attrs, node name, and whether it serves eager calls or a graph's node:
//! see [`KernelConstruction::is_eager`]) and shared by every later call,
//! from any thread. Each
//! call checks its inputs against the node, catches a panicking kernel
//! (it becomes an `Internal` error; the runtime stays usable), and checks
//! that the kernel set every output.

//!
//! One file per part: [`Runtime`] here, [`PreparedOp`] in `prepared.rs`,
//! [`OpCall`] in `call.rs`, the per-thread call cache in `cache.rs`.

mod cache;
mod call;
pub(crate) mod placement;
mod prepared;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use op_spec::AttrValue;

use self::cache::{CallCache, Hit};
pub use self::call::OpCall;
use self::placement::Placement;
pub use self::prepared::PreparedOp;
use crate::allocator::HostAllocator;
use crate::device::DeviceState;
use crate::executor::Executor;
use crate::kernel::KernelConstruction;
use crate::op_instance::{InputTypes, OpInstance};
use crate::registry::Registry;
use crate::resource::ResourceMgr;
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
    /// The same on the host, for nodes that fall back to a host kernel.
    host: Arc<DeviceState>,
    /// Whether a node with no kernel on the runtime's device is an error
    /// rather than a host kernel's.
    strict_placement: bool,
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
        let state = Arc::new(DeviceState::cpu());
        Runtime {
            registry,
            id: NEXT_RUNTIME_ID.fetch_add(1, Ordering::Relaxed),
            prepared: Mutex::new(HashMap::new()),
            check_shapes: cfg!(debug_assertions),
            host: state.clone(),
            state,
            strict_placement: false,
        }
    }

    /// A runtime over the global registry on GPU number `index`, its
    /// device opened now: nodes run on the GPU where it has a kernel and
    /// on the host otherwise, with their inputs copied to where each
    /// kernel reads them.
    ///
    /// Returns an `Unavailable` error, and no runtime, when the GPU cannot
    /// be used: no GPU backend linked (op-cuda), no CUDA driver, or no GPU
    /// `index`; the message says which.
    ///
    /// ```
    /// use op_core::Runtime;
    /// match Runtime::gpu(0) {
    ///     Ok(runtime) => println!("running on {}", runtime.device()),
    ///     Err(e) => println!("no GPU: {e}"),
    /// }
    /// ```
    pub fn gpu(index: u32) -> Result<Runtime> {
        Runtime::new().try_on_device(Device::gpu(index))
    }

    /// [`on_device`](Self::on_device), having opened the device through
    /// its backend first: the backend's error (an `Unavailable` error for
    /// a missing driver or backend) when it cannot be used.
    pub fn try_on_device(self, device: Device) -> Result<Runtime> {
        crate::device::open(device)?;
        Ok(self.on_device(device))
    }

    /// Whether a node whose device has no kernel for it is an error
    /// (`strict`) or runs on the host's kernel, with copies of its inputs
    /// to the host (the default, TensorFlow's soft placement). A runtime on
    /// the host is unaffected.
    ///
    /// ```
    /// use op_core::Runtime;
    /// let runtime = Runtime::new().strict_placement(true);
    /// assert!(runtime.is_strict_placement());
    /// ```
    pub fn strict_placement(mut self, strict: bool) -> Runtime {
        self.strict_placement = strict;
        self.forget_prepared()
    }

    /// Whether placement is strict ([`strict_placement`](Self::strict_placement)).
    pub fn is_strict_placement(&self) -> bool {
        self.strict_placement
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
        self.forget_prepared()
    }

    /// The same registry, running kernels of `device` instead (and host
    /// kernels for nodes the device has none for, unless placement is
    /// [strict](Self::strict_placement)).
    ///
    /// The device is not opened here: a device that cannot be used makes
    /// each node that would run on it fail to prepare, with the backend's
    /// error. [`try_on_device`](Self::try_on_device) and
    /// [`gpu`](Self::gpu) check it up front.
    pub fn on_device(mut self, device: Device) -> Runtime {
        let state = Arc::make_mut(&mut self.state);
        state.device = device;
        state.resource_device = device;
        state.backend = crate::device::backend(device.kind()).ok();
        self.host = Arc::new(state.host_fallback());
        self.forget_prepared()
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
        self.host = Arc::new(self.state.host_fallback());
        self.forget_prepared()
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
        self.host = Arc::new(self.state.host_fallback());
        self.forget_prepared()
    }

    /// The runtime after a change of settings: the ops it prepared before
    /// hold the old settings, so they go, and it takes a new id so that no
    /// thread's call cache finds them again (the cache relies on a live
    /// runtime never emptying a slot; taking `self` by value means no call
    /// borrows the runtime now). Resources stay: they belong to the device.
    fn forget_prepared(mut self) -> Runtime {
        self.prepared = Mutex::default();
        self.id = NEXT_RUNTIME_ID.fetch_add(1, Ordering::Relaxed);
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

    /// The registry, shared: for a graph whose nodes this runtime will run.
    pub fn shared_registry(&self) -> &Arc<Registry> {
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
        self.prepare_node(op, inputs, attrs, None, false)
    }

    /// [`prepare`](Self::prepare) for a node named `name`: its kernel is
    /// created for that name (a kernel that reads its node's name, such as
    /// a placeholder's error or a variable's default resource name, sees
    /// it, and errors name the node), and shared only by nodes of that
    /// name. What a graph prepares for each of its nodes.
    pub fn prepare_named(
        &self,
        op: &str,
        inputs: &[InputTypes],
        attrs: &[(&str, AttrValue)],
        name: &str,
    ) -> Result<Arc<PreparedOp>> {
        self.prepare_node(op, inputs, attrs, Some(name), false)
    }

    /// The prepared node of a request: for eager calls (`eager`, what
    /// [`OpCall`] prepares) or for a graph's node, whose kernels are kept
    /// apart (see [`KernelConstruction::is_eager`]).
    fn prepare_node(
        &self,
        op: &str,
        inputs: &[InputTypes],
        attrs: &[(&str, AttrValue)],
        node_name: Option<&str>,
        eager: bool,
    ) -> Result<Arc<PreparedOp>> {
        let entry = self.registry.op(op)?;
        let mut node = entry.instance(inputs, attrs)?;
        if let Some(name) = node_name {
            node = node.with_name(name);
        }
        let mut key = node_key(&node);
        if eager {
            // Not a node's text: no node key starts with `|`.
            key.insert_str(0, "|eager|");
        }

        let slot = {
            let mut prepared = self.prepared.lock().unwrap_or_else(PoisonError::into_inner);
            prepared.entry(key).or_default().clone()
        };
        let mut slot = slot.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(prepared) = &*slot {
            return Ok(prepared.clone());
        }
        let (registration, state) = self.select_kernel(entry, &node)?;
        let construction =
            KernelConstruction::new(entry.def(), &node, state.device, &state.resources)
                .eager(eager);
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
            Err(panic) => {
                return Err(Error::internal(format!("panicked{panic}")).with_context(frame()));
            }
        };
        let placement = Placement::new(entry.def(), &node, registration, state.device);
        let prepared = Arc::new(PreparedOp {
            op: entry.def().clone(),
            node: Arc::new(node),
            state: state.clone(),
            placement,
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

    /// The kernel for `node` on this runtime's device, or on the host when
    /// the device has none and placement is not strict; with the state of
    /// the device it runs on. A device kernel needs its device usable.
    fn select_kernel(
        &self,
        entry: &crate::registry::OpEntry,
        node: &OpInstance,
    ) -> Result<(&'static crate::KernelRegistration, &Arc<DeviceState>)> {
        let device = self.state.device;
        let on_device = match self.registry.select_kernel(entry, node, device.kind()) {
            Ok(kernel) => kernel,
            Err(e) if device.kind() == crate::DeviceType::Cpu => return Err(e),
            Err(e) => {
                let host = self
                    .registry
                    .select_kernel(entry, node, crate::DeviceType::Cpu);
                return match host {
                    Ok(_) if self.strict_placement => Err(placement::strict_error(e, device)),
                    Ok(kernel) => Ok((kernel, &self.host)),
                    // Neither: the device's error, which lists every kernel.
                    Err(_) => Err(e),
                };
            }
        };
        if device.kind() == crate::DeviceType::Cpu {
            return Ok((on_device, &self.state));
        }
        let opened = self.state.device_backend().and_then(|b| b.open(device));
        opened.map_err(|e| {
            e.with_context(format!(
                "while preparing kernel {} for {} on {}",
                on_device.name,
                node.describe_with(on_device.describe()),
                prepared::short_name(device)
            ))
        })?;
        Ok((on_device, &self.state))
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
        self.execute(call)
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
        match value {
            // `Display` summarizes a tensor as `<tensor float>`: two
            // constants of one dtype would share one kernel, and so one
            // value. Their full text tells them apart.
            AttrValue::Tensor(_) | AttrValue::List(op_spec::ListValue::Tensor(_)) => {
                let _ = write!(key, "|{name}={}", op_spec::pbtxt::attr_value_text(value));
            }
            _ => {
                let _ = write!(key, "|{name}={value}");
            }
        }
    }
    key
}

/// The eager executor: each call selects (or finds) its node's kernel and
/// runs it now.
impl Executor for Runtime {
    type Value = Tensor;

    #[inline]
    fn execute(&self, mut call: OpCall<'_>) -> Result<Vec<Tensor>> {
        // Fast path: run the cached op while the per-thread cache is
        // borrowed, without touching its reference count. A kernel that
        // calls ops itself borrows the cache again, which shared borrows
        // allow (its misses then go uncached).
        if let Some(hit) = CallCache::lookup(self, &call) {
            return hit.op().run(std::mem::take(&mut call.inputs));
        }
        let prepared = call.prepared(self)?;
        prepared.run(call.inputs)
    }

    fn execute_grouped(&self, call: OpCall<'_>) -> Result<Vec<Vec<Tensor>>> {
        let prepared = call.prepared(self)?;
        let mut flat = prepared.run(call.inputs)?.into_iter();
        let groups = (0..prepared.op.outputs.len())
            .map(|arg| {
                let len = prepared.node.output_arg_range(arg).map_or(0, |r| r.len());
                flat.by_ref().take(len).collect()
            })
            .collect();
        Ok(groups)
    }

    /// No `Vec` of outputs: the kernel fills an array of slots.
    fn execute_array<const N: usize>(&self, mut call: OpCall<'_>) -> Result<[Tensor; N]> {
        let cached: Hit<'_>;
        let fresh: Arc<PreparedOp>;
        let op: &PreparedOp = match CallCache::lookup(self, &call) {
            Some(hit) => {
                cached = hit;
                cached.op()
            }
            None => {
                fresh = call.prepared(self)?;
                &fresh
            }
        };
        let mut outputs: [Option<Tensor>; N] = std::array::from_fn(|_| None);
        op.run_into(&mut call.inputs, &mut outputs).map_err(|e| {
            match op.node.output_types().len() {
                count if count != N => crate::executor::wrong_output_count::<N>(count),
                _ => e,
            }
        })?;
        // `run_into` succeeded, so it filled every slot.
        Ok(outputs.map(|o| o.expect("run_into fills every output")))
    }
}
