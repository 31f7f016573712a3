//! The GPU kernels of `Sum`, `Mean`, `MatMul`, the variable ops and the
//! training ops.
//!
//! Everywhere: each is registered for the GPU with the dtypes and the
//! host-memory args it should have, and running one on a GPU runtime
//! without a CUDA driver is an `Unavailable` error naming the driver.
//!
//! On a GPU (each test shows as `ignored` without one): each kernel
//! against its CPU kernel on random shapes (reductions over random axes
//! with and without `keep_dims`, products with every transpose, a full
//! reduction large enough to split), the training ops' updates against
//! the CPU's, variables read without copies, a host value moved to the
//! GPU on its first update, and copy-on-write for readers.

use op_core::{Code, DType, Device, OpCall, Registry, Runtime, Tensor};
use op_kernels::variable::{Var, Variable};
use proptest::prelude::*;

mod common;
use common::assert_contains;

// ---- Registrations (run everywhere) ----

/// The GPU kernels of `op`: for each, its dtype for `attr` (or `None`)
/// and its host-memory args.
fn gpu_kernels(op: &str, attr: &str) -> Vec<(Option<DType>, Vec<&'static str>)> {
    op_kernels::link();
    let entry = Registry::global().op(op).unwrap();
    let mut kernels: Vec<_> = entry
        .kernels()
        .iter()
        .filter(|k| k.device == op_core::DeviceType::Gpu)
        .map(|k| {
            let dtype = k
                .constraints
                .iter()
                .find(|c| c.attr == attr)
                .map(|c| c.dtype);
            (dtype, k.host_memory.to_vec())
        })
        .collect();
    kernels.sort_by_key(|(d, _)| d.map(DType::enum_value));
    kernels
}

#[track_caller]
fn assert_gpu_kernels(op: &str, attr: &str, dtypes: &[DType], host_memory: &[&str]) {
    let mut want: Vec<DType> = dtypes.to_vec();
    want.sort_by_key(|d| d.enum_value());
    let got = gpu_kernels(op, attr);
    let got_dtypes: Vec<DType> = got.iter().filter_map(|(d, _)| *d).collect();
    assert_eq!(got_dtypes, want, "{op}: GPU kernels' {attr}");
    for (dtype, host) in got {
        assert_eq!(host, host_memory, "{op} ({dtype:?}): host_memory");
    }
}

const PLAIN_REALS: [DType; 12] = [
    DType::F16,
    DType::BF16,
    DType::F32,
    DType::F64,
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::U8,
    DType::U16,
    DType::U32,
    DType::U64,
];

fn gpu_kernels_are_registered_for_their_dtypes_with_scalars_and_axes_on_the_host() {
    use DType::{F32, F64, I32};
    assert_gpu_kernels("Sum", "T", &[F32, F64, I32], &["reduction_indices"]);
    assert_gpu_kernels("Mean", "T", &[F32, F64], &["reduction_indices"]);
    assert_gpu_kernels("MatMul", "T", &[F32, F64], &[]);
    assert_gpu_kernels("ResourceApplyGradientDescent", "T", &[F32, F64], &["alpha"]);
    assert_gpu_kernels(
        "ResourceApplyMomentum",
        "T",
        &[F32, F64],
        &["lr", "momentum"],
    );
    assert_gpu_kernels(
        "ResourceApplyAdam",
        "T",
        &[F32, F64],
        &[
            "beta1_power",
            "beta2_power",
            "lr",
            "beta1",
            "beta2",
            "epsilon",
        ],
    );
    for op in ["VarHandleOp", "ReadVariableOp", "AssignVariableOp"] {
        assert_gpu_kernels(op, "dtype", &PLAIN_REALS, &[]);
    }
    for op in ["VarIsInitializedOp", "DestroyResourceOp"] {
        assert_eq!(gpu_kernels(op, "dtype"), [(None, vec![])], "{op}");
    }
}

fn gpu_kernels_without_a_driver_are_unavailable_errors_naming_it() {
    op_kernels::link();
    let gpu = Runtime::new().on_device(Device::gpu(0));
    let x = Tensor::from_vec([2, 3], vec![1.0f32; 6]).unwrap();
    let axes = Tensor::from_vec([1], vec![1i32]).unwrap();
    let calls = [
        OpCall::new("Sum").input(&x).input(&axes),
        OpCall::new("Mean").input(&x).input(&axes),
        OpCall::new("MatMul")
            .input(&x)
            .input(&x)
            .attr("transpose_b", true),
        OpCall::new("VarHandleOp")
            .attr("dtype", DType::F32)
            .attr("shape", op_core::ShapeValue::from_sizes(&[2, 3])),
    ];
    for call in calls {
        let err = call.run_on(&gpu).unwrap_err();
        assert_eq!(err.code(), Code::Unavailable, "{err}");
        assert_contains(&err, &["CUDA driver"]);
    }
    let cpu = Runtime::new();
    let var = Variable::new_on(&cpu, x.clone()).unwrap();
    let err = OpCall::new("ResourceApplyGradientDescent")
        .input(var.handle())
        .input(Tensor::scalar(0.5f32))
        .input(&x)
        .run_on(&gpu)
        .unwrap_err();
    assert_eq!(err.code(), Code::Unavailable, "{err}");
    assert_contains(&err, &["CUDA driver"]);
}

// ---- On a GPU ----

/// A strict GPU runtime, for a test declared `Gpu`.
fn gpu_runtime() -> Runtime {
    op_kernels::link();
    op_cuda::testing::gpu();
    Runtime::gpu(0).unwrap().strict_placement(true)
}

/// `values` as `f64`s, from the host.
fn as_f64(t: &Tensor) -> Vec<f64> {
    let t = t.to_host().unwrap();
    match t.dtype() {
        DType::F32 => t
            .as_slice::<f32>()
            .unwrap()
            .iter()
            .map(|&v| v as f64)
            .collect(),
        DType::F64 => t.as_slice::<f64>().unwrap().to_vec(),
        DType::I32 => t
            .as_slice::<i32>()
            .unwrap()
            .iter()
            .map(|&v| v as f64)
            .collect(),
        other => panic!("no comparison for {other}"),
    }
}

/// Asserts that `gpu` (anywhere) equals `cpu` within `tolerance`, relative
/// to the magnitude (NaNs equal).
#[track_caller]
fn assert_close(gpu: &Tensor, cpu: &Tensor, tolerance: f64, what: &str) {
    assert_eq!(gpu.dims(), cpu.dims(), "{what}: shape");
    assert_eq!(gpu.dtype(), cpu.dtype(), "{what}: dtype");
    for (i, (g, c)) in as_f64(gpu).into_iter().zip(as_f64(cpu)).enumerate() {
        let ok = (g.is_nan() && c.is_nan()) || (g - c).abs() <= tolerance * (1.0 + c.abs());
        assert!(ok, "{what}: element {i}: GPU {g}, CPU {c}");
    }
}

/// A tensor of `dims` with values in [-1, 1) (floats) or [-50, 50)
/// (integers) from `seed`.
fn random(dtype: DType, dims: &[usize], seed: u64) -> Tensor {
    let n: usize = dims.iter().product();
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 11) as f64) / ((1u64 << 53) as f64) * 2.0 - 1.0
    };
    match dtype {
        DType::F32 => Tensor::from_vec(dims, (0..n).map(|_| next() as f32).collect()).unwrap(),
        DType::F64 => Tensor::from_vec(dims, (0..n).map(|_| next()).collect()).unwrap(),
        DType::I32 => {
            Tensor::from_vec(dims, (0..n).map(|_| (next() * 50.0) as i32).collect()).unwrap()
        }
        other => panic!("no random {other}"),
    }
}

fn tolerance(dtype: DType) -> f64 {
    match dtype {
        DType::F32 => 1e-4,
        DType::F64 => 1e-10,
        _ => 0.0,
    }
}

fn run(runtime: &Runtime, call: OpCall) -> Tensor {
    call.run_on(runtime).unwrap().remove(0)
}

/// `op` over `axes` on the GPU and on the CPU, compared; the GPU result
/// must be in GPU memory (or the input reshaped).
fn check_reduction(gpu: &Runtime, op: &str, x: &Tensor, axes: &[i32], keep_dims: bool) {
    let axes = Tensor::from_vec([axes.len()], axes.to_vec()).unwrap();
    let call = || {
        OpCall::new(op)
            .input(x)
            .input(&axes)
            .attr("keep_dims", keep_dims)
    };
    let on_gpu = run(gpu, call());
    let on_cpu = run(&Runtime::new(), call());
    let what = format!(
        "{op} of {} {:?} over {:?} (keep_dims={keep_dims})",
        x.dtype(),
        x.dims(),
        axes.as_slice::<i32>().unwrap()
    );
    assert_close(&on_gpu, &on_cpu, tolerance(x.dtype()), &what);
}

fn reduction_case() -> impl Strategy<Value = (Vec<usize>, Vec<bool>, bool, usize, u64)> {
    (1usize..5)
        .prop_flat_map(|rank| {
            (
                prop::collection::vec(0usize..7, rank),
                prop::collection::vec(any::<bool>(), rank),
                any::<bool>(),
                0usize..5,
                any::<u64>(),
            )
        })
        .prop_map(|(dims, reduced, keep, op, seed)| (dims, reduced, keep, op, seed))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    fn sum_and_mean_on_the_gpu_equal_the_cpu((dims, reduced, keep_dims, which, seed) in reduction_case()) {
        let gpu = gpu_runtime();
        let (op, dtype) = [
            ("Sum", DType::F32), ("Sum", DType::F64), ("Sum", DType::I32),
            ("Mean", DType::F32), ("Mean", DType::F64),
        ][which];
        let x = random(dtype, &dims, seed);
        let rank = dims.len() as i32;
        // Every other reduced axis counted from the end.
        let axes: Vec<i32> = reduced
            .iter()
            .enumerate()
            .filter(|(_, r)| **r)
            .map(|(i, _)| if i % 2 == 0 { i as i32 } else { i as i32 - rank })
            .collect();
        check_reduction(&gpu, op, &x, &axes, keep_dims);
    }

    fn matmul_on_the_gpu_equals_the_cpu(
        m in 0usize..40, n in 0usize..40, k in 0usize..40,
        transpose_a: bool, transpose_b: bool, double: bool, seed: u64,
    ) {
        let gpu = gpu_runtime();
        check_matmul(&gpu, [m, n, k], transpose_a, transpose_b, double, seed);
    }
}

fn check_matmul(
    gpu: &Runtime,
    [m, n, k]: [usize; 3],
    transpose_a: bool,
    transpose_b: bool,
    double: bool,
    seed: u64,
) {
    let dtype = if double { DType::F64 } else { DType::F32 };
    let a_dims = if transpose_a { [k, m] } else { [m, k] };
    let b_dims = if transpose_b { [n, k] } else { [k, n] };
    let a = random(dtype, &a_dims, seed);
    let b = random(dtype, &b_dims, seed ^ 0x5555);
    let call = || {
        OpCall::new("MatMul")
            .input(&a)
            .input(&b)
            .attr("transpose_a", transpose_a)
            .attr("transpose_b", transpose_b)
    };
    let on_gpu = run(gpu, call());
    assert_eq!(on_gpu.device(), Device::gpu(0));
    let on_cpu = run(&Runtime::new(), call());
    let what = format!("MatMul {dtype} {a_dims:?} x {b_dims:?} ({transpose_a}, {transpose_b})");
    // k products of values below 1: absolute error grows with k.
    assert_close(
        &on_gpu,
        &on_cpu,
        tolerance(dtype) * (k.max(1) as f64),
        &what,
    );
}

fn matmul_on_the_gpu_with_every_transpose_at_odd_sizes() {
    let gpu = gpu_runtime();
    for (ta, tb) in [(false, false), (false, true), (true, false), (true, true)] {
        for double in [false, true] {
            check_matmul(&gpu, [257, 129, 65], ta, tb, double, 7);
        }
    }
}

fn large_reductions_on_the_gpu_equal_the_cpu() {
    let gpu = gpu_runtime();
    // A full reduction split in partial sums, then rows and columns.
    let x = random(DType::F32, &[(1 << 22) + 17], 1);
    check_reduction(&gpu, "Sum", &x, &[0], false);
    check_reduction(&gpu, "Mean", &x, &[0], true);
    let x = random(DType::F64, &[300, 5000], 2);
    for axes in [&[0][..], &[1], &[0, 1]] {
        check_reduction(&gpu, "Sum", &x, axes, false);
        check_reduction(&gpu, "Mean", &x, axes, true);
    }
    let x = random(DType::I32, &[7, 20000, 3], 3);
    check_reduction(&gpu, "Sum", &x, &[1], false);
    check_reduction(&gpu, "Sum", &x, &[0, 2], true);
}

// ---- Variables and training on a GPU ----

fn a_variable_assigned_on_the_gpu_stays_there_and_is_read_without_copies() {
    let gpu = gpu_runtime();
    let var =
        Variable::new_on(&gpu, Tensor::from_vec([3], vec![1.0f32, 2.0, 3.0]).unwrap()).unwrap();
    let (first, second) = (var.read().unwrap(), var.read().unwrap());
    assert_eq!(first.device(), Device::gpu(0));
    assert_eq!(first.buffer_address(), second.buffer_address());
    assert_eq!(
        first.to_host().unwrap().as_slice::<f32>().unwrap(),
        [1.0, 2.0, 3.0]
    );
    assert!(var.is_initialized().unwrap());
    var.destroy().unwrap();
}

fn a_host_value_moves_to_the_gpu_on_its_first_device_update() {
    gpu_runtime();
    let host = Tensor::from_vec([2], vec![1.0f32, 2.0]).unwrap();
    let var = Var::with_value(host.clone());
    let mut guard = var.lock();
    assert!(guard.device_memory_mut(Device::gpu(0)).unwrap().is_some());
    drop(guard);
    let value = var.value().unwrap();
    assert_eq!(value.device(), Device::gpu(0));
    assert_eq!(value.to_host().unwrap(), host);
}

/// A training op to check: its name, how many slots it has beside the
/// variable, and its `use_nesterov` (if it has the attr).
struct Update {
    op: &'static str,
    slots: usize,
    nesterov: Option<bool>,
}

/// Runs `update` three times on `runtime` for a variable of `dtype` and
/// `n` elements (and its slots); returns the variable and slots after.
fn train(runtime: &Runtime, update: &Update, dtype: DType, n: usize, seed: u64) -> Vec<Tensor> {
    let init = |s: u64| random(dtype, &[n], seed ^ s);
    let vars: Vec<Variable<'_>> = (0..=update.slots)
        .map(|slot| {
            let mut value = init(slot as u64 + 1);
            if slot == 2 {
                // Adam's v: the square of something, not negative.
                let squared = as_f64(&value).into_iter().map(|v| v * v);
                value = match dtype {
                    DType::F32 => Tensor::from_vec([n], squared.map(|v| v as f32).collect()),
                    _ => Tensor::from_vec([n], squared.collect()),
                }
                .unwrap();
            }
            Variable::new_on(runtime, value).unwrap()
        })
        .collect();
    let scalar = |v: f64| match dtype {
        DType::F32 => Tensor::scalar(v as f32),
        _ => Tensor::scalar(v),
    };
    for step in 1..=3 {
        let grad = init(100 + step);
        let mut call = OpCall::new(update.op);
        for var in &vars {
            call = call.input(var.handle());
        }
        call = match update.op {
            "ResourceApplyGradientDescent" => call.input(scalar(0.1)).input(grad),
            "ResourceApplyMomentum" => call.input(scalar(0.1)).input(grad).input(scalar(0.9)),
            _ => call
                .input(scalar(0.9f64.powi(step as i32)))
                .input(scalar(0.999f64.powi(step as i32)))
                .input(scalar(0.01))
                .input(scalar(0.9))
                .input(scalar(0.999))
                .input(scalar(1e-7))
                .input(&grad),
        };
        if let Some(nesterov) = update.nesterov {
            call = call.attr("use_nesterov", nesterov);
        }
        call.run_on(runtime).unwrap();
    }
    vars.iter().map(|v| v.read().unwrap()).collect()
}

fn training_updates_on_the_gpu_equal_the_cpus() {
    let gpu = gpu_runtime();
    let cpu = Runtime::new();
    let updates = [
        Update {
            op: "ResourceApplyGradientDescent",
            slots: 0,
            nesterov: None,
        },
        Update {
            op: "ResourceApplyMomentum",
            slots: 1,
            nesterov: Some(false),
        },
        Update {
            op: "ResourceApplyMomentum",
            slots: 1,
            nesterov: Some(true),
        },
        Update {
            op: "ResourceApplyAdam",
            slots: 2,
            nesterov: Some(false),
        },
        Update {
            op: "ResourceApplyAdam",
            slots: 2,
            nesterov: Some(true),
        },
    ];
    for update in &updates {
        for dtype in [DType::F32, DType::F64] {
            for n in [1, 1000, 100_003] {
                let on_gpu = train(&gpu, update, dtype, n, n as u64);
                let on_cpu = train(&cpu, update, dtype, n, n as u64);
                for (slot, (g, c)) in on_gpu.iter().zip(&on_cpu).enumerate() {
                    assert_eq!(g.device(), Device::gpu(0));
                    let what = format!("{} {dtype} n={n} slot {slot}", update.op);
                    assert_close(g, c, tolerance(dtype), &what);
                }
            }
        }
    }
}

fn a_gpu_update_copies_a_value_a_reader_still_holds() {
    let gpu = gpu_runtime();
    let var = Variable::new_on(&gpu, Tensor::from_vec([2], vec![1.0f32, 2.0]).unwrap()).unwrap();
    let before = var.read().unwrap();
    OpCall::new("ResourceApplyGradientDescent")
        .input(var.handle())
        .input(Tensor::scalar(1.0f32))
        .input(Tensor::from_vec([2], vec![1.0f32, 1.0]).unwrap())
        .run_on(&gpu)
        .unwrap();
    let after = var.read().unwrap();
    assert_eq!(
        before.to_host().unwrap().as_slice::<f32>().unwrap(),
        [1.0, 2.0]
    );
    assert_eq!(
        after.to_host().unwrap().as_slice::<f32>().unwrap(),
        [0.0, 1.0]
    );
    assert_ne!(before.buffer_address(), after.buffer_address());
}

op_cuda::test_main! {
    gpu_kernels_are_registered_for_their_dtypes_with_scalars_and_axes_on_the_host,
    gpu_kernels_without_a_driver_are_unavailable_errors_naming_it: NoDriver,
    sum_and_mean_on_the_gpu_equal_the_cpu: Gpu,
    matmul_on_the_gpu_equals_the_cpu: Gpu,
    matmul_on_the_gpu_with_every_transpose_at_odd_sizes: Gpu,
    large_reductions_on_the_gpu_equal_the_cpu: Gpu,
    a_variable_assigned_on_the_gpu_stays_there_and_is_read_without_copies: Gpu,
    a_host_value_moves_to_the_gpu_on_its_first_device_update: Gpu,
    training_updates_on_the_gpu_equal_the_cpus: Gpu,
    a_gpu_update_copies_a_value_a_reader_still_holds: Gpu,
}
