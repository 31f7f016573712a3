//! The framework's ops in JAX: a library whose one XLA FFI handler runs
//! any of its ops, with a Python module (written by `cargo xtask
//! package`) whose functions are the ops, on `jax.Array`s and under
//! `jax.jit`, `jax.grad` and `jax.vmap`.
//!
//! A crate of its own because it speaks XLA's FFI C ABI (the call frame,
//! the metadata handshake; [`ffi`]) and is linked only into a library
//! built for JAX. It needs nothing of jaxlib to build or link: XLA hands
//! the handler its API in each call frame.
//!
//! ```
//! // lib.rs of a crate with `crate-type = ["cdylib"]`
//! op_jax::export!();
//! extern crate op_kernels;
//! # fn main() {
//! // SAFETY: the manifest is a C string the library keeps.
//! let manifest = unsafe { std::ffi::CStr::from_ptr(op_jax_manifest()) };
//! let manifest: serde_json::Value = serde_json::from_str(manifest.to_str().unwrap()).unwrap();
//! assert!(manifest["ops"].as_array().unwrap().iter().any(|op| op["name"] == "ZeroOut"));
//! # }
//! ```
//!
//! How a call goes:
//!
//! 1. at trace time the Python function writes the call's request (op,
//!    input dtypes and shapes, attrs: [`op_host::request`]) and asks the
//!    library's `op_jax_infer` for the output dtypes and shapes (our shape
//!    function; an output whose shape depends on input values is an
//!    error there, naming the op and output), then makes a
//!    `jax.ffi.ffi_call` to the handler with the request as its `opkit`
//!    attribute;
//! 2. XLA calls the handler ([`handler::call`]), which makes the kernel
//!    for that request once and runs it over XLA's buffers, each output
//!    written into the buffer XLA allocated;
//! 3. `jax.grad` goes through a `custom_vjp` whose backward is a second
//!    call, of the op's `#[gradient]`, run on our runtime.

pub mod ffi;
pub mod handler;
pub mod plan;

pub use plan::{JaxPlan, Skipped};

use std::ffi::{CString, c_char};
use std::sync::OnceLock;

use op_core::Registry;
use op_host::Crates;
use serde_json::json;

/// Exports every op linked into this `cdylib` to JAX: put it once at the
/// root of the library's crate. `export!(crates = [my_ops])` exports the
/// ops of those crates only.
///
/// It adds four C functions: `op_jax_call`, the XLA FFI handler (which
/// the Python module registers with `jax.ffi.register_ffi_target`),
/// `op_jax_infer(request)` and `op_jax_free(text)` for output shapes at
/// trace time, and `op_jax_manifest()`, what the library exports as JSON
/// ([`manifest`]).
#[macro_export]
macro_rules! export {
    () => {
        $crate::export!(@with $crate::__private::Crates::All);
    };
    (crates = [$($krate:ident),+ $(,)?]) => {
        $crate::export!(@with $crate::__private::Crates::Only(&[$(stringify!($krate)),+]));
    };
    (@with $crates:expr) => {
        /// XLA's FFI handler for every op of the library.
        ///
        /// # Safety
        ///
        /// XLA calls it with a live call frame.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn op_jax_call(
            frame: *mut $crate::ffi::CallFrame,
        ) -> *mut $crate::ffi::Error {
            // SAFETY: the caller's contract.
            unsafe { $crate::handler::call(frame) }
        }

        /// The output dtypes and shapes of a call request, as JSON (a C
        /// string to free with `op_jax_free`).
        ///
        /// # Safety
        ///
        /// `request` is a C string.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn op_jax_infer(
            request: *const ::std::ffi::c_char,
        ) -> *mut ::std::ffi::c_char {
            // SAFETY: the caller's contract.
            unsafe { $crate::__private::infer_c(request) }
        }

        /// Frees what `op_jax_infer` returned.
        ///
        /// # Safety
        ///
        /// `text` came from `op_jax_infer`, not yet freed.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn op_jax_free(text: *mut ::std::ffi::c_char) {
            // SAFETY: the caller's contract.
            unsafe { $crate::__private::free_c(text) }
        }

        /// What the library exports to JAX, as JSON. Owned by the library.
        #[unsafe(no_mangle)]
        pub extern "C" fn op_jax_manifest() -> *const ::std::ffi::c_char {
            $crate::manifest_for($crates)
        }
    };
}

#[doc(hidden)]
pub mod __private {
    pub use op_host::Crates;
    pub use op_host::request::{free_c, infer_c};
}

/// The manifest of `plan`: `{"host": "jax", "ffi_api_version": [major,
/// minor], "target": name, "ops": [op], "skipped": [{"name", "why"}]}`,
/// each op as [`op_host::manifest::op_json`] writes it, with `"vmap"`: the
/// `vmap_method` its calls get.
pub fn manifest(plan: &JaxPlan) -> String {
    let ops: Vec<_> = plan
        .exported()
        .map(|op| {
            let mut entry = op_host::manifest::op_json(op);
            // Our ops declare no batching rule, so a batch runs as a loop
            // of calls: right for every op, if not the fastest.
            entry["vmap"] = json!("sequential");
            entry
        })
        .collect();
    let skipped: Vec<_> = plan
        .skipped()
        .map(|(op, why)| json!({"name": op.def().name, "why": why.describe(plan::HOST)}))
        .collect();
    json!({
        "host": "jax",
        "ffi_api_version": [handler::API_VERSION.0, handler::API_VERSION.1],
        "ops": ops,
        "skipped": skipped,
    })
    .to_string()
}

/// [`manifest`] of the ops of `crates`, as a C string the library keeps.
pub fn manifest_for(crates: Crates) -> *const c_char {
    static MANIFEST: OnceLock<CString> = OnceLock::new();
    MANIFEST
        .get_or_init(|| {
            CString::new(manifest(&JaxPlan::new(Registry::global(), crates))).unwrap_or_default()
        })
        .as_ptr()
}
