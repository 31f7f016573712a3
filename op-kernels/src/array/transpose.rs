//! Transpose: a tensor's dimensions permuted. The kernel copies the input's
//! [`transpose_view`] out block by block over the runtime's threads; a
//! transpose that changes nothing (rank 0 or 1, or the identity
//! permutation) shares the input's buffer instead, as TensorFlow's does.
//! InvertPermutation, with which Transpose's gradient undoes the
//! permutation.

use op_core::shape_inference::InferenceContext;
use op_core::{Element, KernelContext, Result, kernel};

use super::cpu::write_view;
use super::index::{IndexElement, constant_values, dims_of, in_kernel, index_output, input_vector};
use super::math::{check_permutation, invert_permutation, transpose_view};
use super::ops::{InvertPermutation, Transpose};

/// Transpose's shape function (TensorFlow's `TransposeShapeFn`).
///
/// The output's rank is the input's, else `perm`'s length; with `perm`
/// known, output dimension `i` is input dimension `perm[i]` itself, else
/// unknown. With neither rank nor `perm` known, the output is unknown; a
/// `perm` of one element (an input of unknown rank below 2) leaves the
/// input's shape as it is.
///
/// Unlike TensorFlow's, a known `perm` that is not a permutation of
/// `0..rank` (an entry negative, out of range or repeated) is an error here
/// already, as it is in the kernel.
pub fn transpose_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let input = c.input(0)?;
    let perm_shape = c.input(1)?;
    let perm = constant_values(c, 1)?;
    let perm_elems = match c.rank(perm_shape) {
        Some(r) => dims_of(c, perm_shape, r)?
            .into_iter()
            .try_fold(1usize, |n, d| n.checked_mul(c.value(d)?)),
        None => None,
    };
    let rank = match (c.rank(input), perm_elems, &perm) {
        (Some(rank), _, _) => rank,
        (None, Some(n), _) => n,
        (None, None, Some(values)) => values.len(),
        (None, None, None) => {
            let unknown = c.unknown_shape();
            return c.set_output(0, unknown);
        }
    };
    if c.rank(input).is_none() && rank < 2 {
        return c.set_output(0, input);
    }
    let input = c.with_rank(input, rank)?;
    let perm_shape = c.with_rank(perm_shape, 1)?;
    let length = c.dim(perm_shape, 0)?;
    if let Some(n) = c.value(length)
        && n != rank
    {
        return Err(c.error(format!(
            "input 1 ('perm') has {n} elements, but input 0 ('x') has rank {rank}: perm must be a permutation of its dimensions"
        )));
    }
    let dims = match perm {
        Some(values) => {
            let perm = check_permutation(&values, rank).map_err(|e| c.error(e.message()))?;
            let input_dims = dims_of(c, input, rank)?;
            perm.iter().map(|&p| input_dims[p]).collect()
        }
        None => (0..rank).map(|_| c.unknown_dim()).collect::<Vec<_>>(),
    };
    let output = c.make_shape(dims);
    c.set_output(0, output)
}

#[kernel(op = Transpose, types(numbertype, bool, string))]
fn transpose<T: Element>(ctx: &mut KernelContext<'_>) -> Result<()> {
    let perm = input_vector(ctx, 1, "perm")?;
    let input = ctx.input(0)?.clone();
    let perm = check_permutation(&perm, input.rank()).map_err(|e| in_kernel(ctx, e))?;
    if perm.iter().enumerate().all(|(i, &p)| i == p) {
        return ctx.set_output(0, input);
    }
    let view = transpose_view(input.dims(), &perm);
    write_view::<T>(ctx, &input, &view, &view.dims)
}

/// InvertPermutation's shape function (TensorFlow's
/// `UnchangedShapeWithRank(c, 1)`): the input is a vector, and the output
/// has its shape.
pub fn invert_permutation_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let input = c.input(0)?;
    let input = c.with_rank(input, 1)?;
    c.set_output(0, input)
}

#[kernel(op = InvertPermutation, types(i32, i64))]
fn invert_permutation_kernel<I: IndexElement>(ctx: &mut KernelContext<'_>) -> Result<()> {
    let perm = input_vector(ctx, 0, "x")?;
    let inverse = invert_permutation(&perm).map_err(|e| in_kernel(ctx, e))?;
    let output = index_output::<I>(ctx, "permutation index", &inverse)?;
    ctx.set_output(0, output)
}
