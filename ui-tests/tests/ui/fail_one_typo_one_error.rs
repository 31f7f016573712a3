// Each misspelt key is one error: the other keys still declare the op and
// its kernel, so the code below compiles as if the typos were fixed (before,
// the `statefull` typo alone gave seven errors).
use op_core::{Element, KernelContext, Result, Tensor, kernel, register_op};

/// Doubles every element.
#[register_op(attrs("T: {float, int32}"), inputs("x: T"), outputs("y: T"), statefull)]
pub struct Double;

#[kernel(op = Double, types(f32, i32), devise = "cpu")]
fn double<T: Element + Copy + std::ops::Add<Output = T>>(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.unary(0, 0, 1, |v: &T| *v + *v)
}

fn main() -> Result<()> {
    let y = Double::call(Tensor::from_vec([2], vec![1.5f32, -2.0])?).run()?;
    assert_eq!(y.as_slice::<f32>()?, [3.0, -4.0]);
    Ok(())
}
