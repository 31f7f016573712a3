//! The ids of a program's values: a graph ([`GraphId`]), a node in it
//! ([`NodeId`]) and one of a node's outputs ([`Output`]), a graph
//! builder's symbolic value.
//!
//! They live here, not in op-graph, because a gradient function is
//! written once and instantiated for both kinds of values (tensors on a
//! tape, outputs in a graph, see [`gradient`](mod@crate::gradient)), and the
//! registration that the macros generate can name only op-core. op-graph
//! re-exports them and is the only crate that makes them.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

/// Identifies one graph among all graphs of the process (never reused).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GraphId(u64);

impl fmt::Display for GraphId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "graph #{}", self.0)
    }
}

static NEXT_GRAPH_ID: AtomicU64 = AtomicU64::new(1);

impl GraphId {
    /// A graph id never given out before (what a new graph takes).
    pub fn unique() -> GraphId {
        GraphId(NEXT_GRAPH_ID.fetch_add(1, Ordering::Relaxed))
    }
}

/// A node of a graph: the graph's id and the node's index in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId {
    graph: GraphId,
    index: u32,
}

impl NodeId {
    /// Node `index` of graph `graph` (the graph gives these out as it adds
    /// nodes; an id made by hand names no node until then).
    pub fn new(graph: GraphId, index: u32) -> NodeId {
        NodeId { graph, index }
    }

    /// The graph the node belongs to.
    pub fn graph(self) -> GraphId {
        self.graph
    }

    /// The node's position in its graph (the order nodes were added in).
    pub fn index(self) -> usize {
        self.index as usize
    }

    /// The node's output `index`.
    pub fn output(self, index: usize) -> Output {
        Output {
            node: self,
            index: index as u32,
        }
    }
}

/// One output of a node: a graph edge's source, and a graph builder's
/// symbolic value (what typed wrappers return when run on a graph
/// builder).
///
/// Printed through its graph, which knows the node's name, as TensorFlow
/// names tensors: `node:1`, or `node` for output 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Output {
    node: NodeId,
    index: u32,
}

impl Output {
    /// The node whose output this is.
    pub fn node(self) -> NodeId {
        self.node
    }

    /// Which of the node's outputs (flattened: a list output counts one
    /// per tensor).
    pub fn index(self) -> usize {
        self.index as usize
    }

    /// The graph the node belongs to.
    pub fn graph(self) -> GraphId {
        self.node.graph
    }
}
