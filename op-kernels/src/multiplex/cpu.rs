//! The CPU kernel of `Examples>MultiplexDense`: [`select`] elementwise,
//! after checking that the three inputs have one shape.

use op_core::{Code, Element, KernelContext, Result, kernel};

use super::math::select;
use super::ops::MultiplexDense;

/// `InvalidArgument` naming both inputs and their shapes unless `x` and
/// `y` have one shape.
fn check_same_shape(
    ctx: &KernelContext<'_>,
    (x_name, x_index): (&str, usize),
    (y_name, y_index): (&str, usize),
) -> Result<()> {
    let (x, y) = (ctx.input(x_index)?, ctx.input(y_index)?);
    if x.dims() == y.dims() {
        return Ok(());
    }
    Err(ctx.error(
        Code::InvalidArgument,
        format_args!(
            "{x_name} and {y_name} must have the same shape, but {x_name} (input {x_index}) has shape {} and {y_name} (input {y_index}) has shape {}",
            x.shape(),
            y.shape()
        ),
    ))
}

#[kernel(
    op = MultiplexDense,
    types(realnumbertype, complex64, complex128, bool, string, quantizedtype)
)]
fn multiplex_dense<T: Element>(ctx: &mut KernelContext<'_>) -> Result<()> {
    check_same_shape(ctx, ("a_values", 1), ("b_values", 2))?;
    check_same_shape(ctx, ("cond", 0), ("a_values", 1))?;
    // A branch and a copy per element (more for strings, which clone).
    ctx.ternary([0, 1, 2], 0, 2, select::<T>)
}
