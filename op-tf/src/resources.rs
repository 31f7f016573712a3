//! Resource tensors in TensorFlow: our [`ResourceHandle`]s as TensorFlow's
//! ref-counted and named handles, through the [shim](crate::shim).
//!
//! TensorFlow's C API cannot make a `DT_RESOURCE` tensor nor read the C++
//! `ResourceHandle`s one holds (`TF_GetInput` serializes a handle, losing
//! the resource it owns), so the shim's functions do exactly that.
//! Everything else is here:
//!
//! | our handle | TensorFlow's |
//! | --- | --- |
//! | owning ([`ResourceHandle::owning`]: the table of `SimpleHashTableCreate`) | a ref-counting handle to a `ResourceBase` that holds a copy of ours: TensorFlow counts the references, and drops our copy (and with it, if it was the last, the resource) when its last handle goes |
//! | named (container and name, as `shared_name` attrs make) | a named handle; the resource lives in the library's own resource manager, one per process, not in TensorFlow's `ResourceMgr` |
//!
//! A handle that TensorFlow or another library made (a `tf.Variable`'s, a
//! `tf.lookup` table's) is refused with an `InvalidArgument` error that
//! names its type; a handle to a resource of ours of the wrong type is our
//! runtime's own typed error. Neither can crash.

use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};

use op_core::{Error, ResourceHandle, Result, Tensor};
use smallvec::SmallVec;

use crate::api::TF_OpKernelContext;
use crate::kernel::{api, runtime};
use crate::shim::Shim;
use crate::status::{check, status};

/// Frees a payload, when TensorFlow drops the last handle that holds it.
pub(crate) type DropFn = unsafe extern "C" fn(payload: *mut c_void);

/// The loaded shim; an error when resource ops run without one (they are
/// not registered then, so this is a bug of ours).
fn shim() -> Result<&'static Shim> {
    crate::shim::get().ok_or_else(|| Error::internal("a resource op ran without the shim"))
}

/// The shim's `OpkitHandleView`: what a library reads of one input handle.
#[repr(C)]
pub(crate) struct HandleView {
    /// [`OURS`], [`NAMED`] or [`FOREIGN`].
    kind: i32,
    payload: *mut c_void,
    container: *const c_char,
    container_len: usize,
    name: *const c_char,
    name_len: usize,
    type_name: *const c_char,
    type_name_len: usize,
}

/// A handle that owns a resource of this library: `payload` is ours.
const OURS: i32 = 0;
/// A named handle made by one of our libraries.
const NAMED: i32 = 1;
/// A handle of TensorFlow's or another library's resource.
const FOREIGN: i32 = 2;

/// This library's mark on the resources it owns: the address of a static
/// of its own, so that two op libraries in one process never read each
/// other's payloads.
fn library_tag() -> *const c_void {
    static TAG: u8 = 0;
    (&raw const TAG).cast()
}

/// How many handles of this library's resources TensorFlow holds now.
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// The number of this library's resources that TensorFlow's handles keep
/// alive now (one per ref-counted resource): what `op_tf_live_resources()`
/// returns, so a test can see a resource freed with its last handle.
pub fn live_resources() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// The text of `len` bytes at `data` (which may be null when empty).
///
/// # Safety
///
/// `data` points to `len` readable bytes, or `len` is 0.
unsafe fn text<'a>(data: *const c_char, len: usize) -> std::borrow::Cow<'a, str> {
    if len == 0 || data.is_null() {
        return "".into();
    }
    // SAFETY: the caller's contract.
    String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) })
}

/// The most dims a resource tensor may have here.
const MAX_RANK: usize = 8;

/// Input `index`, of dtype `resource`, as our tensor of handles: each of
/// this library's ref-counted handles as the handle it holds (the same
/// resource), each named one as a handle naming it in the library's
/// resource manager. A handle that TensorFlow or another library made is
/// an `InvalidArgument` error.
///
/// # Safety
///
/// `ctx` is live and `index` one of its inputs, of dtype `resource`.
pub(crate) unsafe fn input(ctx: *mut TF_OpKernelContext, index: c_int) -> Result<Tensor> {
    let shim = shim()?;
    let api = api();
    let mut dims = [0i64; MAX_RANK];
    let status = status(api);
    // SAFETY: live context and status; `dims` holds MAX_RANK dims.
    let rank = unsafe {
        (shim.opkit_tf_resource_input_shape)(
            ctx,
            index,
            dims.as_mut_ptr(),
            MAX_RANK as c_int,
            status,
        )
    };
    check(api, status, || format!("reading input {index}"))?;
    let dims: SmallVec<[usize; MAX_RANK]> = dims[..rank.max(0) as usize]
        .iter()
        .map(|&d| d.max(0) as usize)
        .collect();
    let count: usize = dims.iter().product();
    let mut handles = Vec::with_capacity(count);
    for element in 0..count {
        let mut view = std::mem::MaybeUninit::<HandleView>::zeroed();
        // SAFETY: live context; `element` is below the input's size; the
        // shim fills `view`, whose strings and payload live as long as the
        // input, that is, through this call.
        let view = unsafe {
            (shim.opkit_tf_resource_input_element)(
                ctx,
                index,
                element as i64,
                library_tag(),
                view.as_mut_ptr(),
            );
            view.assume_init()
        };
        // SAFETY: as above.
        handles.push(unsafe { handle_of(&view) }?);
    }
    Tensor::from_vec(dims, handles)
}

/// Our handle for the one `view` shows.
///
/// # Safety
///
/// `view` was filled by the shim for a live input.
unsafe fn handle_of(view: &HandleView) -> Result<ResourceHandle> {
    // SAFETY: the view's strings are the handle's (the caller's contract).
    let (container, name, type_name) = unsafe {
        (
            text(view.container, view.container_len),
            text(view.name, view.name_len),
            text(view.type_name, view.type_name_len),
        )
    };
    match view.kind {
        // SAFETY: an OURS payload is a boxed handle this library made
        // (`set_output`), which lives while TensorFlow's handle does.
        OURS => Ok(unsafe { &*view.payload.cast::<ResourceHandle>() }.clone()),
        NAMED => Ok(ResourceHandle::new(
            runtime().device(),
            container,
            name,
            type_name,
        )),
        FOREIGN => Err(Error::invalid_argument(format!(
            "it is a handle to a resource of type {} that TensorFlow or another library made \
             (named '{name}'), and this library's kernels take only handles its own ops made",
            if type_name.is_empty() {
                "unknown"
            } else {
                &type_name
            },
        ))),
        kind => Err(Error::internal(format!(
            "the shim says a handle is of kind {kind}"
        ))),
    }
}

/// Frees a payload that `set_output` made: called by the shim when
/// TensorFlow drops the last handle to it, on any thread.
///
/// # Safety
///
/// `payload` is a boxed [`ResourceHandle`] of `set_output`, freed once.
unsafe extern "C" fn drop_payload(payload: *mut c_void) {
    // SAFETY: the caller's contract.
    let handle = unsafe { Box::from_raw(payload.cast::<ResourceHandle>()) };
    // The resource's own `Drop` may panic; it must not cross into C++.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(handle)));
    LIVE.fetch_sub(1, Ordering::Relaxed);
}

/// Sets output `index` to TensorFlow handles for the handles in `output`.
///
/// # Safety
///
/// `ctx` is live and `index` one of its outputs, of dtype `resource`.
pub(crate) unsafe fn set_output(
    ctx: *mut TF_OpKernelContext,
    index: c_int,
    output: &Tensor,
) -> Result<()> {
    let shim = shim()?;
    let api = api();
    let handles = output.as_slice::<ResourceHandle>()?;
    let dims: SmallVec<[i64; MAX_RANK]> = output.dims().iter().map(|&d| d as i64).collect();
    let status = status(api);
    // SAFETY: live context and status; `dims` holds the output's dims.
    unsafe {
        (shim.opkit_tf_allocate_resource_output)(
            ctx,
            index,
            dims.as_ptr(),
            dims.len() as c_int,
            status,
        )
    };
    check(api, status, || format!("allocating output {index}"))?;
    for (element, handle) in handles.iter().enumerate() {
        let element = element as i64;
        let type_name = handle.type_name.as_str();
        if handle.is_owning() {
            let payload = Box::into_raw(Box::new(handle.clone())).cast::<c_void>();
            LIVE.fetch_add(1, Ordering::Relaxed);
            // SAFETY: live context; output `index` was allocated above with
            // this many elements. The shim's resource owns `payload` from
            // here and gives it to `drop_payload` once.
            unsafe {
                (shim.opkit_tf_set_owning_handle)(
                    ctx,
                    index,
                    element,
                    library_tag(),
                    payload,
                    drop_payload,
                    type_name.as_ptr().cast(),
                    type_name.len(),
                )
            };
        } else {
            // SAFETY: as above; the shim copies the strings.
            unsafe {
                (shim.opkit_tf_set_named_handle)(
                    ctx,
                    index,
                    element,
                    handle.container.as_ptr().cast(),
                    handle.container.len(),
                    handle.name.as_ptr().cast(),
                    handle.name.len(),
                    type_name.as_ptr().cast(),
                    type_name.len(),
                )
            };
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_handle_view_has_the_shims_layout() {
        // struct OpkitHandleView in shim/shim.cc (int32 + padding,
        // then seven pointer-sized fields).
        assert_eq!(size_of::<HandleView>(), 64);
        assert_eq!(std::mem::offset_of!(HandleView, payload), 8);
        assert_eq!(std::mem::offset_of!(HandleView, container_len), 24);
        assert_eq!(std::mem::offset_of!(HandleView, type_name_len), 56);
    }

    #[test]
    fn a_foreign_handle_is_an_error_that_names_its_type() {
        let (name, type_name) = ("Variable_7", "N10tensorflow3VarE");
        let view = HandleView {
            kind: FOREIGN,
            payload: std::ptr::null_mut(),
            container: std::ptr::null(),
            container_len: 0,
            name: name.as_ptr().cast(),
            name_len: name.len(),
            type_name: type_name.as_ptr().cast(),
            type_name_len: type_name.len(),
        };
        // SAFETY: the view's strings are live.
        let error = unsafe { handle_of(&view) }.unwrap_err();
        assert_eq!(error.code(), op_core::Code::InvalidArgument);
        assert!(error.message().contains(type_name), "{error}");
        assert!(error.message().contains("'Variable_7'"), "{error}");
    }

    #[test]
    fn a_named_handle_names_a_resource_of_the_librarys_manager() {
        let (container, name) = ("tables", "shared");
        let view = HandleView {
            kind: NAMED,
            payload: std::ptr::null_mut(),
            container: container.as_ptr().cast(),
            container_len: container.len(),
            name: name.as_ptr().cast(),
            name_len: name.len(),
            type_name: std::ptr::null(),
            type_name_len: 0,
        };
        // SAFETY: the view's strings are live.
        let handle = unsafe { handle_of(&view) }.unwrap();
        assert_eq!(
            (handle.container.as_str(), handle.name.as_str()),
            (container, name)
        );
        assert!(!handle.is_owning());
        assert_eq!(handle.device, runtime().device());
    }

    #[test]
    fn a_payload_is_the_handle_it_holds() {
        struct Thing;
        impl op_core::resource::Resource for Thing {
            fn debug_string(&self) -> String {
                "Thing".into()
            }
        }
        let resource = std::sync::Arc::new(Thing);
        let owning = ResourceHandle::owning(runtime().device(), resource.clone());
        let payload = Box::into_raw(Box::new(owning.clone())).cast::<c_void>();
        LIVE.fetch_add(1, Ordering::Relaxed);
        let view = HandleView {
            kind: OURS,
            payload,
            container: std::ptr::null(),
            container_len: 0,
            name: std::ptr::null(),
            name_len: 0,
            type_name: std::ptr::null(),
            type_name_len: 0,
        };
        // SAFETY: the payload is live until dropped below.
        let read = unsafe { handle_of(&view) }.unwrap();
        assert_eq!(read, owning);
        assert_eq!(std::sync::Arc::strong_count(&resource), 4);
        drop((read, owning));
        // SAFETY: made above, freed once.
        unsafe { drop_payload(payload) };
        assert_eq!(std::sync::Arc::strong_count(&resource), 1);
    }
}
