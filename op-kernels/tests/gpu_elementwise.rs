//! The GPU kernels of `Example`, the ZeroOut ops and the elementwise math
//! ops.
//!
//! Here (no GPU needed): each is registered for the GPU with the dtypes it
//! promises, and a GPU runtime without a CUDA driver refuses them with a
//! typed `Unavailable` error naming the driver. On a GPU: each kernel
//! against the CPU kernel, on random shapes with broadcasting, empty
//! tensors and lengths that are not multiples of 4, with the inputs handed
//! over (the kernel writes in their buffer) and kept (a new output). Those
//! show as `ignored (needs a GPU; ...)` without a GPU.

use std::collections::BTreeMap;

use op_core::{
    AttrValue, Code, DType, Device, DeviceType, Element, OpCall, Registry, Runtime, Tensor,
};
use proptest::prelude::*;

mod math_common;
use math_common::{broadcastable, tensor};

// ---- What runs without a GPU ----

/// The GPU kernels and the dtypes each is registered for (for `Cast`,
/// `SrcT`).
const GPU_KERNELS: &[(&str, &[DType])] = &[
    ("Example", &[DType::F32, DType::F64, DType::I32, DType::I64]),
    ("ZeroOut", &[DType::I32]),
    ("ZeroOutPolymorphic", &[DType::F32, DType::F64, DType::I32]),
    ("ZeroOutPreserveIndex", &[DType::I32]),
    ("ZeroOutVector", &[DType::I32]),
    ("Neg", &[DType::F32, DType::F64, DType::I32, DType::I64]),
    ("Square", &[DType::F32, DType::F64, DType::I32, DType::I64]),
    ("Sqrt", &[DType::F32, DType::F64]),
    ("Exp", &[DType::F32, DType::F64]),
    ("Log", &[DType::F32, DType::F64]),
    ("Sin", &[DType::F32, DType::F64]),
    ("Cos", &[DType::F32, DType::F64]),
    ("Tanh", &[DType::F32, DType::F64]),
    ("Sigmoid", &[DType::F32, DType::F64]),
    ("Relu", &[DType::F32, DType::F64, DType::I32, DType::I64]),
    ("AddV2", &[DType::F32, DType::F64, DType::I32, DType::I64]),
    ("Sub", &[DType::F32, DType::F64, DType::I32, DType::I64]),
    ("Mul", &[DType::F32, DType::F64, DType::I32, DType::I64]),
    ("RealDiv", &[DType::F32, DType::F64]),
    ("TanhGrad", &[DType::F32, DType::F64]),
    ("SigmoidGrad", &[DType::F32, DType::F64]),
];

const CAST_TYPES: [DType; 4] = [DType::F32, DType::F64, DType::I32, DType::I64];

fn gpu_kernel_types(op: &str) -> Vec<Vec<(String, DType)>> {
    let registry = Registry::global();
    let mut types: Vec<Vec<(String, DType)>> = registry
        .op(op)
        .unwrap_or_else(|e| panic!("{op} is registered: {e}"))
        .kernels()
        .iter()
        .filter(|k| k.device == DeviceType::Gpu)
        .map(|k| {
            k.constraints
                .iter()
                .map(|c| (c.attr.to_string(), c.dtype))
                .collect()
        })
        .collect();
    types.sort_by_key(|c| c.iter().map(|(_, d)| d.enum_value()).collect::<Vec<_>>());
    types
}

fn gpu_kernels_are_registered_for_their_dtypes() {
    op_kernels::link();
    for (op, dtypes) in GPU_KERNELS {
        let found = gpu_kernel_types(op);
        let expected: Vec<Vec<(String, DType)>> =
            if matches!(*op, "ZeroOut" | "ZeroOutPreserveIndex" | "ZeroOutVector") {
                // int32 only, by the op's signature: no constraint.
                vec![vec![]]
            } else {
                let mut v: Vec<_> = dtypes.iter().map(|&d| vec![("T".to_owned(), d)]).collect();
                v.sort_by_key(|c| c[0].1.enum_value());
                v
            };
        assert_eq!(found, expected, "{op}");
    }
    let cast = gpu_kernel_types("Cast");
    let pairs: BTreeMap<(i32, i32), ()> = cast
        .iter()
        .map(|c| {
            let get = |name: &str| c.iter().find(|(a, _)| a == name).unwrap().1.enum_value();
            ((get("SrcT"), get("DstT")), ())
        })
        .collect();
    assert_eq!(pairs.len(), 16, "{cast:?}");
    for s in CAST_TYPES {
        for d in CAST_TYPES {
            assert!(
                pairs.contains_key(&(s.enum_value(), d.enum_value())),
                "Cast {s} -> {d}"
            );
        }
    }
}

fn without_a_driver_a_gpu_runtime_refuses_these_ops_as_unavailable() {
    op_kernels::link();
    let err = Runtime::gpu(0).unwrap_err();
    assert_eq!(err.code(), Code::Unavailable, "{err}");
    assert!(err.message().contains("CUDA driver"), "{err}");

    let runtime = Runtime::new().on_device(Device::gpu(0));
    let x = Tensor::from_vec([3], vec![1.0f32, 2.0, 3.0]).unwrap();
    let i = Tensor::from_vec([3], vec![1i32, 2, 3]).unwrap();
    let calls: Vec<OpCall<'_>> = vec![
        OpCall::new("AddV2").input(&x).input(&x),
        OpCall::new("Example").input(&x),
        OpCall::new("Sin").input(&x),
        OpCall::new("ZeroOut").input(&i),
        OpCall::new("Cast")
            .input(&x)
            .attr("DstT", AttrValue::from(DType::I32)),
    ];
    for call in calls {
        let err = call.run_on(&runtime).unwrap_err();
        assert_eq!(err.code(), Code::Unavailable, "{err}");
        assert!(err.message().contains("CUDA driver"), "{err}");
    }
}

// ---- What needs a GPU: each kernel against the CPU's ----

/// `op` on `inputs` on the CPU, and on the GPU twice: with host inputs
/// (uploaded, so handed over: the kernel may write in their buffers) and
/// with device inputs the test keeps (shared: a new output). Returns the
/// CPU's result and the GPU's two, on the host.
fn cpu_and_gpu(
    gpu: &Runtime,
    op: &str,
    inputs: &[Tensor],
    attrs: &[(&str, AttrValue)],
) -> (op_core::Result<Tensor>, [op_core::Result<Tensor>; 2]) {
    let run = |runtime: &Runtime, inputs: &[Tensor]| {
        let mut call = OpCall::new(op);
        for input in inputs {
            call = call.input(input);
        }
        for (name, value) in attrs {
            call = call.attr(name, value.clone());
        }
        call.run_on(runtime)
            .and_then(|mut out| out.remove(0).to_host())
    };
    let cpu = run(&Runtime::new(), inputs);
    let handed_over = {
        let mut call = OpCall::new(op);
        for input in inputs {
            call = call.input(input.to_host().unwrap());
        }
        for (name, value) in attrs {
            call = call.attr(name, value.clone());
        }
        call.run_on(gpu).and_then(|mut out| out.remove(0).to_host())
    };
    let on_device: Vec<Tensor> = inputs
        .iter()
        .map(|t| t.to_device(Device::gpu(0)).unwrap())
        .collect();
    let kept = run(gpu, &on_device);
    // The kept inputs are unchanged.
    for (host, device) in inputs.iter().zip(&on_device) {
        assert!(
            close(host, &device.to_host().unwrap(), 0.0),
            "{op} wrote in a shared input"
        );
    }
    (cpu, [handed_over, kept])
}

/// Whether `a` and `b` have one dtype, shape and values, to within a
/// relative `tolerance` for floats (NaN equals NaN).
fn close(a: &Tensor, b: &Tensor, tolerance: f64) -> bool {
    fn near<T: Element + Copy + Into<f64>>(a: &Tensor, b: &Tensor, tol: f64) -> bool {
        let (x, y) = (a.as_slice::<T>().unwrap(), b.as_slice::<T>().unwrap());
        x.iter().zip(y).all(|(&x, &y)| {
            let (x, y): (f64, f64) = (x.into(), y.into());
            (x.is_nan() && y.is_nan())
                || x == y
                || (x - y).abs() <= tol * x.abs().max(y.abs()).max(1e-30)
        })
    }
    if a.dtype() != b.dtype() || a.dims() != b.dims() {
        return false;
    }
    match a.dtype() {
        DType::F32 => near::<f32>(a, b, tolerance),
        DType::F64 => near::<f64>(a, b, tolerance),
        DType::I32 => near::<i32>(a, b, 0.0),
        DType::I64 => a.as_slice::<i64>().unwrap() == b.as_slice::<i64>().unwrap(),
        other => panic!("no comparison for {other}"),
    }
}

fn check(gpu: &Runtime, op: &str, inputs: &[Tensor], attrs: &[(&str, AttrValue)], tolerance: f64) {
    let (cpu, gpus) = cpu_and_gpu(gpu, op, inputs, attrs);
    for (way, result) in ["handed over", "kept"].iter().zip(gpus) {
        match (&cpu, &result) {
            (Ok(c), Ok(g)) => assert!(
                close(c, g, tolerance),
                "{op} on {inputs:?} ({way}): CPU {c:?}, GPU {g:?}"
            ),
            (Err(c), Err(g)) => assert_eq!(c.code(), g.code(), "{op}: CPU {c}, GPU {g}"),
            _ => panic!("{op} on {inputs:?} ({way}): CPU {cpu:?}, GPU {result:?}"),
        }
    }
}

/// A strict GPU runtime, for a test declared `Gpu`.
fn gpu_runtime() -> Runtime {
    op_kernels::link();
    op_cuda::testing::gpu();
    Runtime::gpu(0).unwrap().strict_placement(true)
}

/// Values in -8..8 with a fraction, varied, `n` of them.
fn floats(n: usize, seed: u64) -> Vec<f64> {
    (0..n as u64)
        .map(|i| ((i.wrapping_mul(2654435761).wrapping_add(seed) % 1601) as f64 - 800.0) / 100.0)
        .collect()
}

/// Lengths around the packs' sizes, and one large.
const LENGTHS: [usize; 9] = [0, 1, 3, 4, 5, 7, 8, 1023, 1_000_003];

const FLOAT_UNARY: [&str; 10] = [
    "Neg", "Square", "Sqrt", "Exp", "Log", "Sin", "Cos", "Tanh", "Sigmoid", "Relu",
];

fn unary_ops_and_example_match_the_cpu() {
    let gpu = gpu_runtime();
    for n in LENGTHS {
        let values = floats(n, 7);
        let positive: Vec<f64> = values.iter().map(|v| v.abs() + 0.01).collect();
        for op in FLOAT_UNARY.iter().chain(&["Example"]) {
            let v = if matches!(*op, "Sqrt" | "Log") {
                &positive
            } else {
                &values
            };
            let x64 = Tensor::from_vec([n], v.clone()).unwrap();
            let x32 = Tensor::from_vec([n], v.iter().map(|&x| x as f32).collect()).unwrap();
            check(&gpu, op, &[x32], &[], 1e-5);
            check(&gpu, op, &[x64], &[], 1e-12);
        }
        for op in ["Neg", "Square", "Relu", "Example"] {
            let i32s: Vec<i32> = values.iter().map(|&v| (v * 1e7) as i32).collect();
            let i64s: Vec<i64> = values.iter().map(|&v| (v * 1e17) as i64).collect();
            check(&gpu, op, &[Tensor::from_vec([n], i32s).unwrap()], &[], 0.0);
            check(&gpu, op, &[Tensor::from_vec([n], i64s).unwrap()], &[], 0.0);
        }
    }
}

fn zero_out_matches_the_cpu() {
    let gpu = gpu_runtime();
    for n in LENGTHS {
        let values: Vec<i32> = (0..n as i32).map(|i| i * 3 - 7).collect();
        let x = Tensor::from_vec([n], values.clone()).unwrap();
        check(&gpu, "ZeroOut", std::slice::from_ref(&x), &[], 0.0);
        check(&gpu, "ZeroOutVector", std::slice::from_ref(&x), &[], 0.0);
        for index in [0, n / 2, n.saturating_sub(1), n] {
            let attrs = [("preserve_index", AttrValue::from(index as i64))];
            check(
                &gpu,
                "ZeroOutPreserveIndex",
                std::slice::from_ref(&x),
                &attrs,
                0.0,
            );
        }
        let f: Vec<f32> = values.iter().map(|&v| v as f32 * 0.5).collect();
        let d: Vec<f64> = values.iter().map(|&v| v as f64 * 0.25).collect();
        for t in [
            Tensor::from_vec([n], f).unwrap(),
            Tensor::from_vec([n], d).unwrap(),
            x.clone(),
        ] {
            check(&gpu, "ZeroOutPolymorphic", &[t], &[], 0.0);
        }
    }
    // The vector forms refuse a matrix, on the GPU as on the CPU.
    let m = Tensor::from_vec([2, 2], vec![1i32, 2, 3, 4]).unwrap();
    check(&gpu, "ZeroOutVector", &[m], &[], 0.0);
}

fn cast_matches_the_cpu() {
    let gpu = gpu_runtime();
    let mut values = floats(1001, 3);
    values.extend([
        1e10,
        -1e10,
        f64::NAN,
        f64::INFINITY,
        2.7,
        -2.7,
        1.9999999999,
    ]);
    let n = values.len();
    let sources = [
        Tensor::from_vec([n], values.iter().map(|&v| v as f32).collect()).unwrap(),
        Tensor::from_vec([n], values.clone()).unwrap(),
        Tensor::from_vec([n], values.iter().map(|&v| (v * 1e6) as i32).collect()).unwrap(),
        Tensor::from_vec([n], values.iter().map(|&v| (v * 1e15) as i64).collect()).unwrap(),
    ];
    for x in &sources {
        for dst in CAST_TYPES {
            for truncate in [false, true] {
                let attrs = [
                    ("DstT", AttrValue::from(dst)),
                    ("Truncate", AttrValue::from(truncate)),
                ];
                check(&gpu, "Cast", std::slice::from_ref(x), &attrs, 0.0);
            }
        }
    }
}

fn binary_ops_broadcast_on_a_large_tensor() {
    let gpu = gpu_runtime();
    let a = Tensor::from_vec([1001, 7], floats(7007, 1)).unwrap();
    for b_dims in [&[7][..], &[1001, 1], &[], &[1001, 7], &[1, 1, 7]] {
        let count: usize = b_dims.iter().product();
        let b = Tensor::from_vec(b_dims, floats(count, 2)).unwrap();
        for op in ["AddV2", "Sub", "Mul", "RealDiv"] {
            check(&gpu, op, &[a.clone(), b.clone()], &[], 1e-12);
            check(&gpu, op, &[b.clone(), a.clone()], &[], 1e-12);
        }
    }
    // Past the GPU's rank: an error, not a wrong answer.
    let a = Tensor::from_vec([2, 1, 2, 1, 2, 1, 2, 1], vec![1.0f32; 16]).unwrap();
    let b = Tensor::from_vec([1, 2, 1, 2, 1, 2, 1, 2], vec![1.0f32; 16]).unwrap();
    let err = OpCall::new("AddV2")
        .input(&a)
        .input(&b)
        .run_on(&gpu)
        .unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented, "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    fn binary_ops_match_the_cpu(shapes in broadcastable(2), seed in 0u64..1000) {
        let gpu = gpu_runtime();
        let (x, y) = (floats(64, seed), floats(64, seed + 1));
        let f32s = |v: &[f64]| v.iter().map(|&x| x as f32).collect::<Vec<_>>();
        let i32s = |v: &[f64]| v.iter().map(|&x| (x * 1e8) as i32).collect::<Vec<_>>();
        let i64s = |v: &[f64]| v.iter().map(|&x| (x * 1e17) as i64).collect::<Vec<_>>();
        for op in ["AddV2", "Sub", "Mul", "RealDiv"] {
            let inputs = [tensor(&shapes[0], &f32s(&x)), tensor(&shapes[1], &f32s(&y))];
            check(&gpu, op, &inputs, &[], 1e-6);
            let inputs = [tensor(&shapes[0], &x), tensor(&shapes[1], &y)];
            check(&gpu, op, &inputs, &[], 1e-12);
            if op != "RealDiv" {
                let inputs = [tensor(&shapes[0], &i32s(&x)), tensor(&shapes[1], &i32s(&y))];
                check(&gpu, op, &inputs, &[], 0.0);
                let inputs = [tensor(&shapes[0], &i64s(&x)), tensor(&shapes[1], &i64s(&y))];
                check(&gpu, op, &inputs, &[], 0.0);
            }
        }
        for op in ["TanhGrad", "SigmoidGrad"] {
            let inputs = [tensor(&shapes[0], &x), tensor(&shapes[0], &y)];
            check(&gpu, op, &inputs, &[], 1e-12);
        }
    }
}

op_cuda::test_main! {
    gpu_kernels_are_registered_for_their_dtypes,
    without_a_driver_a_gpu_runtime_refuses_these_ops_as_unavailable: NoDriver,
    unary_ops_and_example_match_the_cpu: Gpu,
    zero_out_matches_the_cpu: Gpu,
    cast_matches_the_cpu: Gpu,
    binary_ops_broadcast_on_a_large_tensor: Gpu,
    binary_ops_match_the_cpu: Gpu,
}
