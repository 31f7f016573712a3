use op_core::{Element, KernelContext, Result, kernel, register_op};

#[register_op(attrs("out_type: {float, int32}"), inputs("s: string"), outputs("y: out_type"))]
pub struct StringToNumber;

#[kernel(op = StringToNumber, types(f32, i32))]
fn string_to_number<T: Element>(ctx: &mut KernelContext<'_>) -> Result<()> {
    let _ = ctx;
    Ok(())
}

fn main() {}
