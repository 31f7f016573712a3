//! Gradients: what a gradient function is written against, and how one is
//! registered.
//!
//! A gradient function turns the gradients of a loss with respect to an
//! op's outputs into its gradients with respect to the op's inputs, by
//! building other ops (TensorFlow's `RegisterGradient`). It is written
//! once, generic over the kind of [`Value`] it builds with, and serves both
//! modes of differentiation:
//!
//! - **symbolic** (`tf.gradients`): the values are a graph's [`Output`]s
//!   and every op it runs adds a node;
//! - **eager** (a gradient tape): the values are [`Tensor`]s and every op
//!   runs at once (through the runtime, so an outer tape records them:
//!   that is how second derivatives work).
//!
//! The function receives a [`Gradient`]: the forward node (its attrs, input
//! and output dtypes and shapes), its inputs and outputs, and one incoming
//! gradient per output (none for an output nobody used). It returns one
//! optional gradient per input (flattened: a list input counts one per
//! tensor). The typed wrappers run on the [`Gradient`] itself, which is an
//! [`Executor`].
//!
//! ```standalone_crate
//! use op_core::gradient::{Gradient, Value};
//! use op_core::Result;
//! # mod ops {
//! #     #[op_core::register_op(attrs("T: {float, double}"), inputs("x: T"), outputs("y: T"))]
//! #     pub struct Sin2;
//! #     #[op_core::register_op(attrs("T: {float, double}"), inputs("x: T"), outputs("y: T"))]
//! #     pub struct Cos2;
//! #     #[op_core::register_op(attrs("T: {float, double}"), inputs("x: T", "y: T"), outputs("z: T"))]
//! #     pub struct Mul2;
//! # }
//! # use ops::{Cos2, Mul2, Sin2};
//!
//! /// d sin(x) = cos(x) dx
//! #[op_core::gradient(op = Sin2)]
//! fn sin_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
//!     let cos = Cos2::call_with(g.input(0)).run_on(g)?;
//!     Ok([Some(Mul2::call_with(g.grad(0)?, cos).run_on(g)?)])
//! }
//!
//! // Collected at link time: the registry has it, from this file.
//! let registration = op_core::Registry::global().gradient("Sin2")?.expect("registered");
//! assert!(registration.functions.is_some());
//! assert_eq!(registration.file, file!());
//! # Ok::<(), op_core::Error>(())
//! ```
//!
//! Ops that have no gradient but may lie on a path (hash table lookups,
//! comparisons) are marked with `not_differentiable` on `#[register_op]`,
//! or with [`not_differentiable!`](crate::not_differentiable) for ops
//! declared elsewhere (TensorFlow's `tf.no_gradient`). Integer, boolean and
//! string values never receive gradients ([`is_trainable`]).
//!
//! The algorithms (the tape, `gradients`, the checker) live in
//! `op-autodiff`; this module is the part generated code and kernel
//! crates need. `recording.rs` holds the seam through which a tape sees
//! the ops run on its thread.

pub mod recording;

use std::fmt;
use std::sync::Arc;

use op_spec::{DType, OpDef};

use crate::executor::Executor;
use crate::op_instance::{FromAttrValue, OpInstance};
use crate::runtime::OpCall;
use crate::shape_inference::PartialShape;
use crate::symbolic::Output;
use crate::tensor::Tensor;
use crate::{Error, Result};

/// What a gradient function builds with: [`Tensor`] (eager, on a tape) or
/// [`Output`] (symbolic, in a graph). Sealed: the macros instantiate each
/// gradient function for exactly these two.
pub trait Value: Clone + fmt::Debug + Send + Sync + 'static + sealed::Sealed {}

impl Value for Tensor {}
impl Value for Output {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for crate::Tensor {}
    impl Sealed for crate::symbolic::Output {}
}

/// Whether values of `dtype` carry gradients: floating-point and complex
/// numbers, and resources (a variable's handle receives the gradient of
/// what was read from it). Integers, booleans and strings never do.
pub fn is_trainable(dtype: DType) -> bool {
    dtype.is_float() || dtype.is_complex() || dtype == DType::Resource
}

/// What a gradient function's ops run on: an executor (eager or
/// symbolic) that can also make constants and tell a value's dtype and
/// shape.
pub trait GradientBuilder: Executor {
    /// `value` as a value of this builder (a graph adds a `Const` node).
    fn constant(&self, value: Tensor) -> Result<Self::Value>;
    /// The dtype of `value`.
    fn dtype(&self, value: &Self::Value) -> Result<DType>;
    /// The shape of `value`, as far as known (an eager value's is fully
    /// known).
    fn shape(&self, value: &Self::Value) -> Result<PartialShape>;
}

/// The forward node whose gradient is wanted, and the gradients flowing
/// into its outputs: what a gradient function receives (see the
/// [module docs](self)).
///
/// Runs the ops the function builds: it is an [`Executor`] over the mode's
/// values, so `Op::call_with(..).run_on(g)` works in both modes.
pub struct Gradient<'a, V> {
    builder: &'a dyn GradientBuilder<Value = V>,
    op: &'a Arc<OpDef>,
    node: &'a OpInstance,
    inputs: &'a [V],
    outputs: &'a [V],
    grads: &'a [Option<V>],
}

impl<V> fmt::Debug for Gradient<'_, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Gradient")
            .field("node", &self.node)
            .field("inputs", &self.inputs.len())
            .field("outputs", &self.outputs.len())
            .finish_non_exhaustive()
    }
}

impl<'a, V: Value> Gradient<'a, V> {
    /// The context for the gradient of node `node` (of op `op`) with these
    /// inputs and outputs (flattened), given `grads`, one per output;
    /// `builder` runs the ops. What the tape and `gradients` make.
    pub fn new(
        builder: &'a dyn GradientBuilder<Value = V>,
        op: &'a Arc<OpDef>,
        node: &'a OpInstance,
        inputs: &'a [V],
        outputs: &'a [V],
        grads: &'a [Option<V>],
    ) -> Result<Self> {
        let (want_in, want_out) = (node.input_types().len(), node.output_types().len());
        if inputs.len() != want_in || outputs.len() != want_out || grads.len() != want_out {
            return Err(Error::internal(format!(
                "the gradient of {node} needs {want_in} input(s), {want_out} output(s) and {want_out} gradient(s), got {}, {} and {}",
                inputs.len(),
                outputs.len(),
                grads.len()
            )));
        }
        Ok(Gradient {
            builder,
            op,
            node,
            inputs,
            outputs,
            grads,
        })
    }

    /// The op's definition.
    pub fn op_def(&self) -> &Arc<OpDef> {
        self.op
    }

    /// The forward node: its name, resolved attrs, input and output dtypes.
    pub fn node(&self) -> &OpInstance {
        self.node
    }

    /// The value of attr `name` of the forward node, e.g.
    /// `g.attr::<bool>("transpose_a")`.
    pub fn attr<T: FromAttrValue>(&self, name: &str) -> Result<T> {
        self.node.get_attr(name)
    }

    /// Input `index` of the forward node (flattened).
    pub fn input(&self, index: usize) -> V {
        self.inputs[index].clone()
    }

    /// The forward node's inputs (flattened).
    pub fn inputs(&self) -> &[V] {
        self.inputs
    }

    /// Output `index` of the forward node (flattened).
    pub fn output(&self, index: usize) -> V {
        self.outputs[index].clone()
    }

    /// The forward node's outputs (flattened).
    pub fn outputs(&self) -> &[V] {
        self.outputs
    }

    /// The dtype of input `index`.
    pub fn input_dtype(&self, index: usize) -> DType {
        self.node.input_types()[index]
    }

    /// The dtype of output `index`.
    pub fn output_dtype(&self, index: usize) -> DType {
        self.node.output_types()[index]
    }

    /// The shape of input `index`, as far as known.
    pub fn input_shape(&self, index: usize) -> Result<PartialShape> {
        self.builder.shape(&self.inputs[index])
    }

    /// The shape of output `index`, as far as known.
    pub fn output_shape(&self, index: usize) -> Result<PartialShape> {
        self.builder.shape(&self.outputs[index])
    }

    /// The gradient flowing into output `index`, if any op used the output.
    pub fn output_grad(&self, index: usize) -> Option<&V> {
        self.grads[index].as_ref()
    }

    /// The gradients flowing into the outputs, one per output.
    pub fn output_grads(&self) -> &[Option<V>] {
        self.grads
    }

    /// The gradient flowing into output `index`, or zeros of the output's
    /// shape (`ZerosLike`) when nobody used it.
    pub fn grad(&self, index: usize) -> Result<V> {
        match &self.grads[index] {
            Some(grad) => Ok(grad.clone()),
            None => OpCall::with_values("ZerosLike")
                .input(self.output(index))
                .run_on(self.builder)
                .map(|mut outputs| outputs.remove(0)),
        }
    }

    /// `value` as a value of this mode (a graph adds a `Const` node).
    pub fn constant(&self, value: impl Into<Tensor>) -> Result<V> {
        self.builder.constant(value.into())
    }

    /// The dtype of any value of this mode.
    pub fn dtype_of(&self, value: &V) -> Result<DType> {
        self.builder.dtype(value)
    }

    /// The shape of any value of this mode, as far as known.
    pub fn shape_of(&self, value: &V) -> Result<PartialShape> {
        self.builder.shape(value)
    }

    /// An `InvalidArgument` error about this gradient, naming the node.
    pub fn error(&self, message: impl fmt::Display) -> Error {
        Error::invalid_argument(format!("gradient of {}: {message}", self.node))
    }
}

impl<V> Executor for Gradient<'_, V> {
    type Value = V;

    fn execute(&self, call: OpCall<'_, V>) -> Result<Vec<V>> {
        self.builder.execute(call)
    }

    fn execute_grouped(&self, call: OpCall<'_, V>) -> Result<Vec<Vec<V>>> {
        self.builder.execute_grouped(call)
    }
}

/// A gradient function for values `V`: one optional gradient per input of
/// the forward node (flattened).
pub type GradientFn<V> = fn(&Gradient<'_, V>) -> Result<Vec<Option<V>>>;

/// One gradient function, instantiated for both modes.
#[derive(Clone, Copy, Debug)]
pub struct GradientFunctions {
    /// On tensors, for a tape.
    pub eager: GradientFn<Tensor>,
    /// On graph outputs, for `gradients`.
    pub symbolic: GradientFn<Output>,
}

/// A gradient submitted to the registry: `#[gradient(op = ...)]`,
/// `not_differentiable` on `#[register_op]`, or
/// [`not_differentiable!`](crate::not_differentiable).
///
/// `#[non_exhaustive]`: built with [`GradientRegistration::new`] or
/// [`GradientRegistration::not_differentiable`] (both `const`, for
/// `inventory::submit!`).
#[derive(Debug)]
#[non_exhaustive]
pub struct GradientRegistration {
    /// The op whose gradient this is.
    pub op: &'static str,
    /// The gradient function; `None` when the op is not differentiable
    /// (nothing flows back through it, and that is not an error).
    pub functions: Option<GradientFunctions>,
    /// Where the gradient was declared (`file!()`).
    pub file: &'static str,
    /// The line where the gradient was declared (`line!()`).
    pub line: u32,
    /// The module that declared it (`module_path!()`; empty when not
    /// recorded): its first segment is the crate that
    /// [`require_linked!`](crate::require_linked) counts it for.
    pub module_path: &'static str,
}

impl GradientRegistration {
    /// The gradient of `op`, instantiated for both modes.
    pub const fn new(
        op: &'static str,
        eager: GradientFn<Tensor>,
        symbolic: GradientFn<Output>,
        file: &'static str,
        line: u32,
    ) -> Self {
        GradientRegistration {
            op,
            functions: Some(GradientFunctions { eager, symbolic }),
            file,
            line,
            module_path: "",
        }
    }

    /// `op` has no gradient: a path through it carries none (TensorFlow's
    /// `NotDifferentiable`).
    pub const fn not_differentiable(op: &'static str, file: &'static str, line: u32) -> Self {
        GradientRegistration {
            op,
            functions: None,
            file,
            line,
            module_path: "",
        }
    }

    /// The same registration, declared in module `module_path`
    /// (`module_path!()`).
    pub const fn with_module_path(mut self, module_path: &'static str) -> Self {
        self.module_path = module_path;
        self
    }

    /// `file:line`, for messages.
    pub fn location(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }
}

inventory::collect!(GradientRegistration);

/// What a gradient function may return: one optional gradient per input,
/// as an array (its length checked against the op at compile time by
/// `#[gradient]`) or a `Vec` (for ops with list inputs).
#[diagnostic::on_unimplemented(
    message = "a gradient function returns one optional gradient per input of the op, not `{Self}`",
    label = "not `Result<[Option<V>; N]>` or `Result<Vec<Option<V>>>`",
    note = "return `Result<[Option<V>; N]>` (N = the op's number of inputs) or, for an op with list inputs, `Result<Vec<Option<V>>>`; `None` for an input that receives no gradient"
)]
pub trait IntoGradients<V> {
    /// The gradients, one per input (flattened).
    fn into_gradients(self) -> Vec<Option<V>>;
}

impl<V, const N: usize> IntoGradients<V> for [Option<V>; N] {
    fn into_gradients(self) -> Vec<Option<V>> {
        self.into()
    }
}

impl<V> IntoGradients<V> for Vec<Option<V>> {
    fn into_gradients(self) -> Vec<Option<V>> {
        self
    }
}

/// Marks ops declared elsewhere as not differentiable, as TensorFlow's
/// `tf.no_gradient` does: a path through them carries no gradient, and that
/// is not an error. For an op declared with `#[register_op]`, write
/// `not_differentiable` in its attribute instead.
///
/// ```
/// op_core::not_differentiable!("Examples>SimpleHashTableFind", "Examples>SimpleHashTableInsert");
/// ```
#[macro_export]
macro_rules! not_differentiable {
    ($($op:literal),+ $(,)?) => {$(
        $crate::inventory::submit! {
            $crate::gradient::GradientRegistration::not_differentiable($op, file!(), line!())
                .with_module_path(module_path!())
        }
    )+};
}

/// The eager builder: a gradient function's ops run at once on the
/// runtime (and are seen by any tape active on the thread: that is how a
/// tape records a gradient computation for a second derivative).
impl GradientBuilder for crate::Runtime {
    fn constant(&self, value: Tensor) -> Result<Tensor> {
        Ok(value)
    }

    fn dtype(&self, value: &Tensor) -> Result<DType> {
        Ok(value.dtype())
    }

    fn shape(&self, value: &Tensor) -> Result<PartialShape> {
        Ok(PartialShape::known(value.dims()))
    }
}
