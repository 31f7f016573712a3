//! The CPU kernels of `Sum`, `Mean`, `Max` and `Prod`: one generic
//! function, [`reduce`], over the element type and the reducer, for
//! `float`, `double`, `int32`, `int64`, `half` and `bfloat16` (the 16-bit
//! floats accumulate in `f32`). Each kernel takes both `Tidx` types: the
//! axes are read as `i64` whatever their type.

use op_core::{Code, KernelContext, Result, kernel};

use super::axes::ReductionPlan;
use super::math::{
    MaxReducer, MeanReducer, ProdReducer, Reducer, Reducible, SumReducer, reduce_into,
};
use super::ops::{Max, Mean, Prod, Sum, axis_values};

/// Reduces input 0 over the axes in input 1 with `R` into output 0.
///
/// The axes must be a scalar or a vector (TensorFlow's shape function
/// rejects other ranks; its eager kernel would flatten them) of axes in
/// `-rank..rank`, none twice. Reducing nothing (no axes, or only axes of
/// size 1) outputs the input's buffer itself, reshaped.
fn reduce<T: Reducible, R: Reducer>(ctx: &mut KernelContext<'_>, keep_dims: bool) -> Result<()> {
    let axes = ctx.input(1)?;
    if axes.rank() > 1 {
        return Err(ctx.error(
            Code::InvalidArgument,
            format_args!(
                "input 1 ('reduction_indices') must be a scalar or a vector, but has shape {}",
                axes.shape()
            ),
        ));
    }
    let axes = axis_values(axes).map_err(|e| ctx.error(e.code(), e.message()))?;
    // Cheap (a reference count): keeps the input while the output is
    // allocated.
    let input = ctx.input(0)?.clone();
    let plan = ReductionPlan::new(input.dims(), &axes, keep_dims).map_err(|e| {
        ctx.error(
            e.code(),
            format_args!(
                "input 1 ('reduction_indices'): {}, and input 0 ('input') has shape {}",
                e.message(),
                input.shape()
            ),
        )
    })?;
    if plan.is_identity() {
        let output = input.reshape(&plan.output_dims)?;
        return ctx.set_output(0, output);
    }
    let threads = ctx.threads();
    let output = ctx.allocate_output(0, &plan.output_dims)?;
    reduce_into::<T, R>(
        threads,
        input.as_slice::<T>()?,
        &plan,
        output.as_slice_mut::<T>()?,
    );
    Ok(())
}

/// One kernel per op, each over every element type.
macro_rules! reduction_kernels {
    ($($op:ident => $reducer:ident, $name:ident;)*) => {$(
        #[kernel(op = $op, types(T = [f32, f64, i32, i64, f16, bf16]))]
        fn $name<T: Reducible>(ctx: &mut KernelContext<'_>, attrs: &$op) -> Result<()> {
            reduce::<T, $reducer>(ctx, attrs.keep_dims)
        }
    )*};
}

reduction_kernels! {
    Sum => SumReducer, sum;
    Mean => MeanReducer, mean;
    Max => MaxReducer, max;
    Prod => ProdReducer, prod;
}
