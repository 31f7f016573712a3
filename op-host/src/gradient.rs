//! Our gradient functions run for a host: a host that differentiates one
//! of our ops (TensorFlow's tape, `jax.grad` through a `custom_vjp`) hands
//! us the forward inputs, outputs and incoming gradients, and gets one
//! gradient per forward input, computed by the op's own `#[gradient]` on
//! our runtime (its eager form, on tensors).
//!
//! ```
//! op_kernels::link();
//! use op_core::{DType, Runtime, Tensor};
//! let zero_out = op_core::Registry::global().op("ZeroOutPolymorphic")?;
//! let attrs = [("T", op_core::AttrValue::Type(DType::F32))];
//! let gradient = op_host::gradient::GradientRunner::new(zero_out, &attrs)?;
//! let x = Tensor::from_vec([3], vec![1.0f32, 2.0, 3.0])?;
//! let y = Tensor::from_vec([3], vec![1.0f32, 0.0, 0.0])?;
//! let dy = Tensor::from_vec([3], vec![1.0f32, 1.0, 1.0])?;
//! let dx = gradient.run(Runtime::global(), &[x, y, dy])?;
//! assert_eq!(dx[0].as_slice::<f32>()?, [1.0, 0.0, 0.0]);
//! # Ok::<(), op_core::Error>(())
//! ```

use op_core::gradient::{Gradient, GradientFunctions};
use op_core::registry::OpEntry;
use op_core::{AttrValue, Error, OpDef, OpInstance, Registry, Result, Runtime, Tensor};

/// The gradient functions of op `op`, when it has them.
pub fn functions(op: &str) -> Option<GradientFunctions> {
    Registry::global()
        .gradient(op)
        .ok()
        .flatten()
        .and_then(|g| g.functions)
}

/// Whether `op` has a `#[gradient]`.
pub fn has_gradient(op: &OpEntry) -> bool {
    functions(&op.def().name).is_some()
}

/// Whether `op` is marked `not_differentiable`.
pub fn is_not_differentiable(op: &OpEntry) -> bool {
    matches!(
        Registry::global().gradient(&op.def().name),
        Ok(Some(registration)) if registration.functions.is_none()
    )
}

/// Our gradient of one node of an op (its attrs fixed), ready to run.
pub struct GradientRunner {
    op: std::sync::Arc<OpDef>,
    node: OpInstance,
    functions: GradientFunctions,
}

impl GradientRunner {
    /// The gradient of a node of `forward` with these attrs (its input
    /// dtypes from them, [`crate::kernel::input_types`]).
    pub fn new(forward: &OpEntry, attrs: &[(&str, AttrValue)]) -> Result<GradientRunner> {
        let def = forward.def();
        let functions = functions(&def.name).ok_or_else(|| {
            Error::unimplemented(format!("op {} has no gradient function", def.name))
        })?;
        let node = forward.instance(&crate::kernel::input_types(def, attrs)?, attrs)?;
        Ok(GradientRunner {
            op: def.clone(),
            node,
            functions,
        })
    }

    /// How many tensors [`run`](Self::run) takes: the forward inputs,
    /// outputs, and a gradient per output.
    pub fn arity(&self) -> usize {
        self.node.input_types().len() + 2 * self.node.output_types().len()
    }

    /// Our gradient on `tensors` (the forward inputs, outputs and incoming
    /// gradients, flattened), on `runtime`: one gradient per forward
    /// input, zeros where ours gives none.
    pub fn run(&self, runtime: &Runtime, tensors: &[Tensor]) -> Result<Vec<Tensor>> {
        let (n_in, n_out) = (
            self.node.input_types().len(),
            self.node.output_types().len(),
        );
        if tensors.len() != self.arity() {
            return Err(Error::invalid_argument(format!(
                "the gradient of {} takes {} tensors, but got {}",
                self.op.name,
                self.arity(),
                tensors.len()
            )));
        }
        let (inputs, rest) = tensors.split_at(n_in);
        let (outputs, grads) = rest.split_at(n_out);
        let grads: Vec<Option<Tensor>> = grads.iter().cloned().map(Some).collect();
        let gradient = Gradient::new(runtime, &self.op, &self.node, inputs, outputs, &grads)?;
        let result = (self.functions.eager)(&gradient)?;
        inputs
            .iter()
            .zip(result.into_iter().chain(std::iter::repeat(None)))
            .map(|(input, grad)| match grad {
                Some(grad) => Ok(grad),
                None => Tensor::zeros(input.dtype(), input.dims()),
            })
            .collect()
    }
}
