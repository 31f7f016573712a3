//! GraphDef → [`Graph`]: the second step of reading a program, after the
//! bytes or text became [`proto::GraphDef`] messages.
//!
//! TensorFlow's writers differ, and the importer takes what any of them
//! writes: nodes in any order, inputs `node`, `node:k` and `^node`
//! (control), all-digit and slash-scoped names, attrs at their defaults
//! either written, written without a value, or left out (the graph fills
//! them from the OpDef), attrs the op does not declare (internal ones,
//! `_class`, `_output_shapes`, and a newer producer's) kept for export and
//! ignored, and fields a graph does not use skipped.
//!
//! Everything else is a typed error naming the node and the field: a
//! duplicate or empty name, an input naming a missing node or output, a
//! cycle (naming the nodes on it), an attr of the wrong type, a missing
//! attr that has no default (never inferred from the inputs, as the graph
//! builder does: TensorFlow's importer refuses such a NodeDef), shapes the
//! op rejects. `tests/graphdef_verdicts.rs` checks that the files
//! TensorFlow accepts and refuses are the ones we do. Unknown ops are all listed in one
//! error, with the nodes that use them, so that one run tells a user every
//! kernel library they are missing.
//!
//! Memory: the importer holds each node's message only until its node is
//! added, in a compact form ([`ReadNode`]: its attrs in a vector, not a
//! map), and its own tables (names, edges, order) in flat vectors of
//! indices. A binary GraphDef read by [`import_bytes`] is never decoded
//! whole: each node's bytes are decoded on their own, straight into that
//! form. So the peak is about the larger of the read nodes and the graph,
//! not their sum (figures in `tests/import_memory.rs`).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};

use op_core::error::{grouped, listed, quoted};
use op_core::registry::{LINK_OP_KERNELS, MissingOp};
use op_core::{AttrValue, Error, OpDef, Registry, Result};
use prost::Message;

use super::convert::attr_from_proto;
use super::proto;
use crate::graph::{Graph, NewNode, Output, TensorName};

/// The nodes of `def` as a new graph over `registry`, each checked as it is
/// added (attrs, dtypes, shapes).
///
/// `def` stays the caller's, so the importer copies its nodes;
/// [`from_bytes`](super::from_bytes) and [`read`](super::read), which never
/// hold a whole GraphDef's messages, take far less memory for a large one.
pub fn import(def: &proto::GraphDef, registry: &std::sync::Arc<Registry>) -> Result<Graph> {
    import_nodes(
        def.node.iter().cloned().map(ReadNode::new).collect(),
        registry,
    )
}

/// [`import`], freeing each node's message as its node is added.
pub(super) fn import_owned(
    def: proto::GraphDef,
    registry: &std::sync::Arc<Registry>,
) -> Result<Graph> {
    import_nodes(def.node.into_iter().map(ReadNode::new).collect(), registry)
}

/// The graph of a binary GraphDef, each node decoded on its own (see the
/// [module docs](self)). A malformed message is an `InvalidArgument` error
/// naming the field, and the node when the problem is inside one.
pub(super) fn import_bytes(bytes: &[u8], registry: &std::sync::Arc<Registry>) -> Result<Graph> {
    let malformed = |e: prost::DecodeError| -> Error {
        Error::invalid_argument(format!("the GraphDef is malformed: {e}"))
    };
    let def = lazy::GraphDef::decode(bytes).map_err(malformed)?;
    let mut nodes = Vec::with_capacity(def.node.len());
    for (i, node) in def.node.into_iter().enumerate() {
        let node = proto::NodeDef::decode(node.as_slice())
            .map_err(|e| malformed(e).with_context(format!("node {i} of the GraphDef")))?;
        nodes.push(ReadNode::new(node));
    }
    import_nodes(nodes, registry)
}

mod lazy {
    //! A binary GraphDef with its nodes left as bytes. Named `GraphDef`,
    //! as decoding errors name the message.

    use super::proto::VersionDef;

    /// `tensorflow.GraphDef`, with field 1 (`node`, repeated `NodeDef`)
    /// as bytes: the same wire form, each node decoded later on its own.
    #[derive(Clone, PartialEq, prost::Message)]
    pub(super) struct GraphDef {
        #[prost(bytes = "vec", repeated, tag = "1")]
        pub(super) node: Vec<Vec<u8>>,
        // Decoded, though unused, so that a malformed one is an error as
        // it is for `graphdef::decode`.
        #[prost(message, optional, tag = "4")]
        pub(super) versions: Option<VersionDef>,
        #[prost(int32, tag = "3")]
        pub(super) version: i32,
    }
}

/// What the importer keeps of one `NodeDef` until its node is added: the
/// message's fields, with its attrs in a vector of their number rather
/// than a map (whose smallest allocation holds eleven). Boxed, so that
/// once the node is added all of it is freed.
struct ReadNode {
    name: String,
    op: String,
    input: Vec<String>,
    device: String,
    attr: Vec<(String, proto::AttrValue)>,
}

impl ReadNode {
    fn new(node: proto::NodeDef) -> Option<Box<ReadNode>> {
        let mut input = node.input;
        input.shrink_to_fit();
        Some(Box::new(ReadNode {
            name: node.name,
            op: node.op,
            input,
            device: node.device,
            attr: node.attr.into_iter().collect(),
        }))
    }
}

/// The nodes of a file, each `None` once its node is added.
type ReadNodes = Vec<Option<Box<ReadNode>>>;

/// Node `i` of the file, not yet added.
fn read_node(nodes: &ReadNodes, i: usize) -> &ReadNode {
    nodes[i]
        .as_deref()
        .expect("read nodes are taken only when added")
}

/// The nodes as a graph: their names and ops checked, their inputs
/// resolved, then each added in an order where its inputs come first.
fn import_nodes(mut nodes: ReadNodes, registry: &std::sync::Arc<Registry>) -> Result<Graph> {
    too_large(nodes.len())?;
    // Every node is there (`Some`) until the loop below adds it.
    let edges = {
        let index = name_index(&nodes)?;
        check_ops(&nodes, registry)?;
        Edges::parse(&nodes, &index)?
    };
    let order = topological_order(&nodes, &edges)?;
    let mut graph = Graph::with_registry(registry.clone());
    graph.reserve(nodes.len());
    // Where each node of the file went in the graph (set before any node
    // that reads it is added).
    let mut ids = vec![0u32; nodes.len()];
    for index in order {
        let node = nodes[index as usize]
            .take()
            .expect("the topological order holds each node once");
        let new = new_node(*node, &edges, index, &ids, &graph, registry)?;
        // The graph's own errors name the node already.
        let id = graph.add(new)?;
        ids[index as usize] = id.index() as u32;
    }
    Ok(graph)
}

/// Every node's index by name; an error for an empty or duplicate name.
fn name_index(nodes: &ReadNodes) -> Result<HashMap<&str, u32>> {
    let mut index: HashMap<&str, u32> = HashMap::with_capacity(nodes.len());
    for (i, node) in (0u32..).zip(nodes.iter().flatten()) {
        if node.name.is_empty() {
            return Err(Error::invalid_argument(format!(
                "node {i} of the GraphDef (op {}) has no name",
                quoted(&node.op)
            )));
        }
        if let Some(first) = index.insert(&node.name, i) {
            return Err(Error::invalid_argument(format!(
                "nodes {first} and {i} of the GraphDef are both named {}; node names are unique",
                quoted(&node.name)
            )));
        }
    }
    Ok(index)
}

/// How many unknown ops, and nodes of each, an error names.
const SHOWN_OPS: usize = 8;
const SHOWN_NODES: usize = 3;

/// Every op of `nodes` that `registry` lacks, in one error: the first few
/// ops, each with its first few nodes and what the registry can tell of it
/// (a close name, or that op-kernels ships it), and how many there are.
fn check_ops(nodes: &ReadNodes, registry: &Registry) -> Result<()> {
    let mut missing: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for node in nodes.iter().flatten() {
        if registry.get(&node.op).is_none() {
            missing.entry(&node.op).or_default().push(&node.name);
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    let mut message = format!(
        "the GraphDef uses {} op(s) that are not registered:",
        grouped(missing.len())
    );
    let (mut elsewhere, mut in_op_kernels) = (false, false);
    for (op, nodes) in missing.iter().take(SHOWN_OPS) {
        let hint = registry.missing_op(op);
        let hint = match hint {
            MissingOp::Close(close) => format!(": did you mean '{close}'?"),
            MissingOp::InOpKernels => ": it ships in op-kernels".to_owned(),
            MissingOp::CloseInOpKernels(close) => {
                format!(": did you mean '{close}'? (it ships in op-kernels)")
            }
            _ => String::new(),
        };
        in_op_kernels |= hint.contains("op-kernels");
        elsewhere |= hint.is_empty();
        let plural = if nodes.len() == 1 { "" } else { "s" };
        let names = listed(nodes.iter().map(|n| quoted(*n)), SHOWN_NODES);
        message += &format!("\n  {} (node{plural} {names}){hint}", quoted(op));
    }
    if missing.len() > SHOWN_OPS {
        message += &format!(
            "\n  and {} more op(s) ({} in all)",
            grouped(missing.len() - SHOWN_OPS),
            grouped(missing.len())
        );
        elsewhere = true;
    }
    if in_op_kernels {
        message += &format!("\nop-kernels is not linked: {LINK_OP_KERNELS}");
    }
    if elsewhere {
        message += "\nif another crate defines them, link it: call its `link()` once, or write \
                    `use that_crate as _;`";
    }
    Err(Error::not_found(message))
}

/// The nodes' inputs, resolved to node indices, in flat vectors: node
/// `i`'s data inputs (source node, output) are
/// `data[data_end[i - 1]..data_end[i]]`, and its control inputs likewise.
struct Edges {
    data: Vec<(u32, usize)>,
    data_end: Vec<u32>,
    control: Vec<u32>,
    control_end: Vec<u32>,
}

impl Edges {
    fn parse(nodes: &ReadNodes, index: &HashMap<&str, u32>) -> Result<Edges> {
        let find = |node: &ReadNode, k: usize, name: &str| {
            index.get(name).copied().ok_or_else(|| {
                Error::invalid_argument(format!(
                    "node {} input {k} names node {}, which is not in the GraphDef",
                    quoted(&node.name),
                    quoted(name)
                ))
            })
        };
        let mut edges = Edges {
            data: Vec::new(),
            data_end: Vec::with_capacity(nodes.len()),
            control: Vec::new(),
            control_end: Vec::with_capacity(nodes.len()),
        };
        for node in nodes.iter().flatten() {
            let start = edges.control.len();
            for (k, input) in node.input.iter().enumerate() {
                if let Some(name) = input.strip_prefix('^') {
                    edges.control.push(find(node, k, name)?);
                    continue;
                }
                if edges.control.len() > start {
                    return Err(Error::invalid_argument(format!(
                        "node {} input {k} ({}) follows a control input; data inputs come first",
                        quoted(&node.name),
                        quoted(input)
                    )));
                }
                let tensor: TensorName = input.parse().map_err(|e: Error| {
                    e.with_context(format!("node {} input {k}", quoted(&node.name)))
                })?;
                edges
                    .data
                    .push((find(node, k, &tensor.node)?, tensor.index));
            }
            too_large(edges.data.len() + edges.control.len())?;
            edges.data_end.push(count_of(edges.data.len()));
            edges.control_end.push(count_of(edges.control.len()));
        }
        Ok(edges)
    }

    fn data(&self, node: u32) -> &[(u32, usize)] {
        &self.data[range(&self.data_end, node)]
    }

    fn control(&self, node: u32) -> &[u32] {
        &self.control[range(&self.control_end, node)]
    }

    /// Every node node `node` waits on: its data inputs, then its control
    /// inputs.
    fn sources(&self, node: u32) -> impl Iterator<Item = u32> + '_ {
        let data = self.data(node).iter().map(|&(source, _)| source);
        data.chain(self.control(node).iter().copied())
    }
}

/// `n`, a count of nodes or edges, as a `u32` index; the importer checks
/// first that the counts fit (see [`too_large`]).
fn count_of(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Whether a graph of `count` nodes or edges is past what the importer's
/// `u32` indices count.
fn too_large(count: usize) -> Result<()> {
    match u32::try_from(count) {
        Ok(_) => Ok(()),
        Err(_) => Err(Error::resource_exhausted(format!(
            "the GraphDef has {count} nodes or edges; a graph holds at most 2^32 - 1"
        ))),
    }
}

/// Node `node`'s part of a flat vector whose parts end at `ends`.
fn range(ends: &[u32], node: u32) -> std::ops::Range<usize> {
    let i = node as usize;
    let start = if i == 0 { 0 } else { ends[i - 1] as usize };
    start..ends[i] as usize
}

/// The nodes in an order where every node comes after its inputs (Kahn's
/// algorithm, keeping the file's order among ready nodes); a cycle is an
/// error naming its nodes.
fn topological_order(nodes: &ReadNodes, edges: &Edges) -> Result<Vec<u32>> {
    let n = count_of(nodes.len());
    // Each node's consumers, in flat vectors as `Edges` holds inputs.
    let mut pending = vec![0u32; nodes.len()];
    let mut consumer_end = vec![0u32; nodes.len()];
    for i in 0..n {
        for source in edges.sources(i) {
            pending[i as usize] += 1;
            consumer_end[source as usize] += 1;
        }
    }
    let mut total = 0;
    for end in &mut consumer_end {
        total += *end;
        *end = total;
    }
    let mut consumers = vec![0u32; total as usize];
    let mut next = consumer_end.clone();
    for i in (0..n).rev() {
        for source in edges.sources(i) {
            next[source as usize] -= 1;
            consumers[next[source as usize] as usize] = i;
        }
    }
    drop(next);
    let mut ready: BinaryHeap<Reverse<u32>> = (0..n)
        .filter(|&i| pending[i as usize] == 0)
        .map(Reverse)
        .collect();
    let mut order = Vec::with_capacity(nodes.len());
    while let Some(Reverse(i)) = ready.pop() {
        order.push(i);
        for &c in &consumers[range(&consumer_end, i)] {
            pending[c as usize] -= 1;
            if pending[c as usize] == 0 {
                ready.push(Reverse(c));
            }
        }
    }
    if order.len() < nodes.len() {
        let stuck = (0..nodes.len())
            .filter(|&i| pending[i] > 0)
            .map(|i| quoted(&read_node(nodes, i).name));
        return Err(Error::invalid_argument(format!(
            "the GraphDef has a cycle: {} node(s) wait on each other: {}",
            grouped(nodes.len() - order.len()),
            listed(stuck, 8)
        )));
    }
    Ok(order)
}

/// The request to add node `index` of the file (`node`), whose inputs are
/// in the graph already (`ids` says where).
fn new_node(
    mut node: ReadNode,
    edges: &Edges,
    index: u32,
    ids: &[u32],
    graph: &Graph,
    registry: &Registry,
) -> Result<NewNode> {
    let in_node = |e: Error| e.with_context(format!("importing node {}", quoted(&node.name)));
    let id = |i: u32| graph.nodes()[ids[i as usize] as usize].id();
    let data: Vec<Output> = edges
        .data(index)
        .iter()
        .enumerate()
        .map(|(position, &(source, k))| {
            let source = graph.node(id(source))?;
            let outputs = source.outputs().len();
            if k >= outputs {
                // Data inputs come first, so position is the input's index.
                return Err(Error::invalid_argument(format!(
                    "input {position} ({}) names output {k} of node {}, which has {outputs} output(s)",
                    quoted(&node.input[position]),
                    quoted(source.name())
                )));
            }
            Ok(source.output(k))
        })
        .collect::<Result<_>>()
        .map_err(in_node)?;
    let op = registry.op(&node.op).map_err(in_node)?.def();
    let (declared, kept) = attrs(std::mem::take(&mut node.attr), op).map_err(in_node)?;
    let mut new = NewNode::new(node.op)
        .name(node.name)
        .inputs(data)
        .device(node.device);
    for &c in edges.control(index) {
        new = new.control_input(id(c));
    }
    for (name, value) in declared {
        new = new.attr(name, value);
    }
    for (name, value) in kept {
        new = new.kept_attr(name, value);
    }
    Ok(new)
}

/// Attrs by name, as a node is given them.
type Attrs = Vec<(String, AttrValue)>;

/// A node's attrs (`attr`, as written) as TensorFlow's importer reads
/// them: the ones `op` declares (an attr without a default must be given:
/// a GraphDef's attrs are never inferred from its inputs, whatever the
/// graph builder does), and the ones it does not, kept for export.
///
/// TensorFlow keeps and ignores an attr the op does not declare (a newer
/// producer's), and fills an attr written without a value from its
/// default; so do we. An undeclared attr whose value this crate cannot
/// hold (none, a function placeholder, an unknown dtype) is dropped.
fn attrs(attr: Vec<(String, proto::AttrValue)>, op: &OpDef) -> Result<(Attrs, Attrs)> {
    for def in op.attrs.iter().filter(|a| a.default_value.is_none()) {
        if !attr.iter().any(|(name, _)| *name == def.name) {
            return Err(Error::invalid_argument(format!(
                "NodeDef missing attr '{}' of op {}: it is declared `{}`, with no default, \
                 so a NodeDef must give it (a GraphDef's attrs are not inferred from its inputs)",
                def.name,
                op.name,
                def.to_spec()
            )));
        }
    }
    let mut declared = Vec::with_capacity(attr.len());
    let mut kept = Vec::new();
    for (name, value) in attr {
        match op.attr(&name) {
            Some(def) if value.value.is_none() && def.default_value.is_some() => {}
            Some(def) => {
                let value = attr_from_proto(&value, Some(def.ty))
                    .map_err(|e| e.with_context(format!("attr {}", quoted(&name))))?;
                declared.push((name, value));
            }
            None => {
                if let Ok(value) = attr_from_proto(&value, None) {
                    kept.push((name, value));
                }
            }
        }
    }
    Ok((declared, kept))
}
