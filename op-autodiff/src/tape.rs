//! The eager gradient tape: [`GradientTape`], TensorFlow's
//! `tf.GradientTape`.
//!
//! A tape is active on the thread that made it from its creation until it
//! is dropped or [`stop`](GradientTape::stop)ped. While it is, every op run
//! on that thread whose inputs include a value the tape knows (a tensor it
//! [`watch`](GradientTape::watch)es, or the output of an op it recorded) is
//! recorded: the op, its node, its inputs and its outputs. Variables need
//! no watching: a `ReadVariableOp` on a variable's handle is recorded with
//! the handle watched, so the handle is a source like any tensor.
//! [`gradient`](GradientTape::gradient) then walks the record backwards,
//! running each op's registered gradient function.
//!
//! ```
//! use op_autodiff::tape::GradientTape;
//! use op_core::Tensor;
//! use op_kernels::math::{Mul, Sin};
//! # op_kernels::link();
//!
//! let mut x = Tensor::from_vec([2], vec![1.0f64, 2.0])?;
//! let tape = GradientTape::new();
//! tape.watch(&mut x);
//! let y = Mul::call(&x, Sin::call(&x).run()?).run()?; // x sin x
//! let [dy_dx] = tape.gradient(&y, &[&x])?.try_into().unwrap();
//! // sin x + x cos x
//! let expected = [1f64.sin() + 1f64.cos(), 2f64.sin() + 2.0 * 2f64.cos()];
//! for (got, want) in dy_dx.unwrap().as_slice::<f64>()?.iter().zip(expected) {
//!     assert!((got - want).abs() < 1e-12);
//! }
//! # Ok::<(), op_core::Error>(())
//! ```
//!
//! # Two ways in, one record
//!
//! Every eager op, whichever way it is called (a typed wrapper's `.run()`,
//! an [`OpCall`] by name, a [`PreparedOp`](op_core::PreparedOp) run
//! directly), reaches `PreparedOp::run_into`, which shows it to the tapes
//! active on its thread ([`op_core::gradient::recording`]). That seam is
//! the one place a tape records. The tape is also an [`Executor`], a
//! decorator over the executor it was made with (as burn-autodiff's
//! `Autodiff<B>` wraps a backend): `Op::call(..).run_on(&tape)` runs the
//! call on the wrapped executor, and the seam records it. The two are the
//! same record; `run_on(&tape)` says in the code which tape a computation
//! is for, and lets code generic over `E: Executor<Value = Tensor>` be
//! handed either a plain runtime or a tape. The tape's gradient functions
//! also run on the wrapped executor.
//!
//! # Telling values apart
//!
//! A tensor has no identity of its own: clones share a buffer, and some
//! ops return their input's buffer (`Identity`, `Reshape`), or another
//! tensor's (`ReadVariableOp`: every read of a variable shares its value).
//! The tape knows a value by its [`Tensor::identity`] (its buffer's
//! address, or the tag of a scalar held inside its tensor), dtype and
//! dims, and keeps every tensor it knows alive, so no address it knows is
//! reused while it lives. To make that identity sound, every recorded
//! op's output is given one no other tensor has
//! ([`Tensor::make_distinct`]): an output alone in its buffer has it
//! already, a small one gets a fresh tag (no allocation), and one that
//! shares its buffer with another tensor is moved to a copy: `y =
//! Identity(x)` is then a value apart from `x`, and two reads of a
//! variable are two values. [`watch`](GradientTape::watch) does the same
//! to a small tensor (which is why it takes `&mut Tensor`). Clones of a
//! known tensor are that value.
//!
//! # Cost
//!
//! With no tape on the thread, an op pays one thread-local read. With a
//! tape whose values are not among the op's inputs, one hash lookup per
//! input. A recorded op also pays the seam (it keeps the inputs and
//! collects the recorders that watch them), and the tape appends to its
//! arrays and enters the outputs in its map: the op's definition and node
//! are kept once per tape (`Arc`s), nothing is formatted, and a freed
//! tape's arrays serve the next tape on the thread, so a training loop's
//! tape per step allocates nothing for its record once warm. The one
//! allocation left is the copy of an output that shares its buffer with
//! another tensor (`Identity`, `Reshape`, a variable's read). The benchmark
//! `cargo bench -p op-autodiff --bench tape` measures each case.

use std::borrow::Borrow;
use std::cell::{Cell, RefCell};
use std::fmt;
use std::rc::Rc;
use std::sync::Arc;

use op_core::error::quoted;
use op_core::gradient::recording::{self, Recorder, RecorderGuard};
use op_core::gradient::{Gradient, GradientBuilder, is_trainable};
use op_core::shape_inference::PartialShape;
use op_core::{
    DType, Error, Executor, OpCall, OpDef, OpInstance, Registry, ResourceHandle, Result, Runtime,
    Tensor, TensorIdentity,
};
use op_kernels::variable::Var;
use rustc_hash::FxHashMap;

use crate::symbolic::Unconnected;

/// A value id for a tensor the tape does not know (a constant input), or
/// an output that carries no gradient.
const NONE: usize = usize::MAX;

/// The op whose reads watch a variable's handle.
const READ_VARIABLE: &str = "ReadVariableOp";

/// How a tape is made: whether it can compute gradients more than once,
/// and whether it watches the variables the ops it records read.
#[derive(Clone, Copy, Debug)]
pub struct TapeOptions {
    persistent: bool,
    watch_accessed_variables: bool,
}

impl Default for TapeOptions {
    fn default() -> Self {
        TapeOptions {
            persistent: false,
            watch_accessed_variables: true,
        }
    }
}

impl TapeOptions {
    /// The defaults: not persistent, watching accessed variables.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether [`gradient`](GradientTape::gradient) may be called more
    /// than once (the tape keeps its record until dropped). Default: no,
    /// and the record is freed by the first call.
    pub fn persistent(mut self, persistent: bool) -> Self {
        self.persistent = persistent;
        self
    }

    /// Whether a `ReadVariableOp` of a trainable (floating-point or
    /// complex) variable watches the variable's handle. Default: yes.
    /// Without it, only explicitly [`watch`](GradientTape::watch)ed
    /// handles and tensors are sources.
    pub fn watch_accessed_variables(mut self, watch: bool) -> Self {
        self.watch_accessed_variables = watch;
        self
    }
}

/// How [`gradient_with`](GradientTape::gradient_with) starts and ends.
#[derive(Clone, Debug, Default)]
pub struct GradientOptions {
    output_gradients: Option<Vec<Option<Tensor>>>,
    unconnected: Unconnected,
}

impl GradientOptions {
    /// The defaults: each target's gradient starts at ones, and
    /// unconnected sources get `None`.
    pub fn new() -> Self {
        Self::default()
    }

    /// The gradients the targets start from, one per target (`None`: ones
    /// of the target's shape), each of its target's dtype and shape: the
    /// vector of a vector-Jacobian product. By default, all ones.
    pub fn output_gradients(mut self, gradients: impl IntoIterator<Item = Option<Tensor>>) -> Self {
        self.output_gradients = Some(gradients.into_iter().collect());
        self
    }

    /// What a source no target depends on gets (default:
    /// [`Unconnected::None`]; [`Unconnected::Zeros`]: zeros of its dtype
    /// and shape, or for a variable's handle of the variable's value), as
    /// in [`gradients`](crate::symbolic::gradients).
    pub fn unconnected(mut self, unconnected: Unconnected) -> Self {
        self.unconnected = unconnected;
        self
    }
}

/// What [`gradient`](GradientTape::gradient) differentiates: one tensor
/// (`&loss`) or several (`&[&y1, &y2]`, a slice or a `Vec`), whose
/// gradients are summed.
pub trait Targets {
    /// The target tensors.
    fn targets(&self) -> Vec<&Tensor>;
}

impl Targets for Tensor {
    fn targets(&self) -> Vec<&Tensor> {
        vec![self]
    }
}

impl<T: Borrow<Tensor>> Targets for [T] {
    fn targets(&self) -> Vec<&Tensor> {
        self.iter().map(Borrow::borrow).collect()
    }
}

impl<T: Borrow<Tensor>, const N: usize> Targets for [T; N] {
    fn targets(&self) -> Vec<&Tensor> {
        self.iter().map(Borrow::borrow).collect()
    }
}

impl<T: Borrow<Tensor>> Targets for Vec<T> {
    fn targets(&self) -> Vec<&Tensor> {
        self.iter().map(Borrow::borrow).collect()
    }
}

/// Records the ops run on its thread while it is active, and computes
/// gradients from the record (TensorFlow's `tf.GradientTape`; see the
/// [module docs](self)).
///
/// - [`new`](GradientTape::new), [`persistent`](GradientTape::persistent):
///   a tape over [`Runtime::global`], active at once;
///   [`over`](GradientTape::over) and
///   [`with_options`](GradientTape::with_options) wrap another executor.
/// - [`watch`](Self::watch) a tensor to differentiate with respect to it;
///   variables read through `ReadVariableOp` are watched on their own.
/// - [`gradient`](Self::gradient)`(target, sources)`: one optional
///   gradient per source. A non-persistent tape computes gradients once
///   (and stops recording then); a persistent one as often as asked.
/// - Tapes nest: an outer tape records the ops an inner tape's
///   `gradient` runs, so differentiating the inner gradient gives second
///   derivatives. A tape never records its own gradient computation.
///
/// A tape belongs to its thread (it is neither `Send` nor `Sync`): ops run
/// on other threads are not recorded.
pub struct GradientTape<E = &'static Runtime> {
    executor: E,
    core: Rc<Core>,
    guard: RefCell<Option<RecorderGuard>>,
    persistent: bool,
    used: Cell<bool>,
}

impl<E> fmt::Debug for GradientTape<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (ops, values) = match self.core.tape.try_borrow() {
            Ok(tape) => (tape.ops.len(), tape.values.len()),
            Err(_) => (0, 0),
        };
        f.debug_struct("GradientTape")
            .field("persistent", &self.persistent)
            .field(
                "recording",
                &(self.guard.borrow().is_some() && !self.core.paused.get()),
            )
            .field("ops", &ops)
            .field("values", &values)
            .finish_non_exhaustive()
    }
}

impl GradientTape {
    /// A non-persistent tape over [`Runtime::global`], recording on this
    /// thread from now on.
    pub fn new() -> Self {
        Self::with_options(Runtime::global(), TapeOptions::new())
    }

    /// A persistent tape over [`Runtime::global`]: its
    /// [`gradient`](Self::gradient) may be called any number of times.
    pub fn persistent() -> Self {
        Self::with_options(Runtime::global(), TapeOptions::new().persistent(true))
    }
}

impl Default for GradientTape {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Executor<Value = Tensor>> GradientTape<E> {
    /// A non-persistent tape over `executor` (what `run_on(&tape)` and the
    /// gradient functions run on), recording on this thread from now on.
    pub fn over(executor: E) -> Self {
        Self::with_options(executor, TapeOptions::new())
    }

    /// A tape over `executor` with `options`, recording on this thread
    /// from now on.
    pub fn with_options(executor: E, options: TapeOptions) -> Self {
        let core = Rc::new(Core {
            tape: RefCell::new(Tape::new()),
            paused: Cell::new(false),
            watch_variables: options.watch_accessed_variables,
        });
        let guard = recording::push(core.clone());
        GradientTape {
            executor,
            core,
            guard: RefCell::new(Some(guard)),
            persistent: options.persistent,
            used: Cell::new(false),
        }
    }

    /// The executor this tape wraps.
    pub fn executor(&self) -> &E {
        &self.executor
    }

    /// Whether the tape is recording: active, not stopped, not paused by
    /// [`stop_recording`](Self::stop_recording).
    pub fn is_recording(&self) -> bool {
        self.guard.borrow().is_some() && !self.core.paused.get()
    }

    /// How many op runs the tape holds (none once a non-persistent tape
    /// computed its gradients).
    pub fn recorded_ops(&self) -> usize {
        self.core.tape.try_borrow().map_or(0, |tape| tape.ops.len())
    }

    /// Whether [`gradient`](Self::gradient) may be called more than once.
    pub fn is_persistent(&self) -> bool {
        self.persistent
    }

    /// Watches `tensor`: ops on it (and on what is computed from it) are
    /// recorded from now on, and it can be a source of
    /// [`gradient`](Self::gradient). Watching a tensor the tape already
    /// knows changes nothing.
    ///
    /// A scalar (at most 8 bytes) held inside its tensor has no identity
    /// to be known by until it is given one ([`Tensor::make_distinct`]: a
    /// tag, no allocation), hence `&mut`; so do its clones made after.
    /// Tensors of dtypes that carry no gradient (integers, booleans,
    /// strings) are not watched, as in TensorFlow.
    pub fn watch(&self, tensor: &mut Tensor) {
        if !is_trainable(tensor.dtype()) {
            return;
        }
        // Only device memory can have none, and cannot be watched yet.
        if tensor.identity().is_none() && tensor.make_distinct().is_err() {
            return;
        }
        if let Ok(mut tape) = self.core.tape.try_borrow_mut() {
            tape.watch(tensor);
        }
    }

    /// Stops recording for good; what was recorded stays, so
    /// [`gradient`](Self::gradient) still works (the end of a `with
    /// tf.GradientTape()` block). Dropping the tape does the same.
    pub fn stop(&self) {
        self.guard.borrow_mut().take();
    }

    /// Pauses recording until the returned guard is dropped (TensorFlow's
    /// `tape.stop_recording()`): the ops run meanwhile are not recorded.
    pub fn stop_recording(&self) -> RecordingPaused<'_> {
        RecordingPaused::new(&self.core)
    }

    /// The gradients of `target` (one tensor or several, summed) with
    /// respect to each of `sources`, starting from ones: one entry per
    /// source, `None` for a source no target depends on (or of a dtype
    /// that carries no gradient). A variable's gradient is asked for with
    /// its handle (`var.handle()`).
    ///
    /// Errors: `FailedPrecondition` when a non-persistent tape was already
    /// asked (the record is gone); `NotFound` when an op on a path from a
    /// source to a target has no registered gradient (naming the op, its
    /// node and the two fixes); any error of a gradient function or of the
    /// ops it runs.
    pub fn gradient<T: Targets + ?Sized, S: Borrow<Tensor>>(
        &self,
        target: &T,
        sources: &[S],
    ) -> Result<Vec<Option<Tensor>>> {
        self.gradient_with(target, sources, GradientOptions::new())
    }

    /// [`gradient`](Self::gradient) with options: the gradients the targets
    /// start from, and what unconnected sources get. `InvalidArgument`
    /// when the output gradients are not one per target, each of its
    /// target's dtype and shape.
    pub fn gradient_with<T: Targets + ?Sized, S: Borrow<Tensor>>(
        &self,
        target: &T,
        sources: &[S],
        options: GradientOptions,
    ) -> Result<Vec<Option<Tensor>>> {
        let targets = target.targets();
        let sources: Vec<&Tensor> = sources.iter().map(Borrow::borrow).collect();
        if let Some(given) = &options.output_gradients {
            check_output_gradients(&targets, given)?;
        }
        if !self.persistent && self.used.replace(true) {
            return Err(Error::failed_precondition(
                "this GradientTape is not persistent and already computed gradients, which freed its record: make it with GradientTape::persistent() (or TapeOptions::persistent(true)) to call gradient more than once",
            ));
        }
        // A tape never records its own backward pass (an outer tape does).
        let _paused = RecordingPaused::new(&self.core);
        let builder = Eager(&self.executor);
        if self.persistent {
            let tape = self.core.tape.try_borrow().map_err(|_| {
                Error::failed_precondition(
                    "GradientTape::gradient was called from inside one of this tape's gradient functions",
                )
            })?;
            tape.gradient(&builder, &targets, &sources, &options)
        } else {
            // The record is freed once done with, and nothing more is
            // recorded (as TensorFlow's non-persistent tape).
            self.stop();
            let tape = self.core.tape.take();
            tape.gradient(&builder, &targets, &sources, &options)
        }
    }
}

/// The tape is a decorator over its executor: a call runs on the wrapped
/// executor and is recorded by the seam every eager op passes (see the
/// [module docs](self)).
impl<E: Executor<Value = Tensor>> Executor for GradientTape<E> {
    type Value = Tensor;

    fn execute(&self, call: OpCall<'_, Tensor>) -> Result<Vec<Tensor>> {
        self.executor.execute(call)
    }

    fn execute_grouped(&self, call: OpCall<'_, Tensor>) -> Result<Vec<Vec<Tensor>>> {
        self.executor.execute_grouped(call)
    }

    fn execute_array<const N: usize>(&self, call: OpCall<'_, Tensor>) -> Result<[Tensor; N]> {
        self.executor.execute_array(call)
    }
}

/// Recording paused on a tape until dropped: see
/// [`GradientTape::stop_recording`].
#[must_use = "recording resumes when the guard is dropped"]
pub struct RecordingPaused<'a> {
    core: &'a Core,
    was_paused: bool,
}

impl<'a> RecordingPaused<'a> {
    fn new(core: &'a Core) -> Self {
        RecordingPaused {
            core,
            was_paused: core.paused.replace(true),
        }
    }
}

impl fmt::Debug for RecordingPaused<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RecordingPaused")
    }
}

impl Drop for RecordingPaused<'_> {
    fn drop(&mut self) {
        self.core.paused.set(self.was_paused);
    }
}

/// The recorder a tape pushes on its thread.
struct Core {
    tape: RefCell<Tape>,
    /// Set while the tape computes its own gradients, or the user paused it.
    paused: Cell<bool>,
    watch_variables: bool,
}

impl Recorder for Core {
    #[inline]
    fn begin(&self, op: &Arc<OpDef>, node: &Arc<OpInstance>, inputs: &[Tensor]) -> bool {
        if self.paused.get() {
            return false;
        }
        self.tape
            .try_borrow_mut()
            .is_ok_and(|mut tape| tape.begin(op, node, inputs, self.watch_variables))
    }

    fn end(&self, outputs: Option<&mut [Option<Tensor>]>, first: bool) -> bool {
        self.tape
            .try_borrow_mut()
            .is_ok_and(|mut tape| tape.end(outputs, first))
    }
}

/// One recorded op run: its node is `nodes[node]`, its inputs'
/// tensors `tensors[inputs]` and its outputs' `tensors[outputs]`
/// (flattened; apart when the kernel ran ops of its own in between).
struct Record {
    node: usize,
    inputs: std::ops::Range<usize>,
    outputs: std::ops::Range<usize>,
}

impl Record {
    fn inputs(&self) -> std::ops::Range<usize> {
        self.inputs.clone()
    }

    fn outputs(&self) -> std::ops::Range<usize> {
        self.outputs.clone()
    }
}

/// A run whose inputs a tape kept in [`Recorder::begin`], waiting for its
/// outputs.
struct Pending {
    node: usize,
    inputs: std::ops::Range<usize>,
}

/// Where a value's tensor is kept, and the next value with the same
/// identity (one that differs in dtype or shape: a reshape shares its
/// input's buffer), or `NONE`.
#[derive(Clone, Copy)]
struct ValueInfo {
    slot: usize,
    next: usize,
}

/// The most tensors a freed tape's arrays may hold for the next tape on
/// its thread.
const SPARE_LIMIT: usize = 1 << 16;

thread_local! {
    /// A freed tape's emptied arrays and map, for the next tape on this
    /// thread: a training loop's tape per step allocates nothing once warm.
    static SPARE: RefCell<Option<Tape>> = const { RefCell::new(None) };
}

/// What a tape recorded.
#[derive(Default)]
struct Tape {
    /// The first value under each identity.
    known: FxHashMap<TensorIdentity, usize>,
    /// The values it knows, by id.
    values: Vec<ValueInfo>,
    /// The tensors it keeps: every recorded op's inputs and outputs, one
    /// op after another, and the watched tensors (kept alive: their
    /// addresses are not reused while the tape lives). `None` for an input
    /// the tape knows: its tensor is where its value is.
    tensors: Vec<Option<Tensor>>,
    /// Beside each of `tensors`, its value id, or `NONE`.
    ids: Vec<usize>,
    ops: Vec<Record>,
    /// The recorded ops' definitions and nodes, each once (a loop runs one
    /// node many times).
    nodes: Vec<(Arc<OpDef>, Arc<OpInstance>)>,
    /// Where each node is in `nodes`, by address (kept alive there).
    node_index: FxHashMap<usize, usize>,
    /// The runs begun and not ended yet, innermost last (a kernel may run
    /// ops of its own).
    pending: Vec<Pending>,
}

impl Drop for Tape {
    fn drop(&mut self) {
        let capacity = self.tensors.capacity();
        if capacity == 0 || capacity > SPARE_LIMIT {
            return;
        }
        // The tensors go now; the emptied arrays wait for the next tape
        // (unless one already waits: then they go too).
        let _ = SPARE.try_with(|spare| {
            if let Ok(mut spare) = spare.try_borrow_mut()
                && spare.is_none()
            {
                self.known.clear();
                self.values.clear();
                self.tensors.clear();
                self.ids.clear();
                self.ops.clear();
                self.nodes.clear();
                self.node_index.clear();
                self.pending.clear();
                *spare = Some(Tape {
                    known: std::mem::take(&mut self.known),
                    values: std::mem::take(&mut self.values),
                    tensors: std::mem::take(&mut self.tensors),
                    ids: std::mem::take(&mut self.ids),
                    ops: std::mem::take(&mut self.ops),
                    nodes: std::mem::take(&mut self.nodes),
                    node_index: std::mem::take(&mut self.node_index),
                    pending: std::mem::take(&mut self.pending),
                });
            }
        });
    }
}

impl Tape {
    /// An empty tape, in a freed tape's arrays when this thread has some.
    fn new() -> Tape {
        SPARE
            .try_with(|spare| spare.try_borrow_mut().ok().and_then(|mut s| s.take()))
            .ok()
            .flatten()
            .unwrap_or_default()
    }

    /// The id of the value `tensor` is, or `NONE`.
    #[inline]
    fn lookup(&self, tensor: &Tensor) -> usize {
        let Some(identity) = tensor.identity() else {
            return NONE;
        };
        let mut value = self.known.get(&identity).copied().unwrap_or(NONE);
        while value != NONE {
            let info = self.values[value];
            if let Some(known) = &self.tensors[info.slot]
                && known.dtype() == tensor.dtype()
                && same_dims(known.dims(), tensor.dims())
            {
                return value;
            }
            value = info.next;
        }
        NONE
    }

    /// Keeps `tensor` (which has identity `identity` and is not known yet)
    /// as a new value; returns its id.
    fn push_value(&mut self, tensor: &Tensor, identity: TensorIdentity) -> usize {
        let value = self.values.len();
        let slot = self.tensors.len();
        let next = match self.known.entry(identity) {
            std::collections::hash_map::Entry::Occupied(mut first) => {
                std::mem::replace(first.get_mut(), value)
            }
            std::collections::hash_map::Entry::Vacant(first) => {
                first.insert(value);
                NONE
            }
        };
        self.values.push(ValueInfo { slot, next });
        self.tensors.push(Some(tensor.clone()));
        self.ids.push(value);
        value
    }

    /// Watches `tensor` (which has an identity) unless known.
    fn watch(&mut self, tensor: &Tensor) -> usize {
        let known = self.lookup(tensor);
        if known != NONE {
            return known;
        }
        match tensor.identity() {
            Some(identity) => self.push_value(tensor, identity),
            None => NONE,
        }
    }

    /// Begins recording a run (see [`Recorder::begin`]): keeps its
    /// inputs if one of them is a value of this tape; returns whether it
    /// did.
    fn begin(
        &mut self,
        op: &Arc<OpDef>,
        node: &Arc<OpInstance>,
        inputs: &[Tensor],
        watch_variables: bool,
    ) -> bool {
        // Nothing flows back through an op with no output that carries a
        // gradient (`Shape`, a comparison, a cast to an integer).
        if !node.output_types().iter().copied().any(is_trainable) {
            return false;
        }
        // The name is compared last: most ops have no resource input.
        if watch_variables
            && let [handle] = inputs
            && handle.dtype() == DType::Resource
            && op.name == READ_VARIABLE
        {
            self.watch(handle);
        }
        let start = self.ids.len();
        for input in inputs {
            let id = self.lookup(input);
            self.ids.push(id);
        }
        let ids = &self.ids[start..];
        if ids.iter().all(|&id| id == NONE) {
            self.ids.truncate(start);
            return false;
        }
        // A known input's tensor is kept where its value is.
        self.tensors.extend(
            inputs
                .iter()
                .zip(ids)
                .map(|(input, &id)| (id == NONE).then(|| input.clone())),
        );
        let node = match self.node_index.entry(Arc::as_ptr(node) as usize) {
            std::collections::hash_map::Entry::Occupied(index) => *index.get(),
            std::collections::hash_map::Entry::Vacant(index) => {
                self.nodes.push((op.clone(), node.clone()));
                *index.insert(self.nodes.len() - 1)
            }
        };
        self.pending.push(Pending {
            node,
            inputs: start..self.tensors.len(),
        });
        true
    }

    /// Ends recording the innermost run begun (see [`Recorder::end`]):
    /// keeps its outputs, the first tape to keep them (`owns`) giving them
    /// identities of their own. Returns whether it kept them (not for a
    /// failed run, whose kept inputs then stay unused).
    fn end(&mut self, outputs: Option<&mut [Option<Tensor>]>, owns: bool) -> bool {
        let (Some(pending), Some(outputs)) = (self.pending.pop(), outputs) else {
            return false;
        };
        let start = self.tensors.len();
        for (k, slot) in outputs.iter_mut().enumerate() {
            let Some(output) = slot else {
                // The seam fills every slot; a hole carries nothing.
                self.tensors.push(None);
                self.ids.push(NONE);
                continue;
            };
            if is_trainable(self.nodes[pending.node].1.output_types()[k]) {
                // An identity no other tensor has is no value any tape
                // knows (tapes keep theirs alive); the first tape makes sure
                // of that. Only when it could not (a failed copy) may the
                // output be a known value, which then carries no gradient.
                let fresh = owns && output.make_distinct().is_ok();
                if let Some(identity) = output.identity()
                    && (fresh || self.lookup(output) == NONE)
                {
                    self.push_value(output, identity);
                    continue;
                }
            }
            self.tensors.push(Some(output.clone()));
            self.ids.push(NONE);
        }
        self.ops.push(Record {
            node: pending.node,
            inputs: pending.inputs,
            outputs: start..self.tensors.len(),
        });
        true
    }

    /// The backward pass: see [`GradientTape::gradient_with`].
    fn gradient(
        &self,
        builder: &dyn GradientBuilder<Value = Tensor>,
        targets: &[&Tensor],
        sources: &[&Tensor],
        options: &GradientOptions,
    ) -> Result<Vec<Option<Tensor>>> {
        let source_ids: Vec<usize> = sources
            .iter()
            .map(|source| match is_trainable(source.dtype()) {
                true => self.lookup(source),
                false => NONE,
            })
            .collect();
        // Which values depend on a source, and which ops on one: the only
        // ones whose gradients are needed.
        let mut reaches = vec![false; self.values.len()];
        for &id in source_ids.iter().filter(|&&id| id != NONE) {
            reaches[id] = true;
        }
        let mut relevant = vec![false; self.ops.len()];
        for (k, record) in self.ops.iter().enumerate() {
            if self.ids[record.inputs()]
                .iter()
                .any(|&id| id != NONE && reaches[id])
            {
                relevant[k] = true;
                for &id in &self.ids[record.outputs()] {
                    if id != NONE {
                        reaches[id] = true;
                    }
                }
            }
        }
        // The gradients reaching each value, summed when first needed.
        let mut grads: Vec<Vec<Tensor>> = vec![Vec::new(); self.values.len()];
        for (i, target) in targets.iter().enumerate() {
            let id = self.lookup(target);
            if id == NONE || !reaches[id] || target.dtype() == DType::Resource {
                continue;
            }
            let seed = match options
                .output_gradients
                .as_ref()
                .and_then(|given| given[i].as_ref())
            {
                Some(given) => given.clone(),
                None => ones_like(builder, target)?,
            };
            grads[id].push(seed);
        }
        let registry = Registry::global();
        for (k, record) in self.ops.iter().enumerate().rev() {
            if !relevant[k] {
                continue;
            }
            let mut output_grads = Vec::with_capacity(record.outputs.len());
            for &id in &self.ids[record.outputs()] {
                output_grads.push(match id {
                    NONE => None,
                    id => sum(builder, &mut grads[id])?,
                });
            }
            if output_grads.iter().all(Option::is_none) {
                continue;
            }
            let (op, node) = &self.nodes[record.node];
            let functions = match registry.gradient(&op.name)? {
                None => return Err(self.missing_gradient(k, &reaches)),
                Some(registration) => match registration.functions {
                    // Not differentiable: nothing flows back, by design.
                    None => continue,
                    Some(functions) => functions,
                },
            };
            let inputs = self.kept(record.inputs())?;
            let outputs = self.kept(record.outputs())?;
            let gradient = Gradient::new(builder, op, node, &inputs, &outputs, &output_grads)?;
            let input_grads = (functions.eager)(&gradient)
                .map_err(|e| e.with_context(format!("in the gradient of {node}")))?;
            if input_grads.len() != record.inputs.len() {
                return Err(Error::invalid_argument(format!(
                    "the gradient function of op {} returned {} gradient(s) for {node}, which has {} input(s): return one per input (None where there is none)",
                    op.name,
                    input_grads.len(),
                    record.inputs.len()
                )));
            }
            for (i, (grad, &id)) in input_grads
                .into_iter()
                .zip(&self.ids[record.inputs()])
                .enumerate()
            {
                let Some(grad) = grad else { continue };
                let dtype = node.input_types()[i];
                check_input_grad(op, node, i, &inputs[i], &grad)?;
                if id != NONE && reaches[id] && is_trainable(dtype) {
                    grads[id].push(grad);
                }
            }
        }
        sources
            .iter()
            .zip(&source_ids)
            .map(|(source, &id)| {
                if id != NONE
                    && let Some(grad) = sum(builder, &mut grads[id])?
                {
                    return Ok(Some(grad));
                }
                match options.unconnected {
                    _ if !is_trainable(source.dtype()) => Ok(None),
                    Unconnected::None => Ok(None),
                    Unconnected::Zeros => self.zeros_for(source, id).map(Some),
                }
            })
            .collect()
    }

    /// The error for recorded op `k`, on a path from a source, whose op
    /// has no gradient: the op, the node, a path from a source to it (its
    /// nodes' names), and the two fixes.
    #[cold]
    fn missing_gradient(&self, k: usize, reaches: &[bool]) -> Error {
        let producers = self.producers();
        // Back from op k to a source, through inputs that reach one.
        let mut path = vec![k];
        let mut at = k;
        while let Some(&id) = self.ids[self.ops[at].inputs()]
            .iter()
            .find(|&&id| id != NONE && reaches[id])
        {
            match producers[id] {
                NONE => break,
                op => {
                    path.push(op);
                    at = op;
                }
            }
        }
        let path = path
            .iter()
            .rev()
            .map(|&k| self.nodes[self.ops[k].node].1.name())
            .collect::<Vec<_>>()
            .join(" -> ");
        let node = &self.nodes[self.ops[k].node].1;
        let op = node.op();
        let is_ident = op.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        let op_arg = if is_ident {
            op.to_owned()
        } else {
            format!("{op:?}")
        };
        Error::not_found(format!(
            "no gradient is registered for op {op}, but node {} lies on a path from a source to a target: (source) -> {path}. Register one with `#[gradient(op = {op_arg})]` on a gradient function, or, if no gradient should flow through it, mark the op `not_differentiable` (on its `#[register_op]`, or `op_core::not_differentiable!({op:?})`)",
            quoted(node.name())
        ))
    }

    /// For each value, the index of the op that produced it, or `NONE` (a
    /// watched tensor).
    fn producers(&self) -> Vec<usize> {
        let mut producers = vec![NONE; self.values.len()];
        for (k, record) in self.ops.iter().enumerate() {
            for &id in &self.ids[record.outputs()] {
                if id != NONE {
                    producers[id] = k;
                }
            }
        }
        producers
    }

    /// The tensors of `slots` (a record's inputs or outputs), a known
    /// input's from where its value is kept.
    fn kept(&self, slots: std::ops::Range<usize>) -> Result<Vec<Tensor>> {
        slots
            .map(|i| {
                let slot = match self.ids[i] {
                    NONE => i,
                    id => self.values[id].slot,
                };
                self.tensors[slot]
                    .clone()
                    .ok_or_else(|| Error::internal("a recorded op's tensor was not kept"))
            })
            .collect()
    }

    /// Zeros in the shape of `source`'s gradient: of the tensor, or, for a
    /// variable's handle, of the variable's value.
    fn zeros_for(&self, source: &Tensor, id: usize) -> Result<Tensor> {
        if source.dtype() != DType::Resource {
            return Tensor::zeros(source.dtype(), source.dims());
        }
        // A read of it on the tape tells the value's dtype and shape.
        if id != NONE
            && let Some(read) = self.ops.iter().find(|record| {
                self.nodes[record.node].0.name == READ_VARIABLE
                    && self.ids[record.inputs.start] == id
            })
            && let Some(value) = &self.tensors[read.outputs().start]
        {
            return Tensor::zeros(value.dtype(), value.dims());
        }
        let handle: ResourceHandle = source.scalar_value()?;
        let var = Runtime::global()
            .resource_manager()
            .resource::<Var>(&handle)?;
        let value = var.value().ok_or_else(|| {
            Error::failed_precondition(format!(
                "zeros for the gradient of variable '{}': it has no value to take the shape of",
                handle.name
            ))
        })?;
        Tensor::zeros(value.dtype(), value.dims())
    }
}

/// `a == b`, without a `memcmp` call for the few dims a shape has.
#[inline]
fn same_dims(a: &[usize], b: &[usize]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// The sum of `grads` (`AddN` when there are several), left in `grads` as
/// its only entry; `None` when empty.
fn sum(
    builder: &dyn GradientBuilder<Value = Tensor>,
    grads: &mut Vec<Tensor>,
) -> Result<Option<Tensor>> {
    match grads.len() {
        0 => Ok(None),
        1 => Ok(Some(grads[0].clone())),
        _ => {
            let total = OpCall::new("AddN")
                .input_list(grads.drain(..))
                .run_on(builder)?
                .remove(0);
            grads.push(total.clone());
            Ok(Some(total))
        }
    }
}

/// Ones of `target`'s dtype and shape: where its gradient starts. Made
/// from a fresh tensor, so no tape records it as depending on `target`.
fn ones_like(builder: &dyn GradientBuilder<Value = Tensor>, target: &Tensor) -> Result<Tensor> {
    let zeros = Tensor::zeros(target.dtype(), target.dims())?;
    Ok(OpCall::new("OnesLike")
        .input(zeros)
        .run_on(builder)?
        .remove(0))
}

/// `InvalidArgument` unless `given` has one gradient per target, each of
/// its target's dtype and shape.
fn check_output_gradients(targets: &[&Tensor], given: &[Option<Tensor>]) -> Result<()> {
    if given.len() != targets.len() {
        return Err(Error::invalid_argument(format!(
            "GradientTape::gradient: {} output gradient(s) for {} target(s): give one per target",
            given.len(),
            targets.len()
        )));
    }
    for (i, (target, grad)) in targets.iter().zip(given).enumerate() {
        let Some(grad) = grad else { continue };
        if grad.dtype() != target.dtype() || grad.dims() != target.dims() {
            return Err(Error::invalid_argument(format!(
                "GradientTape::gradient: output gradient {i} is a {} tensor of shape {}, but target {i} is a {} tensor of shape {}",
                grad.dtype(),
                grad.shape(),
                target.dtype(),
                target.shape()
            )));
        }
    }
    Ok(())
}

/// The gradient of input `i` of `node` must have the input's dtype and
/// shape (a resource input's is its value's gradient: any dtype but
/// resource, any shape).
fn check_input_grad(
    op: &OpDef,
    node: &OpInstance,
    i: usize,
    input: &Tensor,
    grad: &Tensor,
) -> Result<()> {
    let fits = if input.dtype() == DType::Resource {
        grad.dtype() != DType::Resource
    } else {
        grad.dtype() == input.dtype() && grad.dims() == input.dims()
    };
    if fits {
        return Ok(());
    }
    Err(Error::invalid_argument(format!(
        "the gradient function of op {} returned, for input {i} of {node} ({} {}), a gradient that does not fit it: {} {}",
        op.name,
        input.dtype(),
        input.shape(),
        grad.dtype(),
        grad.shape()
    )))
}

/// The eager builder over any tensor executor: gradient functions' ops
/// run at once on it (the same as `Runtime`'s own `GradientBuilder`, for
/// any executor a tape wraps), where the seam shows them to outer tapes.
struct Eager<'a, E>(&'a E);

impl<E: Executor<Value = Tensor>> Executor for Eager<'_, E> {
    type Value = Tensor;

    fn execute(&self, call: OpCall<'_, Tensor>) -> Result<Vec<Tensor>> {
        self.0.execute(call)
    }

    fn execute_grouped(&self, call: OpCall<'_, Tensor>) -> Result<Vec<Vec<Tensor>>> {
        self.0.execute_grouped(call)
    }
}

impl<E: Executor<Value = Tensor>> GradientBuilder for Eager<'_, E> {
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
