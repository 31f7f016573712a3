//! `Examples>MultiplexDense`, the guide's `multiplex_1`/`multiplex_2` op:
//! elementwise `cond ? a : b`, like `np.where` without broadcasting.
//!
//! One generic kernel serves every dtype a tensor can hold but `resource`
//! (`realnumbertype`, `complex64`, `complex128`, `bool`, `string`,
//! `quantizedtype`). The shape function merges the three input shapes, so
//! a mismatch known before running is reported then.
//!
//! ```
//! use op_core::Tensor;
//! use op_kernels::multiplex::MultiplexDense;
//!
//! let cond = Tensor::from_vec([4], vec![true, false, false, true])?;
//! let a = Tensor::from_vec([4], vec![1i64, 2, 3, 4])?;
//! let b = Tensor::from_vec([4], vec![10i64, 20, 30, 40])?;
//! let out = MultiplexDense::call(cond, a, b).run()?;
//! assert_eq!(out.as_slice::<i64>()?, [1, 20, 30, 4]);
//! # Ok::<(), op_core::Error>(())
//! ```

use op_core::{Code, Element, KernelContext, Result, kernel, register_op};

/// Returns elements chosen from `a_values` or `b_values` depending on
/// `cond`.
///
/// Like `np.where` and `tf.where`, simplified to dense tensors that all
/// have one shape: no broadcasting, no optional arguments.
///
/// cond: where true, take the element of `a_values`, else of `b_values`.
/// a_values: a tensor of the shape of `cond`.
/// b_values: a tensor of the shape and type of `a_values`.
/// output_values: the chosen elements, in the shape of the inputs.
#[register_op(
    name = "Examples>MultiplexDense",
    attrs("T: type"),
    inputs("cond: bool", "a_values: T", "b_values: T"),
    outputs("output_values: T"),
    shape = "merge_inputs"
)]
pub struct MultiplexDense;

/// `output[i] = if cond[i] { a[i] } else { b[i] }`; the three slices have
/// one length.
/// The arithmetic of one element: `a` where `cond`, else `b`.
pub fn select<T: Clone>(cond: &bool, a: &T, b: &T) -> T {
    if *cond { a.clone() } else { b.clone() }
}

/// The arithmetic over slices: `cond[i] ? a[i] : b[i]`, collected.
pub fn multiplex<T: Clone>(cond: &[bool], a: &[T], b: &[T]) -> Vec<T> {
    cond.iter()
        .zip(a.iter().zip(b))
        .map(|(c, (a, b))| select(c, a, b))
        .collect()
}

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
