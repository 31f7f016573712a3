//! Where a run's values live and for how long: one slot per fed output and
//! per output of each step, each step's inputs as slot indices, and when
//! each value can go (tract's flush lists).
//!
//! A value goes after its last consumer. When the steps run one after
//! another, the last consumer in the plan's order takes the value (a move,
//! not a clone), so that a kernel that reuses a buffer it alone holds
//! (`KernelContext::unary`) works in place; the others clone it (a
//! reference count). When steps run in parallel, "last" is decided as the
//! run goes: each consumer clones, counts itself done, and the one that
//! counts last drops the slot's own reference, leaving its clone the only
//! one. A value that only one consumer reads is taken either way, and a
//! fetched value is never taken before the run ends.

use std::collections::HashMap;
use std::ops::Range;

use super::order::Order;
use crate::graph::{Graph, Output};

/// Where one input of a step comes from.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Source {
    /// The slot.
    pub(crate) slot: u32,
    /// Whether this is the slot's last use in the plan's order and the
    /// value is not fetched: a run in that order takes it.
    pub(crate) last: bool,
    /// Whether this is the slot's only use and the value is not fetched: a
    /// run in any order takes it.
    pub(crate) sole: bool,
}

/// The slots of a plan (see the [module docs](self)).
pub(crate) struct Slots {
    /// How many slots a run has.
    pub(crate) count: usize,
    /// Each feed's slot.
    pub(crate) feeds: Vec<u32>,
    /// Each step's output slots: one per output of its node, contiguous.
    pub(crate) outputs: Vec<Range<u32>>,
    /// Each step's inputs, flattened over the steps.
    pub(crate) inputs: Vec<Source>,
    /// Each step's range in `inputs`.
    pub(crate) input_ranges: Vec<Range<u32>>,
    /// The slots to empty once each step has run (outputs that nothing
    /// reads or fetches), flattened over the steps.
    pub(crate) frees: Vec<u32>,
    /// Each step's range in `frees`.
    pub(crate) free_ranges: Vec<Range<u32>>,
    /// How many step inputs read each slot, plus one if it is fetched (so
    /// a parallel run never takes a fetched value).
    pub(crate) holds: Vec<u32>,
    /// Where each fetch comes from; `last` on the last fetch of a slot.
    pub(crate) fetches: Vec<Source>,
}

pub(crate) fn slots(graph: &Graph, order: &Order, feeds: &[Output], fetches: &[Output]) -> Slots {
    let mut slot_of: HashMap<Output, u32> = HashMap::new();
    let mut count: u32 = 0;
    let mut next = |n: u32| {
        let start = count;
        count += n;
        start..count
    };
    let feed_slots: Vec<u32> = feeds
        .iter()
        .map(|o| {
            let slot = next(1).start;
            slot_of.insert(*o, slot);
            slot
        })
        .collect();
    let outputs: Vec<Range<u32>> = order
        .nodes
        .iter()
        .map(|id| {
            let node = &graph.nodes()[id.index()];
            let range = next(node.outputs().len() as u32);
            for k in 0..node.outputs().len() {
                // A fed output is read from its feed's slot; the step's own
                // slot for it is filled and freed unread.
                slot_of
                    .entry(id.output(k))
                    .or_insert(range.start + k as u32);
            }
            range
        })
        .collect();
    let count = count as usize;

    let mut holds = vec![0u32; count];
    let mut fetched = vec![false; count];
    let mut fetch_sources: Vec<Source> = fetches
        .iter()
        .map(|o| {
            let slot = slot_of[o];
            fetched[slot as usize] = true;
            Source {
                slot,
                last: false,
                sole: false,
            }
        })
        .collect();
    // The last fetch of each slot takes it.
    let mut seen = vec![false; count];
    for source in fetch_sources.iter_mut().rev() {
        source.last = !std::mem::replace(&mut seen[source.slot as usize], true);
    }

    let mut inputs = Vec::new();
    let mut input_ranges = Vec::with_capacity(order.nodes.len());
    for id in &order.nodes {
        let start = inputs.len() as u32;
        for o in graph.nodes()[id.index()].inputs() {
            let slot = slot_of[o];
            holds[slot as usize] += 1;
            inputs.push(Source {
                slot,
                last: false,
                sole: false,
            });
        }
        input_ranges.push(start..inputs.len() as u32);
    }
    // The last reader of each slot, in the plan's order, takes it.
    let mut seen = vec![false; count];
    for source in inputs.iter_mut().rev() {
        let slot = source.slot as usize;
        let first_seen = !std::mem::replace(&mut seen[slot], true);
        source.last = first_seen && !fetched[slot];
        source.sole = holds[slot] == 1 && !fetched[slot];
    }
    for (slot, is_fetched) in fetched.iter().enumerate() {
        holds[slot] += u32::from(*is_fetched);
    }

    let mut frees = Vec::new();
    let free_ranges = outputs
        .iter()
        .map(|range| {
            let start = frees.len() as u32;
            frees.extend(range.clone().filter(|&s| holds[s as usize] == 0));
            start..frees.len() as u32
        })
        .collect();

    Slots {
        count,
        feeds: feed_slots,
        outputs,
        inputs,
        input_ranges,
        frees,
        free_ranges,
        holds,
        fetches: fetch_sources,
    }
}
