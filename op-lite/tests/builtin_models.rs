//! Models TensorFlow's converter wrote, run with the builtin kernels and
//! compared with what LiteRT computes on the same input
//! (`tests/data/make_models.py`, `tests/data/make_op_models.py`).

mod npy;

use op_lite::{BuiltinOpResolver, Interpreter, Model};

/// Runs `tests/data/<name>.tflite` on `<name>.input.npy` with the builtin
/// resolver; returns the output, after checking its shape against
/// `<name>.output.npy`'s.
fn run(name: &str) -> (Vec<f32>, Vec<f32>) {
    let path = npy::data_path(&format!("{name}.tflite"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let model = Model::from_bytes(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
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
    interpreter.set_input(0, &input.f32()).unwrap();
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
