//! Our lite kernels inside Google's LiteRT interpreter (PyPI
//! `ai-edge-litert`), through an external delegate.
//!
//! LiteRT's Python `Interpreter` cannot add a custom kernel, but it loads
//! delegates: `ai_edge_litert.interpreter.load_delegate(path, options)`
//! dlopens a library and calls its `tflite_plugin_create_delegate`. A
//! `cdylib` that puts [`export!`] at its root is such a library. Its
//! delegate looks at the model's execution plan, claims every custom-op
//! node that op-lite can run from what is linked — the `#[lite_kernel]`s
//! ([`op_lite::MutableOpResolver::add_linked`]) first, then the
//! framework's ops through the lite bridge ([`op_lite::bridge`]), as
//! op-lite resolves a custom op by name — and runs each with op-lite's
//! kernel ([`op_lite::external::ExternalNode`]): init with the node's
//! custom options, prepare to fix the outputs' shapes (resizing LiteRT's
//! output tensors with `ResizeTensor` where they differ), invoke over
//! LiteRT's tensor memory, without copies.
//!
//! ```no_run
//! // lib.rs of a crate with `crate-type = ["cdylib"]`
//! use op_core::{DType, Result};
//! use op_lite::kernel::{InvokeContext, PrepareContext};
//! use op_lite::{lite_ensure_types_eq, lite_kernel};
//!
//! op_litert::export!();
//!
//! struct Sin;
//!
//! #[lite_kernel(custom = "Sin")]
//! impl Sin {
//!     fn prepare(ctx: &mut PrepareContext<'_>) -> Result<()> {
//!         lite_ensure_types_eq!(ctx, ctx.input_dtype(0)?, DType::F32);
//!         let shape = ctx.input_shape(0)?;
//!         ctx.set_output_shape(0, shape)
//!     }
//!     fn invoke(ctx: &mut InvokeContext<'_>) -> Result<()> {
//!         let (x, y) = (ctx.input::<f32>(0)?, ctx.output_mut::<f32>(0)?);
//!         y.iter_mut().zip(x).for_each(|(y, x)| *y = x.sin());
//!         Ok(())
//!     }
//! }
//! ```
//!
//! and in Python:
//!
//! ```python
//! from ai_edge_litert.interpreter import Interpreter, load_delegate
//! delegate = load_delegate("libmy_ops.so", {"ops": "Sin"})
//! interpreter = Interpreter("sin_custom.tflite", experimental_delegates=[delegate])
//! ```
//!
//! The options are in [`options`]. A model's custom op that the library
//! lacks is named, through LiteRT's error reporter, beside LiteRT's own
//! `Encountered unresolved custom op` error (option `unclaimed=error` makes
//! it the delegate's error instead). Every entry point contains panics, and
//! every failure returns `kTfLiteError` with a message naming the op.
//!
//! # Why a crate of its own
//!
//! It is LiteRT's C ABI (`TfLiteContext`, `TfLiteTensor`, `TfLiteNode`,
//! `TfLiteRegistration`, `TfLiteDelegate`, hand-written in [`ffi`] for the
//! fields used, their layouts checked by tests), linked only into a
//! delegate library; op-lite, our own runtime, needs none of it.
//!
//! # The other route: `custom_op_registerers`
//!
//! LiteRT's `InterpreterWithCustomOps(custom_op_registerers=[...])` calls
//! functions that take a `tflite::MutableOpResolver*` and must call its C++
//! method `MutableOpResolver::AddCustom(char const*, TfLiteRegistration
//! const*, int, int)`. The ai-edge-litert 2.x wheel exports no C++ symbol
//! (its `libpywrap_litert_common.so` exports only the Python modules' init
//! functions), so a library cannot call `AddCustom` there, from Rust or
//! C++. The older `tflite-runtime` (last release 2.14.0, with a CPython
//! 3.11 wheel) does export both `AddCustom` overloads from
//! `_pywrap_tensorflow_interpreter_wrapper.so`; a Rust registerer could
//! call the mangled symbol (`#[link_name]`, resolved at load time against
//! the already-loaded wrapper) with a `TfLiteRegistration` running the
//! same kernels. It is not offered: it ties the library to one C++ ABI and
//! one frozen package, while the delegate needs no C++ symbol and works
//! with both.

pub mod delegate;
pub mod ffi;
pub mod options;

/// Exports the delegate's C entry points from a `cdylib`: put it at the
/// crate root.
///
/// - `tflite_plugin_create_delegate(keys, values, num_options,
///   report_error)`: LiteRT's external-delegate entry point; parses the
///   [options](crate::options) (an error goes to `report_error`, and null
///   is returned).
/// - `tflite_plugin_destroy_delegate(delegate)`.
/// - `op_litert_manifest()`: the custom ops the library can claim, as JSON
///   ([`delegate::manifest_json`]), owned by the library.
///
/// `export!(register = my_crate::register_sin)` also claims the custom ops
/// that function adds to a resolver (a [`delegate::Registrar`]: the seed's
/// `resolver.AddCustom("Sin", Register_SIN())`, written
/// `resolver.add_custom("Sin", FnOp::new(sin_prepare, sin_eval))`).
#[macro_export]
macro_rules! export {
    () => {
        $crate::export!(@with ::std::option::Option::None);
    };
    (register = $register:path) => {
        $crate::export!(@with ::std::option::Option::Some($register as $crate::delegate::Registrar));
    };
    (@with $registrar:expr) => {
        /// LiteRT's external-delegate entry point: makes the delegate.
        ///
        /// # Safety
        ///
        /// `keys` and `values` point to `num_options` null-terminated
        /// strings each.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn tflite_plugin_create_delegate(
            keys: *const *const ::std::ffi::c_char,
            values: *const *const ::std::ffi::c_char,
            num_options: usize,
            report_error: ::std::option::Option<unsafe extern "C" fn(*const ::std::ffi::c_char)>,
        ) -> *mut $crate::ffi::TfLiteDelegate {
            $crate::delegate::set_registrar($registrar);
            // SAFETY: the caller's contract.
            unsafe { $crate::delegate::create_delegate(keys, values, num_options, report_error) }
        }

        /// LiteRT's external-delegate exit point: frees the delegate.
        ///
        /// # Safety
        ///
        /// `delegate` is null or made by `tflite_plugin_create_delegate`.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn tflite_plugin_destroy_delegate(
            delegate: *mut $crate::ffi::TfLiteDelegate,
        ) {
            // SAFETY: the caller's contract.
            unsafe { $crate::delegate::destroy_delegate(delegate) }
        }

        /// The custom ops this library's delegate can claim, as JSON.
        #[unsafe(no_mangle)]
        pub extern "C" fn op_litert_manifest() -> *const ::std::ffi::c_char {
            $crate::delegate::set_registrar($registrar);
            $crate::delegate::manifest()
        }
    };
}
