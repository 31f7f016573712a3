//! `#[gradient]` in every form, and `not_differentiable` on both op macros.

use op_core::gradient::{Gradient, Value};
use op_core::ndarray::{ArrayD, ArrayViewD};
use op_core::{Registry, Result, Tensor, gradient, op, register_op};

#[register_op(attrs("T: {float, double}"), inputs("x: T"), outputs("y: T"))]
pub struct Square;

// By the op's type, one gradient per input.
#[gradient(op = Square)]
fn square_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    Ok([Some(g.grad(0)?)])
}

const TWO: usize = 2;

#[register_op(attrs("T: {float, double}"), inputs("x: T", "y: T"), outputs("z: T"))]
pub struct Plus;

// The count may be any constant; the value parameter may have any name
// and bounds; a lifetime parameter is allowed.
#[gradient(op = Plus)]
fn plus_grad<'a, Val: Value + Clone>(g: &Gradient<'a, Val>) -> op_core::Result<[Option<Val>; TWO]> {
    Ok([Some(g.grad(0)?), Some(g.grad(0)?)])
}

#[register_op(
    attrs("N: int", "T: {float, double}"),
    inputs("values: N * T"),
    outputs("sum: T")
)]
pub struct Total;

// An op with a list input returns a `Vec`.
#[gradient(op = Total)]
fn total_grad<V: Value>(g: &Gradient<'_, V>) -> Result<Vec<Option<V>>> {
    let grad = g.grad(0)?;
    Ok(g.inputs().iter().map(|_| Some(grad.clone())).collect())
}

mod ops {
    #[op_core::register_op(inputs("x: float"), outputs("y: float"))]
    pub struct Negate;
}

// By a path, and by the registered name.
#[gradient(op = ops::Negate)]
fn negate_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    Ok([Some(g.grad(0)?)])
}

#[register_op(name = "Pass>Named", inputs("x: float"), outputs("y: float"))]
pub struct Named;

#[gradient(op = "Pass>Named")]
fn named_grad<V: Value>(_g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    Ok([None])
}

#[register_op(inputs("x: float"), outputs("y: int64"), not_differentiable)]
pub struct Bucket;

/// Rounds down.
#[op(not_differentiable)]
fn floor_of(input: ArrayViewD<'_, f32>) -> ArrayD<f32> {
    input.mapv(f32::floor)
}

fn main() {
    let registry = Registry::global();
    for op in ["Square", "Plus", "Total", "Negate", "Pass>Named"] {
        let g = registry.gradient(op).unwrap().expect(op);
        assert!(g.functions.is_some(), "{op}");
    }
    for op in ["Bucket", "FloorOf"] {
        let g = registry.gradient(op).unwrap().expect(op);
        assert!(g.functions.is_none(), "{op}");
    }
    registry.check().unwrap();
    // The functions stay callable as written.
    let _: fn(&Gradient<'_, Tensor>) -> Result<[Option<Tensor>; 1]> = square_grad::<Tensor>;
}
