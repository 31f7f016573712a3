//! How opcheck (`op_core::testing`) draws the variable ops' inputs: their
//! `resource` input must be a variable's handle, which only an op makes.
//! Each case makes a fresh anonymous variable ([`Variable`], on the global
//! runtime; its owning handle works on any runtime) of the kernel's dtype,
//! with a value or, now and then, none. The ops are stateful, so opcheck
//! does not compare their results from run to run.

use op_core::testing::{Case, Draw, OpCheckRegistration};
use op_core::{DType, Result, ShapeValue, Tensor, inventory};

use super::Variable;

/// A new variable of the kernel's `dtype`: a random value of random
/// dimensions (then also returned), or, when `maybe_empty` and by chance,
/// no value.
fn variable(d: &mut Draw<'_>, maybe_empty: bool) -> Result<(Variable<'static>, Option<Tensor>)> {
    let dtype = d.kernel_dtype("dtype").unwrap_or(DType::F32);
    if maybe_empty && d.chance(0.2) {
        return Ok((
            Variable::uninitialized(dtype, ShapeValue::unknown_rank())?,
            None,
        ));
    }
    let dims = d.dims(0..=3, 0..=3);
    let value = d.tensor(dtype, &dims)?;
    Ok((Variable::new(value.clone())?, Some(value)))
}

/// ReadVariableOp: a variable with a value, read as its dtype.
fn read_cases(d: &mut Draw<'_>) -> Result<Case> {
    let (var, _) = variable(d, false)?;
    Ok(Case::new()
        .input(var.handle().clone())
        .attr("dtype", var.dtype()))
}

/// AssignVariableOp: a variable, and a value of its shape or, now and
/// then, another (which `validate_shape` may refuse).
fn assign_cases(d: &mut Draw<'_>) -> Result<Case> {
    let (var, value) = variable(d, true)?;
    let dims = match value {
        Some(value) if d.chance(0.7) => value.dims().to_vec(),
        _ => d.dims(0..=3, 0..=3),
    };
    let new = d.tensor(var.dtype(), &dims)?;
    Ok(Case::new()
        .input(var.handle().clone())
        .input(new)
        .attr("validate_shape", d.bool()))
}

/// VarIsInitializedOp: a variable with or without a value.
fn is_initialized_cases(d: &mut Draw<'_>) -> Result<Case> {
    let (var, _) = variable(d, true)?;
    Ok(Case::new().input(var.handle().clone()))
}

/// DestroyResourceOp: a variable's handle.
fn destroy_cases(d: &mut Draw<'_>) -> Result<Case> {
    let (var, _) = variable(d, true)?;
    Ok(Case::new()
        .input(var.handle().clone())
        .attr("ignore_lookup_error", d.bool()))
}

inventory::submit! { OpCheckRegistration::generator("ReadVariableOp", read_cases, file!(), line!()) }
inventory::submit! { OpCheckRegistration::generator("AssignVariableOp", assign_cases, file!(), line!()) }
inventory::submit! {
    OpCheckRegistration::generator("VarIsInitializedOp", is_initialized_cases, file!(), line!())
}
inventory::submit! {
    OpCheckRegistration::generator("DestroyResourceOp", destroy_cases, file!(), line!())
}
