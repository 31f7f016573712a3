//! TensorFlow's `GraphDef`, read and written: binary (`.pb`) and text
//! (`.pbtxt`).
//!
//! Reading is two steps, as in tract: bytes or text become
//! [`proto::GraphDef`] messages, then [`import`] makes a checked [`Graph`]
//! of them. Writing is [`export`] then encoding.
//!
//! - [`proto`]: the messages, as prost structs.
//! - [`convert`]: dtypes, shapes, tensors and attr values between the
//!   messages and the op-spec model.
//! - [`text`]: the text format, read and written.
//! - [`import`] and [`export`]: messages to graph and back.
//!
//! ```standalone_crate
//! use op_core::{DType, ShapeValue};
//! use op_graph::{Graph, NewNode, graphdef};
//! # op_kernels::link();
//!
//! let mut graph = Graph::new();
//! let x = graph.add(
//!     NewNode::new("Placeholder")
//!         .name("x")
//!         .attr("dtype", DType::F32)
//!         .attr("shape", ShapeValue::from_sizes(&[-1, 3])),
//! )?;
//! graph.add(NewNode::new("Example").name("y").input(x.output(0)))?;
//!
//! let bytes = graphdef::to_bytes(&graph);
//! let back = graphdef::from_bytes(&bytes)?;
//! assert_eq!(back.to_string(), graph.to_string());
//! assert!(graphdef::to_text(&back).contains("op: \"Example\""));
//! # Ok::<(), op_core::Error>(())
//! ```

pub mod convert;
mod export;
mod import;
pub mod proto;
pub mod text;

use std::path::Path;
use std::sync::Arc;

use op_core::{Error, Registry, Result};
use prost::Message;

use crate::graph::Graph;

pub use export::{PRODUCER, export};
pub use import::import;
use import::{import_bytes, import_owned};

/// Decodes a binary GraphDef. A malformed message (truncated, a field of
/// the wrong wire type) is an `InvalidArgument` error naming the field.
pub fn decode(bytes: &[u8]) -> Result<proto::GraphDef> {
    proto::GraphDef::decode(bytes)
        .map_err(|e| Error::invalid_argument(format!("the GraphDef is malformed: {e}")))
}

/// The graph of a binary GraphDef, over the global registry. Each node's
/// message is decoded on its own and freed once its node is added, so
/// that reading never holds the messages of the whole graph and the graph
/// at once.
pub fn from_bytes(bytes: &[u8]) -> Result<Graph> {
    import_bytes(bytes, Registry::global())
}

/// The graph of a GraphDef in text format, over the global registry.
pub fn from_text(text: &str) -> Result<Graph> {
    import_owned(text::parse(text)?, Registry::global())
}

/// `graph` as a binary GraphDef.
pub fn to_bytes(graph: &Graph) -> Vec<u8> {
    export(graph).encode_to_vec()
}

/// `graph` as a GraphDef in text format.
pub fn to_text(graph: &Graph) -> String {
    text::write(&export(graph))
}

/// Whether `path` names a text GraphDef (`.pbtxt`, `.txt`); other paths
/// are binary.
fn is_text(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("pbtxt" | "txt")
    )
}

/// Reads the GraphDef at `path` (text for `.pbtxt` and `.txt`, binary
/// otherwise) as a graph over `registry`. Errors name the file.
pub fn read(path: impl AsRef<Path>, registry: &Arc<Registry>) -> Result<Graph> {
    let path = path.as_ref();
    let in_file = |e: Error| e.with_context(format!("reading {}", path.display()));
    let bytes = op_core::file::read_regular_file(path)?;
    if !is_text(path) {
        return import_bytes(&bytes, registry).map_err(in_file);
    }
    let text = std::str::from_utf8(&bytes)
        .map_err(|e| Error::invalid_argument(format!("the text is not UTF-8: {e}")))
        .map_err(in_file)?;
    let def = text::parse(text).map_err(in_file)?;
    import_owned(def, registry).map_err(in_file)
}

/// Writes `graph` to `path` (text for `.pbtxt` and `.txt`, binary
/// otherwise).
pub fn write(graph: &Graph, path: impl AsRef<Path>) -> Result<()> {
    let path = path.as_ref();
    let bytes = if is_text(path) {
        to_text(graph).into_bytes()
    } else {
        to_bytes(graph)
    };
    std::fs::write(path, bytes).map_err(|e| {
        Error::new(
            op_core::Code::from_io_error(&e),
            format!("cannot write {}: {e}", path.display()),
        )
    })
}
