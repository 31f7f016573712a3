//! The CPU kernels of the list ops: each passes its list through
//! ([`pass_list_through`]) or adds its tensors ([`add_list`]).

use std::ops::Add;

use op_core::{Code, Element, KernelContext, Result, Tensor, kernel, op_requires};

use super::ops::{
    IntListInputExample, ListTypeRestrictionExample, MinLengthIntListExample,
    MinimumLengthPolymorphicListExample, PolymorphicListExample, SameListInputExample,
};

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

#[kernel(op = PolymorphicListExample)]
fn polymorphic_list_example(ctx: &mut KernelContext<'_>) -> Result<()> {
    pass_list_through(ctx)
}

#[kernel(op = ListTypeRestrictionExample)]
fn list_type_restriction_example(ctx: &mut KernelContext<'_>) -> Result<()> {
    pass_list_through(ctx)
}

#[kernel(op = IntListInputExample)]
fn int_list_input_example(ctx: &mut KernelContext<'_>) -> Result<()> {
    add_list::<i32>(ctx)
}

#[kernel(op = SameListInputExample, types(realnumbertype))]
fn same_list_input_example<T: ListAdd>(ctx: &mut KernelContext<'_>) -> Result<()> {
    add_list::<T>(ctx)
}

#[kernel(op = MinLengthIntListExample)]
fn min_length_int_list_example(ctx: &mut KernelContext<'_>) -> Result<()> {
    add_list::<i32>(ctx)
}

#[kernel(op = MinimumLengthPolymorphicListExample)]
fn minimum_length_polymorphic_list_example(ctx: &mut KernelContext<'_>) -> Result<()> {
    pass_list_through(ctx)
}
