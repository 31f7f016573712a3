//! Our gradients in TensorFlow, with no Python written by the op's author.
//!
//! For each exported op with a `#[gradient]`, the library registers a
//! gradient op, `OpkitGradient>{op}`, whose kernel evaluates our gradient
//! function on our runtime (its eager form, on tensors); the package's
//! `tensorflow.py` registers a Python gradient for the op
//! (`tf.RegisterGradient`) that calls it. Ops marked `not_differentiable`
//! get `tf.no_gradient`.
//!
//! Why a gradient op rather than replaying our gradient's ops as
//! TensorFlow ops: a gradient function may use any of our ops, including
//! those TensorFlow lacks or has with other semantics, and its exact code
//! runs either way; TensorFlow's tape and `tf.gradients` see one op, whose
//! own gradient (a second derivative) is not there yet.
//!
//! The gradient op of an op with inputs `x`, outputs `y` and attrs `A`:
//!
//! ```text
//! OpkitGradient>Op[A](x_<input>..., y_<output>..., dy_<output>...) -> (dx_<input>...)
//! ```
//!
//! each arg of the type of the forward arg it stands for. An input our
//! gradient gives no gradient for gets zeros (the Python side turns those
//! of integer inputs into `None`).

use op_core::registry::OpEntry;
use op_core::{ArgDef, OpDef};
use serde_json::{Value, json};

/// The prefix of gradient ops' names.
pub const PREFIX: &str = "OpkitGradient>";

/// The gradient op of `op`, when it has a gradient function.
pub fn gradient_op_name(op: &OpEntry) -> Option<String> {
    op_host::gradient::has_gradient(op).then(|| format!("{PREFIX}{}", op.def().name))
}

pub use op_host::gradient::is_not_differentiable;

/// The spec strings of the gradient op of `def`: attrs, inputs, outputs.
///
/// ```
/// op_kernels::link();
/// let def = op_core::Registry::global().op("ZeroOutPolymorphic")?.def();
/// let (attrs, inputs, outputs) = op_tf::gradient::specs(def);
/// assert_eq!(attrs, ["T: {float, double, int32} = DT_INT32"]);
/// assert_eq!(inputs, ["x_to_zero: T", "y_zeroed: T", "dy_zeroed: T"]);
/// assert_eq!(outputs, ["dx_to_zero: T"]);
/// # Ok::<(), op_core::Error>(())
/// ```
pub fn specs(def: &OpDef) -> (Vec<String>, Vec<String>, Vec<String>) {
    let arg = |prefix: &str, a: &ArgDef| {
        let spec = a.to_spec();
        let ty = spec.split_once(':').map_or("", |(_, ty)| ty.trim());
        let ty = ty
            .strip_prefix("Ref(")
            .and_then(|t| t.strip_suffix(')'))
            .unwrap_or(ty);
        format!("{prefix}{}: {ty}", a.name)
    };
    let attrs = def.attrs.iter().map(|a| a.to_spec()).collect();
    let inputs = (def.inputs.iter().map(|a| arg("x_", a)))
        .chain(def.outputs.iter().map(|a| arg("y_", a)))
        .chain(def.outputs.iter().map(|a| arg("dy_", a)))
        .collect();
    let outputs = def.inputs.iter().map(|a| arg("dx_", a)).collect();
    (attrs, inputs, outputs)
}

/// What the Python side needs to call the gradient op, beyond what it
/// knows of the op (its args and attrs, `manifest::op_entry`): the gradient
/// op's name and its wrapper's.
pub(crate) fn manifest_entry(op: &OpEntry) -> Value {
    let Some(name) = gradient_op_name(op) else {
        return json!(null);
    };
    json!({
        "op": name,
        "python_name": crate::manifest::python_name(&name),
    })
}

/// A gradient op's kernel state: our gradient of the forward node
/// (every host runs it the same way, [`op_host::gradient`]).
pub(crate) type GradientKernel = op_host::gradient::GradientRunner;
