//! The global registry with this crate linked: no conflicts, every op and
//! kernel listed with its device, constraints and source location.

use op_core::registry::Registry;
use op_core::{Code, DType};

/// Every op this crate registers, with its CPU kernel count (GPU kernels,
/// in each family's `gpu.rs`, are checked in `gpu_elementwise.rs`).
const OPS: &[(&str, usize)] = &[
    ("AddN", 14),
    ("AddV2", 14),
    ("AssignVariableOp", 21),
    ("BroadcastGradientArgs", 2),
    ("BroadcastTo", 21),
    ("Cast", 1),
    ("ConcatOffset", 2),
    ("ConcatV2", 21),
    ("Conj", 2),
    ("Const", 1),
    ("Cos", 6),
    ("Cumprod", 6),
    ("Cumsum", 6),
    ("DestroyResourceOp", 1),
    ("DivNoNan", 6),
    ("DynamicStitch", 21),
    ("Equal", 21),
    ("Example", 14),
    ("Examples>MultiplexDense", 21),
    ("Examples>SimpleHashTableCreate", 15),
    ("Examples>SimpleHashTableExport", 15),
    ("Examples>SimpleHashTableFind", 15),
    ("Examples>SimpleHashTableFindMany", 15),
    ("Examples>SimpleHashTableImport", 15),
    ("Examples>SimpleHashTableInsert", 15),
    ("Examples>SimpleHashTableInsertMany", 15),
    ("Examples>SimpleHashTableRemove", 15),
    ("Exp", 6),
    ("ExpandDims", 1),
    ("FIFOQueueV2", 1),
    ("Fill", 21),
    ("FloorDiv", 12),
    ("FloorMod", 12),
    ("Greater", 12),
    ("GreaterEqual", 12),
    ("Identity", 1),
    ("IdentityN", 1),
    ("IntListInputExample", 1),
    ("InvertPermutation", 2),
    ("Less", 12),
    ("LessEqual", 12),
    ("ListDiff", 26),
    ("ListTypeRestrictionExample", 1),
    ("Log", 6),
    ("LookupTableExportV2", 1),
    ("LookupTableFindV2", 1),
    ("LookupTableImportV2", 1),
    ("LookupTableInsertV2", 1),
    ("LookupTableRemoveV2", 1),
    ("LookupTableSizeV2", 1),
    ("MatMul", 8),
    ("Max", 6),
    ("Maximum", 12),
    ("Mean", 6),
    ("MinLengthIntListExample", 1),
    ("Minimum", 12),
    ("MinimumLengthPolymorphicListExample", 1),
    ("Mul", 14),
    ("MultipleInsAndOuts", 1),
    ("MutableHashTableV2", 15),
    ("Neg", 10),
    ("NoOp", 1),
    ("OnesLike", 15),
    ("Pack", 21),
    ("Pad", 21),
    ("Placeholder", 1),
    ("PlaceholderWithDefault", 1),
    ("PolymorphicListExample", 1),
    ("Pow", 10),
    ("Prod", 6),
    ("QueueCloseV2", 1),
    ("QueueDequeueV2", 1),
    ("QueueEnqueueV2", 1),
    ("QueueSizeV2", 1),
    ("Range", 4),
    ("Rank", 1),
    ("ReadVariableOp", 21),
    ("RealDiv", 6),
    ("Reciprocal", 6),
    ("ReciprocalGrad", 6),
    ("Relu", 12),
    ("ReluGrad", 12),
    ("Reshape", 1),
    ("ResourceApplyAdam", 4),
    ("ResourceApplyGradientDescent", 4),
    ("ResourceApplyMomentum", 4),
    ("Rsqrt", 6),
    ("RsqrtGrad", 6),
    ("SameListInputExample", 12),
    ("Select", 17),
    ("SelectV2", 17),
    ("Shape", 2),
    ("Sigmoid", 6),
    ("SigmoidGrad", 6),
    ("Sin", 6),
    ("Size", 2),
    ("Slice", 21),
    ("Sqrt", 6),
    ("SqrtGrad", 6),
    ("Square", 14),
    ("SquaredDifference", 8),
    ("Squeeze", 1),
    ("StopGradient", 1),
    ("StringToNumber", 6),
    ("Sub", 14),
    ("Sum", 6),
    ("Tanh", 6),
    ("TanhGrad", 6),
    ("Tile", 21),
    ("Transpose", 21),
    ("Unpack", 21),
    ("VarHandleOp", 21),
    ("VarIsInitializedOp", 1),
    ("ZeroOut", 1),
    ("ZeroOutPolymorphic", 3),
    ("ZeroOutPreserveIndex", 1),
    ("ZeroOutVector", 1),
    ("ZerosLike", 21),
];

#[test]
fn the_registry_has_no_conflicts() {
    op_kernels::link();
    let registry = Registry::global();
    registry.check().unwrap();
    assert!(registry.conflicts().is_empty());
}

#[test]
fn every_op_is_registered_with_its_kernels() {
    op_kernels::link();
    let registry = Registry::global();
    for (name, kernels) in OPS {
        let entry = registry.op(name).unwrap();
        assert_eq!(entry.def().name, *name);
        assert_eq!(entry.registration().name, *name);
        assert!(
            entry.registration().file.starts_with("op-kernels/src/"),
            "{}",
            entry.registration().file
        );
        assert!(entry.registration().line > 0);
        let cpu = entry
            .kernels()
            .iter()
            .filter(|k| k.device == op_core::DeviceType::Cpu)
            .count();
        assert_eq!(cpu, *kernels, "CPU kernels of {name}");
        for k in entry.kernels() {
            assert_eq!(k.op, *name);
            assert!(k.file.starts_with("op-kernels/src/"), "{}", k.file);
        }
        assert!(registry.get(name).is_some());
    }
    // Exactly these ops: nothing else in this test program registers any.
    let names: Vec<&str> = registry.ops().map(|e| e.def().name.as_str()).collect();
    let expected: Vec<&str> = OPS.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, expected, "ops() is sorted by name");
}

#[test]
fn every_op_is_declared_in_its_familys_ops_and_its_kernels_are_in_cpu_or_gpu() {
    op_kernels::link();
    let registry = Registry::global();
    for (name, _) in OPS {
        let entry = registry.op(name).unwrap();
        let ops = entry.registration().file;
        let family = ops
            .strip_prefix("op-kernels/src/")
            .and_then(|f| f.strip_suffix("/ops.rs"))
            .unwrap_or_else(|| panic!("{name} is declared in {ops}, not a family's ops.rs"));
        // `#[op]` makes the kernel with the op, in ops.rs.
        let kernels = if *name == "MultipleInsAndOuts" {
            ops.to_owned()
        } else {
            format!("op-kernels/src/{family}/cpu.rs")
        };
        for k in entry.kernels() {
            if k.device == op_core::DeviceType::Gpu {
                let gpu = format!("op-kernels/src/{family}/gpu.rs");
                assert_eq!(k.file, gpu, "GPU kernel {} of {name}", k.name);
                continue;
            }
            // The array family keeps each group's kernels in its own file.
            if family == "array" {
                assert!(k.file.starts_with("op-kernels/src/array/"), "{}", k.file);
                assert_ne!(k.file, ops, "kernel {} of {name}", k.name);
                continue;
            }
            if k.device == op_core::DeviceType::Gpu {
                let gpu = format!("op-kernels/src/{family}/gpu.rs");
                assert_eq!(k.file, gpu, "GPU kernel {} of {name}", k.name);
                continue;
            }
            assert_eq!(k.file, kernels, "kernel {} of {name}", k.name);
        }
    }
}

#[test]
fn the_listing_names_every_op_and_kernel() {
    op_kernels::link();
    let registry = Registry::global();
    let listing = registry.to_string();
    assert!(
        listing.starts_with(&format!("{} op(s):\n", OPS.len())),
        "{listing}"
    );
    for (name, _) in OPS {
        let entry = registry.get(name).unwrap();
        let r = entry.registration();
        assert!(
            listing.contains(&format!("\n  {name}  ({}:{})\n", r.file, r.line)),
            "{name} missing from:\n{listing}"
        );
        for k in entry.kernels() {
            let line = format!("    kernel {}: {}", k.name, k.describe());
            assert!(listing.contains(&line), "{line:?} missing from:\n{listing}");
        }
    }
    for line in [
        "    kernel zero_out_int32: device='cpu'\n",
        "    kernel zero_out_polymorphic::<f32>: device='cpu'; T=float\n",
        "    kernel zero_out_polymorphic::<f64>: device='cpu'; T=double\n",
        "    kernel zero_out_polymorphic::<i32>: device='cpu'; T=int32\n",
        "    kernel example::<i8>: device='cpu'; T=int8\n",
        "    kernel example::<Complex64>: device='cpu'; T=complex64\n",
        "    kernel string_to_number::<i32>: device='cpu'; out_type=int32\n",
    ] {
        assert!(listing.contains(line), "{line:?} missing from:\n{listing}");
    }
    assert!(!listing.contains("conflict"), "{listing}");
}

#[test]
fn kernels_carry_their_constraints() {
    let registry = Registry::global();
    let entry = registry.op("ZeroOutPolymorphic").unwrap();
    let mut constraints: Vec<(&str, DType)> = entry
        .kernels()
        .iter()
        .filter(|k| k.device == op_core::DeviceType::Cpu)
        .flat_map(|k| k.constraints.iter().map(|c| (c.attr, c.dtype)))
        .collect();
    constraints.sort_by_key(|(_, d)| d.enum_value());
    assert_eq!(
        constraints,
        [("T", DType::F32), ("T", DType::F64), ("T", DType::I32)]
    );
    for k in entry.kernels() {
        assert!(k.host_memory.is_empty());
    }
    let zero_out = registry.op("ZeroOut").unwrap();
    let mut described: Vec<String> = zero_out.kernels().iter().map(|k| k.describe()).collect();
    described.sort();
    assert!(zero_out.kernels().iter().all(|k| k.constraints.is_empty()));
    #[cfg(feature = "gpu")]
    assert_eq!(described, ["device='cpu'", "device='gpu'"]);
    #[cfg(not(feature = "gpu"))]
    assert_eq!(described, ["device='cpu'"]);
}

#[test]
fn unknown_ops_are_not_found_with_a_suggestion() {
    let registry = Registry::global();
    let err = registry.op("StringToNumbr").unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert!(
        err.message()
            .contains("op 'StringToNumbr' is not registered"),
        "{err}"
    );
    assert!(
        err.message().contains("did you mean 'StringToNumber'?"),
        "{err}"
    );
    assert!(
        err.message()
            .contains(&format!("{} ops are registered", OPS.len())),
        "{err}"
    );
    assert!(registry.get("StringToNumbr").is_none());

    let err = registry.op("Completely>Different").unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert!(!err.message().contains("did you mean"), "{err}");
    assert!(err.message().contains("use that_crate as _;"), "{err}");
}

/// ZeroOut has a GPU kernel: a GPU runtime picks it, so on a GPU it runs
/// there, and without a CUDA driver running it is an `Unavailable` error
/// naming the driver (not a missing kernel, and not a fall back to the
/// host).
#[cfg(feature = "gpu")]
#[test]
fn zero_out_has_a_gpu_kernel_that_needs_the_cuda_driver() {
    let zero_out = Registry::global().op("ZeroOut").unwrap();
    assert!(
        zero_out
            .kernels()
            .iter()
            .any(|k| k.device == op_core::DeviceType::Gpu),
        "ZeroOut has a GPU kernel"
    );
    let runtime = op_core::Runtime::with_registry(Registry::global().clone())
        .on_device(op_core::Device::gpu(0));
    let t = op_core::Tensor::from_vec([2], vec![1i32, 2]).unwrap();
    let result = op_core::OpCall::new("ZeroOut").input(&t).run_on(&runtime);
    // On a GPU it runs there; without one it says the driver is missing.
    match op_kernels::gpu::cuda::GpuDevice::get(0) {
        Ok(_) => {
            let out = result.unwrap().remove(0);
            assert_eq!(out.device(), op_core::Device::gpu(0));
            assert_eq!(out.to_host().unwrap().as_slice::<i32>().unwrap(), [1, 0]);
        }
        Err(_) => {
            let err = result.unwrap_err();
            assert_eq!(err.code(), Code::Unavailable, "{err}");
            assert!(err.to_string().contains("CUDA driver"), "{err}");
        }
    }
}

/// Without the `gpu` feature no GPU kernels are linked: a GPU runtime
/// finds none for ZeroOut and says which kernel exists.
#[cfg(not(feature = "gpu"))]
#[test]
fn an_op_without_a_gpu_kernel_is_not_found_on_a_strict_gpu_runtime() {
    let runtime = op_core::Runtime::with_registry(Registry::global().clone())
        .on_device(op_core::Device::gpu(0))
        .strict_placement(true);
    let s = op_core::Tensor::from_vec([1], vec![b"1".to_vec()]).unwrap();
    let err = op_core::OpCall::new("StringToNumber")
        .input(&s)
        .run_on(&runtime)
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    let text = err.to_string();
    assert!(
        text.contains("no kernel for op 'StringToNumber' on device 'gpu'"),
        "{text}"
    );
    assert!(text.contains("it runs on 'cpu', not 'gpu'"), "{text}");
    assert!(text.contains("placement is strict"), "{text}");
}
