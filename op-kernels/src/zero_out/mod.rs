//! ZeroOut, the guide's first op, in each of its forms: keep one element of
//! the input, zero the others.
//!
//! TensorFlow registers each form under the one name `ZeroOut`, replacing
//! the previous; here they live side by side, so each has its own name.

use op_core::shape_inference::InferenceContext;
use op_core::{
    Element, KernelConstruction, KernelContext, Result, kernel, op_requires, register_op,
};

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

/// Output 0 is input 0 with every element but the one at `keep` set to
/// zero: in the input's own buffer when the caller handed it over,
/// otherwise in a copy.
fn zero_out_generic<T: Element + Default>(ctx: &mut KernelContext<'_>, keep: usize) -> Result<()> {
    let values = ctx.forward_input_to_output(0, 0)?.as_slice_mut::<T>()?;
    if values.is_empty() {
        return Ok(());
    }
    let kept = std::mem::take(&mut values[keep]);
    values.fill_with(T::default);
    values[keep] = kept;
    Ok(())
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

#[kernel(op = ZeroOut)]
fn zero_out_int32(ctx: &mut KernelContext<'_>) -> Result<()> {
    zero_out_generic::<i32>(ctx, 0)
}

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

#[kernel(op = ZeroOutPolymorphic, types(f32, f64, i32))]
fn zero_out_polymorphic<T: Element + Default>(ctx: &mut KernelContext<'_>) -> Result<()> {
    zero_out_generic::<T>(ctx, 0)
}

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

/// The guide's kernel with state: `preserve_index` is read and checked
/// once, when the kernel is created; each call checks it against the input.
pub struct ZeroOutPreserveIndexKernel {
    preserve_index: usize,
}

#[kernel(op = ZeroOutPreserveIndex)]
impl ZeroOutPreserveIndexKernel {
    fn new(ctx: &KernelConstruction<'_>) -> Result<Self> {
        let ZeroOutPreserveIndex { preserve_index } = ctx.attrs()?;
        op_requires!(
            preserve_index >= 0,
            op_core::Code::InvalidArgument,
            "Need preserve_index >= 0, got {preserve_index}"
        );
        Ok(ZeroOutPreserveIndexKernel {
            preserve_index: preserve_index as usize,
        })
    }

    fn compute(&self, ctx: &mut KernelContext<'_>) -> Result<()> {
        let input = ctx.input(0)?;
        op_requires!(
            input.rank() == 1,
            op_core::Code::InvalidArgument,
            "ZeroOut expects a 1-D vector, got shape {}",
            input.shape()
        );
        op_requires!(
            self.preserve_index < input.dims()[0],
            op_core::Code::InvalidArgument,
            "preserve_index out of range: {} for a vector of {} elements",
            self.preserve_index,
            input.dims()[0]
        );
        zero_out_generic::<i32>(ctx, self.preserve_index)
    }
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

#[kernel(op = ZeroOutVector)]
fn zero_out_vector(ctx: &mut KernelContext<'_>) -> Result<()> {
    let input = ctx.input(0)?;
    op_requires!(
        input.rank() == 1,
        op_core::Code::InvalidArgument,
        "ZeroOut expects a 1-D vector."
    );
    zero_out_generic::<i32>(ctx, 0)
}
