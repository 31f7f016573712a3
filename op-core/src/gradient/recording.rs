//! The seam through which a gradient tape sees the ops that run on its
//! thread: every [`PreparedOp`](crate::PreparedOp) run (a typed wrapper's
//! `.run()`, an [`OpCall`](crate::OpCall) by name, a prepared op run
//! directly) asks the recorders pushed on the running thread whether they
//! watch one of the inputs (handing them the op and its inputs), and if so
//! hands them the outputs once the kernel has run.
//!
//! With no recorder on the thread, a run pays for one thread-local read
//! ([`is_active`]); that is the whole cost of gradients to code that does
//! not use them. The tape itself (what it keeps, how it differentiates)
//! lives in `op-autodiff`.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

use op_spec::OpDef;
use smallvec::SmallVec;

use crate::op_instance::OpInstance;
use crate::tensor::Tensor;

/// Something that records ops run on its thread: a gradient tape.
///
/// A run is seen in two steps: [`begin`](Self::begin) before the kernel
/// runs, then [`end`](Self::end) after it, for each recorder whose `begin`
/// accepted the run (newest recorder first both times). A kernel may run
/// ops itself; their runs begin and end between the two steps of its own.
pub trait Recorder {
    /// Before node `node` (of op `op`) runs on `inputs`: whether this run
    /// is to be recorded (whether an input is watched: recording nothing
    /// else keeps unrelated work cheap, as candle's `BackpropOp` does).
    ///
    /// A recorder that accepts keeps what it needs of the inputs now: the
    /// kernel may move the buffer of an input that nobody else holds into
    /// an output.
    fn begin(&self, op: &Arc<OpDef>, node: &Arc<OpInstance>, inputs: &[Tensor]) -> bool;

    /// After a run that [`begin`](Self::begin) accepted: its `outputs`
    /// (every slot `Some`), or `None` when the kernel failed. Returns
    /// whether the recorder kept the outputs.
    ///
    /// The `first` recorder to keep them (the newest that accepted the run,
    /// unless it kept nothing) may replace an output with an equal tensor
    /// of its own (a copy, to tell two values apart that share a buffer);
    /// the recorders after it see that tensor.
    fn end(&self, outputs: Option<&mut [Option<Tensor>]>, first: bool) -> bool;
}

thread_local! {
    static RECORDERS: RefCell<Vec<Rc<dyn Recorder>>> = const { RefCell::new(Vec::new()) };
    static ACTIVE: Cell<usize> = const { Cell::new(0) };
}

/// Whether any recorder is pushed on this thread.
#[inline]
pub fn is_active() -> bool {
    ACTIVE.with(Cell::get) != 0
}

/// Pushes `recorder` on this thread until the returned guard is dropped.
/// Recorders nest: the newest is asked first.
pub fn push(recorder: Rc<dyn Recorder>) -> RecorderGuard {
    RECORDERS.with(|r| r.borrow_mut().push(recorder.clone()));
    ACTIVE.with(|a| a.set(a.get() + 1));
    RecorderGuard { recorder }
}

/// Keeps a recorder on its thread; dropping it removes the recorder.
#[must_use = "the recorder is removed when the guard is dropped"]
pub struct RecorderGuard {
    recorder: Rc<dyn Recorder>,
}

impl std::fmt::Debug for RecorderGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RecorderGuard")
    }
}

impl Drop for RecorderGuard {
    fn drop(&mut self) {
        RECORDERS.with(|r| {
            let mut recorders = r.borrow_mut();
            // Guards may drop out of order; remove this one wherever it is.
            if let Some(at) = recorders
                .iter()
                .rposition(|other| Rc::ptr_eq(other, &self.recorder))
            {
                recorders.remove(at);
                ACTIVE.with(|a| a.set(a.get() - 1));
            }
        });
    }
}

/// The recorders recording a run: in place for the usual one or two (a
/// tape, a tape nested in it), so that recording allocates nothing here.
pub(crate) type Recording = SmallVec<[Rc<dyn Recorder>; 2]>;

/// Asks the recorders on this thread, newest first, to
/// [`begin`](Recorder::begin) a run of `node` on `inputs`; returns those
/// that accepted (empty when none).
pub(crate) fn begin(op: &Arc<OpDef>, node: &Arc<OpInstance>, inputs: &[Tensor]) -> Recording {
    RECORDERS.with(|r| {
        r.borrow()
            .iter()
            .rev()
            .filter(|recorder| recorder.begin(op, node, inputs))
            .cloned()
            .collect()
    })
}
