//! A kernel's attrs parameter is checked by type, not by how it is
//! written: an alias of the op, or another path to it, is the op.

use op_core::{Element, KernelContext, Registry, Result, kernel};

mod ops {
    use op_core::register_op;

    /// Keeps one element.
    #[register_op(attrs("T: {float, int32}"), inputs("to_zero: T"), outputs("zeroed: T"))]
    pub struct ZeroOut {
        /// The element to keep.
        #[attr(default = 0)]
        pub preserve_index: i64,
    }
}

type Keep = ops::ZeroOut;

#[kernel(op = ops::ZeroOut, types(f32))]
fn zero_out_f32<T: Element>(ctx: &mut KernelContext<'_>, attrs: &Keep) -> Result<()> {
    let _ = attrs.preserve_index;
    let x = ctx.input(0)?.clone();
    ctx.set_output(0, x)
}

#[kernel(op = Keep, types(i32))]
fn zero_out_i32<T: Element>(ctx: &mut KernelContext<'_>, attrs: &crate::ops::ZeroOut) -> Result<()> {
    let _ = attrs.preserve_index;
    let x = ctx.input(0)?.clone();
    ctx.set_output(0, x)
}

fn main() {
    assert_eq!(Registry::global().op("ZeroOut").unwrap().kernels().len(), 2);
}
