//! The gradient of `Examples>MultiplexDense` (elementwise `cond ? a : b`),
//! as TensorFlow's for `tf.where`: each element's gradient goes to the
//! branch it was chosen from, zeros to the other; the boolean condition
//! gets none.

use op_core::Result;
use op_core::gradient::{Gradient, Value};

use super::ops::MultiplexDense;
use crate::array::ZerosLike;

/// d multiplex(cond, a, b) = (none, multiplex(cond, grad, 0),
/// multiplex(cond, 0, grad)).
#[op_core::gradient(op = MultiplexDense)]
fn multiplex_dense_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 3]> {
    let (cond, grad) = (g.input(0), g.grad(0)?);
    let zeros = ZerosLike::call_with(grad.clone()).run_on(g)?;
    let a = MultiplexDense::call_with(cond.clone(), grad.clone(), zeros.clone()).run_on(g)?;
    let b = MultiplexDense::call_with(cond, zeros, grad).run_on(g)?;
    Ok([None, Some(a), Some(b)])
}
