//! `cargo run --example graph` builds, runs, writes, reads back and runs
//! again a two-layer MLP; with `--export-dir` it writes what TensorFlow's
//! check reads. Checked on the example binary's output when `cargo test`
//! has built it.

use std::process::Command;

mod common;

#[test]
fn the_graph_example_prints_shapes_and_the_same_result_twice() {
    let Some(binary) = common::example_binary("graph") else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("opkit-graph-example-{}", std::process::id()));
    let output = Command::new(&binary)
        .arg("--export-dir")
        .arg(&dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("x = Placeholder() -> float [?,4]\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("layer1/Relu = Relu(layer1/AddV2) -> float [?,8]\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("layer2/AddV2 = AddV2(layer2/MatMul, layer2/Const_1) -> float [?,3]\n")
    );
    assert!(stdout.contains("same result: yes\n"), "{stdout}");
    for file in [
        "graph.pb",
        "feeds/x.npy",
        "fetches.txt",
        "expected/layer2/AddV2.npy",
    ] {
        assert!(dir.join(file).is_file(), "{file}");
    }
    op_kernels::link();
    let written = op_graph::graphdef::read(dir.join("graph.pb"), op_core::Registry::global());
    assert_eq!(written.unwrap().len(), 10);
    std::fs::remove_dir_all(&dir).unwrap();
}
