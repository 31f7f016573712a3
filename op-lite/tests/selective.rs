//! Selective registration at run time: `MutableOpResolver::for_model`
//! keeps only the registrations a model uses, and `ops_used` lists them.

mod common;

use std::collections::BTreeSet;

use common::{ModelBuilder, SEED_X, SEED_Y, assert_close, resolver, seed_sin_model};
use op_core::Code;
use op_lite::kernel::{FnOp, InvokeContext, PrepareContext};
use op_lite::model::{BuiltinOperator, OperatorCode};
use op_lite::resolver::{OpUse, ops_used};
use op_lite::{Interpreter, Model, MutableOpResolver, OpResolver};

fn nothing(_: &mut PrepareContext<'_>) -> op_core::Result<()> {
    Ok(())
}
fn nothing_invoke(_: &mut InvokeContext<'_>) -> op_core::Result<()> {
    Ok(())
}

/// A resolver with a do-nothing kernel for every builtin code up to 210
/// and for `Sin` and `Cos`: a stand-in for a full op library.
fn everything() -> MutableOpResolver {
    let op = FnOp::new(nothing, nothing_invoke);
    let mut full = MutableOpResolver::new();
    for code in 0..=210 {
        full.add_builtin(BuiltinOperator(code), op);
    }
    full.add_custom("Sin", op).add_custom("Cos", op);
    full
}

fn data(name: &str) -> Model {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    Model::from_bytes(&std::fs::read(path).unwrap()).unwrap()
}

fn builtin_codes(resolver: &MutableOpResolver) -> BTreeSet<BuiltinOperator> {
    resolver
        .builtin_ops()
        .into_iter()
        .map(|(op, _)| op)
        .collect()
}

#[test]
fn the_resolver_for_a_model_holds_exactly_the_ops_it_uses() {
    let cnn = data("cnn.tflite");
    let selected = MutableOpResolver::for_model(&cnn, &everything()).unwrap();
    let expected: BTreeSet<BuiltinOperator> =
        cnn.operator_codes.iter().map(|c| c.builtin).collect();
    assert_eq!(builtin_codes(&selected), expected);
    assert!(expected.contains(&BuiltinOperator::CONV_2D), "{expected:?}");
    assert!(selected.custom_ops().is_empty());

    let sin = data("sin_custom.tflite");
    let selected = MutableOpResolver::for_model(&sin, &everything()).unwrap();
    let customs: Vec<String> = selected.custom_ops().into_iter().map(|(n, _)| n).collect();
    assert_eq!(customs, ["Sin"]);
    assert!(selected.find_custom("Cos", 1).is_none());
}

#[test]
fn the_resolver_for_several_models_holds_the_union() {
    let (cnn, mlp) = (data("cnn.tflite"), data("mlp.tflite"));
    let selected = MutableOpResolver::for_models(&[&cnn, &mlp], &everything()).unwrap();
    let expected: BTreeSet<BuiltinOperator> = cnn
        .operator_codes
        .iter()
        .chain(&mlp.operator_codes)
        .map(|c| c.builtin)
        .collect();
    assert_eq!(builtin_codes(&selected), expected);
    // GELU has an extended code (above 127).
    assert!(expected.contains(&BuiltinOperator::GELU));
}

#[test]
fn a_selected_resolver_runs_the_model() {
    let model = seed_sin_model();
    let selected = MutableOpResolver::for_model(&model, &resolver()).unwrap();
    assert!(selected.find_builtin(BuiltinOperator::MUL, 1).is_none());
    let mut interpreter = Interpreter::new(&model, &selected).unwrap();
    interpreter.allocate_tensors().unwrap();
    interpreter.set_input(0, &SEED_X).unwrap();
    interpreter.invoke().unwrap();
    assert_close(interpreter.output::<f32>(0).unwrap(), &SEED_Y);
}

#[test]
fn ops_the_full_resolver_lacks_are_all_named_in_tensorflow_lite_s_words() {
    let mut full = MutableOpResolver::new();
    let op = FnOp::new(nothing, nothing_invoke);
    full.add_builtin_versions(BuiltinOperator::ADD, op, 2..=3)
        .add_custom("Sine", op);
    let err = MutableOpResolver::for_model(&seed_sin_model(), &full).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    let lines: Vec<&str> = err.message().lines().collect();
    assert_eq!(
        lines,
        [
            "Didn't find op for builtin opcode 'ADD' version '1' (node 0). An older version of \
             this builtin might be supported: the resolver has ADD for versions 2 to 3.",
            "Didn't find custom operator for name 'Sin' (version 1, node 1). The custom operators \
             registered are 'Sine' (all versions); did you mean 'Sine'?",
        ]
    );
}

#[test]
fn a_registration_keeps_its_versions_and_is_copied_once() {
    let mut b = ModelBuilder::new();
    let x = b.f32("x", &[2]);
    let [y, z] = ["y", "z"].map(|n| b.f32(n, &[2]));
    b.builtin(BuiltinOperator::ADD, 1, &[x, x], &[y]);
    b.builtin(BuiltinOperator::ADD, 2, &[y, y], &[z]);
    b.input(x).output(z);
    let model = b.build();
    let op = FnOp::new(nothing, nothing_invoke);
    let mut full = MutableOpResolver::new();
    full.add_builtin_versions(BuiltinOperator::ADD, op, 1..=4)
        .add_builtin_versions(BuiltinOperator::ADD, op, 9);
    let selected = MutableOpResolver::for_model(&model, &full).unwrap();
    assert_eq!(
        selected.builtin_ops(),
        [(BuiltinOperator::ADD, (1..=4).into())],
        "versions 1 and 2 are one registration; version 9 is not used"
    );
}

#[test]
fn ops_used_counts_the_nodes_of_each_operator_code() {
    let model = common::add_chain(7, 2);
    let used = ops_used(&[&model, &seed_sin_model()]).unwrap();
    let add = OperatorCode {
        builtin: BuiltinOperator::ADD,
        custom_name: None,
        version: 1,
    };
    let sin = OperatorCode {
        builtin: BuiltinOperator::CUSTOM,
        custom_name: Some("Sin".into()),
        version: 1,
    };
    assert_eq!(
        used,
        [
            OpUse {
                code: add,
                nodes: 8,
                first_node: 0
            },
            OpUse {
                code: sin,
                nodes: 1,
                first_node: 1
            },
        ]
    );
    let mut broken = seed_sin_model();
    broken.subgraphs[0].operators[1].opcode_index = 9;
    let err = ops_used(&[&broken]).unwrap_err();
    assert_eq!(
        err.message(),
        "node 1 uses operator code 9, but the model has 2 operator codes"
    );
}

/// The ops a random model draws from: four builtins at two versions, two
/// custom ops.
const CODES: [(i32, Option<&str>); 6] = [
    (0, None),  // ADD
    (18, None), // MUL
    (3, None),  // CONV_2D
    (25, None), // SOFTMAX
    (32, Some("Sin")),
    (32, Some("Cos")),
];

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Whatever ops a model uses and whatever the full resolver lacks: the
    /// selected resolver holds exactly the model's ops, or the error names
    /// each missing (op, version) once.
    #[test]
    fn the_selection_is_exactly_the_model_s_ops_or_every_missing_one(
        nodes in proptest::collection::vec((0..CODES.len(), 1..3i32), 1..10),
        lacking in proptest::collection::btree_set(0..CODES.len(), 0..3),
    ) {
        let mut b = ModelBuilder::new();
        let x = b.f32("x", &[1]);
        b.input(x);
        let mut previous = x;
        for (k, &(code, version)) in nodes.iter().enumerate() {
            let t = b.f32(&format!("t{k}"), &[1]);
            match CODES[code] {
                (_, Some(name)) => b.custom(name, &[previous], &[t]),
                (op, None) => b.builtin(BuiltinOperator(op), version, &[previous], &[t]),
            };
            previous = t;
        }
        b.output(previous);
        let model = b.build();

        let op = FnOp::new(nothing, nothing_invoke);
        let mut full = MutableOpResolver::new();
        for (k, &(code, name)) in CODES.iter().enumerate() {
            if lacking.contains(&k) {
                continue;
            }
            match name {
                Some(name) => full.add_custom(name, op),
                None => full.add_builtin(BuiltinOperator(code), op),
            };
        }
        let missing: BTreeSet<(usize, i32)> = nodes
            .iter()
            .filter(|(code, _)| lacking.contains(code))
            // Custom ops are version 1 whatever was drawn.
            .map(|&(code, v)| (code, if CODES[code].1.is_some() { 1 } else { v }))
            .collect();
        match MutableOpResolver::for_model(&model, &full) {
            Ok(selected) => {
                proptest::prop_assert!(missing.is_empty());
                let builtins: BTreeSet<i32> =
                    selected.builtin_ops().iter().map(|(op, _)| op.0).collect();
                let customs: BTreeSet<String> =
                    selected.custom_ops().into_iter().map(|(n, _)| n).collect();
                let used_builtins: BTreeSet<i32> = nodes
                    .iter()
                    .filter(|(c, _)| CODES[*c].1.is_none())
                    .map(|(c, _)| CODES[*c].0)
                    .collect();
                let used_customs: BTreeSet<String> =
                    nodes.iter().filter_map(|(c, _)| CODES[*c].1.map(String::from)).collect();
                proptest::prop_assert_eq!(builtins, used_builtins);
                proptest::prop_assert_eq!(customs, used_customs);
                proptest::prop_assert!(Interpreter::new(&model, &selected).is_ok());
            }
            Err(err) => {
                proptest::prop_assert_eq!(err.code(), Code::NotFound);
                proptest::prop_assert_eq!(err.message().lines().count(), missing.len());
            }
        }
    }
}
