use op_core::{Element, KernelContext, Result, kernel, register_op};

#[register_op(attrs("T: {float, int32}"), inputs("to_zero: T"), outputs("zeroed: T"))]
pub struct ZeroOut;

#[kernel(types(f32))]
fn zero_out<T: Element>(ctx: &mut KernelContext<'_>) -> Result<()> {
    let _ = ctx;
    Ok(())
}

fn main() {}
