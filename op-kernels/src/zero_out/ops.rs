//! The declarations of the ZeroOut ops and their shape function.

use op_core::shape_inference::InferenceContext;
use op_core::{Result, register_op};

/// The shape function of the vector-only forms: `to_zero` must be rank 1
/// (an unknown rank is taken to be 1), and `zeroed` has its shape.
///
/// `[5]` gives `[5]` (the input's own dimension); `?` gives `[?]`; `[2,3]`
/// is an error naming input 0 (`to_zero`) and its shape.
pub fn vector_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let input = c.input(0)?;
    let vector = c.with_rank(input, 1)?;
    c.set_output(0, vector)
}

/// Zeroes every element but the first.
///
/// The guide's first op: int32 only.
///
/// to_zero: the tensor to zero out.
/// zeroed: a tensor of `to_zero`'s shape whose first element is
///   `to_zero`'s and whose other elements are 0.
#[register_op(
    inputs("to_zero: int32"),
    outputs("zeroed: int32"),
    shape = "unchanged"
)]
pub struct ZeroOut;

/// Zeroes every element but the first, for float, double or int32.
///
/// The guide's polymorphic ZeroOut; `T` defaults to int32 so that graphs of
/// the int32-only op keep their meaning.
///
/// to_zero: the tensor to zero out.
/// zeroed: `to_zero` with every element but the first set to 0.
#[register_op(
    attrs("T: {float, double, int32} = DT_INT32"),
    inputs("to_zero: T"),
    outputs("zeroed: T"),
    shape = "unchanged"
)]
pub struct ZeroOutPolymorphic;

/// Zeroes every element of a vector but the one at `preserve_index`.
///
/// to_zero: a vector.
/// zeroed: `to_zero` with every element but one set to 0.
#[register_op(
    inputs("to_zero: int32"),
    outputs("zeroed: int32"),
    shape_fn = vector_shape
)]
pub struct ZeroOutPreserveIndex {
    /// The index of the element to keep.
    pub preserve_index: i64,
}

/// Zeroes every element of a vector but the first.
///
/// The guide's ZeroOut with validation: the input must be a vector.
///
/// to_zero: a vector.
/// zeroed: `to_zero` with every element but the first set to 0.
#[register_op(
    inputs("to_zero: int32"),
    outputs("zeroed: int32"),
    shape_fn = vector_shape
)]
pub struct ZeroOutVector;
