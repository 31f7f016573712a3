//! TensorFlow's `GraphDef`, read and written.
//!
//! - [`proto`]: the messages, as prost structs (binary `.pb`).
//! - [`convert`]: dtypes, shapes, tensors and attr values between the
//!   messages and the op-spec model.
//! - [`text`]: the text format (`.pbtxt`), read and written.

pub mod convert;
pub mod proto;
pub mod text;
