//! The framework's ops in TensorFlow: a shared library that
//! `tf.load_op_library` loads, made from the same `#[register_op]` and
//! `#[kernel]` source that our own runtimes run, with no C++ written.
//!
//! A crate of its own because it speaks TensorFlow's C ABI (raw pointers,
//! load-time constructors, `extern "C"` callbacks) and is linked only into
//! a library built for TensorFlow: no other crate's users pull it in.
//! It needs nothing of TensorFlow to build: the C functions are looked up
//! in the process when TensorFlow loads the library ([`api`]). Only ops
//! with `resource` args need TensorFlow's headers and a C++ compiler, for
//! the [`shim`] that `build.rs` makes when `OPKIT_TF_PYTHON` names a
//! Python with TensorFlow (`cargo xtask package` sets it).
//!
//! A user's `cdylib` crate exports every op linked into it with one line:
//!
//! ```
//! // lib.rs of a crate with `crate-type = ["cdylib"]`
//! op_tf::export!();
//! // Link the crates whose ops it exports:
//! extern crate op_kernels;
//! # fn main() {
//! // Outside TensorFlow (this example runs as a program), the load says
//! // what it lacks.
//! // SAFETY: the report is a C string the library keeps.
//! let report = unsafe { std::ffi::CStr::from_ptr(op_tf_load_report()) };
//! let report = report.to_str().unwrap();
//! assert!(report.starts_with("error: "), "{report}");
//! assert!(report.contains("TF_NewStatus"), "{report}");
//! # }
//! ```
//!
//! and Python loads it:
//!
//! ```python
//! import tensorflow as tf
//! ops = tf.load_op_library("target/release/libmy_ops_tf.so")
//! ops.zero_out([[1, 2], [3, 4]])   # [[1, 0], [0, 0]]
//! ```
//!
//! What happens at load, in order:
//!
//! 1. `export!` submits [`load::on_load`] as a
//!    [`LoadHook`](op_core::registry::LoadHook), which op-core runs at load
//!    once every crate's registrations are in;
//! 2. that finds TensorFlow's C API ([`api::Api::load`]; a missing function
//!    is named in the report), loads the [`shim`] where the build made one,
//!    decides what to export ([`ExportPlan`]: TensorFlow's own ops stay
//!    out, as do other crates' ops under `export!(crates = [...])`; ops with
//!    Python-keyword arg names are held back), and registers each op
//!    through TensorFlow's op builder from the same spec strings our parser
//!    checked, then each CPU kernel with its type constraints and
//!    host-memory args ([`kernel`]);
//! 3. the Python package, once `tf.load_op_library` returns, registers the
//!    held-back ops (`op_tf_register_held_back()`), for which TensorFlow
//!    writes no wrappers then, and wraps them itself.
//!
//! `op_tf_load_report()`, a C function the library exports, says what was
//! registered, held back and skipped, or why the load failed.
//!
//! Shape functions run at graph construction where TensorFlow's C API lets
//! them ([`shape`]); strings cross as TensorFlow's `tstring`s ([`tstring`]);
//! gradients are ours ([`gradient`]); resource handles cross as
//! TensorFlow's ref-counted or named handles through the shim
//! ([`resources`]; without a shim, resource ops are left out and the export
//! says why). GPU kernels (the `gpu` feature, and the shim for
//! TensorFlow's CUDA stream) run through op-cuda on TensorFlow's GPU device
//! (`op_tf::gpu`, with the `gpu` feature); they are built and registered, but have not yet run on a GPU.

pub mod api;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod gradient;
pub mod kernel;
pub mod load;
pub mod manifest;
#[cfg(feature = "package")]
pub mod package;
pub mod plan;
pub mod resources;
pub mod shape;
pub mod shim;
mod status;
pub mod tstring;

pub use plan::{Crates, ExportPlan, GpuSkipped, PYTHON_KEYWORDS, Skipped};

/// Exports every op linked into this `cdylib` to TensorFlow: put it once
/// at the root of the library's crate (see the [crate docs](crate)).
///
/// It adds a load hook (which registers the ops when TensorFlow loads the
/// library) and two C functions:
/// `op_tf_load_report()`, which returns what the load did as text, and
/// `op_tf_manifest()`, what the library exports as JSON
/// ([`manifest`]).
///
/// `export!(crates = [my_ops, more_ops])` exports the ops of those crates
/// only (each named as in a Rust path), for a library whose crate links
/// other op crates that have libraries of their own:
///
/// ```
/// op_tf::export!(crates = [op_kernels]);
/// extern crate op_kernels;
/// # fn main() {
/// // SAFETY: the manifest is a C string the library keeps.
/// let manifest = unsafe { std::ffi::CStr::from_ptr(op_tf_manifest()) };
/// let manifest: serde_json::Value = serde_json::from_str(manifest.to_str().unwrap()).unwrap();
/// assert!(manifest["ops"].as_array().unwrap().iter().any(|op| op["name"] == "ZeroOut"));
/// # }
/// ```
#[macro_export]
macro_rules! export {
    () => {
        $crate::export!(@with $crate::plan::Crates::All);
    };
    (crates = [$($krate:ident),+ $(,)?]) => {
        $crate::export!(@with $crate::plan::Crates::Only(&[$(stringify!($krate)),+]));
    };
    (@with $crates:expr) => {
        $crate::__private::inventory::submit! {
            $crate::__private::LoadHook::new(|| $crate::load::on_load_for($crates))
        }

        /// What the load did: `ok` and a line per op and kernel registered
        /// or skipped, or `error: ` and why. Owned by the library.
        #[unsafe(no_mangle)]
        pub extern "C" fn op_tf_load_report() -> *const ::std::ffi::c_char {
            $crate::load::report()
        }

        /// Registers the ops held back at load (an arg named after a
        /// Python keyword; see `op_tf::ExportPlan::held_back`) and returns
        /// what it did, like `op_tf_load_report`. The package calls it.
        #[unsafe(no_mangle)]
        pub extern "C" fn op_tf_register_held_back() -> *const ::std::ffi::c_char {
            $crate::load::register_held_back()
        }

        /// How many of the library's resources TensorFlow's handles keep
        /// alive now (see `op_tf::resources::live_resources`).
        #[unsafe(no_mangle)]
        pub extern "C" fn op_tf_live_resources() -> usize {
            $crate::resources::live_resources()
        }

        /// What the library exports, as JSON (see `op_tf::manifest`), for
        /// `cargo xtask package`; it needs no TensorFlow. Owned by the
        /// library.
        #[unsafe(no_mangle)]
        pub extern "C" fn op_tf_manifest() -> *const ::std::ffi::c_char {
            $crate::load::manifest_for($crates)
        }
    };
}

#[doc(hidden)]
pub mod __private {
    pub use op_core::inventory;
    pub use op_core::registry::LoadHook;
}
