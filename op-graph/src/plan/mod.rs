//! The plan: what one kind of run (these feeds, these fetches, these
//! targets) executes, computed once and run many times (tract's
//! `SimplePlan`).
//!
//! A plan holds, per step (a node to run): its prepared kernel, its input
//! slots and output slots as indices, the slots to free after it, and its
//! successors for the inter-op scheduler. Running it ([`Plan::run`], in
//! `run/`) touches only these: no name lookup, no hashing, no lock and no
//! allocation per node.
//!
//! The files:
//!
//! - `mod.rs`: [`Plan`] and how it is made from a graph;
//! - `order.rs`: which nodes run, in what order (pruning);
//! - `slots.rs`: where values live and when they go.

mod order;
mod slots;

use std::collections::HashSet;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use op_core::error::quoted;
use op_core::shape_inference::PartialShape;
use op_core::{DType, Error, PreparedOp, Result, Tensor};

use self::slots::{Slots, Source};
use crate::graph::{Graph, NodeId, Output, TensorName};
use crate::run::RunState;

/// How a step computes its outputs.
#[derive(Clone)]
pub(crate) enum StepKernel {
    /// The node's kernel, prepared once.
    Prepared(Arc<PreparedOp>),
    /// A `Const` node's value, converted once: each run hands it out
    /// shared.
    Constant(Tensor),
}

/// One node to run, with everything a run needs as indices.
pub(crate) struct Step {
    pub(crate) node: NodeId,
    pub(crate) kernel: StepKernel,
    /// The step's range in the plan's input sources.
    pub(crate) inputs: Range<u32>,
    /// The step's output slots.
    pub(crate) outputs: Range<u32>,
    /// The step's range in the plan's free list.
    pub(crate) frees: Range<u32>,
    /// The step's range in the plan's successor list.
    pub(crate) successors: Range<u32>,
    /// How many steps must finish before this one starts.
    pub(crate) predecessors: u32,
    /// Whether the step's kernel may wait for another step
    /// ([`PreparedOp::may_block`]): it runs on a thread of its own.
    pub(crate) blocking: bool,
}

/// A fed output: where its value goes and what it must be.
pub(crate) struct Feed {
    pub(crate) output: Output,
    pub(crate) slot: u32,
    pub(crate) dtype: DType,
    pub(crate) shape: PartialShape,
}

/// A graph's run with given feeds, fetches and targets, planned once:
/// pruned to what the fetches and targets need, ordered by data and
/// control edges, each node's kernel prepared, each value's lifetime
/// decided. Made by [`Session::plan`](crate::Session::plan); run as often
/// as wanted, from any thread ([`Plan::run`]).
pub struct Plan {
    pub(crate) graph: Arc<Graph>,
    /// The inter-op pool, when the plan has branches to run in parallel.
    pub(crate) pool: Option<Arc<rayon::ThreadPool>>,
    /// Whether a step may block: runs are then scheduled with a thread of
    /// its own for each such step, pool or not (see `run/parallel.rs`).
    pub(crate) blocking: bool,
    pub(crate) steps: Box<[Step]>,
    pub(crate) sources: Box<[Source]>,
    pub(crate) frees: Box<[u32]>,
    pub(crate) successors: Box<[u32]>,
    /// The steps that wait for nothing.
    pub(crate) roots: Box<[u32]>,
    pub(crate) feeds: Box<[Feed]>,
    pub(crate) fetches: Box<[Source]>,
    pub(crate) fetch_outputs: Box<[Output]>,
    pub(crate) num_slots: usize,
    /// Per slot: how many reads (and fetches) hold it, for a parallel run.
    pub(crate) holds: Box<[u32]>,
    /// The most inputs a step has: the capacity of a run's input `Vec`s.
    pub(crate) max_inputs: usize,
    /// Run states kept for reuse, so a run allocates no slots.
    pub(crate) states: Mutex<Vec<RunState>>,
}

impl std::fmt::Debug for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.nodes().map(|id| self.node_name(id)).collect();
        f.debug_struct("Plan")
            .field("feeds", &self.feeds().collect::<Vec<_>>())
            .field("fetches", &self.fetches().collect::<Vec<_>>())
            .field("nodes", &names)
            .field("parallel", &self.is_parallel())
            .finish_non_exhaustive()
    }
}

impl Plan {
    /// Plans a run of `graph`: `kernel` gives each step's kernel.
    pub(crate) fn new(
        graph: Arc<Graph>,
        pool: Option<Arc<rayon::ThreadPool>>,
        feeds: Vec<Output>,
        fetches: Vec<Output>,
        targets: Vec<NodeId>,
        mut kernel: impl FnMut(NodeId) -> Result<StepKernel>,
    ) -> Result<Plan> {
        let mut fed = HashSet::new();
        for feed in &feeds {
            if !fed.insert(*feed) {
                return Err(Error::invalid_argument(format!(
                    "{} is fed twice",
                    quoted(&graph.tensor_name(*feed).to_string())
                )));
            }
        }
        let order = order::order(&graph, &fed, &fetches, &targets);
        let slots: Slots = slots::slots(&graph, &order, &feeds, &fetches);

        let mut successors = Vec::new();
        let mut steps = Vec::with_capacity(order.nodes.len());
        for (step, id) in order.nodes.iter().enumerate() {
            let start = successors.len() as u32;
            successors.extend_from_slice(&order.successors[step]);
            let kernel = kernel(*id)?;
            let blocking = matches!(&kernel, StepKernel::Prepared(op) if op.may_block());
            steps.push(Step {
                node: *id,
                kernel,
                blocking,
                inputs: slots.input_ranges[step].clone(),
                outputs: slots.outputs[step].clone(),
                frees: slots.free_ranges[step].clone(),
                successors: start..successors.len() as u32,
                predecessors: order.predecessors[step].len() as u32,
            });
        }
        let roots: Box<[u32]> = (0..steps.len() as u32)
            .filter(|&s| steps[s as usize].predecessors == 0)
            .collect();
        // A chain has nothing to run side by side: it runs on the caller.
        let branches = roots.len() > 1 || steps.iter().any(|s| s.successors.len() > 1);
        let feeds = feeds
            .iter()
            .zip(&slots.feeds)
            .map(|(output, slot)| {
                let info = &graph.nodes()[output.node().index()].outputs()[output.index()];
                Feed {
                    output: *output,
                    slot: *slot,
                    dtype: info.dtype,
                    shape: info.shape.clone(),
                }
            })
            .collect();
        Ok(Plan {
            pool: pool.filter(|_| branches),
            blocking: steps.iter().any(|s| s.blocking),
            steps: steps.into(),
            sources: slots.inputs.into(),
            frees: slots.frees.into(),
            successors: successors.into(),
            roots,
            feeds,
            fetches: slots.fetches.into(),
            fetch_outputs: fetches.into(),
            num_slots: slots.count,
            holds: slots.holds.into(),
            max_inputs: slots
                .input_ranges
                .iter()
                .map(|r| r.len())
                .max()
                .unwrap_or(0),
            states: Mutex::default(),
            graph,
        })
    }

    /// The graph the plan runs.
    pub fn graph(&self) -> &Arc<Graph> {
        &self.graph
    }

    /// The nodes a run executes, in the order a one-thread run executes
    /// them (data and control inputs first); pruned nodes are not here.
    pub fn nodes(&self) -> impl ExactSizeIterator<Item = NodeId> + '_ {
        self.steps.iter().map(|s| s.node)
    }

    /// The fed outputs, in the order [`run`](Self::run) takes their values.
    pub fn feeds(&self) -> impl ExactSizeIterator<Item = TensorName> + '_ {
        self.feeds.iter().map(|f| self.graph.tensor_name(f.output))
    }

    /// The fetched outputs, in the order [`run`](Self::run) returns them.
    pub fn fetches(&self) -> impl ExactSizeIterator<Item = TensorName> + '_ {
        self.fetch_outputs
            .iter()
            .map(|o| self.graph.tensor_name(*o))
    }

    /// Whether runs spread independent branches over the inter-op pool
    /// (a plan that is one chain runs on the caller's thread).
    pub fn is_parallel(&self) -> bool {
        self.pool.is_some()
    }

    pub(crate) fn node_name(&self, id: NodeId) -> &str {
        self.graph.nodes()[id.index()].name()
    }
}
