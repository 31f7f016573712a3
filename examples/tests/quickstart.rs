//! The README's quickstart, verbatim: it must compile and run.

use op_core::{Element, KernelContext, Result, Tensor, kernel, register_op};

/// Doubles every element.
///
/// x: the tensor to double.
/// y: `2 * x`.
#[register_op(attrs("T: {float, int32}"), inputs("x: T"), outputs("y: T"))]
pub struct Double;

#[kernel(op = Double, types(f32, i32))]
fn double<T: Element + Copy + std::ops::Add<Output = T>>(
    ctx: &mut KernelContext<'_>,
) -> Result<()> {
    // y = x + x, elementwise: in x's buffer if the caller handed it over,
    // split over the runtime's threads when large (1 cycle per element).
    ctx.unary(0, 0, 1, |v: &T| *v + *v)
}

/// Names this crate so that programs using it link its registrations.
pub fn link() {}

#[test]
fn main() -> Result<()> {
    let y = Double::call(Tensor::from_vec([2], vec![1.5f32, -2.0])?).run()?;
    assert_eq!(y.as_slice::<f32>()?, [3.0, -4.0]);
    Ok(())
}
