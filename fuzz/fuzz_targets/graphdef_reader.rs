//! Fuzzes op-graph's GraphDef reader: arbitrary bytes as a binary GraphDef
//! (`graphdef::from_bytes`: prost decoding, then the importer's checks and
//! every node's attr and shape checks), and the same bytes, when they are
//! UTF-8, as a text GraphDef (`graphdef::from_text`).
//!
//! Oracles:
//! - nothing panics, whatever the input (truncated messages, wrong wire
//!   types, unknown ops, attrs of the wrong type, missing nodes, cycles,
//!   huge shapes);
//! - an error formats, and is a user error (`InvalidArgument`, `NotFound`,
//!   `Unimplemented`, `ResourceExhausted`), never `Internal`;
//! - a graph that imports survives the round trip: written and read back,
//!   it prints the same (`Display` lists every node, its inputs, dtypes
//!   and shapes).

#![no_main]

use libfuzzer_sys::fuzz_target;
use op_core::Code;
use op_graph::graphdef;

fn check(result: op_core::Result<op_graph::Graph>) {
    match result {
        Ok(graph) => {
            let back = graphdef::from_bytes(&graphdef::to_bytes(&graph))
                .expect("a graph that imported imports again once written");
            assert_eq!(back.to_string(), graph.to_string());
        }
        Err(error) => {
            assert!(
                matches!(
                    error.code(),
                    Code::InvalidArgument
                        | Code::NotFound
                        | Code::Unimplemented
                        | Code::ResourceExhausted
                ),
                "unexpected error code: {error}"
            );
            assert!(!error.to_string().is_empty());
        }
    }
}

fuzz_target!(|data: &[u8]| {
    op_kernels::link();
    check(graphdef::from_bytes(data));
    if let Ok(text) = std::str::from_utf8(data) {
        check(graphdef::from_text(text));
    }
});
