//! A kernel takes its own op's attrs: `attrs: &Clip` on a kernel of
//! `ZeroOut` would read attrs a `ZeroOut` node does not have.

use op_core::{Element, KernelContext, Result, kernel, register_op};

#[register_op(attrs("T: {float, int32}"), inputs("to_zero: T"), outputs("zeroed: T"))]
pub struct ZeroOut {
    pub preserve_index: i64,
}

#[register_op(attrs("T: {float, int32}"), inputs("x: T"), outputs("y: T"))]
pub struct Clip {
    pub lo: i64,
}

#[kernel(op = ZeroOut, types(f32, i32))]
fn zero_out<T: Element>(ctx: &mut KernelContext<'_>, attrs: &Clip) -> Result<()> {
    let _ = (ctx, attrs.lo);
    Ok(())
}

fn main() {}
