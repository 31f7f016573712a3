//! The `opkit` tool through its library entry point, as a user runs it.

use std::process::ExitCode;

/// Runs the tool; returns its status, stdout and stderr.
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

#[test]
fn ops_lists_each_op_with_its_attrs_and_kernels() {
    let (status, out, err) = opkit(&["ops", "ZeroOutPolymorphic"]);
    assert_eq!(status, ExitCode::SUCCESS, "{err}");
    assert_eq!(
        out,
        "ZeroOutPolymorphic(to_zero: T) -> (zeroed: T)\n\
         \x20   attrs: T: {float, double, int32} = DT_INT32\n\
         \x20   cpu, 3 kernels: T in {float, double, int32}\n\
         \x20   gpu, 3 kernels: T in {float, double, int32}\n\
         1 ops, 6 kernels\n"
    );
}

#[test]
fn ops_with_a_filter_that_matches_nothing_fails_with_the_closest_name() {
    let count = op_core::Registry::global().ops().count();
    let (status, out, err) = opkit(&["ops", "ZeroOutPolymorphix"]);
    assert_eq!(status, ExitCode::FAILURE);
    assert_eq!(out, "");
    assert_eq!(
        err,
        format!(
            "opkit: NotFound: no registered op's name contains 'ZeroOutPolymorphix' ({count} ops \
             are registered): did you mean 'ZeroOutPolymorphic'?\n"
        )
    );
    let (status, _, err) = opkit(&["ops", "Resacle"]);
    assert_eq!(status, ExitCode::FAILURE);
    assert_eq!(
        err,
        format!(
            "opkit: NotFound: no registered op's name contains 'Resacle' ({count} ops are registered)\n"
        )
    );
}

#[test]
fn ops_without_a_filter_lists_every_linked_op() {
    let (status, out, _) = opkit(&["ops"]);
    assert_eq!(status, ExitCode::SUCCESS);
    let count = op_core::Registry::global().ops().count();
    assert!(out.ends_with(&format!("{count} ops, {} kernels\n", {
        op_core::Registry::global()
            .ops()
            .map(|op| op.kernels().len())
            .sum::<usize>()
    })));
    assert!(out.contains("StringToNumber(string_tensor: string) -> (output: out_type)"));
}

#[test]
fn a_usage_error_is_reported_on_stderr_with_status_2() {
    let (status, out, err) = opkit(&["bogus"]);
    assert_eq!(status, ExitCode::from(2));
    assert!(out.is_empty());
    assert!(err.contains("unrecognized subcommand 'bogus'"), "{err}");
}

/// A fixture TensorFlow wrote: `x` is a `[?,4]` float placeholder and
/// `Identity` the `[?,3]` output.
fn mlp() -> String {
    format!(
        "{}/../op-graph/tests/data/tensorflow/mlp_frozen",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn graph_show_prints_each_node_with_its_inferred_shapes() {
    let (status, out, err) = opkit(&["graph", "show", &format!("{}/graph.pb", mlp())]);
    assert_eq!(status, ExitCode::SUCCESS, "{err}");
    assert!(out.contains("x = Placeholder() -> float [?,4]\n"), "{out}");
    assert!(
        out.contains("MatMul = MatMul(x, MatMul/ReadVariableOp) -> float [?,8]\n"),
        "{out}"
    );
    assert!(out.ends_with("16 nodes; placeholders: x\n"), "{out}");
}

#[test]
fn graph_run_feeds_npy_files_and_writes_each_fetch() {
    let dir = std::env::temp_dir().join(format!("opkit-cli-run-{}", std::process::id()));
    let feed = format!("x={}/feeds/x.npy", mlp());
    let (status, out, err) = opkit(&[
        "graph",
        "run",
        &format!("{}/graph.pb", mlp()),
        "--input",
        &feed,
        "--output",
        "Identity:0",
        "--output",
        "MatMul",
        "--output-dir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(status, ExitCode::SUCCESS, "{err}");
    assert!(out.starts_with("Identity:0: float [5,3] -> "), "{out}");
    let written = opkit::npy::read(&dir.join("Identity_0.npy")).unwrap();
    let expected = opkit::npy::read(format!("{}/expected/Identity.npy", mlp()).as_ref()).unwrap();
    assert_eq!(written.dims(), expected.dims());
    assert!(dir.join("MatMul.npy").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn graph_errors_go_to_stderr_with_a_failure_status() {
    let model = format!("{}/graph.pb", mlp());
    let (status, out, err) = opkit(&[
        "graph",
        "run",
        &model,
        "--input",
        "x",
        "--output",
        "Identity",
        "--output-dir",
        "/tmp",
    ]);
    assert_eq!(status, ExitCode::FAILURE);
    assert!(out.is_empty());
    assert!(err.contains("write NAME=FILE.npy"), "{err}");

    let (status, _, err) = opkit(&[
        "graph",
        "run",
        &model,
        "--output",
        "Identity",
        "--output-dir",
        "/tmp",
    ]);
    assert_eq!(status, ExitCode::FAILURE);
    assert!(
        err.contains("You must feed a value for placeholder tensor 'x'"),
        "{err}"
    );

    let (status, _, err) = opkit(&["graph", "show", "/nonexistent/model.pb"]);
    assert_eq!(status, ExitCode::FAILURE);
    assert!(
        err.contains("opening '/nonexistent/model.pb': No such file"),
        "{err}"
    );
}

#[test]
fn graph_convert_writes_text_that_reads_back_the_same() {
    let out_path = std::env::temp_dir().join(format!("opkit-cli-{}.pbtxt", std::process::id()));
    let (status, out, err) = opkit(&[
        "graph",
        "convert",
        &format!("{}/graph.pb", mlp()),
        out_path.to_str().unwrap(),
    ]);
    assert_eq!(status, ExitCode::SUCCESS, "{err}");
    assert!(out.starts_with("16 nodes: "), "{out}");
    let (_, shown_text, _) = opkit(&["graph", "show", out_path.to_str().unwrap()]);
    let (_, shown_binary, _) = opkit(&["graph", "show", &format!("{}/graph.pb", mlp())]);
    assert_eq!(shown_text, shown_binary);
    std::fs::remove_file(&out_path).unwrap();
}

#[test]
fn graph_export_onnx_writes_a_model_of_onnx_ops_and_ours() {
    use prost::Message;
    let out_path = std::env::temp_dir().join(format!("opkit-cli-{}.onnx", std::process::id()));
    let graph = std::env::temp_dir().join(format!("opkit-cli-{}-export.pbtxt", std::process::id()));
    std::fs::write(
        &graph,
        r#"node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } attr { key: "shape" value { shape { dim { size: -1 } } } } }
node { name: "z" op: "ZeroOut" input: "x" }
node { name: "y" op: "AddV2" input: "z" input: "x" attr { key: "T" value { type: DT_INT32 } } }"#,
    )
    .unwrap();
    let (status, out, err) = opkit(&[
        "graph",
        "export",
        "--onnx",
        graph.to_str().unwrap(),
        out_path.to_str().unwrap(),
        "--fetch",
        "y",
    ]);
    assert_eq!(status, ExitCode::SUCCESS, "{err}");
    assert!(out.starts_with("3 nodes: "), "{out}");
    let model =
        op_graph::onnx::proto::ModelProto::decode(std::fs::read(&out_path).unwrap().as_slice())
            .unwrap();
    let g = model.graph.unwrap();
    let ops: Vec<(&str, &str)> = g
        .node
        .iter()
        .map(|n| (n.domain.as_str(), n.op_type.as_str()))
        .collect();
    assert_eq!(ops, [("opkit_ops", "ZeroOut"), ("", "Add")]);
    // The unknown dim is a named one.
    let dim = &g.input[0]
        .r#type
        .as_ref()
        .unwrap()
        .tensor_type
        .as_ref()
        .unwrap()
        .shape
        .as_ref()
        .unwrap()
        .dim[0];
    assert_eq!(dim.dim_param.as_deref(), Some("x_0"));
    let (status, _, err) = opkit(&[
        "graph",
        "export",
        graph.to_str().unwrap(),
        out_path.to_str().unwrap(),
        "--fetch",
        "y",
    ]);
    assert_ne!(status, ExitCode::SUCCESS);
    assert!(err.contains("--onnx"), "{err}");
    std::fs::remove_file(&out_path).unwrap();
    std::fs::remove_file(&graph).unwrap();
}
