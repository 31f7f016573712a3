//! TensorFlow's `GraphDef`, read and written.
//!
//! - [`proto`]: the messages, as prost structs (binary `.pb`).
//! - [`convert`]: dtypes, shapes, tensors and attr values between the
//!   messages and the op-spec model.
//! - [`text`]: the text format (`.pbtxt`), read and written.

pub mod convert;
pub mod proto;
pub mod text;

use op_core::{Error, Result};
use prost::Message;

/// Decodes a binary GraphDef. A malformed message (truncated, a field of
/// the wrong wire type) is an `InvalidArgument` error naming the field.
pub fn decode(bytes: &[u8]) -> Result<proto::GraphDef> {
    proto::GraphDef::decode(bytes)
        .map_err(|e| Error::invalid_argument(format!("the GraphDef is malformed: {e}")))
}
