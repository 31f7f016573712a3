//! The macros' `crate = "..."` argument: a crate that reaches op-core
//! through a facade (here a module re-exporting it; in practice a crate
//! that re-exports `op_core`) declares ops and kernels with every macro.
//! Generated code then names only the facade's path.

/// The facade: everything the macros generate goes through
/// `crate::facade::op_core::__private`.
mod facade {
    pub use op_core;
}

use facade::op_core::{
    Element, KernelContext, OpCall, Result, Tensor, kernel, ndarray::ArrayViewD, op, op_def,
    register_op,
};

/// Triples every element.
///
/// x: the tensor to triple.
/// y: `3 * x`.
#[register_op(
    crate = "crate::facade::op_core",
    name = "Facade>Triple",
    attrs("T: {float, int32}"),
    inputs("x: T"),
    outputs("y: T"),
    shape = "unchanged"
)]
pub struct Triple;

#[kernel(crate = "crate::facade::op_core", op = Triple, types(f32, i32))]
fn triple<T: Element + Copy + std::ops::Add<Output = T>>(
    ctx: &mut KernelContext<'_>,
) -> Result<()> {
    ctx.unary(0, 0, 1, |v: &T| *v + *v + *v)
}

/// The sum of a tensor's elements, declared and implemented in one.
#[op(
    crate = "crate::facade::op_core",
    name = "Facade>Total",
    types(f32),
    outputs("total"),
    shape = "scalar"
)]
pub fn total<T: Element + Copy + std::iter::Sum>(x: ArrayViewD<'_, T>) -> T {
    x.iter().copied().sum()
}

#[test]
fn ops_declared_through_a_facade_run() -> Result<()> {
    let y = Triple::call(Tensor::from_vec([2], vec![1.5f32, -2.0])?).run()?;
    assert_eq!(y.as_slice::<f32>()?, [4.5, -6.0]);
    let y = Triple::call(Tensor::from_vec([1], vec![7i32])?).run()?;
    assert_eq!(y.as_slice::<i32>()?, [21]);

    let outputs = OpCall::new("Facade>Total")
        .input(Tensor::from_vec([3], vec![1.0f32, 2.0, 3.5])?)
        .run()?;
    assert_eq!(outputs[0].scalar_value::<f32>()?, 6.5);
    Ok(())
}

#[test]
fn op_def_takes_the_crate_argument_too() {
    let def = op_def! {
        name: "Facade>Spec",
        attrs: ["T: {float, int32}"],
        inputs: ["x: T"],
        outputs: ["y: T"],
        crate: "crate::facade::op_core",
    }
    .build()
    .expect("a checked spec builds");
    assert_eq!(def.name, "Facade>Spec");
    assert_eq!(def.inputs[0].name, "x");
}
