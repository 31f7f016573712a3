//! Lite kernels inside another runtime: one node of a foreign interpreter
//! (LiteRT, through a delegate: `op-litert`) run by one of our kernels,
//! over that runtime's tensor memory.
//!
//! [`ExternalNode`] is the interpreter's bookkeeping for a single node:
//! the kernel's state ([`LiteOp::init`]), the tensor table its contexts
//! read, and its temporaries, which it owns. The host runtime keeps its
//! tensors; each phase is handed [`HostTensor`]s (dtype, shape, and a
//! pointer to the bytes) and the kernel reads and writes those bytes in
//! place, with the same borrow checks as in the interpreter.
//!
//! ```
//! use op_core::{DType, Result};
//! use op_lite::external::{ExternalNode, HostTensor, NodeSpec};
//! use op_lite::kernel::{FnOp, InvokeContext, PrepareContext};
//!
//! fn prepare(ctx: &mut PrepareContext<'_>) -> Result<()> {
//!     let shape = ctx.input_shape(0)?;
//!     ctx.set_output_shape(0, shape)
//! }
//! fn invoke(ctx: &mut InvokeContext<'_>) -> Result<()> {
//!     let (x, y) = (ctx.input::<f32>(0)?, ctx.output_mut::<f32>(0)?);
//!     y.iter_mut().zip(x).for_each(|(y, x)| *y = x.sin());
//!     Ok(())
//! }
//!
//! let spec = NodeSpec { index: 0, op: "Sin", version: 1, custom_options: &[], num_inputs: 1, num_outputs: 1 };
//! let mut node = ExternalNode::init(&FnOp::new(prepare, invoke), &spec)?;
//! let mut x = [0.5f32, 1.0];
//! let mut y = [0.0f32; 2];
//! let tensor = |name, data: *mut f32| HostTensor {
//!     name, dtype: DType::F32, shape: &[2], data: data.cast(), bytes: 8, constant: false, variable: false,
//! };
//! let (input, output) = (tensor("x", x.as_mut_ptr()), tensor("y", y.as_mut_ptr()));
//! // SAFETY: `x` and `y` are live, disjoint, and untouched during the calls.
//! let outputs = unsafe { node.prepare(&[Some(input)], &[output])? };
//! assert_eq!(outputs[0].shape, [2]);
//! unsafe { node.invoke(&[Some(input)], &[output])? };
//! assert_eq!(y, [0.5f32.sin(), 1.0f32.sin()]);
//! # Ok::<(), op_core::Error>(())
//! ```

use std::cell::Cell;

use op_core::error::quoted;
use op_core::{DType, Error, Result};

use crate::arena::{ALIGNMENT, AlignedBytes};
use crate::interpreter::tensors::{
    OutputSpec, Place, TemporarySpec, TensorKind, TensorSlot, byte_size,
};
use crate::interpreter::{check_dtype, contain, panic_error};
use crate::kernel::{
    ArenaView, HostBytes, InitContext, InvokeContext, LiteNode, LiteOp, NodeId, NodeInfo, Phase,
    PrepareContext,
};
use crate::model::BuiltinOptions;

/// One tensor of the host runtime, as a phase of an [`ExternalNode`] sees
/// it. `data` may be null when `bytes` is 0 (or in prepare, before the host
/// has allocated it).
#[derive(Copy, Clone, Debug)]
pub struct HostTensor<'a> {
    /// Its name, for messages.
    pub name: &'a str,
    /// Its element type.
    pub dtype: DType,
    /// Its current shape.
    pub shape: &'a [usize],
    /// Its first byte.
    pub data: *mut u8,
    /// The number of bytes at `data`.
    pub bytes: usize,
    /// Whether it is a constant of the model: its bytes are known in
    /// prepare and never written.
    pub constant: bool,
    /// Whether it is a variable tensor (state the kernel may write).
    pub variable: bool,
}

/// Which node an [`ExternalNode`] is, and what its init gets.
#[derive(Copy, Clone, Debug)]
pub struct NodeSpec<'a> {
    /// The node's index in the host's graph, for messages.
    pub index: usize,
    /// The op's name (the custom op's), for messages.
    pub op: &'a str,
    /// The op's version.
    pub version: i32,
    /// The node's custom options, as the model holds them.
    pub custom_options: &'a [u8],
    /// The number of inputs the node lists (omitted ones included).
    pub num_inputs: usize,
    /// The number of outputs.
    pub num_outputs: usize,
}

/// What a prepare set for one output: the shape and dtype the host must
/// give the output tensor before invoke.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreparedOutput {
    /// The element type.
    pub dtype: DType,
    /// The shape.
    pub shape: Vec<usize>,
}

/// One node of a host runtime, run by a lite kernel: see the [module
/// docs](self).
pub struct ExternalNode {
    kernel: Box<dyn LiteNode>,
    op: String,
    index: usize,
    builtin_options: BuiltinOptions,
    /// The node's inputs and outputs (`Place::Host`), then its temporaries
    /// (`Place::Arena`, in `scratch`).
    slots: Vec<TensorSlot>,
    host: Vec<HostBytes>,
    inputs: Vec<Option<usize>>,
    outputs: Vec<usize>,
    temporaries: Vec<usize>,
    output_specs: Vec<OutputSpec>,
    temporary_specs: Vec<TemporarySpec>,
    prepared: Vec<PreparedOutput>,
    scratch: AlignedBytes,
    borrows: Vec<Cell<u64>>,
    generation: u64,
    /// Whether prepare succeeded since the last failure of a phase.
    ready: bool,
}

// SAFETY: the host pointers in `host` are only dereferenced inside
// `prepare` and `invoke`, whose callers vouch for them for the call; between
// calls they are inert addresses. The kernel itself is `Send`.
unsafe impl Send for ExternalNode {}

impl ExternalNode {
    /// Makes the kernel's state for the node `spec`: `op`'s init, with the
    /// node's custom options.
    ///
    /// Fails with the kernel's error, framed `Node number N (op) failed to
    /// initialize.`; a panic in the kernel is an `Internal` error.
    pub fn init(op: &dyn LiteOp, spec: &NodeSpec<'_>) -> Result<ExternalNode> {
        let builtin_options = BuiltinOptions::None;
        let id = NodeId {
            index: spec.index,
            op: spec.op,
            phase: Phase::Init,
        };
        let ctx = InitContext::new(
            id,
            spec.version,
            &builtin_options,
            spec.custom_options,
            spec.num_inputs,
            spec.num_outputs,
        );
        let kernel = contain(id, || op.init(&ctx))?;
        Ok(ExternalNode {
            kernel,
            op: spec.op.to_owned(),
            index: spec.index,
            builtin_options,
            slots: Vec::new(),
            host: Vec::new(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            temporaries: Vec::new(),
            output_specs: Vec::new(),
            temporary_specs: Vec::new(),
            prepared: Vec::new(),
            scratch: AlignedBytes::default(),
            borrows: Vec::new(),
            generation: 0,
            ready: false,
        })
    }

    /// The op's name.
    pub fn op(&self) -> &str {
        &self.op
    }

    fn id(&self, phase: Phase) -> NodeId<'_> {
        NodeId {
            index: self.index,
            op: &self.op,
            phase,
        }
    }

    /// Runs the kernel's prepare on the node's current inputs; returns each
    /// output's shape and dtype, which the host gives its output tensors
    /// before [`invoke`](Self::invoke). Allocates the temporaries the
    /// kernel requests (zeroed).
    ///
    /// # Safety
    ///
    /// Every constant input's `data` must point to `bytes` readable bytes
    /// for the call.
    pub unsafe fn prepare(
        &mut self,
        inputs: &[Option<HostTensor<'_>>],
        outputs: &[HostTensor<'_>],
    ) -> Result<&[PreparedOutput]> {
        self.ready = false;
        self.load(inputs, outputs);
        self.output_specs.clear();
        self.output_specs.extend(outputs.iter().map(|t| OutputSpec {
            shape: t.shape.to_vec(),
            dtype: t.dtype,
        }));
        self.temporary_specs.clear();
        let id = NodeId {
            index: self.index,
            op: &self.op,
            phase: Phase::Prepare,
        };
        let info = NodeInfo::new(
            id,
            &self.builtin_options,
            &self.inputs,
            &self.outputs,
            &self.slots,
            &self.host,
        );
        let mut ctx =
            PrepareContext::new(info, &mut self.output_specs, &mut self.temporary_specs, &[]);
        let kernel = &mut self.kernel;
        contain(id, || kernel.prepare(&mut ctx))?;
        self.prepared.clear();
        for (k, spec) in self.output_specs.iter().enumerate() {
            check_dtype(spec.dtype, || {
                format!("output {k} ({})", quoted(&self.slots[self.outputs[k]].name))
            })
            .map_err(|e| id.frame_error(e))?;
            self.prepared.push(PreparedOutput {
                dtype: spec.dtype,
                shape: spec.shape.clone(),
            });
        }
        self.place_temporaries()?;
        self.borrows = (0..self.slots.len()).map(|_| Cell::new(0)).collect();
        self.ready = true;
        Ok(&self.prepared)
    }

    /// Runs the kernel's invoke over the host's tensors, which must have
    /// the shapes and dtypes prepare gave (else `FailedPrecondition`).
    ///
    /// # Safety
    ///
    /// Each tensor's `data` must point to `bytes` bytes valid for the call
    /// (the outputs' and variables' writable), which nothing else reads or
    /// writes during it. Tensors may not overlap, except inputs that are
    /// read only (checked: an output that overlaps another tensor is an
    /// error, not undefined behaviour).
    pub unsafe fn invoke(
        &mut self,
        inputs: &[Option<HostTensor<'_>>],
        outputs: &[HostTensor<'_>],
    ) -> Result<()> {
        if !self.ready {
            return Err(self
                .id(Phase::Invoke)
                .frame_error(Error::failed_precondition(
                    "the node is not prepared: its last prepare or invoke failed",
                )));
        }
        self.check_prepared(outputs)?;
        self.update_host(inputs, outputs)?;
        self.check_disjoint()?;
        self.generation += 1;
        let id = NodeId {
            index: self.index,
            op: &self.op,
            phase: Phase::Invoke,
        };
        let info = NodeInfo::new(
            id,
            &self.builtin_options,
            &self.inputs,
            &self.outputs,
            &self.slots,
            &self.host,
        );
        let mut ctx = InvokeContext::new(
            info,
            &self.temporaries,
            &[],
            ArenaView::new(self.scratch.as_mut_slice()),
            &self.borrows,
            self.generation,
        );
        let kernel = &mut self.kernel;
        let outcome =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| kernel.invoke(&mut ctx)));
        match outcome {
            Ok(result) => result.map_err(|e| id.frame_error(e)),
            Err(payload) => {
                // The kernel's state is suspect: prepare again before running.
                self.ready = false;
                Err(panic_error(self.id(Phase::Invoke), payload.as_ref()))
            }
        }
    }

    /// Rebuilds the tensor table from the host's tensors (prepare: may
    /// allocate).
    fn load(&mut self, inputs: &[Option<HostTensor<'_>>], outputs: &[HostTensor<'_>]) {
        self.slots.clear();
        self.host.clear();
        self.inputs.clear();
        self.outputs.clear();
        self.temporaries.clear();
        let mut add = |tensor: &HostTensor<'_>, output: bool| {
            let k = self.host.len();
            self.host.push(HostBytes {
                ptr: tensor.data,
                len: tensor.bytes,
            });
            self.slots.push(TensorSlot {
                name: tensor.name.to_owned(),
                dtype: tensor.dtype,
                shape: tensor.shape.to_vec(),
                kind: TensorKind {
                    constant: tensor.constant && !output,
                    output,
                    variable: tensor.variable,
                    ..TensorKind::default()
                },
                place: Place::Host(k),
                bytes: tensor.bytes,
            });
            k
        };
        let inputs: Vec<Option<usize>> = inputs
            .iter()
            .map(|t| t.as_ref().map(|t| add(t, false)))
            .collect();
        let outputs: Vec<usize> = outputs.iter().map(|t| add(t, true)).collect();
        self.inputs = inputs;
        self.outputs = outputs;
    }

    /// Lays the requested temporaries out in the node's own scratch bytes.
    fn place_temporaries(&mut self) -> Result<()> {
        let id = NodeId {
            index: self.index,
            op: &self.op,
            phase: Phase::Prepare,
        };
        let mut end = 0usize;
        for (k, spec) in self.temporary_specs.iter().enumerate() {
            let name = format!("temporary {k} of node {} ({})", self.index, self.op);
            check_dtype(spec.dtype, || name.clone()).map_err(|e| id.frame_error(e))?;
            let bytes = byte_size(spec.dtype, &spec.shape)
                .ok()
                .flatten()
                .ok_or_else(|| {
                    id.frame_error(Error::resource_exhausted(format!(
                        "{name} would be larger than the address space"
                    )))
                })?;
            let offset = end;
            end = offset
                .checked_add(bytes)
                .and_then(|e| e.checked_next_multiple_of(ALIGNMENT))
                .ok_or_else(|| {
                    id.frame_error(Error::resource_exhausted(
                        "the node's temporaries would be larger than the address space",
                    ))
                })?;
            self.temporaries.push(self.slots.len());
            self.slots.push(TensorSlot {
                name,
                dtype: spec.dtype,
                shape: spec.shape.clone(),
                kind: TensorKind {
                    temporary: Some(spec.lifetime),
                    ..TensorKind::default()
                },
                place: Place::Arena(offset),
                bytes,
            });
        }
        self.scratch.resize_zeroed(end)
    }

    /// Fails unless the outputs have the shapes and dtypes prepare set.
    fn check_prepared(&self, outputs: &[HostTensor<'_>]) -> Result<()> {
        let id = self.id(Phase::Invoke);
        if outputs.len() != self.prepared.len() {
            return Err(id.frame_error(Error::failed_precondition(format!(
                "the node has {} outputs at invoke, {} at prepare",
                outputs.len(),
                self.prepared.len()
            ))));
        }
        for (k, (tensor, prepared)) in outputs.iter().zip(&self.prepared).enumerate() {
            if tensor.dtype != prepared.dtype || tensor.shape != prepared.shape.as_slice() {
                return Err(id.frame_error(Error::failed_precondition(format!(
                    "output {k} ({}) is {} {}, but prepare made it {} {}",
                    quoted(tensor.name),
                    tensor.dtype,
                    op_core::error::dims(tensor.shape),
                    prepared.dtype,
                    op_core::error::dims(&prepared.shape)
                ))));
            }
        }
        Ok(())
    }

    /// Points the table at this invoke's host bytes (which may have moved
    /// since prepare), without allocating.
    fn update_host(
        &mut self,
        inputs: &[Option<HostTensor<'_>>],
        outputs: &[HostTensor<'_>],
    ) -> Result<()> {
        let id = NodeId {
            index: self.index,
            op: &self.op,
            phase: Phase::Invoke,
        };
        if inputs.len() != self.inputs.len() {
            return Err(id.frame_error(Error::failed_precondition(format!(
                "the node has {} inputs at invoke, {} at prepare",
                inputs.len(),
                self.inputs.len()
            ))));
        }
        let given = inputs
            .iter()
            .zip(&self.inputs)
            .map(|(tensor, k)| (tensor.as_ref(), *k))
            .chain(
                outputs
                    .iter()
                    .zip(&self.outputs)
                    .map(|(t, &k)| (Some(t), Some(k))),
            );
        for (i, (tensor, k)) in given.enumerate() {
            match (tensor, k) {
                (Some(tensor), Some(k)) => {
                    let slot = &mut self.slots[k];
                    if tensor.dtype != slot.dtype {
                        return Err(id.frame_error(Error::failed_precondition(format!(
                            "tensor {} is {} at invoke, {} at prepare",
                            quoted(tensor.name),
                            tensor.dtype,
                            slot.dtype
                        ))));
                    }
                    // Reuses the capacity: no allocation while the rank stays.
                    slot.shape.clear();
                    slot.shape.extend_from_slice(tensor.shape);
                    slot.bytes = tensor.bytes;
                    self.host[k] = HostBytes {
                        ptr: tensor.data,
                        len: tensor.bytes,
                    };
                }
                (None, None) => {}
                _ => {
                    return Err(id.frame_error(Error::failed_precondition(format!(
                        "input {i} is omitted at one of prepare and invoke only"
                    ))));
                }
            }
        }
        Ok(())
    }

    /// Fails when a tensor the kernel may write shares bytes with another
    /// tensor of the node: what makes the invoke context's slices sound.
    fn check_disjoint(&self) -> Result<()> {
        let range = |k: usize| {
            let host = self.host[k];
            (host.len > 0 && !host.ptr.is_null()).then(|| {
                let start = host.ptr as usize;
                start..start.saturating_add(host.len)
            })
        };
        for (a, slot) in self.slots.iter().enumerate() {
            let Place::Host(ka) = slot.place else {
                continue;
            };
            if slot.kind.constant || !(slot.kind.output || slot.kind.variable) {
                continue;
            }
            let Some(ra) = range(ka) else { continue };
            for (b, other) in self.slots.iter().enumerate() {
                let Place::Host(kb) = other.place else {
                    continue;
                };
                if a == b {
                    continue;
                }
                if let Some(rb) = range(kb)
                    && ra.start < rb.end
                    && rb.start < ra.end
                {
                    return Err(self.id(Phase::Invoke).frame_error(Error::invalid_argument(
                        format!(
                            "tensor {} shares memory with tensor {}, and the kernel writes it",
                            quoted(&slot.name),
                            quoted(&other.name)
                        ),
                    )));
                }
            }
        }
        Ok(())
    }
}

impl std::fmt::Debug for ExternalNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExternalNode")
            .field("op", &self.op)
            .field("index", &self.index)
            .field("ready", &self.ready)
            .finish_non_exhaustive()
    }
}
