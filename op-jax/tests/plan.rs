//! What op-kernels exports to JAX, and why each other op is left out.

use op_core::Registry;
use op_host::Crates;
use op_jax::{JaxPlan, Skipped};

fn plan() -> JaxPlan {
    op_kernels::link();
    JaxPlan::new(Registry::global(), Crates::All)
}

#[test]
fn single_tensor_ops_with_json_attrs_are_exported() {
    let plan = plan();
    let names: Vec<&str> = plan.exported().map(|op| op.def().name.as_str()).collect();
    // Cast's DstT is set by no input: a keyword argument in JAX.
    for name in [
        "ZeroOut",
        "ZeroOutPreserveIndex",
        "MatMul",
        "Cast",
        "Cumsum",
    ] {
        assert!(names.contains(&name), "{name} is not exported");
    }
}

#[test]
fn every_op_left_out_says_why() {
    let plan = plan();
    let why = |name: &str| {
        plan.skipped()
            .find(|(op, _)| op.def().name == name)
            .map(|(_, why)| why.clone())
            .unwrap_or_else(|| panic!("{name} is exported"))
    };
    assert!(matches!(why("AddN"), Skipped::ListArg { .. }));
    assert!(matches!(why("ReadVariableOp"), Skipped::ArgDtype { .. }));
    assert!(why("ReadVariableOp").describe("JAX").contains("stateful"));
    assert!(matches!(why("Const"), Skipped::AttrKind { .. }));
}

#[test]
fn the_manifest_names_the_ffi_version_and_each_ops_vmap_method() {
    let manifest: serde_json::Value = serde_json::from_str(&op_jax::manifest(&plan())).unwrap();
    assert_eq!(manifest["ffi_api_version"], serde_json::json!([0, 1]));
    let ops = manifest["ops"].as_array().unwrap();
    assert!(ops.iter().all(|op| op["vmap"] == "sequential"));
    assert!(ops.iter().any(|op| op["name"] == "ZeroOut"));
}

#[test]
fn a_request_whose_output_shape_needs_input_values_is_an_error_when_shapes_must_be_fixed() {
    op_kernels::link();
    let request = r#"{"op": "Fill", "inputs": [{"dtype": 3, "shape": [2]}, {"dtype": 1, "shape": []}], "attrs": {}, "fixed_shapes": true}"#;
    let answer = op_host::request::infer_json(request);
    assert!(answer.contains("depends on input values"), "{answer}");
    assert!(answer.contains("Fill"), "{answer}");
    // Without `fixed_shapes`, the unknown dims are null.
    let answer = op_host::request::infer_json(&request.replace(r#", "fixed_shapes": true"#, ""));
    assert_eq!(answer, r#"{"outputs":[{"dtype":1,"shape":[null,null]}]}"#);
}
