//! The model: a [`Graph`] of [`Node`]s, plain data.
//!
//! Nodes live in a `Vec` in the order they were added, and edges are typed
//! ids: a data input is an [`Output`] (a node and one of its outputs), a
//! control input a [`NodeId`]. Both carry the id of the graph they belong
//! to, so an output of one graph given to another is an error, never a
//! wrong node. A node's inputs must exist when it is added, so a graph
//! cannot hold a cycle, and the order of the `Vec` is a topological order.
//!
//! Every node is checked when it is added ([`Graph::add`]): its op exists,
//! its attrs are inferred from its inputs and validated as in an eager
//! call (every attr decided, defaults filled), and its output shapes are
//! inferred from its inputs' shapes by the op's shape function, with the
//! values of constant inputs at hand. A mistake is an error then, naming
//! the node, its inputs and their shapes.
//!
//! The files:
//!
//! - `mod.rs`: [`Graph`] (the ids [`GraphId`], [`NodeId`] and [`Output`]
//!   are op-core's, see [`op_core::symbolic`]);
//! - `node.rs`: [`Node`], what a graph holds of each node;
//! - `new_node.rs`: [`NewNode`], the request to add one, and its checks;
//! - `names.rs`: node names (TensorFlow's unique names and name rules) and
//!   [`TensorName`] (`node:k`);
//! - `builder.rs`: [`GraphBuilder`], the executor that turns typed op
//!   wrappers into nodes.

mod builder;
mod names;
mod new_node;
mod node;

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use op_core::error::quoted;
use op_core::shape_inference::PartialShape;
use op_core::{DType, Error, Registry, Result};

pub use builder::{ControlScope, DeviceScope, GraphBuilder, IntoPartialShape, NameScope};
pub use names::{TensorName, is_valid_node_name};
pub use new_node::{KEPT_CONSTANT_ELEMENTS, NewNode};
pub use node::{Node, OutputInfo};
pub use op_core::symbolic::{GraphId, NodeId, Output};

/// A program of ops: nodes with unique names, each checked when added
/// (see the [module docs](self)).
///
/// ```standalone_crate
/// use op_core::DType;
/// use op_graph::{Graph, NewNode};
/// # op_kernels::link();
///
/// let mut graph = Graph::new();
/// let x = graph.add(
///     NewNode::new("Placeholder")
///         .name("x")
///         .attr("dtype", DType::F32)
///         .attr("shape", op_core::ShapeValue::from_sizes(&[-1, 3])),
/// )?;
/// let y = graph.add(NewNode::new("Example").input(x.output(0)))?;
/// let node = graph.node(y)?;
/// assert_eq!(node.name(), "Example");
/// assert_eq!(node.output_shape(0).unwrap().to_string(), "[?,3]");
/// assert_eq!(node.attr("T"), Some(&DType::F32.into()));
/// # Ok::<(), op_core::Error>(())
/// ```
pub struct Graph {
    id: GraphId,
    registry: Arc<Registry>,
    nodes: Vec<Node>,
    /// Every node by its exact name.
    by_name: names::NameIndex,
    /// TensorFlow's `_names_in_use`: how often each lower-cased name was
    /// asked for, for [`Graph::unique_name`].
    names_in_use: HashMap<String, usize>,
    /// How many of `nodes` have their names in `names_in_use`: the rest
    /// are entered when a unique name is next asked for, so that a graph
    /// that never asks (one read from a file) holds no second copy of
    /// its names.
    names_marked: usize,
}

impl Default for Graph {
    fn default() -> Self {
        Graph::new()
    }
}

impl fmt::Debug for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Graph")
            .field("id", &self.id)
            .field("nodes", &self.nodes)
            .finish_non_exhaustive()
    }
}

/// One line per node: `name = Op(inputs, ^controls) -> dtype shape, ...`.
impl fmt::Display for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for node in &self.nodes {
            write!(f, "{} = {}(", node.name(), node.op())?;
            let inputs = node
                .inputs()
                .iter()
                .map(|o| self.tensor_name(*o).to_string());
            let controls = node
                .control_inputs()
                .iter()
                .map(|c| format!("^{}", self.nodes[c.index()].name()));
            let all: Vec<String> = inputs.chain(controls).collect();
            write!(f, "{}) ->", all.join(", "))?;
            if node.outputs().is_empty() {
                f.write_str(" ()")?;
            }
            for (i, output) in node.outputs().iter().enumerate() {
                let sep = if i == 0 { " " } else { ", " };
                write!(f, "{sep}{} {}", output.dtype, output.shape)?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

impl Graph {
    /// An empty graph over the global registry ([`Registry::global`]).
    pub fn new() -> Graph {
        Graph::with_registry(Registry::global().clone())
    }

    /// An empty graph whose nodes are ops of `registry`.
    pub fn with_registry(registry: Arc<Registry>) -> Graph {
        Graph {
            id: GraphId::unique(),
            registry,
            nodes: Vec::new(),
            by_name: names::NameIndex::default(),
            names_in_use: HashMap::new(),
            names_marked: 0,
        }
    }

    /// This graph's id, which its [`NodeId`]s and [`Output`]s carry.
    pub fn id(&self) -> GraphId {
        self.id
    }

    /// The registry the graph's ops come from.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the graph has no nodes.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Every node, in the order added (a topological order: a node comes
    /// after its data and control inputs).
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The node `id`; an `InvalidArgument` error if it is another graph's.
    pub fn node(&self, id: NodeId) -> Result<&Node> {
        self.check_node(id)?;
        Ok(&self.nodes[id.index()])
    }

    /// The node named `name`, if any.
    pub fn node_by_name(&self, name: &str) -> Option<&Node> {
        let index = self.by_name.find(name, |i| self.nodes[i as usize].name())?;
        Some(&self.nodes[index as usize])
    }

    /// The node named `name`; a `NotFound` error naming the closest name
    /// if there is none.
    pub fn find_node(&self, name: &str) -> Result<NodeId> {
        self.node_by_name(name)
            .map(Node::id)
            .ok_or_else(|| self.no_such_node(name))
    }

    /// The output that `name` names: `node:k`, or `node` for output 0.
    /// A `NotFound` error for an unknown node, an `InvalidArgument` error
    /// for an output the node does not have.
    pub fn find_output(&self, name: &str) -> Result<Output> {
        let tensor: TensorName = name.parse()?;
        let node = self.find_node(&tensor.node)?;
        self.check_output(node.output(tensor.index))?;
        Ok(node.output(tensor.index))
    }

    /// `node:k` (`node` for output 0) for `output`, as TensorFlow names
    /// tensors. An output of another graph prints as `<graph #n>:k`.
    pub fn tensor_name(&self, output: Output) -> TensorName {
        let node = match self.check_node(output.node()) {
            Ok(()) => self.nodes[output.node().index()].name().to_owned(),
            Err(_) => format!("<{}>", output.graph()),
        };
        TensorName {
            node,
            index: output.index(),
        }
    }

    /// The dtype of `output`.
    pub fn output_dtype(&self, output: Output) -> Result<DType> {
        self.check_output(output)?;
        Ok(self.nodes[output.node().index()].outputs[output.index()].dtype)
    }

    /// The inferred (possibly partial) shape of `output`.
    pub fn output_shape(&self, output: Output) -> Result<&PartialShape> {
        self.check_output(output)?;
        Ok(&self.nodes[output.node().index()].outputs[output.index()].shape)
    }

    /// A name based on `base` that no node has and this method has not
    /// given before, as TensorFlow's
    /// `Graph.unique_name` makes them: `base` the first time, then
    /// `base_1`, `base_2`, ..., skipping names in use. Names are compared
    /// ignoring case, as TensorFlow does, so `add` and `Add` share a count.
    pub fn unique_name(&mut self, base: &str) -> String {
        for node in &self.nodes[self.names_marked..] {
            names::mark_used(&mut self.names_in_use, node.name());
        }
        self.names_marked = self.nodes.len();
        names::unique_name(&mut self.names_in_use, base)
    }

    /// Makes room for `additional` more nodes, so that a graph whose size
    /// is known (an imported one) holds no spare capacity.
    pub(crate) fn reserve(&mut self, additional: usize) {
        self.nodes.reserve_exact(additional);
        self.by_name
            .reserve(additional, |i| self.nodes[i as usize].name());
    }

    /// Adds `node`, checked (see [`NewNode`]), and returns its id.
    pub fn add(&mut self, node: NewNode) -> Result<NodeId> {
        new_node::add(self, node)
    }

    /// An `InvalidArgument` error unless `id` is a node of this graph.
    pub(crate) fn check_node(&self, id: NodeId) -> Result<()> {
        if id.graph() != self.id {
            return Err(Error::invalid_argument(format!(
                "node {} belongs to {}, not to this graph ({})",
                id.index(),
                id.graph(),
                self.id
            )));
        }
        if id.index() >= self.nodes.len() {
            return Err(Error::internal(format!(
                "node {} of {} does not exist: the graph has {} node(s)",
                id.index(),
                self.id,
                self.nodes.len()
            )));
        }
        Ok(())
    }

    /// An error unless `output` is an output of a node of this graph.
    pub(crate) fn check_output(&self, output: Output) -> Result<()> {
        self.check_node(output.node())?;
        let node = &self.nodes[output.node().index()];
        if output.index() >= node.outputs().len() {
            return Err(Error::invalid_argument(format!(
                "node {} (op {}) has {} output(s), so it has no output {}",
                quoted(node.name()),
                node.op(),
                node.outputs().len(),
                output.index()
            )));
        }
        Ok(())
    }

    fn no_such_node(&self, name: &str) -> Error {
        // Sorted, so that of equally close names the hint is always one.
        let mut names: Vec<&str> = self.nodes.iter().map(Node::name).collect();
        names.sort_unstable();
        let hint = op_core::op_spec::suggest::closest(name, names)
            .map(|n| format!(" (did you mean '{n}'?)"))
            .unwrap_or_default();
        Error::not_found(format!(
            "the graph has no node named {}{hint}",
            quoted(name)
        ))
    }
}
