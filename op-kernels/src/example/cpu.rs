//! The CPU kernel of `Example`: [`Double::double`] over the input, through
//! [`KernelContext::unary`].

use op_core::{KernelContext, Result, kernel};

use super::math::Double;
use super::ops::Example;

/// What one element costs, in CPU cycles, for splitting work over threads.
const COST_PER_ELEMENT: usize = 1;

#[kernel(op = Example, types(realnumbertype, complex64, complex128))]
fn example<T: Double>(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.unary(0, 0, COST_PER_ELEMENT, |x: &T| x.double())
}
