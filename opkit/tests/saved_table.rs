//! Seed 000's promise: a hash table saved in a saved model gives the same
//! finds when the model is loaded in a fresh process. The table is
//! TensorFlow's `MutableHashTableV2` (one per graph node), filled by the
//! session that saves it; `opkit saved-model run`, a separate process,
//! loads the model and looks keys up.

use std::path::Path;
use std::process::Command;

use op_core::{DType, Tensor};
use op_graph::saved_model::{self, Signature};
use op_graph::{Graph, NewNode, Session};

fn placeholder(g: &mut Graph, name: &str, dtype: DType) -> op_graph::Output {
    g.add(
        NewNode::new("Placeholder")
            .name(name)
            .attr("dtype", dtype)
            .attr("shape", op_core::ShapeValue::from_sizes(&[-1])),
    )
    .unwrap()
    .output(0)
}

/// `table` (int64 -> float), `insert` (of `keys`, `values`) and `found`
/// (the values of `query`, -1 where missing).
fn graph() -> Graph {
    opkit::op_kernels::link();
    let mut g = Graph::new();
    let table = g
        .add(
            NewNode::new("MutableHashTableV2")
                .name("table")
                .attr("key_dtype", DType::I64)
                .attr("value_dtype", DType::F32),
        )
        .unwrap()
        .output(0);
    let keys = placeholder(&mut g, "keys", DType::I64);
    let values = placeholder(&mut g, "values", DType::F32);
    let query = placeholder(&mut g, "query", DType::I64);
    g.add(
        NewNode::new("LookupTableInsertV2")
            .name("insert")
            .input(table)
            .input(keys)
            .input(values),
    )
    .unwrap();
    let default = g
        .add(
            NewNode::new("Const")
                .name("default")
                .attr("dtype", DType::F32)
                .attr("value", Tensor::scalar(-1.0f32).to_tensor_value().unwrap()),
        )
        .unwrap()
        .output(0);
    g.add(
        NewNode::new("LookupTableFindV2")
            .name("found")
            .input(table)
            .input(query)
            .input(default),
    )
    .unwrap();
    g
}

fn save(dir: &Path) {
    let session = Session::new(graph()).unwrap();
    let keys: Vec<i64> = (0..1000).collect();
    let values: Vec<f32> = keys.iter().map(|&k| k as f32 * 0.5).collect();
    session
        .runner()
        .feed("keys", Tensor::from_vec([1000], keys).unwrap())
        .feed("values", Tensor::from_vec([1000], values).unwrap())
        .target("insert")
        .run()
        .unwrap();
    // The table keeps its entries across runs of the session.
    let found = session
        .runner()
        .feed(
            "query",
            Tensor::from_vec([3], vec![10i64, 5000, 999]).unwrap(),
        )
        .fetch("found")
        .run()
        .unwrap();
    assert_eq!(found[0].as_slice::<f32>().unwrap(), [5.0, -1.0, 499.5]);
    let signature = Signature::new()
        .input("query", "query")
        .output("found", "found");
    saved_model::save(dir, &session, [("serving_default", signature)]).unwrap();
}

#[test]
fn a_saved_hash_table_finds_the_same_in_a_fresh_process() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("model");
    save(&model);
    let query = dir.path().join("query.npy");
    let keys = Tensor::from_vec([4], vec![10i64, 5000, 999, 0]).unwrap();
    opkit::npy::write(&query, &keys).unwrap();
    let out = dir.path().join("out");

    let show = Command::new(env!("CARGO_BIN_EXE_opkit"))
        .args(["saved-model", "show"])
        .arg(&model)
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&show.stdout);
    assert!(
        show.status.success(),
        "{}",
        String::from_utf8_lossy(&show.stderr)
    );
    assert!(
        shown.contains("saved resources:\n  table:0: MutableHashTableV2\n"),
        "{shown}"
    );

    let run = Command::new(env!("CARGO_BIN_EXE_opkit"))
        .args(["saved-model", "run"])
        .arg(&model)
        .arg("--input")
        .arg(format!("query={}", query.display()))
        .arg("--output-dir")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let found = opkit::npy::read(&out.join("found.npy")).unwrap();
    assert_eq!(found.as_slice::<f32>().unwrap(), [5.0, -1.0, 499.5, 0.0]);
}
