//! The CPU kernels of `MatMul`: [`matmul_into`] over views of the inputs
//! (a transpose is a transposed view), for `float`, `double`, `int32`,
//! `int64`, `complex64` and `complex128`; and for `half` and `bfloat16`
//! the same in `f32`, rounded at the end.

use op_core::ndarray::ArrayView2;
use op_core::{Code, Element, KernelContext, Result, Tensor, kernel};

use super::math::{Gemm, ViaF32, from_f32, matmul_into, to_f32};
use super::ops::MatMul;

/// The dims of `a` and `b`, checked: both matrices, with equal inner
/// dimensions after the transposes. Returns `(m, n)`, the product's
/// shape.
pub(super) fn product_dims(
    ctx: &KernelContext<'_>,
    a: &Tensor,
    b: &Tensor,
    attrs: &MatMul,
) -> Result<(usize, usize)> {
    for (index, name, t) in [(0, "a", a), (1, "b", b)] {
        if t.rank() != 2 {
            return Err(ctx.error(
                Code::InvalidArgument,
                format_args!(
                    "input {index} ('{name}') must be a matrix, but has shape {}",
                    t.shape()
                ),
            ));
        }
    }
    let (a_dims, b_dims) = (a.dims(), b.dims());
    let (m, k_a) = if attrs.transpose_a {
        (a_dims[1], a_dims[0])
    } else {
        (a_dims[0], a_dims[1])
    };
    let (k_b, n) = if attrs.transpose_b {
        (b_dims[1], b_dims[0])
    } else {
        (b_dims[0], b_dims[1])
    };
    if k_a != k_b {
        return Err(ctx.error(
            Code::InvalidArgument,
            format_args!(
                "matrix size-incompatible: input 0 ('a') has shape {} and input 1 ('b') has shape {} \
                 (transpose_a={}, transpose_b={}): a's {k_a} columns must equal b's {k_b} rows",
                a.shape(),
                b.shape(),
                attrs.transpose_a,
                attrs.transpose_b
            ),
        ));
    }
    Ok((m, n))
}

/// `values`, the elements of a matrix of shape `dims`, as a view,
/// transposed (not copied) if `transpose`.
fn matrix_view<'t, T>(dims: &[usize], values: &'t [T], transpose: bool) -> ArrayView2<'t, T> {
    let view = ArrayView2::from_shape((dims[0], dims[1]), values)
        .expect("a tensor's elements fill its shape");
    if transpose {
        view.reversed_axes()
    } else {
        view
    }
}

#[kernel(op = MatMul, types(f32, f64, i32, i64, Complex64, Complex128))]
fn matmul<T: Gemm>(ctx: &mut KernelContext<'_>, attrs: &MatMul) -> Result<()> {
    // Cheap (reference counts): keep the inputs while the output is
    // allocated.
    let (a, b) = (ctx.input(0)?.clone(), ctx.input(1)?.clone());
    let (m, n) = product_dims(ctx, &a, &b, attrs)?;
    let threads = ctx.threads();
    let product = ctx.allocate_output(0, &[m, n])?;
    matmul_into(
        threads,
        matrix_view(a.dims(), a.as_slice::<T>()?, attrs.transpose_a),
        matrix_view(b.dims(), b.as_slice::<T>()?, attrs.transpose_b),
        product.as_slice_mut::<T>()?,
    );
    Ok(())
}

#[kernel(op = MatMul, types(f16, bf16))]
fn matmul_via_f32<T: ViaF32>(ctx: &mut KernelContext<'_>, attrs: &MatMul) -> Result<()> {
    let (a, b) = (ctx.input(0)?.clone(), ctx.input(1)?.clone());
    let (m, n) = product_dims(ctx, &a, &b, attrs)?;
    let (a32, b32) = (to_f32(a.as_slice::<T>()?), to_f32(b.as_slice::<T>()?));
    let mut product32 = ctx.allocate_temp(f32::DTYPE, &[m, n])?;
    matmul_into(
        ctx.threads(),
        matrix_view(a.dims(), &a32, attrs.transpose_a),
        matrix_view(b.dims(), &b32, attrs.transpose_b),
        product32.as_slice_mut::<f32>()?,
    );
    let product = ctx.allocate_output(0, &[m, n])?;
    from_f32(product32.as_slice::<f32>()?, product.as_slice_mut::<T>()?);
    Ok(())
}
