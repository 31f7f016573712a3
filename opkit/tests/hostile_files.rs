//! Files a user or an attacker hands the tool that must not abort, hang
//! or exhaust memory: `.npy` headers that claim more than the file holds,
//! and FIFOs, devices and directories where a file is expected.

use std::path::Path;
use std::process::ExitCode;

use op_core::Code;
use op_core::testing::files::assert_refuses_non_regular_files;

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

fn data(path: &str) -> String {
    format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"))
}

/// The 160-byte file of the probe: a version 1.0 header with shape
/// `(2**40, 4)` of float32, padded to 160 bytes, and no data.
fn huge_header_npy(path: &Path) {
    let dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 4), }";
    let padded = format!("{dict:<149}\n");
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend((padded.len() as u16).to_le_bytes());
    bytes.extend(padded.as_bytes());
    assert_eq!(bytes.len(), 160);
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn a_huge_npy_header_is_an_error_in_graph_run_and_lite_run() {
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("x.npy");
    huge_header_npy(&npy);
    let input = format!("x={}", npy.display());
    let out_dir = dir.path().join("out");
    let graph = data("op-graph/tests/data/tensorflow/mlp_frozen/graph.pb");
    let model = data("op-lite/tests/data/mlp.tflite");
    let lite_input = format!("#0={}", npy.display());
    for args in [
        &[
            "graph", "run", &graph, "--input", &input, "--output", "Identity",
        ][..],
        &["lite", "run", &model, "--input", &lite_input],
    ] {
        let mut args = args.to_vec();
        args.extend(["--output-dir", out_dir.to_str().unwrap()]);
        let (status, _, err) = opkit(&args);
        assert_eq!(status, ExitCode::FAILURE, "{args:?}");
        assert!(
            err.contains("(17592186044416 bytes of float data), but 0 bytes follow the header"),
            "{args:?}: {err}"
        );
        assert!(err.contains(&npy.display().to_string()), "{err}");
    }
}

#[test]
fn npy_inputs_that_are_not_regular_files_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("x.npy");
    let at = npy.clone();
    assert_refuses_non_regular_files(&npy, move || opkit::npy::read(&at).map(drop));

    // Through the tool: the same error, and a failure status.
    let graph = data("op-graph/tests/data/tensorflow/mlp_frozen/graph.pb");
    let input = format!("x={}", npy.display());
    let out_dir = dir.path().join("out");
    let out_dir = out_dir.to_str().unwrap().to_owned();
    let at = npy.clone();
    assert_refuses_non_regular_files(&npy, move || {
        let (status, _, err) = opkit(&[
            "graph",
            "run",
            &graph,
            "--input",
            &input,
            "--output",
            "Identity",
            "--output-dir",
            &out_dir,
        ]);
        assert_eq!(status, ExitCode::FAILURE);
        assert!(err.contains(&at.display().to_string()), "{err}");
        Err(op_core::Error::failed_precondition(err))
    });
}

#[test]
fn models_that_are_not_regular_files_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    for (name, command, verb) in [
        ("model.tflite", "lite", "ops"),
        ("graph.pb", "graph", "show"),
    ] {
        let path = dir.path().join(name);
        let shown = path.to_str().unwrap().to_owned();
        assert_refuses_non_regular_files(&path, move || {
            let (status, _, err) = opkit(&[command, verb, &shown]);
            assert_eq!(status, ExitCode::FAILURE);
            let code = if err.contains("not a regular file") {
                Code::FailedPrecondition
            } else {
                Code::Unknown
            };
            Err(op_core::Error::new(code, err))
        });
    }
}
