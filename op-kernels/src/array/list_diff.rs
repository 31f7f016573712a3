//! ListDiff: the values of one vector that are not in another, and where
//! they are (TensorFlow's `setdiff1d`). Prod's gradient finds the axes it
//! does not reduce with it. The kernel is [`list_diff`] over a hash set of
//! the excluded values' [`SetElement`] keys.

use op_core::shape_inference::InferenceContext;
use op_core::{Code, KernelContext, Result, Tensor, kernel};

use super::index::{IndexElement, index_output};
use super::math::{SetElement, list_diff};
use super::ops::ListDiff;

/// ListDiff's shape function (TensorFlow's): both inputs are vectors, and
/// both outputs vectors of unknown length.
pub fn list_diff_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    for i in 0..2 {
        let input = c.input(i)?;
        c.with_rank(input, 1)?;
    }
    let unknown = c.unknown_dim();
    let output = c.vector(unknown);
    c.set_output(0, output)?;
    c.set_output(1, output)
}

#[kernel(
    op = ListDiff,
    types(
        T = [f32, f64, half, bfloat16, i8, i16, i32, i64, u8, u16, u32, u64, string],
        out_idx = [i32, i64]
    )
)]
fn list_diff_kernel<T: SetElement, I: IndexElement>(ctx: &mut KernelContext<'_>) -> Result<()> {
    for (i, name) in [(0, "x"), (1, "y")] {
        let input = ctx.input(i)?;
        if input.rank() != 1 {
            return Err(ctx.error(
                Code::InvalidArgument,
                format_args!(
                    "{name} should be a 1D vector, but has shape {}",
                    input.shape()
                ),
            ));
        }
    }
    let (out, idx) = list_diff(ctx.input_slice::<T>(0)?, ctx.input_slice::<T>(1)?);
    let idx = index_output::<I>(ctx, "index", &idx)?;
    ctx.set_output(0, Tensor::from_vec([out.len()], out)?)?;
    ctx.set_output(1, idx)
}
