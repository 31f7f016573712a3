//! Importing a GraphDef holds memory linear in its nodes, and little of it
//! per node: the peak of live heap bytes while `graphdef::from_bytes` reads
//! a chain of `Identity` nodes stays under [`BYTES_PER_NODE`] per node, for
//! 50,000 and 100,000 nodes alike.

use op_graph::graphdef;

mod common;

#[global_allocator]
static ALLOCATOR: common::peak::Tracking = common::peak::Tracking;

/// The bound per simple node (one input, one attr): the messages decoded,
/// the graph built and the importer's tables together, at their peak.
const BYTES_PER_NODE: usize = 1024;

/// The peak heap bytes per node of importing a chain of `n`.
fn peak_per_node(n: usize) -> usize {
    let bytes = common::identity_chain_graphdef(n);
    let (graph, peak) = common::peak::peak_bytes(|| graphdef::from_bytes(&bytes).unwrap());
    assert_eq!(graph.len(), n + 1);
    let per_node = peak / n;
    println!(
        "{n} nodes: file {} B, peak {peak} B, {per_node} B per node",
        bytes.len()
    );
    per_node
}

#[test]
fn import_memory_is_linear_and_small_per_node() {
    common::link();
    // The registry is built once, outside what is measured.
    op_core::Registry::global();
    let half = peak_per_node(50_000);
    let full = peak_per_node(100_000);
    assert!(
        full <= BYTES_PER_NODE && half <= BYTES_PER_NODE,
        "{half} and {full} bytes per node, over {BYTES_PER_NODE}"
    );
    // Linear: twice the nodes, twice the bytes (within 10%).
    assert!(
        full * 10 <= half * 11,
        "{half} bytes per node at 50,000 nodes, {full} at 100,000: not linear"
    );
}
