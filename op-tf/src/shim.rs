//! The shim: the few C++ functions (`op-tf/shim/shim.cc`) that do what
//! TensorFlow's C API cannot, built by `build.rs` into a library of its own
//! against one TensorFlow release's headers, and loaded at load (`load`).
//!
//! - Resource handles: the C API can neither make a `DT_RESOURCE` tensor
//!   nor read the handles one holds ([`crate::resources`]).
//! - Plain inputs and outputs without the C API's wrappers:
//!   `TF_GetInput` and `TF_AllocateOutput` each allocate a `TF_Tensor`
//!   wrapper (two heap objects) that is freed again at once; the shim's
//!   views read the same buffer, dtype and dims straight from the context
//!   (`input_view`, `allocate_output_view`).
//! - The CUDA stream of a GPU kernel: `TF_GetStream` answers only for
//!   pluggable devices, and TensorFlow's own GPU device keeps its stream in
//!   C++ (`construction_stream`, `compute_stream`).
//!
//! Where the build had no TensorFlow (`OPKIT_TF_PYTHON` unset) there is no
//! shim: resource ops are left out, and plain tensors take the C API.

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use op_core::{Error, Result};

use crate::api::{TF_OpKernelConstruction, TF_OpKernelContext, TF_Status, c_api};
use crate::resources::{DropFn, HandleView};
use crate::status::{check, status};

/// What the build did about the shim: what it was built against, or why
/// it was skipped (`build.rs`).
pub const SHIM_BUILD: &str = env!("OP_TF_SHIM_BUILD");

/// The shim's file name; a package has it beside the op library.
pub const SHIM_FILE: &str = env!("OP_TF_SHIM_FILE");

/// Where the build left the shim; empty when it skipped it.
const SHIM_PATH: &str = env!("OP_TF_SHIM_PATH");

/// Whether this build has the shim, without which ops with `resource` args
/// are not exported ([`crate::ExportPlan`]) and plain tensors cross through
/// the C API alone.
pub fn shim_built() -> bool {
    !SHIM_PATH.is_empty()
}

/// The shim the build made, for `cargo xtask package` to put beside the
/// library; `None` when the build skipped it.
pub fn built_shim() -> Option<&'static Path> {
    shim_built().then(|| Path::new(SHIM_PATH))
}

c_api! {
    /// The shim's functions (`op-tf/shim/shim.cc`), found in its library
    /// ([`load`]).
    pub(crate) struct Shim {
        fn opkit_tf_shim_version() -> *const c_char;
        fn opkit_tf_shim_handle_view_size() -> usize;
        fn opkit_tf_shim_tensor_view_size() -> usize;
        fn opkit_tf_input_view(
            ctx: *mut TF_OpKernelContext,
            index: c_int,
            view: *mut TensorView,
        ) -> i32;
        fn opkit_tf_allocate_output_view(
            ctx: *mut TF_OpKernelContext,
            index: c_int,
            dims: *const i64,
            rank: c_int,
            view: *mut TensorView,
            status: *mut TF_Status,
        );
        fn opkit_tf_resource_input_shape(
            ctx: *mut TF_OpKernelContext,
            index: c_int,
            dims: *mut i64,
            max_rank: c_int,
            status: *mut TF_Status,
        ) -> c_int;
        fn opkit_tf_resource_input_element(
            ctx: *mut TF_OpKernelContext,
            index: c_int,
            element: i64,
            library: *const c_void,
            view: *mut HandleView,
        );
        fn opkit_tf_allocate_resource_output(
            ctx: *mut TF_OpKernelContext,
            index: c_int,
            dims: *const i64,
            rank: c_int,
            status: *mut TF_Status,
        );
        fn opkit_tf_set_owning_handle(
            ctx: *mut TF_OpKernelContext,
            index: c_int,
            element: i64,
            library: *const c_void,
            payload: *mut c_void,
            drop: DropFn,
            type_name: *const c_char,
            type_name_len: usize,
        );
        fn opkit_tf_construction_stream(ctx: *mut TF_OpKernelConstruction) -> *mut c_void;
        fn opkit_tf_compute_stream(ctx: *mut TF_OpKernelContext) -> *mut c_void;
        fn opkit_tf_set_named_handle(
            ctx: *mut TF_OpKernelContext,
            index: c_int,
            element: i64,
            container: *const c_char,
            container_len: usize,
            name: *const c_char,
            name_len: usize,
            type_name: *const c_char,
            type_name_len: usize,
        );
    }
}

static SHIM: OnceLock<Shim> = OnceLock::new();

/// The shim, once loaded.
pub(crate) fn get() -> Option<&'static Shim> {
    SHIM.get()
}

/// The file of the library this code is linked into.
fn own_library() -> Option<PathBuf> {
    let mut info = std::mem::MaybeUninit::<libc::Dl_info>::zeroed();
    // SAFETY: dladdr only reads the address (a function of this library)
    // and fills `info`, whose file name points into the loader's data.
    let found = unsafe { libc::dladdr(own_library as *const c_void, info.as_mut_ptr()) };
    // SAFETY: dladdr filled `info` when it returned non-zero.
    let info = unsafe { info.assume_init() };
    if found == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: a C string of the loader's, live while the library is.
    let name = unsafe { CStr::from_ptr(info.dli_fname) };
    Some(PathBuf::from(name.to_string_lossy().into_owned()))
}

/// Loads the shim, from beside this library (a package) or where the build
/// left it, and checks that it fits this TensorFlow; returns the report's
/// line. Called once, at load, before any op is registered.
pub(crate) fn load() -> Result<String> {
    let beside = own_library().and_then(|lib| Some(lib.parent()?.join(SHIM_FILE)));
    let path = beside
        .filter(|path| path.is_file())
        .unwrap_or_else(|| PathBuf::from(SHIM_PATH));
    let c_path = CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| Error::internal("the shim's path holds a NUL"))?;
    // SAFETY: dlopen of a shared library with a C-string path; the shim
    // has no constructors of its own, and TensorFlow, which it links, is
    // loaded. The handle is never closed (resources outlive any call).
    let library = unsafe { libc::dlopen(c_path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if library.is_null() {
        // SAFETY: dlerror returns the loader's message for this thread.
        let why = unsafe { libc::dlerror() };
        let why = if why.is_null() {
            String::from("unknown error")
        } else {
            // SAFETY: a C string of the loader's.
            unsafe { CStr::from_ptr(why) }
                .to_string_lossy()
                .into_owned()
        };
        return Err(Error::failed_precondition(format!(
            "the shim {} did not load: {why}",
            path.display()
        )));
    }
    let shim = Shim::resolve(|name| {
        // SAFETY: a handle from dlopen and a C-string name.
        unsafe { libc::dlsym(library, name.as_ptr()) }
    })
    .map_err(|missing| {
        Error::failed_precondition(format!(
            "the shim {} lacks {}",
            path.display(),
            missing.join(", ")
        ))
    })?;
    // SAFETY: the shim's functions take nothing; the version is a static
    // C string of the shim.
    let (sizes, built_for) = unsafe {
        (
            (
                (shim.opkit_tf_shim_handle_view_size)(),
                (shim.opkit_tf_shim_tensor_view_size)(),
            ),
            CStr::from_ptr((shim.opkit_tf_shim_version)()).to_string_lossy(),
        )
    };
    let ours = (size_of::<HandleView>(), size_of::<TensorView>());
    if sizes != ours {
        return Err(Error::failed_precondition(format!(
            "the shim {} is of another version of op-tf (views of {sizes:?} bytes, ours \
             {ours:?}): rebuild the package",
            path.display(),
        )));
    }
    if let Some(running) = tensorflow_version()
        && running != built_for
    {
        return Err(Error::failed_precondition(format!(
            "the shim {} was built against TensorFlow {built_for}, and this is \
             TensorFlow {running}, whose C++ ABI may differ: rebuild the package against it",
            path.display()
        )));
    }
    let line = format!("shim {} (TensorFlow {built_for})", path.display());
    let _ = SHIM.set(shim);
    Ok(line)
}

/// The running TensorFlow's version (`TF_Version`, which lives in
/// `libtensorflow_cc`; `None` where that is not loaded).
fn tensorflow_version() -> Option<String> {
    // SAFETY: dlsym looks the name up among the process's global symbols.
    let version = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"TF_Version".as_ptr()) };
    if version.is_null() {
        return None;
    }
    // SAFETY: `TF_Version` is `const char* TF_Version(void)` (c_api.h).
    let version: unsafe extern "C" fn() -> *const c_char = unsafe { std::mem::transmute(version) };
    // SAFETY: it returns a static C string.
    Some(
        unsafe { CStr::from_ptr(version()) }
            .to_string_lossy()
            .into_owned(),
    )
}

/// The environment variable that, set to `1` at load, makes plain
/// tensors take the C API even where the shim is loaded (to compare the
/// two paths, or to rule the shim's out).
pub const C_API_ONLY_VARIABLE: &str = "OPKIT_TF_C_API_ONLY";

/// Whether plain tensors take the shim's views (set at load).
static VIEWS: AtomicBool = AtomicBool::new(true);

/// Reads [`C_API_ONLY_VARIABLE`]; returns the report's words for the path
/// plain tensors take.
pub(crate) fn choose_views() -> &'static str {
    let c_api_only = std::env::var(C_API_ONLY_VARIABLE).is_ok_and(|v| v == "1");
    VIEWS.store(!c_api_only, Ordering::Relaxed);
    if c_api_only {
        "plain tensors: the C API, as OPKIT_TF_C_API_ONLY=1 asks"
    } else {
        "plain tensors: its views"
    }
}

/// The shim, when plain tensors take its views.
fn views() -> Option<&'static Shim> {
    get().filter(|_| VIEWS.load(Ordering::Relaxed))
}

/// The most dims a [`TensorView`] holds (`OPKIT_VIEW_RANK`).
pub(crate) const VIEW_RANK: usize = 8;

/// The shim's `OpkitTensorView`: a plain tensor's dtype, dims and buffer.
#[repr(C)]
pub(crate) struct TensorView {
    pub(crate) dtype: i32,
    pub(crate) rank: i32,
    pub(crate) dims: [i64; VIEW_RANK],
    pub(crate) data: *mut c_void,
    pub(crate) bytes: usize,
}

impl TensorView {
    fn empty() -> TensorView {
        TensorView {
            dtype: 0,
            rank: 0,
            dims: [0; VIEW_RANK],
            data: std::ptr::null_mut(),
            bytes: 0,
        }
    }

    /// The dims, as the view has them.
    pub(crate) fn dims(&self) -> &[i64] {
        &self.dims[..(self.rank.clamp(0, VIEW_RANK as i32) as usize)]
    }
}

/// Input `index` as a view of the context's tensor, when the shim is
/// loaded and the input is a plain one of rank at most [`VIEW_RANK`];
/// `None` sends the caller to `TF_GetInput`.
///
/// # Safety
///
/// `ctx` is live and `index` one of its inputs. The view's buffer lives as
/// long as the call.
pub(crate) unsafe fn input_view(ctx: *mut TF_OpKernelContext, index: c_int) -> Option<TensorView> {
    let shim = views()?;
    let mut view = TensorView::empty();
    // SAFETY: the caller's contract; the shim fills `view` or returns 0.
    (unsafe { (shim.opkit_tf_input_view)(ctx, index, &mut view) } != 0).then_some(view)
}

/// Allocates output `index` with these dims and gives its buffer, when the
/// shim is loaded; `None` sends the caller to `TF_AllocateOutput`.
///
/// # Safety
///
/// `ctx` is live and `index` one of its outputs.
pub(crate) unsafe fn allocate_output_view(
    ctx: *mut TF_OpKernelContext,
    index: c_int,
    dims: &[i64],
) -> Option<Result<TensorView>> {
    let shim = views()?;
    let api = crate::kernel::api();
    let mut view = TensorView::empty();
    let status = status(api);
    // SAFETY: the caller's contract; `dims` holds `dims.len()` dims.
    unsafe {
        (shim.opkit_tf_allocate_output_view)(
            ctx,
            index,
            dims.as_ptr(),
            dims.len() as c_int,
            &mut view,
            status,
        )
    };
    Some(check(api, status, || format!("allocating output {index}")).map(|()| view))
}

/// The raw CUDA stream of the device a kernel is being constructed for
/// (null for a device without one); `None` without a shim.
///
/// # Safety
///
/// `ctx` is live.
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
pub(crate) unsafe fn construction_stream(ctx: *mut TF_OpKernelConstruction) -> Option<*mut c_void> {
    // SAFETY: the caller's contract.
    get().map(|shim| unsafe { (shim.opkit_tf_construction_stream)(ctx) })
}

/// The raw CUDA stream this call of a kernel is ordered on (null for a
/// device without one); `None` without a shim.
///
/// # Safety
///
/// `ctx` is live.
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
pub(crate) unsafe fn compute_stream(ctx: *mut TF_OpKernelContext) -> Option<*mut c_void> {
    // SAFETY: the caller's contract.
    get().map(|shim| unsafe { (shim.opkit_tf_compute_stream)(ctx) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tensor_view_has_the_shims_layout() {
        // struct OpkitTensorView in shim/shim.cc.
        assert_eq!(size_of::<TensorView>(), 88);
        assert_eq!(std::mem::offset_of!(TensorView, dims), 8);
        assert_eq!(std::mem::offset_of!(TensorView, data), 72);
        assert_eq!(std::mem::offset_of!(TensorView, bytes), 80);
    }
}
