//! Fill, ZerosLike and OnesLike: tensors of one repeated value. Fill writes
//! its output block by block over the runtime's threads; ZerosLike and
//! OnesLike go through [`KernelContext::unary`], which also writes in the
//! input's buffer when the caller handed it over.

use op_core::shape_inference::InferenceContext;
use op_core::{Element, KernelContext, Result, kernel};

use super::cpu::write_output;
use super::index::{constant_values, in_kernel, input_vector, shape_from_shape_tensor};
use super::math::{OnesLikeElement, display_values, shape_from_values};
use super::ops::{Fill, OnesLike, ZerosLike};

/// Fill's shape function (TensorFlow's): `dims` must be a vector and
/// `value` a scalar; the output is the shape `dims` holds when known
/// (negative sizes are an error), else as many unknown dimensions as `dims`
/// has elements, else unknown.
pub fn fill_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let dims = c.input(0)?;
    c.with_rank(dims, 1)?;
    let value = c.input(1)?;
    c.with_rank(value, 0)?;
    if let Some(values) = constant_values(c, 0)?
        && values.iter().any(|&v| v < 0)
    {
        return Err(c.error(format!(
            "Fill dimensions must be >= 0, but dims = {}",
            display_values(&values)
        )));
    }
    let output = shape_from_shape_tensor(c, 0)?;
    c.set_output(0, output)
}

#[kernel(op = Fill, types(numbertype, bool, string))]
fn fill<T: Element>(ctx: &mut KernelContext<'_>) -> Result<()> {
    let sizes = input_vector(ctx, 0, "dims")?;
    let value: T = ctx.input_scalar(1)?;
    let shape = shape_from_values("dims", &sizes).map_err(|e| in_kernel(ctx, e))?;
    write_output::<T>(ctx, shape.dims(), |_, block| block.fill(value.clone()))
}

#[kernel(op = ZerosLike, types(numbertype, bool, string))]
fn zeros_like<T: Element>(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.unary(0, 0, 1, |_: &T| T::default())
}

#[kernel(
    op = OnesLike,
    types(bf16, f16, f32, f64, i8, u8, i16, u16, i32, u32, i64, u64, complex64, complex128, bool)
)]
fn ones_like<T: OnesLikeElement>(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.unary(0, 0, 1, |_: &T| T::one())
}
