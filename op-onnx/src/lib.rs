//! The framework's ops in ONNX Runtime: a custom-op library that
//! `SessionOptions.register_custom_ops_library` loads, made from the same
//! `#[register_op]` and `#[kernel]` source that our own runtimes run.
//!
//! A crate of its own because it speaks ONNX Runtime's C ABI (its
//! `OrtApi` table and `OrtCustomOp` callbacks, `extern "system"`) and is
//! linked only into a library built for ONNX Runtime. It needs nothing of
//! ONNX Runtime to build: the ABI's types come from `ort-sys` (with
//! `disable-linking`: no binary downloaded or linked), and the functions
//! from the `OrtApiBase` the host passes at load. What every host shares
//! (kernels over host memory, shape inference, names) is op-host's.
//!
//! A user's `cdylib` exports every op linked into it with one line (the
//! same library may export to TensorFlow too, with `op_tf::export!()`):
//!
//! ```
//! // lib.rs of a crate with `crate-type = ["cdylib"]`
//! op_onnx::export!();
//! extern crate op_kernels;
//! # fn main() {
//! // SAFETY: the manifest is a C string the library keeps.
//! let manifest = unsafe { std::ffi::CStr::from_ptr(op_onnx_manifest()) };
//! let manifest: serde_json::Value = serde_json::from_str(manifest.to_str().unwrap()).unwrap();
//! assert!(manifest["ops"].as_array().unwrap().iter().any(|op| op["name"] == "ZeroOut"));
//! # }
//! ```
//!
//! and Python registers it:
//!
//! ```python
//! import onnxruntime as ort
//! options = ort.SessionOptions()
//! options.register_custom_ops_library("target/release/libmy_ops.so")
//! # a model whose nodes use domain "my_ops" (the crate's name) runs ZeroOut...
//! ```
//!
//! What it gives ONNX Runtime ([`plan`], [`abi`]): one custom op per op
//! and combination of input dtypes, in one domain (the crate's name, or
//! `export!(domain = "...")`); attrs read from the node's ONNX attributes
//! when the session is made, checked as our runtime checks them; output
//! types and shapes from our shape function (ONNX Runtime's shape
//! inference); kernels over ONNX Runtime's tensors without a copy of the
//! inputs, each output written into the tensor ONNX Runtime allocates;
//! errors and contained panics as `OrtStatus`es with our message. Ops that
//! do not map (list args, strings, resources, a type attr no input sets)
//! are left out, each with why, in `op_onnx_manifest()`.

pub mod abi;
pub mod dtype;
pub mod plan;

pub use plan::{OnnxOpSpec, OnnxPlan, Skipped};

use std::ffi::{CString, c_char};
use std::sync::OnceLock;

use op_core::Registry;
use op_host::Crates;
use serde_json::json;

/// Exports every op linked into this `cdylib` to ONNX Runtime: put it once
/// at the root of the library's crate (see the [crate docs](crate)).
///
/// It adds two C functions: `RegisterCustomOps`, which ONNX Runtime calls
/// when a session's options register the library, and
/// `op_onnx_manifest()`, what the library exports as JSON ([`manifest`]).
/// `export!(crates = [my_ops])` exports the ops of those crates only;
/// `export!(domain = "my.domain")` names the custom-op domain (by default
/// the crate's name); both may be given, crates first.
#[macro_export]
macro_rules! export {
    () => {
        $crate::export!(@with $crate::__private::Crates::All, env!("CARGO_CRATE_NAME"));
    };
    (domain = $domain:literal) => {
        $crate::export!(@with $crate::__private::Crates::All, $domain);
    };
    (crates = [$($krate:ident),+ $(,)?]) => {
        $crate::export!(@with $crate::__private::Crates::Only(&[$(stringify!($krate)),+]), env!("CARGO_CRATE_NAME"));
    };
    (crates = [$($krate:ident),+ $(,)?], domain = $domain:literal) => {
        $crate::export!(@with $crate::__private::Crates::Only(&[$(stringify!($krate)),+]), $domain);
    };
    (@with $crates:expr, $domain:expr) => {
        /// ONNX Runtime's entry point: registers the library's ops in a
        /// custom-op domain of the session options.
        ///
        /// # Safety
        ///
        /// ONNX Runtime calls it with live options and API base.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn RegisterCustomOps(
            options: *mut $crate::__private::OrtSessionOptions,
            api_base: *const $crate::__private::OrtApiBase,
        ) -> *mut $crate::__private::OrtStatus {
            // SAFETY: the caller's contract.
            unsafe {
                $crate::abi::register_custom_ops(
                    options,
                    api_base,
                    || $crate::OnnxPlan::new($crate::__private::Registry::global(), $crates),
                    $domain,
                )
            }
        }

        /// What the library exports to ONNX Runtime, as JSON (see
        /// `op_onnx::manifest`). Owned by the library.
        #[unsafe(no_mangle)]
        pub extern "C" fn op_onnx_manifest() -> *const ::std::ffi::c_char {
            $crate::manifest_for($crates, $domain)
        }
    };
}

#[doc(hidden)]
pub mod __private {
    pub use op_core::Registry;
    pub use op_host::Crates;
    pub use ort_sys::{OrtApiBase, OrtSessionOptions, OrtStatus};
}

/// The manifest of `plan` in `domain`: `{"host": "onnxruntime", "domain",
/// "api_version", "ops": [op], "skipped": [{"name", "why"}]}`, each op as
/// [`op_host::manifest::op_json`] writes it, with `"onnx_types"`: its
/// custom ops' dtype combinations, each `{"types": {attr: dtype}, "inputs":
/// [onnx type], "outputs": [onnx type]}` (dtypes by our `DataType` number,
/// ONNX types by `TensorProto.DataType` number).
pub fn manifest(plan: &OnnxPlan, domain: &str) -> String {
    let mut ops: Vec<serde_json::Value> = Vec::new();
    let mut last: Option<&str> = None;
    for spec in plan.ops() {
        let name = spec.entry.def().name.as_str();
        if last != Some(name) {
            ops.push(op_host::manifest::op_json(spec.entry));
            ops.last_mut().expect("just pushed")["onnx_types"] = json!([]);
            last = Some(name);
        }
        let onnx = |dtypes: &[op_core::DType]| {
            dtypes
                .iter()
                .map(|d| dtype::onnx_number(*d))
                .collect::<Vec<_>>()
        };
        let types: serde_json::Map<String, serde_json::Value> = spec
            .types
            .iter()
            .map(|(attr, dtype)| ((*attr).to_string(), json!(dtype.enum_value())))
            .collect();
        if let Some(list) = ops
            .last_mut()
            .and_then(|op| op["onnx_types"].as_array_mut())
        {
            list.push(json!({"types": types, "inputs": onnx(&spec.inputs), "outputs": onnx(&spec.outputs)}));
        }
    }
    let skipped: Vec<_> = plan
        .skipped()
        .map(|(op, why)| json!({"name": op.def().name, "why": why.describe(plan::HOST)}))
        .collect();
    json!({
        "host": "onnxruntime",
        "domain": domain,
        "api_version": abi::API_VERSION,
        "ops": ops,
        "skipped": skipped,
    })
    .to_string()
}

/// [`manifest`] of the ops of `crates` in the global registry, as a C
/// string the library keeps (what `op_onnx_manifest()` returns).
pub fn manifest_for(crates: Crates, domain: &str) -> *const c_char {
    static MANIFEST: OnceLock<CString> = OnceLock::new();
    MANIFEST
        .get_or_init(|| {
            let text = manifest(&OnnxPlan::new(Registry::global(), crates), domain);
            CString::new(text).unwrap_or_default()
        })
        .as_ptr()
}
