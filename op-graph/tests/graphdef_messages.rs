//! The GraphDef messages against files TensorFlow 2.21 wrote
//! (`tests/data/tensorflow/*`, made by `tools/tensorflow/make_fixtures.py`):
//! the binary and text readers agree, and the text writer's output reads
//! back to the same messages.

use std::path::{Path, PathBuf};

use op_graph::graphdef::{self, proto, text};

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tensorflow");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("graph.pb").exists())
        .collect();
    dirs.sort();
    assert_eq!(dirs.len(), 4, "{dirs:?}");
    dirs
}

fn binary(dir: &Path) -> proto::GraphDef {
    graphdef::decode(&std::fs::read(dir.join("graph.pb")).unwrap()).unwrap()
}

#[test]
fn tensorflows_binary_and_text_files_read_to_the_same_messages() {
    for dir in fixtures() {
        let from_text = text::parse(&std::fs::read_to_string(dir.join("graph.pbtxt")).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        assert_eq!(binary(&dir), from_text, "{}", dir.display());
    }
}

#[test]
fn written_text_reads_back_to_the_same_messages() {
    for dir in fixtures() {
        let def = binary(&dir);
        let written = text::write(&def);
        assert_eq!(text::parse(&written).unwrap(), def, "{}", dir.display());
    }
}

#[test]
fn what_tensorflow_writes_is_read() {
    let mlp = binary(&fixtures()[2]);
    assert_eq!(mlp.versions.as_ref().map(|v| v.producer), Some(2474));
    let matmul = mlp.node.iter().find(|n| n.op == "MatMul").unwrap();
    assert!(matmul.attr.contains_key("grad_a"));
    // Shape nodes carry NodeDef field 7 (experimental_type), which is
    // skipped.
    let arrays = binary(&fixtures()[0]);
    assert!(arrays.node.iter().any(|n| n.op == "Shape"));
}

#[test]
fn malformed_bytes_are_errors_naming_the_problem() {
    let bytes = std::fs::read(fixtures()[2].join("graph.pb")).unwrap();
    let error = graphdef::decode(&bytes[..bytes.len() / 2]).unwrap_err();
    assert_eq!(error.code(), op_core::Code::InvalidArgument);
    assert!(
        error.message().starts_with("the GraphDef is malformed:"),
        "{error}"
    );
    // Field 1 (node) written as a varint instead of a message.
    let error = graphdef::decode(&[0x08, 0x01]).unwrap_err();
    assert!(error.message().contains("wire type"), "{error}");
}

#[test]
fn malformed_text_is_an_error_with_line_and_column() {
    let error = text::parse("node {\n  name: \"a\"\n  colour: 3\n}\n").unwrap_err();
    assert_eq!(
        error.message(),
        "GraphDef text, line 3, column 3: NodeDef has no field 'colour'"
    );
    let error = text::parse("node { name: 3 }").unwrap_err();
    assert!(
        error
            .message()
            .starts_with("GraphDef text, line 1, column 14:"),
        "{error}"
    );
}
