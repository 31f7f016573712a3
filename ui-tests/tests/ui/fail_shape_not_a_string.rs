//! A library shape function named without quotes: the error says to quote
//! it, or to use `shape_fn` for a function of one's own.

use op_core::register_op;

#[register_op(inputs("x: float"), outputs("y: float"), shape = unchanged)]
pub struct Copy;

/// A function of one's own, named with `shape` instead of `shape_fn`.
fn my_shape(c: &mut op_core::shape_inference::InferenceContext<'_>) -> op_core::Result<()> {
    let x = c.input(0)?;
    c.set_output(0, x)
}

#[op_core::op(shape = my_shape)]
pub fn double(x: op_core::ndarray::ArrayViewD<'_, f32>) -> op_core::ndarray::ArrayD<f32> {
    x.mapv(|v| v * 2.0)
}

fn main() {}
