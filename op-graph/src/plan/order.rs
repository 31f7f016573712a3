//! What a run needs and in what order: the nodes that fetches and targets
//! reach through data and control edges (stopping at fed outputs), in the
//! graph's own order, with each step's predecessors and successors for the
//! inter-op scheduler.

use std::collections::HashSet;

use crate::graph::{Graph, NodeId, Output};

/// The nodes a run needs, in an order that respects data and control
/// edges, and the edges between them as step indices.
pub(crate) struct Order {
    /// The nodes to run, in the graph's order (a topological order, since
    /// a node is added after its inputs).
    pub(crate) nodes: Vec<NodeId>,
    /// For each step, the steps that must finish first (data producers that
    /// are not fed, and control inputs), each once.
    pub(crate) predecessors: Vec<Vec<u32>>,
    /// For each step, the steps that wait for it.
    pub(crate) successors: Vec<Vec<u32>>,
}

/// The steps that produce what `fetches` and `targets` need, given that
/// `fed` outputs come from the caller: a node is needed if a fetch reads an
/// output of it that is not fed, if it is a target, or if a needed node
/// reads an unfed output of it or has it as a control input. Everything
/// else is pruned (it does not run, and its errors do not matter).
pub(crate) fn order(
    graph: &Graph,
    fed: &HashSet<Output>,
    fetches: &[Output],
    targets: &[NodeId],
) -> Order {
    let mut needed = vec![false; graph.len()];
    let mut stack: Vec<NodeId> = fetches
        .iter()
        .filter(|o| !fed.contains(o))
        .map(|o| o.node())
        .chain(targets.iter().copied())
        .collect();
    while let Some(id) = stack.pop() {
        if std::mem::replace(&mut needed[id.index()], true) {
            continue;
        }
        let node = &graph.nodes()[id.index()];
        stack.extend(
            node.inputs()
                .iter()
                .filter(|o| !fed.contains(o))
                .map(|o| o.node()),
        );
        stack.extend(node.control_inputs().iter().copied());
    }

    let nodes: Vec<NodeId> = graph
        .nodes()
        .iter()
        .filter(|n| needed[n.id().index()])
        .map(|n| n.id())
        .collect();
    // Step index of each needed node.
    let mut step_of = vec![u32::MAX; graph.len()];
    for (step, id) in nodes.iter().enumerate() {
        step_of[id.index()] = step as u32;
    }
    let mut predecessors: Vec<Vec<u32>> = Vec::with_capacity(nodes.len());
    let mut successors: Vec<Vec<u32>> = vec![Vec::new(); nodes.len()];
    for (step, id) in nodes.iter().enumerate() {
        let node = &graph.nodes()[id.index()];
        let data = node
            .inputs()
            .iter()
            .filter(|o| !fed.contains(o))
            .map(|o| o.node());
        let mut before: Vec<u32> = data
            .chain(node.control_inputs().iter().copied())
            .map(|p| step_of[p.index()])
            .collect();
        before.sort_unstable();
        before.dedup();
        for &p in &before {
            successors[p as usize].push(step as u32);
        }
        predecessors.push(before);
    }
    Order {
        nodes,
        predecessors,
        successors,
    }
}
