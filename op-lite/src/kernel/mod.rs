//! The kernel interface: TensorFlow Lite's four phases, the Rust way.
//!
//! TensorFlow Lite's `TfLiteRegistration` is four C function pointers over
//! a `void*` of user data:
//!
//! | TensorFlow Lite | here |
//! | --- | --- |
//! | `init(context, buffer, length) -> void*` | [`LiteOp::init`]`(&InitContext) -> Box<dyn LiteNode>`: the custom options decoded ([`InitContext::option`]), the builtin options parsed |
//! | `prepare(context, node)` | [`LiteNode::prepare`]`(&mut PrepareContext)`: check inputs, set output shapes and dtypes, request temporaries |
//! | `invoke(context, node)` | [`LiteNode::invoke`]`(&mut InvokeContext)`: compute into the planned buffers, through typed slices |
//! | `free(context, buffer)` | `Drop` of the node |
//!
//! The split into two traits replaces the `void* user_data`: the op (one per
//! registration, shared, `Send + Sync`) makes a node (one per operator in
//! the model, owning its state), and the node's methods reach that state as
//! `&mut self` rather than through a cast. A kernel with no state, such as
//! the seed's `Sin` (`{nullptr, nullptr, SinPrepare, SinEval}`), is two
//! plain functions in an [`FnOp`].
//!
//! Kernels report failures as [`op_core::Error`]s, most often through the
//! `TF_LITE_ENSURE` family ([`lite_ensure!`](crate::lite_ensure),
//! [`lite_ensure_eq!`](crate::lite_ensure_eq), ...); the interpreter adds
//! TensorFlow Lite's frame, `Node number 3 (CONV_2D) failed to prepare.`, to
//! every error a kernel returns.
//!
//! # Example: the seed's `Sin`, as two functions
//!
//! ```
//! use op_lite::kernel::{FnOp, InvokeContext, PrepareContext};
//! use op_lite::{lite_ensure_eq, lite_ensure_types_eq, MutableOpResolver};
//! use op_core::{DType, Result};
//!
//! fn sin_prepare(ctx: &mut PrepareContext<'_>) -> Result<()> {
//!     lite_ensure_eq!(ctx, ctx.num_inputs(), 1);
//!     lite_ensure_eq!(ctx, ctx.num_outputs(), 1);
//!     lite_ensure_types_eq!(ctx, ctx.input_dtype(0)?, DType::F32);
//!     let shape = ctx.input_shape(0)?;
//!     ctx.set_output_dtype(0, DType::F32)?;
//!     ctx.set_output_shape(0, shape)
//! }
//!
//! fn sin_eval(ctx: &mut InvokeContext<'_>) -> Result<()> {
//!     let input = ctx.input::<f32>(0)?;
//!     let output = ctx.output_mut::<f32>(0)?;
//!     for (y, x) in output.iter_mut().zip(input) {
//!         *y = x.sin();
//!     }
//!     Ok(())
//! }
//!
//! let mut resolver = MutableOpResolver::new();
//! resolver.add_custom("Sin", FnOp::new(sin_prepare, sin_eval));
//! ```
//!
//! The [crate's front page](crate) runs it on a model.

mod context;
mod ensure;
mod options;

pub(crate) use context::{ArenaView, HostBytes, NodeId, Phase};
pub use context::{InitContext, InvokeContext, NodeInfo, PrepareContext, TemporaryLifetime};
pub use options::{CustomOptions, FromOption, OptionValue};

use op_core::{Element, Result};

/// An op's registration: what the resolver finds for a builtin code or a
/// custom name, and what makes one [`LiteNode`] per operator of a model.
///
/// Object-safe and shared (`Send + Sync`): one registration serves every
/// interpreter and every node that uses the op.
pub trait LiteOp: Send + Sync {
    /// Makes the state of one node, once, when the interpreter is built
    /// (TensorFlow Lite's `init`). `ctx` has the node's builtin options and
    /// its custom options, decoded on demand.
    fn init(&self, ctx: &InitContext<'_>) -> Result<Box<dyn LiteNode>>;
}

/// One node of a running model: its state and its behaviour. Dropping it is
/// TensorFlow Lite's `free`.
pub trait LiteNode: Send {
    /// Checks the inputs (counts, dtypes, shapes), sets the outputs' shapes
    /// and dtypes, and requests temporaries. Runs on the first
    /// [`allocate_tensors`](crate::Interpreter::allocate_tensors) and again
    /// after an input is resized; may allocate.
    fn prepare(&mut self, ctx: &mut PrepareContext<'_>) -> Result<()>;

    /// Computes the outputs from the inputs, in the buffers that
    /// `allocate_tensors` planned. Must not allocate: what it needs beyond
    /// its inputs and outputs it requests as temporaries in `prepare`.
    fn invoke(&mut self, ctx: &mut InvokeContext<'_>) -> Result<()>;
}

/// The `prepare` of a kernel without state.
pub type PrepareFn = fn(&mut PrepareContext<'_>) -> Result<()>;

/// The `invoke` of a kernel without state.
pub type InvokeFn = fn(&mut InvokeContext<'_>) -> Result<()>;

/// A kernel without state, as two functions: TensorFlow Lite's
/// `{nullptr, nullptr, Prepare, Eval}`. It is both the registration and
/// the node (a copy of the two pointers).
///
/// See the [module example](self).
#[derive(Copy, Clone, Debug)]
pub struct FnOp {
    prepare: PrepareFn,
    invoke: InvokeFn,
}

impl FnOp {
    /// The kernel whose phases are `prepare` and `invoke`.
    pub const fn new(prepare: PrepareFn, invoke: InvokeFn) -> FnOp {
        FnOp { prepare, invoke }
    }
}

impl LiteOp for FnOp {
    fn init(&self, _ctx: &InitContext<'_>) -> Result<Box<dyn LiteNode>> {
        Ok(Box::new(*self))
    }
}

impl LiteNode for FnOp {
    fn prepare(&mut self, ctx: &mut PrepareContext<'_>) -> Result<()> {
        (self.prepare)(ctx)
    }

    fn invoke(&mut self, ctx: &mut InvokeContext<'_>) -> Result<()> {
        (self.invoke)(ctx)
    }
}

/// An element type whose tensors a kernel can see as a typed slice of the
/// arena: any plain type (every bit pattern a value, no drop), which is
/// every fixed-size dtype but `bool`. A `bool` tensor's bytes are reached
/// with the `*_bytes` accessors.
pub trait ArenaElement: Element + bytemuck::Pod {}

impl<T: Element + bytemuck::Pod> ArenaElement for T {}
