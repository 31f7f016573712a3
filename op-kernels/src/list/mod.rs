//! The guide's list ops: inputs and outputs that are lists of tensors.
//!
//! The guide declares them without saying what they compute; ours pass a
//! list through unchanged (`list(type)` in and out) or add same-shaped
//! tensors elementwise (`N * T` in, one `T` out).

use std::ops::Add;

use op_core::{Code, Element, KernelContext, Result, Tensor, kernel, op_requires, register_op};

/// Copies input list `in` to output list `out` (the buffers are shared).
fn pass_list_through(ctx: &mut KernelContext<'_>) -> Result<()> {
    let inputs: Vec<Tensor> = ctx.input_list("in")?.to_vec();
    let outputs = ctx.output_range("out")?;
    for (index, tensor) in outputs.zip(inputs) {
        ctx.set_output(index, tensor)?;
    }
    Ok(())
}

/// Element types that the list sums add. Integers wrap on overflow, as
/// TensorFlow's do (a plain `+` would panic in debug builds).
trait ListAdd: Element + Copy {
    /// `self + other`.
    fn list_add(self, other: Self) -> Self;
}

macro_rules! list_add {
    ($method:ident: $($t:ty),*) => {$(
        impl ListAdd for $t {
            #[inline]
            fn list_add(self, other: Self) -> Self { self.$method(other) }
        }
    )*};
}

list_add!(wrapping_add: i8, i16, i32, i64, u8, u16, u32, u64);
list_add!(add: f32, f64, op_core::f16, op_core::bf16);

/// Adds the tensors of list input `in`, which must have one shape, into
/// output 0.
fn add_list<T: ListAdd>(ctx: &mut KernelContext<'_>) -> Result<()> {
    let inputs = ctx.input_list("in")?;
    let first = &inputs[0];
    for (i, tensor) in inputs.iter().enumerate().skip(1) {
        op_requires!(
            tensor.dims() == first.dims(),
            Code::InvalidArgument,
            "all inputs must have one shape: in[0] has shape {} but in[{i}] has shape {}",
            first.shape(),
            tensor.shape()
        );
    }
    let inputs: Vec<&[T]> = inputs
        .iter()
        .map(|t| t.as_slice::<T>())
        .collect::<Result<_>>()?;
    let mut output = ctx.allocate_temp(T::DTYPE, first.dims())?;
    // One add per input per element.
    ctx.threads()
        .shard_slice(output.as_slice_mut::<T>()?, inputs.len(), |offset, sum| {
            sum.copy_from_slice(&inputs[0][offset..offset + sum.len()]);
            for input in &inputs[1..] {
                for (s, x) in sum.iter_mut().zip(&input[offset..]) {
                    *s = s.list_add(*x);
                }
            }
        });
    ctx.set_output(0, output)
}

/// Returns its list of tensors, of any types, unchanged.
#[register_op(
    attrs("T: list(type)"),
    inputs("in: T"),
    outputs("out: T"),
    shape = "pass_through"
)]
pub struct PolymorphicListExample;

#[kernel(op = PolymorphicListExample)]
fn polymorphic_list_example(ctx: &mut KernelContext<'_>) -> Result<()> {
    pass_list_through(ctx)
}

/// Returns its list of float and double tensors unchanged.
#[register_op(
    attrs("T: list({float, double})"),
    inputs("in: T"),
    outputs("out: T"),
    shape = "pass_through"
)]
pub struct ListTypeRestrictionExample;

#[kernel(op = ListTypeRestrictionExample)]
fn list_type_restriction_example(ctx: &mut KernelContext<'_>) -> Result<()> {
    pass_list_through(ctx)
}

/// Adds `N` int32 tensors of one shape.
#[register_op(
    attrs("N: int"),
    inputs("in: N * int32"),
    outputs("out: int32"),
    shape = "merge_inputs"
)]
pub struct IntListInputExample;

#[kernel(op = IntListInputExample)]
fn int_list_input_example(ctx: &mut KernelContext<'_>) -> Result<()> {
    add_list::<i32>(ctx)
}

/// Adds `N` tensors of one type and one shape.
#[register_op(
    attrs("N: int", "T: type"),
    inputs("in: N * T"),
    outputs("out: T"),
    shape = "merge_inputs"
)]
pub struct SameListInputExample;

#[kernel(op = SameListInputExample, types(realnumbertype))]
fn same_list_input_example<T: ListAdd>(ctx: &mut KernelContext<'_>) -> Result<()> {
    add_list::<T>(ctx)
}

/// Adds at least two int32 tensors of one shape.
#[register_op(
    attrs("N: int >= 2"),
    inputs("in: N * int32"),
    outputs("out: int32"),
    shape = "merge_inputs"
)]
pub struct MinLengthIntListExample;

#[kernel(op = MinLengthIntListExample)]
fn min_length_int_list_example(ctx: &mut KernelContext<'_>) -> Result<()> {
    add_list::<i32>(ctx)
}

/// Returns its list of at least three tensors unchanged.
#[register_op(
    attrs("T: list(type) >= 3"),
    inputs("in: T"),
    outputs("out: T"),
    shape = "pass_through"
)]
pub struct MinimumLengthPolymorphicListExample;

#[kernel(op = MinimumLengthPolymorphicListExample)]
fn minimum_length_polymorphic_list_example(ctx: &mut KernelContext<'_>) -> Result<()> {
    pass_list_through(ctx)
}
