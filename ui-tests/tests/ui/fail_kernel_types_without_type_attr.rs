use op_core::{Element, KernelContext, Result, kernel, register_op};

#[register_op(inputs("to_zero: int32"), outputs("zeroed: int32"))]
pub struct ZeroOut;

#[kernel(op = ZeroOut, types(i32))]
fn zero_out<T: Element>(ctx: &mut KernelContext<'_>) -> Result<()> {
    let _ = ctx;
    Ok(())
}

fn main() {}
