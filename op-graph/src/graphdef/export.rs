//! [`Graph`] → GraphDef: every node with its exact name, data inputs as
//! `node:k`, control inputs as `^node`, device, and every attr (defaults
//! written out, as TensorFlow's own writers do, so that the file means the
//! same if a default later changes), internal attrs kept.

use super::convert::attr_to_proto;
use super::proto;
use crate::graph::Graph;

/// The GraphDef producer version written: TensorFlow 2.21's
/// `TF_GRAPH_DEF_VERSION`, whose GraphDefs TensorFlow reads without
/// applying any compatibility rewrite.
pub const PRODUCER: i32 = 2474;

/// `graph` as a GraphDef, nodes in the graph's order (inputs first).
pub fn export(graph: &Graph) -> proto::GraphDef {
    let node = graph
        .nodes()
        .iter()
        .map(|node| {
            let data = node
                .inputs()
                .iter()
                .map(|o| graph.tensor_name(*o).to_string());
            let control = node
                .control_inputs()
                .iter()
                .map(|c| format!("^{}", graph.nodes()[c.index()].name()));
            proto::NodeDef {
                name: node.name().to_owned(),
                op: node.op().to_owned(),
                input: data.chain(control).collect(),
                device: node.device().to_owned(),
                attr: node
                    .attrs()
                    .iter()
                    .chain(node.internal_attrs())
                    .map(|(name, value)| (name.clone(), attr_to_proto(value)))
                    .collect(),
            }
        })
        .collect();
    proto::GraphDef {
        node,
        versions: Some(proto::VersionDef {
            producer: PRODUCER,
            min_consumer: 0,
            bad_consumers: Vec::new(),
        }),
        version: 0,
    }
}
