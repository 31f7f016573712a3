//! The runtime of the op framework.
pub use op_spec::{DType, TypeClass};
