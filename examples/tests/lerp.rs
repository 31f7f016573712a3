//! `Examples>Lerp`: its values, its contract (opcheck), and its gradient
//! against the numeric Jacobian.

use examples::Lerp;
use op_autodiff::checker::opcheck_gradients;
use op_core::Tensor;
use op_core::testing::opcheck;

#[test]
fn lerp_goes_weight_of_the_way_from_from_to_to() -> op_core::Result<()> {
    examples::link();
    let from = Tensor::from_vec([3], vec![0.0f64, 10.0, -1.0])?;
    let to = Tensor::from_vec([3], vec![4.0f64, 20.0, 1.0])?;
    let half = Lerp::call(&from, &to).run()?;
    assert_eq!(half.as_slice::<f64>()?, [2.0, 15.0, 0.0]);
    let ends = [
        Lerp::call(&from, &to).weight(0.0).run()?,
        Lerp::call(&from, &to).weight(1.0).run()?,
    ];
    assert_eq!(ends[0].as_slice::<f64>()?, from.as_slice::<f64>()?);
    assert_eq!(ends[1].as_slice::<f64>()?, to.as_slice::<f64>()?);
    let other_shape = Tensor::from_vec([2], vec![1.0f64, 2.0])?;
    let error = Lerp::call(&from, &other_shape).run().unwrap_err();
    assert!(error.to_string().contains("Examples>Lerp"), "{error}");
    Ok(())
}

#[test]
fn lerp_passes_opcheck_and_its_gradient_agrees_with_the_numeric_jacobian() {
    examples::link();
    let report = opcheck("Examples>Lerp")
        .gradient_checker(opcheck_gradients)
        .assert_passes();
    assert!(report.gradient_checks() > 0, "{report}");
}
