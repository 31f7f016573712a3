//! What a kernel sees in each phase: [`InitContext`], [`PrepareContext`]
//! and [`InvokeContext`], the last two over a [`NodeInfo`] (the node's
//! identity, options and tensors' dtypes and shapes) that both deref to.
//!
//! The invoke context hands out typed slices of the arena: `&[T]` for
//! inputs and `&mut [T]` for outputs, temporaries and variables, all at
//! once and without allocating. Those slices alias one block of memory, so
//! the context keeps a borrow flag per tensor, as a `RefCell` does, for the
//! duration of the node's invoke: an input can be read any number of
//! times, an output taken once, and a variable input either read or taken.
//! What keeps two *different* tensors from overlapping is the planner's
//! invariant, which the interpreter checks for every node when it plans
//! (`Interpreter::allocate_tensors`).

use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;
use std::ops::Deref;

use op_core::error::quoted;
use op_core::{DType, Error, Result};

use super::ArenaElement;
use super::options::{CustomOptions, FromOption};
use crate::interpreter::tensors::{OutputSpec, Place, TemporarySpec, TensorSlot, element_count};
use crate::model::BuiltinOptions;

/// The phase a node is in, for TensorFlow Lite's error frame.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    Init,
    Prepare,
    Invoke,
}

/// Which node is running and in what phase: what every error a kernel
/// returns is framed with.
#[derive(Copy, Clone, Debug)]
pub(crate) struct NodeId<'a> {
    pub(crate) index: usize,
    pub(crate) op: &'a str,
    pub(crate) phase: Phase,
}

impl NodeId<'_> {
    /// TensorFlow Lite's line after a kernel's message:
    /// `Node number 3 (CONV_2D) failed to prepare.`
    pub(crate) fn frame(&self) -> String {
        let phase = match self.phase {
            Phase::Init => "initialize",
            Phase::Prepare => "prepare",
            Phase::Invoke => "invoke",
        };
        format!(
            "Node number {} ({}) failed to {phase}.",
            self.index,
            op_core::error::capped(self.op)
        )
    }

    /// `error` with this node's frame, unless it already has it.
    pub(crate) fn frame_error(&self, error: Error) -> Error {
        let frame = self.frame();
        if error.context().last() == Some(&frame) {
            error
        } else {
            error.with_context(frame)
        }
    }

    fn error(&self, message: impl fmt::Display) -> Error {
        Error::invalid_argument(message.to_string()).with_context(self.frame())
    }
}

/// What [`LiteOp::init`](super::LiteOp::init) gets: the node's identity,
/// its op's version, and its options.
pub struct InitContext<'a> {
    id: NodeId<'a>,
    version: i32,
    builtin_options: &'a BuiltinOptions,
    custom_options: &'a [u8],
    num_inputs: usize,
    num_outputs: usize,
    decoded: std::cell::OnceCell<Result<CustomOptions>>,
}

impl<'a> InitContext<'a> {
    pub(crate) fn new(
        id: NodeId<'a>,
        version: i32,
        builtin_options: &'a BuiltinOptions,
        custom_options: &'a [u8],
        num_inputs: usize,
        num_outputs: usize,
    ) -> InitContext<'a> {
        InitContext {
            id,
            version,
            builtin_options,
            custom_options,
            num_inputs,
            num_outputs,
            decoded: std::cell::OnceCell::new(),
        }
    }

    /// The node's index in the subgraph's operator list.
    pub fn node_index(&self) -> usize {
        self.id.index
    }

    /// The op's name: the builtin's (`"CONV_2D"`) or the custom op's.
    pub fn op_name(&self) -> &'a str {
        self.id.op
    }

    /// The op's version, as the model gives it.
    pub fn version(&self) -> i32 {
        self.version
    }

    /// The number of inputs the operator lists (omitted ones included).
    pub fn num_inputs(&self) -> usize {
        self.num_inputs
    }

    /// The number of outputs the operator lists.
    pub fn num_outputs(&self) -> usize {
        self.num_outputs
    }

    /// A builtin op's options, parsed; [`BuiltinOptions::None`] for custom
    /// ops.
    pub fn builtin_options(&self) -> &'a BuiltinOptions {
        self.builtin_options
    }

    /// A custom op's options as the model holds them (a flexbuffer map,
    /// for ops the converter wrote): for kernels that read another format.
    pub fn custom_options_bytes(&self) -> &'a [u8] {
        self.custom_options
    }

    /// The custom options, decoded as a flexbuffer map on the first call.
    pub fn custom_options(&self) -> Result<&CustomOptions> {
        self.decoded
            .get_or_init(|| CustomOptions::decode(self.custom_options))
            .as_ref()
            .map_err(|e| self.id.frame_error(e.clone()))
    }

    /// The custom option `name` as a `T`: `ctx.option::<f32>("alpha")?`.
    ///
    /// Fails when the options are not a flexbuffer map, or the option is
    /// missing or of another type; the error names the option, what it
    /// holds, what was expected, and the node.
    pub fn option<T: FromOption>(&self, name: &str) -> Result<T> {
        self.custom_options()?
            .get(name)
            .map_err(|e| self.id.frame_error(e))
    }

    /// The custom option `name` as a `T`, or `default` when it is not set.
    pub fn option_or<T: FromOption>(&self, name: &str, default: T) -> Result<T> {
        self.custom_options()?
            .get_or(name, default)
            .map_err(|e| self.id.frame_error(e))
    }

    /// An `InvalidArgument` error with `message`, framed with the node.
    pub fn error(&self, message: impl fmt::Display) -> Error {
        self.id.error(message)
    }
}

/// What prepare and invoke can read about a node: its identity, its
/// options, and its inputs' and outputs' names, dtypes and shapes.
/// [`PrepareContext`] and [`InvokeContext`] deref to it.
pub struct NodeInfo<'a> {
    id: NodeId<'a>,
    builtin_options: &'a BuiltinOptions,
    inputs: &'a [Option<usize>],
    outputs: &'a [usize],
    tensors: &'a [TensorSlot],
    host: &'a [HostBytes],
}

/// Bytes another runtime owns, which a [`Place::Host`] tensor names: what
/// [`crate::external::ExternalNode`] lends a kernel. Empty for the
/// interpreter's own nodes.
#[derive(Copy, Clone, Debug)]
pub(crate) struct HostBytes {
    pub(crate) ptr: *mut u8,
    pub(crate) len: usize,
}

/// Which of a node's tensors a message is about.
#[derive(Copy, Clone)]
enum Role {
    Input,
    Output,
    Temporary,
}

impl Role {
    fn name(self) -> &'static str {
        match self {
            Role::Input => "input",
            Role::Output => "output",
            Role::Temporary => "temporary",
        }
    }
}

impl<'a> NodeInfo<'a> {
    pub(crate) fn new(
        id: NodeId<'a>,
        builtin_options: &'a BuiltinOptions,
        inputs: &'a [Option<usize>],
        outputs: &'a [usize],
        tensors: &'a [TensorSlot],
        host: &'a [HostBytes],
    ) -> NodeInfo<'a> {
        NodeInfo {
            id,
            builtin_options,
            inputs,
            outputs,
            tensors,
            host,
        }
    }

    /// The host bytes of a [`Place::Host`] tensor, shared.
    ///
    /// # Safety
    ///
    /// No mutable reference to these bytes may be live during `'a`; the
    /// bytes are valid for `'a` (the contract of the external node that
    /// made the table).
    #[inline]
    unsafe fn host_shared(&self, k: usize) -> Option<&'a [u8]> {
        let host = self.host.get(k)?;
        if host.len == 0 {
            return Some(&[]);
        }
        // SAFETY: non-null with `len` readable bytes for 'a, and no mutable
        // slice of them live: the caller's contract.
        (!host.ptr.is_null()).then(|| unsafe { std::slice::from_raw_parts(host.ptr, host.len) })
    }

    /// The host bytes of a [`Place::Host`] tensor, mutable.
    ///
    /// # Safety
    ///
    /// No other reference to these bytes may be live during `'a`; the bytes
    /// are valid and writable for `'a`.
    #[inline]
    unsafe fn host_exclusive(&self, k: usize) -> Option<&'a mut [u8]> {
        let host = self.host.get(k)?;
        if host.len == 0 {
            return Some(&mut []);
        }
        // SAFETY: as in `host_shared`, exclusively: the caller's contract.
        (!host.ptr.is_null()).then(|| unsafe { std::slice::from_raw_parts_mut(host.ptr, host.len) })
    }

    /// The node's index in the subgraph's operator list.
    pub fn node_index(&self) -> usize {
        self.id.index
    }

    /// The op's name: the builtin's (`"CONV_2D"`) or the custom op's.
    pub fn op_name(&self) -> &'a str {
        self.id.op
    }

    /// A builtin op's options, parsed; [`BuiltinOptions::None`] for custom
    /// ops.
    pub fn builtin_options(&self) -> &'a BuiltinOptions {
        self.builtin_options
    }

    /// The number of inputs the operator lists, omitted optional ones
    /// included (TensorFlow Lite's `NumInputs`).
    pub fn num_inputs(&self) -> usize {
        self.inputs.len()
    }

    /// The number of outputs.
    pub fn num_outputs(&self) -> usize {
        self.outputs.len()
    }

    /// Whether input `i` exists and is not an omitted optional input.
    pub fn has_input(&self, i: usize) -> bool {
        matches!(self.inputs.get(i), Some(Some(_)))
    }

    /// Input `i`'s tensor index in the subgraph.
    pub fn input_tensor_index(&self, i: usize) -> Result<usize> {
        Ok(self.input_slot(i)?.0)
    }

    /// Input `i`'s name, as the model gives it.
    pub fn input_name(&self, i: usize) -> Result<&'a str> {
        Ok(&self.input_slot(i)?.1.name)
    }

    /// Input `i`'s dtype.
    pub fn input_dtype(&self, i: usize) -> Result<DType> {
        Ok(self.input_slot(i)?.1.dtype)
    }

    /// Input `i`'s shape.
    pub fn input_shape(&self, i: usize) -> Result<&'a [usize]> {
        Ok(&self.input_slot(i)?.1.shape)
    }

    /// The number of elements of input `i` (the product of its shape).
    ///
    /// Fails when the product overflows (a shape an earlier node's prepare
    /// set, not yet checked against the address space).
    pub fn input_len(&self, i: usize) -> Result<usize> {
        let shape = &self.input_slot(i)?.1.shape;
        element_count(shape).ok_or_else(|| {
            self.error(format_args!(
                "input {i}'s shape {shape} has more elements than the address space",
                shape = op_core::error::dims(shape)
            ))
        })
    }

    /// Output `i`'s name, as the model gives it.
    pub fn output_name(&self, i: usize) -> Result<&'a str> {
        Ok(&self.output_slot(i)?.1.name)
    }

    /// Output `i`'s dtype. In prepare, [`PrepareContext::output_dtype`]
    /// gives the dtype being set.
    pub fn output_dtype(&self, i: usize) -> Result<DType> {
        Ok(self.output_slot(i)?.1.dtype)
    }

    /// Output `i`'s shape, as prepare set it. In prepare,
    /// [`PrepareContext::output_shape`] gives the shape being set.
    pub fn output_shape(&self, i: usize) -> Result<&'a [usize]> {
        Ok(&self.output_slot(i)?.1.shape)
    }

    /// An `InvalidArgument` error with `message`, framed with the node:
    /// what the `lite_ensure!` macros return.
    pub fn error(&self, message: impl fmt::Display) -> Error {
        self.id.error(message)
    }

    #[inline]
    pub(crate) fn input_slot(&self, i: usize) -> Result<(usize, &'a TensorSlot)> {
        match self.inputs.get(i) {
            Some(Some(t)) => Ok((*t, &self.tensors[*t])),
            _ => Err(self.bad_input(i)),
        }
    }

    #[inline]
    pub(crate) fn output_slot(&self, i: usize) -> Result<(usize, &'a TensorSlot)> {
        match self.outputs.get(i) {
            Some(&t) => Ok((t, &self.tensors[t])),
            None => Err(self.out_of_range(Role::Output, i, self.outputs.len())),
        }
    }

    #[cold]
    #[inline(never)]
    fn bad_input(&self, i: usize) -> Error {
        if i < self.inputs.len() {
            self.error(format_args!(
                "input {i} is an omitted optional input; check has_input({i}) first"
            ))
        } else {
            self.out_of_range(Role::Input, i, self.inputs.len())
        }
    }

    #[cold]
    #[inline(never)]
    fn out_of_range(&self, role: Role, i: usize, count: usize) -> Error {
        let plural = if count == 1 { "" } else { "s" };
        self.error(format_args!(
            "{} {i} is out of range: the node has {count} {}{plural}",
            role.name(),
            role.name()
        ))
    }

    /// Fails unless `slot` holds `T`s.
    #[inline]
    fn check_dtype<T: ArenaElement>(&self, role: Role, i: usize, slot: &TensorSlot) -> Result<()> {
        if slot.dtype == T::DTYPE {
            Ok(())
        } else {
            Err(self.wrong_dtype(role, i, slot, T::DTYPE))
        }
    }

    #[cold]
    #[inline(never)]
    fn wrong_dtype(&self, role: Role, i: usize, slot: &TensorSlot, wanted: DType) -> Error {
        self.error(format_args!(
            "{} {i} ({}) has dtype {}, not {wanted}",
            role.name(),
            quoted(&slot.name),
            slot.dtype
        ))
    }
}

/// How long a temporary's bytes live.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum TemporaryLifetime {
    /// During the node's invoke only: other nodes reuse the bytes
    /// (TensorFlow Lite's `kTfLiteArenaRw` temporaries).
    Scratch,
    /// From one invoke to the next, until the tensors are planned again
    /// (`kTfLiteArenaRwPersistent`): a kernel's running state. Zero after
    /// each `allocate_tensors`.
    Persistent,
}

/// What [`LiteNode::prepare`](super::LiteNode::prepare) gets: the node's
/// inputs (and constant inputs' values), its outputs' shapes and dtypes to
/// set, and temporaries to request. Derefs to [`NodeInfo`].
pub struct PrepareContext<'a> {
    info: NodeInfo<'a>,
    outputs: &'a mut [OutputSpec],
    temporaries: &'a mut Vec<TemporarySpec>,
    constants: &'a [u8],
}

impl<'a> Deref for PrepareContext<'a> {
    type Target = NodeInfo<'a>;

    fn deref(&self) -> &NodeInfo<'a> {
        &self.info
    }
}

impl<'a> PrepareContext<'a> {
    pub(crate) fn new(
        info: NodeInfo<'a>,
        outputs: &'a mut [OutputSpec],
        temporaries: &'a mut Vec<TemporarySpec>,
        constants: &'a [u8],
    ) -> PrepareContext<'a> {
        PrepareContext {
            info,
            outputs,
            temporaries,
            constants,
        }
    }

    /// Output `i`'s shape as set so far (the model's until
    /// [`set_output_shape`](Self::set_output_shape)).
    pub fn output_shape(&self, i: usize) -> Result<&[usize]> {
        Ok(&self.output_spec(i)?.shape)
    }

    /// Output `i`'s dtype as set so far (the model's until
    /// [`set_output_dtype`](Self::set_output_dtype)).
    pub fn output_dtype(&self, i: usize) -> Result<DType> {
        Ok(self.output_spec(i)?.dtype)
    }

    /// Sets output `i`'s shape: TensorFlow Lite's `ResizeTensor`.
    pub fn set_output_shape(&mut self, i: usize, shape: &[usize]) -> Result<()> {
        let spec = self.output_spec_mut(i)?;
        spec.shape.clear();
        spec.shape.extend_from_slice(shape);
        Ok(())
    }

    /// Sets output `i`'s dtype.
    pub fn set_output_dtype(&mut self, i: usize, dtype: DType) -> Result<()> {
        self.output_spec_mut(i)?.dtype = dtype;
        Ok(())
    }

    /// Whether input `i` is a constant of the model, whose value prepare
    /// can read with [`constant_input`](Self::constant_input).
    pub fn is_constant_input(&self, i: usize) -> Result<bool> {
        let slot = self.input_slot(i)?.1;
        Ok(match slot.place {
            Place::Constant(_) => true,
            Place::Host(_) => slot.kind.constant,
            _ => false,
        })
    }

    /// The value of input `i`, a constant of the model: a shape, an axis,
    /// a permutation that prepare needs to set the output's shape.
    ///
    /// Fails when the input is not a constant (its value exists only at
    /// invoke) or holds another dtype.
    pub fn constant_input<T: ArenaElement>(&self, i: usize) -> Result<&'a [T]> {
        let (_, slot) = self.input_slot(i)?;
        self.check_dtype::<T>(Role::Input, i, slot)?;
        let bytes = self.constant_input_bytes(i)?;
        bytemuck::try_cast_slice(bytes).or_else(|e| match bytes {
            [] => Ok(&[]),
            _ => Err(self.info.id.frame_error(Error::internal(format!(
                "a constant's bytes do not hold {}s: {e}",
                T::DTYPE
            )))),
        })
    }

    /// The bytes of input `i`, a constant of the model.
    pub fn constant_input_bytes(&self, i: usize) -> Result<&'a [u8]> {
        let (_, slot) = self.input_slot(i)?;
        match slot.place {
            Place::Constant(offset) => {
                let constants = self.constants;
                Ok(&constants[offset..offset + slot.bytes])
            }
            Place::Host(k) if slot.kind.constant => {
                // SAFETY: a constant is never written, by a kernel or its
                // host, and its bytes are valid for the prepare (the
                // external node's contract).
                unsafe { self.info.host_shared(k) }.ok_or_else(|| {
                    self.error(format_args!(
                        "input {i} ({}) is a constant without data",
                        quoted(&slot.name)
                    ))
                })
            }
            _ => Err(self.error(format_args!(
                "input {i} ({}) is not a constant of the model: its value is known only at invoke",
                quoted(&slot.name)
            ))),
        }
    }

    /// Requests a temporary tensor of `dtype` and `shape` for the node's
    /// invoke, planned in the arena with the other tensors; returns its
    /// index for [`InvokeContext::temporary_mut`]. Requested again on every
    /// prepare.
    pub fn add_temporary(
        &mut self,
        dtype: DType,
        shape: &[usize],
        lifetime: TemporaryLifetime,
    ) -> Result<usize> {
        self.temporaries.push(TemporarySpec {
            dtype,
            shape: shape.to_vec(),
            lifetime,
        });
        Ok(self.temporaries.len() - 1)
    }

    fn output_spec(&self, i: usize) -> Result<&OutputSpec> {
        self.output_slot(i)?;
        Ok(&self.outputs[i])
    }

    fn output_spec_mut(&mut self, i: usize) -> Result<&mut OutputSpec> {
        self.output_slot(i)?;
        Ok(&mut self.outputs[i])
    }
}

/// The arena, as the invoke context reaches it: one mutable borrow of the
/// arena's bytes for the node's invoke (`'a`), from which disjoint shared
/// and mutable slices are cut.
pub(crate) struct ArenaView<'a> {
    base: *mut u8,
    len: usize,
    _bytes: PhantomData<&'a mut [u8]>,
}

impl<'a> ArenaView<'a> {
    pub(crate) fn new(bytes: &'a mut [u8]) -> ArenaView<'a> {
        ArenaView {
            base: bytes.as_mut_ptr(),
            len: bytes.len(),
            _bytes: PhantomData,
        }
    }

    #[inline]
    fn in_range(&self, offset: usize, len: usize) -> bool {
        offset.checked_add(len).is_some_and(|end| end <= self.len)
    }

    /// The bytes `offset..offset + len`, shared; `None` outside the arena.
    ///
    /// # Safety
    ///
    /// No mutable reference to any of these bytes may be live during `'a`.
    #[inline]
    unsafe fn shared(&self, offset: usize, len: usize) -> Option<&'a [u8]> {
        // SAFETY: the range is inside the arena (checked first), which this
        // view borrows mutably for 'a, so no one outside the view touches
        // it; the caller guarantees no mutable slice of it is live.
        self.in_range(offset, len)
            .then(|| unsafe { std::slice::from_raw_parts(self.base.add(offset), len) })
    }

    /// The bytes `offset..offset + len`, mutable; `None` outside the arena.
    ///
    /// # Safety
    ///
    /// No other reference to any of these bytes may be live during `'a`.
    #[inline]
    unsafe fn exclusive(&self, offset: usize, len: usize) -> Option<&'a mut [u8]> {
        // SAFETY: as in `shared`, and the caller guarantees that no other
        // slice of the range is live.
        self.in_range(offset, len)
            .then(|| unsafe { std::slice::from_raw_parts_mut(self.base.add(offset), len) })
    }
}

/// A tensor's borrow state during one node's invoke, in the low two bits of
/// its flag; the rest of the flag is the invoke's generation, so that flags
/// of earlier invokes read as free without being reset.
const FREE: u64 = 0;
const SHARED: u64 = 1;
const EXCLUSIVE: u64 = 2;

/// What [`LiteNode::invoke`](super::LiteNode::invoke) gets: typed slices
/// of its inputs, outputs, temporaries and variables, in planned memory.
/// Derefs to [`NodeInfo`].
///
/// The slices live as long as the invoke (`'a`), not as long as the borrow
/// of the context, so a kernel holds its inputs and outputs together:
///
/// ```
/// # use op_lite::kernel::InvokeContext;
/// fn add_eval(ctx: &mut InvokeContext<'_>) -> op_core::Result<()> {
///     let (a, b) = (ctx.input::<f32>(0)?, ctx.input::<f32>(1)?);
///     let out = ctx.output_mut::<f32>(0)?;
///     for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
///         *o = x + y;
///     }
///     Ok(())
/// }
/// ```
///
/// Each tensor is borrowed, for the rest of the invoke, the first time it
/// is asked for: an input any number of times, an output, temporary or
/// variable once (asking twice is an error, as a `RefCell` would panic).
pub struct InvokeContext<'a> {
    info: NodeInfo<'a>,
    temporaries: &'a [usize],
    constants: &'a [u8],
    arena: ArenaView<'a>,
    borrows: &'a [Cell<u64>],
    /// This invoke's generation: unique to it among the interpreter's
    /// invokes of any node.
    generation: u64,
}

impl<'a> Deref for InvokeContext<'a> {
    type Target = NodeInfo<'a>;

    fn deref(&self) -> &NodeInfo<'a> {
        &self.info
    }
}

impl<'a> InvokeContext<'a> {
    /// The context of one node's invoke. `generation` must differ from
    /// that of every earlier context over the same `borrows`.
    pub(crate) fn new(
        info: NodeInfo<'a>,
        temporaries: &'a [usize],
        constants: &'a [u8],
        arena: ArenaView<'a>,
        borrows: &'a [Cell<u64>],
        generation: u64,
    ) -> InvokeContext<'a> {
        InvokeContext {
            info,
            temporaries,
            constants,
            arena,
            borrows,
            generation,
        }
    }

    /// Input `i`'s elements.
    ///
    /// Fails when the input is omitted, out of range, of another dtype, or
    /// a variable taken with [`variable_mut`](Self::variable_mut).
    #[inline]
    pub fn input<T: ArenaElement>(&self, i: usize) -> Result<&'a [T]> {
        let (t, slot) = self.input_slot(i)?;
        self.check_dtype::<T>(Role::Input, i, slot)?;
        self.typed(self.read(t, slot, Role::Input, i)?)
    }

    /// Input `i`'s bytes, whatever its dtype.
    #[inline]
    pub fn input_bytes(&self, i: usize) -> Result<&'a [u8]> {
        let (t, slot) = self.input_slot(i)?;
        self.read(t, slot, Role::Input, i)
    }

    /// Output `i`'s elements, to write.
    ///
    /// Fails when the output is out of range, of another dtype, or already
    /// taken in this invoke.
    #[inline]
    pub fn output_mut<T: ArenaElement>(&mut self, i: usize) -> Result<&'a mut [T]> {
        let (t, slot) = self.output_slot(i)?;
        self.check_dtype::<T>(Role::Output, i, slot)?;
        self.typed_mut(self.write(t, slot, Role::Output, i)?)
    }

    /// Output `i`'s bytes, to write, whatever its dtype.
    #[inline]
    pub fn output_bytes_mut(&mut self, i: usize) -> Result<&'a mut [u8]> {
        let (t, slot) = self.output_slot(i)?;
        self.write(t, slot, Role::Output, i)
    }

    /// The elements of input `i`, a variable tensor of the model, to read
    /// and write: state that persists from one invoke to the next.
    ///
    /// Fails when the input is not a variable, or is already borrowed in
    /// this invoke.
    pub fn variable_mut<T: ArenaElement>(&mut self, i: usize) -> Result<&'a mut [T]> {
        let (t, slot) = self.input_slot(i)?;
        self.check_dtype::<T>(Role::Input, i, slot)?;
        if !slot.kind.variable {
            return Err(self.error(format_args!(
                "input {i} ({}) is not a variable tensor: only variables are written through inputs",
                quoted(&slot.name)
            )));
        }
        self.typed_mut(self.write(t, slot, Role::Input, i)?)
    }

    /// The number of temporaries prepare requested.
    pub fn num_temporaries(&self) -> usize {
        self.temporaries.len()
    }

    /// Temporary `k`'s shape.
    pub fn temporary_shape(&self, k: usize) -> Result<&'a [usize]> {
        Ok(&self.temporary_slot(k)?.1.shape)
    }

    /// Temporary `k`'s elements (`k` as
    /// [`PrepareContext::add_temporary`] returned it).
    #[inline]
    pub fn temporary_mut<T: ArenaElement>(&mut self, k: usize) -> Result<&'a mut [T]> {
        let (t, slot) = self.temporary_slot(k)?;
        self.check_dtype::<T>(Role::Temporary, k, slot)?;
        self.typed_mut(self.write(t, slot, Role::Temporary, k)?)
    }

    /// Temporary `k`'s bytes.
    #[inline]
    pub fn temporary_bytes_mut(&mut self, k: usize) -> Result<&'a mut [u8]> {
        let (t, slot) = self.temporary_slot(k)?;
        self.write(t, slot, Role::Temporary, k)
    }

    #[inline]
    fn temporary_slot(&self, k: usize) -> Result<(usize, &'a TensorSlot)> {
        match self.temporaries.get(k) {
            Some(&t) => Ok((t, &self.info.tensors[t])),
            None => Err(self.out_of_range(Role::Temporary, k, self.temporaries.len())),
        }
    }

    /// The bytes of tensor `t` (the node's `role` `i`), shared.
    #[inline]
    fn read(&self, t: usize, slot: &TensorSlot, role: Role, i: usize) -> Result<&'a [u8]> {
        let constants = self.constants;
        let bytes = match slot.place {
            Place::Arena(offset) => {
                self.borrow(t, SHARED, role, i)?;
                // SAFETY: tensor t is now marked shared for the rest of the
                // invoke, so this context hands out no mutable slice of it;
                // every other tensor of the node that overlaps it in the
                // arena is read-only (checked by `allocate_tensors` for every
                // node); and the next invoke has another generation, when the
                // slices (bounded by 'a) are dead.
                unsafe { self.arena.shared(offset, slot.bytes) }
            }
            Place::Constant(offset) => constants.get(offset..offset.saturating_add(slot.bytes)),
            Place::Host(k) => {
                self.borrow(t, SHARED, role, i)?;
                // SAFETY: as for the arena: marked shared for the invoke,
                // and the external node checked that no writable tensor of
                // the node overlaps another.
                unsafe { self.info.host_shared(k) }
            }
            Place::Nowhere => Some(&[][..]),
        };
        bytes.ok_or_else(|| self.misplaced(slot))
    }

    /// The bytes of tensor `t` (the node's `role` `i`), mutable.
    #[inline]
    fn write(&self, t: usize, slot: &TensorSlot, role: Role, i: usize) -> Result<&'a mut [u8]> {
        let bytes = match slot.place {
            Place::Arena(offset) => {
                self.borrow(t, EXCLUSIVE, role, i)?;
                // SAFETY: tensor t was free and is now marked exclusive for
                // the rest of the invoke, so this context hands out no other
                // slice of it; no other tensor of the node overlaps a
                // writable one in the arena (checked by `allocate_tensors`
                // for every node); and the next invoke has another
                // generation, when the slices (bounded by 'a) are dead.
                unsafe { self.arena.exclusive(offset, slot.bytes) }
            }
            Place::Host(k) if !slot.kind.constant => {
                self.borrow(t, EXCLUSIVE, role, i)?;
                // SAFETY: as for the arena: marked exclusive for the invoke,
                // and the external node checked that it overlaps no other
                // tensor of the node.
                unsafe { self.info.host_exclusive(k) }
            }
            Place::Nowhere if slot.bytes == 0 => Some(&mut [][..]),
            _ => None,
        };
        bytes.ok_or_else(|| self.misplaced(slot))
    }

    /// Marks tensor `t` borrowed as `how` for this invoke, or fails if that
    /// conflicts with how it is already borrowed.
    #[inline]
    fn borrow(&self, t: usize, how: u64, role: Role, i: usize) -> Result<()> {
        let flag = &self.borrows[t];
        let current = flag.get();
        let state = if current >> 2 == self.generation {
            current & 3
        } else {
            FREE
        };
        if state == FREE || (state == SHARED && how == SHARED) {
            flag.set(self.generation << 2 | how);
            Ok(())
        } else {
            Err(self.conflict(t, state, role, i))
        }
    }

    #[cold]
    #[inline(never)]
    fn conflict(&self, t: usize, state: u64, role: Role, i: usize) -> Error {
        let how = if state == SHARED {
            "read as an input"
        } else {
            "taken for writing"
        };
        self.error(format_args!(
            "{} {i} ({}) is already {how} in this invoke",
            role.name(),
            quoted(&self.info.tensors[t].name)
        ))
    }

    /// A tensor whose planned bytes are not there: a bug of the planner.
    #[cold]
    #[inline(never)]
    fn misplaced(&self, slot: &TensorSlot) -> Error {
        self.info.id.frame_error(Error::internal(format!(
            "tensor {} ({} bytes at {:?}) is outside the memory planned for it",
            quoted(&slot.name),
            slot.bytes,
            slot.place
        )))
    }

    /// `bytes` as `T`s: aligned by the arena's planning and whole by the
    /// tensor's size, or an internal error (a bug, not the kernel's).
    #[inline]
    fn typed<T: ArenaElement>(&self, bytes: &'a [u8]) -> Result<&'a [T]> {
        if bytes.is_empty() {
            return Ok(&[]);
        }
        bytemuck::try_cast_slice(bytes).map_err(|e| self.not_elements::<T>(e))
    }

    /// `bytes` as `T`s, mutable: see [`typed`](Self::typed).
    #[inline]
    fn typed_mut<T: ArenaElement>(&self, bytes: &'a mut [u8]) -> Result<&'a mut [T]> {
        if bytes.is_empty() {
            return Ok(&mut []);
        }
        bytemuck::try_cast_slice_mut(bytes).map_err(|e| self.not_elements::<T>(e))
    }

    #[cold]
    #[inline(never)]
    fn not_elements<T: ArenaElement>(&self, e: bytemuck::PodCastError) -> Error {
        self.info.id.frame_error(Error::internal(format!(
            "a tensor's bytes do not hold {}s: {e}",
            T::DTYPE
        )))
    }
}

/// The node and op, without the options.
impl fmt::Debug for InitContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InitContext")
            .field("node", &self.id.index)
            .field("op", &self.id.op)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}
