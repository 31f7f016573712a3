//! The interpreter: runs a model's first subgraph with kernels from a
//! resolver, in TensorFlow Lite's phases.
//!
//! - [`Interpreter::new`] checks the subgraph (indices, dtypes, constant
//!   sizes, that every tensor a node reads is written first), resolves
//!   every operator (all missing ops in one error, in TensorFlow Lite's
//!   words), copies the constants once into aligned memory, and calls each
//!   node's `init` once.
//! - [`Interpreter::allocate_tensors`] runs every node's `prepare` in order
//!   (each sees the shapes the previous ones set), then plans one arena
//!   ([`crate::arena`]) in which tensors whose lifetimes do not overlap
//!   share bytes, temporaries included; the subgraph's inputs and outputs,
//!   variables and persistent temporaries live throughout.
//! - [`Interpreter::resize_input_tensor`] changes an input's shape; the next
//!   `allocate_tensors` prepares and plans again.
//! - [`Interpreter::invoke`] runs the nodes' `invoke` in order. It does not
//!   allocate, and a kernel that panics is contained: the panic becomes an
//!   `Internal` error naming the node, and the interpreter must be
//!   allocated again before the next invoke.
//! - [`Interpreter::invoke_profiled`] is the same run, timing each node into
//!   a [`Profile`] sized beforehand (so it allocates nothing either):
//!   TensorFlow Lite's op profiler, printed as `benchmark_model` prints it
//!   (`opkit lite benchmark`).
//!
//! Inputs and outputs are reached by position (`0` is the subgraph's first
//! input) or by name ([`Interpreter::input_index`]), through typed slices
//! that check the dtype ([`Interpreter::input_mut`],
//! [`Interpreter::output`]).

mod profile;
pub(crate) mod tensors;

pub use profile::{NodeTime, OpTime, Profile};

use std::cell::Cell;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

use op_core::error::quoted;
use op_core::op_spec::suggest::closest;
use op_core::{DType, Error, Result};

use crate::arena::{self, ALIGNMENT, AlignedBytes, Request};
use crate::kernel::{
    ArenaElement, ArenaView, InitContext, InvokeContext, LiteNode, LiteOp, NodeId, NodeInfo, Phase,
    PrepareContext,
};
use crate::model::{BuiltinOperator, BuiltinOptions, Model, OperatorCode, Subgraph, TensorInfo};
use crate::resolver::{MissingOp, OpResolver, missing_op_error};
use profile::{NoProbe, Probe, Timer};
use tensors::{OutputSpec, Place, TemporarySpec, TensorKind, TensorSlot, byte_size};

/// A model ready to run: its nodes' kernels, its tensors and their memory.
///
/// ```
/// # use op_lite::kernel::{FnOp, InvokeContext, PrepareContext};
/// # use op_lite::model::*;
/// # use op_lite::{Interpreter, MutableOpResolver};
/// # use op_core::DType;
/// # fn double_prepare(ctx: &mut PrepareContext<'_>) -> op_core::Result<()> {
/// #     let shape = ctx.input_shape(0)?;
/// #     ctx.set_output_shape(0, shape)
/// # }
/// # fn double_eval(ctx: &mut InvokeContext<'_>) -> op_core::Result<()> {
/// #     let x = ctx.input::<f32>(0)?;
/// #     for (y, x) in ctx.output_mut::<f32>(0)?.iter_mut().zip(x) { *y = 2.0 * x; }
/// #     Ok(())
/// # }
/// # let tensor = |name: &str| TensorInfo {
/// #     name: name.into(), dtype: DType::F32, shape: vec![3], shape_signature: None,
/// #     buffer: 0, quantization: None, is_variable: false,
/// # };
/// # let model = Model {
/// #     operator_codes: vec![OperatorCode {
/// #         builtin: BuiltinOperator::CUSTOM, custom_name: Some("Double".into()), version: 1,
/// #     }],
/// #     subgraphs: vec![Subgraph {
/// #         tensors: vec![tensor("x"), tensor("y")], inputs: vec![0], outputs: vec![1],
/// #         operators: vec![Operator {
/// #             opcode_index: 0, inputs: vec![Some(0)], outputs: vec![1], intermediates: vec![],
/// #             builtin_options: BuiltinOptions::None, custom_options: vec![],
/// #         }],
/// #         ..Subgraph::default()
/// #     }],
/// #     buffers: vec![Buffer::default()],
/// #     ..Model::default()
/// # };
/// // `model` has one custom op, "Double", from input "x" to output "y".
/// let mut resolver = MutableOpResolver::new();
/// resolver.add_custom("Double", FnOp::new(double_prepare, double_eval));
/// let mut interpreter = Interpreter::new(&model, &resolver)?;
/// interpreter.allocate_tensors()?;
/// let x = interpreter.input_index("x")?;
/// interpreter.input_mut::<f32>(x)?.copy_from_slice(&[1.0, 2.0, 3.0]);
/// interpreter.invoke()?;
/// assert_eq!(interpreter.output::<f32>(0)?, [2.0, 4.0, 6.0]);
/// # Ok::<(), op_core::Error>(())
/// ```
pub struct Interpreter {
    /// The subgraph's tensors, then the temporaries of the last prepare.
    tensors: Vec<TensorSlot>,
    /// What the model says of each of its tensors (shapes and dtypes to
    /// start each prepare from, shape signatures).
    model_tensors: Vec<TensorInfo>,
    nodes: Vec<Node>,
    inputs: Vec<usize>,
    outputs: Vec<usize>,
    /// Signature names of the inputs and outputs, where the model has any.
    input_aliases: Vec<Option<String>>,
    output_aliases: Vec<Option<String>>,
    /// The constants, and the initial values of variables, each at an
    /// offset aligned to [`ALIGNMENT`].
    constants: AlignedBytes,
    variables: VariableInits,
    arena: AlignedBytes,
    /// One borrow flag per tensor for the node being invoked.
    borrows: Vec<Cell<u64>>,
    /// The number of node invokes so far: each one's borrow flags are
    /// told from earlier ones' by it.
    generation: u64,
    /// Whether the last `allocate_tensors` holds: no resize since, no panic.
    ready: bool,
}

/// Each variable tensor and the offset of its initial value in the
/// constants block (`None`: zeros).
type VariableInits = Vec<(usize, Option<usize>)>;

/// One operator of the subgraph and its kernel.
struct Node {
    op: String,
    builtin_options: BuiltinOptions,
    inputs: Vec<Option<usize>>,
    outputs: Vec<usize>,
    /// Tensor indices of the temporaries of the last prepare.
    temporaries: Vec<usize>,
    /// What the last prepare asked: scratch space reused between prepares.
    temporary_specs: Vec<TemporarySpec>,
    output_specs: Vec<OutputSpec>,
    kernel: Box<dyn LiteNode>,
}

impl Interpreter {
    /// Checks `model`'s first subgraph, resolves each operator's kernel with
    /// `resolver`, and runs each node's `init` once.
    ///
    /// Fails with `NotFound` when the resolver lacks ops (all of them, in
    /// TensorFlow Lite's words: "Didn't find custom operator for name
    /// 'Sin'"), `Unimplemented` for a quantized tensor or a dtype the arena
    /// cannot hold (string, resource, variant), `InvalidArgument` for a
    /// malformed subgraph (naming the node and tensor), and with a node's
    /// error when its `init` fails.
    pub fn new(model: &Model, resolver: &dyn OpResolver) -> Result<Interpreter> {
        let subgraph = model
            .subgraphs
            .first()
            .ok_or_else(|| Error::invalid_argument("the model has no subgraphs"))?;
        let mut tensors = check_tensors(model, subgraph)?;
        let (inputs, outputs) = check_io(subgraph, &mut tensors)?;
        let ops = resolve(model, subgraph, resolver)?;
        check_dataflow(subgraph, &tensors)?;
        let (constants, variables) = copy_constants(model, subgraph, &mut tensors)?;

        let mut nodes = Vec::with_capacity(ops.len());
        for (index, (operator, (op_name, version, op))) in
            subgraph.operators.iter().zip(ops).enumerate()
        {
            let id = NodeId {
                index,
                op: &op_name,
                phase: Phase::Init,
            };
            let ctx = InitContext::new(
                id,
                version,
                &operator.builtin_options,
                &operator.custom_options,
                operator.inputs.len(),
                operator.outputs.len(),
            );
            let kernel = contain(id, || op.init(&ctx))?;
            nodes.push(Node {
                builtin_options: operator.builtin_options.clone(),
                inputs: operator.inputs.clone(),
                outputs: operator.outputs.clone(),
                temporaries: Vec::new(),
                temporary_specs: Vec::new(),
                output_specs: Vec::new(),
                kernel,
                op: op_name,
            });
        }

        let signature = model.signatures.iter().find(|s| s.subgraph == 0);
        let aliases = |io: &[usize], names: Option<&Vec<(String, usize)>>| -> Vec<Option<String>> {
            io.iter()
                .map(|t| {
                    names?
                        .iter()
                        .find(|(_, index)| index == t)
                        .map(|(name, _)| name.clone())
                })
                .collect()
        };
        Ok(Interpreter {
            input_aliases: aliases(&inputs, signature.map(|s| &s.inputs)),
            output_aliases: aliases(&outputs, signature.map(|s| &s.outputs)),
            tensors,
            model_tensors: subgraph.tensors.clone(),
            nodes,
            inputs,
            outputs,
            constants,
            variables,
            arena: AlignedBytes::zeroed(0)?,
            borrows: Vec::new(),
            generation: 0,
            ready: false,
        })
    }

    /// Prepares every node in order and plans the arena: TensorFlow Lite's
    /// `AllocateTensors`. Does nothing when nothing changed since the last
    /// call; after a resize, prepares and plans again.
    ///
    /// Inputs must be written after this call (planning again may move
    /// them); variables and persistent temporaries are reset (variables to
    /// their initial value, temporaries to zeros).
    pub fn allocate_tensors(&mut self) -> Result<()> {
        if self.ready {
            return Ok(());
        }
        self.prepare_nodes()?;
        self.plan_arena()?;
        self.ready = true;
        Ok(())
    }

    /// Runs every node's `prepare`, in order, and adds the temporaries they
    /// request to the tensor table.
    fn prepare_nodes(&mut self) -> Result<()> {
        let model_count = self.model_tensors.len();
        self.tensors.truncate(model_count);
        // Every prepare starts from the model's word, not the last prepare's.
        for (slot, info) in self.tensors.iter_mut().zip(&self.model_tensors) {
            let kind = slot.kind;
            if !(kind.input || kind.constant || kind.variable) {
                slot.shape.clone_from(&info.shape);
                slot.dtype = info.dtype;
            }
        }
        let constants = self.constants.as_slice();
        for (index, node) in self.nodes.iter_mut().enumerate() {
            let id = NodeId {
                index,
                op: &node.op,
                phase: Phase::Prepare,
            };
            node.temporary_specs.clear();
            node.output_specs.clear();
            node.output_specs
                .extend(node.outputs.iter().map(|&t| OutputSpec {
                    shape: self.tensors[t].shape.clone(),
                    dtype: self.tensors[t].dtype,
                }));
            let info = NodeInfo::new(
                id,
                &node.builtin_options,
                &node.inputs,
                &node.outputs,
                &self.tensors,
                &[],
            );
            let mut ctx = PrepareContext::new(
                info,
                &mut node.output_specs,
                &mut node.temporary_specs,
                constants,
            );
            let kernel = &mut node.kernel;
            contain(id, || kernel.prepare(&mut ctx))?;

            for (k, (&t, spec)) in node.outputs.iter().zip(&node.output_specs).enumerate() {
                let slot = &mut self.tensors[t];
                check_dtype(spec.dtype, || {
                    format!("output {k} ({})", quoted(&slot.name))
                })
                .map_err(|e| id.frame_error(e))?;
                slot.shape.clone_from(&spec.shape);
                slot.dtype = spec.dtype;
            }
            node.temporaries.clear();
            for (k, spec) in node.temporary_specs.iter().enumerate() {
                let name = format!("temporary {k} of node {index} ({})", node.op);
                check_dtype(spec.dtype, || name.clone()).map_err(|e| id.frame_error(e))?;
                node.temporaries.push(self.tensors.len());
                self.tensors.push(TensorSlot {
                    name,
                    dtype: spec.dtype,
                    shape: spec.shape.clone(),
                    kind: TensorKind {
                        temporary: Some(spec.lifetime),
                        ..TensorKind::default()
                    },
                    place: Place::Nowhere,
                    bytes: 0,
                });
            }
        }
        Ok(())
    }

    /// Sizes every tensor, plans the arena, places the tensors in it,
    /// initializes the variables and checks each node's tensors for
    /// overlap.
    fn plan_arena(&mut self) -> Result<()> {
        let last_step = self.nodes.len().saturating_sub(1);
        // (first, last) step of each tensor the arena holds.
        let mut lifetimes: Vec<Option<(usize, usize)>> = vec![None; self.tensors.len()];
        for (t, slot) in self.tensors.iter().enumerate() {
            if slot.kind.persists() {
                lifetimes[t] = Some((0, last_step));
            }
        }
        for (step, node) in self.nodes.iter().enumerate() {
            let used = node.inputs.iter().flatten().chain(&node.outputs);
            for &t in used.chain(&node.temporaries) {
                if self.tensors[t].kind.constant {
                    continue;
                }
                let span = lifetimes[t].get_or_insert((step, step));
                span.1 = span.1.max(step);
            }
        }

        let mut requests = Vec::new();
        let mut planned = Vec::new();
        for (t, slot) in self.tensors.iter_mut().enumerate() {
            let size = sized(t, &slot.name, slot.dtype, &slot.shape)?;
            if slot.kind.constant {
                continue;
            }
            slot.bytes = size;
            slot.place = Place::Nowhere;
            if let Some((first, last)) = lifetimes[t] {
                requests.push(Request { size, first, last });
                planned.push(t);
            }
        }
        let plan = arena::plan(&requests)?;
        debug_assert!(arena::check(&requests, &plan).is_ok());
        self.arena.resize_zeroed(plan.size)?;
        for (&t, &offset) in planned.iter().zip(&plan.offsets) {
            self.tensors[t].place = Place::Arena(offset);
        }

        for &(t, initial) in &self.variables {
            let slot = &self.tensors[t];
            if let (Some(from), Place::Arena(to)) = (initial, slot.place) {
                self.arena.as_mut_slice()[to..to + slot.bytes]
                    .copy_from_slice(&self.constants.as_slice()[from..from + slot.bytes]);
            }
        }
        for (index, node) in self.nodes.iter().enumerate() {
            check_disjoint(index, node, &self.tensors)?;
        }
        self.borrows = (0..self.tensors.len()).map(|_| Cell::new(0)).collect();
        Ok(())
    }

    /// Runs every node's `invoke`, in order: TensorFlow Lite's `Invoke`.
    /// Performs no heap allocation.
    ///
    /// Fails with `FailedPrecondition` before `allocate_tensors` (or after
    /// a resize, or after a kernel panicked), and with the first kernel's
    /// error, framed with its node (`Node number 2 (ADD) failed to
    /// invoke.`). A kernel that panics gives an `Internal` error naming the
    /// node and the panic's message.
    pub fn invoke(&mut self) -> Result<()> {
        self.run_nodes(NoProbe)
    }

    /// [`invoke`](Self::invoke), timing each node into `profile` (made for
    /// this interpreter by [`Profile::new`]): TensorFlow Lite's op
    /// profiler. Allocates nothing either; a failed run is not recorded.
    ///
    /// Fails as `invoke` does, and with `InvalidArgument` when the profile
    /// was made for a model with another number of nodes.
    pub fn invoke_profiled(&mut self, profile: &mut Profile) -> Result<()> {
        profile.check_fits(self.nodes.len())?;
        let timer = Timer {
            profile: &mut *profile,
            started: Instant::now(),
        };
        self.run_nodes(timer)?;
        profile.commit();
        Ok(())
    }

    /// The invoke loop, with `probe` called around each node: generic, so
    /// that the plain invoke's empty probe costs nothing. The probe is
    /// taken by value: a zero-sized `NoProbe` then leaves no pointer in the
    /// unwinding closure (by `&mut`, the plain invoke measured 0.5 ns a
    /// node slower than before profiling existed; by value, the same).
    fn run_nodes<P: Probe>(&mut self, mut probe: P) -> Result<()> {
        if !self.ready {
            return Err(Error::failed_precondition(
                "Invoke called on model that is not ready: call allocate_tensors() first \
                 (after building the interpreter, resizing an input, or a kernel's panic)",
            ));
        }
        let Interpreter {
            nodes,
            tensors,
            constants,
            arena,
            borrows,
            generation,
            ready,
            ..
        } = self;
        let arena_bytes = arena.as_mut_slice();
        // One unwinding guard for all the nodes, and `current` to tell
        // which node panicked: a guard per node costs time on every node.
        let mut current = 0;
        let outcome = catch_unwind(AssertUnwindSafe(|| -> Result<()> {
            for (index, node) in nodes.iter_mut().enumerate() {
                current = index;
                *generation += 1;
                let id = NodeId {
                    index,
                    op: &node.op,
                    phase: Phase::Invoke,
                };
                let info = NodeInfo::new(
                    id,
                    &node.builtin_options,
                    &node.inputs,
                    &node.outputs,
                    tensors,
                    &[],
                );
                let mut ctx = InvokeContext::new(
                    info,
                    &node.temporaries,
                    constants.as_slice(),
                    ArenaView::new(&mut *arena_bytes),
                    borrows,
                    *generation,
                );
                // Every slice the context hands out dies with the call.
                probe.start(index);
                let result = node.kernel.invoke(&mut ctx);
                probe.stop(index);
                if let Err(error) = result {
                    return Err(id.frame_error(error));
                }
            }
            Ok(())
        }));
        outcome.unwrap_or_else(|payload| {
            // The kernel's state is suspect: prepare again before running.
            *ready = false;
            let node = &nodes[current];
            let id = NodeId {
                index: current,
                op: &node.op,
                phase: Phase::Invoke,
            };
            Err(panic_error(id, payload.as_ref()))
        })
    }

    /// Changes input `i`'s shape; the next
    /// [`allocate_tensors`](Self::allocate_tensors) prepares every node
    /// again. Resizing to the current shape changes nothing.
    ///
    /// Fails when `i` is out of range or the new size overflows.
    pub fn resize_input_tensor(&mut self, i: usize, dims: &[usize]) -> Result<()> {
        let (t, slot) = self.io_slot(Io::Input, i)?;
        if slot.shape == dims {
            return Ok(());
        }
        if byte_size(slot.dtype, dims).is_err() {
            return Err(Error::invalid_argument(format!(
                "input {i} ({}) cannot be resized to {dims}: its size overflows",
                quoted(&slot.name),
                dims = op_core::error::dims(dims)
            )));
        }
        self.tensors[t].shape = dims.to_vec();
        self.ready = false;
        Ok(())
    }

    /// [`resize_input_tensor`](Self::resize_input_tensor), but only the
    /// dimensions the model's shape signature leaves open (`-1`) may change:
    /// TensorFlow Lite's `ResizeInputTensorStrict`.
    pub fn resize_input_tensor_strict(&mut self, i: usize, dims: &[usize]) -> Result<()> {
        let (t, slot) = self.io_slot(Io::Input, i)?;
        let model = &self.model_tensors[t];
        let fixed = |d: usize| match &model.shape_signature {
            Some(signature) => signature.get(d).is_some_and(|&s| s != -1),
            None => true,
        };
        let allowed = dims.len() == model.shape.len()
            && dims
                .iter()
                .enumerate()
                .all(|(d, &n)| !fixed(d) || n == model.shape[d]);
        if !allowed {
            return Err(Error::invalid_argument(format!(
                "input {i} ({}) cannot be resized to {dims}: its shape signature is {}",
                quoted(&slot.name),
                op_core::error::dims(model.shape_signature.as_deref().unwrap_or(&[])),
                dims = op_core::error::dims(dims)
            )));
        }
        self.resize_input_tensor(i, dims)
    }

    /// The subgraph's input tensors, as tensor indices.
    pub fn inputs(&self) -> &[usize] {
        &self.inputs
    }

    /// The subgraph's output tensors, as tensor indices.
    pub fn outputs(&self) -> &[usize] {
        &self.outputs
    }

    /// The position of the input named `name`: its tensor's name, or its
    /// name in the model's signature.
    ///
    /// Fails with `NotFound`, listing the inputs and the closest name.
    pub fn input_index(&self, name: &str) -> Result<usize> {
        self.io_index(Io::Input, name)
    }

    /// The position of the output named `name`: see
    /// [`input_index`](Self::input_index).
    pub fn output_index(&self, name: &str) -> Result<usize> {
        self.io_index(Io::Output, name)
    }

    /// Input `i`'s tensor name.
    pub fn input_name(&self, i: usize) -> Result<&str> {
        Ok(&self.io_slot(Io::Input, i)?.1.name)
    }

    /// Output `i`'s tensor name.
    pub fn output_name(&self, i: usize) -> Result<&str> {
        Ok(&self.io_slot(Io::Output, i)?.1.name)
    }

    /// Input `i`'s dtype.
    pub fn input_dtype(&self, i: usize) -> Result<DType> {
        Ok(self.io_slot(Io::Input, i)?.1.dtype)
    }

    /// Output `i`'s dtype.
    pub fn output_dtype(&self, i: usize) -> Result<DType> {
        Ok(self.io_slot(Io::Output, i)?.1.dtype)
    }

    /// Input `i`'s shape.
    pub fn input_shape(&self, i: usize) -> Result<&[usize]> {
        Ok(&self.io_slot(Io::Input, i)?.1.shape)
    }

    /// Output `i`'s shape (as prepare set it).
    pub fn output_shape(&self, i: usize) -> Result<&[usize]> {
        Ok(&self.io_slot(Io::Output, i)?.1.shape)
    }

    /// Input `i`'s elements, to write before [`invoke`](Self::invoke).
    ///
    /// Fails before `allocate_tensors`, and when `T` is not the input's
    /// dtype.
    pub fn input_mut<T: ArenaElement>(&mut self, i: usize) -> Result<&mut [T]> {
        let (t, _) = self.typed_slot::<T>(Io::Input, i)?;
        cast_mut(self.tensor_bytes_mut(t)?)
    }

    /// Input `i`'s elements.
    pub fn input<T: ArenaElement>(&self, i: usize) -> Result<&[T]> {
        let (t, _) = self.typed_slot::<T>(Io::Input, i)?;
        cast(self.tensor_bytes(t)?)
    }

    /// Copies `values` into input `i`.
    ///
    /// Fails when `T` is not the input's dtype or `values` is not as long
    /// as the input.
    pub fn set_input<T: ArenaElement>(&mut self, i: usize, values: &[T]) -> Result<()> {
        let (_, slot) = self.typed_slot::<T>(Io::Input, i)?;
        let name = quoted(&slot.name).to_string();
        let shape = slot.shape.clone();
        let input = self.input_mut::<T>(i)?;
        if input.len() != values.len() {
            return Err(Error::invalid_argument(format!(
                "input {i} ({name}) of shape {shape} holds {} elements, not {}",
                input.len(),
                values.len(),
                shape = op_core::error::dims(&shape)
            )));
        }
        input.copy_from_slice(values);
        Ok(())
    }

    /// Input `i`'s bytes, whatever its dtype, to write.
    pub fn input_bytes_mut(&mut self, i: usize) -> Result<&mut [u8]> {
        let (t, _) = self.io_slot(Io::Input, i)?;
        self.tensor_bytes_mut(t)
    }

    /// Output `i`'s elements, as the last [`invoke`](Self::invoke) left
    /// them.
    ///
    /// Fails before `allocate_tensors`, and when `T` is not the output's
    /// dtype.
    pub fn output<T: ArenaElement>(&self, i: usize) -> Result<&[T]> {
        let (t, _) = self.typed_slot::<T>(Io::Output, i)?;
        cast(self.tensor_bytes(t)?)
    }

    /// Output `i`'s bytes, whatever its dtype.
    pub fn output_bytes(&self, i: usize) -> Result<&[u8]> {
        let (t, _) = self.io_slot(Io::Output, i)?;
        self.tensor_bytes(t)
    }

    /// The number of nodes.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Node `k`'s op name.
    pub fn node_op(&self, k: usize) -> Option<&str> {
        self.nodes.get(k).map(|n| n.op.as_str())
    }

    /// The arena's size in bytes, as the last `allocate_tensors` planned it.
    pub fn arena_size(&self) -> usize {
        self.arena.len()
    }

    /// The size of the block of constants (and variables' initial values).
    pub fn constants_size(&self) -> usize {
        self.constants.len()
    }

    fn io_slot(&self, io: Io, i: usize) -> Result<(usize, &TensorSlot)> {
        let list = match io {
            Io::Input => &self.inputs,
            Io::Output => &self.outputs,
        };
        match list.get(i) {
            Some(&t) => Ok((t, &self.tensors[t])),
            None => Err(Error::invalid_argument(format!(
                "{} {i} is out of range: the model has {}",
                io.name(),
                counted(list.len(), io.name())
            ))),
        }
    }

    fn typed_slot<T: ArenaElement>(&self, io: Io, i: usize) -> Result<(usize, &TensorSlot)> {
        let (t, slot) = self.io_slot(io, i)?;
        if slot.dtype != T::DTYPE {
            return Err(Error::invalid_argument(format!(
                "{} {i} ({}) has dtype {}, not {}",
                io.name(),
                quoted(&slot.name),
                slot.dtype,
                T::DTYPE
            )));
        }
        Ok((t, slot))
    }

    fn not_allocated(&self, t: usize) -> Error {
        Error::failed_precondition(format!(
            "tensor {t} ({}) has no memory yet: call allocate_tensors() first",
            quoted(&self.tensors[t].name)
        ))
    }

    fn tensor_bytes(&self, t: usize) -> Result<&[u8]> {
        let slot = &self.tensors[t];
        match slot.place {
            Place::Constant(offset) => Ok(&self.constants.as_slice()[offset..offset + slot.bytes]),
            Place::Arena(offset) if self.ready => {
                Ok(&self.arena.as_slice()[offset..offset + slot.bytes])
            }
            _ => Err(self.not_allocated(t)),
        }
    }

    fn tensor_bytes_mut(&mut self, t: usize) -> Result<&mut [u8]> {
        let slot = &self.tensors[t];
        match slot.place {
            Place::Arena(offset) if self.ready => {
                let end = offset + slot.bytes;
                Ok(&mut self.arena.as_mut_slice()[offset..end])
            }
            _ => Err(self.not_allocated(t)),
        }
    }

    fn io_index(&self, io: Io, name: &str) -> Result<usize> {
        let (list, aliases) = match io {
            Io::Input => (&self.inputs, &self.input_aliases),
            Io::Output => (&self.outputs, &self.output_aliases),
        };
        let by_tensor = list.iter().position(|&t| self.tensors[t].name == name);
        let by_alias = || aliases.iter().position(|a| a.as_deref() == Some(name));
        if let Some(i) = by_tensor.or_else(by_alias) {
            return Ok(i);
        }
        let names: Vec<&str> = list
            .iter()
            .map(|&t| self.tensors[t].name.as_str())
            .chain(aliases.iter().flatten().map(String::as_str))
            .collect();
        let listed: Vec<String> = names.iter().map(|n| quoted(n).to_string()).collect();
        let mut message = format!(
            "the model has no {} named {} (its {}s are {})",
            io.name(),
            quoted(name),
            io.name(),
            if listed.is_empty() {
                "none".to_string()
            } else {
                listed.join(", ")
            }
        );
        if let Some(near) = closest(name, names.iter().copied()) {
            message.push_str(&format!("; did you mean {}?", quoted(near)));
        }
        Err(Error::not_found(message))
    }
}

impl fmt::Debug for Interpreter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Interpreter")
            .field(
                "nodes",
                &self.nodes.iter().map(|n| &n.op).collect::<Vec<_>>(),
            )
            .field("inputs", &self.inputs)
            .field("outputs", &self.outputs)
            .field("arena_size", &self.arena.len())
            .field("ready", &self.ready)
            .finish_non_exhaustive()
    }
}

/// The subgraph's inputs or outputs, for messages.
#[derive(Copy, Clone)]
enum Io {
    Input,
    Output,
}

impl Io {
    fn name(self) -> &'static str {
        match self {
            Io::Input => "input",
            Io::Output => "output",
        }
    }
}

/// `1 input`, `2 inputs`.
fn counted(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

fn cast<T: ArenaElement>(bytes: &[u8]) -> Result<&[T]> {
    if bytes.is_empty() {
        return Ok(&[]);
    }
    bytemuck::try_cast_slice(bytes)
        .map_err(|e| Error::internal(format!("a tensor's bytes do not hold {}s: {e}", T::DTYPE)))
}

fn cast_mut<T: ArenaElement>(bytes: &mut [u8]) -> Result<&mut [T]> {
    if bytes.is_empty() {
        return Ok(&mut []);
    }
    bytemuck::try_cast_slice_mut(bytes)
        .map_err(|e| Error::internal(format!("a tensor's bytes do not hold {}s: {e}", T::DTYPE)))
}

/// Fails unless the arena can hold elements of `dtype`: every fixed-size,
/// unquantized dtype. `what` names the tensor.
pub(crate) fn check_dtype(dtype: DType, what: impl FnOnce() -> String) -> Result<()> {
    if dtype.size_of().is_some() && !dtype.is_quantized() {
        return Ok(());
    }
    Err(Error::unimplemented(format!(
        "{} has dtype {dtype}, which this runtime cannot hold (only fixed-size, unquantized dtypes)",
        what()
    )))
}

/// The size in bytes of tensor `t`, or an error naming it when the size
/// overflows. Only called for dtypes with a size.
fn sized(t: usize, name: &str, dtype: DType, shape: &[usize]) -> Result<usize> {
    byte_size(dtype, shape).ok().flatten().ok_or_else(|| {
        Error::invalid_argument(format!(
            "tensor {t} ({}) of shape {shape} and dtype {dtype} is larger than the address space",
            quoted(name),
            shape = op_core::error::dims(shape)
        ))
    })
}

/// Where tensor `t` is first used, for messages: `, input 1 of node 0
/// (CONV_2D)`, or nothing when no node reads or writes it.
fn first_use(model: &Model, subgraph: &Subgraph, t: usize) -> String {
    subgraph
        .operators
        .iter()
        .enumerate()
        .find_map(|(node, op)| {
            let role = match op.inputs.iter().position(|&i| i == Some(t)) {
                Some(k) => format!("input {k}"),
                None => format!("output {}", op.outputs.iter().position(|&o| o == t)?),
            };
            let name = match model.operator_codes.get(op.opcode_index) {
                Some(OperatorCode {
                    custom_name: Some(name),
                    ..
                }) => name.clone(),
                Some(code) => code.builtin.to_string(),
                None => "an unknown op".into(),
            };
            Some(format!(", {role} of node {node} ({name}),"))
        })
        .unwrap_or_default()
}

/// The tensor table of `subgraph`, checked: dtypes the arena can hold, no
/// quantization, buffers in range and of the right size, sizes that fit.
fn check_tensors(model: &Model, subgraph: &Subgraph) -> Result<Vec<TensorSlot>> {
    let mut slots = Vec::with_capacity(subgraph.tensors.len());
    for (t, info) in subgraph.tensors.iter().enumerate() {
        let what = || format!("tensor {t} ({})", quoted(&info.name));
        check_dtype(info.dtype, what)?;
        if let Some(q) = info.quantization.as_ref().filter(|q| !q.scale.is_empty()) {
            return Err(Error::unimplemented(format!(
                "{}{} is quantized (scale {:?}, zero point {:?}): quantized models are not \
                 supported by this runtime; convert the model without quantization",
                what(),
                first_use(model, subgraph, t),
                q.scale,
                q.zero_point
            )));
        }
        let bytes = sized(t, &info.name, info.dtype, &info.shape)?;
        let buffer = model.buffers.get(info.buffer).ok_or_else(|| {
            Error::invalid_argument(format!(
                "{} names buffer {}, but the model has {}",
                what(),
                info.buffer,
                counted(model.buffers.len(), "buffer")
            ))
        })?;
        // A tensor of no elements with a buffer of its own is a constant
        // too (a reshape to a scalar has the shape `[]` as an empty
        // constant), though its buffer holds no bytes.
        let has_data = info.buffer != 0 && (!buffer.data.is_empty() || bytes == 0);
        if has_data && buffer.data.len() != bytes {
            return Err(Error::invalid_argument(format!(
                "{} of shape {} and dtype {} needs {bytes} bytes, but its buffer {} holds {}",
                what(),
                op_core::error::dims(&info.shape),
                info.dtype,
                info.buffer,
                buffer.data.len()
            )));
        }
        slots.push(TensorSlot {
            name: info.name.clone(),
            dtype: info.dtype,
            shape: info.shape.clone(),
            kind: TensorKind {
                constant: has_data && !info.is_variable,
                variable: info.is_variable,
                ..TensorKind::default()
            },
            place: Place::Nowhere,
            bytes,
        });
    }
    Ok(slots)
}

/// The subgraph's inputs and outputs, checked and marked in `tensors`.
fn check_io(subgraph: &Subgraph, tensors: &mut [TensorSlot]) -> Result<(Vec<usize>, Vec<usize>)> {
    for (io, list) in [
        (Io::Input, &subgraph.inputs),
        (Io::Output, &subgraph.outputs),
    ] {
        for (i, &t) in list.iter().enumerate() {
            let Some(slot) = tensors.get_mut(t) else {
                return Err(Error::invalid_argument(format!(
                    "subgraph {} {i} is tensor {t}, but the subgraph has {}",
                    io.name(),
                    counted(subgraph.tensors.len(), "tensor")
                )));
            };
            match io {
                Io::Input if slot.kind.constant || slot.kind.variable => {
                    return Err(Error::invalid_argument(format!(
                        "subgraph input {i} is tensor {t} ({}), a {}: inputs are written by the caller",
                        quoted(&slot.name),
                        if slot.kind.constant {
                            "constant"
                        } else {
                            "variable"
                        }
                    )));
                }
                Io::Input => slot.kind.input = true,
                Io::Output => slot.kind.output = true,
            }
        }
    }
    Ok((subgraph.inputs.clone(), subgraph.outputs.clone()))
}

/// Each operator's op name, version and registration, or one error naming
/// every op the resolver lacks.
fn resolve<'r>(
    model: &Model,
    subgraph: &Subgraph,
    resolver: &'r dyn OpResolver,
) -> Result<Vec<(String, i32, &'r dyn LiteOp)>> {
    let mut found = Vec::with_capacity(subgraph.operators.len());
    let mut missing: Vec<MissingOp> = Vec::new();
    for (node, operator) in subgraph.operators.iter().enumerate() {
        let code = model
            .operator_codes
            .get(operator.opcode_index)
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "node {node} uses operator code {}, but the model has {}",
                    operator.opcode_index,
                    counted(model.operator_codes.len(), "operator code")
                ))
            })?;
        let version = code.version;
        let lookup = if code.builtin == BuiltinOperator::CUSTOM {
            match &code.custom_name {
                None => Err(MissingOp::UnnamedCustom { node }),
                Some(name) => resolver
                    .find_custom(name, version)
                    .map(|op| (name.clone(), op))
                    .ok_or_else(|| MissingOp::Custom {
                        name: name.clone(),
                        version,
                        node,
                    }),
            }
        } else {
            resolver
                .find_builtin(code.builtin, version)
                .map(|op| (code.builtin.to_string(), op))
                .ok_or(MissingOp::Builtin {
                    op: code.builtin,
                    version,
                    node,
                })
        };
        match lookup {
            Ok((name, op)) => found.push((name, version, op)),
            Err(op) => {
                let seen = missing.iter().any(|m| same_op(m, &op));
                if !seen {
                    missing.push(op);
                }
            }
        }
    }
    if missing.is_empty() {
        Ok(found)
    } else {
        Err(missing_op_error(&missing, resolver))
    }
}

/// Whether two missing ops are the same op and version (at any node).
fn same_op(a: &MissingOp, b: &MissingOp) -> bool {
    match (a, b) {
        (
            MissingOp::Builtin {
                op: a, version: va, ..
            },
            MissingOp::Builtin {
                op: b, version: vb, ..
            },
        ) => a == b && va == vb,
        (
            MissingOp::Custom {
                name: a,
                version: va,
                ..
            },
            MissingOp::Custom {
                name: b,
                version: vb,
                ..
            },
        ) => a == b && va == vb,
        (MissingOp::UnnamedCustom { .. }, MissingOp::UnnamedCustom { .. }) => true,
        _ => false,
    }
}

/// Checks that the operators can run in their order: every tensor a node
/// reads is a constant, an input, a variable or written by an earlier node;
/// every tensor is written by at most one node, which does not also read
/// it; constants, inputs and variables are never outputs; every subgraph
/// output has a value.
fn check_dataflow(subgraph: &Subgraph, tensors: &[TensorSlot]) -> Result<()> {
    let mut writer: Vec<Option<usize>> = vec![None; tensors.len()];
    let name = |t: usize| quoted(&tensors[t].name).to_string();
    let out_of_range = |node: usize, t: usize| {
        Error::invalid_argument(format!(
            "node {node} names tensor {t}, but the subgraph has {}",
            counted(tensors.len(), "tensor")
        ))
    };
    for (node, operator) in subgraph.operators.iter().enumerate() {
        for &t in operator.inputs.iter().flatten() {
            let slot = tensors.get(t).ok_or_else(|| out_of_range(node, t))?;
            let kind = slot.kind;
            if !(kind.constant || kind.input || kind.variable || writer[t].is_some()) {
                return Err(Error::invalid_argument(format!(
                    "node {node} reads tensor {t} ({}), which no earlier node writes and which is not \
                     a constant, a subgraph input or a variable",
                    name(t)
                )));
            }
        }
        for &t in &operator.outputs {
            let slot = tensors.get(t).ok_or_else(|| out_of_range(node, t))?;
            let kind = slot.kind;
            let problem = if kind.constant {
                Some("a constant".to_string())
            } else if kind.input {
                Some("a subgraph input".to_string())
            } else if kind.variable {
                Some("a variable (variables are written through an input)".to_string())
            } else if let Some(other) = writer[t] {
                Some(format!("already written by node {other}"))
            } else if operator.inputs.contains(&Some(t)) {
                Some("also an input of the node".to_string())
            } else {
                None
            };
            if let Some(problem) = problem {
                return Err(Error::invalid_argument(format!(
                    "node {node} writes tensor {t} ({}), which is {problem}",
                    name(t)
                )));
            }
            writer[t] = Some(node);
        }
    }
    for (i, &t) in subgraph.outputs.iter().enumerate() {
        let kind = tensors[t].kind;
        if !(kind.constant || kind.input || kind.variable || writer[t].is_some()) {
            return Err(Error::invalid_argument(format!(
                "subgraph output {i} is tensor {t} ({}), which no node writes",
                name(t)
            )));
        }
    }
    Ok(())
}

/// Copies the constants, and the variables' initial values, into one block
/// aligned for any dtype; places the constants there. Returns the block and
/// each variable with the offset of its initial value.
fn copy_constants(
    model: &Model,
    subgraph: &Subgraph,
    tensors: &mut [TensorSlot],
) -> Result<(AlignedBytes, VariableInits)> {
    let overflow = || Error::resource_exhausted("the model's constants overflow the address space");
    let has_value = |t: usize| {
        let info = &subgraph.tensors[t];
        info.buffer != 0 && !model.buffers[info.buffer].data.is_empty()
    };
    let mut offsets = vec![None; tensors.len()];
    let mut size = 0usize;
    for t in 0..tensors.len() {
        if has_value(t) {
            offsets[t] = Some(size);
            size = size
                .checked_add(tensors[t].bytes)
                .and_then(|end| end.checked_next_multiple_of(ALIGNMENT))
                .ok_or_else(overflow)?;
        }
    }
    let mut block = AlignedBytes::zeroed(size)?;
    let mut variables = Vec::new();
    for (t, slot) in tensors.iter_mut().enumerate() {
        if let Some(offset) = offsets[t] {
            let data = &model.buffers[subgraph.tensors[t].buffer].data;
            block.as_mut_slice()[offset..offset + data.len()].copy_from_slice(data);
        }
        if slot.kind.variable {
            variables.push((t, offsets[t]));
        } else if let Some(offset) = offsets[t] {
            slot.place = Place::Constant(offset);
        }
    }
    Ok((block, variables))
}

/// Checks that no tensor node `index` writes shares arena bytes with any
/// other tensor of the node: what makes the invoke context's slices sound.
fn check_disjoint(index: usize, node: &Node, tensors: &[TensorSlot]) -> Result<()> {
    let range = |t: usize| match tensors[t].place {
        Place::Arena(offset) if tensors[t].bytes > 0 => Some(offset..offset + tensors[t].bytes),
        _ => None,
    };
    let all: Vec<usize> = node
        .inputs
        .iter()
        .flatten()
        .chain(&node.outputs)
        .chain(&node.temporaries)
        .copied()
        .collect();
    let writable = all.iter().filter(|&&t| {
        let kind = tensors[t].kind;
        kind.variable || kind.temporary.is_some() || node.outputs.contains(&t)
    });
    for &w in writable {
        let Some(written) = range(w) else { continue };
        for &t in &all {
            let Some(other) = range(t) else { continue };
            if t != w && written.start < other.end && other.start < written.end {
                return Err(Error::internal(format!(
                    "the arena plan overlaps tensors {w} ({}) and {t} ({}) of node {index} ({})",
                    quoted(&tensors[w].name),
                    quoted(&tensors[t].name),
                    node.op
                )));
            }
        }
    }
    Ok(())
}

/// Runs one phase of a kernel (init or prepare), turning its error into a
/// framed one and a panic into an `Internal` error naming the node.
pub(crate) fn contain<T>(id: NodeId<'_>, phase: impl FnOnce() -> Result<T>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(phase)) {
        Ok(result) => result.map_err(|error| id.frame_error(error)),
        Err(payload) => Err(panic_error(id, payload.as_ref())),
    }
}

/// The `Internal` error for a kernel's panic, with the panic's message.
pub(crate) fn panic_error(id: NodeId<'_>, payload: &(dyn std::any::Any + Send)) -> Error {
    let message = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(a panic without a message)");
    let phase = match id.phase {
        Phase::Init => "init",
        Phase::Prepare => "prepare",
        Phase::Invoke => "invoke",
    };
    id.frame_error(Error::internal(format!(
        "the kernel of node {} ({}) panicked in {phase}: {message}",
        id.index, id.op
    )))
}
