//! `cargo run --example sin_lite`'s flow: the trained Sin program exported
//! with `Sin` custom, refused by the lite runtime without a `Sin` kernel in
//! TensorFlow Lite's words, and run with the seed's `SinPrepare`/`SinEval`
//! registered: `sin(x + offset)` for the seed's `x`, the seed's `y`.

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
