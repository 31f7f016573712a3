//! What a library of op-kernels' ops exports, decided without TensorFlow.

use op_core::{DeviceType, Registry};
use op_tf::shape::ShapeSupport;
use op_tf::{ExportPlan, GpuSkipped, Skipped};

fn plan() -> ExportPlan<'static> {
    op_kernels::link();
    ExportPlan::new(Registry::global())
}

#[test]
fn tensorflows_own_ops_stay_out_and_ours_go_in() {
    let plan = plan();
    let exported: Vec<&str> = plan.exported().map(|op| op.def().name.as_str()).collect();
    assert!(exported.contains(&"ZeroOut"), "{exported:?}");
    assert!(
        exported.contains(&"Examples>MultiplexDense"),
        "{exported:?}"
    );
    for name in ["AddV2", "Placeholder", "MatMul", "StringToNumber"] {
        let skipped = plan.skipped().find(|(op, _)| op.def().name == name);
        assert_eq!(
            skipped.map(|(_, why)| why),
            Some(&Skipped::TensorFlowHasIt),
            "{name}"
        );
    }
    assert!(exported.windows(2).all(|w| w[0] < w[1]), "sorted by name");
}

#[test]
fn an_op_with_a_python_keyword_arg_is_held_back_naming_it() {
    let plan = plan();
    assert!(
        !plan
            .skipped()
            .any(|(op, _)| op.def().name == "PolymorphicListExample")
    );
    let (_, why) = plan
        .held_back()
        .find(|(op, _)| op.def().name == "PolymorphicListExample")
        .expect("held back");
    assert_eq!(
        why,
        &Skipped::PythonKeyword {
            kind: "input",
            name: "in".into()
        }
    );
    assert!(
        why.to_string().contains("input 'in' is a Python keyword"),
        "{why}"
    );
    assert!(why.to_string().contains("argument 'in_'"), "{why}");
    // Its kernels are registered with it, after the load.
    assert!(
        plan.held_back_kernels()
            .any(|k| k.op == "PolymorphicListExample")
    );
    assert!(!plan.kernels().any(|k| k.op == "PolymorphicListExample"));
}

#[test]
fn every_cpu_kernel_of_an_exported_op_goes_in() {
    let plan = plan();
    let kernels: Vec<(&str, &str)> = plan
        .kernels()
        .filter(|k| k.device == DeviceType::Cpu)
        .map(|k| (k.op, k.name))
        .collect();
    assert!(
        kernels.contains(&("ZeroOut", "zero_out_int32")),
        "{kernels:?}"
    );
    assert_eq!(
        kernels
            .iter()
            .filter(|(op, _)| *op == "ZeroOutPolymorphic")
            .count(),
        3
    );
    assert!(kernels.iter().all(|(op, _)| *op != "AddV2"));
}

#[test]
fn shapes_are_ours_only_where_tensorflow_gives_every_attr_the_function_may_read() {
    let registry = Registry::global();
    op_kernels::link();
    let support = |name: &str| ShapeSupport::of(registry.get(name).expect(name));
    assert_eq!(support("ZeroOut"), ShapeSupport::Ours);
    assert_eq!(support("Example"), ShapeSupport::Ours);
    assert!(
        matches!(support("ZeroOutPreserveIndex"), ShapeSupport::Unknown(why) if why.contains("attr other than a type"))
    );
}

#[test]
fn resource_ops_go_in_exactly_when_the_build_has_the_shim() {
    let plan = plan();
    let exported = plan
        .exported()
        .any(|op| op.def().name == "Examples>SimpleHashTableCreate");
    let skipped = plan
        .skipped()
        .find(|(op, _)| op.def().name == "Examples>SimpleHashTableFind");
    assert_eq!(plan.needs_resources(), op_tf::shim::shim_built());
    if op_tf::shim::shim_built() {
        assert!(exported && skipped.is_none());
    } else {
        // The usual case for `cargo test`: OPKIT_TF_PYTHON unset.
        assert!(!exported);
        let (_, why) = skipped.expect("left out");
        assert_eq!(why, &Skipped::NeedsResourceShim);
        assert!(
            why.to_string()
                .contains("no shim (skipped: OPKIT_TF_PYTHON is not set"),
            "{why}"
        );
    }
}

#[test]
fn a_library_of_named_crates_exports_their_ops_only() {
    op_kernels::link();
    let others = ExportPlan::for_crates(Registry::global(), op_tf::Crates::Only(&["my_ops"]));
    assert_eq!(others.exported().count(), 0);
    assert_eq!(others.held_back().count(), 0);
    let (_, why) = others
        .skipped()
        .find(|(op, _)| op.def().name == "ZeroOut")
        .expect("left out");
    assert_eq!(
        why,
        &Skipped::OtherCrate {
            name: "op_kernels".into()
        }
    );
    assert_eq!(
        why.to_string(),
        "it is an op of crate op_kernels, which this library does not export"
    );
    let own = ExportPlan::for_crates(Registry::global(), op_tf::Crates::Only(&["op_kernels"]));
    assert_eq!(
        own.exported().count(),
        plan().exported().count(),
        "op_kernels' ops are all the registry's here"
    );
}

#[test]
fn gpu_kernels_go_in_exactly_when_the_build_can_run_them_and_else_say_why() {
    let plan = plan();
    let registered: Vec<(&str, &str)> = plan
        .kernels()
        .filter(|k| k.device == DeviceType::Gpu)
        .map(|k| (k.op, k.name))
        .collect();
    let skipped: Vec<_> = plan.skipped_kernels().collect();
    // Every GPU kernel of an exported op is in exactly one of the two.
    let of_exported: Vec<(&str, &str)> = plan
        .exported()
        .flat_map(|op| op.kernels().iter())
        .filter(|k| k.device == DeviceType::Gpu)
        .map(|k| (k.op, k.name))
        .collect();
    assert!(
        of_exported.iter().any(|(op, _)| *op == "ZeroOut"),
        "{of_exported:?}"
    );
    for kernel in &of_exported {
        let is_skipped = skipped.iter().any(|(k, _)| (k.op, k.name) == *kernel);
        assert_ne!(registered.contains(kernel), is_skipped, "{kernel:?}");
    }
    assert!(skipped.iter().all(|(k, _)| k.device == DeviceType::Gpu));
    let expected = if !cfg!(feature = "gpu") {
        Some(GpuSkipped::NoGpuFeature)
    } else if !op_tf::shim::shim_built() {
        Some(GpuSkipped::NoShim)
    } else {
        None
    };
    let zero_out = skipped.iter().find(|(k, _)| k.op == "ZeroOut");
    assert_eq!(zero_out.map(|(_, why)| *why), expected);
    if let Some((_, why)) = zero_out {
        assert!(
            why.to_string().contains("GPU") || why.to_string().contains("gpu"),
            "{why}"
        );
    }
}
