//! Running a [`Plan`]: the per-run state (tract's `SimpleState`), the feed
//! checks, and the one-thread loop; `parallel.rs` has the inter-op
//! scheduler, which also runs plans with steps that may block.
//!
//! Per step, a run moves or clones each input from its slot into a
//! scratch `Vec` of inputs, runs the prepared kernel into the step's
//! output slots (`PreparedOp::run_into`), clears the scratch at once (so an
//! input taken by its last consumer is freed as soon as that consumer is
//! done), and empties the slots nothing reads. No name lookup, hashing,
//! lock or allocation happens per step: the slots and scratch of a run
//! are reused by the next.

mod parallel;

use op_core::error::{listed, quoted};
use op_core::{Error, Result, Tensor};

use crate::plan::{Plan, Step, StepKernel};

/// The values of one run: a slot per value, and the inputs of the step
/// running. Kept by the plan between runs, empty.
pub(crate) struct RunState {
    slots: Vec<Option<Tensor>>,
    /// The inputs of the step running (one thread); its capacity is the
    /// most inputs a step has, so pushing never allocates.
    inputs: Vec<Tensor>,
    /// For a parallel run: per step, predecessors not yet finished; per
    /// slot, holds not yet released.
    pending: Box<[std::sync::atomic::AtomicU32]>,
    remaining: Box<[std::sync::atomic::AtomicU32]>,
}

impl RunState {
    fn new(plan: &Plan) -> RunState {
        let atomics = |n: usize| (0..n).map(|_| Default::default()).collect();
        let parallel = plan.is_parallel() || plan.blocking;
        RunState {
            slots: vec![None; plan.num_slots],
            inputs: Vec::with_capacity(plan.max_inputs),
            pending: atomics(if parallel { plan.steps.len() } else { 0 }),
            remaining: atomics(if parallel { plan.num_slots } else { 0 }),
        }
    }

    /// Drops every value left: after a failed run, anything; after a run
    /// that succeeded, only feeds nothing read (every other value was
    /// taken by its last reader or fetch, or freed).
    fn clear(&mut self, plan: &Plan, succeeded: bool) {
        if succeeded {
            for feed in &plan.feeds {
                self.slots[feed.slot as usize] = None;
            }
            debug_assert!(self.slots.iter().all(Option::is_none));
        } else {
            self.slots.fill(None);
        }
    }
}

impl Plan {
    /// Runs the plan: `feeds` are the values of the fed outputs, in the
    /// order the plan was made with ([`feeds`](Self::feeds)); returns the
    /// fetched values in the order of [`fetches`](Self::fetches).
    ///
    /// Each fed tensor must have its output's dtype and a shape its
    /// inferred shape allows (for a placeholder, its `shape` attr):
    /// otherwise an `InvalidArgument` error naming the feed. A tensor
    /// handed over (not a clone the caller keeps) may have its buffer
    /// reused by the kernels it flows into.
    ///
    /// A node that fails stops the run; the error is the kernel's, with a
    /// context frame naming the node. Every node the plan holds runs
    /// exactly once per run (stateful ones included), after its data and
    /// control inputs.
    pub fn run(&self, feeds: impl IntoIterator<Item = Tensor>) -> Result<Vec<Tensor>> {
        let mut state = self
            .states
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pop()
            .unwrap_or_else(|| RunState::new(self));
        let result = self.run_with(&mut state, feeds);
        state.clear(self, result.is_ok());
        self.states
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(state);
        result
    }

    fn run_with(
        &self,
        state: &mut RunState,
        feeds: impl IntoIterator<Item = Tensor>,
    ) -> Result<Vec<Tensor>> {
        let mut given = 0;
        for tensor in feeds {
            let feed = self
                .feeds
                .get(given)
                .ok_or_else(|| self.feed_count_error(given + 1))?;
            if tensor.dtype() != feed.dtype || !feed.shape.is_compatible_with(tensor.dims()) {
                return Err(Error::invalid_argument(format!(
                    "feed {given} ({}) must be a {} tensor of shape {}, but a {} tensor of shape {} was given",
                    quoted(&self.graph.tensor_name(feed.output).to_string()),
                    feed.dtype,
                    feed.shape,
                    tensor.dtype(),
                    tensor.shape()
                )));
            }
            state.slots[feed.slot as usize] = Some(tensor);
            given += 1;
        }
        if given != self.feeds.len() {
            return Err(self.feed_count_error(given));
        }
        match &self.pool {
            Some(pool) => self.run_parallel(state, Some(pool))?,
            None if self.blocking => self.run_parallel(state, None)?,
            None => {
                for step in &self.steps {
                    self.run_step(step, &mut state.slots, &mut state.inputs)
                        .map_err(|e| self.node_error(step, e))?;
                }
            }
        }
        self.fetches
            .iter()
            .map(|source| {
                let slot = &mut state.slots[source.slot as usize];
                let value = if source.last {
                    slot.take()
                } else {
                    slot.clone()
                };
                value.ok_or_else(|| self.lost_value(source.slot))
            })
            .collect()
    }

    /// Runs `step` on one thread that owns the run's state.
    #[inline]
    fn run_step(
        &self,
        step: &Step,
        slots: &mut [Option<Tensor>],
        inputs: &mut Vec<Tensor>,
    ) -> Result<()> {
        let outputs = range(&step.outputs);
        match &step.kernel {
            StepKernel::Constant(value) => slots[outputs.start] = Some(value.clone()),
            StepKernel::Prepared(op) => {
                for source in &self.sources[range(&step.inputs)] {
                    let slot = &mut slots[source.slot as usize];
                    let value = if source.last {
                        slot.take()
                    } else {
                        slot.clone()
                    };
                    match value {
                        Some(value) => inputs.push(value),
                        None => {
                            inputs.clear();
                            return Err(self.lost_value(source.slot));
                        }
                    }
                }
                let result = op.run_into(inputs, &mut slots[outputs]);
                // The inputs go now: a value taken by its last consumer is
                // freed as soon as that consumer is done.
                inputs.clear();
                result?;
            }
        }
        for &slot in &self.frees[range(&step.frees)] {
            slots[slot as usize] = None;
        }
        Ok(())
    }

    /// `error`, from `step`'s kernel, with a frame naming the node.
    #[cold]
    fn node_error(&self, step: &Step, error: Error) -> Error {
        let node = &self.graph.nodes()[step.node.index()];
        error.with_context(format!(
            "in node {} (op {}) of the graph",
            quoted(node.name()),
            node.op()
        ))
    }

    #[cold]
    fn feed_count_error(&self, given: usize) -> Error {
        let names: Vec<String> = self.feeds().map(|n| n.to_string()).collect();
        Error::invalid_argument(format!(
            "the plan takes {} feed(s) ({}), but {given} were given",
            self.feeds.len(),
            listed(names.iter().map(quoted), 8)
        ))
    }

    /// A value that should be in its slot is not: a bug in the plan.
    #[cold]
    fn lost_value(&self, slot: u32) -> Error {
        Error::internal(format!(
            "slot {slot} is empty when it should hold a value: the plan freed it too early"
        ))
    }
}

/// A `u32` range as a `usize` range, for indexing.
#[inline]
fn range(r: &std::ops::Range<u32>) -> std::ops::Range<usize> {
    r.start as usize..r.end as usize
}
