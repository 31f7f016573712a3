//! The framework's ops in the lite runtime, without writing them twice.
//!
//! Any op of the framework (`op_core::Registry`) that has a shape function
//! and a CPU kernel runs as a custom op of a `.tflite` model:
//! [`FrameworkOps`] is a resolver that finds, for a custom op's name, the
//! framework op of that name, and runs it with TensorFlow Lite's phases:
//!
//! | phase | from |
//! | --- | --- |
//! | `init` | the node's custom options, decoded into the op's attrs ([`crate::attrs::decode_attrs`]: the map TensorFlow's converter writes with `allow_custom_ops=True`) |
//! | `prepare` | the op instance and its kernel, made once (dtype inference); the op's shape function on the input shapes (and the values of constant inputs), which must give fully known output shapes |
//! | `invoke` | the kernel, its inputs lent from the arena and its outputs placed in the arena ([`PreparedOp::run_placed`]) |
//!
//! A kernel that makes its outputs through `allocate_output` or the
//! elementwise helpers writes straight into the arena, and an invoke
//! allocates nothing the kernel does not allocate itself. An output the
//! kernel made otherwise (its own tensor, a forwarded input) is copied into
//! the arena.
//!
//! Stateful ops (resources, variables, random ops) are refused: the lite
//! runtime lends a kernel its tensors for one call only, and a stateful
//! kernel may keep them. `bool` and `string` tensors are refused too (the
//! arena's bytes are lent as they are, and only plain types can be).
//!
//! ```
//! use op_lite::bridge::FrameworkOps;
//! use op_lite::{MutableOpResolver, OpResolver};
//!
//! op_kernels::link();
//! // Builtins from a MutableOpResolver; custom ops it lacks from the framework.
//! let resolver = FrameworkOps::new().over(MutableOpResolver::new());
//! assert!(resolver.find_custom("Cumprod", 1).is_some());
//! assert!(resolver.find_custom("NoSuchOp", 1).is_none());
//! ```

use std::collections::HashMap;
use std::sync::Arc;

use op_core::registry::OpEntry;
use op_core::shape_inference::{InferenceContext, PartialShape};
use op_core::{
    AttrValue, DType, Error, InputTypes, OpDef, PreparedOp, Registry, Result, Runtime, Tensor,
};

use crate::attrs::{Attrs, decode_attrs};
use crate::kernel::{InitContext, InvokeContext, LiteNode, LiteOp, PrepareContext};
use crate::model::BuiltinOperator;
use crate::resolver::{OpResolver, Versions};

/// A resolver of the framework's ops as custom ops, by name (any version):
/// see the [module docs](self).
///
/// Made once from a registry: every op there with a shape function becomes
/// a registration, sharing one runtime (which makes each distinct node's
/// kernel once).
pub struct FrameworkOps {
    ops: HashMap<String, FrameworkOp>,
}

impl FrameworkOps {
    /// The ops of the global registry (`op_core::Registry::global()`): the
    /// ops linked into the program.
    pub fn new() -> FrameworkOps {
        FrameworkOps::with_registry(Registry::global().clone())
    }

    /// The ops of `registry`.
    pub fn with_registry(registry: Arc<Registry>) -> FrameworkOps {
        let runtime = Arc::new(Runtime::with_registry(registry.clone()));
        let ops = registry
            .ops()
            .filter(|entry| entry.shape_fn().is_some())
            .map(|entry| {
                let def = entry.def().clone();
                (
                    def.name.clone(),
                    FrameworkOp {
                        def,
                        registry: registry.clone(),
                        runtime: runtime.clone(),
                    },
                )
            })
            .collect();
        FrameworkOps { ops }
    }

    /// A resolver that asks `base` first, and this one for the custom ops
    /// `base` lacks.
    pub fn over<R: OpResolver>(self, base: R) -> Layered<R> {
        Layered {
            base,
            framework: self,
        }
    }

    /// The framework op `name` as a registration, if the registry has it
    /// with a shape function.
    pub fn get(&self, name: &str) -> Option<&FrameworkOp> {
        self.ops.get(name)
    }
}

impl Default for FrameworkOps {
    fn default() -> Self {
        FrameworkOps::new()
    }
}

impl std::fmt::Debug for FrameworkOps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrameworkOps")
            .field("ops", &self.ops.len())
            .finish()
    }
}

impl OpResolver for FrameworkOps {
    fn find_builtin(&self, _op: BuiltinOperator, _version: i32) -> Option<&dyn LiteOp> {
        None
    }

    fn find_custom(&self, name: &str, _version: i32) -> Option<&dyn LiteOp> {
        self.ops.get(name).map(|op| op as &dyn LiteOp)
    }

    fn custom_ops(&self) -> Vec<(String, Versions)> {
        let mut names: Vec<(String, Versions)> = self
            .ops
            .keys()
            .map(|name| (name.clone(), Versions::ALL))
            .collect();
        names.sort_by(|a, b| a.0.cmp(&b.0));
        names
    }
}

/// A resolver over another: `base` first, then the framework's ops for
/// custom names `base` lacks ([`FrameworkOps::over`]).
pub struct Layered<R> {
    base: R,
    framework: FrameworkOps,
}

impl<R> Layered<R> {
    /// The resolver asked first: a custom op it has never reaches the
    /// framework's ops (to tell which of the two runs an op).
    pub fn base(&self) -> &R {
        &self.base
    }
}

impl<R: OpResolver> OpResolver for Layered<R> {
    fn find_builtin(&self, op: BuiltinOperator, version: i32) -> Option<&dyn LiteOp> {
        self.base.find_builtin(op, version)
    }

    fn find_custom(&self, name: &str, version: i32) -> Option<&dyn LiteOp> {
        self.base
            .find_custom(name, version)
            .or_else(|| self.framework.find_custom(name, version))
    }

    fn builtin_ops(&self) -> Vec<(BuiltinOperator, Versions)> {
        self.base.builtin_ops()
    }

    fn custom_ops(&self) -> Vec<(String, Versions)> {
        let mut ops = self.base.custom_ops();
        ops.extend(self.framework.custom_ops());
        ops
    }
}

/// One framework op as a lite registration.
pub struct FrameworkOp {
    def: Arc<OpDef>,
    registry: Arc<Registry>,
    runtime: Arc<Runtime>,
}

impl FrameworkOp {
    fn entry(&self) -> Result<&OpEntry> {
        self.registry
            .get(&self.def.name)
            .ok_or_else(|| Error::internal(format!("op {} left the registry", self.def.name)))
    }
}

impl LiteOp for FrameworkOp {
    fn init(&self, ctx: &InitContext<'_>) -> Result<Box<dyn LiteNode>> {
        let def = &self.def;
        // An op with a resource input or output is stateful too
        // (TensorFlow's rule, which the OpDef builder applies).
        if def.is_stateful {
            return Err(ctx.error(format!(
                "op {} is stateful, and the lite runtime runs only stateless framework ops (it lends a kernel its tensors for one call)",
                def.name
            )));
        }
        let attrs =
            decode_attrs(def, ctx.custom_options_bytes()).map_err(|e| ctx.error(e.message()))?;
        let single = def.inputs.iter().filter(|a| !a.is_list()).count();
        let lists = def.inputs.len() - single;
        if lists > 1 {
            return Err(Error::unimplemented(format!(
                "op {} has {lists} list inputs; the lite runtime runs framework ops with at most one",
                def.name
            )));
        }
        if ctx.num_inputs() < single || (lists == 0 && ctx.num_inputs() != single) {
            return Err(ctx.error(format!(
                "op {} takes {}{single} input(s), but the node has {}",
                def.name,
                if lists == 1 { "at least " } else { "" },
                ctx.num_inputs()
            )));
        }
        Ok(Box::new(FrameworkNode {
            op: FrameworkOp {
                def: def.clone(),
                registry: self.registry.clone(),
                runtime: self.runtime.clone(),
            },
            attrs,
            prepared: None,
            inputs: Vec::new(),
            placed: Vec::new(),
            outputs: Vec::new(),
            addresses: Vec::new(),
        }))
    }
}

/// One node of a model running a framework op.
struct FrameworkNode {
    op: FrameworkOp,
    attrs: Attrs,
    /// The node's kernel, made at the first prepare.
    prepared: Option<Arc<PreparedOp>>,
    /// The inputs, lent from the arena; repointed at every invoke.
    inputs: Vec<Tensor>,
    /// The outputs' arena buffers, lent; repointed at every invoke.
    placed: Vec<Option<Tensor>>,
    /// The kernel's outputs (the placed buffers, when it used them).
    outputs: Vec<Option<Tensor>>,
    /// The placed buffers' addresses, to tell them among the outputs.
    addresses: Vec<Option<usize>>,
}

impl FrameworkNode {
    /// The node's kernel, for the input dtypes: made once (the dtypes of a
    /// model's tensors are fixed).
    fn prepared(&mut self, ctx: &PrepareContext<'_>) -> Result<Arc<PreparedOp>> {
        let mut dtypes = Vec::with_capacity(ctx.num_inputs());
        for i in 0..ctx.num_inputs() {
            if !ctx.has_input(i) {
                return Err(ctx.error(format!(
                    "input {i} is omitted, and framework ops have no optional inputs"
                )));
            }
            let dtype = ctx.input_dtype(i)?;
            check_plain(dtype, format_args!("input {i}"))?;
            dtypes.push(dtype);
        }
        if let Some(prepared) = &self.prepared
            && prepared.instance().input_types() == dtypes
        {
            return Ok(prepared.clone());
        }
        let def = &self.op.def;
        // Flat lite inputs to the op's args: one each, and the rest to the
        // one list arg, if any.
        let single = def.inputs.iter().filter(|a| !a.is_list()).count();
        let list_len = dtypes.len() - single;
        let mut next = dtypes.into_iter();
        let inputs: Vec<InputTypes> = def
            .inputs
            .iter()
            .map(|arg| {
                if arg.is_list() {
                    InputTypes::List(next.by_ref().take(list_len).collect())
                } else {
                    InputTypes::Single(next.next().unwrap_or(DType::F32))
                }
            })
            .collect();
        let attrs: Vec<(&str, AttrValue)> = self
            .attrs
            .iter()
            .map(|(name, value)| (name.as_str(), value.clone()))
            .collect();
        let prepared = self
            .op
            .runtime
            .prepare(&def.name, &inputs, &attrs)
            .map_err(|e| ctx.error(e.message()))?;
        self.prepared = Some(prepared.clone());
        Ok(prepared)
    }
}

/// Refuses a tensor that cannot be lent: only plain types can (`bool`'s
/// arena bytes need not be 0 or 1).
fn check_plain(dtype: DType, what: std::fmt::Arguments<'_>) -> Result<()> {
    if matches!(
        dtype,
        DType::Bool | DType::String | DType::Resource | DType::Variant
    ) {
        return Err(Error::unimplemented(format!(
            "{what} is {dtype}: the lite runtime lends framework kernels tensors of plain types only"
        )));
    }
    Ok(())
}

impl LiteNode for FrameworkNode {
    fn prepare(&mut self, ctx: &mut PrepareContext<'_>) -> Result<()> {
        let prepared = self.prepared(ctx)?;
        let node = prepared.instance();
        let def = prepared.op_def();
        let outputs = node.output_types();
        if ctx.num_outputs() != outputs.len() {
            return Err(ctx.error(format!(
                "{node} has {} output tensor(s), but the node has {}",
                outputs.len(),
                ctx.num_outputs()
            )));
        }
        let shape_fn = self
            .op
            .entry()?
            .shape_fn()
            .ok_or_else(|| ctx.error(format!("op {} has no shape function", def.name)))?;
        let mut shapes = Vec::with_capacity(ctx.num_inputs());
        let mut constants: Vec<Option<Tensor>> = Vec::with_capacity(ctx.num_inputs());
        for i in 0..ctx.num_inputs() {
            let dims = ctx.input_shape(i)?;
            shapes.push(PartialShape::known(dims));
            constants.push(if ctx.is_constant_input(i)? {
                let bytes = ctx.constant_input_bytes(i)?;
                // SAFETY: the model's constant outlives this prepare, which
                // drops the tensor, and nothing writes it. A constant that
                // cannot be lent (misaligned) is left unknown to the shape
                // function, as an input's value is.
                unsafe { Tensor::lend(ctx.input_dtype(i)?, dims, bytes) }.ok()
            } else {
                None
            });
        }
        let constant_refs: Vec<Option<&Tensor>> = constants.iter().map(Option::as_ref).collect();
        let mut inference = InferenceContext::new(def, node, &shapes, &constant_refs)
            .map_err(|e| ctx.error(e.message()))?;
        shape_fn(&mut inference).map_err(|e| ctx.error(e.message()))?;
        for (i, (shape, dtype)) in inference.output_shapes().iter().zip(outputs).enumerate() {
            check_plain(*dtype, format_args!("output {i}"))?;
            let dims: Option<Vec<usize>> =
                shape.0.as_ref().and_then(|d| d.iter().copied().collect());
            let dims = dims.ok_or_else(|| {
                ctx.error(format!(
                    "the shape function of op {} gives output {i} shape {shape}, which is not fully known from input shapes {}: the lite runtime plans every tensor before invoke",
                    def.name,
                    shapes.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
                ))
            })?;
            ctx.set_output_dtype(i, *dtype)?;
            ctx.set_output_shape(i, &dims)?;
        }
        // The tensors lent at invoke, made now (unbound: the arena does not
        // exist yet) so that invoke only points them at it.
        self.inputs.clear();
        for i in 0..ctx.num_inputs() {
            let lent = Tensor::unbound_lent(ctx.input_dtype(i)?, ctx.input_shape(i)?, false)?;
            self.inputs.push(lent);
        }
        self.placed.clear();
        for i in 0..ctx.num_outputs() {
            let lent = Tensor::unbound_lent(ctx.output_dtype(i)?, ctx.output_shape(i)?, true)?;
            self.placed.push(Some(lent));
        }
        self.outputs.clear();
        self.outputs.resize(ctx.num_outputs(), None);
        self.addresses.clear();
        self.addresses.resize(ctx.num_outputs(), None);
        Ok(())
    }

    fn invoke(&mut self, ctx: &mut InvokeContext<'_>) -> Result<()> {
        let prepared = self
            .prepared
            .as_ref()
            .ok_or_else(|| Error::internal("invoke before prepare"))?;
        for (i, input) in self.inputs.iter_mut().enumerate() {
            let (dtype, dims, bytes) = (
                ctx.input_dtype(i)?,
                ctx.input_shape(i)?,
                ctx.input_bytes(i)?,
            );
            if input.dtype() == dtype && input.dims() == dims {
                // SAFETY: the arena outlives this invoke, nothing writes an
                // input while the node runs, and the tensor is used only by
                // the kernel below (a stateless one, which keeps no clone).
                unsafe { input.relend(bytes) }?;
            } else {
                // SAFETY: as above; made once per shape.
                *input = unsafe { Tensor::lend(dtype, dims, bytes) }?;
            }
        }
        for (i, slot) in self.placed.iter_mut().enumerate() {
            let (dtype, dims) = (ctx.output_dtype(i)?, ctx.output_shape(i)?);
            let bytes = ctx.output_bytes_mut(i)?;
            match slot {
                Some(tensor) if tensor.dtype() == dtype && tensor.dims() == dims => {
                    // SAFETY: the output's arena bytes are this node's
                    // alone while it runs, reached only through the tensor.
                    unsafe { tensor.relend_mut(bytes) }?;
                }
                // SAFETY: as above; made once per shape.
                _ => *slot = Some(unsafe { Tensor::lend_mut(dtype, dims, bytes) }?),
            }
            self.addresses[i] = slot.as_ref().and_then(Tensor::buffer_address);
        }
        prepared
            .run_placed(&mut self.inputs, &mut self.placed, &mut self.outputs)
            .map_err(|e| ctx.error(e.message()))?;
        for i in 0..self.outputs.len() {
            let output = self.outputs[i]
                .take()
                .ok_or_else(|| Error::internal("run_placed left an output unset"))?;
            if output.buffer_address() == self.addresses[i] && self.placed[i].is_none() {
                // Made in the arena: the lent tensor goes back to its slot.
                self.placed[i] = Some(output);
                continue;
            }
            // Made elsewhere (a reshaped or forwarded input, a tensor of
            // the kernel's own): copied into the arena, through the lent
            // tensor the kernel did not take.
            let Some(arena) = self.placed[i].as_mut() else {
                return Err(ctx.error(format!(
                    "the kernel took the arena's buffer for output {i} and then set another tensor"
                )));
            };
            if output.dtype() != arena.dtype() || output.dims() != arena.dims() {
                return Err(ctx.error(format!(
                    "the kernel made output {i} of {} and shape {}, but the shape function and dtype inference gave {} and shape {}",
                    output.dtype(),
                    output.shape(),
                    arena.dtype(),
                    arena.shape()
                )));
            }
            arena.copy_from(&output)?;
        }
        Ok(())
    }
}
