//! `cargo run --example sin_lite`'s flow: the trained Sin program exported
//! with `Sin` custom, refused by the lite runtime without a `Sin` kernel in
//! TensorFlow Lite's words, and run with the seed's `SinPrepare`/`SinEval`
//! registered: `sin(x + offset)` for the seed's `x`, the seed's `y`. And the
//! exported model is the one TensorFlow's converter writes for the same
//! program, up to names.

use examples::sin::{GraphTraining, X, Y};
use examples::sin_lite;
use op_core::Code;
use op_lite::model::BuiltinOperator;
use op_lite::{BuiltinOpResolver, Model};

#[test]
fn the_trained_sin_model_runs_in_the_lite_runtime_with_the_seeds_custom_sin() {
    op_kernels::link();
    let training = GraphTraining::new().unwrap();
    for _ in 0..1000 {
        training.step().unwrap();
    }
    let offset = training.offset().unwrap();
    let model = Model::from_bytes(&sin_lite::export(&training).unwrap()).unwrap();
    let codes: Vec<_> = model
        .operator_codes
        .iter()
        .map(|c| (c.builtin, c.custom_name.as_deref()))
        .collect();
    assert_eq!(
        codes,
        [
            (BuiltinOperator::ADD, None),
            (BuiltinOperator::CUSTOM, Some("Sin"))
        ]
    );

    let error = sin_lite::run(&model, &BuiltinOpResolver::new(), &X).unwrap_err();
    assert_eq!(error.code(), Code::NotFound);
    assert!(
        error
            .message()
            .starts_with("Didn't find custom operator for name 'Sin'"),
        "{error}"
    );

    let mut resolver = BuiltinOpResolver::new();
    sin_lite::register_sin(&mut resolver);
    let y = sin_lite::run(&model, &resolver, &X).unwrap();
    for ((x, y), seed_y) in X.iter().zip(&y).zip(Y) {
        let exact = (x + offset).sin();
        assert!(
            (y - exact).abs() <= 1e-6,
            "x = {x}: {y} vs sin(x + offset) {exact}"
        );
        assert!(
            (y - seed_y).abs() <= 1e-4,
            "x = {x}: {y} vs the seed's {seed_y}"
        );
    }
}

/// The same program as TensorFlow's converter writes it (op-lite's test
/// data: `make_models.py` trains the seed's model in TensorFlow 2.21,
/// converts it and renames its SIN to a custom `Sin`).
fn converters_sin_custom() -> Model {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../op-lite/tests/data/sin_custom.tflite"
    );
    Model::from_bytes(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn the_exported_sin_model_is_the_converters_up_to_names() {
    op_kernels::link();
    let training = GraphTraining::new().unwrap();
    for _ in 0..1000 {
        training.step().unwrap();
    }
    let ours = Model::from_bytes(&sin_lite::export(&training).unwrap()).unwrap();
    let theirs = converters_sin_custom();
    assert_eq!(ours.operator_codes, theirs.operator_codes);
    let (a, b) = (&ours.subgraphs[0], &theirs.subgraphs[0]);
    assert_eq!(a.operators.len(), b.operators.len());
    let tensor = |subgraph: &op_lite::model::Subgraph, model: &Model, t: usize| {
        let info = &subgraph.tensors[t];
        let data = model.buffers[info.buffer].data.clone();
        (
            info.dtype,
            info.shape.clone(),
            info.shape_signature.clone(),
            data,
        )
    };
    for (k, (x, y)) in a.operators.iter().zip(&b.operators).enumerate() {
        assert_eq!(x.opcode_index, y.opcode_index, "operator {k}");
        assert_eq!(x.builtin_options, y.builtin_options, "operator {k}");
        for (&t, &u) in x.outputs.iter().zip(&y.outputs) {
            assert_eq!(tensor(a, &ours, t), tensor(b, &theirs, u), "operator {k}");
        }
        for (t, u) in x.inputs.iter().zip(&y.inputs) {
            let (t, u) = (t.unwrap(), u.unwrap());
            let (ours_t, theirs_t) = (tensor(a, &ours, t), tensor(b, &theirs, u));
            assert_eq!(ours_t.0, theirs_t.0, "operator {k}");
            assert_eq!(ours_t.1, theirs_t.1, "operator {k}");
            // The trained offset: TensorFlow's float32 1.0000001, and ours.
            let values = |bytes: &[u8]| -> Vec<f32> {
                bytes
                    .chunks_exact(4)
                    .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
                    .collect()
            };
            let (v, w) = (values(&ours_t.3), values(&theirs_t.3));
            assert_eq!(v.len(), w.len(), "operator {k}");
            for (v, w) in v.iter().zip(&w) {
                assert!((v - w).abs() <= 1e-6, "operator {k}: {v} vs {w}");
            }
        }
    }
    // Ours carries the op's attrs as custom options; the renamed
    // converter's op has none.
    assert!(!a.operators[1].custom_options.is_empty());

    let mut resolver = BuiltinOpResolver::new();
    sin_lite::register_sin(&mut resolver);
    let y = sin_lite::run(&ours, &resolver, &X).unwrap();
    let converters = sin_lite::run(&theirs, &resolver, &X).unwrap();
    for (y, c) in y.iter().zip(&converters) {
        assert!((y - c).abs() <= 1e-6, "{y} vs the converter's model's {c}");
    }
}
