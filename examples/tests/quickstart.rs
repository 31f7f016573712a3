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
    let x = ctx.input(0)?;
    let y: Vec<T> = x.as_slice::<T>()?.iter().map(|v| *v + *v).collect();
    let y = Tensor::from_vec(x.dims(), y)?;
    ctx.set_output(0, y)
}

/// Names this crate so that programs using it link its registrations.
pub fn link() {}

#[test]
fn main() -> Result<()> {
    let y = Double::call(Tensor::from_vec([2], vec![1.5f32, -2.0])?).run()?;
    assert_eq!(y.as_slice::<f32>()?, [3.0, -4.0]);
    Ok(())
}
