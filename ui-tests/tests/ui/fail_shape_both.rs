//! Both a library shape function and a custom one: the error says to give
//! only one.

use op_core::register_op;
use op_core::shape_inference::InferenceContext;

fn my_shape(c: &mut InferenceContext<'_>) -> op_core::Result<()> {
    let x = c.input(0)?;
    c.set_output(0, x)
}

#[register_op(
    inputs("x: float"),
    outputs("y: float"),
    shape = "unchanged",
    shape_fn = my_shape
)]
pub struct Copy;

fn main() {}
