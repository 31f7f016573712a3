//! What op-kernels exports to ONNX Runtime: a custom op per CPU kernel's
//! dtype combination, only dtypes that cross, and a reason for every op
//! left out.

use op_core::{DType, DeviceType, Registry};
use op_host::Crates;
use op_onnx::{OnnxPlan, Skipped};

fn plan() -> OnnxPlan {
    op_kernels::link();
    OnnxPlan::new(Registry::global(), Crates::All)
}

#[test]
fn every_custom_op_has_a_cpu_kernel_for_its_dtypes_and_only_dtypes_that_cross() {
    let plan = plan();
    let mut count = 0;
    for spec in plan.ops() {
        count += 1;
        for dtype in spec.inputs.iter().chain(&spec.outputs) {
            assert!(
                op_onnx::dtype::to_onnx(*dtype).is_some(),
                "{} has {dtype}",
                spec.entry.def().name
            );
        }
        let taken = spec.entry.kernels().iter().any(|k| {
            k.device == DeviceType::Cpu
                && k.constraints
                    .iter()
                    .all(|c| spec.types.contains(&(c.attr, c.dtype)))
        });
        assert!(
            taken,
            "no CPU kernel of {} takes {:?}",
            spec.entry.def().name,
            spec.types
        );
    }
    assert!(count > 100, "{count} custom ops");
}

#[test]
fn zero_out_polymorphic_is_one_custom_op_per_allowed_dtype() {
    let plan = plan();
    let types: Vec<Vec<(&str, DType)>> = plan
        .ops()
        .filter(|s| s.entry.def().name == "ZeroOutPolymorphic")
        .map(|s| s.types.clone())
        .collect();
    assert_eq!(
        types,
        [
            vec![("T", DType::F32)],
            vec![("T", DType::F64)],
            vec![("T", DType::I32)]
        ]
    );
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
    assert!(matches!(
        why("StringToNumber"),
        Skipped::ArgDtype {
            dtype: DType::String,
            ..
        }
    ));
    assert!(matches!(
        why("ReadVariableOp"),
        Skipped::ArgDtype {
            dtype: DType::Resource,
            ..
        }
    ));
    assert!(matches!(why("Cast"), Skipped::TypeAttrWithoutInput { .. }));
    assert!(matches!(why("Const"), Skipped::AttrKind { .. }));
    for (op, why) in plan.skipped() {
        assert!(
            !why.describe("ONNX Runtime").is_empty(),
            "{}",
            op.def().name
        );
    }
}

#[test]
fn the_manifest_lists_the_domain_ops_and_skips() {
    let plan = plan();
    let manifest: serde_json::Value =
        serde_json::from_str(&op_onnx::manifest(&plan, "my_domain")).unwrap();
    assert_eq!(manifest["domain"], "my_domain");
    assert_eq!(manifest["api_version"], 17);
    let zero_out = manifest["ops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|op| op["name"] == "ZeroOut")
        .unwrap();
    // int32 in, int32 out: ONNX's TensorProto.INT32 is 6.
    assert_eq!(
        zero_out["onnx_types"],
        serde_json::json!([{"types": {}, "inputs": [6], "outputs": [6]}])
    );
    assert!(
        manifest["skipped"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"] == "AddN")
    );
}
