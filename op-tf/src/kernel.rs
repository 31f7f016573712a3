//! Our kernels as TensorFlow kernels: one constructor, run and delete for
//! every op (TensorFlow's callbacks carry no op, so each reads its node).
//!
//! | TensorFlow | ours |
//! | --- | --- |
//! | create, from the node's `NodeDef` | the node's attrs read as a GraphDef's are, its input dtypes from them, and the kernel made once for them ([`Runtime::prepare_named`]) |
//! | compute | the inputs lent without a copy (copied for a stateful op, whose kernel may keep them), the kernel run, each output handed to TensorFlow without a copy (`TF_NewTensor` over our buffer, freed when TensorFlow drops it) |
//! | a failure | a status with our code and message; a panic is `Internal` |

use std::ffi::{c_int, c_void};
use std::sync::{Arc, OnceLock};

use op_core::registry::OpEntry;
use op_core::{AttrValue, DType, Error, PreparedOp, Result, Runtime, Tensor, contain_panic};
use op_graph::graphdef::convert::attr_from_proto;
use op_graph::graphdef::proto::NodeDef;
use op_host::kernel::{HostBuffer, PlacedOutput};
use prost::Message;
use smallvec::SmallVec;

use crate::api::{Api, TF_OpKernelConstruction, TF_OpKernelContext, TF_Tensor};
use crate::gradient::GradientKernel;
use crate::resources;
use crate::shim;
use crate::status::{check, set_error, status};
use crate::tstring::{self, TSTRING_SIZE};

/// A call's outputs, on the stack for up to 4.
type Outputs = SmallVec<[Option<Tensor>; 4]>;

/// The C API, once the library is loaded ([`crate::load`]); kernels exist
/// only after that.
pub(crate) static API: OnceLock<Api> = OnceLock::new();

pub(crate) fn api() -> &'static Api {
    API.get()
        .expect("kernels are registered only after the C API is found")
}

/// The environment variable that sets how many threads our kernels split
/// their work over inside TensorFlow: a positive number, read at load;
/// unset, one per core. The pool is the plugin's own, not TensorFlow's, so
/// under a busy graph the two share the cores; `1` runs each of our kernels
/// on the TensorFlow thread that calls it.
pub const THREADS_VARIABLE: &str = "OPKIT_TF_THREADS";

/// The runtime every TensorFlow kernel of this library is prepared on.
///
/// Its intra-op pool (what `Shard` and the elementwise helpers split work
/// over) is its own, not TensorFlow's: `OPKIT_TF_THREADS` threads when that
/// variable holds a positive number at load, else one per core. TensorFlow
/// runs independent ops at once on its inter-op threads, so under a busy
/// graph our pool and TensorFlow's share the cores; `OPKIT_TF_THREADS=1`
/// makes each of our kernels run on the TensorFlow thread that calls it.
pub(crate) fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| match threads_from_env() {
        Some(threads) => op_core::threads::ThreadPool::new(threads)
            .map(|pool| Runtime::new().with_threads(Arc::new(pool)))
            .unwrap_or_else(|_| Runtime::new()),
        None => Runtime::new(),
    })
}

/// `OPKIT_TF_THREADS`, when it holds a positive number.
pub(crate) fn threads_from_env() -> Option<usize> {
    std::env::var(THREADS_VARIABLE)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
}

/// A kernel's state between create and delete.
pub(crate) enum TfKernel {
    /// One of our kernels.
    Op {
        prepared: Arc<PreparedOp>,
        /// Whether inputs may be lent: a stateless kernel keeps nothing of
        /// a call, a stateful one (a variable's assign) may keep an input.
        lend_inputs: bool,
    },
    /// Our gradient of an op ([`crate::gradient`]).
    Gradient(GradientKernel),
}

/// A kernel's state between TensorFlow's create and delete, which the three
/// callbacks below drive: ours on the CPU ([`TfKernel`]) and on the GPU
/// (`crate::gpu::GpuKernel`).
pub(crate) trait KernelState: Sized {
    /// What a contained panic says was running (`the kernel`).
    const WHAT: &'static str;

    /// The state for the node TensorFlow is constructing.
    ///
    /// # Safety
    ///
    /// `ctx` is live.
    unsafe fn new(api: &Api, ctx: *mut TF_OpKernelConstruction) -> Result<Self>;

    /// One call.
    ///
    /// # Safety
    ///
    /// `ctx` is live.
    unsafe fn compute(&self, api: &Api, ctx: *mut TF_OpKernelContext) -> Result<()>;
}

/// TensorFlow's kernel constructor: see the [module docs](self).
///
/// # Safety
///
/// TensorFlow calls it with a live construction.
pub(crate) unsafe extern "C" fn create<K: KernelState>(
    ctx: *mut TF_OpKernelConstruction,
) -> *mut c_void {
    let api = api();
    let what = format!("creating {}", K::WHAT);
    // SAFETY: TensorFlow's live construction, for the call.
    match contain_panic(&what, || unsafe { K::new(api, ctx) }) {
        Ok(kernel) => Box::into_raw(Box::new(kernel)).cast(),
        Err(error) => {
            let status = status(api);
            set_error(api, status, &error);
            // SAFETY: both live; TensorFlow copies the status.
            unsafe { (api.TF_OpKernelConstruction_Failure)(ctx, status) };
            std::ptr::null_mut()
        }
    }
}

/// TensorFlow's kernel run.
///
/// # Safety
///
/// `kernel` is what [`create`] returned for this `K` (TensorFlow never
/// runs a kernel whose creation failed), `ctx` a live context.
pub(crate) unsafe extern "C" fn compute<K: KernelState>(
    kernel: *mut c_void,
    ctx: *mut TF_OpKernelContext,
) {
    let api = api();
    // SAFETY: the caller's contract: `create` made it from a `K`.
    let kernel = unsafe { &*kernel.cast::<K>() };
    // SAFETY: TensorFlow's live context, for the call.
    if let Err(error) = contain_panic(K::WHAT, || unsafe { kernel.compute(api, ctx) }) {
        let status = status(api);
        set_error(api, status, &error);
        // SAFETY: both live; TensorFlow copies the status.
        unsafe { (api.TF_OpKernelContext_Failure)(ctx, status) };
    }
}

/// TensorFlow's kernel delete.
///
/// # Safety
///
/// `kernel` is what [`create`] returned for this `K`, not yet deleted (or
/// null).
pub(crate) unsafe extern "C" fn delete<K: KernelState>(kernel: *mut c_void) {
    if !kernel.is_null() {
        // SAFETY: the caller's contract; dropping an `Arc` does not panic
        // short of a kernel's own Drop, which is contained below.
        let kernel = unsafe { Box::from_raw(kernel.cast::<K>()) };
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(kernel)));
    }
}

impl KernelState for TfKernel {
    const WHAT: &'static str = "the kernel";

    unsafe fn new(api: &Api, ctx: *mut TF_OpKernelConstruction) -> Result<TfKernel> {
        // SAFETY: the caller's contract.
        unsafe { new_kernel(api, ctx) }
    }

    unsafe fn compute(&self, api: &Api, ctx: *mut TF_OpKernelContext) -> Result<()> {
        // SAFETY: the caller's contract.
        unsafe { self.run(api, ctx) }
    }
}

/// The kernel for the node TensorFlow is constructing.
///
/// # Safety
///
/// `ctx` is live.
unsafe fn new_kernel(api: &Api, ctx: *mut TF_OpKernelConstruction) -> Result<TfKernel> {
    // SAFETY: the caller's contract.
    let node = unsafe { read_node(api, ctx) }?;
    let forward = node.def.op.strip_prefix(crate::gradient::PREFIX);
    if forward.is_some() {
        return Ok(TfKernel::Gradient(GradientKernel::new(
            node.entry,
            &node.attrs,
        )?));
    }
    let prepared = node.prepare(runtime())?;
    Ok(TfKernel::Op {
        lend_inputs: !node.entry.def().is_stateful,
        prepared,
    })
}

/// The node a kernel is constructed for, read: its `NodeDef`, our op (the
/// forward op, for a gradient op), and the attrs it sets, as ours.
pub(crate) struct Node {
    pub(crate) def: NodeDef,
    pub(crate) entry: &'static OpEntry,
    pub(crate) attrs: Vec<(&'static str, AttrValue)>,
}

impl Node {
    /// The node prepared on `runtime`: its input dtypes from its attrs,
    /// its kernel made once for them.
    pub(crate) fn prepare(&self, runtime: &Runtime) -> Result<Arc<PreparedOp>> {
        let inputs = input_types(self.entry.def(), &self.attrs)?;
        runtime.prepare_named(&self.def.op, &inputs, &self.attrs, &self.def.name)
    }
}

/// Reads the node TensorFlow is constructing a kernel for.
///
/// # Safety
///
/// `ctx` is live.
pub(crate) unsafe fn read_node(api: &Api, ctx: *mut TF_OpKernelConstruction) -> Result<Node> {
    let status = status(api);
    // SAFETY: live construction and status; the buffer is ours to free.
    let buffer = unsafe { (api.TF_OpKernelConstruction_GetNodeDef)(ctx, status) };
    check(api, status, || "reading the kernel's NodeDef".into())?;
    if buffer.is_null() {
        return Err(Error::internal("TensorFlow gave no NodeDef for the kernel"));
    }
    let node = {
        // SAFETY: TensorFlow's buffer holds `length` bytes at `data` until
        // it is deleted, just below.
        let bytes = unsafe {
            let b = &*buffer;
            if b.length == 0 {
                &[][..]
            } else {
                std::slice::from_raw_parts(b.data.cast::<u8>(), b.length)
            }
        };
        let node = NodeDef::decode(bytes);
        // SAFETY: TensorFlow's buffer, freed once.
        unsafe { (api.TF_DeleteBuffer)(buffer) };
        node.map_err(|e| Error::internal(format!("TensorFlow's NodeDef does not decode: {e}")))?
    };
    let forward = node.op.strip_prefix(crate::gradient::PREFIX);
    let entry = runtime().registry().op(forward.unwrap_or(&node.op))?;
    let def = entry.def();
    let mut attrs: Vec<(&str, AttrValue)> = Vec::with_capacity(def.attrs.len());
    for attr in &def.attrs {
        if let Some(value) = node.attr.get(&attr.name) {
            let value = attr_from_proto(value, Some(attr.ty)).map_err(|e| {
                e.with_context(format!(
                    "reading attr '{}' of node '{}'",
                    attr.name, node.name
                ))
            })?;
            attrs.push((attr.name.as_str(), value));
        }
    }
    Ok(Node {
        def: node,
        entry,
        attrs,
    })
}

/// The dtypes of a node's inputs, from its attrs (TensorFlow creates a
/// kernel from the node alone).
pub(crate) use op_host::kernel::input_types;

/// A C API handle of a context's input or output, deleted when dropped.
/// TensorFlow's context holds the tensor itself until the call ends, so the
/// buffer a handle shows outlives the handle; holding an input's handle
/// longer would keep TensorFlow from forwarding that buffer to an output.
struct TensorHandle<'a>(&'a Api, *mut TF_Tensor);

impl Drop for TensorHandle<'_> {
    fn drop(&mut self) {
        // SAFETY: the handle came from TF_GetInput or TF_AllocateOutput,
        // deleted once.
        unsafe { (self.0.TF_DeleteTensor)(self.1) };
    }
}

impl TfKernel {
    /// `error` of reading input `index`, naming the op, node and input as
    /// our runtime's kernel context does.
    fn input_error(&self, index: usize, error: Error) -> Error {
        let TfKernel::Op { prepared, .. } = self else {
            return error;
        };
        let node = prepared.instance();
        let input = node.describe_input(prepared.op_def(), index);
        Error::new(
            error.code(),
            format!("{node}: {input}: {}", error.message()),
        )
    }

    /// One call of the kernel: see the [module docs](self).
    ///
    /// # Safety
    ///
    /// `ctx` is live.
    unsafe fn run(&self, api: &Api, ctx: *mut TF_OpKernelContext) -> Result<()> {
        // SAFETY: live context.
        let count = unsafe { (api.TF_NumInputs)(ctx) };
        let lend = match self {
            TfKernel::Op { lend_inputs, .. } => *lend_inputs,
            // A gradient runs stateless ops of ours on its inputs.
            TfKernel::Gradient(_) => true,
        };
        // Up to 8 inputs and outputs, the call allocates nothing of its own
        // but the boxes that keep each output alive for TensorFlow.
        let mut inputs: SmallVec<[Tensor; 8]> = SmallVec::new();
        let input_types = match self {
            TfKernel::Op { prepared, .. } => prepared.instance().input_types(),
            TfKernel::Gradient(_) => &[],
        };
        for i in 0..count {
            if input_types.get(i as usize) == Some(&DType::Resource) {
                // SAFETY: live context; input `i` is a resource tensor.
                let handles = unsafe { resources::input(ctx, i) }
                    .map_err(|e| self.input_error(i as usize, e))?;
                inputs.push(handles);
                continue;
            }
            // SAFETY: live context; `i` is one of its inputs, a CPU
            // kernel's, in host memory, live until the call ends, which no
            // lent tensor outlives (see below).
            let mut tensor = unsafe { input_parts(api, ctx, i)?.host_tensor(i) }?;
            if !lend {
                tensor.make_distinct()?;
            }
            inputs.push(tensor);
        }
        if let TfKernel::Op {
            prepared,
            lend_inputs: true,
        } = self
            // SAFETY: live context; `inputs` are lent from its inputs.
            && let Some(placed) = unsafe { place_outputs(api, ctx, prepared, &mut inputs) }?
        {
            // SAFETY: `placed` is for these inputs, in this call.
            return unsafe { run_placed(prepared, &mut inputs, placed) };
        }
        let result = match self {
            TfKernel::Op { prepared, .. } => {
                let mut outputs: Outputs =
                    smallvec::smallvec![None; prepared.instance().output_types().len()];
                prepared
                    .run_into(&mut inputs, &mut outputs)
                    .map(|()| outputs)
            }
            TfKernel::Gradient(gradient) => gradient
                .run(runtime(), &inputs)
                .map(|outputs| outputs.into_iter().map(Some).collect()),
        };
        // Each output in a buffer of its own, before the inputs go: an
        // output may be a lent input (a kernel that forwards one), and
        // TensorFlow may write into an output it forwards later, which must
        // not be a buffer the kernel keeps (a cached constant).
        let outputs = result.and_then(|mut outputs| {
            for output in &mut outputs {
                output
                    .as_mut()
                    .ok_or_else(|| Error::internal("the kernel left an output unset"))?
                    .make_distinct()?;
            }
            Ok(outputs)
        });
        // The lent inputs go before the call ends.
        drop(inputs);
        let outputs = outputs?;
        // SAFETY: live context.
        let expected = unsafe { (api.TF_NumOutputs)(ctx) };
        if usize::try_from(expected).ok() != Some(outputs.len()) {
            return Err(Error::internal(format!(
                "TensorFlow's node has {expected} outputs, ours {}",
                outputs.len()
            )));
        }
        for (i, output) in outputs.into_iter().flatten().enumerate() {
            // SAFETY: live context; `i` is in range (checked above).
            unsafe { set_output(api, ctx, i as c_int, output) }?;
        }
        Ok(())
    }
}

/// The outputs TensorFlow allocated before the kernel runs: the buffers
/// ([`op_host::kernel::PlacedOutput`], one marked `lent_as_input` where
/// TensorFlow forwarded an input), and the C API's handles of them,
/// deleted on drop (TensorFlow keeps the outputs themselves).
struct Placed<'a> {
    api: &'a Api,
    handles: SmallVec<[*mut TF_Tensor; 4]>,
    outputs: SmallVec<[PlacedOutput; 4]>,
    /// The input each output is, where TensorFlow forwarded one.
    forwarded: SmallVec<[Option<usize>; 4]>,
}

impl Drop for Placed<'_> {
    fn drop(&mut self) {
        for &handle in &self.handles {
            // SAFETY: each handle came from TF_ForwardInputOrAllocateOutput,
            // deleted once; TensorFlow keeps the output itself.
            unsafe { (self.api.TF_DeleteTensor)(handle) };
        }
    }
}

/// For a large call whose output shapes our shape function knows from the
/// inputs ([`op_host::kernel::planned_output_dims`]), every output
/// allocated by TensorFlow now (an input of its dtype and shape forwarded
/// where TensorFlow allows), so that the kernel writes into TensorFlow's
/// memory. A forwarded input is lent writable in `inputs`, so that a
/// kernel that forwards it writes in place. `None` when the call does not
/// qualify.
///
/// # Safety
///
/// `ctx` is live; `inputs` are lent from its inputs.
unsafe fn place_outputs<'a>(
    api: &'a Api,
    ctx: *mut TF_OpKernelContext,
    prepared: &PreparedOp,
    inputs: &mut [Tensor],
) -> Result<Option<Placed<'a>>> {
    let node = prepared.instance();
    let shape_fn = runtime().registry().op(node.op())?.shape_fn();
    let Some(dims) = op_host::kernel::planned_output_dims(prepared, shape_fn, inputs)? else {
        return Ok(None);
    };
    let mut placed = Placed {
        api,
        handles: SmallVec::new(),
        outputs: SmallVec::new(),
        forwarded: SmallVec::new(),
    };
    for (j, (dtype, out_dims)) in node.output_types().iter().zip(dims).enumerate() {
        // Inputs of the output's dtype and shape, not already forwarded.
        let candidates: SmallVec<[c_int; 8]> = (0..inputs.len())
            .filter(|&k| inputs[k].dtype() == *dtype && inputs[k].dims() == out_dims.as_slice())
            .filter(|&k| !placed.forwarded.contains(&Some(k)))
            .map(|k| k as c_int)
            .collect();
        let tf_dims: SmallVec<[i64; 8]> = out_dims.iter().map(|&d| d as i64).collect();
        let mut forwarded: c_int = -1;
        let status = status(api);
        // SAFETY: live context and status; TensorFlow sets output `j` and
        // gives a handle of it that is ours to delete.
        let handle = unsafe {
            (api.TF_ForwardInputOrAllocateOutput)(
                ctx,
                candidates.as_ptr(),
                candidates.len() as c_int,
                j as c_int,
                tf_dims.as_ptr(),
                tf_dims.len() as c_int,
                &mut forwarded,
                status,
            )
        };
        check(api, status, || format!("allocating output {j}"))?;
        placed.handles.push(handle);
        // SAFETY: a live handle.
        let buffer = unsafe {
            HostBuffer {
                data: (api.TF_TensorData)(handle).cast::<u8>(),
                len: (api.TF_TensorByteSize)(handle),
            }
        };
        let forwarded = usize::try_from(forwarded).ok();
        if let Some(k) = forwarded {
            // SAFETY: TensorFlow gave input k's buffer to output j: nothing
            // else reads or writes it while the kernel runs, which reaches it
            // only through this tensor.
            inputs[k] = unsafe { Tensor::lend_mut(*dtype, &out_dims, buffer.as_mut_slice()) }?;
        }
        placed.forwarded.push(forwarded);
        placed.outputs.push(PlacedOutput {
            buffer,
            dims: out_dims,
            lent_as_input: forwarded.is_some(),
        });
    }
    Ok(Some(placed))
}

/// Runs the kernel with its outputs in TensorFlow's buffers
/// ([`op_host::kernel::run_placed`]).
///
/// # Safety
///
/// `placed` came from [`place_outputs`] for these inputs, in this call.
unsafe fn run_placed(
    prepared: &PreparedOp,
    inputs: &mut [Tensor],
    placed: Placed<'_>,
) -> Result<()> {
    // SAFETY: the caller's contract: TensorFlow's buffers for this call's
    // outputs, each used only through the kernel (a forwarded one through
    // its input).
    unsafe { op_host::kernel::run_placed(prepared, inputs, &placed.outputs) }
}

/// What a kernel reads of one input: its TensorFlow dtype, dims and
/// buffer (in host or device memory, as TensorFlow placed it).
pub(crate) struct InputParts {
    code: c_int,
    dims: SmallVec<[i64; 8]>,
    pub(crate) data: *mut c_void,
    pub(crate) bytes: usize,
}

/// Input `index` of the context: through the shim's view where it is
/// loaded, else the C API (`TF_GetInput`).
///
/// # Safety
///
/// `ctx` is live and `index` one of its inputs; the buffer lives until the
/// call ends.
pub(crate) unsafe fn input_parts(
    api: &Api,
    ctx: *mut TF_OpKernelContext,
    index: c_int,
) -> Result<InputParts> {
    // SAFETY: the caller's contract.
    if let Some(view) = unsafe { shim::input_view(ctx, index) } {
        return Ok(InputParts {
            code: view.dtype,
            dims: view.dims().iter().copied().collect(),
            data: view.data,
            bytes: view.bytes,
        });
    }
    let status = status(api);
    let mut handle = std::ptr::null_mut();
    // SAFETY: live context and status; `handle` receives a new one.
    unsafe { (api.TF_GetInput)(ctx, index, &mut handle, status) };
    check(api, status, || format!("reading input {index}"))?;
    // Deleted at once: the context holds the input itself until the call
    // ends, and a handle held longer would keep TensorFlow from forwarding
    // the buffer to an output.
    let handle = TensorHandle(api, handle);
    // SAFETY: live handle.
    let rank = unsafe { (api.TF_NumDims)(handle.1) };
    // SAFETY: live handle, `d` below its rank; TensorFlow's buffer of
    // `bytes` bytes at `data`, the context's input's.
    unsafe {
        Ok(InputParts {
            code: (api.TF_TensorType)(handle.1),
            dims: (0..rank).map(|d| (api.TF_Dim)(handle.1, d)).collect(),
            data: (api.TF_TensorData)(handle.1),
            bytes: (api.TF_TensorByteSize)(handle.1),
        })
    }
}

impl InputParts {
    /// Our dtype of input `index`, or why we have none.
    pub(crate) fn dtype(&self, index: c_int) -> Result<DType> {
        DType::from_enum_value(self.code).ok_or_else(|| {
            Error::unimplemented(format!(
                "input {index} has TensorFlow dtype {}, which we do not know",
                self.code
            ))
        })
    }

    /// The dims as ours (TensorFlow's are never negative in a tensor).
    pub(crate) fn dims(&self) -> SmallVec<[usize; 8]> {
        self.dims.iter().map(|&d| d.max(0) as usize).collect()
    }

    /// Input `index`, in host memory, as our tensor, lent (read-only) over
    /// its buffer.
    ///
    /// # Safety
    ///
    /// The buffer is in host memory, live while the tensor (and any clone)
    /// is used.
    pub(crate) unsafe fn host_tensor(&self, index: c_int) -> Result<Tensor> {
        let dtype = self.dtype(index)?;
        let dims = self.dims();
        let bytes: &[u8] = if self.bytes == 0 || self.data.is_null() {
            &[]
        } else {
            // SAFETY: as above; nothing writes an input while a kernel runs.
            unsafe { std::slice::from_raw_parts(self.data.cast::<u8>(), self.bytes) }
        };
        match dtype {
            DType::String => {
                let count = dims.iter().product::<usize>();
                if count.checked_mul(TSTRING_SIZE) != Some(bytes.len()) {
                    return Err(Error::internal(format!(
                        "input {index}: {} bytes for {count} strings",
                        bytes.len()
                    )));
                }
                let elements = bytes.as_ptr().cast::<[u8; TSTRING_SIZE]>();
                // SAFETY: TensorFlow's string tensor: `count` initialized
                // tstrings, live (the caller's contract); the characters are
                // copied out.
                let values = (0..count).map(|i| unsafe { tstring::read(elements.add(i)) });
                Tensor::strings(dims, values)
            }
            DType::Resource | DType::Variant => Err(Error::unimplemented(format!(
                "input {index} is {dtype}: the TensorFlow plugin does not take {dtype} tensors yet"
            ))),
            // Bools are checked, the rest lent.
            // SAFETY: the caller's contract: TensorFlow's buffer outlives every
            // use of the tensor.
            _ => unsafe { op_host::kernel::lend_input(dtype, &dims, bytes) }
                .map_err(|e| e.with_context(format!("reading input {index}"))),
        }
    }
}

/// Frees an output's buffer when TensorFlow drops its tensor.
///
/// # Safety
///
/// `arg` is the boxed tensor `set_output` leaked.
unsafe extern "C" fn free_output(_data: *mut c_void, _len: usize, arg: *mut c_void) {
    // SAFETY: the caller's contract; called once per TF_NewTensor.
    let tensor = unsafe { Box::from_raw(arg.cast::<Tensor>()) };
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(tensor)));
}

/// Hands `output` to TensorFlow as output `index`, without a copy.
///
/// # Safety
///
/// `ctx` is live and `index` one of its outputs.
pub(crate) unsafe fn set_output(
    api: &Api,
    ctx: *mut TF_OpKernelContext,
    index: c_int,
    output: Tensor,
) -> Result<()> {
    if output.dtype() == DType::Resource {
        // SAFETY: the caller's contract.
        return unsafe { resources::set_output(ctx, index, &output) };
    }
    let dims: SmallVec<[i64; 8]> = output.dims().iter().map(|&d| d as i64).collect();
    if output.dtype() == DType::String {
        // SAFETY: the caller's contract.
        return unsafe { set_string_output(api, ctx, index, &dims, &output) };
    }
    let dtype = output.dtype().enum_value();
    if output.num_elements() * output.dtype().size_of().unwrap_or(0) <= COPIED_BYTES {
        // SAFETY: the caller's contract.
        return unsafe { copy_output(api, ctx, index, &dims, &output) };
    }
    // Boxed before its bytes are taken: a small tensor keeps its elements
    // inside itself, which must not move while TensorFlow reads them.
    let boxed = Box::new(output);
    let bytes = boxed
        .plain_bytes()
        .map_err(|e| e.with_context(format!("handing output {index} to TensorFlow")))?;
    let (data, len) = (bytes.as_ptr().cast_mut().cast::<c_void>(), bytes.len());
    let arg = Box::into_raw(boxed).cast::<c_void>();
    // SAFETY: `data` is `len` bytes kept alive by `arg` until TensorFlow
    // calls `free_output` (at once if it copies them). The buffer is the
    // tensor's alone (`compute` made it distinct), so TensorFlow may write
    // into it when it forwards it, as into a buffer of its own.
    let tensor = unsafe {
        (api.TF_NewTensor)(
            dtype,
            dims.as_ptr(),
            dims.len() as c_int,
            data,
            len,
            free_output,
            arg,
        )
    };
    if tensor.is_null() {
        // SAFETY: TensorFlow did not take `arg`.
        unsafe { free_output(data, len, arg) };
        return Err(Error::internal(format!(
            "TensorFlow made no tensor for output {index}"
        )));
    }
    let status = status(api);
    // SAFETY: live context, tensor and status; TensorFlow shares the
    // buffer, and the handle is ours to delete.
    unsafe {
        (api.TF_SetOutput)(ctx, index, tensor, status);
        (api.TF_DeleteTensor)(tensor);
    }
    check(api, status, || format!("setting output {index}"))
}

/// Outputs of at most this many bytes are copied into a buffer TensorFlow
/// allocates: cheaper than lending ours (a box, TensorFlow's wrapper of
/// foreign memory, and a copy anyway when our buffer is not aligned as
/// TensorFlow wants, as a tensor that keeps its elements inline is not).
const COPIED_BYTES: usize = 4096;

/// Copies a small plain output into a tensor TensorFlow allocates.
///
/// # Safety
///
/// `ctx` is live and `index` one of its outputs.
unsafe fn copy_output(
    api: &Api,
    ctx: *mut TF_OpKernelContext,
    index: c_int,
    dims: &[i64],
    output: &Tensor,
) -> Result<()> {
    let bytes = output
        .plain_bytes()
        .map_err(|e| e.with_context(format!("handing output {index} to TensorFlow")))?;
    // SAFETY: the caller's contract.
    let allocated = unsafe { allocate_output(api, ctx, index, output.dtype(), dims, bytes.len()) }?;
    // SAFETY: the new output's buffer holds `bytes.len()` bytes (its dtype
    // and shape are the tensor's); only this kernel writes it now.
    unsafe {
        HostBuffer {
            data: allocated.data.cast::<u8>(),
            len: bytes.len(),
        }
        .as_mut_slice()
    }
    .copy_from_slice(bytes);
    Ok(())
}

/// An output TensorFlow allocated: its buffer, and the C API's handle of
/// it when the C API allocated it (deleted with this; the output stays).
pub(crate) struct Allocated<'a> {
    pub(crate) data: *mut c_void,
    _handle: Option<TensorHandle<'a>>,
}

/// Allocates output `index` of `dtype` and `dims` (`len` bytes): through
/// the shim's view when it is loaded (no wrapper to allocate and free),
/// else `TF_AllocateOutput`.
///
/// # Safety
///
/// `ctx` is live and `index` one of its outputs.
pub(crate) unsafe fn allocate_output<'a>(
    api: &'a Api,
    ctx: *mut TF_OpKernelContext,
    index: c_int,
    dtype: DType,
    dims: &[i64],
    len: usize,
) -> Result<Allocated<'a>> {
    // SAFETY: the caller's contract.
    if let Some(view) = unsafe { shim::allocate_output_view(ctx, index, dims) } {
        let view = view?;
        if view.dtype != dtype.enum_value() || view.bytes != len {
            return Err(Error::internal(format!(
                "output {index}: TensorFlow allocated {} bytes of dtype {}, ours are {len} of {dtype}",
                view.bytes, view.dtype
            )));
        }
        return Ok(Allocated {
            data: view.data,
            _handle: None,
        });
    }
    let status = status(api);
    // SAFETY: live context and status; the handle is ours to delete.
    let handle = unsafe {
        (api.TF_AllocateOutput)(
            ctx,
            index,
            dtype.enum_value(),
            dims.as_ptr(),
            dims.len() as c_int,
            len,
            status,
        )
    };
    check(api, status, || format!("allocating output {index}"))?;
    let handle = TensorHandle(api, handle);
    Ok(Allocated {
        // SAFETY: a live handle.
        data: unsafe { (api.TF_TensorData)(handle.1) },
        _handle: Some(handle),
    })
}

/// Writes a string output into a string tensor TensorFlow allocates (its
/// elements are `tstring`s, which only TensorFlow's layout can hold).
///
/// # Safety
///
/// `ctx` is live and `index` one of its outputs.
unsafe fn set_string_output(
    api: &Api,
    ctx: *mut TF_OpKernelContext,
    index: c_int,
    dims: &[i64],
    output: &Tensor,
) -> Result<()> {
    let values = output.as_slice::<Vec<u8>>()?;
    // SAFETY: the caller's contract; TensorFlow allocates `values.len()`
    // empty tstrings.
    let allocated = unsafe {
        allocate_output(
            api,
            ctx,
            index,
            DType::String,
            dims,
            values.len() * TSTRING_SIZE,
        )
    }?;
    let elements = allocated.data.cast::<[u8; TSTRING_SIZE]>();
    values.iter().enumerate().try_for_each(|(i, value)| {
        // SAFETY: element `i` of the new output, an empty tstring only this
        // kernel writes.
        unsafe { tstring::write(elements.add(i), value) }
    })
}
