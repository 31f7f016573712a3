//! `#[kernel]` on functions, in every form.

use op_core::{Element, KernelContext, Result, kernel, register_op};

/// Zeroes every element but the first.
#[register_op(
    attrs("T: {float, double, int32, int64} = DT_INT32"),
    inputs("to_zero: T"),
    outputs("zeroed: T")
)]
pub struct ZeroOut {
    #[attr(default = 0, min = 0)]
    pub preserve_index: i64,
}

// Without the attrs parameter, not generic: one kernel for every `T`.
#[kernel(op = ZeroOut)]
fn zero_out_i32(ctx: &mut KernelContext<'_>) -> Result<()> {
    let _ = ctx;
    Ok(())
}

// With the attrs parameter, generic over `T`.
#[kernel(op = ZeroOut, device = "cpu", types(f32, f64))]
fn zero_out<T: Element + Default>(ctx: &mut KernelContext<'_>, attrs: &ZeroOut) -> Result<()> {
    let _ = (ctx, attrs.preserve_index);
    Ok(())
}

// On the GPU, with an input in host memory.
#[kernel(op = ZeroOut, device = "gpu", types(i64), host_memory("to_zero"))]
fn zero_out_gpu<T: Element>(ctx: &mut KernelContext<'_>) -> Result<()> {
    let _ = ctx;
    Ok(())
}

/// Doubles any real number.
#[register_op(attrs("T: numbertype"), inputs("x: T"), outputs("y: T"))]
pub struct Double;

// A type group.
#[kernel(op = Double, types(realnumbertype))]
fn double<T: Element>(ctx: &mut KernelContext<'_>) -> Result<()> {
    let _ = ctx;
    Ok(())
}

/// A lookup table keyed on one type attr, valued on another.
#[register_op(
    attrs("K: {int32, int64}", "V: {float, int32}"),
    inputs("keys: K", "values: V"),
    outputs("out: V")
)]
pub struct Lookup;

// A named cross product: (i32, f32) and (i64, f32).
#[kernel(op = Lookup, types(K = [i32, i64], V = f32))]
fn lookup<K: Element, V: Element>(ctx: &mut KernelContext<'_>) -> Result<()> {
    let _ = ctx;
    Ok(())
}

// Explicit combinations, one `types(...)` each, attrs in any order.
#[kernel(op = Lookup, device = "gpu", types(K = i32, V = i32), types(V = f32, K = i64))]
fn lookup_gpu<K: Element, V: Element>(ctx: &mut KernelContext<'_>) -> Result<()> {
    let _ = ctx;
    Ok(())
}

// An op named by string, checked when the registry is built.
#[kernel(op = "SomeOtherOp", types(f32))]
fn by_name<T: Element>(ctx: &mut KernelContext<'_>) -> Result<()> {
    let _ = ctx;
    Ok(())
}

// The output's type attr, named.
#[register_op(
    attrs("out_type: {float, int32} = DT_FLOAT"),
    inputs("s: string"),
    outputs("output: out_type")
)]
pub struct StringToNumber;

#[kernel(op = StringToNumber, types(out_type = [float, int32]), host_memory("s", "output"))]
fn string_to_number<T: Element>(ctx: &mut KernelContext<'_>) -> Result<()> {
    let _ = ctx;
    Ok(())
}

fn main() {}
