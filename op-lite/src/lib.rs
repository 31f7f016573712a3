//! The lite runtime: TensorFlow Lite's execution model, in Rust.
//!
//! A deployment runtime runs one model, converted ahead of time, as fast and
//! as predictably as it can: it reads a `.tflite` flatbuffer
//! ([`model`]), finds a kernel for every node through an op resolver, runs
//! each kernel's `prepare` once to fix shapes and plan one memory arena, and
//! then `invoke`s the nodes in order without allocating.
//!
//! TensorFlow Lite's builtin ops are in [`builtins`]: a model that
//! TensorFlow's converter wrote runs with [`BuiltinOpResolver`], which
//! registers all of them (the seed's custom ops are added to it with
//! `add_custom`):
//!
//! ```
//! use op_lite::{BuiltinOpResolver, Interpreter, Model};
//!
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/mlp.tflite");
//! let model = Model::from_bytes(&std::fs::read(path)?)?;
//! let mut interpreter = Interpreter::new(&model, &BuiltinOpResolver::new())?;
//! interpreter.resize_input_tensor(0, &[2, 6])?; // the batch is dynamic
//! interpreter.allocate_tensors()?;
//! interpreter.set_input(0, &[0.25f32; 12])?;
//! interpreter.invoke()?;
//! assert_eq!(interpreter.output_shape(0)?, [2, 3]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Why a crate of its own
//!
//! The framework's eager and graph runtimes (`op-core`) dispatch by op name
//! and dtype on every call, hand tensors around by reference count and
//! allocate outputs as they go: right for research and training, wrong for
//! a phone. This crate has its own execution model (a fixed plan, kernels
//! with TensorFlow Lite's init/prepare/invoke/free phases, tensors that are
//! slices of one arena) and its own file format, and a deployment build
//! should not pull in the training side (gradients, checkpoints, graphs).
//! It depends on `op-core` without default features, for the dtypes and the
//! error type that the whole framework shares.
//!
//! # The seed's custom `Sin`, end to end
//!
//! TensorFlow Lite's custom-operator guide writes `Sin` as two C functions,
//! `SinPrepare` and `SinEval`, registers them with
//! `resolver.AddCustom("Sin", Register_SIN())`, and runs a model whose
//! `y = sin(x + offset)` uses it. The same here ([`kernel`] has the
//! interface, [`resolver`] the resolver, [`interpreter`] the rest):
//!
//! ```
//! use op_core::{DType, Result};
//! use op_lite::kernel::{FnOp, InvokeContext, PrepareContext};
//! use op_lite::model::BuiltinOperator;
//! use op_lite::{Interpreter, MutableOpResolver, lite_ensure_eq};
//!
//! fn sin_prepare(ctx: &mut PrepareContext<'_>) -> Result<()> {
//!     lite_ensure_eq!(ctx, ctx.num_inputs(), 1);
//!     lite_ensure_eq!(ctx, ctx.num_outputs(), 1);
//!     let shape = ctx.input_shape(0)?;
//!     ctx.set_output_shape(0, shape)
//! }
//!
//! fn sin_eval(ctx: &mut InvokeContext<'_>) -> Result<()> {
//!     let input = ctx.input::<f32>(0)?;
//!     let output = ctx.output_mut::<f32>(0)?;
//!     for (y, x) in output.iter_mut().zip(input) {
//!         *y = x.sin();
//!     }
//!     Ok(())
//! }
//!
//! # use op_lite::model::*;
//! # fn tensor(name: &str) -> TensorInfo {
//! #     TensorInfo { name: name.into(), dtype: DType::F32, shape: vec![5], shape_signature: None,
//! #                  buffer: 0, quantization: None, is_variable: false }
//! # }
//! # let model = Model {
//! #     operator_codes: vec![OperatorCode {
//! #         builtin: BuiltinOperator::CUSTOM, custom_name: Some("Sin".into()), version: 1,
//! #     }],
//! #     subgraphs: vec![Subgraph {
//! #         tensors: vec![tensor("x"), tensor("y")], inputs: vec![0], outputs: vec![1],
//! #         operators: vec![Operator {
//! #             opcode_index: 0, inputs: vec![Some(0)], outputs: vec![1], intermediates: vec![],
//! #             builtin_options: BuiltinOptions::None, custom_options: vec![],
//! #         }],
//! #         ..Subgraph::default()
//! #     }],
//! #     buffers: vec![Buffer::default()],
//! #     ..Model::default()
//! # };
//! // `model` runs the custom op "Sin" from input "x" to output "y".
//! let err = Interpreter::new(&model, &MutableOpResolver::new()).unwrap_err();
//! assert!(err.message().starts_with("Didn't find custom operator for name 'Sin'"));
//!
//! let mut resolver = MutableOpResolver::new();
//! resolver.add_custom("Sin", FnOp::new(sin_prepare, sin_eval));
//! let mut interpreter = Interpreter::new(&model, &resolver)?;
//! interpreter.allocate_tensors()?;
//! let offset = 1.0;
//! let x = [-8.0f32, 0.5, 2.0, 2.2, 201.0].map(|x| x + offset);
//! interpreter.set_input(interpreter.input_index("x")?, &x)?;
//! interpreter.invoke()?;
//! let y = interpreter.output::<f32>(0)?;
//! assert!((y[1] - 0.997_495).abs() < 1e-6); // sin(0.5 + 1)
//! # Ok::<(), op_core::Error>(())
//! ```
//!
//! # Kernels written once
//!
//! A lite kernel can also be written on its `impl` with
//! [`#[lite_kernel]`](macro@lite_kernel) (`custom = "Sin"`, or `builtin =
//! "ADD"` to override one, checked at compile time), which registers it at
//! link time: [`MutableOpResolver::add_linked`] registers every such
//! kernel. And any op of the framework that has a shape function runs here
//! as a custom op without a lite kernel at all ([`bridge::FrameworkOps`],
//! feature `framework-ops`): its attrs come from the custom options
//! ([`attrs`]), its prepare from its shape function, its invoke from its
//! kernel, writing into the arena.
//!
//! # Kernels in another runtime
//!
//! [`external::ExternalNode`] runs one lite kernel as one node of another
//! interpreter, over that interpreter's tensor memory: what `op-litert`
//! builds LiteRT's delegate on.

pub mod builtins;
pub mod model;
mod schema;

pub use model::Model;
pub mod arena;
pub mod attrs;
#[cfg(feature = "framework-ops")]
pub mod bridge;
pub mod external;
pub mod interpreter;
pub mod kernel;
pub mod registration;
pub mod resolver;

#[cfg(feature = "framework-ops")]
pub use bridge::FrameworkOps;
pub use builtins::BuiltinOpResolver;
pub use interpreter::Interpreter;
pub use kernel::{FnOp, InitContext, InvokeContext, LiteNode, LiteOp, PrepareContext};
pub use op_macros::lite_kernel;
pub use registration::{LiteRegistration, linked_kernels};
pub use resolver::{MutableOpResolver, OpResolver};

/// What the exported macros name; not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use crate::kernel::{FnOp, InitContext, InvokeContext, LiteNode, PrepareContext};
    pub use crate::model::BuiltinOperator;
    pub use crate::registration::{InitOp, LiteOpName, LiteRegistration};
    pub use crate::resolver::Versions;
    pub use op_core::inventory;
    pub use op_core::{DType, Result};
}
