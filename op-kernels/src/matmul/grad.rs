//! The gradient of `MatMul`, TensorFlow's `_MatMulGrad`: for `c = a b`,
//! `da = grad b^H` and `db = a^H grad`, written as one `MatMul` each with
//! the transposes folded in, in the four cases of `transpose_a` and
//! `transpose_b` (the conjugates apply to complex matrices only). Each
//! product is marked `grad_a` or `grad_b`, as TensorFlow marks them.

use op_core::Result;
use op_core::gradient::{Gradient, Value};

use super::ops::MatMul;
use crate::math::conj;

/// d matmul(a, b): the four cases of TensorFlow's `_MatMulGrad`.
#[op_core::gradient(op = MatMul)]
fn matmul_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    let transpose_a: bool = g.attr("transpose_a")?;
    let transpose_b: bool = g.attr("transpose_b")?;
    let a = conj(g, g.input(0))?;
    let b = conj(g, g.input(1))?;
    let grad = g.grad(0)?;
    // (left, right, transpose_a, transpose_b) of each product.
    let (da, db) = match (transpose_a, transpose_b) {
        (false, false) => ((grad.clone(), b, false, true), (a, grad, true, false)),
        (false, true) => ((grad.clone(), b, false, false), (grad, a, true, false)),
        (true, false) => ((b, grad.clone(), false, true), (a, grad, false, false)),
        (true, true) => ((b, grad.clone(), true, true), (grad, a, true, true)),
    };
    // The product for `a`'s gradient (`for_a`) or `b`'s, marked so.
    let product = |(l, r, ta, tb): (V, V, bool, bool), for_a: bool| {
        MatMul::call_with(l, r)
            .transpose_a(ta)
            .transpose_b(tb)
            .grad_a(for_a)
            .grad_b(!for_a)
            .run_on(g)
    };
    let (da, db) = (product(da, true)?, product(db, false)?);
    Ok([Some(da), Some(db)])
}
