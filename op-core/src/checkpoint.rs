//! Checkpoints: named resources and variables saved to one safetensors file
//! and restored from it.
//!
//! (Being written: the `Saveable` trait below is the contract; `Checkpoint`
//! follows.)

use crate::{Result, Tensor};

/// State that can be saved to a checkpoint and restored from one: the
/// seed's `_serialize_to_tensors` / `_restore_from_tensors`.
///
/// A saveable object names its tensors with short keys (a hash table:
/// `keys` and `values`; a variable: `value`); the checkpoint stores each
/// as `<object name>/<key>`.
pub trait Saveable {
    /// The object's state as named tensors.
    fn serialize_to_tensors(&self) -> Result<Vec<(String, Tensor)>>;

    /// Replaces the object's state with `tensors`, the ones
    /// [`serialize_to_tensors`](Self::serialize_to_tensors) produced, by
    /// key. A missing key or a tensor of the wrong dtype or shape is an
    /// error, and the object is left unchanged.
    fn restore_from_tensors(&self, tensors: Vec<(String, Tensor)>) -> Result<()>;
}
