//! The delegate: LiteRT's `TfLiteDelegate` and the delegate kernel that
//! runs one claimed node with our lite kernel.
//!
//! Every function LiteRT calls is `extern "C"` and contains panics: a
//! panic becomes an error naming the op, reported through LiteRT's error
//! reporter, and the call returns `kTfLiteError`.

use std::collections::BTreeMap;
use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::sync::OnceLock;

use op_core::error::quoted;
use op_core::{DType, Error, Result, contain_panic};
use op_lite::bridge::{FrameworkOps, Layered};
use op_lite::external::{ExternalNode, HostTensor, NodeSpec};
use op_lite::{MutableOpResolver, OpResolver};
use smallvec::SmallVec;

use crate::ffi::*;
use crate::options::{Options, Unclaimed};

/// What the library can run: its linked `#[lite_kernel]`s, then the
/// framework's ops through the lite bridge, as op-lite resolves a custom op.
pub struct Library {
    resolver: Layered<MutableOpResolver>,
    /// The custom ops the resolver has, by name: where each comes from.
    names: BTreeMap<String, &'static str>,
}

/// A function that adds custom ops to a resolver, as TensorFlow Lite's
/// `resolver.AddCustom("Sin", Register_SIN())` does (seed 002): what
/// `export!(register = path)` names.
pub type Registrar = fn(&mut MutableOpResolver);

/// The registrar of this library's `export!`, set by its entry points
/// before the library is first made.
static REGISTRAR: OnceLock<Option<Registrar>> = OnceLock::new();

/// Sets the library's registrar (`export!(register = ...)`); the first
/// call wins. The `export!` entry points call it.
pub fn set_registrar(registrar: Option<Registrar>) {
    let _ = REGISTRAR.set(registrar);
}

impl Library {
    /// The library of what is linked into the program: its `#[lite_kernel]`s
    /// and, with a `registrar`, the custom ops it adds (`"registered"`),
    /// then the framework's ops.
    pub fn linked(registrar: Option<Registrar>) -> Library {
        let mut linked = MutableOpResolver::new();
        linked.add_linked();
        let mut names = BTreeMap::new();
        for (name, _) in linked.custom_ops() {
            names.insert(name, "lite_kernel");
        }
        if let Some(register) = registrar {
            register(&mut linked);
            for (name, _) in linked.custom_ops() {
                names.entry(name).or_insert("registered");
            }
        }
        let resolver = FrameworkOps::new().over(linked);
        for (name, _) in resolver.custom_ops() {
            names.entry(name).or_insert("framework");
        }
        Library { resolver, names }
    }

    /// The library of the process, made once.
    pub fn global() -> &'static Library {
        static LIBRARY: OnceLock<Library> = OnceLock::new();
        LIBRARY.get_or_init(|| Library::linked(REGISTRAR.get().copied().flatten()))
    }

    /// The custom ops the library can claim, sorted, with where each comes
    /// from (`"lite_kernel"`, `"registered"` or `"framework"`).
    pub fn ops(&self) -> impl Iterator<Item = (&str, &'static str)> {
        self.names.iter().map(|(n, from)| (n.as_str(), *from))
    }

    /// Whether the library runs the custom op `name` at `version`.
    pub fn has(&self, name: &str, version: i32) -> bool {
        self.resolver.find_custom(name, version).is_some()
    }

    fn listing(&self) -> String {
        if self.names.is_empty() {
            return "no custom ops".to_owned();
        }
        let names: Vec<String> = self.names.keys().map(|n| quoted(n).to_string()).collect();
        names.join(", ")
    }
}

/// The delegate LiteRT holds: its C struct first, so that the
/// `TfLiteDelegate*` LiteRT passes back is ours.
#[repr(C)]
struct Delegate {
    base: TfLiteDelegate,
    options: Options,
}

/// `tflite_plugin_create_delegate`: parses the options and makes the
/// delegate; on an error reports it through `report_error` and returns
/// null (Python's `load_delegate` raises `ValueError` with the message).
///
/// # Safety
///
/// `keys` and `values` point to `num_options` null-terminated strings each.
pub unsafe fn create_delegate(
    keys: *const *const c_char,
    values: *const *const c_char,
    num_options: usize,
    report_error: Option<unsafe extern "C" fn(*const c_char)>,
) -> *mut TfLiteDelegate {
    let made = contain_panic("op-litert: creating the delegate", || {
        // Python's ctypes declares the count `c_int`; the header `size_t`.
        // Only the low 32 bits are meaningful either way.
        let count = num_options & 0xFFFF_FFFF;
        let mut pairs = Vec::with_capacity(count.min(64));
        for i in 0..count {
            // SAFETY: the caller's contract.
            let (key, value) = unsafe { (*keys.add(i), *values.add(i)) };
            // SAFETY: null-terminated strings, by the caller's contract.
            let key = unsafe { option_string(key) }?;
            // SAFETY: as for the key.
            let value = unsafe { option_string(value) }?;
            pairs.push((key, value));
        }
        let pairs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (&**k, &**v)).collect();
        let library = Library::global();
        let available: Vec<&str> = library.ops().map(|(n, _)| n).collect();
        let options = Options::parse(&pairs, &available)?;
        Ok(Box::new(Delegate {
            base: TfLiteDelegate {
                data_: std::ptr::null_mut(),
                Prepare: Some(delegate_prepare),
                CopyFromBufferHandle: std::ptr::null(),
                CopyToBufferHandle: std::ptr::null(),
                FreeBufferHandle: std::ptr::null(),
                // Without it LiteRT prepares every node before asking the
                // delegate (to find dynamic tensors), and the unresolved
                // custom op it placeholds fails that prepare. Our kernels
                // fix their outputs' shapes in prepare, on every resize.
                flags: K_TF_LITE_DELEGATE_FLAGS_ALLOW_DYNAMIC_TENSORS,
                opaque_delegate_builder: std::ptr::null_mut(),
            },
            options,
        }))
    });
    match made {
        Ok(delegate) => Box::into_raw(delegate).cast(),
        Err(error) => {
            if let Some(report) = report_error {
                let message = c_message(&error);
                // SAFETY: LiteRT's callback, with a null-terminated string.
                unsafe { report(message.as_ptr()) };
            }
            std::ptr::null_mut()
        }
    }
}

/// `tflite_plugin_destroy_delegate`.
///
/// # Safety
///
/// `delegate` is null or what [`create_delegate`] returned, not yet
/// destroyed.
pub unsafe fn destroy_delegate(delegate: *mut TfLiteDelegate) {
    if delegate.is_null() {
        return;
    }
    // SAFETY: made by `create_delegate` from a `Box<Delegate>`.
    let delegate = unsafe { Box::from_raw(delegate.cast::<Delegate>()) };
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(delegate)));
}

/// An option's key or value as text.
///
/// # Safety
///
/// `text` is null or null-terminated.
unsafe fn option_string(text: *const c_char) -> Result<String> {
    if text.is_null() {
        return Err(Error::invalid_argument(
            "op-litert delegate: an option's key or value is null",
        ));
    }
    // SAFETY: the caller's contract.
    let text = unsafe { CStr::from_ptr(text) };
    text.to_str().map(str::to_owned).map_err(|_| {
        Error::invalid_argument(format!(
            "op-litert delegate: option {} is not UTF-8",
            quoted(text.to_bytes())
        ))
    })
}

/// `error`'s text, for C.
fn c_message(error: &Error) -> CString {
    let text = error.to_string().replace('\0', " ");
    CString::new(text).unwrap_or_default()
}

/// Reports `error` through LiteRT's error reporter.
///
/// # Safety
///
/// `context` is LiteRT's live context.
unsafe fn report(context: *mut TfLiteContext, error: &Error) {
    // SAFETY: the caller's contract.
    if let Some(report) = unsafe { (*context).ReportError } {
        // LiteRT's reporter runs messages together: end ours with a line.
        let message = CString::new(format!("{error}\n").replace('\0', " ")).unwrap_or_default();
        // SAFETY: a printf-style function given "%s" and one string.
        unsafe { report(context, c"%s".as_ptr(), message.as_ptr()) };
    }
}

/// Runs `f` with panics contained; reports its error and returns
/// `kTfLiteError` (or `failed`).
///
/// # Safety
///
/// `context` is LiteRT's live context.
unsafe fn guarded(
    context: *mut TfLiteContext,
    what: &str,
    failed: TfLiteStatus,
    f: impl FnOnce() -> Result<()>,
) -> TfLiteStatus {
    match contain_panic(what, f) {
        Ok(()) => K_TF_LITE_OK,
        Err(error) => {
            // SAFETY: the caller's contract.
            unsafe { report(context, &error) };
            failed
        }
    }
}

/// A node of the execution plan that is a custom op.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CustomNode {
    /// Its index in LiteRT's node list.
    pub index: c_int,
    /// The custom op's name.
    pub name: String,
    /// Its version.
    pub version: i32,
    /// Whether LiteRT has no kernel of its own for it (its registration is
    /// the interpreter's placeholder for an unresolved custom op).
    pub unresolved: bool,
}

/// Which custom nodes the delegate claims, and a message on the ones it
/// leaves that LiteRT cannot run (`None` when there are none).
pub fn select(
    nodes: &[CustomNode],
    options: &Options,
    has: impl Fn(&str, i32) -> bool,
    listing: &str,
) -> (Vec<c_int>, Option<String>) {
    let mut claimed = Vec::new();
    // Op name -> (version, nodes), in the order of first use.
    let mut lacking: Vec<(&str, i32, Vec<c_int>)> = Vec::new();
    let mut filtered: Vec<(&str, i32, Vec<c_int>)> = Vec::new();
    for node in nodes {
        let have = has(&node.name, node.version);
        if have && options.claims(&node.name) {
            claimed.push(node.index);
            continue;
        }
        if !node.unresolved {
            continue;
        }
        let list = if have { &mut filtered } else { &mut lacking };
        match list
            .iter_mut()
            .find(|(name, version, _)| *name == node.name && *version == node.version)
        {
            Some((_, _, indices)) => indices.push(node.index),
            None => list.push((&node.name, node.version, vec![node.index])),
        }
    }
    let describe = |list: &[(&str, i32, Vec<c_int>)]| {
        let ops: Vec<String> = list
            .iter()
            .map(|(name, version, indices)| {
                let plural = if indices.len() == 1 { "" } else { "s" };
                let indices: Vec<String> = indices.iter().map(c_int::to_string).collect();
                format!(
                    "{} (version {version}, node{plural} {})",
                    quoted(name),
                    indices.join(", ")
                )
            })
            .collect();
        let plural = if ops.len() == 1 { "" } else { "s" };
        format!("custom op{plural} {}", ops.join(", "))
    };
    let mut parts = Vec::new();
    if !lacking.is_empty() {
        parts.push(format!(
            "op-litert delegate: this library has no kernel for {} (it has {listing})",
            describe(&lacking)
        ));
    }
    if !filtered.is_empty() {
        parts.push(format!(
            "op-litert delegate: {} left to LiteRT by the option 'ops'",
            describe(&filtered)
        ));
    }
    let message = (!parts.is_empty()).then(|| parts.join("; "));
    (claimed, message)
}

/// The registration of our delegate kernel.
fn kernel_registration() -> TfLiteRegistration {
    TfLiteRegistration {
        init: Some(kernel_init),
        free: Some(kernel_free),
        prepare: Some(kernel_prepare),
        invoke: Some(kernel_invoke),
        profiling_string: std::ptr::null(),
        builtin_code: BUILTIN_OPERATOR_DELEGATE,
        custom_name: c"op-litert".as_ptr(),
        version: 1,
        registration_external: std::ptr::null_mut(),
        async_kernel: std::ptr::null(),
        inplace_operator: 0,
    }
}

/// `TfLiteDelegate::Prepare`: claims the custom nodes the library runs, one
/// delegate kernel per node.
unsafe extern "C" fn delegate_prepare(
    context: *mut TfLiteContext,
    delegate: *mut TfLiteDelegate,
) -> TfLiteStatus {
    // SAFETY: LiteRT's live context, for the call.
    unsafe {
        guarded(
            context,
            "op-litert: the delegate's prepare",
            K_TF_LITE_DELEGATE_ERROR,
            || {
                // SAFETY: LiteRT passes back the delegate we made.
                let options = &(*delegate.cast::<Delegate>()).options;
                let nodes = custom_nodes(context)?;
                let library = Library::global();
                let (claimed, message) = select(
                    &nodes,
                    options,
                    |name, version| library.has(name, version),
                    &library.listing(),
                );
                if let Some(message) = message {
                    match options.unclaimed {
                        Unclaimed::Error => return Err(Error::not_found(message)),
                        Unclaimed::Report => report(context, &Error::not_found(message)),
                        Unclaimed::Ignore => {}
                    }
                }
                let replace = (*context)
                    .ReplaceNodeSubsetsWithDelegateKernels
                    .ok_or_else(|| {
                        Error::internal(
                            "LiteRT's context has no ReplaceNodeSubsetsWithDelegateKernels",
                        )
                    })?;
                // One node at a time: every claimed node is its own
                // partition, so that its tensors stay LiteRT's (LiteRT does
                // not allocate a partition's inner tensors).
                for index in claimed {
                    let one = TfLiteIntArray1 {
                        size: 1,
                        data: [index],
                    };
                    let status = replace(
                        context,
                        kernel_registration(),
                        (&raw const one).cast(),
                        delegate,
                    );
                    if status != K_TF_LITE_OK {
                        return Err(Error::internal(format!(
                            "LiteRT refused to replace node {index} with the delegate's kernel (status {status})"
                        )));
                    }
                }
                Ok(())
            },
        )
    }
}

/// The custom ops of the execution plan.
///
/// # Safety
///
/// `context` is LiteRT's live context.
unsafe fn custom_nodes(context: *mut TfLiteContext) -> Result<Vec<CustomNode>> {
    // SAFETY: the caller's contract.
    let ctx = unsafe { &*context };
    let (Some(get_plan), Some(get_node)) = (ctx.GetExecutionPlan, ctx.GetNodeAndRegistration)
    else {
        return Err(Error::internal(
            "LiteRT's context has no GetExecutionPlan or GetNodeAndRegistration",
        ));
    };
    let mut plan: *mut TfLiteIntArray = std::ptr::null_mut();
    // SAFETY: LiteRT's function, on its context.
    check(unsafe { get_plan(context, &mut plan) }, "GetExecutionPlan")?;
    // Copied: a later call into the context may invalidate the plan.
    // SAFETY: LiteRT's plan, live until the next call into the context.
    let plan = unsafe { TfLiteIntArray::as_slice(plan) }.to_vec();
    let mut nodes = Vec::new();
    for index in plan {
        // SAFETY: LiteRT's context and function, for a node of its plan.
        let (_, registration) = unsafe { node_and_registration(context, get_node, index) }?;
        // SAFETY: LiteRT's registration, live for the interpreter.
        let registration = unsafe { &*registration };
        if registration.builtin_code != BUILTIN_OPERATOR_CUSTOM
            || registration.custom_name.is_null()
        {
            continue;
        }
        // SAFETY: a null-terminated name from the model.
        let Ok(name) = unsafe { CStr::from_ptr(registration.custom_name) }.to_str() else {
            continue;
        };
        nodes.push(CustomNode {
            index,
            name: name.to_owned(),
            version: registration.version,
            // The interpreter's placeholder for a custom op it has no
            // kernel for has an invoke (that fails) and nothing else.
            unresolved: registration.init.is_none()
                && registration.free.is_none()
                && registration.prepare.is_none(),
        });
    }
    Ok(nodes)
}

type GetNode = unsafe extern "C" fn(
    *mut TfLiteContext,
    c_int,
    *mut *mut TfLiteNode,
    *mut *mut TfLiteRegistration,
) -> TfLiteStatus;

/// Node `index` and its registration.
///
/// # Safety
///
/// `context` is LiteRT's live context and `get_node` its function.
unsafe fn node_and_registration(
    context: *mut TfLiteContext,
    get_node: GetNode,
    index: c_int,
) -> Result<(*mut TfLiteNode, *mut TfLiteRegistration)> {
    let mut node = std::ptr::null_mut();
    let mut registration = std::ptr::null_mut();
    check(
        // SAFETY: the caller's contract.
        unsafe { get_node(context, index, &mut node, &mut registration) },
        "GetNodeAndRegistration",
    )?;
    if node.is_null() || registration.is_null() {
        return Err(Error::internal(format!(
            "LiteRT gave no node or registration for node {index}"
        )));
    }
    Ok((node, registration))
}

fn check(status: TfLiteStatus, what: &str) -> Result<()> {
    if status == K_TF_LITE_OK {
        Ok(())
    } else {
        Err(Error::internal(format!(
            "LiteRT's {what} failed (status {status})"
        )))
    }
}

/// One delegate kernel: one claimed node, run by our kernel.
struct Kernel {
    /// The node's input tensor indices (-1: omitted), then its outputs'.
    inputs: Vec<c_int>,
    outputs: Vec<c_int>,
    /// The tensors' names (inputs, then outputs), read once.
    names: Vec<String>,
    /// The tensors' shapes, reused from call to call.
    shapes: Vec<Vec<usize>>,
    /// The node; or why init failed, reported at prepare.
    node: std::result::Result<ExternalNode, Error>,
}

/// The delegate kernel's `init`: `buffer` is the `TfLiteDelegateParams` of
/// the partition, one node.
unsafe extern "C" fn kernel_init(
    context: *mut TfLiteContext,
    buffer: *const c_char,
    _length: usize,
) -> *mut c_void {
    let made = contain_panic("op-litert: the delegate kernel's init", || {
        // SAFETY: LiteRT's context and the params it made for the node.
        unsafe { kernel_for(context, buffer.cast()) }
    });
    let kernel = made.unwrap_or_else(|error| Kernel {
        inputs: Vec::new(),
        outputs: Vec::new(),
        names: Vec::new(),
        shapes: Vec::new(),
        node: Err(error),
    });
    Box::into_raw(Box::new(kernel)).cast()
}

/// The kernel for the one node `params` replaces.
///
/// # Safety
///
/// `context` is LiteRT's live context; `params` null or its params.
unsafe fn kernel_for(
    context: *mut TfLiteContext,
    params: *const TfLiteDelegateParams,
) -> Result<Kernel> {
    if params.is_null() {
        return Err(Error::internal("LiteRT gave the delegate kernel no params"));
    }
    // SAFETY: the caller's contract.
    let replaced = unsafe { TfLiteIntArray::as_slice((*params).nodes_to_replace) };
    let &[index] = replaced else {
        return Err(Error::internal(format!(
            "a delegate kernel replaces one node, not {}",
            replaced.len()
        )));
    };
    // SAFETY: the caller's contract.
    let get_node = unsafe { (*context).GetNodeAndRegistration }
        .ok_or_else(|| Error::internal("LiteRT's context has no GetNodeAndRegistration"))?;
    // SAFETY: as above.
    let (node, registration) = unsafe { node_and_registration(context, get_node, index) }?;
    // SAFETY: LiteRT's node and registration, live for the interpreter.
    let (node, registration) = unsafe { (&*node, &*registration) };
    // SAFETY: a null-terminated name (the delegate claimed the node by it).
    let name = unsafe { CStr::from_ptr(registration.custom_name) }
        .to_string_lossy()
        .into_owned();
    // SAFETY: the node's index arrays, live for the interpreter.
    let (inputs, outputs) = unsafe {
        (
            TfLiteIntArray::as_slice(node.inputs).to_vec(),
            TfLiteIntArray::as_slice(node.outputs).to_vec(),
        )
    };
    let options: &[u8] = match usize::try_from(node.custom_initial_data_size) {
        Ok(len) if len > 0 && !node.custom_initial_data.is_null() => {
            // SAFETY: the model's custom options, `len` bytes.
            unsafe { std::slice::from_raw_parts(node.custom_initial_data.cast(), len) }
        }
        _ => &[],
    };
    let library = Library::global();
    let op = library
        .resolver
        .find_custom(&name, registration.version)
        .ok_or_else(|| {
            Error::not_found(format!(
                "op-litert delegate: no kernel for custom op {} version {}",
                quoted(&name),
                registration.version
            ))
        })?;
    let spec = NodeSpec {
        index: usize::try_from(index).unwrap_or(0),
        op: &name,
        version: registration.version,
        custom_options: options,
        num_inputs: inputs.len(),
        num_outputs: outputs.len(),
    };
    let external = ExternalNode::init(op, &spec);
    let mut names = Vec::with_capacity(inputs.len() + outputs.len());
    for &t in inputs.iter().chain(&outputs) {
        // SAFETY: LiteRT's context.
        let name = match unsafe { tensor(context, t) } {
            Ok(Some(tensor)) if !tensor.name.is_null() => {
                // SAFETY: a null-terminated name.
                unsafe { CStr::from_ptr(tensor.name) }
                    .to_string_lossy()
                    .into_owned()
            }
            _ => format!("tensor {t}"),
        };
        names.push(name);
    }
    Ok(Kernel {
        shapes: vec![Vec::new(); names.len()],
        names,
        inputs,
        outputs,
        node: external,
    })
}

/// Tensor `t` of the context; `None` for -1 (an omitted input).
///
/// # Safety
///
/// `context` is LiteRT's live context.
unsafe fn tensor<'a>(
    context: *mut TfLiteContext,
    t: c_int,
) -> Result<Option<&'a mut TfLiteTensor>> {
    if t < 0 {
        return Ok(None);
    }
    // SAFETY: the caller's contract.
    let ctx = unsafe { &*context };
    let t = t as usize;
    if t >= ctx.tensors_size || ctx.tensors.is_null() {
        return Err(Error::internal(format!(
            "tensor {t} is out of range: LiteRT's context has {} tensors",
            ctx.tensors_size
        )));
    }
    // SAFETY: in range of the context's tensor array.
    Ok(Some(unsafe { &mut *ctx.tensors.add(t) }))
}

/// Our dtype for LiteRT's `TfLiteType`.
pub fn dtype_of(ty: c_int) -> Option<DType> {
    Some(match ty {
        1 => DType::F32,
        2 => DType::I32,
        3 => DType::U8,
        4 => DType::I64,
        6 => DType::Bool,
        7 => DType::I16,
        8 => DType::Complex64,
        9 => DType::I8,
        10 => DType::F16,
        11 => DType::F64,
        12 => DType::Complex128,
        13 => DType::U64,
        16 => DType::U32,
        17 => DType::U16,
        _ => return None,
    })
}

/// LiteRT's name of a `TfLiteType`, for messages.
fn litert_type_name(ty: c_int) -> &'static str {
    match ty {
        0 => "NOTYPE",
        5 => "STRING",
        14 => "RESOURCE",
        15 => "VARIANT",
        18 => "INT4",
        _ => "an unknown type",
    }
}

impl Kernel {
    /// Reads the tensors' shapes into `shapes` (no allocation while the
    /// ranks stay).
    ///
    /// # Safety
    ///
    /// `context` is LiteRT's live context.
    unsafe fn read_shapes(&mut self, context: *mut TfLiteContext) -> Result<()> {
        for (k, &t) in self.inputs.iter().chain(&self.outputs).enumerate() {
            let shape = &mut self.shapes[k];
            shape.clear();
            // SAFETY: the caller's contract.
            if let Some(tensor) = unsafe { tensor(context, t) }? {
                // SAFETY: the tensor's dims, live.
                let dims = unsafe { TfLiteIntArray::as_slice(tensor.dims) };
                for &d in dims {
                    shape.push(usize::try_from(d).map_err(|_| {
                        Error::invalid_argument(format!(
                            "tensor {} has a negative dimension {d}",
                            quoted(&self.names[k])
                        ))
                    })?);
                }
            }
        }
        Ok(())
    }

    /// The host tensors of the node (inputs, outputs) as `ExternalNode`
    /// takes them; shapes from [`read_shapes`](Self::read_shapes).
    ///
    /// # Safety
    ///
    /// `context` is LiteRT's live context.
    #[allow(clippy::type_complexity)]
    unsafe fn host_tensors<'a>(
        context: *mut TfLiteContext,
        op: &str,
        inputs: &[c_int],
        outputs: &[c_int],
        names: &'a [String],
        shapes: &'a [Vec<usize>],
    ) -> Result<(
        SmallVec<[Option<HostTensor<'a>>; 4]>,
        SmallVec<[HostTensor<'a>; 2]>,
    )> {
        let host = |k: usize, t: c_int| -> Result<Option<HostTensor<'a>>> {
            // SAFETY: the caller's contract.
            let Some(tensor) = (unsafe { tensor(context, t) })? else {
                return Ok(None);
            };
            let role = if k < inputs.len() {
                format!("input {k}")
            } else {
                format!("output {}", k - inputs.len())
            };
            let dtype = dtype_of(tensor.type_).ok_or_else(|| {
                Error::unimplemented(format!(
                    "op-litert delegate: {role} ({}) of custom op {} has LiteRT type {} ({}), which op-litert does not lend to a kernel",
                    quoted(&names[k]),
                    quoted(op),
                    tensor.type_,
                    litert_type_name(tensor.type_)
                ))
            })?;
            Ok(Some(HostTensor {
                name: &names[k],
                dtype,
                shape: &shapes[k],
                data: tensor.data.cast(),
                bytes: tensor.bytes,
                constant: matches!(
                    tensor.allocation_type,
                    K_TF_LITE_MMAP_RO | K_TF_LITE_PERSISTENT_RO
                ),
                variable: tensor.is_variable,
            }))
        };
        let mut ins = SmallVec::new();
        for (k, &t) in inputs.iter().enumerate() {
            ins.push(host(k, t)?);
        }
        let mut outs = SmallVec::new();
        for (k, &t) in outputs.iter().enumerate() {
            let tensor = host(inputs.len() + k, t)?.ok_or_else(|| {
                Error::invalid_argument(format!(
                    "op-litert delegate: output {k} of custom op {} is omitted (-1)",
                    quoted(op)
                ))
            })?;
            outs.push(tensor);
        }
        Ok((ins, outs))
    }
}

/// The kernel a node's `user_data` holds.
///
/// # Safety
///
/// `node` is LiteRT's live node of one of our kernels.
unsafe fn kernel_of<'a>(node: *mut TfLiteNode) -> Result<&'a mut Kernel> {
    // SAFETY: the caller's contract: `user_data` is what `kernel_init` made.
    let kernel = unsafe { (*node).user_data.cast::<Kernel>() };
    if kernel.is_null() {
        return Err(Error::internal("the delegate kernel has no state"));
    }
    // SAFETY: made by `kernel_init`, used by one call at a time.
    Ok(unsafe { &mut *kernel })
}

unsafe extern "C" fn kernel_free(_context: *mut TfLiteContext, buffer: *mut c_void) {
    if buffer.is_null() {
        return;
    }
    // SAFETY: what `kernel_init` made.
    let kernel = unsafe { Box::from_raw(buffer.cast::<Kernel>()) };
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(kernel)));
}

/// Runs `body` on `node`'s kernel, with LiteRT's tensors of the node read
/// as host tensors (inputs, outputs) and the outputs' tensor indices.
///
/// # Safety
///
/// LiteRT's live context and node (one of ours), for the call.
unsafe fn with_host_tensors<R>(
    context: *mut TfLiteContext,
    node: *mut TfLiteNode,
    body: impl FnOnce(
        &mut ExternalNode,
        &[Option<HostTensor<'_>>],
        &[HostTensor<'_>],
        &[c_int],
    ) -> Result<R>,
) -> Result<R> {
    // SAFETY: the caller's contract.
    let kernel = unsafe { kernel_of(node) }?;
    // SAFETY: as above.
    unsafe { kernel.read_shapes(context) }?;
    let Kernel {
        inputs,
        outputs,
        names,
        shapes,
        node,
    } = kernel;
    let external = node.as_mut().map_err(|e| e.clone())?;
    let op = external.op().to_owned();
    // SAFETY: as above.
    let (ins, outs) =
        unsafe { Kernel::host_tensors(context, &op, inputs, outputs, names, shapes) }?;
    body(external, &ins, &outs, outputs)
}

unsafe extern "C" fn kernel_prepare(
    context: *mut TfLiteContext,
    node: *mut TfLiteNode,
) -> TfLiteStatus {
    // SAFETY: LiteRT's live context and node, for the call.
    unsafe {
        guarded(
            context,
            "op-litert: the delegate kernel's prepare",
            K_TF_LITE_ERROR,
            || {
                with_host_tensors(context, node, |external, ins, outs, outputs| {
                    let op = external.op().to_owned();
                    let prepared = external.prepare(ins, outs)?;
                    let resize = (*context)
                        .ResizeTensor
                        .ok_or_else(|| Error::internal("LiteRT's context has no ResizeTensor"))?;
                    for (k, (out, want)) in outs.iter().zip(prepared).enumerate() {
                        if out.dtype != want.dtype {
                            return Err(Error::invalid_argument(format!(
                                "op-litert delegate: custom op {} makes output {k} ({}) {}, but the model says {}",
                                quoted(&op),
                                quoted(out.name),
                                want.dtype,
                                out.dtype
                            )));
                        }
                        if out.shape != want.shape.as_slice() {
                            let tensor =
                                tensor(context, outputs[k])?.expect("an output is never -1");
                            let dims = int_array(&want.shape)?;
                            check(resize(context, tensor, dims), "ResizeTensor")?;
                        }
                    }
                    Ok(())
                })
            },
        )
    }
}

unsafe extern "C" fn kernel_invoke(
    context: *mut TfLiteContext,
    node: *mut TfLiteNode,
) -> TfLiteStatus {
    // SAFETY: LiteRT's live context and node, for the call.
    unsafe {
        guarded(
            context,
            "op-litert: the delegate kernel's invoke",
            K_TF_LITE_ERROR,
            || {
                with_host_tensors(context, node, |external, ins, outs, _| {
                    // LiteRT does not touch the node's tensors while it runs.
                    external.invoke(ins, outs)
                })
            },
        )
    }
}

unsafe extern "C" {
    fn malloc(size: usize) -> *mut c_void;
}

/// A `TfLiteIntArray` of `shape`, malloc'd: `ResizeTensor` takes
/// ownership and frees it with `free`.
fn int_array(shape: &[usize]) -> Result<*mut TfLiteIntArray> {
    let too_big =
        || Error::invalid_argument(format!("shape {:?} does not fit LiteRT's int dims", shape));
    let size = c_int::try_from(shape.len()).map_err(|_| too_big())?;
    let bytes = std::mem::size_of::<c_int>() * (shape.len() + 1);
    // SAFETY: malloc of a positive size; checked for null.
    let array = unsafe { malloc(bytes) }.cast::<TfLiteIntArray>();
    if array.is_null() {
        return Err(Error::resource_exhausted(
            "cannot allocate a shape for LiteRT",
        ));
    }
    // SAFETY: `array` has room for `size` and `shape.len()` ints after it.
    unsafe {
        (*array).size = size;
        let data = (*array).data.as_mut_ptr();
        for (i, &d) in shape.iter().enumerate() {
            let d = match c_int::try_from(d) {
                Ok(d) => d,
                Err(_) => {
                    free(array.cast());
                    return Err(too_big());
                }
            };
            data.add(i).write(d);
        }
    }
    Ok(array)
}

unsafe extern "C" {
    fn free(ptr: *mut c_void);
}

/// The manifest: `{"host": "litert", "delegate": "op-litert", "options":
/// [key], "ops": [{"name", "from"}]}`, `from` being `"lite_kernel"` or
/// `"framework"`.
pub fn manifest_json(library: &Library) -> String {
    let ops: Vec<serde_json::Value> = library
        .ops()
        .map(|(name, from)| serde_json::json!({"name": name, "from": from}))
        .collect();
    serde_json::json!({
        "host": "litert",
        "delegate": "op-litert",
        "options": crate::options::KEYS,
        "ops": ops,
    })
    .to_string()
}

/// The manifest of the process's library, as a C string the library owns.
pub fn manifest() -> *const c_char {
    static MANIFEST: OnceLock<CString> = OnceLock::new();
    MANIFEST
        .get_or_init(|| {
            let json = std::panic::catch_unwind(|| manifest_json(Library::global()))
                .unwrap_or_else(|_| r#"{"error": "making the manifest panicked"}"#.to_owned());
            CString::new(json).unwrap_or_default()
        })
        .as_ptr()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(index: c_int, name: &str, unresolved: bool) -> CustomNode {
        CustomNode {
            index,
            name: name.to_owned(),
            version: 1,
            unresolved,
        }
    }

    #[test]
    fn the_ops_the_library_has_are_claimed_and_the_rest_named() {
        let nodes = [
            node(0, "Sin", true),
            node(1, "Cumprod", true),
            node(2, "Own", false),
            node(3, "Cumprod", true),
        ];
        let has = |name: &str, _| name == "Sin";
        let (claimed, message) = select(&nodes, &Options::default(), has, "'Sin'");
        assert_eq!(claimed, [0]);
        assert_eq!(
            message.as_deref(),
            Some(
                "op-litert delegate: this library has no kernel for custom op 'Cumprod' \
                 (version 1, nodes 1, 3) (it has 'Sin')"
            )
        );
    }

    #[test]
    fn ops_left_out_by_the_option_are_named_as_such() {
        let nodes = [node(3, "Sin", true)];
        let options = Options::parse(&[("ops", "")], &["Sin"]).unwrap();
        let (claimed, message) = select(&nodes, &options, |_, _| true, "'Sin'");
        assert!(claimed.is_empty());
        assert_eq!(
            message.as_deref(),
            Some(
                "op-litert delegate: custom op 'Sin' (version 1, node 3) left to LiteRT by the \
                 option 'ops'"
            )
        );
    }

    #[test]
    fn custom_ops_litert_runs_itself_are_not_reported() {
        let nodes = [node(0, "Own", false)];
        let (claimed, message) = select(&nodes, &Options::default(), |_, _| false, "none");
        assert!(claimed.is_empty());
        assert_eq!(message, None);
    }

    #[test]
    fn every_plain_litert_type_maps_and_the_rest_do_not() {
        assert_eq!(dtype_of(1), Some(DType::F32));
        assert_eq!(dtype_of(10), Some(DType::F16));
        assert_eq!(dtype_of(17), Some(DType::U16));
        for ty in [0, 5, 14, 15, 18, 99] {
            assert_eq!(dtype_of(ty), None, "type {ty}");
        }
    }

    #[test]
    fn int_arrays_hold_the_shape() {
        let array = int_array(&[2, 3]).unwrap();
        // SAFETY: just made, freed below.
        unsafe {
            assert_eq!(TfLiteIntArray::as_slice(array), [2, 3]);
            free(array.cast());
        }
        assert!(int_array(&[1usize << 40]).is_err());
    }
}
