//! The declaration of `MultipleInsAndOuts`, which is also its CPU kernel.

use op_core::Result;
use op_core::ndarray::{ArrayD, ArrayViewD};
use op_core::op;
use op_core::shape_inference::InferenceContext;

/// The shape function: `a` has `z`'s shape (input 1) and `b` has `y`'s
/// (input 0), whatever they are; the two inputs need not agree.
///
/// `[2];[3,4]` gives `in1;in0`.
pub fn multiple_ins_and_outs_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let (y, z) = (c.input(0)?, c.input(1)?);
    c.set_output(0, z)?;
    c.set_output(1, y)
}

/// Formats `z` as text and passes `y` through.
///
/// The guide declares this op to show several inputs and outputs; this is
/// what ours computes.
///
/// y: any int32 tensor.
/// z: any float tensor.
/// a: each element of `z` as decimal text, in `z`'s shape.
/// b: `y`, unchanged.
#[op(outputs("a", "b"), shape_fn = multiple_ins_and_outs_shape)]
pub fn multiple_ins_and_outs(
    y: ArrayViewD<'_, i32>,
    z: ArrayViewD<'_, f32>,
) -> (ArrayD<Vec<u8>>, ArrayD<i32>) {
    (z.mapv(|v| v.to_string().into_bytes()), y.to_owned())
}
