//! A typed wrapper (`wrapper = name`) is reachable wherever its op is: from
//! other modules, for a private op, for an op declared inside a function;
//! a kernel function of the same name in another module (a child module
//! that glob-imports the op's, included) is no clash.

use op_core::{Element, KernelContext, Registry, Result, Tensor, kernel, register_op};

mod ops {
    use op_core::register_op;

    /// Copies `x`, with attrs the wrapper takes.
    #[register_op(
        attrs("T: {float, int32}", "N: int >= 1", "label: string", "scale: float = 1.0"),
        inputs("x: T", "extras: N * T"),
        outputs("y: T"),
        wrapper = copy_all,
    )]
    pub struct CopyAll;

    /// The kernel lives in a child module that glob-imports this one, and
    /// has the wrapper's name: each keeps its own.
    pub mod cpu {
        use super::*;
        use op_core::{Element, KernelContext, Result, kernel};

        #[kernel(op = CopyAll, types(f32, i32))]
        pub fn copy_all<T: Element>(ctx: &mut KernelContext<'_>) -> Result<()> {
            let x = ctx.input(0)?.clone();
            ctx.set_output(0, x)
        }
    }
}

/// A private op with a wrapper, and a kernel named otherwise beside it.
#[register_op(attrs("T: {float, int32}"), inputs("x: T"), outputs("y: T"), wrapper = private_copy)]
struct PrivateCopy;

#[kernel(op = PrivateCopy, types(f32, i32))]
fn private_copy_kernel<T: Element>(ctx: &mut KernelContext<'_>) -> Result<()> {
    let x = ctx.input(0)?.clone();
    ctx.set_output(0, x)
}

fn main() -> Result<()> {
    let x = Tensor::from_vec([2], vec![1.0f32, 2.0])?;
    let y = ops::copy_all(&x, vec![&x], "label").scale(2.0).run()?;
    assert_eq!(y.as_slice::<f32>()?, [1.0, 2.0]);
    // The call type keeps its path.
    let call: ops::CopyAllCall = ops::CopyAll::call(&x, vec![&x], "label");
    assert_eq!(call.run()?.as_slice::<f32>()?, [1.0, 2.0]);

    let y = private_copy(Tensor::from_vec([1], vec![7i32])?).run()?;
    assert_eq!(y.as_slice::<i32>()?, [7]);

    // An op declared inside a function keeps its wrapper too.
    #[register_op(inputs("x: float"), outputs("y: float"), wrapper = local_copy)]
    struct LocalCopy;
    let _call = local_copy(Tensor::scalar(1.0f32));
    assert!(Registry::global().op("LocalCopy").is_ok());
    Ok(())
}
