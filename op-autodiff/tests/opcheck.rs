//! op-core's per-op contract tests (`op_core::testing::opcheck`) with this
//! crate's gradient checker plugged in (`checker::opcheck_gradients`): a
//! right gradient passes, a wrong one fails naming the op, kernel and
//! where the Jacobians differ, and every shipped op with a registered
//! gradient passes. Also the second derivatives of the unary gradient ops
//! on inputs of one element count but different shapes, which opcheck
//! found broken.
//!
//! The test ops are named `OpCheckAutodiffTest>...`: gradient
//! registrations are global.

use op_autodiff::checker::{compute_gradient, opcheck_gradients};
use op_core::gradient::{Gradient, Value};
use op_core::testing::{Check, opcheck, opcheck_all};
use op_core::{
    DType, Element, KernelContext, OpCall, Registry, Result, Tensor, kernel, register_op,
};
use op_kernels::math::{Mul, Square};

/// Declares ops that cube every element, `x: T -> y: T`, each named as
/// given, with a `float` and a `double` kernel: ops that differ only by
/// their gradients.
macro_rules! cube_ops {
    ($($name:literal $op:ident => $kernel:ident;)*) => {$(
        /// Cubes every element.
        ///
        /// x: the values.
        /// y: `x * x * x`.
        #[register_op(
            name = $name,
            attrs("T: {float, double}"),
            inputs("x: T"),
            outputs("y: T"),
            shape = "unchanged"
        )]
        pub struct $op;

        #[kernel(op = $op, types(f32, f64))]
        fn $kernel<T: Element + Copy + std::ops::Mul<Output = T>>(
            ctx: &mut KernelContext<'_>,
        ) -> Result<()> {
            ctx.unary(0, 0, 1, |x: &T| *x * *x * *x)
        }
    )*};
}

cube_ops! {
    "OpCheckAutodiffTest>Cube" Cube => cube_kernel;
    "OpCheckAutodiffTest>CubeWrongGradient" CubeWrongGradient => cube_wrong_gradient_kernel;
}

/// `grad * x^2 * 3`, built from shipped ops.
#[op_core::gradient(op = Cube)]
fn cube_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    let squared = Square::call_with(g.input(0)).run_on(g)?;
    let three = match g.input_dtype(0) {
        DType::F32 => Tensor::scalar(3.0f32),
        _ => Tensor::scalar(3.0f64),
    };
    let slope = Mul::call_with(squared, g.constant(three)?).run_on(g)?;
    Ok([Some(Mul::call_with(g.grad(0)?, slope).run_on(g)?)])
}

/// `grad * x^2`: a third of the right slope.
#[op_core::gradient(op = CubeWrongGradient)]
fn cube_wrong_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    let squared = Square::call_with(g.input(0)).run_on(g)?;
    Ok([Some(Mul::call_with(g.grad(0)?, squared).run_on(g)?)])
}

#[test]
fn a_right_gradient_agrees_with_the_checker() {
    op_kernels::link();
    let report = opcheck("OpCheckAutodiffTest>Cube")
        .gradient_checker(opcheck_gradients)
        .assert_passes();
    assert!(report.gradient_checks() > 0, "{report}");
}

#[test]
fn a_wrong_gradient_fails_naming_the_op_kernel_and_the_jacobians() {
    op_kernels::link();
    let report = opcheck("OpCheckAutodiffTest>CubeWrongGradient")
        .gradient_checker(opcheck_gradients)
        .run();
    let failure = report.failures().next().expect("a failure");
    assert_eq!(failure.check, Check::Gradient, "{report}");
    assert_eq!(failure.op, "OpCheckAutodiffTest>CubeWrongGradient");
    assert!(failure.kernel.contains("T=double"), "{report}");
    assert!(failure.message.contains("output 0 ('y')"), "{report}");
    assert!(failure.message.contains("theoretical"), "{report}");
    assert!(failure.message.contains("numeric"), "{report}");
}

#[test]
fn every_shipped_op_with_a_gradient_passes_opcheck_with_the_checker() {
    op_kernels::link();
    let registry = Registry::global();
    let differentiable: Vec<String> = registry
        .ops()
        .map(|op| op.def().name.clone())
        .filter(|name| !name.starts_with("OpCheckAutodiffTest>"))
        .filter(|name| {
            registry
                .gradient(name)
                .is_ok_and(|g| g.is_some_and(|g| g.functions.is_some()))
        })
        .collect();
    assert!(differentiable.len() > 40, "{differentiable:?}");
    let report = opcheck_all()
        .ops(differentiable)
        .cases(4)
        .gradient_checker(opcheck_gradients)
        .assert_passes();
    assert!(report.gradient_checks() > 40, "{report}");
}

#[test]
fn the_unary_gradient_ops_differentiate_y_and_dy_of_other_shapes() {
    op_kernels::link();
    // One element count, two shapes: the kernels pair the elements in
    // order, and so must the gradients of the gradients.
    let y = Tensor::from_vec([3, 1], vec![0.5f64, 1.25, 2.0]).unwrap();
    let dy = Tensor::from_vec([1, 3], vec![-1.5f64, 0.75, 2.0]).unwrap();
    for op in [
        "SqrtGrad",
        "RsqrtGrad",
        "TanhGrad",
        "SigmoidGrad",
        "ReciprocalGrad",
    ] {
        let f = |xs: &[Tensor]| Ok(OpCall::new(op).input(&xs[0]).input(&xs[1]).run()?.remove(0));
        let check =
            compute_gradient(f, &[y.clone(), dy.clone()]).unwrap_or_else(|e| panic!("{op}: {e}"));
        assert!(check.max_relative_error() < 1e-6, "{op}: {check}");
    }
}
