//! The one XLA FFI handler every op of the library runs through.
//!
//! JAX's `ffi_call` gives a handler its buffers and attributes, never
//! which op it stands for, so the call says it: its one attribute,
//! `opkit`, is the call's request ([`op_host::request`]: the op, its
//! inputs' dtypes and shapes, its attrs), the same text the Python side
//! gave `op_jax_infer` (`op_host::request::infer_c`) at trace time for the output shapes. The handler makes
//! the kernel (or gradient) for a request once and keeps it, keyed by that
//! text; each call then lends XLA's input buffers to it and writes each
//! output into the buffer XLA allocated at trace time.

use std::sync::Arc;

use op_core::{Code, DType, Error, Result, contain_panic};
use op_host::kernel::{HostBuffer, OutputSink, lend_input};
use op_host::prepared::{Inputs, Prepared, PreparedCache};
use op_host::request::Request;
use smallvec::SmallVec;

use crate::ffi;

/// The FFI API version our handler declares in the metadata handshake:
/// 0.1, the oldest whose call frame, buffers, string attributes and
/// error creation (all we use) are as here. Tested with jaxlib 0.8.1,
/// whose XLA speaks 0.2.
pub const API_VERSION: (i32, i32) = (0, 1);

/// The prepared calls, by request text.
static CACHE: PreparedCache = PreparedCache::new();

/// The prepared call for `text`, made on first use.
fn prepared(text: &str) -> Result<Arc<Prepared>> {
    CACHE.get_or_make(text, || {
        let request = Request::parse(text)?;
        let name = &request.entry.def().name;
        Prepared::new(
            request.entry,
            request.gradient,
            &request.input_types(),
            &request.attrs,
            name,
        )
    })
}

/// Our dtype of XLA's `dtype` number, when its buffers cross.
pub fn from_xla(dtype: i32) -> Option<DType> {
    Some(match dtype {
        1 => DType::Bool,
        2 => DType::I8,
        3 => DType::I16,
        4 => DType::I32,
        5 => DType::I64,
        6 => DType::U8,
        7 => DType::U16,
        8 => DType::U32,
        9 => DType::U64,
        10 => DType::F16,
        11 => DType::F32,
        12 => DType::F64,
        16 => DType::BF16,
        15 => DType::Complex64,
        18 => DType::Complex128,
        _ => return None,
    })
}

/// XLA's error code for ours (the numbering is the same).
fn error_code(code: Code) -> i32 {
    code.value()
}

/// A new XLA error holding `error`, for XLA to own.
///
/// # Safety
///
/// `api` is XLA's live API.
unsafe fn xla_error(api: *const ffi::Api, error: &Error) -> *mut ffi::Error {
    let message = op_host::status::c_message_of(error);
    let mut args = ffi::ErrorCreateArgs {
        struct_size: ffi::ERROR_CREATE_ARGS_SIZE,
        extension_start: std::ptr::null_mut(),
        message: message.as_ptr(),
        errc: error_code(error.code()),
    };
    // SAFETY: the caller's contract; XLA copies the message.
    unsafe { ((*api).error_create)(&mut args) }
}

/// The handler (see the [module docs](self)).
///
/// # Safety
///
/// XLA calls it with a live call frame.
pub unsafe extern "C" fn call(frame: *mut ffi::CallFrame) -> *mut ffi::Error {
    // SAFETY: XLA's live frame.
    let frame = unsafe { &mut *frame };
    let extension = frame.extension_start;
    // SAFETY: a non-null extension is XLA's, of the type it says.
    if !extension.is_null() && unsafe { (*extension).ty } == ffi::EXTENSION_METADATA {
        // SAFETY: the metadata extension, with XLA's metadata to fill.
        unsafe {
            let metadata = &mut *(*extension.cast::<ffi::MetadataExtension>()).metadata;
            metadata.api_version.major_version = API_VERSION.0;
            metadata.api_version.minor_version = API_VERSION.1;
            metadata.traits = 0;
        }
        return std::ptr::null_mut();
    }
    if frame.stage != ffi::STAGE_EXECUTE {
        return std::ptr::null_mut();
    }
    // SAFETY: the live frame, for the call.
    match contain_panic("the kernel", || unsafe { execute(frame) }) {
        Ok(()) => std::ptr::null_mut(),
        // SAFETY: the frame's live API.
        Err(error) => unsafe { xla_error(frame.api, &error) },
    }
}

/// The request text of the frame: its `opkit` string attribute.
///
/// # Safety
///
/// `attrs` is a live frame's.
unsafe fn request_text(attrs: &ffi::Attrs) -> Result<&str> {
    for i in 0..attrs.size.max(0) as usize {
        // SAFETY: `i` is below the count; each name and string attribute
        // is a byte span XLA keeps for the call.
        let (ty, name, value) = unsafe {
            (
                *attrs.types.add(i),
                &**attrs.names.add(i),
                *attrs.attrs.add(i),
            )
        };
        // SAFETY: as above.
        let name = unsafe { std::slice::from_raw_parts(name.ptr.cast::<u8>(), name.len) };
        if name == b"opkit" && ty == ffi::ATTR_STRING {
            // SAFETY: a string attribute is a byte span.
            let span = unsafe { &*value.cast::<ffi::ByteSpan>() };
            // SAFETY: as above.
            let bytes = unsafe { std::slice::from_raw_parts(span.ptr.cast::<u8>(), span.len) };
            return std::str::from_utf8(bytes)
                .map_err(|_| Error::invalid_argument("the opkit attribute is not UTF-8"));
        }
    }
    Err(Error::invalid_argument(
        "the custom call has no `opkit` attribute: call the library's ops through its Python \
         module, which writes it",
    ))
}

/// One buffer of the frame: dtype, dims, data.
///
/// # Safety
///
/// `buffer` is a live frame's buffer.
unsafe fn read_buffer(
    buffer: *mut std::ffi::c_void,
    what: &str,
) -> Result<(DType, SmallVec<[usize; 8]>, HostBuffer)> {
    // SAFETY: the caller's contract.
    let buffer = unsafe { &*buffer.cast::<ffi::Buffer>() };
    let dtype = from_xla(buffer.dtype).ok_or_else(|| {
        Error::unimplemented(format!(
            "{what} has XLA dtype {}, which does not cross",
            buffer.dtype
        ))
    })?;
    let dims: SmallVec<[usize; 8]> = (0..buffer.rank.max(0) as usize)
        // SAFETY: `dims` holds `rank` values.
        .map(|d| unsafe { *buffer.dims.add(d) }.max(0) as usize)
        .collect();
    let len = dims.iter().product::<usize>() * dtype.size_of().unwrap_or(0);
    Ok((
        dtype,
        dims,
        HostBuffer {
            data: buffer.data.cast(),
            len,
        },
    ))
}

/// Where XLA put the outputs: buffers allocated at trace time, each of
/// the dtype and shape our shape function gave then.
struct XlaOutputs<'a> {
    rets: &'a ffi::Args,
}

impl OutputSink for XlaOutputs<'_> {
    fn allocate(&mut self, index: usize, dtype: DType, dims: &[usize]) -> Result<HostBuffer> {
        if index >= self.rets.size.max(0) as usize {
            return Err(Error::internal(format!(
                "the kernel made output {index}, which XLA has no buffer for"
            )));
        }
        // SAFETY: `index` is below the count of the live frame's results.
        let (ret_dtype, ret_dims, buffer) =
            unsafe { read_buffer(*self.rets.args.add(index), &format!("output {index}")) }?;
        if ret_dtype != dtype || ret_dims.as_slice() != dims {
            return Err(Error::invalid_argument(format!(
                "output {index} is {dtype} {dims:?}, but was {ret_dtype} {:?} when the function was traced",
                ret_dims.as_slice()
            )));
        }
        Ok(buffer)
    }
}

/// # Safety
///
/// `frame` is XLA's live frame.
unsafe fn execute(frame: &ffi::CallFrame) -> Result<()> {
    // SAFETY: the caller's contract.
    let text = unsafe { request_text(&frame.attrs) }?;
    let prepared = prepared(text)?;
    let mut inputs = Inputs::new();
    for i in 0..frame.args.size.max(0) as usize {
        // SAFETY: `i` is below the count; XLA's input buffer, unwritten
        // while the kernel runs, outlives the lent tensors (gone before
        // the call returns).
        let tensor = unsafe {
            let (dtype, dims, buffer) =
                read_buffer(*frame.args.args.add(i), &format!("input {i}"))?;
            let bytes: &[u8] = if buffer.len == 0 || buffer.data.is_null() {
                &[]
            } else {
                std::slice::from_raw_parts(buffer.data, buffer.len)
            };
            lend_input(dtype, &dims, bytes)
        }
        .map_err(|e| e.with_context(format!("reading input {i}")))?;
        inputs.push(tensor);
    }
    let mut outputs = XlaOutputs { rets: &frame.rets };
    // SAFETY: each result buffer is XLA's for this call, written only
    // through the sink.
    unsafe { prepared.run(inputs, &mut outputs) }
}
