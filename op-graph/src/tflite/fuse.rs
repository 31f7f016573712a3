//! The converter's fusions: a node folded into the operator before it,
//! where that operator's output is read by the node alone. Fewer operators,
//! fewer tensors in the arena, and the models look like the converter's.

use op_core::{DType, Result};
use op_lite::model::{Activation, BuiltinOperator, BuiltinOptions};

use super::lower::Lowering;
use crate::graph::Node;

/// Folds `node`, a float32 `Relu`, into the operator that computes its
/// input as that operator's fused activation, if it has one and it is
/// unset; whether it did.
pub(super) fn activation(l: &mut Lowering<'_>, node: &Node) -> bool {
    let fused = match node.op() {
        "Relu" => Activation::Relu,
        _ => return false,
    };
    if node.output_dtype(0) != Some(DType::F32) {
        return false;
    }
    let input = node.inputs()[0];
    let Some((op, tensor)) = l.sole_producer(input) else {
        return false;
    };
    let (_, operator) = l.operator_mut(op);
    let slot = match &mut operator.builtin_options {
        BuiltinOptions::Arithmetic { activation }
        | BuiltinOptions::FullyConnected { activation, .. }
        | BuiltinOptions::Concatenation { activation, .. } => activation,
        _ => return false,
    };
    if *slot != Activation::None {
        return false;
    }
    *slot = fused;
    l.fuse_into(node, input, tensor);
    true
}

/// Folds `node`, an `AddV2` of a `FULLY_CONNECTED`'s output (without bias
/// or activation) and a float32 constant vector of its units, into that
/// operator as its bias; whether it did.
pub(super) fn bias(l: &mut Lowering<'_>, node: &Node) -> Result<bool> {
    if node.op() != "AddV2" || node.output_dtype(0) != Some(DType::F32) {
        return Ok(false);
    }
    for (x, b) in [(0, 1), (1, 0)] {
        let (x, b) = (node.inputs()[x], node.inputs()[b]);
        let Some(bias) = l.constant(b) else { continue };
        let units = match bias.dims() {
            &[units] if bias.dtype() == DType::F32 => units,
            _ => continue,
        };
        let Some((op, tensor)) = l.sole_producer(x) else {
            continue;
        };
        if l.tensor_shape(tensor).last() != Some(&units) {
            continue;
        }
        let (code, operator) = l.operator_mut(op);
        let unfused = matches!(
            operator.builtin_options,
            BuiltinOptions::FullyConnected {
                activation: Activation::None,
                ..
            }
        );
        if code != BuiltinOperator::FULLY_CONNECTED || !unfused || operator.inputs[2].is_some() {
            continue;
        }
        let bias = l.input_tensor(b)?;
        l.operator_mut(op).1.inputs[2] = Some(bias);
        l.fuse_into(node, x, tensor);
        return Ok(true);
    }
    Ok(false)
}
