//! The declarations of `Identity`, `IdentityN`, `NoOp` and `StopGradient`
//! (TensorFlow's `array_ops.cc` and `no_op.cc` signatures) and their shape
//! functions.

use op_core::shape_inference::InferenceContext;
use op_core::{Result, register_op};

/// No outputs, and nothing to check (TensorFlow's `NoOutputs`).
pub fn no_outputs(_c: &mut InferenceContext<'_>) -> Result<()> {
    Ok(())
}

/// Returns its input, the same buffer (no copy).
///
/// input: any tensor.
/// output: `input` itself.
#[register_op(
    attrs("T: type"),
    inputs("input: T"),
    outputs("output: T"),
    shape = "unchanged"
)]
pub struct Identity;

/// Returns each of its inputs, the same buffers (no copies).
///
/// input: any tensors.
/// output: `input` itself, tensor by tensor.
#[register_op(
    attrs("T: list(type) >= 1"),
    inputs("input: T"),
    outputs("output: T"),
    shape = "pass_through"
)]
pub struct IdentityN;

/// Does nothing: a node that only orders others through its control
/// inputs, or a target that groups them.
#[register_op(shape_fn = no_outputs)]
pub struct NoOp;

/// Returns its input, the same buffer; gradients do not flow through it.
///
/// input: any tensor.
/// output: `input` itself.
#[register_op(
    attrs("T: type"),
    inputs("input: T"),
    outputs("output: T"),
    shape = "unchanged"
)]
pub struct StopGradient;
