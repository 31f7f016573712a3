//! The gradients of the variable ops (TensorFlow's
//! `resource_variable_ops.py`): the gradient of a value read with
//! `ReadVariableOp` goes to the variable's handle unchanged (`_ReadGrad`),
//! which is how a tape or `gradients` reaches a variable.
//! `VarIsInitializedOp` is not differentiable, as in TensorFlow;
//! `VarHandleOp` has no inputs, and `AssignVariableOp` and
//! `DestroyResourceOp` no outputs, so no gradient reaches them.

use op_core::Result;
use op_core::gradient::{Gradient, Value};

use super::ops::ReadVariableOp;

op_core::not_differentiable!("VarIsInitializedOp");

/// d read(handle) = grad, for the handle.
#[op_core::gradient(op = ReadVariableOp)]
fn read_variable_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    Ok([Some(g.grad(0)?)])
}
