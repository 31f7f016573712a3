//! `opkit lite run`, `ops` and `benchmark`, through the tool's library entry
//! point, on the converter's models in op-lite/tests/data and on models
//! written here.

mod common;

use std::collections::BTreeSet;
use std::process::ExitCode;

use common::{
    custom_model, custom_model_with, data, error, lite_run, opkit, s, scratch, write_f32,
};
use ndarray::{ArrayD, IxDyn};
use ndarray_npy::{read_npy, write_npy};

#[test]
fn run_feeds_inputs_by_name_or_position_and_writes_each_output_by_tensor_name() {
    let dir = scratch("run");
    let model = custom_model(&dir, "Sin");
    let x = dir.join("x.npy");
    // Two rows: the open batch dimension is resized.
    let xs = [0.0f32, 0.5, 1.0, -2.0, 3.0, 201.0];
    write_f32(&x, &[2, 3], &xs);
    for input in [
        format!("serving_default_x:0={}", s(&x)),
        format!("#0={}", s(&x)),
    ] {
        let out_dir = dir.join("out");
        let (status, out, err) = opkit(&lite_run(s(&model), &input, &out_dir));
        assert_eq!(status, ExitCode::SUCCESS, "{err}");
        let written = out_dir.join("StatefulPartitionedCall_0.npy");
        assert_eq!(
            out,
            format!(
                "input 0 ('serving_default_x:0') resized from [1, 3] to [2, 3]\n\
                 StatefulPartitionedCall:0: float [2,3] -> {}\n",
                written.display()
            )
        );
        let y: ArrayD<f32> = read_npy(&written).unwrap();
        assert_eq!(y.shape(), [2, 3]);
        let expected: Vec<f32> = xs.iter().map(|x| x.sin()).collect();
        assert_eq!(y.iter().copied().collect::<Vec<_>>(), expected);
        std::fs::remove_dir_all(&out_dir).unwrap();
    }
}

#[test]
fn bad_inputs_are_errors_naming_the_argument_and_what_was_expected() {
    let dir = scratch("errors");
    let model = custom_model(&dir, "Sin");
    let model = s(&model);
    let out = dir.join("out");
    let out = s(&out);
    let x = dir.join("x.npy");
    write_f32(&x, &[1, 3], &[1.0, 2.0, 3.0]);
    let run = |input: &str| error(&["lite", "run", model, "--input", input, "--output-dir", out]);

    let err = run(&format!("serving_default_y:0={}", s(&x)));
    assert_eq!(
        err,
        format!(
            "opkit: NotFound: the model has no input named 'serving_default_y:0' (its inputs are \
             'serving_default_x:0'); did you mean 'serving_default_x:0'?\n\t--input \
             serving_default_y:0={}\n",
            s(&x)
        )
    );
    let err = run(&format!("#1={}", s(&x)));
    assert!(
        err.starts_with("opkit: InvalidArgument: input 1 is out of range: the model has 1 input\n"),
        "{err}"
    );
    let err = run(&format!("#x={}", s(&x)));
    assert!(
        err.contains("'#x' is not an input's position: write #0, #1, ..."),
        "{err}"
    );
    let err = run(s(&x));
    assert!(err.contains("write NAME=FILE.npy"), "{err}");

    let missing = dir.join("missing.npy");
    let err = run(&format!("#0={}", s(&missing)));
    assert!(
        err.starts_with(&format!("opkit: NotFound: opening '{}'", s(&missing))),
        "{err}"
    );

    let ints = dir.join("ints.npy");
    write_npy(&ints, &ArrayD::from_elem(IxDyn(&[1, 3]), 7i32)).unwrap();
    let err = run(&format!("#0={}", s(&ints)));
    assert!(
        err.starts_with(
            "opkit: InvalidArgument: the file holds int32, but input 0 ('serving_default_x:0') \
             of the model is float\n"
        ),
        "{err}"
    );

    let wide = dir.join("wide.npy");
    write_f32(&wide, &[1, 4], &[0.0; 4]);
    let wide = format!("#0={}", s(&wide));
    let err = error(&[
        "lite",
        "run",
        model,
        "--input",
        &wide,
        "--output-dir",
        out,
        "--strict",
    ]);
    assert!(
        err.starts_with(
            "opkit: InvalidArgument: the file's array has shape [1, 4], but input 0 \
             ('serving_default_x:0') has shape [1, 3] (shape signature [-1, 3]), and --strict \
             resizes only the dimensions a shape signature leaves open (-1)\n"
        ),
        "{err}"
    );

    let err = error(&["lite", "run", model, "--output-dir", out]);
    assert_eq!(
        err,
        "opkit: InvalidArgument: no --input for #0 'serving_default_x:0': give every input of \
         the model, as NAME=FILE.npy\n"
    );
    let twice = format!("#0={}", s(&x));
    let err = error(&[
        "lite",
        "run",
        model,
        "--input",
        &twice,
        "--input",
        &twice,
        "--output-dir",
        out,
    ]);
    assert!(err.contains("both feed input 0"), "{err}");
}

#[test]
fn a_missing_model_or_op_is_an_error_naming_the_file() {
    let dir = scratch("missing");
    let nowhere = dir.join("nowhere.tflite");
    let err = error(&["lite", "ops", s(&nowhere)]);
    assert!(
        err.starts_with(&format!("opkit: NotFound: opening '{}': ", s(&nowhere))),
        "{err}"
    );
    let not_a_model = dir.join("x.tflite");
    std::fs::write(&not_a_model, b"not a flatbuffer").unwrap();
    let err = error(&["lite", "ops", s(&not_a_model)]);
    assert!(
        err.contains(&format!("\treading {}", s(&not_a_model))),
        "{err}"
    );

    let sn = custom_model(&dir, "Sn");
    let x = dir.join("x.npy");
    write_f32(&x, &[1, 3], &[1.0, 2.0, 3.0]);
    let out = dir.join("out");
    let input = format!("#0={}", s(&x));
    let err = error(&lite_run(s(&sn), &input, &out));
    // The seed's Sin first, then the framework's ops.
    assert!(
        err.starts_with(
            "opkit: NotFound: Didn't find custom operator for name 'Sn' (version 1, node 0). \
             The custom operators registered are 'Sin' (all versions), 'AddN' (all versions), "
        ),
        "{err}"
    );
    assert!(
        err.ends_with(&format!(
            "; did you mean 'Sin'?\n\tloading {0} (`opkit lite ops {0}` lists its ops and \
             whether this build has each)\n",
            s(&sn)
        )),
        "{err}"
    );
    assert!(
        !out.exists(),
        "nothing is written when the model cannot run"
    );
}

#[test]
fn ops_lists_each_op_with_its_version_node_count_and_kernel() {
    let (status, out, err) = opkit(&["lite", "ops", &data("sin_custom.tflite")]);
    assert_eq!(status, ExitCode::SUCCESS, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "op                            code  version  nodes  kernel"
    );
    assert_eq!(
        lines[2],
        "'Sin' (custom)                  32        1      1  the seed's Sin (opkit::lite::seed_sin)"
    );
    assert!(lines[1].starts_with("ADD                              0        1      1  "));
    assert!(lines[3].starts_with("2 ops, 2 nodes; "), "{out}");

    let (status, out, _) = opkit(&["lite", "ops", &data("mlp.tflite")]);
    assert_eq!(status, ExitCode::SUCCESS);
    // GELU's code is above 127 and four nodes share FULLY_CONNECTED.
    assert!(
        out.contains("\nGELU                           150        1      1  "),
        "{out}"
    );
    assert!(out.starts_with("op "), "{out}");
    assert!(
        out.contains("\nFULLY_CONNECTED                  9        1      4  "),
        "{out}"
    );
    assert!(out.contains("\n5 ops, 8 nodes; "), "{out}");
}

#[test]
fn benchmark_prints_timings_and_benchmark_model_s_op_profile() {
    let dir = scratch("benchmark");
    let model = custom_model(&dir, "Sin");
    let (status, out, err) = opkit(&["lite", "benchmark", s(&model), "--runs", "5"]);
    assert_eq!(status, ExitCode::SUCCESS, "{err}");
    assert!(out.contains("\ncount=5 first="), "{out}");
    assert!(out.contains("\nInference timings in us: Init: "), "{out}");
    assert!(
        out.contains("Operator-wise Profiling Info for Regular Benchmark Runs (5 profiled runs):")
    );
    let summary = out
        .split("Summary by node type ==============================\n")
        .nth(1)
        .unwrap();
    let row: Vec<&str> = summary
        .lines()
        .nth(1)
        .unwrap()
        .split('\t')
        .map(str::trim)
        .collect();
    assert_eq!(row[0], "Sin");
    assert_eq!(row[1], "1");
    assert_eq!(row[3], "100.000%");
    assert_eq!(row[4], "100.000%");
    assert_eq!(row[5], "5");

    let x = dir.join("x.npy");
    write_f32(&x, &[4, 3], &[0.5; 12]);
    let input = format!("#0={}", s(&x));
    let (status, out, err) = opkit(&[
        "lite",
        "benchmark",
        s(&model),
        "--runs",
        "3",
        "--warmup",
        "0",
        "--input",
        &input,
        "--json",
    ]);
    assert_eq!(status, ExitCode::SUCCESS, "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["runs"], 3);
    assert_eq!(json["nodes"], 1);
    assert_eq!(json["warmup_avg_us"], 0.0);
    assert!(json["avg_us"].as_f64().unwrap() > 0.0);
    assert!(json["min_us"].as_f64() <= json["median_us"].as_f64());
    assert!(json["median_us"].as_f64() <= json["max_us"].as_f64());
    assert_eq!(json["ops"][0]["op"], "Sin");
    assert_eq!(json["ops"][0]["percent"], 100.0);

    let err = error(&["lite", "benchmark", s(&model), "--runs", "0"]);
    assert_eq!(err, "opkit: InvalidArgument: --runs must be at least 1\n");
}

#[test]
fn tensor_names_become_safe_file_names() {
    use opkit::lite::sanitize;
    assert_eq!(
        sanitize("StatefulPartitionedCall:0"),
        "StatefulPartitionedCall_0"
    );
    assert_eq!(sanitize("model/dense 1/BiasAdd"), "model_dense_1_BiasAdd");
    assert_eq!(sanitize("a.b-c_d"), "a.b-c_d");
    assert_eq!(sanitize(".."), "_..");
    assert_eq!(sanitize(".hidden"), "_.hidden");
    assert_eq!(sanitize(""), "_");
    assert_eq!(sanitize("é"), "_");
}

/// Runs `opkit lite run` on op-lite's model `name` with its input, and
/// compares the output with LiteRT's (`name.output.npy`).
fn run_like_litert(name: &str, feed: &str) {
    let dir = scratch(&format!("litert-{name}"));
    let input = format!("{feed}={}", data(&format!("{name}.input.npy")));
    let model = data(&format!("{name}.tflite"));
    let (status, out, err) = opkit(&lite_run(&model, &input, &dir));
    assert_eq!(status, ExitCode::SUCCESS, "{name}: {err}");
    let written = dir.join("StatefulPartitionedCall_0.npy");
    assert!(
        out.ends_with(&format!("-> {}\n", written.display())),
        "{out}"
    );
    let got: ArrayD<f32> = read_npy(&written).unwrap();
    let want: ArrayD<f32> = read_npy(data(&format!("{name}.output.npy"))).unwrap();
    assert_eq!(got.shape(), want.shape(), "{name}");
    for (g, w) in got.iter().zip(&want) {
        assert!(
            (g - w).abs() <= 1e-5 * (1.0 + w.abs()),
            "{name}: ours {g}, LiteRT {w}"
        );
    }
}

#[test]
fn run_computes_what_litert_computes_on_the_converter_s_models() {
    // By signature name, by tensor name and by position.
    run_like_litert("sin_custom", "x");
    run_like_litert("sin_builtin", "serving_default_x:0");
    run_like_litert("cnn", "image");
    // A batch of 3 where the model says 1: the signature leaves it open.
    run_like_litert("mlp", "#0");
}

#[test]
fn ops_says_this_build_has_every_op_of_the_converter_s_models() {
    for name in ["sin_custom", "sin_builtin", "cnn", "mlp"] {
        let (status, out, err) = opkit(&["lite", "ops", &data(&format!("{name}.tflite"))]);
        assert_eq!(status, ExitCode::SUCCESS, "{err}");
        assert!(out.ends_with("; this build runs every one\n"), "{out}");
        assert!(
            out.lines().skip(1).all(|l| l.ends_with("  builtin")
                || l.ends_with("  the seed's Sin (opkit::lite::seed_sin)")
                || l.contains(" ops, ")),
            "{out}"
        );
    }
}

#[test]
fn benchmark_profiles_each_builtin_of_the_cnn() {
    let (status, out, err) = opkit(&["lite", "benchmark", &data("cnn.tflite"), "--runs", "3"]);
    assert_eq!(status, ExitCode::SUCCESS, "{err}");
    let summary = out.split("Summary by node type").nth(1).unwrap();
    let ops: BTreeSet<&str> = summary
        .lines()
        .skip(2)
        .take_while(|l| !l.is_empty())
        .map(|l| l.split('\t').next().unwrap().trim())
        .collect();
    let expected: BTreeSet<&str> = [
        "RELU6",
        "CONV_2D",
        "DEPTHWISE_CONV_2D",
        "MAX_POOL_2D",
        "AVERAGE_POOL_2D",
        "RESHAPE",
        "FULLY_CONNECTED",
        "SOFTMAX",
    ]
    .into();
    assert_eq!(ops, expected, "{out}");
}

#[test]
fn run_covers_the_builtin_op_models_an_int32_input_and_refuses_a_quantized_one() {
    for name in ["binary", "dims", "int32", "nn", "shapes", "unary"] {
        let dir = scratch(&format!("ops-{name}"));
        let input = format!("#0={}", data(&format!("ops/{name}.input.npy")));
        let model = data(&format!("ops/{name}.tflite"));
        let (status, _, err) = opkit(&lite_run(&model, &input, &dir));
        assert_eq!(status, ExitCode::SUCCESS, "{name}: {err}");
        let got: ArrayD<f32> = read_npy(dir.join("Identity.npy")).unwrap();
        let want: ArrayD<f32> = read_npy(data(&format!("ops/{name}.output.npy"))).unwrap();
        assert_eq!(got.shape(), want.shape(), "{name}");
        for (g, w) in got.iter().zip(&want) {
            let close = g == w || (g - w).abs() <= 2e-6 * (1.0 + w.abs());
            assert!(close, "{name}: ours {g}, LiteRT {w}");
        }
    }
    let dir = scratch("quantized");
    let input = format!("#0={}", data("ops/unary.input.npy"));
    let err = error(&lite_run(&data("ops/quantized.tflite"), &input, &dir));
    assert!(
        err.starts_with("opkit: Unimplemented: tensor 1 ('Relu;add')"),
        "{err}"
    );
    assert!(
        err.contains("quantized models are not supported by this runtime"),
        "{err}"
    );
}

#[test]
fn outputs_whose_names_sanitize_alike_get_their_position() {
    let dir = scratch("alike");
    // Outputs `a:0` (the Sin) and `a/0` (the input itself): both `a_0`.
    let model = custom_model_with(&dir, "Sin", |model| {
        let subgraph = &mut model.subgraphs[0];
        subgraph.tensors[0].name = "a/0".into();
        subgraph.tensors[1].name = "a:0".into();
        subgraph.outputs = vec![1, 0];
    });
    let x = dir.join("x.npy");
    write_f32(&x, &[1, 3], &[0.0, 1.0, 2.0]);
    let input = format!("#0={}", s(&x));
    let out = dir.join("out");
    let (status, stdout, err) = opkit(&lite_run(s(&model), &input, &out));
    assert_eq!(status, ExitCode::SUCCESS, "{err}");
    assert_eq!(
        stdout,
        format!(
            "a:0: float [1,3] -> {}\na/0: float [1,3] -> {}\n",
            out.join("a_0.npy").display(),
            out.join("a_0_1.npy").display()
        )
    );
    let y: ArrayD<f32> = read_npy(out.join("a_0.npy")).unwrap();
    let x: ArrayD<f32> = read_npy(out.join("a_0_1.npy")).unwrap();
    assert_eq!(y.as_slice().unwrap(), [0.0, 1.0f32.sin(), 2.0f32.sin()]);
    assert_eq!(x.as_slice().unwrap(), [0.0, 1.0, 2.0]);
}

#[test]
fn a_custom_op_the_framework_has_runs_through_the_bridge() {
    // `Cos` is no builtin kernel's custom name: op-kernels' TensorFlow op
    // `Cos` runs it, and `lite ops` says so.
    let dir = scratch("framework");
    let model = custom_model(&dir, "Cos");
    let (status, out, err) = opkit(&["lite", "ops", s(&model)]);
    assert_eq!(status, ExitCode::SUCCESS, "{err}");
    assert!(
        out.contains("\n'Cos' (custom)                  32        1      1  framework op 'Cos' (op_lite::bridge)\n"),
        "{out}"
    );
    let x = dir.join("x.npy");
    write_f32(&x, &[1, 3], &[0.0, 1.0, 2.0]);
    let input = format!("#0={}", s(&x));
    let out = dir.join("out");
    let (status, _, err) = opkit(&lite_run(s(&model), &input, &out));
    assert_eq!(status, ExitCode::SUCCESS, "{err}");
    let y: ArrayD<f32> = read_npy(out.join("StatefulPartitionedCall_0.npy")).unwrap();
    assert_eq!(y.as_slice().unwrap(), [1.0, 1.0f32.cos(), 2.0f32.cos()]);
}

/// Without `--strict`, an input of another shape is resized as LiteRT's
/// `resize_tensor_input` resizes it (the probe's `[8]` into a `[5]` input).
#[test]
fn run_resizes_an_input_of_another_shape_unless_strict() {
    let dir = scratch("resize");
    let model = custom_model(&dir, "Sin");
    let x = dir.join("x.npy");
    let xs = [0.0f32, 0.5, 1.0, -2.0];
    write_f32(&x, &[1, 4], &xs);
    let out_dir = dir.join("out");
    let input = format!("#0={}", s(&x));
    let (status, out, err) = opkit(&lite_run(s(&model), &input, &out_dir));
    assert_eq!(status, ExitCode::SUCCESS, "{err}");
    assert!(
        out.starts_with("input 0 ('serving_default_x:0') resized from [1, 3] to [1, 4]\n"),
        "{out}"
    );
    let y: ArrayD<f32> = read_npy(out_dir.join("StatefulPartitionedCall_0.npy")).unwrap();
    assert_eq!(y.shape(), [1, 4]);
    let expected: Vec<f32> = xs.iter().map(|x| x.sin()).collect();
    assert_eq!(y.iter().copied().collect::<Vec<_>>(), expected);
}

/// A rank-5,000 input (the probe used 100,000): whatever the runtime says of it, the
/// message stays short.
#[test]
fn a_huge_rank_makes_a_short_message() {
    let dir = scratch("rank");
    let model = custom_model(&dir, "Sin");
    let x = dir.join("x.npy");
    write_f32(&x, &vec![1; 5_000], &[0.5]);
    for strict in [false, true] {
        let out_dir = dir.join("out");
        let input = format!("#0={}", s(&x));
        let mut args = lite_run(s(&model), &input, &out_dir).to_vec();
        if strict {
            args.push("--strict");
        }
        let (_, out, err) = opkit(&args);
        assert!(out.len() < 2_000, "{} bytes on stdout", out.len());
        assert!(
            err.len() < 2_000,
            "{} bytes on stderr: {}",
            err.len(),
            &err[..3_000.min(err.len())]
        );
        if strict {
            assert!(err.contains("(rank 5000)"), "{err}");
        }
        let _ = std::fs::remove_dir_all(&out_dir);
    }
}
