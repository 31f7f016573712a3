//! Selective registration as code: the resolver `cargo xtask lite-resolver`
//! generated for cnn.tflite (committed as `tests/data/cnn_resolver.rs`, kept
//! current by xtask's tests) compiles, registers exactly the model's
//! builtins, and runs the model as LiteRT does.

#[path = "data/cnn_resolver.rs"]
mod cnn_resolver;
mod npy;

use std::collections::BTreeSet;

use op_lite::model::BuiltinOperator;
use op_lite::{Interpreter, Model, OpResolver};

fn cnn() -> Model {
    Model::from_bytes(&std::fs::read(npy::data_path("cnn.tflite")).unwrap()).unwrap()
}

#[test]
fn the_generated_resolver_registers_exactly_the_model_s_builtins() {
    let model = cnn();
    let resolver = cnn_resolver::resolver();
    let registered: BTreeSet<BuiltinOperator> = resolver
        .builtin_ops()
        .into_iter()
        .map(|(op, _)| op)
        .collect();
    let used: BTreeSet<BuiltinOperator> = model.operator_codes.iter().map(|c| c.builtin).collect();
    assert_eq!(registered, used);
    assert!(resolver.custom_ops().is_empty());
    assert!(cnn_resolver::CUSTOM_OPS.is_empty());
    // Each at every version the builtin kernel serves, the model's among them.
    for code in &model.operator_codes {
        assert!(
            resolver.find_builtin(code.builtin, code.version).is_some(),
            "{code:?}"
        );
    }
}

#[test]
fn the_generated_resolver_runs_the_model() {
    let model = cnn();
    let mut interpreter = Interpreter::new(&model, &cnn_resolver::resolver()).unwrap();
    interpreter.allocate_tensors().unwrap();
    let input = npy::read("cnn.input.npy");
    interpreter.set_input(0, &input.f32()).unwrap();
    interpreter.invoke().unwrap();
    let want = npy::read("cnn.output.npy").f32();
    npy::assert_matches("cnn", interpreter.output::<f32>(0).unwrap(), &want, 1e-5);
}
