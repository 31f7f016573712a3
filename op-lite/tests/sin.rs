//! The seed's example: the custom `Sin` op written as `SinPrepare` and
//! `SinEval` (in `common`), registered with `add_custom("Sin", ...)`, and
//! run on the seed's model `y = sin(x + offset)`.

mod common;

use common::{ModelBuilder, SEED_X, SEED_Y, assert_close, register_sin, resolver, seed_sin_model};
use op_core::Code;
use op_lite::model::BuiltinOperator;
use op_lite::{Interpreter, MutableOpResolver};

#[test]
fn the_seed_s_sin_model_computes_sin_of_x_plus_offset() {
    let mut interpreter = Interpreter::new(&seed_sin_model(), &resolver()).unwrap();
    interpreter.allocate_tensors().unwrap();
    interpreter.set_input(0, &SEED_X).unwrap();
    interpreter.invoke().unwrap();
    let y = interpreter.output::<f32>(0).unwrap();
    for ((y, expected), x) in y.iter().zip(SEED_Y).zip(SEED_X) {
        assert_close(&[*y], &[(x + 1.0).sin()]);
        assert!(
            (y - expected).abs() < 1e-5,
            "sin({x} + 1) = {y}, the seed says {expected}"
        );
    }
}

#[test]
fn without_sin_registered_construction_fails_with_the_seed_s_words() {
    let mut resolver = MutableOpResolver::new();
    resolver.add_builtin(BuiltinOperator::ADD, common::add_op());
    let err = Interpreter::new(&seed_sin_model(), &resolver).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_eq!(
        err.message(),
        "Didn't find custom operator for name 'Sin' (version 1, node 1). No custom operators are \
         registered: add it with MutableOpResolver::add_custom."
    );
}

#[test]
fn a_misspelt_registration_is_named_as_the_closest() {
    let mut resolver = MutableOpResolver::new();
    resolver
        .add_builtin(BuiltinOperator::ADD, common::add_op())
        .add_custom("Sine", register_sin())
        .add_custom("Cosine", register_sin());
    let err = Interpreter::new(&seed_sin_model(), &resolver).unwrap_err();
    assert!(
        err.message()
            .starts_with("Didn't find custom operator for name 'Sin'"),
        "{err}"
    );
    assert!(
        err.message().ends_with(
            "The custom operators registered are 'Cosine' (all versions), 'Sine' (all versions); \
             did you mean 'Sine'?"
        ),
        "{err}"
    );
}

#[test]
fn sin_alone_resizes_with_its_input() {
    let model = ModelBuilder::unary("Sin", &[1]).build();
    let mut interpreter = Interpreter::new(&model, &resolver()).unwrap();
    interpreter.resize_input_tensor(0, &[2, 3]).unwrap();
    interpreter.allocate_tensors().unwrap();
    assert_eq!(interpreter.output_shape(0).unwrap(), [2, 3]);
    let xs: Vec<f32> = (0..6).map(|i| i as f32 * 0.5).collect();
    interpreter.set_input(0, &xs).unwrap();
    interpreter.invoke().unwrap();
    let expected: Vec<f32> = xs.iter().map(|x| x.sin()).collect();
    assert_close(interpreter.output::<f32>(0).unwrap(), &expected);
}

#[test]
fn sin_rejects_two_inputs_with_the_condition_and_both_values() {
    let mut b = ModelBuilder::new();
    let x = b.f32("x", &[3]);
    let y = b.f32("y", &[3]);
    b.custom("Sin", &[x, x], &[y]);
    b.input(x).output(y);
    let mut interpreter = Interpreter::new(&b.build(), &resolver()).unwrap();
    let err = interpreter.allocate_tensors().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(
        err.message().ends_with(" ctx.num_inputs() != 1 (2 != 1)"),
        "{}",
        err.message()
    );
    assert!(
        err.message().starts_with("op-lite/tests/common/mod.rs:"),
        "{err}"
    );
    assert_eq!(err.context(), ["Node number 0 (Sin) failed to prepare."]);
}
