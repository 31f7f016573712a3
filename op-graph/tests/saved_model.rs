//! Saved models: a graph with variables saved, loaded into a fresh
//! runtime, computing the same outputs; and the errors of bad directories
//! and signatures.

use std::path::PathBuf;
use std::sync::Arc;

use op_core::{Code, DType, OpCall, Registry, Runtime, ShapeValue, Tensor};
use op_graph::saved_model::{self, Signature};
use op_graph::{Graph, NewNode, NodeId, Session};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("op-graph-saved-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// `y = x + w` with `w` a variable named `w`, and `init` assigning it.
fn model(shared_name: &str) -> (Graph, NodeId) {
    op_kernels::link();
    let mut g = Graph::new();
    let x = g
        .add(
            NewNode::new("Placeholder")
                .name("x")
                .attr("dtype", DType::F32)
                .attr("shape", ShapeValue::from_sizes(&[3])),
        )
        .unwrap();
    let w = g
        .add(
            NewNode::new("VarHandleOp")
                .name("w")
                .attr("shared_name", shared_name)
                .attr("dtype", DType::F32)
                .attr("shape", ShapeValue::from_sizes(&[3])),
        )
        .unwrap();
    let start = Tensor::from_vec([3], vec![10.0f32, 20.0, 30.0]).unwrap();
    let value = g
        .add(
            NewNode::new("Const")
                .name("w_init_value")
                .attr("value", start.to_tensor_value().unwrap())
                .attr("dtype", DType::F32),
        )
        .unwrap();
    let init = g
        .add(
            NewNode::new("AssignVariableOp")
                .name("init")
                .input(w.output(0))
                .input(value.output(0)),
        )
        .unwrap();
    let read = g
        .add(
            NewNode::new("ReadVariableOp")
                .name("w_read")
                .input(w.output(0))
                .attr("dtype", DType::F32),
        )
        .unwrap();
    g.add(
        NewNode::new("AddV2")
            .name("y")
            .input(x.output(0))
            .input(read.output(0)),
    )
    .unwrap();
    (g, init)
}

fn signature() -> Signature {
    Signature::new().input("x", "x").output("y", "y:0")
}

fn x() -> Tensor {
    Tensor::from_vec([3], vec![1.0f32, 2.0, 3.0]).unwrap()
}

#[test]
fn a_loaded_model_computes_what_the_saved_one_did() {
    let (graph, init) = model("w_saved_1");
    let runtime = Arc::new(Runtime::new());
    let session = Session::builder(graph)
        .runtime(runtime.clone())
        .build()
        .unwrap();
    session.runner().target(init).run().unwrap();
    // Train a little: the saved value is the current one, not the initial.
    let handle = OpCall::new("VarHandleOp")
        .attr("shared_name", "w_saved_1")
        .attr("dtype", DType::F32)
        .attr("shape", ShapeValue::from_sizes(&[3]))
        .run_on(&*runtime)
        .unwrap()
        .remove(0);
    OpCall::new("AssignVariableOp")
        .input(handle.clone())
        .input(Tensor::from_vec([3], vec![0.5f32, 0.25, 0.125]).unwrap())
        .run_on(&*runtime)
        .unwrap();
    let before = session.runner().feed("x", x()).fetch("y").run().unwrap();

    let dir = temp_dir("roundtrip");
    saved_model::save(&dir, &session, [("serving_default", signature())]).unwrap();
    for file in ["graph.pb", "variables.safetensors", "signatures.json"] {
        assert!(dir.join(file).exists(), "{file}");
    }
    // The old runtime's variable changes after saving: the model keeps
    // the saved value.
    OpCall::new("AssignVariableOp")
        .input(handle)
        .input(Tensor::from_vec([3], vec![0.0f32; 3]).unwrap())
        .run_on(&*runtime)
        .unwrap();
    drop(session);

    let model = saved_model::load(&dir, Registry::global()).unwrap();
    let out = model.run("serving_default", [("x", x())]).unwrap();
    assert_eq!(out["y"], before[0]);
    assert_eq!(out["y"].as_slice::<f32>().unwrap(), [1.5, 2.25, 3.125]);
    assert_eq!(model.signatures["serving_default"], signature());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn signatures_are_checked_and_their_errors_list_what_exists() {
    let (graph, init) = model("w_saved_2");
    let session = Session::builder(graph)
        .runtime(Arc::new(Runtime::new()))
        .build()
        .unwrap();
    session.runner().target(init).run().unwrap();
    let dir = temp_dir("signatures");
    let bad = Signature::new().input("x", "x").output("y", "nowhere:0");
    let e = saved_model::save(&dir, &session, [("serving_default", bad)]).unwrap_err();
    assert!(e.to_string().contains("nowhere"), "{e}");
    assert!(e.to_string().contains("signature 'serving_default'"), "{e}");

    saved_model::save(&dir, &session, [("serving_default", signature())]).unwrap();
    let model = saved_model::load(&dir, Registry::global()).unwrap();
    let e = model.run("predict", [("x", x())]).unwrap_err();
    assert_eq!(
        e.message(),
        "the saved model has no signature 'predict'; it has: 'serving_default'"
    );
    let e = model.run("serving_default", [("input", x())]).unwrap_err();
    assert_eq!(
        e.message(),
        "signature 'serving_default' has no input 'input'; its inputs are: 'x'"
    );
    let e = model.run("serving_default", []).unwrap_err();
    assert_eq!(e.message(), "signature 'serving_default' needs input 'x'");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_anonymous_variable_cannot_be_saved() {
    let (graph, _) = model("");
    let session = Session::new(graph).unwrap();
    let dir = temp_dir("anonymous");
    let e = saved_model::save(&dir, &session, [("serving_default", signature())]).unwrap_err();
    assert_eq!(e.code(), Code::FailedPrecondition);
    assert!(
        e.to_string()
            .contains("variable node 'w' has no shared_name"),
        "{e}"
    );
}

#[test]
fn damaged_directories_are_errors_naming_the_file() {
    let (graph, init) = model("w_saved_3");
    let session = Session::builder(graph)
        .runtime(Arc::new(Runtime::new()))
        .build()
        .unwrap();
    session.runner().target(init).run().unwrap();
    let dir = temp_dir("damaged");
    saved_model::save(&dir, &session, [("serving_default", signature())]).unwrap();

    std::fs::write(dir.join("signatures.json"), "{\"serving_default\": 3}").unwrap();
    let e = saved_model::load(&dir, Registry::global()).unwrap_err();
    assert_eq!(e.code(), Code::DataLoss);
    assert!(e.message().contains("signatures.json"), "{e}");

    std::fs::remove_file(dir.join("variables.safetensors")).unwrap();
    let e = saved_model::load(&dir, Registry::global()).unwrap_err();
    assert!(e.to_string().contains("loading the saved model"), "{e}");

    let e = saved_model::load(temp_dir("missing"), Registry::global()).unwrap_err();
    assert_eq!(e.code(), Code::NotFound, "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn files_that_are_not_regular_files_are_refused_at_once() {
    let (graph, init) = model("w_saved_fifo");
    let session = Session::builder(graph)
        .runtime(Arc::new(Runtime::new()))
        .build()
        .unwrap();
    session.runner().target(init).run().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().to_path_buf();
    saved_model::save(&dir, &session, [("serving_default", signature())]).unwrap();
    for file in ["graph.pb", "signatures.json", "variables.safetensors"] {
        let saved = std::fs::read(dir.join(file)).unwrap();
        let model_dir = dir.clone();
        op_core::testing::files::assert_refuses_non_regular_files(&dir.join(file), move || {
            saved_model::load(&model_dir, Registry::global()).map(drop)
        });
        std::fs::write(dir.join(file), saved).unwrap();
    }
    saved_model::load(&dir, Registry::global()).unwrap();
}

#[test]
fn a_variable_saved_with_another_shape_or_dtype_is_refused_at_load() {
    let (graph, init) = model("w_saved_shape");
    let session = Session::builder(graph)
        .runtime(Arc::new(Runtime::new()))
        .build()
        .unwrap();
    session.runner().target(init).run().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    saved_model::save(dir, &session, [("serving_default", signature())]).unwrap();
    let variables = dir.join("variables.safetensors");
    for (value, expected) in [
        // Assigned, it would broadcast: x + [100] = [101, 102, 103].
        (
            Tensor::from_vec([1], vec![100.0f32]).unwrap(),
            "variable 'w' is declared with shape [3], but variables.safetensors holds a value \
             of shape [1] for it",
        ),
        (
            Tensor::from_vec([3, 1], vec![1.0f32; 3]).unwrap(),
            "variable 'w' is declared with shape [3], but variables.safetensors holds a value \
             of shape [3,1] for it",
        ),
        (
            Tensor::from_vec([3], vec![1i32; 3]).unwrap(),
            "variable 'w' is declared as float, but variables.safetensors holds a value of \
             dtype int32 for it",
        ),
    ] {
        op_core::checkpoint::write(&variables, [("w".to_owned(), value)]).unwrap();
        let e = saved_model::load(dir, Registry::global()).unwrap_err();
        assert_eq!(e.code(), Code::InvalidArgument, "{e}");
        assert_eq!(e.message(), expected);
        assert!(e.to_string().contains("loading the saved model"), "{e}");
    }
    let value = Tensor::from_vec([3], vec![1.0f32; 3]).unwrap();
    op_core::checkpoint::write(&variables, [("w".to_owned(), value)]).unwrap();
    let model = saved_model::load(dir, Registry::global()).unwrap();
    let out = model.run("serving_default", [("x", x())]).unwrap();
    assert_eq!(out["y"].as_slice::<f32>().unwrap(), [2.0, 3.0, 4.0]);
}
