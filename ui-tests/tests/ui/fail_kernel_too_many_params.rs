use op_core::{Element, KernelContext, Result, kernel, register_op};

#[register_op(attrs("T: {float, int32}"), inputs("to_zero: T"), outputs("zeroed: T"))]
pub struct ZeroOut;

#[kernel(op = ZeroOut, types(f32))]
fn zero_out<T: Element>(ctx: &mut KernelContext<'_>, attrs: &ZeroOut, index: usize) -> Result<()> {
    let _ = (ctx, attrs, index);
    Ok(())
}

fn main() {}
