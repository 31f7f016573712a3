//! A kernel that is not generic can still be registered for chosen types,
//! as TensorFlow registers `ZeroOutInt32Op` with `TypeConstraint<int32>`:
//! one registration per listed type, all running the same function.

use op_core::{DType, KernelContext, Registry, Result, kernel, register_op};

#[register_op(attrs("T: {float, int32}"), inputs("to_zero: T"), outputs("zeroed: T"))]
pub struct ZeroOut;

#[kernel(op = ZeroOut, types(i32))]
fn zero_out_int32(ctx: &mut KernelContext<'_>) -> Result<()> {
    let input = ctx.input(0)?.clone();
    ctx.set_output(0, input)
}

fn main() {
    let entry = Registry::global().op("ZeroOut").unwrap();
    assert_eq!(entry.kernels().len(), 1);
    assert_eq!(entry.kernels()[0].constraints[0].dtype, DType::I32);
}
