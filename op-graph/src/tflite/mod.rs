//! Graphs written as TensorFlow Lite models (`.tflite`): the part of
//! TensorFlow's converter that a program of this framework needs.
//!
//! [`export`] takes the outputs you name and writes only the nodes they
//! need, as TensorFlow's converter does for a frozen graph:
//!
//! - `Placeholder`s become the model's inputs, named as the nodes; the
//!   requested outputs become its outputs, named as the tensors (`node`,
//!   `node:k`). Both are also listed in a `serving_default` signature, as
//!   the converter writes it. A dimension the graph does not know is 1 in
//!   the tensor's shape and -1 in its `shape_signature` (resize the input
//!   before running).
//! - Variables are frozen: each `ReadVariableOp` becomes a constant holding
//!   the variable's current value, read from the [`Session`]'s runtime.
//!   `Const` nodes become constant tensors; `Identity` and `StopGradient`
//!   disappear, and a `PlaceholderWithDefault` is its default (a model has
//!   no optional inputs).
//! - An op with a TensorFlow Lite builtin becomes that builtin, on the
//!   dtypes the builtin takes, with the builtin options and the op version
//!   (which depends on the dtype) that the converter (TensorFlow 2.21)
//!   writes; the table is in `builtins.rs`, listed by [`builtin_ops`]. `MatMul` becomes
//!   `FULLY_CONNECTED` where the converter makes it one (a 2-D product whose
//!   right side is transposed, or constant and transposed here), and
//!   `BATCH_MATMUL` otherwise. A constant vector added to a
//!   `FULLY_CONNECTED` becomes its bias, and a `Relu` the fused activation
//!   of the op before it ([`ExportOptions::fuse`]).
//! - Every other op (and a builtin's op on a dtype the builtin does not
//!   take) becomes a custom op of its own name, its attrs in the
//!   operator's custom options (a flexbuffer map, op-lite's attrs codec),
//!   as are the ops named in [`ExportOptions::keep_custom`] (the seed keeps
//!   `Sin` custom although TensorFlow Lite has `SIN`).
//!
//! Anything a `.tflite` file cannot say is an error naming the node: a
//! tensor of unknown rank or of a dtype TensorFlow Lite has no type for
//! (`resource`), a variable exported from a bare [`Graph`] (only a session
//! holds its value) or one that was never assigned, an output the graph
//! does not have, an option a builtin needs as a constant (a `ConcatV2`
//! axis) computed at run time, an op in [`ExportOptions::keep_custom`] that
//! the registry does not have.
//!
//! # Why op-graph depends on op-lite
//!
//! Exporting needs both sides: the graph (nodes, shapes, a session to read
//! variables) and the model types and writer of the lite runtime
//! ([`op_lite::Model`], its op codes and options, its attrs codec). The lite
//! runtime is the deployment side and must not pull in graphs (it depends
//! on `op-core` alone), so the dependency goes this way: programs know how
//! to deploy themselves, a deployed model knows nothing of programs.
//!
//! ```standalone_crate
//! use op_core::{DType, ShapeValue, Tensor};
//! use op_graph::{GraphBuilder, Session, tflite};
//! use op_kernels::math::{AddV2, Sin};
//! use op_kernels::variable::{AssignVariableOp, ReadVariableOp, VarHandleOp};
//! use op_lite::model::BuiltinOperator;
//! # op_kernels::link();
//!
//! // y = sin(x + offset), offset a variable at 1.
//! let b = GraphBuilder::new();
//! let x = b.placeholder("x", DType::F32, "[5]")?;
//! let handle = VarHandleOp::call_with(DType::F32, ShapeValue::from_sizes(&[]))
//!     .shared_name("offset")
//!     .run_on(&b)?;
//! let one = b.constant(Tensor::scalar(1.0f32))?;
//! AssignVariableOp::call_with(handle, one).node_name("init").run_on(&b)?;
//! let offset = ReadVariableOp::call_with(handle, DType::F32).run_on(&b)?;
//! let shifted = AddV2::call_with(x, offset).run_on(&b)?;
//! let y = Sin::call_with(shifted).node_name("y").run_on(&b)?;
//! let session = Session::new(b.into_graph())?;
//! session.runner().target("init").run()?;
//!
//! let model = tflite::export(&session, [y], &tflite::ExportOptions::default())?;
//! let ops: Vec<_> = model.operator_codes.iter().map(|c| c.builtin).collect();
//! assert_eq!(ops, [BuiltinOperator::ADD, BuiltinOperator::SIN]);
//!
//! // The seed's way: Sin kept custom.
//! let options = tflite::ExportOptions { keep_custom: vec!["Sin".into()], ..Default::default() };
//! let model = tflite::export(&session, [y], &options)?;
//! assert_eq!(model.operator_codes[1].custom_name.as_deref(), Some("Sin"));
//! let bytes = model.to_bytes()?; // a .tflite file
//! # let _ = bytes;
//! # Ok::<(), op_core::Error>(())
//! ```

mod builtins;
mod freeze;
mod fuse;
mod lower;

use std::path::Path;
use std::sync::Arc;

use op_core::{Code, Error, Result};
use op_lite::Model;

use crate::graph::Graph;
use crate::session::{OutputRef, Session};

pub use builtins::builtin_ops;

/// How [`export`] writes a model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportOptions {
    /// Ops (by framework op name, `"Sin"`) to export as custom ops even
    /// where TensorFlow Lite has a builtin for them.
    pub keep_custom: Vec<String>,
    /// The model's description (TensorFlow's converter writes
    /// `"MLIR Converted."`).
    pub description: String,
    /// Fuse as the converter does (default true): an `AddV2` of a constant
    /// vector to a `FULLY_CONNECTED` becomes its bias, and a `Relu` after
    /// `ADD`, `SUB`, `MUL`, `DIV`, `FULLY_CONNECTED` or `CONCATENATION` its
    /// fused activation, where nothing else reads the value in between.
    pub fuse: bool,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            keep_custom: Vec::new(),
            description: "opkit op-graph export".into(),
            fuse: true,
        }
    }
}

impl ExportOptions {
    /// The default options with `op` also kept custom.
    pub fn keep_custom(mut self, op: impl Into<String>) -> Self {
        self.keep_custom.push(op.into());
        self
    }
}

/// What [`export`] reads: a graph alone (no variables), or a session (its
/// graph, and the current values of its variables in its runtime).
#[derive(Clone, Copy)]
pub enum Source<'a> {
    /// A graph: every node it needs must be computable without state.
    Graph(&'a Graph),
    /// A session: its variables are frozen at their current values.
    Session(&'a Session),
}

impl<'a> From<&'a Graph> for Source<'a> {
    fn from(graph: &'a Graph) -> Self {
        Source::Graph(graph)
    }
}

impl<'a> From<&'a Arc<Graph>> for Source<'a> {
    fn from(graph: &'a Arc<Graph>) -> Self {
        Source::Graph(graph)
    }
}

impl<'a> From<&'a Session> for Source<'a> {
    fn from(session: &'a Session) -> Self {
        Source::Session(session)
    }
}

impl Source<'_> {
    fn graph(&self) -> &Graph {
        match self {
            Source::Graph(graph) => graph,
            Source::Session(session) => session.graph(),
        }
    }
}

/// The TensorFlow Lite model that computes `outputs` (tensor names `node`
/// or `node:k`, or [`Output`](crate::Output)s) of `source`'s graph from
/// its placeholders; see the [module docs](self) for what becomes what.
///
/// The model passed [`Model::validate`]; [`Model::to_bytes`] writes it.
/// Errors name the node (and the output) that cannot be exported.
pub fn export<'a, O: Into<OutputRef>>(
    source: impl Into<Source<'a>>,
    outputs: impl IntoIterator<Item = O>,
    options: &ExportOptions,
) -> Result<Model> {
    let outputs: Vec<OutputRef> = outputs.into_iter().map(Into::into).collect();
    lower::export(source.into(), &outputs, options)
        .map_err(|e| e.with_context("exporting a graph to TensorFlow Lite"))
}

/// [`export`], written as the bytes of a `.tflite` file.
pub fn to_bytes<'a, O: Into<OutputRef>>(
    source: impl Into<Source<'a>>,
    outputs: impl IntoIterator<Item = O>,
    options: &ExportOptions,
) -> Result<Vec<u8>> {
    export(source, outputs, options)?.to_bytes()
}

/// [`export`], written to the `.tflite` file at `path`.
pub fn write<'a, O: Into<OutputRef>>(
    source: impl Into<Source<'a>>,
    outputs: impl IntoIterator<Item = O>,
    options: &ExportOptions,
    path: impl AsRef<Path>,
) -> Result<()> {
    let path = path.as_ref();
    let bytes = to_bytes(source, outputs, options)?;
    std::fs::write(path, bytes).map_err(|e| {
        Error::new(
            Code::from_io_error(&e),
            format!("cannot write {}: {e}", path.display()),
        )
    })
}
