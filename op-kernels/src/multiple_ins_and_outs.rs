//! `MultipleInsAndOuts`, declared with `#[op]`: the function's signature is
//! the op's spec.

use op_core::ndarray::{ArrayD, ArrayViewD};
use op_core::op;

/// Formats `z` as text and passes `y` through.
///
/// The guide declares this op to show several inputs and outputs; this is
/// what ours computes.
///
/// y: any int32 tensor.
/// z: any float tensor.
/// a: each element of `z` as decimal text, in `z`'s shape.
/// b: `y`, unchanged.
#[op(outputs("a", "b"))]
pub fn multiple_ins_and_outs(
    y: ArrayViewD<'_, i32>,
    z: ArrayViewD<'_, f32>,
) -> (ArrayD<Vec<u8>>, ArrayD<i32>) {
    (z.mapv(|v| v.to_string().into_bytes()), y.to_owned())
}
