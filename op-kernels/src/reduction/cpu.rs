//! The CPU kernels of `Sum`, `Mean`, `Max` and `Prod`: one generic
//! function, [`reduce`], over the element type and the reducer, for
//! `float`, `double`, `int32`, `int64`, `half` and `bfloat16` (the 16-bit
//! floats accumulate in `f32`). Each kernel takes both `Tidx` types: the
//! axes are read as `i64` whatever their type. And the scans', `Cumsum`
//! and `Cumprod`, for the same types, one generic function, [`scan`].

use op_core::{Code, KernelContext, Result, kernel};

use super::axes::plan_reduction;
use super::math::{
    MaxReducer, MeanReducer, ProdReducer, Reducer, Reducible, Scan, SumReducer, reduce_into,
    scan_into, scan_row, scan_step,
};
use super::ops::{Cumprod, Cumsum, Max, Mean, Prod, Sum, axis_values};

/// Reduces input 0 over the axes in input 1 with `R` into output 0.
///
/// The axes must be a scalar or a vector (TensorFlow's shape function
/// rejects other ranks; its eager kernel would flatten them) of axes in
/// `-rank..rank`, none twice. Reducing nothing (no axes, or only axes of
/// size 1) outputs the input's buffer itself, reshaped.
fn reduce<T: Reducible, R: Reducer>(ctx: &mut KernelContext<'_>, keep_dims: bool) -> Result<()> {
    let Some((input, plan)) = plan_reduction(ctx, keep_dims)? else {
        return Ok(());
    };
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

/// What one element of a cumulative sum or product costs, in CPU cycles,
/// for splitting work over threads.
const SCAN_COST: usize = 2;

/// Input 0's cumulative sum or product (`R`) along the axis in input 1,
/// into output 0.
fn scan<T: Reducible, R: Reducer>(
    ctx: &mut KernelContext<'_>,
    exclusive: bool,
    reverse: bool,
) -> Result<()> {
    let axis = ctx.input(1)?;
    if axis.rank() != 0 {
        return Err(ctx.error(
            Code::InvalidArgument,
            format_args!("ScanOp: axis must be a scalar, not {}", axis.shape()),
        ));
    }
    let axis = axis_values(axis).map_err(|e| ctx.error(e.code(), e.message()))?[0];
    let input = ctx.input(0)?.clone();
    let rank = input.rank() as i64;
    let index = if axis < 0 {
        axis.saturating_add(rank)
    } else {
        axis
    };
    if !(0..rank).contains(&index) {
        return Err(ctx.error(
            Code::InvalidArgument,
            format_args!(
                "ScanOp: Expected scan axis in the range [{}, {rank}), but got {axis}",
                -rank
            ),
        ));
    }
    let dims = input.dims();
    let index = index as usize;
    let outer: usize = dims[..index].iter().product();
    let inner: usize = dims[index + 1..].iter().product();
    let scan = Scan {
        len: dims[index],
        exclusive,
        reverse,
    };
    let x = input.as_slice::<T>()?;
    let threads = ctx.threads();
    let out = ctx.allocate_output(0, dims)?.as_slice_mut::<T>()?;
    let chunk = scan.len * inner;
    if chunk == 0 || outer == 0 {
        return Ok(());
    }
    if outer > 1 {
        // Outer indices are independent: split them over the threads.
        let mut chunks: Vec<(&[T], &mut [T])> =
            x.chunks(chunk).zip(out.chunks_mut(chunk)).collect();
        threads.shard_slice(&mut chunks, chunk * SCAN_COST, |_, block| {
            for (x, out) in block.iter_mut() {
                scan_into::<T, R>(x, scan, inner, out);
            }
        });
        return Ok(());
    }
    // One outer index: the rows follow one another, and each row's
    // elements are independent: split every row over the threads.
    for rows in scan.rows() {
        scan_row::<T, R>(x, out, inner, rows, |prev, source, target| {
            threads.shard_slice(target, SCAN_COST, |offset, block| {
                let end = offset + block.len();
                scan_step::<T, R>(&prev[offset..end], &source[offset..end], block)
            })
        });
    }
    Ok(())
}

/// One kernel per scan, each over every element type.
macro_rules! scan_kernels {
    ($($op:ident => $reducer:ident, $name:ident;)*) => {$(
        #[kernel(op = $op, types(T = [f32, f64, i32, i64, f16, bf16]))]
        fn $name<T: Reducible>(ctx: &mut KernelContext<'_>, attrs: &$op) -> Result<()> {
            scan::<T, $reducer>(ctx, attrs.exclusive, attrs.reverse)
        }
    )*};
}

scan_kernels! {
    Cumsum => SumReducer, cumsum;
    Cumprod => ProdReducer, cumprod;
}
