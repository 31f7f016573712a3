//! Models TensorFlow's converter wrote, run with the builtin kernels and
//! compared with what LiteRT computes on the same input
//! (`tests/data/make_models.py`, `tests/data/make_op_models.py`).

mod npy;

use std::collections::BTreeSet;

use op_lite::builtins::BuiltinKernel;
use op_lite::model::BuiltinOperator;
use op_lite::{BuiltinOpResolver, Interpreter, Model};

fn read_model(name: &str) -> Model {
    let path = npy::data_path(&format!("{name}.tflite"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Model::from_bytes(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Runs `tests/data/<name>.tflite` on `<name>.input.npy` with the builtin
/// resolver; returns the output, after checking its shape against
/// `<name>.output.npy`'s.
fn run(name: &str) -> (Vec<f32>, Vec<f32>) {
    let model = read_model(name);
    let input = npy::read(&format!("{name}.input.npy"));
    let want = npy::read(&format!("{name}.output.npy"));
    let mut interpreter = Interpreter::new(&model, &BuiltinOpResolver::new())
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    if interpreter.input_shape(0).unwrap() != input.shape {
        interpreter.resize_input_tensor(0, &input.shape).unwrap();
    }
    interpreter
        .allocate_tensors()
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    match input.descr.as_str() {
        "<i4" => interpreter.set_input(0, &input.i32()).unwrap(),
        _ => interpreter.set_input(0, &input.f32()).unwrap(),
    }
    interpreter
        .invoke()
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(
        interpreter.output_shape(0).unwrap(),
        want.shape,
        "{name}: output shape"
    );
    (interpreter.output::<f32>(0).unwrap().to_vec(), want.f32())
}

#[test]
fn the_cnn_matches_litert() {
    let (got, want) = run("cnn");
    npy::assert_matches("cnn", &got, &want, 1e-5);
}

#[test]
fn the_mlp_matches_litert_at_another_batch_size() {
    let (got, want) = run("mlp");
    npy::assert_matches("mlp", &got, &want, 1e-5);
}

#[test]
fn the_builtin_sin_model_matches_litert() {
    let (got, want) = run("sin_builtin");
    npy::assert_matches("sin_builtin", &got, &want, 1e-6);
}

/// The models of `make_op_models.py`, under `tests/data/ops/`.
const OP_MODELS: [&str; 6] = ["unary", "binary", "shapes", "nn", "dims", "int32"];

#[test]
fn each_op_model_matches_litert() {
    for name in OP_MODELS {
        let name = format!("ops/{name}");
        let (got, want) = run(&name);
        // Measured: at most 4e-7 (the convolutions' sums in another order),
        // and bit-exact for the binary, int32 and dims models.
        npy::assert_matches(&name, &got, &want, 2e-6);
    }
}

#[test]
fn the_op_models_use_every_builtin_but_the_quantized_ones() {
    let mut used = BTreeSet::new();
    for name in OP_MODELS {
        let model = read_model(&format!("ops/{name}"));
        for op in &model.subgraphs[0].operators {
            used.insert(model.operator_codes[op.opcode_index].builtin);
        }
    }
    let quantized = [BuiltinOperator::QUANTIZE, BuiltinOperator::DEQUANTIZE];
    let all: BTreeSet<_> = BuiltinKernel::all()
        .iter()
        .map(|k| k.code())
        .filter(|code| !quantized.contains(code))
        .collect();
    assert_eq!(all.len(), 44);
    let missing: Vec<_> = all.difference(&used).map(ToString::to_string).collect();
    assert!(missing.is_empty(), "no op model uses {missing:?}");
}

#[test]
fn the_converters_versions_are_in_the_resolvers_ranges() {
    // Every operator code of every model resolves: the ranges are
    // TensorFlow Lite's, and the converter wrote these versions.
    for name in OP_MODELS
        .iter()
        .map(|n| format!("ops/{n}"))
        .chain(["cnn".into(), "mlp".into()])
    {
        let model = read_model(&name);
        for code in &model.operator_codes {
            let kernel = BuiltinKernel::find(code.builtin).expect("a builtin");
            assert!(
                kernel.versions().contains(code.version),
                "{name}: {} version {} is outside {}",
                code.builtin,
                code.version,
                kernel.versions()
            );
        }
    }
}
