//! ONNX Runtime's custom-op callbacks over our kernels: every callback
//! contains panics and returns errors as `OrtStatus`es with our message.
//!
//! | ONNX Runtime | ours |
//! | --- | --- |
//! | `RegisterCustomOps` | a custom-op domain holding one [`CustomOp`] per [`OnnxOpSpec`] |
//! | `CreateKernelV2`, from the node's attributes | the attrs read (each by its kind), the type attrs fixed by the custom op's dtypes, the kernel made once ([`HostKernel::new`]); a bad attr fails the session's creation with our message |
//! | `KernelComputeV2` | the inputs lent without a copy, the kernel run, each output in a tensor ONNX Runtime allocates ([`HostKernel::run`]) |
//! | `InferOutputShapeFn` | our shape function on the input types and shapes and the node's attributes |

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::sync::OnceLock;

use op_core::shape_inference::PartialShape;
use op_core::{
    AttrKind, AttrValue, Code, DType, Error, InputTypes, Result, Runtime, contain_panic,
};
use op_host::kernel::{HostBuffer, HostKernel, OutputSink, lend_input};
use ort_sys::{
    ONNXTensorElementDataType as Onnx, OrtApi, OrtApiBase, OrtCustomOp,
    OrtCustomOpInputOutputCharacteristic, OrtErrorCode, OrtKernelContext, OrtKernelInfo,
    OrtMemType, OrtOpAttrType, OrtSessionOptions, OrtShapeInferContext, OrtStatus, OrtStatusPtr,
    OrtTensorTypeAndShapeInfo,
};
use smallvec::SmallVec;

use crate::dtype::{from_onnx, to_onnx};
use crate::plan::{OnnxOpSpec, OnnxPlan};

/// The ONNX Runtime API version this library asks for and is built
/// against: 17 (ONNX Runtime 1.17, the first with custom-op shape
/// inference). A newer ONNX Runtime serves it; an older one refuses it.
pub const API_VERSION: u32 = 17;

/// The API the host gave at `RegisterCustomOps`.
static API: OnceLock<&'static OrtApi> = OnceLock::new();

/// One custom op as ONNX Runtime sees it: its `OrtCustomOp` first, so
/// that the pointer ONNX Runtime passes back to each callback is ours.
#[repr(C)]
pub struct CustomOp {
    base: OrtCustomOp,
    spec: OnnxOpSpec,
    name: CString,
    inputs: Vec<Onnx>,
    outputs: Vec<Onnx>,
}

impl CustomOp {
    fn new(spec: OnnxOpSpec) -> CustomOp {
        let convert = |dtypes: &[DType]| {
            dtypes
                .iter()
                .map(|d| to_onnx(*d).unwrap_or(Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED))
                .collect()
        };
        CustomOp {
            base: OrtCustomOp {
                version: API_VERSION,
                CreateKernel: None,
                GetName: Some(get_name),
                GetExecutionProviderType: Some(get_execution_provider_type),
                GetInputType: Some(get_input_type),
                GetInputTypeCount: Some(get_input_type_count),
                GetOutputType: Some(get_output_type),
                GetOutputTypeCount: Some(get_output_type_count),
                KernelCompute: None,
                KernelDestroy: Some(kernel_destroy),
                GetInputCharacteristic: Some(get_characteristic),
                GetOutputCharacteristic: Some(get_characteristic),
                GetInputMemoryType: Some(get_input_memory_type),
                GetVariadicInputMinArity: Some(get_variadic_min_arity),
                GetVariadicInputHomogeneity: Some(get_variadic_homogeneity),
                GetVariadicOutputMinArity: Some(get_variadic_min_arity),
                GetVariadicOutputHomogeneity: Some(get_variadic_homogeneity),
                CreateKernelV2: Some(create_kernel),
                KernelComputeV2: Some(kernel_compute),
                InferOutputShapeFn: Some(infer_output_shape),
                GetStartVersion: Some(get_start_version),
                GetEndVersion: Some(get_end_version),
            },
            name: CString::new(spec.entry.def().name.as_str()).unwrap_or_default(),
            inputs: convert(&spec.inputs),
            outputs: convert(&spec.outputs),
            spec,
        }
    }

    /// The custom op behind ONNX Runtime's pointer.
    ///
    /// # Safety
    ///
    /// `op` is the `base` of a live `CustomOp` (every `OrtCustomOp` this
    /// library hands out is).
    unsafe fn from_base<'a>(op: *const OrtCustomOp) -> &'a CustomOp {
        // SAFETY: the caller's contract; `base` is at offset 0 of a
        // `repr(C)` struct (checked by a test).
        unsafe { &*op.cast::<CustomOp>() }
    }
}

/// The runtime ONNX Runtime's kernels run on (its intra-op threads are its
/// own; ours split work over the global pool).
fn runtime() -> &'static Runtime {
    Runtime::global()
}

/// What `RegisterCustomOps` does: a domain named `domain` holding every
/// custom op of `plan`, added to `options`.
///
/// # Safety
///
/// `options` and `api_base` are ONNX Runtime's live pointers.
pub unsafe fn register_custom_ops(
    options: *mut OrtSessionOptions,
    api_base: *const OrtApiBase,
    plan: impl FnOnce() -> OnnxPlan,
    domain: &str,
) -> *mut OrtStatus {
    if api_base.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: ONNX Runtime's live API base.
    let api = unsafe { ((*api_base).GetApi)(API_VERSION) };
    if api.is_null() {
        // No API to make a status with: say it where a user sees it.
        eprintln!(
            "op-onnx: this ONNX Runtime does not serve API version {API_VERSION} \
             (ONNX Runtime 1.17 or newer does); no ops of domain '{domain}' registered"
        );
        return std::ptr::null_mut();
    }
    // SAFETY: ONNX Runtime's API lives as long as the process.
    let api: &'static OrtApi = unsafe { &*api };
    let api = *API.get_or_init(|| api);
    let result = contain_panic("registering the custom ops", || {
        // SAFETY: the caller's contract.
        unsafe { register(api, options, plan, domain) }
    });
    match result {
        Ok(()) => std::ptr::null_mut(),
        Err(error) => status(api, &error).0,
    }
}

/// The custom ops, made once and kept for the process: ONNX Runtime keeps
/// pointers to them for as long as any session that registered them.
static OPS: OnceLock<Vec<CustomOp>> = OnceLock::new();

/// # Safety
///
/// As [`register_custom_ops`].
unsafe fn register(
    api: &OrtApi,
    options: *mut OrtSessionOptions,
    plan: impl FnOnce() -> OnnxPlan,
    domain: &str,
) -> Result<()> {
    let ops = OPS.get_or_init(|| plan().ops().cloned().map(CustomOp::new).collect());
    let name = CString::new(domain)
        .map_err(|_| Error::invalid_argument(format!("the domain '{domain}' holds a NUL")))?;
    let mut handle = std::ptr::null_mut();
    check(
        api,
        // SAFETY: a C string ONNX Runtime copies; `handle` receives the domain.
        unsafe { (api.CreateCustomOpDomain)(name.as_ptr(), &mut handle) },
        || format!("creating custom-op domain '{domain}'"),
    )?;
    for op in ops {
        check(
            api,
            // SAFETY: a live domain, and an op that lives for the process.
            unsafe { (api.CustomOpDomain_Add)(handle, &op.base) },
            || {
                format!(
                    "adding op {} to domain '{domain}'",
                    op.spec.entry.def().name
                )
            },
        )?;
    }
    // The domain is never released: sessions made from these options use
    // it for as long as they live, which a library cannot know.
    // SAFETY: live options and domain.
    check(
        api,
        unsafe { (api.AddCustomOpDomain)(options, handle) },
        || format!("adding custom-op domain '{domain}' to the session options"),
    )
}

/// Our code as ONNX Runtime's nearest.
fn error_code(code: Code) -> OrtErrorCode {
    match code {
        Code::InvalidArgument | Code::OutOfRange | Code::FailedPrecondition => {
            OrtErrorCode::ORT_INVALID_ARGUMENT
        }
        Code::Unimplemented => OrtErrorCode::ORT_NOT_IMPLEMENTED,
        Code::NotFound => OrtErrorCode::ORT_NO_SUCHFILE,
        Code::Internal => OrtErrorCode::ORT_RUNTIME_EXCEPTION,
        _ => OrtErrorCode::ORT_FAIL,
    }
}

/// A new status holding `error`, for ONNX Runtime to own.
fn status(api: &OrtApi, error: &Error) -> OrtStatusPtr {
    let message = op_host::status::c_message_of(error);
    // SAFETY: ONNX Runtime copies the message into the new status.
    unsafe { (api.CreateStatus)(error_code(error.code()), message.as_ptr()) }
}

/// ONNX Runtime's `status` as a result (the status released).
fn check(api: &OrtApi, status: OrtStatusPtr, doing: impl FnOnce() -> String) -> Result<()> {
    if status.0.is_null() {
        return Ok(());
    }
    // SAFETY: a live status, released once after its message is copied.
    let (code, message) = unsafe {
        let code = (api.GetErrorCode)(status.0);
        let message = CStr::from_ptr((api.GetErrorMessage)(status.0))
            .to_string_lossy()
            .into_owned();
        (api.ReleaseStatus)(status.0);
        (code, message)
    };
    let code = match code {
        OrtErrorCode::ORT_INVALID_ARGUMENT => Code::InvalidArgument,
        OrtErrorCode::ORT_NOT_IMPLEMENTED => Code::Unimplemented,
        _ => Code::Internal,
    };
    Err(Error::new(code, message).with_context(doing()))
}

/// Runs `f`, a panic contained, its error as a status.
fn guarded(what: &str, f: impl FnOnce(&'static OrtApi) -> Result<()>) -> OrtStatusPtr {
    let Some(api) = API.get().copied() else {
        return OrtStatusPtr::default();
    };
    match contain_panic(what, || f(api)) {
        Ok(()) => OrtStatusPtr::default(),
        Err(error) => status(api, &error),
    }
}

unsafe extern "system" fn get_name(op: *const OrtCustomOp) -> *const c_char {
    // SAFETY: ONNX Runtime passes back one of our ops.
    unsafe { CustomOp::from_base(op) }.name.as_ptr()
}

unsafe extern "system" fn get_execution_provider_type(_op: *const OrtCustomOp) -> *const c_char {
    // Null: ONNX Runtime's CPU execution provider.
    std::ptr::null()
}

/// The element type at `index`, or undefined past the end (ONNX Runtime
/// asks only for indices below the count it was given).
fn type_at(types: &[Onnx], index: usize) -> Onnx {
    types
        .get(index)
        .copied()
        .unwrap_or(Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED)
}

unsafe extern "system" fn get_input_type(op: *const OrtCustomOp, index: usize) -> Onnx {
    // SAFETY: as in `get_name`.
    type_at(&unsafe { CustomOp::from_base(op) }.inputs, index)
}

unsafe extern "system" fn get_input_type_count(op: *const OrtCustomOp) -> usize {
    // SAFETY: as in `get_name`.
    unsafe { CustomOp::from_base(op) }.inputs.len()
}

unsafe extern "system" fn get_output_type(op: *const OrtCustomOp, index: usize) -> Onnx {
    // SAFETY: as in `get_name`.
    type_at(&unsafe { CustomOp::from_base(op) }.outputs, index)
}

unsafe extern "system" fn get_output_type_count(op: *const OrtCustomOp) -> usize {
    // SAFETY: as in `get_name`.
    unsafe { CustomOp::from_base(op) }.outputs.len()
}

unsafe extern "system" fn get_characteristic(
    _op: *const OrtCustomOp,
    _index: usize,
) -> OrtCustomOpInputOutputCharacteristic {
    OrtCustomOpInputOutputCharacteristic::INPUT_OUTPUT_REQUIRED
}

unsafe extern "system" fn get_input_memory_type(
    _op: *const OrtCustomOp,
    _index: usize,
) -> OrtMemType {
    OrtMemType::OrtMemTypeDefault
}

unsafe extern "system" fn get_variadic_min_arity(_op: *const OrtCustomOp) -> c_int {
    1
}

unsafe extern "system" fn get_variadic_homogeneity(_op: *const OrtCustomOp) -> c_int {
    1
}

unsafe extern "system" fn get_start_version(_op: *const OrtCustomOp) -> c_int {
    1
}

unsafe extern "system" fn get_end_version(_op: *const OrtCustomOp) -> c_int {
    c_int::MAX
}

/// A kernel's state between ONNX Runtime's create and destroy.
struct OrtKernel {
    kernel: HostKernel,
}

unsafe extern "system" fn create_kernel(
    op: *const OrtCustomOp,
    _api: *const OrtApi,
    info: *const OrtKernelInfo,
    kernel: *mut *mut c_void,
) -> OrtStatusPtr {
    // SAFETY: as in `get_name`.
    let op = unsafe { CustomOp::from_base(op) };
    guarded("creating the kernel", |api| {
        // SAFETY: ONNX Runtime's live kernel info, for the call.
        let made = unsafe { new_kernel(api, op, info) }?;
        // SAFETY: ONNX Runtime's out-pointer.
        unsafe { *kernel = Box::into_raw(Box::new(made)).cast() };
        Ok(())
    })
}

/// # Safety
///
/// `info` is live.
unsafe fn new_kernel(api: &OrtApi, op: &CustomOp, info: *const OrtKernelInfo) -> Result<OrtKernel> {
    let def = op.spec.entry.def();
    // SAFETY: the caller's contract.
    let node = unsafe { node_name(api, info) }.unwrap_or_default();
    let mut attrs: Vec<(&str, AttrValue)> = op
        .spec
        .types
        .iter()
        .map(|(name, dtype)| (*name, AttrValue::Type(*dtype)))
        .collect();
    for attr in &def.attrs {
        if attr.ty.kind == AttrKind::Type {
            continue;
        }
        // SAFETY: the caller's contract.
        let value = unsafe { kernel_attr(api, info, &attr.name, attr.ty.kind, attr.ty.is_list) }
            .map_err(|e| {
                e.with_context(format!(
                    "reading attr '{}' of node '{node}' (op {})",
                    attr.name, def.name
                ))
            })?;
        if let Some(value) = value {
            attrs.push((attr.name.as_str(), value));
        }
    }
    let inputs: Vec<InputTypes> = op
        .spec
        .inputs
        .iter()
        .map(|d| InputTypes::Single(*d))
        .collect();
    let kernel = HostKernel::new(runtime(), &def.name, &inputs, &attrs, &node)?;
    Ok(OrtKernel { kernel })
}

/// The node's name, as ONNX Runtime gives it.
///
/// # Safety
///
/// `info` is live.
unsafe fn node_name(api: &OrtApi, info: *const OrtKernelInfo) -> Result<String> {
    let mut size = 0usize;
    // SAFETY: a size query (null buffer), then a buffer of that size.
    unsafe {
        check(
            api,
            (api.KernelInfo_GetNodeName)(info, std::ptr::null_mut(), &mut size),
            || "reading the node's name".into(),
        )?;
        let mut buffer = vec![0u8; size.max(1)];
        check(
            api,
            (api.KernelInfo_GetNodeName)(info, buffer.as_mut_ptr().cast(), &mut size),
            || "reading the node's name".into(),
        )?;
        Ok(CStr::from_bytes_until_nul(&buffer)
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default())
    }
}

/// Whether ONNX Runtime's error says the node lacks the attribute (as
/// opposed to holding one of another type).
fn is_missing(error: &Error) -> bool {
    error.message().contains("No attribute")
}

/// Attr `name` of the node, read as `kind` (a list of them if `is_list`),
/// or `None` when the node does not set it (its default then applies,
/// and our runtime says when there is none).
///
/// # Safety
///
/// `info` is live.
unsafe fn kernel_attr(
    api: &OrtApi,
    info: *const OrtKernelInfo,
    name: &str,
    kind: AttrKind,
    is_list: bool,
) -> Result<Option<AttrValue>> {
    let c_name = CString::new(name).map_err(|_| Error::internal("an attr name holds a NUL"))?;
    let name_ptr = c_name.as_ptr();
    let doing = || format!("reading ONNX attribute '{name}'");
    // SAFETY: live info; each out-pointer is ours; sizes from a size query.
    let result = unsafe {
        match (kind, is_list) {
            (AttrKind::Int | AttrKind::Bool, false) => {
                let mut value = 0i64;
                check(
                    api,
                    (api.KernelInfoGetAttribute_int64)(info, name_ptr, &mut value),
                    doing,
                )
                .map(|()| {
                    if kind == AttrKind::Bool {
                        AttrValue::Bool(value != 0)
                    } else {
                        AttrValue::Int(value)
                    }
                })
            }
            (AttrKind::Float, false) => {
                let mut value = 0f32;
                check(
                    api,
                    (api.KernelInfoGetAttribute_float)(info, name_ptr, &mut value),
                    doing,
                )
                .map(|()| AttrValue::Float(value))
            }
            (AttrKind::String, false) => {
                read_sized(
                    api,
                    info,
                    name_ptr,
                    api.KernelInfoGetAttribute_string,
                    &doing,
                )
                .map(|chars| {
                    // The size counts the NUL at the end.
                    let bytes = chars.iter().map(|&c| c as u8);
                    AttrValue::String(bytes.take_while(|&b| b != 0).collect())
                })
            }
            (AttrKind::Int, true) => read_sized(
                api,
                info,
                name_ptr,
                api.KernelInfoGetAttributeArray_int64,
                &doing,
            )
            .map(|values| AttrValue::List(op_core::ListValue::Int(values))),
            (AttrKind::Float, true) => read_sized(
                api,
                info,
                name_ptr,
                api.KernelInfoGetAttributeArray_float,
                &doing,
            )
            .map(|values| AttrValue::List(op_core::ListValue::Float(values))),
            _ => {
                return Err(Error::unimplemented(format!(
                    "attr '{name}' is of a kind ONNX attributes do not hold here"
                )));
            }
        }
    };
    match result {
        Ok(value) => Ok(Some(value)),
        Err(error) if is_missing(&error) => Ok(None),
        Err(error) => Err(error),
    }
}

/// A kernel-info getter that fills a caller's buffer of values, after a
/// size query with a null buffer: strings, int and float arrays.
type SizedGetter<T> = unsafe extern "system" fn(
    *const OrtKernelInfo,
    *const c_char,
    *mut T,
    *mut usize,
) -> OrtStatusPtr;

/// The values `get` reads of attr `name`: the size first, then the values.
///
/// # Safety
///
/// `info` is live and `name` a C string.
unsafe fn read_sized<T: Default + Clone>(
    api: &OrtApi,
    info: *const OrtKernelInfo,
    name: *const c_char,
    get: SizedGetter<T>,
    doing: &dyn Fn() -> String,
) -> Result<Vec<T>> {
    let mut size = 0usize;
    // SAFETY: the caller's contract; a null buffer asks for the size.
    let status = unsafe { get(info, name, std::ptr::null_mut(), &mut size) };
    check(api, status, doing)?;
    let mut values = vec![T::default(); size.max(1)];
    // SAFETY: as above; `values` holds `size` values (at least one).
    let status = unsafe { get(info, name, values.as_mut_ptr(), &mut size) };
    check(api, status, doing)?;
    values.truncate(size);
    Ok(values)
}

unsafe extern "system" fn kernel_destroy(kernel: *mut c_void) {
    if !kernel.is_null() {
        // SAFETY: what `create_kernel` made, destroyed once.
        let kernel = unsafe { Box::from_raw(kernel.cast::<OrtKernel>()) };
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(kernel)));
    }
}

unsafe extern "system" fn kernel_compute(
    kernel: *mut c_void,
    ctx: *mut OrtKernelContext,
) -> OrtStatusPtr {
    // SAFETY: what `create_kernel` made; ONNX Runtime never computes a
    // kernel whose creation failed.
    let kernel = unsafe { &*kernel.cast::<OrtKernel>() };
    guarded("the kernel", |api| {
        // SAFETY: ONNX Runtime's live context, for the call.
        unsafe { compute(api, kernel, ctx) }
    })
}

/// One tensor's element type and dims, from its type-and-shape info
/// (released here when `release`).
///
/// # Safety
///
/// `info` is a live info, ours to release when `release`.
unsafe fn read_info(
    api: &OrtApi,
    info: *mut OrtTensorTypeAndShapeInfo,
    release: bool,
) -> Result<(Onnx, SmallVec<[i64; 8]>)> {
    let mut element = Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
    let mut rank = 0usize;
    // SAFETY: the caller's contract; `dims` holds `rank` values.
    let result = unsafe {
        check(api, (api.GetTensorElementType)(info, &mut element), || {
            "reading a tensor's element type".into()
        })
        .and_then(|()| {
            check(api, (api.GetDimensionsCount)(info, &mut rank), || {
                "reading a tensor's rank".into()
            })
        })
        .and_then(|()| {
            let mut dims: SmallVec<[i64; 8]> = smallvec::smallvec![0; rank];
            check(
                api,
                (api.GetDimensions)(info, dims.as_mut_ptr(), rank),
                || "reading a tensor's dims".into(),
            )?;
            Ok(dims)
        })
    };
    if release {
        // SAFETY: the caller's contract: released once.
        unsafe { (api.ReleaseTensorTypeAndShapeInfo)(info) };
    }
    Ok((element, result?))
}

/// Where ONNX Runtime puts a kernel's outputs.
struct OrtOutputs<'a> {
    api: &'a OrtApi,
    ctx: *mut OrtKernelContext,
}

impl OutputSink for OrtOutputs<'_> {
    fn allocate(&mut self, index: usize, dtype: DType, dims: &[usize]) -> Result<HostBuffer> {
        let api = self.api;
        let onnx_dims: SmallVec<[i64; 8]> = dims.iter().map(|&d| d as i64).collect();
        let mut value = std::ptr::null_mut();
        check(
            api,
            // SAFETY: the live context; ONNX Runtime allocates output `index`
            // of its declared type with these dims.
            unsafe {
                (api.KernelContext_GetOutput)(
                    self.ctx,
                    index,
                    onnx_dims.as_ptr(),
                    onnx_dims.len(),
                    &mut value,
                )
            },
            || format!("allocating output {index}"),
        )?;
        let mut data = std::ptr::null_mut();
        check(
            api,
            // SAFETY: the live output value.
            unsafe { (api.GetTensorMutableData)(value, &mut data) },
            || format!("reading output {index}'s buffer"),
        )?;
        let len = dims.iter().product::<usize>() * dtype.size_of().unwrap_or(0);
        Ok(HostBuffer {
            data: data.cast(),
            len,
        })
    }
}

/// # Safety
///
/// `ctx` is live.
unsafe fn compute(api: &OrtApi, kernel: &OrtKernel, ctx: *mut OrtKernelContext) -> Result<()> {
    let expected = kernel.kernel.prepared().instance().input_types();
    let mut count = 0usize;
    check(
        api,
        // SAFETY: the live context.
        unsafe { (api.KernelContext_GetInputCount)(ctx, &mut count) },
        || "counting inputs".into(),
    )?;
    let mut inputs: SmallVec<[op_core::Tensor; 8]> = SmallVec::new();
    for i in 0..count {
        let mut value = std::ptr::null();
        let mut info = std::ptr::null_mut();
        let mut data = std::ptr::null_mut();
        // SAFETY: the live context; input `i`'s value, its info (ours to
        // release, in `read_info`) and its buffer, live until the call ends.
        let (element, dims) = unsafe {
            check(
                api,
                (api.KernelContext_GetInput)(ctx, i, &mut value),
                || format!("reading input {i}"),
            )?;
            check(api, (api.GetTensorTypeAndShape)(value, &mut info), || {
                format!("reading input {i}'s shape")
            })?;
            let read = read_info(api, info, true)?;
            check(
                api,
                (api.GetTensorMutableData)(value.cast_mut(), &mut data),
                || format!("reading input {i}'s buffer"),
            )?;
            read
        };
        let dtype = from_onnx(element)
            .filter(|d| expected.get(i) == Some(d))
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "input {i} has ONNX element type {}, not {:?}",
                    element as i32,
                    expected.get(i)
                ))
            })?;
        let dims: SmallVec<[usize; 8]> = dims.iter().map(|&d| d.max(0) as usize).collect();
        let len = dims.iter().product::<usize>() * dtype.size_of().unwrap_or(0);
        let bytes: &[u8] = if len == 0 || data.is_null() {
            &[]
        } else {
            // SAFETY: ONNX Runtime's buffer of input `i`: `len` bytes, live
            // and unwritten while the kernel runs, which no lent tensor
            // outlives (`inputs` goes before the call returns).
            unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) }
        };
        // SAFETY: as above.
        inputs.push(
            unsafe { lend_input(dtype, &dims, bytes) }
                .map_err(|e| e.with_context(format!("reading input {i}")))?,
        );
    }
    let mut outputs = OrtOutputs { api, ctx };
    // SAFETY: each buffer ONNX Runtime allocates is a new output's, its
    // alone until the call returns.
    unsafe { kernel.kernel.run(&mut inputs, &mut outputs) }
}

unsafe extern "system" fn infer_output_shape(
    op: *const OrtCustomOp,
    ctx: *mut OrtShapeInferContext,
) -> OrtStatusPtr {
    // SAFETY: as in `get_name`.
    let op = unsafe { CustomOp::from_base(op) };
    guarded("the shape function", |api| {
        // SAFETY: ONNX Runtime's live context, for the call.
        unsafe { infer(api, op, ctx) }
    })
}

/// Runs our shape function for a node ONNX Runtime is checking: the input
/// element types give the type attrs (whichever of an op's custom ops
/// ONNX Runtime asks), the node's attributes the rest.
///
/// # Safety
///
/// `ctx` is live.
unsafe fn infer(api: &OrtApi, op: &CustomOp, ctx: *mut OrtShapeInferContext) -> Result<()> {
    let entry = op.spec.entry;
    let def = entry.def();
    let mut count = 0usize;
    check(
        api,
        // SAFETY: the live context.
        unsafe { (api.ShapeInferContext_GetInputCount)(ctx, &mut count) },
        || "counting inputs".into(),
    )?;
    let mut dtypes = Vec::with_capacity(count);
    let mut shapes = Vec::with_capacity(count);
    for i in 0..count {
        let mut info = std::ptr::null_mut();
        // SAFETY: the live context; the info is the context's (releasing
        // it is a double free, seen with onnxruntime 1.32), live for the
        // call.
        let (element, dims) = unsafe {
            check(
                api,
                (api.ShapeInferContext_GetInputTypeShape)(ctx, i, &mut info),
                || format!("reading input {i}'s type"),
            )?;
            read_info(api, info, false)?
        };
        let dtype = from_onnx(element).ok_or_else(|| {
            Error::invalid_argument(format!(
                "op {}: input {i} has ONNX element type {}, which does not cross",
                def.name, element as i32
            ))
        })?;
        dtypes.push(dtype);
        shapes.push(PartialShape(Some(
            dims.iter().map(|&d| usize::try_from(d).ok()).collect(),
        )));
    }
    let mut attrs: Vec<(&str, AttrValue)> = Vec::new();
    for (name, _) in &op.spec.types {
        let input = def.inputs.iter().position(|a| a.type_attr() == Some(name));
        if let Some(dtype) = input.and_then(|k| dtypes.get(k)) {
            attrs.push((name, AttrValue::Type(*dtype)));
        }
    }
    for attr in &def.attrs {
        if attr.ty.kind == AttrKind::Type {
            continue;
        }
        if let Some(value) =
            // SAFETY: the live context.
            unsafe { shape_attr(api, ctx, &attr.name, attr.ty.kind, attr.ty.is_list) }?
        {
            attrs.push((attr.name.as_str(), value));
        }
    }
    let input_types = op_host::kernel::input_types(def, &attrs)?;
    let outputs = op_host::shape::infer(entry, &input_types, &attrs, &shapes, &[])?;
    for (j, output) in outputs.iter().enumerate() {
        let Some(dims) = &output.shape.0 else {
            // An unknown rank has no form in ONNX Runtime's info.
            continue;
        };
        let element = to_onnx(output.dtype).ok_or_else(|| {
            Error::internal(format!(
                "output {j} is {}, which does not cross",
                output.dtype
            ))
        })?;
        let dims: SmallVec<[i64; 8]> = dims.iter().map(|d| d.map_or(-1, |d| d as i64)).collect();
        let mut info = std::ptr::null_mut();
        // SAFETY: a new info, set, handed to the context (which copies
        // it), then released.
        unsafe {
            check(api, (api.CreateTensorTypeAndShapeInfo)(&mut info), || {
                "making an output's info".into()
            })?;
            let set = check(api, (api.SetTensorElementType)(info, element), || {
                "setting an output's type".into()
            })
            .and_then(|()| {
                check(
                    api,
                    (api.SetDimensions)(info, dims.as_ptr(), dims.len()),
                    || "setting an output's dims".into(),
                )
            })
            .and_then(|()| {
                check(
                    api,
                    (api.ShapeInferContext_SetOutputTypeShape)(ctx, j, info),
                    || format!("setting output {j}'s shape"),
                )
            });
            (api.ReleaseTensorTypeAndShapeInfo)(info);
            set?;
        }
    }
    Ok(())
}

/// Attr `name` of the node under shape inference, as [`kernel_attr`]
/// reads it of a kernel's node.
///
/// # Safety
///
/// `ctx` is live.
unsafe fn shape_attr(
    api: &OrtApi,
    ctx: *mut OrtShapeInferContext,
    name: &str,
    kind: AttrKind,
    is_list: bool,
) -> Result<Option<AttrValue>> {
    let c_name = CString::new(name).map_err(|_| Error::internal("an attr name holds a NUL"))?;
    let mut attr = std::ptr::null();
    // SAFETY: the live context; `attr` receives the context's attribute.
    let status = unsafe { (api.ShapeInferContext_GetAttribute)(ctx, c_name.as_ptr(), &mut attr) };
    // An error is the attribute's absence (its default then applies).
    let found = check(api, status, String::new);
    if found.is_err() || attr.is_null() {
        return Ok(None);
    }
    let ty = match (kind, is_list) {
        (AttrKind::Int | AttrKind::Bool, false) => OrtOpAttrType::ORT_OP_ATTR_INT,
        (AttrKind::Float, false) => OrtOpAttrType::ORT_OP_ATTR_FLOAT,
        (AttrKind::String, false) => OrtOpAttrType::ORT_OP_ATTR_STRING,
        (AttrKind::Int, true) => OrtOpAttrType::ORT_OP_ATTR_INTS,
        (AttrKind::Float, true) => OrtOpAttrType::ORT_OP_ATTR_FLOATS,
        _ => return Ok(None),
    };
    let doing = || format!("reading ONNX attribute '{name}'");
    // A size query (its status, an error for a buffer too small, is
    // released unread), then the value.
    let mut size = 0usize;
    // SAFETY: a live attribute; a null buffer of length 0.
    let query = unsafe { (api.ReadOpAttr)(attr, ty, std::ptr::null_mut(), 0, &mut size) };
    if !query.0.is_null() {
        // SAFETY: a live status, released once.
        unsafe { (api.ReleaseStatus)(query.0) };
    }
    let mut buffer = vec![0u8; size.max(8)];
    check(
        api,
        // SAFETY: a buffer of `buffer.len()` bytes for the value.
        unsafe {
            (api.ReadOpAttr)(
                attr,
                ty,
                buffer.as_mut_ptr().cast(),
                buffer.len(),
                &mut size,
            )
        },
        doing,
    )?;
    buffer.truncate(size);
    let read_i64 = |b: &[u8]| i64::from_ne_bytes(b[..8].try_into().unwrap_or([0; 8]));
    let read_f32 = |b: &[u8]| f32::from_ne_bytes(b[..4].try_into().unwrap_or([0; 4]));
    Ok(Some(match (kind, is_list) {
        (AttrKind::Int, false) if buffer.len() >= 8 => AttrValue::Int(read_i64(&buffer)),
        (AttrKind::Bool, false) if buffer.len() >= 8 => AttrValue::Bool(read_i64(&buffer) != 0),
        (AttrKind::Float, false) if buffer.len() >= 4 => AttrValue::Float(read_f32(&buffer)),
        (AttrKind::String, false) => AttrValue::String(buffer),
        (AttrKind::Int, true) => AttrValue::List(op_core::ListValue::Int(
            buffer.chunks_exact(8).map(read_i64).collect(),
        )),
        (AttrKind::Float, true) => AttrValue::List(op_core::ListValue::Float(
            buffer.chunks_exact(4).map(read_f32).collect(),
        )),
        _ => return Ok(None),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn onnx_runtime_finds_our_op_where_it_finds_its_own() {
        assert_eq!(std::mem::offset_of!(CustomOp, base), 0);
    }

    #[test]
    fn the_custom_op_is_laid_out_as_api_version_17_declares_it() {
        // `version` (padded to 8) and 21 function pointers.
        assert_eq!(
            std::mem::size_of::<OrtCustomOp>(),
            8 + 21 * std::mem::size_of::<usize>()
        );
        assert_eq!(
            std::mem::offset_of!(OrtCustomOp, GetEndVersion),
            8 + 20 * std::mem::size_of::<usize>()
        );
    }
}
