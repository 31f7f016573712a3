// A mistake in a spec string is one error: the op is still declared, with a
// stand-in for the broken spec, so its kernel and its call below report
// nothing more (before, this typo also gave "the trait bound `ZeroOut: Op`
// is not satisfied" on the kernel and "no function `call`" on the call).
use op_core::{KernelContext, Result, Tensor, kernel, register_op};

#[register_op(inputs("to_zero: in32"), outputs("zeroed: int32"))]
pub struct ZeroOut;

#[kernel(op = ZeroOut)]
fn zero_out(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.unary(0, 0, 1, |_: &i32| 0)
}

fn main() -> Result<()> {
    let _ = ZeroOut::call(Tensor::from_vec([2], vec![1i32, 2])?).run()?;
    Ok(())
}
