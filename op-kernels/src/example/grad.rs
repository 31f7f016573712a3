//! The gradient of `Example`, which doubles its input: d(2x) = 2 dx, so
//! the gradient is the incoming gradient doubled, by `Example` itself.

use op_core::Result;
use op_core::gradient::{Gradient, Value};

use super::ops::Example;

/// d example(x) = example(grad) = 2 grad.
#[op_core::gradient(op = Example)]
fn example_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    Ok([Some(Example::call_with(g.grad(0)?).run_on(g)?)])
}
