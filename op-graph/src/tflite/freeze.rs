//! Freezing: the part of a graph that the requested outputs need, copied
//! into a graph of its own with every variable read replaced by a `Const`
//! holding the variable's current value (TensorFlow's
//! `convert_variables_to_constants`).
//!
//! The copy is not a detail: a variable's shape is unknown to the graph
//! that reads it (the handle does not say), so everything computed from it
//! has unknown shapes there. Added again behind a constant, every node's
//! shape is inferred anew from known values, as a `.tflite` file needs.

use op_core::error::quoted;
use op_core::{AttrValue, Error, Result, Tensor};

use super::Source;
use crate::graph::{Graph, NewNode, Node, NodeId, Output};

/// The frozen graph computing `outputs` of `source`, and `outputs` in it.
pub(super) fn freeze(source: Source<'_>, outputs: &[Output]) -> Result<(Graph, Vec<Output>)> {
    let graph = source.graph();
    let needed = needed_nodes(graph, outputs);
    let mut frozen = Graph::with_registry(graph.registry().clone());
    let mut ids: Vec<Option<NodeId>> = vec![None; graph.len()];
    for node in graph.nodes().iter().filter(|n| needed[n.id().index()]) {
        let copy = copy_node(source, &ids, node)
            .and_then(|copy| frozen.add(copy))
            .map_err(|e| {
                e.with_context(format!("node {} (op {})", quoted(node.name()), node.op()))
            })?;
        ids[node.id().index()] = Some(copy);
    }
    let outputs = outputs
        .iter()
        .map(|o| map_output(&ids, *o))
        .collect::<Result<_>>()?;
    Ok((frozen, outputs))
}

/// Whether each node (by index) is needed for `outputs`: reached from them
/// through data inputs, stopping at placeholders (the model's inputs) and
/// variable reads (frozen to constants, so their handles are not needed).
/// Control inputs are not followed: a `.tflite` model has no side effects
/// to order.
fn needed_nodes(graph: &Graph, outputs: &[Output]) -> Vec<bool> {
    let mut needed = vec![false; graph.len()];
    let mut stack: Vec<NodeId> = outputs.iter().map(|o| o.node()).collect();
    while let Some(id) = stack.pop() {
        if std::mem::replace(&mut needed[id.index()], true) {
            continue;
        }
        let node = &graph.nodes()[id.index()];
        if !matches!(node.op(), "Placeholder" | "ReadVariableOp") {
            stack.extend(node.inputs().iter().map(|o| o.node()));
        }
    }
    needed
}

fn map_output(ids: &[Option<NodeId>], output: Output) -> Result<Output> {
    ids[output.node().index()]
        .map(|id| id.output(output.index()))
        .ok_or_else(|| Error::internal("a node is needed before the nodes it reads"))
}

/// `node` to add to the frozen graph: a variable read as a `Const` of the
/// variable's value, any other node as it is (name, op, attrs, data
/// inputs; not its device or control inputs).
fn copy_node(source: Source<'_>, ids: &[Option<NodeId>], node: &Node) -> Result<NewNode> {
    let copy = NewNode::new(node.op()).name(node.name());
    if node.op() == "ReadVariableOp" {
        let value = frozen_value(source, node)?;
        return Ok(NewNode::new("Const")
            .name(node.name())
            .attr("dtype", value.dtype())
            .attr(
                "value",
                AttrValue::Tensor(Box::new(value.to_tensor_value()?)),
            ));
    }
    let inputs = node
        .inputs()
        .iter()
        .map(|o| map_output(ids, *o))
        .collect::<Result<Vec<_>>>()?;
    let copy = node.attrs().iter().fold(copy, |copy, (name, value)| {
        copy.attr(name.clone(), value.clone())
    });
    Ok(copy.inputs(inputs))
}

/// The value of the variable that `node` (a `ReadVariableOp`) reads, now.
fn frozen_value(source: Source<'_>, node: &Node) -> Result<Tensor> {
    let Source::Session(session) = source else {
        return Err(Error::failed_precondition(
            "it reads a variable, whose value only a session holds: export the Session, \
             not its Graph",
        ));
    };
    let mut values = session
        .runner()
        .fetch(node.output(0))
        .run()
        .map_err(|e| e.with_context("reading the variable's value to freeze it"))?;
    values
        .pop()
        .ok_or_else(|| Error::internal("a run with one fetch returned no value"))
}
