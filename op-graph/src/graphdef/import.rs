//! GraphDef → [`Graph`]: the second step of reading a program, after the
//! bytes or text became [`proto::GraphDef`] messages.
//!
//! TensorFlow's writers differ, and the importer takes what any of them
//! writes: nodes in any order, inputs `node`, `node:k` and `^node`
//! (control), all-digit and slash-scoped names, attrs at their defaults
//! either written or left out (the graph fills them from the OpDef),
//! internal attrs (`_class`, `_output_shapes`) kept for export, and fields
//! a graph does not use skipped.
//!
//! Everything else is a typed error naming the node and the field: a
//! duplicate or empty name, an input naming a missing node or output, a
//! cycle (naming the nodes on it), an attr of the wrong type, a missing
//! required attr, shapes the op rejects. Unknown ops are all listed in one
//! error, with the nodes that use them, so that one run tells a user every
//! kernel library they are missing.

use std::collections::{BTreeMap, HashMap};

use op_core::error::quoted;
use op_core::{Error, Registry, Result};

use super::convert::attr_from_proto;
use super::proto;
use crate::graph::{Graph, NewNode, NodeId, Output, TensorName};

/// The nodes of `def` as a new graph over `registry`, each checked as it is
/// added (attrs, dtypes, shapes).
pub fn import(def: &proto::GraphDef, registry: &std::sync::Arc<Registry>) -> Result<Graph> {
    let mut graph = Graph::with_registry(registry.clone());
    check_names(def)?;
    check_ops(def, registry)?;
    let inputs = parse_inputs(def)?;
    let order = topological_order(def, &inputs)?;
    let mut ids: Vec<Option<NodeId>> = vec![None; def.node.len()];
    for index in order {
        let node = &def.node[index];
        let new = new_node(node, &inputs[index], &ids, &graph, registry)
            .map_err(|e| e.with_context(format!("importing node {}", quoted(&node.name))))?;
        // The graph's own errors name the node already.
        let id = graph.add(new)?;
        ids[index] = Some(id);
    }
    Ok(graph)
}

/// One node's inputs, parsed: data inputs (node index, output) and
/// control inputs (node index).
struct Inputs {
    data: Vec<(usize, usize)>,
    control: Vec<usize>,
}

fn check_names(def: &proto::GraphDef) -> Result<()> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (i, node) in def.node.iter().enumerate() {
        if node.name.is_empty() {
            return Err(Error::invalid_argument(format!(
                "node {i} of the GraphDef (op {}) has no name",
                quoted(&node.op)
            )));
        }
        if let Some(first) = seen.insert(&node.name, i) {
            return Err(Error::invalid_argument(format!(
                "nodes {first} and {i} of the GraphDef are both named {}; node names are unique",
                quoted(&node.name)
            )));
        }
    }
    Ok(())
}

/// Every op of `def` that `registry` lacks, in one error.
fn check_ops(def: &proto::GraphDef, registry: &Registry) -> Result<()> {
    let mut missing: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for node in &def.node {
        if registry.get(&node.op).is_none() {
            missing.entry(&node.op).or_default().push(&node.name);
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    let lines: Vec<String> = missing
        .iter()
        .map(|(op, nodes)| {
            let shown: Vec<String> = nodes
                .iter()
                .take(3)
                .map(|n| quoted(n).to_string())
                .collect();
            let more = match nodes.len() {
                n if n > 3 => format!(" and {} more", n - 3),
                _ => String::new(),
            };
            format!("  {op} (node {}{more})", shown.join(", "))
        })
        .collect();
    Err(Error::not_found(format!(
        "the GraphDef uses {} op(s) that are not registered; link the crates that register them:\n{}",
        missing.len(),
        lines.join("\n")
    )))
}

fn parse_inputs(def: &proto::GraphDef) -> Result<Vec<Inputs>> {
    let index: HashMap<&str, usize> = def
        .node
        .iter()
        .enumerate()
        .map(|(i, n)| (n.name.as_str(), i))
        .collect();
    let find = |node: &proto::NodeDef, k: usize, name: &str| {
        index.get(name).copied().ok_or_else(|| {
            Error::invalid_argument(format!(
                "node {} input {k} names node {}, which is not in the GraphDef",
                quoted(&node.name),
                quoted(name)
            ))
        })
    };
    def.node
        .iter()
        .map(|node| {
            let mut inputs = Inputs {
                data: Vec::new(),
                control: Vec::new(),
            };
            for (k, input) in node.input.iter().enumerate() {
                if let Some(name) = input.strip_prefix('^') {
                    inputs.control.push(find(node, k, name)?);
                    continue;
                }
                if !inputs.control.is_empty() {
                    return Err(Error::invalid_argument(format!(
                        "node {} input {k} ({}) follows a control input; data inputs come first",
                        quoted(&node.name),
                        quoted(input)
                    )));
                }
                let tensor: TensorName = input.parse().map_err(|e: Error| {
                    e.with_context(format!("node {} input {k}", quoted(&node.name)))
                })?;
                inputs
                    .data
                    .push((find(node, k, &tensor.node)?, tensor.index));
            }
            Ok(inputs)
        })
        .collect()
}

/// The nodes in an order where every node comes after its inputs (Kahn's
/// algorithm, keeping the file's order among ready nodes); a cycle is an
/// error naming its nodes.
fn topological_order(def: &proto::GraphDef, inputs: &[Inputs]) -> Result<Vec<usize>> {
    let n = def.node.len();
    let mut pending = vec![0usize; n];
    let mut consumers: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, node_inputs) in inputs.iter().enumerate() {
        let sources = node_inputs
            .data
            .iter()
            .map(|(source, _)| *source)
            .chain(node_inputs.control.iter().copied());
        for source in sources {
            pending[i] += 1;
            consumers[source].push(i);
        }
    }
    let mut ready: std::collections::BinaryHeap<std::cmp::Reverse<usize>> = (0..n)
        .filter(|&i| pending[i] == 0)
        .map(std::cmp::Reverse)
        .collect();
    let mut order = Vec::with_capacity(n);
    while let Some(std::cmp::Reverse(i)) = ready.pop() {
        order.push(i);
        for &c in &consumers[i] {
            pending[c] -= 1;
            if pending[c] == 0 {
                ready.push(std::cmp::Reverse(c));
            }
        }
    }
    if order.len() < n {
        let stuck: Vec<String> = (0..n)
            .filter(|&i| pending[i] > 0)
            .take(8)
            .map(|i| quoted(&def.node[i].name).to_string())
            .collect();
        return Err(Error::invalid_argument(format!(
            "the GraphDef has a cycle: {} node(s) wait on each other, among them {}",
            n - order.len(),
            stuck.join(", ")
        )));
    }
    Ok(order)
}

fn new_node(
    node: &proto::NodeDef,
    inputs: &Inputs,
    ids: &[Option<NodeId>],
    graph: &Graph,
    registry: &Registry,
) -> Result<NewNode> {
    let id = |i: usize| ids[i].expect("the topological order adds inputs first");
    let data: Vec<Output> = inputs
        .data
        .iter()
        .enumerate()
        .map(|(position, &(source, k))| {
            let source = id(source);
            let outputs = graph.node(source)?.outputs().len();
            if k >= outputs {
                // Data inputs come first, so position is the input's index.
                return Err(Error::invalid_argument(format!(
                    "input {position} ({}) names output {k} of node {}, which has {outputs} output(s)",
                    quoted(&node.input[position]),
                    quoted(graph.node(source)?.name())
                )));
            }
            Ok(source.output(k))
        })
        .collect::<Result<_>>()?;
    let mut new = NewNode::new(&node.op)
        .name(&node.name)
        .inputs(data)
        .device(&node.device);
    for &c in &inputs.control {
        new = new.control_input(id(c));
    }
    let op = registry.op(&node.op)?.def();
    for (name, value) in &node.attr {
        let expected = op.attr(name).map(|a| a.ty);
        let value = attr_from_proto(value, expected)
            .map_err(|e| e.with_context(format!("attr {}", quoted(name))))?;
        new = new.attr(name, value);
    }
    Ok(new)
}
