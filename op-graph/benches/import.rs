//! Reading a GraphDef (issue 28): `graphdef::from_bytes` on a chain of
//! 100,000 `Identity` nodes after a placeholder (a 3.7 MB file), decoding
//! and importing it: every node's attrs, dtypes and shapes checked.
//!
//! Before the benchmark runs, the peak of live heap bytes of one import is
//! printed, per node (the bound, 1 KB per node, is
//! `tests/import_memory.rs`'s).
//!
//! Run with:
//!
//! ```text
//! cargo bench -p op-graph --bench import
//! ```

use divan::{Bencher, black_box};
use op_graph::graphdef;

#[path = "../tests/common/mod.rs"]
mod common;

#[global_allocator]
static ALLOCATOR: common::peak::Tracking = common::peak::Tracking;

const NODES: usize = 100_000;

fn main() {
    common::link();
    op_core::Registry::global();
    let bytes = common::identity_chain_graphdef(NODES);
    let (graph, peak) = common::peak::peak_bytes(|| graphdef::from_bytes(&bytes).unwrap());
    println!(
        "import of {} nodes ({} B file): peak {peak} B of heap, {} B per node",
        graph.len(),
        bytes.len(),
        peak / NODES
    );
    drop(graph);
    divan::main();
}

/// Decoding and importing the chain, dropping the graph outside the timing.
#[divan::bench(sample_count = 10)]
fn from_bytes(bencher: Bencher<'_, '_>) {
    let bytes = common::identity_chain_graphdef(NODES);
    bencher
        .with_inputs(|| &bytes)
        .bench_local_values(|bytes| graphdef::from_bytes(black_box(bytes)).unwrap());
}
