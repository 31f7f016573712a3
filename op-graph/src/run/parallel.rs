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

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use op_core::{Error, Result, Tensor};

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
}

// SAFETY: the pointer reaches the run's slots, which outlive the scope
// every thread runs in; the schedule (module docs) keeps each step's
// accesses apart from every other thread's, and `Tensor` is `Send + Sync`.
unsafe impl Sync for Shared<'_> {}

impl Plan {
    /// Runs every step on `pool`; returns the first failure, by plan order.
    pub(super) fn run_parallel(
        &self,
        state: &mut RunState,
        pool: &rayon::ThreadPool,
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
        };
        pool.scope(|scope| {
            let shared = &shared;
            for &root in self.roots.iter().skip(1) {
                scope.spawn(move |scope| shared.run_from(root as usize, scope));
            }
            // The scope's own closure runs on the pool too: it takes the
            // first root.
            if let Some(&first) = self.roots.first() {
                shared.run_from(first as usize, scope);
            }
        });
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
    /// Runs step `first`, then, while one is ready, a successor, handing
    /// the other ready successors to the pool.
    fn run_from<'s>(&'s self, first: usize, scope: &rayon::Scope<'s>) {
        let mut inputs = Vec::with_capacity(self.plan.max_inputs);
        let mut next = Some(first);
        while let Some(index) = next.take() {
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
                    match next {
                        None => next = Some(successor),
                        Some(_) => scope.spawn(move |scope| self.run_from(successor, scope)),
                    }
                }
            }
        }
    }

    #[cold]
    fn fail(&self, index: usize, error: Error) {
        self.failed.store(true, Ordering::Relaxed);
        let mut slot = self
            .error
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if slot.as_ref().is_none_or(|(first, _)| index < *first) {
            *slot = Some((index, error));
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
                let result = op.run_into(inputs, out);
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
