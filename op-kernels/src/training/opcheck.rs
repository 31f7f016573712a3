//! How opcheck (`op_core::testing`) draws the training ops' inputs: the
//! variable and its slots are fresh anonymous variables of the kernel's
//! type and one shape, the hyperparameters scalars, the gradient of the
//! variable's shape. The ops are stateful (they update the variables), so
//! opcheck does not compare their results from run to run.

use op_core::testing::{Case, Draw, OpCheckRegistration};
use op_core::{DType, Result, Tensor, inventory};

use crate::variable::Variable;

/// A variable of `dtype` holding random values of `dims`, in `low..high`.
fn slot(d: &mut Draw<'_>, dtype: DType, dims: &[usize], low: f64, high: f64) -> Result<Tensor> {
    let value = d.float_range(low, high).tensor(dtype, dims)?;
    d.float_range(-2.0, 2.0);
    Ok(Variable::new(value)?.handle().clone())
}

/// A scalar of `dtype` in `low..high`.
fn scalar(d: &mut Draw<'_>, dtype: DType, low: f64, high: f64) -> Result<Tensor> {
    let value = d.float_range(low, high).tensor(dtype, &[])?;
    d.float_range(-2.0, 2.0);
    Ok(value)
}

/// The kernel's `T` and the variable's dimensions.
fn setup(d: &mut Draw<'_>) -> (DType, Vec<usize>) {
    (
        d.kernel_dtype("T").unwrap_or(DType::F32),
        d.dims(0..=3, 0..=3),
    )
}

/// ResourceApplyGradientDescent: `var`, `alpha`, `delta`.
fn gradient_descent_cases(d: &mut Draw<'_>) -> Result<Case> {
    let (t, dims) = setup(d);
    Ok(Case::new()
        .input(slot(d, t, &dims, -2.0, 2.0)?)
        .input(scalar(d, t, 0.0, 1.0)?)
        .input(d.tensor(t, &dims)?))
}

/// ResourceApplyMomentum: `var`, `accum`, `lr`, `grad`, `momentum`, with
/// or without Nesterov momentum.
fn momentum_cases(d: &mut Draw<'_>) -> Result<Case> {
    let (t, dims) = setup(d);
    Ok(Case::new()
        .input(slot(d, t, &dims, -2.0, 2.0)?)
        .input(slot(d, t, &dims, -1.0, 1.0)?)
        .input(scalar(d, t, 0.0, 1.0)?)
        .input(d.tensor(t, &dims)?)
        .input(scalar(d, t, 0.0, 1.0)?)
        .attr("use_nesterov", d.bool()))
}

/// ResourceApplyAdam: `var`, `m`, `v` (not negative), the six scalars in
/// their usual ranges, `grad`, with or without Nesterov momentum.
fn adam_cases(d: &mut Draw<'_>) -> Result<Case> {
    let (t, dims) = setup(d);
    Ok(Case::new()
        .input(slot(d, t, &dims, -2.0, 2.0)?)
        .input(slot(d, t, &dims, -1.0, 1.0)?)
        .input(slot(d, t, &dims, 0.0, 1.0)?)
        .input(scalar(d, t, 0.1, 0.9)?)
        .input(scalar(d, t, 0.1, 0.99)?)
        .input(scalar(d, t, 0.0, 0.1)?)
        .input(scalar(d, t, 0.8, 0.95)?)
        .input(scalar(d, t, 0.9, 0.999)?)
        .input(scalar(d, t, 1e-8, 1e-6)?)
        .input(d.tensor(t, &dims)?)
        .attr("use_nesterov", d.bool()))
}

inventory::submit! {
    OpCheckRegistration::generator("ResourceApplyGradientDescent", gradient_descent_cases, file!(), line!())
}
inventory::submit! {
    OpCheckRegistration::generator("ResourceApplyMomentum", momentum_cases, file!(), line!())
}
inventory::submit! { OpCheckRegistration::generator("ResourceApplyAdam", adam_cases, file!(), line!()) }
