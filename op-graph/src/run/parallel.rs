//! The inter-op scheduler: a run's steps spread over a pool of threads,
//! each step started when its last predecessor finishes.
//!
//! Each step has a count of predecessors not yet finished. A thread that
//! finishes a step counts down its successors; of those that reach zero it
//! runs one itself (a chain stays on one thread and costs no hand-off) and
//! hands the others to the pool. Results do not depend on which thread runs
//! what: every step computes from its inputs alone, and values move between
//! steps only along edges.
//!
//! The run's slots are shared by the threads through a raw pointer. What
//! makes that sound is the schedule: a step runs once per run, on one
//! thread, only after all its predecessors finished (their count-downs are
//! `Release`, the one that reaches zero `Acquire`s them), so its output
//! slots are its own while it runs, and the values it reads were written
//! before. Each task (a root, or a successor handed to the pool) has its
//! own `Vec` of inputs, reused along the chain it runs. A slot read by several
//! steps is only read (cloned) until the last of them counts itself done;
//! only then is its own reference dropped (see `plan/slots.rs`).
//!
//! A step whose kernel may wait for another ([`PreparedOp::may_block`],
//! a queue's dequeue waiting for an enqueue of the same run) never runs on
//! the pool or the caller's thread, where its waiting could hold up the
//! very step it waits for: it runs on a thread of its own, started when it
//! is ready (the run's threads are scoped: the run returns after the last
//! one), which then runs the steps its end makes ready. A plan with such
//! steps is scheduled this way even without a pool. Each run has a
//! cancellation manager, which the first failure cancels: the steps that
//! wait then end with `Cancelled` (not reported over the failure that
//! caused it), so a failed run does not hang on a wait that will never
//! end.
//!
//! [`PreparedOp::may_block`]: op_core::PreparedOp::may_block

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use op_core::wait::CancellationManager;
use op_core::{Code, Error, Result, Tensor};

use super::{RunState, range};
use crate::plan::{Plan, StepKernel};

/// One parallel run's shared view of its state.
struct Shared<'a> {
    plan: &'a Plan,
    slots: *mut Option<Tensor>,
    pending: &'a [AtomicU32],
    remaining: &'a [AtomicU32],
    /// Set by the first failure: steps not yet started are skipped.
    failed: AtomicBool,
    /// The failure of the earliest step (in the plan's order) that failed:
    /// the error the run returns. Locked only when a step fails.
    error: Mutex<Option<(usize, Error)>>,
    /// Cancelled by the first failure, to end the waits of the others.
    cancellation: CancellationManager,
}

// SAFETY: the pointer reaches the run's slots, which outlive the scope
// every thread runs in; the schedule (module docs) keeps each step's
// accesses apart from every other thread's, and `Tensor` is `Send + Sync`.
unsafe impl Sync for Shared<'_> {}

/// Where the steps a thread makes ready go: the pool (when the thread is
/// one of the pool's), threads of their own (for the steps that may
/// block, in a plan that has them), or this thread's own list.
#[derive(Clone, Copy)]
struct Hand<'h, 'p, 't, 'e> {
    pool: Option<&'h rayon::Scope<'p>>,
    threads: Option<&'t std::thread::Scope<'t, 'e>>,
}

/// The steps one thread is to run: at most one on a pool's thread (the
/// others go to the pool), any number without a pool. The first needs no
/// allocation, so a pool's tasks allocate nothing for it.
#[derive(Default)]
struct Mine {
    first: Option<usize>,
    rest: Vec<usize>,
}

impl Mine {
    fn one(index: usize) -> Mine {
        Mine {
            first: Some(index),
            rest: Vec::new(),
        }
    }

    fn is_empty(&self) -> bool {
        self.first.is_none() && self.rest.is_empty()
    }

    fn push(&mut self, index: usize) {
        match self.first {
            None => self.first = Some(index),
            Some(_) => self.rest.push(index),
        }
    }

    fn pop(&mut self) -> Option<usize> {
        self.rest.pop().or_else(|| self.first.take())
    }
}

impl Plan {
    /// Runs every step on `pool` (on this thread without one), the steps
    /// that may block on threads of their own; returns the first failure,
    /// by plan order.
    pub(super) fn run_parallel(
        &self,
        state: &mut RunState,
        pool: Option<&rayon::ThreadPool>,
    ) -> Result<()> {
        for (pending, step) in state.pending.iter().zip(&self.steps) {
            pending.store(step.predecessors, Ordering::Relaxed);
        }
        for (remaining, holds) in state.remaining.iter().zip(&self.holds) {
            remaining.store(*holds, Ordering::Relaxed);
        }
        let shared = Shared {
            plan: self,
            slots: state.slots.as_mut_ptr(),
            pending: &state.pending,
            remaining: &state.remaining,
            failed: AtomicBool::new(false),
            error: Mutex::new(None),
            cancellation: CancellationManager::new(),
        };
        if self.blocking {
            std::thread::scope(|threads| shared.start(pool, Some(threads)));
        } else {
            shared.start(pool, None);
        }
        match shared
            .error
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
        {
            Some((_, error)) => Err(error),
            None => Ok(()),
        }
    }
}

impl<'a> Shared<'a> {
    /// Starts the roots and runs until every step this thread and the
    /// pool's tasks reach is done (the run's scoped threads may still be
    /// running theirs).
    fn start<'t, 'e>(
        &'t self,
        pool: Option<&rayon::ThreadPool>,
        threads: Option<&'t std::thread::Scope<'t, 'e>>,
    ) {
        match pool {
            // The scope's own closure runs on the pool too: it takes the
            // first root that does not block.
            Some(pool) => pool.scope(|scope| {
                self.run_roots(Hand {
                    pool: Some(scope),
                    threads,
                })
            }),
            None => self.run_roots(Hand {
                pool: None,
                threads,
            }),
        }
    }

    /// Hands out the roots and runs those that stay on this thread.
    fn run_roots<'p, 't, 'e>(&'t self, hand: Hand<'_, 'p, 't, 'e>)
    where
        't: 'p,
    {
        let mut mine = Mine::default();
        for &root in &self.plan.roots {
            self.ready(root as usize, hand, &mut mine);
        }
        self.run_mine(mine, hand);
    }

    /// Step `index` is ready: a step that may block goes to a thread of
    /// its own; another goes to `mine` (this thread's list) if that is
    /// empty or there is no pool, else to the pool.
    fn ready<'p, 't, 'e>(&'t self, index: usize, hand: Hand<'_, 'p, 't, 'e>, mine: &mut Mine)
    where
        't: 'p,
    {
        if let (true, Some(threads)) = (self.plan.steps[index].blocking, hand.threads) {
            let started = std::thread::Builder::new()
                .name("op-graph blocking step".to_owned())
                .spawn_scoped(threads, move || {
                    let own = Hand {
                        pool: None,
                        threads: Some(threads),
                    };
                    self.run_mine(Mine::one(index), own);
                });
            if let Err(e) = started {
                let error = Error::resource_exhausted(format!(
                    "cannot start a thread for a node that may wait: {e}"
                ));
                self.fail(index, self.plan.node_error(&self.plan.steps[index], error));
            }
            return;
        }
        match hand.pool {
            Some(scope) if !mine.is_empty() => scope.spawn(move |scope| {
                let hand = Hand {
                    pool: Some(scope),
                    threads: hand.threads,
                };
                self.run_mine(Mine::one(index), hand);
            }),
            _ => mine.push(index),
        }
    }

    /// Runs the steps of `mine` and, of the successors each makes ready,
    /// one on this thread (a chain costs no hand-off), handing the others
    /// on (see [`ready`](Self::ready)).
    fn run_mine<'p, 't, 'e>(&'t self, mut mine: Mine, hand: Hand<'_, 'p, 't, 'e>)
    where
        't: 'p,
    {
        let mut inputs = Vec::with_capacity(self.plan.max_inputs);
        while let Some(index) = mine.pop() {
            if self.failed.load(Ordering::Relaxed) {
                return;
            }
            let step = &self.plan.steps[index];
            if let Err(error) = self.run_step(index, &mut inputs) {
                self.fail(index, self.plan.node_error(step, error));
                return;
            }
            for &successor in &self.plan.successors[range(&step.successors)] {
                let successor = successor as usize;
                if self.pending[successor].fetch_sub(1, Ordering::AcqRel) == 1 {
                    self.ready(successor, hand, &mut mine);
                }
            }
        }
    }

    #[cold]
    fn fail(&self, index: usize, error: Error) {
        let first = !self.failed.swap(true, Ordering::AcqRel);
        if !first && error.code() == Code::Cancelled {
            // A wait the first failure cancelled: not the run's error.
            return;
        }
        {
            let mut slot = self
                .error
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if slot.as_ref().is_none_or(|(earlier, _)| index < *earlier) {
                *slot = Some((index, error));
            }
        }
        if first {
            self.cancellation.start_cancel();
        }
    }

    /// Runs step `index`; see the module docs for why its accesses to the
    /// shared state are its own.
    fn run_step(&self, index: usize, inputs: &mut Vec<Tensor>) -> Result<()> {
        let plan = self.plan;
        let step = &plan.steps[index];
        let outputs = range(&step.outputs);
        match &step.kernel {
            StepKernel::Constant(value) => {
                // SAFETY: the step's output slots are written only by the
                // step, which runs on this thread alone; no successor reads
                // them before the step counts it down.
                unsafe { *self.slots.add(outputs.start) = Some(value.clone()) };
            }
            StepKernel::Prepared(op) => {
                for source in &plan.sources[range(&step.inputs)] {
                    match self.read(source.slot as usize, source.sole) {
                        Ok(value) => inputs.push(value),
                        Err(error) => {
                            inputs.clear();
                            return Err(error);
                        }
                    }
                }
                // SAFETY: as for a constant's output slot, for each of the
                // step's output slots (a range no other step's touches).
                let out = unsafe {
                    std::slice::from_raw_parts_mut(self.slots.add(outputs.start), outputs.len())
                };
                let result = op.run_cancellable(inputs, out, &self.cancellation);
                inputs.clear();
                result?;
            }
        }
        for &slot in &plan.frees[range(&step.frees)] {
            // SAFETY: a slot to free is an output of this step that no
            // step reads and no fetch holds.
            unsafe { *self.slots.add(slot as usize) = None };
        }
        Ok(())
    }

    /// The value of `slot` for one reader: taken if it is the slot's only
    /// reader (`sole`), else cloned; the reader that releases the slot's
    /// last hold drops the slot's own reference, so its clone may be the
    /// buffer's only holder.
    fn read(&self, slot: usize, sole: bool) -> Result<Tensor> {
        let cell = self.slots.wrapping_add(slot);
        let value = if sole {
            // SAFETY: the only reader of a slot its producer wrote before
            // this step started (the schedule orders them).
            unsafe { (*cell).take() }
        } else {
            // SAFETY: every reader only clones until it releases its hold
            // below; the slot was written before any reader started.
            let value = unsafe { (*cell).clone() };
            if self.remaining[slot].fetch_sub(1, Ordering::AcqRel) == 1 {
                // SAFETY: every other reader released its hold after its
                // clone (`AcqRel` orders their clones before this), and a
                // fetched slot is never released: no one else touches it.
                drop(unsafe { (*cell).take() });
            }
            value
        };
        value.ok_or_else(|| self.plan.lost_value(slot as u32))
    }
}
