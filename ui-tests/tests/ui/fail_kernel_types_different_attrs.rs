use op_core::{Element, KernelContext, Result, kernel, register_op};

#[register_op(attrs("K: {int32, int64}", "V: {float, int32}"), inputs("keys: K", "values: V"), outputs("out: V"))]
pub struct Lookup;

#[kernel(op = Lookup, types(K = i32, V = f32), types(K = i64))]
fn lookup<K: Element, V: Element>(ctx: &mut KernelContext<'_>) -> Result<()> {
    let _ = ctx;
    Ok(())
}

fn main() {}
