//! The framework's ops in PyTorch: a library that
//! `torch.ops.load_library(path)` registers through PyTorch's stable C
//! ABI, made from the same `#[register_op]` and `#[kernel]` source that
//! our own runtimes run.
//!
//! A crate of its own because it speaks PyTorch's C ABI (the
//! `aoti_torch_*` and `torch_*` functions of `libtorch`, boxed kernels
//! that fail by throwing) and is linked only into a library built for
//! PyTorch. It needs nothing of PyTorch to build (no headers, no C++
//! compiler, no libtorch to link: the functions are looked up in the
//! process at load, [`shim`]), and one build serves PyTorch 2.10 and
//! every later version, whose stable ABI keeps what 2.10 has.
//!
//! ```
//! // lib.rs of a crate with `crate-type = ["cdylib"]`
//! op_torch::export!();
//! extern crate op_kernels;
//! # fn main() {
//! // SAFETY: the manifest is a C string the library keeps.
//! let manifest = unsafe { std::ffi::CStr::from_ptr(op_torch_manifest()) };
//! let manifest: serde_json::Value = serde_json::from_str(manifest.to_str().unwrap()).unwrap();
//! let zero_out = manifest["ops"].as_array().unwrap().iter().find(|op| op["name"] == "ZeroOut").unwrap();
//! assert_eq!(zero_out["schema"], "zero_out(Tensor to_zero) -> Tensor");
//! # }
//! ```
//!
//! and Python:
//!
//! ```python
//! import torch
//! torch.ops.load_library("target/release/libmy_ops.so")
//! torch.ops.my_ops.zero_out(torch.tensor([[1, 2], [3, 4]]))   # tensor([[1, 0], [0, 0]])
//! ```
//!
//! What it gives PyTorch: each exported op ([`plan`]) defined in one
//! namespace (the crate's name, or `export!(namespace = "...")`) with a
//! schema translated from its OpDef ([`schema`]: inputs as `Tensor`s,
//! attrs keyword-only with their defaults, type attrs from the tensors'
//! dtypes), and a CPU kernel that runs ours over PyTorch's tensors,
//! contiguous ones without a copy ([`kernel`]); each op with a
//! `#[gradient]` also has `<name>_backward`. The generated Python package
//! (`cargo xtask package`, its `torch` module) adds what PyTorch keeps in
//! Python: a fake implementation from our shape function (for
//! `torch.compile` and `torch.export`) and the autograd formula that
//! calls `<name>_backward`.

pub mod kernel;
pub mod load;
pub mod plan;
pub mod schema;
pub mod shim;

pub use plan::{Skipped, TorchOp, TorchPlan};

/// Exports every op linked into this `cdylib` to PyTorch: put it once at
/// the root of the library's crate (see the [crate docs](crate)).
///
/// Loading the library in a process with PyTorch registers its ops
/// (nothing happens in one without). It adds three C functions:
/// `op_torch_load_report()` (what the load registered, or why not),
/// `op_torch_infer(request)` and `op_torch_free(text)` (output dtypes and
/// shapes for the fake implementations, [`op_host::request`]), and
/// `op_torch_manifest()` (what the library exports, as JSON:
/// [`load::manifest`]). `export!(crates = [my_ops])` exports the ops of
/// those crates only; `export!(namespace = "my_ns")` names the namespace
/// (by default the crate's name); both may be given, crates first.
///
/// ```
/// op_torch::export!(crates = [op_kernels], namespace = "my_ns");
/// extern crate op_kernels;
/// # fn main() {
/// // SAFETY: the manifest is a C string the library keeps.
/// let manifest = unsafe { std::ffi::CStr::from_ptr(op_torch_manifest()) }.to_str().unwrap();
/// let manifest: serde_json::Value = serde_json::from_str(manifest).unwrap();
/// assert_eq!(manifest["namespace"], "my_ns");
/// assert_eq!(manifest["target"], "2.10");
/// assert!(manifest["ops"].as_array().unwrap().iter().any(|op| op["name"] == "ZeroOut"));
/// # }
/// ```
#[macro_export]
macro_rules! export {
    () => {
        $crate::export!(@with $crate::__private::Crates::All, env!("CARGO_CRATE_NAME"));
    };
    (namespace = $namespace:literal) => {
        $crate::export!(@with $crate::__private::Crates::All, $namespace);
    };
    (crates = [$($krate:ident),+ $(,)?]) => {
        $crate::export!(@with $crate::__private::Crates::Only(&[$(stringify!($krate)),+]), env!("CARGO_CRATE_NAME"));
    };
    (crates = [$($krate:ident),+ $(,)?], namespace = $namespace:literal) => {
        $crate::export!(@with $crate::__private::Crates::Only(&[$(stringify!($krate)),+]), $namespace);
    };
    (@with $crates:expr, $namespace:expr) => {
        $crate::__private::inventory::submit! {
            $crate::__private::LoadHook::new(|| $crate::load::on_load($crates, $namespace))
        }

        /// What the load registered with PyTorch: `ok` and a line per op,
        /// or `error: ` and why. Owned by the library.
        #[unsafe(no_mangle)]
        pub extern "C" fn op_torch_load_report() -> *const ::std::ffi::c_char {
            $crate::load::report()
        }

        /// The output dtypes and shapes of a call request, as JSON (a C
        /// string to free with `op_torch_free`).
        ///
        /// # Safety
        ///
        /// `request` is a C string.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn op_torch_infer(
            request: *const ::std::ffi::c_char,
        ) -> *mut ::std::ffi::c_char {
            // SAFETY: the caller's contract.
            unsafe { $crate::__private::infer_c(request) }
        }

        /// Frees what `op_torch_infer` returned.
        ///
        /// # Safety
        ///
        /// `text` came from `op_torch_infer`, not yet freed.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn op_torch_free(text: *mut ::std::ffi::c_char) {
            // SAFETY: the caller's contract.
            unsafe { $crate::__private::free_c(text) }
        }

        /// What the library exports to PyTorch, as JSON. Owned by the
        /// library.
        #[unsafe(no_mangle)]
        pub extern "C" fn op_torch_manifest() -> *const ::std::ffi::c_char {
            $crate::load::manifest_for($crates, $namespace)
        }
    };
}

#[doc(hidden)]
pub mod __private {
    pub use op_core::inventory;
    pub use op_core::registry::LoadHook;
    pub use op_host::Crates;
    pub use op_host::request::{free_c, infer_c};
}
