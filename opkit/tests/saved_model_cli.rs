//! `opkit saved-model show` and `run`, as a user runs them on a model a
//! program saved, and the errors of a model whose variable was saved with
//! another shape than the graph declares.

use std::path::Path;
use std::process::ExitCode;

use op_core::{DType, Tensor};
use op_graph::saved_model::{self, Signature};
use op_graph::{GraphBuilder, NewNode, Session};

fn opkit(args: &[&str]) -> (ExitCode, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let argv = std::iter::once("opkit").chain(args.iter().copied());
    let status = opkit::cli::run(argv, &mut out, &mut err);
    (
        status,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

/// Saves `y = x + w` in `dir`, `w` a `[4]` float variable holding
/// `[1, 2, 3, 4]`, with the signature `serving_default` (`x` -> `y`) and
/// `twice` (`x` -> `y` and `x2`, the input itself).
fn save_model(dir: &Path) {
    let b = GraphBuilder::new();
    let x = b.placeholder("x", DType::F32, "[4]").unwrap();
    let mut graph = b.into_graph();
    let w = graph
        .add(
            NewNode::new("VarHandleOp")
                .name("w")
                .attr("shared_name", "opkit_cli_w")
                .attr("dtype", DType::F32)
                .attr("shape", op_core::ShapeValue::from_sizes(&[4])),
        )
        .unwrap();
    let read = graph
        .add(
            NewNode::new("ReadVariableOp")
                .name("w_read")
                .input(w.output(0))
                .attr("dtype", DType::F32),
        )
        .unwrap();
    graph
        .add(
            NewNode::new("AddV2")
                .name("y")
                .input(x)
                .input(read.output(0)),
        )
        .unwrap();
    let session = Session::new(graph).unwrap();
    let handle = op_core::OpCall::new("VarHandleOp")
        .attr("shared_name", "opkit_cli_w")
        .attr("dtype", DType::F32)
        .attr("shape", op_core::ShapeValue::from_sizes(&[4]))
        .run_on(session.runtime())
        .unwrap()
        .remove(0);
    op_core::OpCall::new("AssignVariableOp")
        .input(handle)
        .input(Tensor::from_vec([4], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap())
        .run_on(session.runtime())
        .unwrap();
    let serving = Signature::new().input("x", "x").output("y", "y");
    let twice = Signature::new()
        .input("x", "x")
        .output("y", "y:0")
        .output("x2", "x");
    saved_model::save(
        dir,
        &session,
        [("serving_default", serving), ("twice", twice)],
    )
    .unwrap();
}

fn write_npy(path: &Path, values: &[f32]) {
    let t = Tensor::from_vec([values.len()], values.to_vec()).unwrap();
    opkit::npy::write(path, &t).unwrap();
}

#[test]
fn show_prints_signatures_and_variables() {
    let dir = tempfile::tempdir().unwrap();
    save_model(dir.path());
    let (status, out, err) = opkit(&["saved-model", "show", dir.path().to_str().unwrap()]);
    assert_eq!(status, ExitCode::SUCCESS, "{err}");
    assert_eq!(
        out,
        "signature 'serving_default':\n\
         \x20 inputs:\n\
         \x20   x: float [4] <- x\n\
         \x20 outputs:\n\
         \x20   y: float ? <- y\n\
         signature 'twice':\n\
         \x20 inputs:\n\
         \x20   x: float [4] <- x\n\
         \x20 outputs:\n\
         \x20   x2: float [4] <- x\n\
         \x20   y: float ? <- y:0\n\
         variables:\n\
         \x20 w: float [4]\n\
         2 signatures, 1 variable, 0 saved resources\n"
    );
}

#[test]
fn run_feeds_npy_files_and_writes_each_output() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("model");
    save_model(&model);
    let x = dir.path().join("x.npy");
    write_npy(&x, &[1.0, 1.0, 1.0, 1.0]);
    let out_dir = dir.path().join("out");
    let input = format!("x={}", x.display());
    let (status, out, err) = opkit(&[
        "saved-model",
        "run",
        model.to_str().unwrap(),
        "--input",
        &input,
        "--output-dir",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(status, ExitCode::SUCCESS, "{err}");
    assert_eq!(
        out,
        format!("y: float [4] -> {}\n", out_dir.join("y.npy").display())
    );
    let y = opkit::npy::read(&out_dir.join("y.npy")).unwrap();
    assert_eq!(y.as_slice::<f32>().unwrap(), [2.0, 3.0, 4.0, 5.0]);

    // Another signature, one of its outputs.
    let (status, out, err) = opkit(&[
        "saved-model",
        "run",
        model.to_str().unwrap(),
        "--signature",
        "twice",
        "--input",
        &input,
        "--output",
        "x2",
        "--output-dir",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(status, ExitCode::SUCCESS, "{err}");
    assert_eq!(
        out,
        format!("x2: float [4] -> {}\n", out_dir.join("x2.npy").display())
    );

    for (args, expected) in [
        (
            vec!["--signature", "predict", "--input", &input],
            "the saved model has no signature 'predict'; it has: 'serving_default', 'twice'",
        ),
        (
            vec!["--input", &input, "--output", "z"],
            "--output 'z': signature 'serving_default' has no such output; its outputs are: 'y'",
        ),
        (vec![], "signature 'serving_default' needs input 'x'"),
        (vec!["--input", "x"], "--input x: write NAME=FILE.npy"),
    ] {
        let mut argv = vec!["saved-model", "run", model.to_str().unwrap()];
        argv.extend(args);
        argv.extend(["--output-dir", out_dir.to_str().unwrap()]);
        let (status, _, err) = opkit(&argv);
        assert_eq!(status, ExitCode::FAILURE, "{argv:?}");
        assert!(err.starts_with("opkit: InvalidArgument: "), "{err}");
        assert!(err.contains(expected), "{argv:?}: {err}");
    }
}

/// The probe's case: `w` declared `[4]`, saved as `[1]` = 100, which used
/// to load and broadcast (`x + w = [101, 101, 101, 101]`).
#[test]
fn a_variable_saved_with_another_shape_is_an_error_in_show_and_run() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("model");
    save_model(&model);
    let hundred = Tensor::from_vec([1], vec![100.0f32]).unwrap();
    op_core::checkpoint::write(model.join("variables.safetensors"), [("w", hundred)]).unwrap();
    let x = dir.path().join("x.npy");
    write_npy(&x, &[1.0, 1.0, 1.0, 1.0]);
    let out_dir = dir.path().join("out");
    let input = format!("x={}", x.display());
    let model = model.to_str().unwrap();
    for argv in [
        vec!["saved-model", "show", model],
        vec![
            "saved-model",
            "run",
            model,
            "--input",
            &input,
            "--output-dir",
            out_dir.to_str().unwrap(),
        ],
    ] {
        let (status, out, err) = opkit(&argv);
        assert_eq!(status, ExitCode::FAILURE, "{argv:?}");
        assert!(out.is_empty(), "{out}");
        assert!(
            err.contains(
                "InvalidArgument: variable 'w' is declared with shape [4], but \
                 variables.safetensors holds a value of shape [1] for it"
            ),
            "{err}"
        );
    }
    assert!(!out_dir.join("y.npy").exists());
}

#[test]
fn errors_are_prefixed_with_the_programs_own_name() {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let argv = [
        "/usr/local/bin/my-ops",
        "saved-model",
        "show",
        "/nonexistent/model",
    ];
    let status = opkit::cli::run(argv, &mut out, &mut err);
    assert_eq!(status, ExitCode::FAILURE);
    let err = String::from_utf8(err).unwrap();
    assert!(err.starts_with("my-ops: NotFound: "), "{err}");
}
