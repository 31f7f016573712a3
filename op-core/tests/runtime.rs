//! The runtime over hand-written registrations: kernel selection and its
//! errors, kernel caching (one kernel per distinct node, also under races),
//! panic isolation, output checks, `PreparedOp` input checks, the
//! `KernelContext` accessors, and concurrent calls.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, LazyLock};

use op_core::Executor;
use op_core::registry::{KernelRegistration, OpRegistration, Registry, TypeConstraint};
use op_core::{
    AttrValue, Code, DType, Element, FnKernel, InputTypes, KernelConstruction, KernelContext,
    OpCall, OpDefBuilder, OpKernel, Result, Runtime, Tensor,
};

mod common;
use common::{assert_contains, assert_panicked_at};

// ---------------------------------------------------------------------------
// Ops and kernels, registered by hand.

/// `y = x + 1` for float and int32.
fn add_one<T: Element + Copy + std::ops::Add<Output = T> + From<u8>>(
    ctx: &mut KernelContext<'_>,
    _: &(),
) -> Result<()> {
    let x = ctx.input_by_name("x")?;
    let y: Vec<T> = x.as_slice::<T>()?.iter().map(|v| *v + T::from(1)).collect();
    let dims = x.dims().to_vec();
    ctx.set_output_by_name("y", Tensor::from_vec(dims, y)?)
}

static ADD_ONE: OpRegistration = OpRegistration::new(
    "AddOne",
    || {
        OpDefBuilder::new("AddOne")
            .attr("T: {float, int32}")
            .input("x: T")
            .output("y: T")
            .build()
    },
    "tests/runtime.rs",
    1,
);
static ADD_ONE_F32: KernelRegistration = KernelRegistration::new(
    "AddOne",
    op_core::DeviceType::Cpu,
    "add_one::<f32>",
    |c| FnKernel::<()>::create(c, add_one::<f32>),
    "tests/runtime.rs",
    2,
)
.with_constraints(&[TypeConstraint::new("T", DType::F32)]);
static ADD_ONE_I32: KernelRegistration = KernelRegistration::new(
    "AddOne",
    op_core::DeviceType::Cpu,
    "add_one::<i32>",
    |c| FnKernel::<()>::create(c, add_one::<i32>),
    "tests/runtime.rs",
    3,
)
.with_constraints(&[TypeConstraint::new("T", DType::I32)]);

/// Kernels of `Counted` created so far (only `kernel_is_created_once_per_node` uses it).
static COUNTED_CREATED: AtomicUsize = AtomicUsize::new(0);

/// `y = x * scale`; counts its creations.
struct CountedKernel {
    scale: f32,
}

impl OpKernel for CountedKernel {
    fn compute(&self, ctx: &mut KernelContext<'_>) -> Result<()> {
        let x = ctx.input(0)?;
        let y: Vec<f32> = x
            .as_slice::<f32>()?
            .iter()
            .map(|v| v * self.scale)
            .collect();
        let dims = x.dims().to_vec();
        ctx.set_output(0, Tensor::from_vec(dims, y)?)
    }
}

fn create_counted(c: &KernelConstruction<'_>) -> Result<Box<dyn OpKernel>> {
    COUNTED_CREATED.fetch_add(1, Ordering::SeqCst);
    // Widen the race window for the racing test.
    std::thread::sleep(std::time::Duration::from_millis(5));
    let scale: i64 = c.get_attr("scale")?;
    Ok(Box::new(CountedKernel {
        scale: scale as f32,
    }))
}

static COUNTED: OpRegistration = OpRegistration::new(
    "Counted",
    || {
        OpDefBuilder::new("Counted")
            .attr("scale: int = 1")
            .input("x: float")
            .output("y: float")
            .build()
    },
    "tests/runtime.rs",
    10,
);
static COUNTED_KERNEL: KernelRegistration = KernelRegistration::new(
    "Counted",
    op_core::DeviceType::Cpu,
    "counted",
    create_counted,
    "tests/runtime.rs",
    11,
);

/// Panics on negative input with the value in the message; else identity.
fn panicky(ctx: &mut KernelContext<'_>, _: &()) -> Result<()> {
    let x = ctx.input(0)?.clone();
    let v = x.scalar_value::<i32>()?;
    if v < 0 {
        panic!("boom: negative input {v}");
    }
    if v == 1000 {
        std::panic::panic_any(17u32);
    }
    ctx.set_output(0, x)
}

static PANICS: OpRegistration = OpRegistration::new(
    "Panics",
    || {
        OpDefBuilder::new("Panics")
            .input("x: int32")
            .output("y: int32")
            .build()
    },
    "tests/runtime.rs",
    20,
);
static PANICS_KERNEL: KernelRegistration = KernelRegistration::new(
    "Panics",
    op_core::DeviceType::Cpu,
    "panicky",
    |c| FnKernel::<()>::create(c, panicky),
    "tests/runtime.rs",
    21,
);

/// Panics while being created when `explode` is true.
fn create_exploding(c: &KernelConstruction<'_>) -> Result<Box<dyn OpKernel>> {
    let explode: bool = c.get_attr("explode")?;
    if explode {
        panic!("constructor exploded for node {}", c.node_name());
    }
    FnKernel::<()>::create(c, |ctx, _| {
        let x = ctx.input(0)?.clone();
        ctx.set_output(0, x)
    })
}

static EXPLODES: OpRegistration = OpRegistration::new(
    "ExplodesOnCreate",
    || {
        OpDefBuilder::new("ExplodesOnCreate")
            .attr("explode: bool = true")
            .input("x: int32")
            .output("y: int32")
            .build()
    },
    "tests/runtime.rs",
    30,
);
static EXPLODES_KERNEL: KernelRegistration = KernelRegistration::new(
    "ExplodesOnCreate",
    op_core::DeviceType::Cpu,
    "exploding",
    create_exploding,
    "tests/runtime.rs",
    31,
);

/// Sets output `a` but not `b`, or (`wrong_dtype`) sets `a` to a double.
fn forgetful(ctx: &mut KernelContext<'_>, _: &()) -> Result<()> {
    let wrong: bool = ctx.instance().get_attr("wrong_dtype")?;
    if wrong {
        return ctx.set_output(0, Tensor::scalar(1.0f64));
    }
    ctx.set_output(0, Tensor::scalar(1.0f32))
}

static FORGETS: OpRegistration = OpRegistration::new(
    "ForgetsOutput",
    || {
        OpDefBuilder::new("ForgetsOutput")
            .attr("wrong_dtype: bool = false")
            .output("a: float")
            .output("b: int32")
            .build()
    },
    "tests/runtime.rs",
    40,
);
static FORGETS_KERNEL: KernelRegistration = KernelRegistration::new(
    "ForgetsOutput",
    op_core::DeviceType::Cpu,
    "forgetful",
    |c| FnKernel::<()>::create(c, forgetful),
    "tests/runtime.rs",
    41,
);

/// Calls one `KernelContext` accessor, chosen by attr `what`, and returns
/// its error; on success passes the inputs through.
fn probe(ctx: &mut KernelContext<'_>, _: &()) -> Result<()> {
    let what: String = ctx.instance().get_attr("what")?;
    let n = ctx.input_list("xs")?.len();
    match what.as_str() {
        "ok" => {
            assert_eq!(ctx.op_name(), "Probe");
            assert_eq!(ctx.num_inputs(), 1 + n);
            assert_eq!(ctx.num_outputs(), 1 + n);
            assert_eq!(ctx.input_by_name("x")?.dtype(), DType::F32);
            assert_eq!(ctx.input_arg(0)?.len(), 1);
            assert_eq!(ctx.input_arg(1)?.len(), n);
            assert_eq!(ctx.input_list("xs")?, ctx.input_arg(1)?);
            assert_eq!(ctx.input_list("xs")?[0], *ctx.input(1)?);
            assert_eq!(ctx.output_index("y")?, 0);
            assert_eq!(ctx.output_range("ys")?, 1..1 + n);
            assert_eq!(ctx.output_range("y")?, 0..1);
            assert_eq!(ctx.output_dtype(0)?, DType::F32);
            assert_eq!(ctx.output_dtype(n)?, DType::I32);
        }
        "input_by_name_unknown" => {
            ctx.input_by_name("nope")?;
        }
        "input_by_name_list" => {
            ctx.input_by_name("xs")?;
        }
        "input_list_unknown" => {
            ctx.input_list("zs")?;
        }
        "input_arg_out_of_range" => {
            ctx.input_arg(2)?;
        }
        "input_out_of_range" => {
            ctx.input(1 + n)?;
        }
        "output_index_unknown" => {
            ctx.output_index("nope")?;
        }
        "output_index_list" => {
            ctx.output_index("ys")?;
        }
        "output_range_unknown" => {
            ctx.output_range("zs")?;
        }
        "output_out_of_range" => {
            ctx.set_output(1 + n, Tensor::scalar(0i32))?;
        }
        "read_forwarded" => {
            let dims = ctx.input(0)?.dims().to_vec();
            ctx.forward_input_or_allocate_output(0, 0, &dims)?;
            ctx.input(0)?;
        }
        other => panic!("unknown probe {other}"),
    }
    let x = ctx.input(0)?.clone();
    ctx.set_output_by_name("y", x)?;
    let xs = ctx.input_list("xs")?.to_vec();
    for (index, t) in ctx.output_range("ys")?.zip(xs) {
        ctx.set_output(index, t)?;
    }
    Ok(())
}

static PROBE: OpRegistration = OpRegistration::new(
    "Probe",
    || {
        OpDefBuilder::new("Probe")
            .attr("what: string")
            .attr("N: int")
            .input("x: float")
            .input("xs: N * int32")
            .output("y: float")
            .output("ys: N * int32")
            .build()
    },
    "tests/runtime.rs",
    50,
);
static PROBE_KERNEL: KernelRegistration = KernelRegistration::new(
    "Probe",
    op_core::DeviceType::Cpu,
    "probe",
    |c| FnKernel::<()>::create(c, probe),
    "tests/runtime.rs",
    51,
);

fn noop(_: &mut KernelContext<'_>, _: &()) -> Result<()> {
    Ok(())
}

/// `T: {float, double}`, `U: {int32, int64}`: kernels for (float, int32)
/// on cpu and (double, int64) on gpu only.
static PARTIAL: OpRegistration = OpRegistration::new(
    "Partial",
    || {
        OpDefBuilder::new("Partial")
            .attr("T: {float, double}")
            .attr("U: {int32, int64}")
            .input("t: T")
            .input("u: U")
            .build()
    },
    "tests/runtime.rs",
    60,
);
static PARTIAL_CPU: KernelRegistration = KernelRegistration::new(
    "Partial",
    op_core::DeviceType::Cpu,
    "partial_cpu",
    |c| FnKernel::<()>::create(c, noop),
    "tests/runtime.rs",
    61,
)
.with_constraints(&[
    TypeConstraint::new("T", DType::F32),
    TypeConstraint::new("U", DType::I32),
]);
static PARTIAL_GPU: KernelRegistration = KernelRegistration::new(
    "Partial",
    op_core::DeviceType::Gpu,
    "partial_gpu",
    |c| FnKernel::<()>::create(c, noop),
    "tests/runtime.rs",
    62,
)
.with_constraints(&[
    TypeConstraint::new("T", DType::F64),
    TypeConstraint::new("U", DType::I64),
]);

/// `T: {float, double, int32}` with kernels for float and int32 only.
static TIED: OpRegistration = OpRegistration::new(
    "Tied",
    || {
        OpDefBuilder::new("Tied")
            .attr("T: {float, double, int32}")
            .input("x: T")
            .build()
    },
    "tests/runtime.rs",
    65,
);
static TIED_F32: KernelRegistration = KernelRegistration::new(
    "Tied",
    op_core::DeviceType::Cpu,
    "tied::<f32>",
    |c| FnKernel::<()>::create(c, noop),
    "tests/runtime.rs",
    66,
)
.with_constraints(&[TypeConstraint::new("T", DType::F32)]);
static TIED_I32: KernelRegistration = KernelRegistration::new(
    "Tied",
    op_core::DeviceType::Cpu,
    "tied::<i32>",
    |c| FnKernel::<()>::create(c, noop),
    "tests/runtime.rs",
    67,
)
.with_constraints(&[TypeConstraint::new("T", DType::I32)]);

/// An op nobody wrote a kernel for.
static KERNELLESS: OpRegistration = OpRegistration::new(
    "Kernelless",
    || OpDefBuilder::new("Kernelless").input("x: int32").build(),
    "tests/runtime.rs",
    70,
);

/// Two kernels that both match `T=float`: one constrained, one not.
static AMBIGUOUS: OpRegistration = OpRegistration::new(
    "Ambiguous",
    || {
        OpDefBuilder::new("Ambiguous")
            .attr("T: type")
            .input("x: T")
            .build()
    },
    "tests/runtime.rs",
    80,
);
static AMBIGUOUS_F32: KernelRegistration = KernelRegistration::new(
    "Ambiguous",
    op_core::DeviceType::Cpu,
    "ambiguous_f32",
    |c| FnKernel::<()>::create(c, noop),
    "tests/runtime.rs",
    81,
)
.with_constraints(&[TypeConstraint::new("T", DType::F32)]);
static AMBIGUOUS_ANY: KernelRegistration = KernelRegistration::new(
    "Ambiguous",
    op_core::DeviceType::Cpu,
    "ambiguous_any",
    |c| FnKernel::<()>::create(c, noop),
    "tests/runtime.rs",
    82,
);

static REGISTRY: LazyLock<Arc<Registry>> = LazyLock::new(|| {
    Arc::new(Registry::new(
        [
            &ADD_ONE,
            &COUNTED,
            &PANICS,
            &EXPLODES,
            &FORGETS,
            &PROBE,
            &PARTIAL,
            &TIED,
            &KERNELLESS,
            &AMBIGUOUS,
        ],
        [
            &ADD_ONE_F32,
            &ADD_ONE_I32,
            &COUNTED_KERNEL,
            &PANICS_KERNEL,
            &EXPLODES_KERNEL,
            &FORGETS_KERNEL,
            &PROBE_KERNEL,
            &PARTIAL_CPU,
            &PARTIAL_GPU,
            &TIED_F32,
            &TIED_I32,
            &AMBIGUOUS_F32,
            &AMBIGUOUS_ANY,
        ],
    ))
});

fn runtime() -> Runtime {
    Runtime::with_registry(REGISTRY.clone())
}

// A registration in the global registry, to check the global runtime.
op_core::inventory::submit! {
    OpRegistration::new("GlobalTwice", || OpDefBuilder::new("GlobalTwice").input("x: int32").output("y: int32").build(), file!(), line!())
}
op_core::inventory::submit! {
    KernelRegistration::new("GlobalTwice", op_core::DeviceType::Cpu, "global_twice", |c| FnKernel::<()>::create(c, |ctx, _| {
            let x = ctx.input(0)?;
            let y: Vec<i32> = x.as_slice::<i32>()?.iter().map(|v| v * 2).collect();
            let dims = x.dims().to_vec();
            ctx.set_output(0, Tensor::from_vec(dims, y)?)
        }), file!(), line!())
}

// A kernel that runs another op through the eager path: the per-thread call
// cache is borrowed while the outer kernel runs.
op_core::inventory::submit! {
    OpRegistration::new("GlobalFourTimes", || OpDefBuilder::new("GlobalFourTimes").input("x: int32").output("y: int32").build(), file!(), line!())
}
op_core::inventory::submit! {
    KernelRegistration::new("GlobalFourTimes", op_core::DeviceType::Cpu, "global_four_times", |c| FnKernel::<()>::create(c, |ctx, _| {
            let x = ctx.input(0)?.clone();
            let twice = OpCall::new("GlobalTwice").input(x).run()?;
            let four = OpCall::new("GlobalTwice").input(&twice[0]).run()?;
            ctx.set_output(0, four[0].clone())
        }), file!(), line!())
}

// ---------------------------------------------------------------------------
// Running ops.

#[test]
fn the_isolated_registry_has_no_conflicts() {
    REGISTRY.check().unwrap();
    assert_eq!(REGISTRY.ops().count(), 10);
}

#[test]
fn global_runtime_runs_inventory_registrations() {
    Registry::global().check().unwrap();
    assert!(Registry::global().get("GlobalTwice").is_some());
    // The isolated registrations are not in the global registry.
    assert!(Registry::global().get("AddOne").is_none());
    let x = Tensor::from_vec([3], vec![1i32, -2, 30]).unwrap();
    let y = OpCall::new("GlobalTwice").input(&x).run().unwrap();
    assert_eq!(y[0].as_slice::<i32>().unwrap(), [2, -4, 60]);
    let y = Runtime::global().run("GlobalTwice", vec![x], &[]).unwrap();
    assert_eq!(y[0].as_slice::<i32>().unwrap(), [2, -4, 60]);
    let err = OpCall::new("AddOne")
        .input(Tensor::scalar(1.0f32))
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
}

#[test]
fn runs_the_kernel_for_each_dtype() {
    let rt = runtime();
    let x = Tensor::from_vec([2, 2], vec![1.0f32, 2.0, 3.0, 4.5]).unwrap();
    let y = OpCall::new("AddOne").input(&x).run_on(&rt).unwrap();
    assert_eq!(y.len(), 1);
    assert_eq!(y[0].dtype(), DType::F32);
    assert_eq!(y[0].dims(), [2, 2]);
    assert_eq!(y[0].as_slice::<f32>().unwrap(), [2.0, 3.0, 4.0, 5.5]);

    let y = rt
        .run(
            "AddOne",
            vec![Tensor::from_vec([2], vec![7i32, -1]).unwrap()],
            &[],
        )
        .unwrap();
    assert_eq!(y[0].as_slice::<i32>().unwrap(), [8, 0]);

    let prepared = rt.prepare("AddOne", &[DType::I32.into()], &[]).unwrap();
    assert_eq!(prepared.kernel().name, "add_one::<i32>");
    assert_eq!(
        prepared.instance().attr("T"),
        Some(&AttrValue::Type(DType::I32))
    );
    assert_eq!(prepared.node_name(), "AddOne");
    assert_eq!(prepared.op_def().name, "AddOne");
}

#[test]
fn unknown_op_is_not_found_with_a_suggestion() {
    let rt = runtime();
    let err = OpCall::new("AddOen")
        .input(Tensor::scalar(1.0f32))
        .run_on(&rt)
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_contains(
        &err,
        &[
            "op 'AddOen' is not registered",
            "did you mean 'AddOne'?",
            "10 ops are registered",
            "use that_crate as _;",
        ],
    );
    let err = rt.prepare("Xyzzy", &[], &[]).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert!(!err.to_string().contains("did you mean"), "{err}");
}

#[test]
fn no_matching_kernel_names_the_op_attrs_kernels_and_closest() {
    let rt = runtime();
    let err = OpCall::new("Partial")
        .input(Tensor::scalar(1.0f32))
        .input(Tensor::scalar(1i64))
        .run_on(&rt)
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_eq!(
        err.message(),
        "no kernel for op 'Partial' on device 'cpu' with attrs T=float, U=int64\
         \n  registered kernels:\
         \n    device='cpu'; T=float; U=int32  (partial_cpu at tests/runtime.rs:61)\
         \n    device='gpu'; T=double; U=int64  (partial_gpu at tests/runtime.rs:62)\
         \n  closest: partial_cpu (device='cpu'; T=float; U=int32): it needs U=int32, the node has int64"
    );

    // On the gpu, the gpu kernel is closest: its device fits.
    let gpu = runtime().on_device(op_core::Device::gpu(0));
    assert_eq!(gpu.device(), op_core::Device::gpu(0));
    let err = gpu
        .prepare("Partial", &[DType::F64.into(), DType::I32.into()], &[])
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_contains(
        &err,
        &[
            "on device 'gpu' with attrs T=double, U=int32",
            "closest: partial_gpu (device='gpu'; T=double; U=int64): it needs U=int64, the node has int32",
        ],
    );
    // The gpu kernel matches, but this program links no GPU backend: the
    // error says so, naming the kernel and the device.
    let err = gpu
        .prepare("Partial", &[DType::F64.into(), DType::I64.into()], &[])
        .unwrap_err();
    assert_eq!(err.code(), Code::Unavailable);
    assert_contains(
        &err,
        &[
            "no backend for device type 'gpu' is linked",
            "while preparing kernel partial_gpu",
            "on gpu:0",
        ],
    );

    // Only the device differs: the gpu kernel is closest.
    let err = rt
        .prepare("Partial", &[DType::F64.into(), DType::I64.into()], &[])
        .unwrap_err();
    assert_contains(
        &err,
        &["closest: partial_gpu (device='gpu'; T=double; U=int64): it runs on 'gpu', not 'cpu'"],
    );

    // Equally close kernels: the message says what they cover instead.
    let err = rt.prepare("Tied", &[DType::F64.into()], &[]).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_contains(
        &err,
        &[
            "no kernel for op 'Tied' on device 'cpu' with attrs T=double",
            "tied::<f32>",
            "tied::<i32>",
            "kernels on 'cpu' cover T in {float, int32}",
        ],
    );
    assert!(!err.to_string().contains("closest"), "{err}");
}

#[test]
fn an_op_without_kernels_hints_at_linking() {
    let rt = runtime();
    let err = OpCall::new("Kernelless")
        .input(Tensor::scalar(1i32))
        .run_on(&rt)
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_contains(
        &err,
        &[
            "no kernel for op 'Kernelless' on device 'cpu' with attrs (none)",
            "the op has no kernels at all",
            "make sure that crate is linked",
        ],
    );
}

#[test]
fn ambiguous_kernels_are_an_error() {
    let rt = runtime();
    let err = OpCall::new("Ambiguous")
        .input(Tensor::scalar(1.0f32))
        .run_on(&rt)
        .unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert_contains(
        &err,
        &[
            "op 'Ambiguous': several kernels match device 'cpu' with attrs T=float",
            "ambiguous_f32 (device='cpu'; T=float) at tests/runtime.rs:81",
            "ambiguous_any (device='cpu') at tests/runtime.rs:82",
        ],
    );
    // Only the unconstrained kernel matches int32: no ambiguity.
    let out = OpCall::new("Ambiguous")
        .input(Tensor::scalar(1i32))
        .run_on(&rt)
        .unwrap();
    assert!(out.is_empty());
}

#[test]
fn a_panicking_kernel_becomes_an_internal_error() {
    let rt = runtime();
    let err = OpCall::new("Panics")
        .input(Tensor::scalar(-3i32))
        .run_on(&rt)
        .unwrap_err();
    assert_eq!(err.code(), Code::Internal);
    // Once, in the error, with where it happened (and not on stderr:
    // tests/contained_panics.rs).
    assert_panicked_at(
        err.message(),
        "kernel panicked",
        file!(),
        "boom: negative input -3",
    );
    assert_eq!(
        err.context(),
        ["in kernel panicky of op Panics (node 'Panics', device 'cpu')"]
    );

    // A payload that is not a string.
    let err = OpCall::new("Panics")
        .input(Tensor::scalar(1000i32))
        .run_on(&rt)
        .unwrap_err();
    assert_eq!(err.code(), Code::Internal);
    assert_contains(&err, &["kernel panicked", "not a string"]);

    // The same kernel, and the runtime, keep working.
    let out = OpCall::new("Panics")
        .input(Tensor::scalar(5i32))
        .run_on(&rt)
        .unwrap();
    assert_eq!(out[0].scalar_value::<i32>().unwrap(), 5);
    let out = OpCall::new("AddOne")
        .input(Tensor::scalar(5i32))
        .run_on(&rt)
        .unwrap();
    assert_eq!(out[0].scalar_value::<i32>().unwrap(), 6);
    // And again after the panic, from other threads.
    std::thread::scope(|s| {
        for i in 0..4 {
            let rt = &rt;
            s.spawn(move || {
                let err = OpCall::new("Panics")
                    .input(Tensor::scalar(-1i32))
                    .run_on(rt)
                    .unwrap_err();
                assert_eq!(err.code(), Code::Internal);
                let out = OpCall::new("Panics")
                    .input(Tensor::scalar(i))
                    .run_on(rt)
                    .unwrap();
                assert_eq!(out[0].scalar_value::<i32>().unwrap(), i);
            });
        }
    });
}

#[test]
fn a_panicking_kernel_constructor_becomes_an_internal_error() {
    let rt = runtime();
    let err = OpCall::new("ExplodesOnCreate")
        .input(Tensor::scalar(1i32))
        .node_name("bomb")
        .run_on(&rt)
        .unwrap_err();
    assert_eq!(err.code(), Code::Internal);
    assert_panicked_at(
        err.message(),
        "panicked",
        file!(),
        "constructor exploded for node bomb",
    );
    assert_contains(
        &err,
        &["while creating kernel exploding for op ExplodesOnCreate (node 'bomb', device='cpu')"],
    );
    // Nothing was cached: the next call tries, and fails, again.
    let again = OpCall::new("ExplodesOnCreate")
        .input(Tensor::scalar(1i32))
        .node_name("bomb")
        .run_on(&rt)
        .unwrap_err();
    assert_eq!(again, err);
    // Another node of the op, and other ops, still run.
    let out = OpCall::new("ExplodesOnCreate")
        .input(Tensor::scalar(4i32))
        .attr("explode", false)
        .run_on(&rt)
        .unwrap();
    assert_eq!(out[0].scalar_value::<i32>().unwrap(), 4);
    let out = OpCall::new("AddOne")
        .input(Tensor::scalar(1.0f32))
        .run_on(&rt)
        .unwrap();
    assert_eq!(out[0].scalar_value::<f32>().unwrap(), 2.0);
}

/// A panic payload whose `Drop` panics too: dropping it must not let that
/// second panic out of the runtime.
struct PanicsOnDrop;

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        panic!("the payload's drop panicked");
    }
}

/// Panics with a `PanicsOnDrop` payload when created (`at_create`) or when
/// run.
fn create_bad_payload(c: &KernelConstruction<'_>) -> Result<Box<dyn OpKernel>> {
    if c.get_attr::<bool>("at_create")? {
        std::panic::panic_any(PanicsOnDrop);
    }
    FnKernel::<()>::create(c, |_, _| std::panic::panic_any(PanicsOnDrop))
}

static BAD_PAYLOAD: OpRegistration = OpRegistration::new(
    "BadPayload",
    || {
        OpDefBuilder::new("BadPayload")
            .attr("at_create: bool = false")
            .output("y: int32")
            .build()
    },
    "tests/runtime.rs",
    90,
);
static BAD_PAYLOAD_KERNEL: KernelRegistration = KernelRegistration::new(
    "BadPayload",
    op_core::DeviceType::Cpu,
    "bad_payload",
    create_bad_payload,
    "tests/runtime.rs",
    91,
);

#[test]
fn a_panic_payload_whose_drop_panics_stays_contained() {
    // A registry of its own: `REGISTRY`'s ops are counted elsewhere.
    let rt = Runtime::with_registry(Arc::new(Registry::new(
        [&BAD_PAYLOAD],
        [&BAD_PAYLOAD_KERNEL],
    )));
    for at_create in [false, true] {
        let err = OpCall::new("BadPayload")
            .attr("at_create", at_create)
            .run_on(&rt)
            .unwrap_err();
        assert_eq!(err.code(), Code::Internal, "{err}");
        assert_contains(
            &err,
            &[
                "panicked at ",
                ": (a panic payload that is not a string)",
                "BadPayload",
            ],
        );
        // The typed path (an array of outputs) contains it alike.
        let err = rt
            .execute_array::<1>(OpCall::new("BadPayload").attr("at_create", at_create))
            .unwrap_err();
        assert_eq!(err.code(), Code::Internal, "{err}");
    }
}

#[test]
fn an_unset_output_is_an_internal_error_naming_it() {
    let rt = runtime();
    let err = OpCall::new("ForgetsOutput").run_on(&rt).unwrap_err();
    assert_eq!(err.code(), Code::Internal);
    assert_eq!(err.message(), "the kernel did not set output 1 ('b')");
    assert_contains(&err, &["in kernel forgetful of op ForgetsOutput"]);
}

#[test]
fn an_output_of_the_wrong_dtype_is_an_error() {
    let rt = runtime();
    let err = OpCall::new("ForgetsOutput")
        .attr("wrong_dtype", true)
        .run_on(&rt)
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(
        err.message(),
        "op ForgetsOutput (node 'ForgetsOutput'): output 0 must be float, but the kernel produced double"
    );
    assert_contains(&err, &["in kernel forgetful"]);
}

#[test]
fn kernel_is_created_once_per_node() {
    let start = COUNTED_CREATED.load(Ordering::SeqCst);
    let created = || COUNTED_CREATED.load(Ordering::SeqCst) - start;
    let rt = runtime();
    let x = Tensor::from_vec([2], vec![1.0f32, -2.0]).unwrap();
    for _ in 0..100 {
        let y = OpCall::new("Counted").input(&x).run_on(&rt).unwrap();
        assert_eq!(y[0].as_slice::<f32>().unwrap(), [1.0, -2.0]);
    }
    for _ in 0..10 {
        rt.run("Counted", vec![x.clone()], &[]).unwrap();
    }
    // The default spelled out is the same node.
    OpCall::new("Counted")
        .input(&x)
        .attr("scale", 1i64)
        .run_on(&rt)
        .unwrap();
    assert_eq!(created(), 1);

    // A graph's node of the same name has a kernel of its own, kept apart
    // from the eager calls' (`KernelConstruction::is_eager`).
    for _ in 0..10 {
        rt.prepare("Counted", &[DType::F32.into()], &[]).unwrap();
    }
    assert_eq!(created(), 2);

    // A different attr value is a different node.
    for _ in 0..10 {
        let y = OpCall::new("Counted")
            .input(&x)
            .attr("scale", 3i64)
            .run_on(&rt)
            .unwrap();
        assert_eq!(y[0].as_slice::<f32>().unwrap(), [3.0, -6.0]);
    }
    assert_eq!(created(), 3);

    // So is a different node name.
    OpCall::new("Counted")
        .input(&x)
        .node_name("other")
        .run_on(&rt)
        .unwrap();
    assert_eq!(created(), 4);

    // Threads racing for a new node create its kernel once; the known ones
    // are not created again.
    let barrier = Barrier::new(8);
    std::thread::scope(|s| {
        for _ in 0..8 {
            let (rt, x, barrier) = (&rt, &x, &barrier);
            s.spawn(move || {
                barrier.wait();
                for _ in 0..50 {
                    let y = OpCall::new("Counted")
                        .input(x)
                        .attr("scale", 5i64)
                        .run_on(rt)
                        .unwrap();
                    assert_eq!(y[0].as_slice::<f32>().unwrap(), [5.0, -10.0]);
                    OpCall::new("Counted").input(x).run_on(rt).unwrap();
                }
            });
        }
    });
    assert_eq!(created(), 5);

    // A fresh runtime has its own kernels, created as much under a race.
    let fresh = runtime();
    let barrier = Barrier::new(8);
    std::thread::scope(|s| {
        for _ in 0..8 {
            let (rt, barrier) = (&fresh, &barrier);
            s.spawn(move || {
                barrier.wait();
                rt.prepare(
                    "Counted",
                    &[DType::F32.into()],
                    &[("scale", AttrValue::Int(2))],
                )
                .unwrap();
            });
        }
    });
    assert_eq!(created(), 6);
}

#[test]
fn prepared_op_checks_its_inputs() {
    let rt = runtime();
    let add = rt.prepare("AddOne", &[DType::F32.into()], &[]).unwrap();
    let y = add.run(vec![Tensor::scalar(1.5f32)]).unwrap();
    assert_eq!(y[0].scalar_value::<f32>().unwrap(), 2.5);

    let err = add.run(vec![Tensor::scalar(1i32)]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(
        err.message(),
        "op AddOne (node 'AddOne'): input 'x' must be float, got a tensor of int32"
    );

    let err = add
        .run(vec![Tensor::scalar(1.0f32), Tensor::scalar(1.0f32)])
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(
        err.message(),
        "op AddOne (node 'AddOne') was prepared for 1 input tensor(s), got 2"
    );
    let err = add.run(vec![]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["prepared for 1 input tensor(s), got 0"]);

    // A list input: the position in the list is named.
    let probe = rt
        .prepare(
            "Probe",
            &[DType::F32.into(), vec![DType::I32, DType::I32].into()],
            &[("what", AttrValue::from("ok"))],
        )
        .unwrap();
    let good = vec![
        Tensor::scalar(1.0f32),
        Tensor::scalar(1i32),
        Tensor::scalar(2i32),
    ];
    assert_eq!(probe.run(good.clone()).unwrap(), good);
    let err = probe
        .run(vec![
            Tensor::scalar(1.0f32),
            Tensor::scalar(1i32),
            Tensor::scalar(2.0f32),
        ])
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(
        err.message(),
        "op Probe (node 'Probe'): input 'xs'[1] must be int32, got a tensor of float"
    );
}

#[test]
fn prepare_rejects_bad_nodes() {
    let rt = runtime();
    let err = rt.prepare("AddOne", &[DType::F64.into()], &[]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["op AddOne", "input 'x'", "double", "attr 'T'"]);
    let err = rt.prepare("AddOne", &[], &[]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["op AddOne", "expects 1 input(s) (x), got 0"]);
    let err = rt
        .prepare("AddOne", &[DType::F32.into()], &[("S", AttrValue::Int(1))])
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["op AddOne", "no attr named 'S'"]);
}

fn run_probe(what: &str) -> Result<Vec<Tensor>> {
    OpCall::new("Probe")
        .input(Tensor::scalar(1.0f32))
        .input_list([Tensor::scalar(1i32), Tensor::scalar(2i32)])
        .attr("what", what)
        .run_on(&runtime())
}

#[test]
fn kernel_context_accessors() {
    let out = run_probe("ok").unwrap();
    assert_eq!(
        out,
        [
            Tensor::scalar(1.0f32),
            Tensor::scalar(1i32),
            Tensor::scalar(2i32)
        ]
    );
    let grouped = OpCall::new("Probe")
        .input(Tensor::scalar(1.0f32))
        .input_list([Tensor::scalar(1i32), Tensor::scalar(2i32)])
        .attr("what", "ok")
        .run_grouped_on(&runtime())
        .unwrap();
    assert_eq!(grouped.len(), 2);
    assert_eq!(grouped[0], [Tensor::scalar(1.0f32)]);
    assert_eq!(grouped[1], [Tensor::scalar(1i32), Tensor::scalar(2i32)]);
}

#[test]
fn kernel_context_errors_name_the_arg() {
    let prefix = "op Probe (node 'Probe'): ";
    for (what, message) in [
        (
            "input_by_name_unknown",
            "has no input named 'nope' (inputs: x, xs)",
        ),
        (
            "input_by_name_list",
            "input 'xs' is a list of tensors: use input_list(\"xs\")",
        ),
        (
            "input_list_unknown",
            "has no input named 'zs' (inputs: x, xs)",
        ),
        (
            "input_arg_out_of_range",
            "asked for input arg 2, but the op has 2 input arg(s)",
        ),
        (
            "input_out_of_range",
            "asked for input 3, but the op has 3 input tensor(s)",
        ),
        (
            "output_index_unknown",
            "has no output named 'nope' (outputs: y, ys)",
        ),
        (
            "output_index_list",
            "output 'ys' is a list of tensors: use output_range(\"ys\")",
        ),
        (
            "output_range_unknown",
            "has no output named 'zs' (outputs: y, ys)",
        ),
        (
            "output_out_of_range",
            "asked for output 3, but the op has 3 output tensor(s)",
        ),
        (
            "read_forwarded",
            "input 0 was forwarded to an output and can no longer be read",
        ),
    ] {
        let err = run_probe(what).unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{what}: {err}");
        assert_eq!(err.message(), format!("{prefix}{message}"), "{what}");
        assert_eq!(
            err.context(),
            ["in kernel probe of op Probe (node 'Probe', device 'cpu')"],
            "{what}"
        );
    }
}

#[test]
fn concurrent_calls_give_correct_results() {
    let rt = runtime();
    std::thread::scope(|s| {
        for thread in 0..8i32 {
            let rt = &rt;
            s.spawn(move || {
                for i in 0..1000i32 {
                    let v = thread * 10_000 + i;
                    if i % 2 == 0 {
                        let x = Tensor::from_vec([2], vec![v, -v]).unwrap();
                        let y = OpCall::new("AddOne").input(x).run_on(rt).unwrap();
                        assert_eq!(y[0].as_slice::<i32>().unwrap(), [v + 1, 1 - v]);
                    } else {
                        let x = Tensor::scalar(v as f32);
                        let y = OpCall::new("AddOne").input(&x).run_on(rt).unwrap();
                        assert_eq!(y[0].scalar_value::<f32>().unwrap(), v as f32 + 1.0);
                    }
                }
            });
        }
    });
}

#[test]
fn runtimes_do_not_share_kernels_or_registries() {
    // A runtime over an empty registry knows no ops, even those another
    // runtime on this thread has run.
    let rt = runtime();
    OpCall::new("AddOne")
        .input(Tensor::scalar(1i32))
        .run_on(&rt)
        .unwrap();
    let empty = Runtime::with_registry(Arc::new(Registry::new([], [])));
    let err = OpCall::new("AddOne")
        .input(Tensor::scalar(1i32))
        .run_on(&empty)
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_contains(&err, &["0 ops are registered"]);
}

#[test]
fn a_kernel_may_run_ops_itself() {
    // The first outer call is a cache miss, later ones hit the per-thread
    // cache and run while it is borrowed; the nested calls must work in both.
    for round in 0..3 {
        let x = Tensor::from_vec([2], vec![1i32, -3]).unwrap();
        let y = OpCall::new("GlobalFourTimes").input(x).run().unwrap();
        assert_eq!(y[0].as_slice::<i32>().unwrap(), [4, -12], "round {round}");
    }
}

#[test]
fn a_huge_node_name_is_quoted_at_a_bounded_length() {
    let rt = runtime();
    let node = "n".repeat(10 << 20);
    let cut = format!("…' ({} bytes)", node.len());
    let short = |err: op_core::Error, parts: &[&str]| {
        let text = err.to_string();
        assert!(text.len() < 2048, "{} bytes", text.len());
        for part in parts {
            assert!(text.contains(part), "{part:?} in {text}");
        }
    };
    // A kernel's panic, its frame naming the node.
    let err = OpCall::new("Panics")
        .input(Tensor::scalar(-3i32))
        .node_name(&node)
        .run_on(&rt)
        .unwrap_err();
    short(err, &["kernel panicked", "(node 'nnn", &cut]);
    // A constructor's panic, whose own message holds the whole name.
    let err = OpCall::new("ExplodesOnCreate")
        .input(Tensor::scalar(1i32))
        .node_name(&node)
        .run_on(&rt)
        .unwrap_err();
    short(
        err,
        &[
            "panicked at ",
            ": constructor exploded for node nnn",
            "bytes)",
            &cut,
        ],
    );
    // An input of the wrong dtype, checked by the prepared op.
    let prepared = OpCall::new("Panics")
        .input(Tensor::scalar(1i32))
        .node_name(&node)
        .prepared(&rt)
        .unwrap();
    let err = prepared.run(vec![Tensor::scalar(1.0f32)]).unwrap_err();
    short(err, &["(node 'nnn", &cut]);
}

/// What an executor reads of a call: the op, the inputs flattened and by
/// arg, the explicit attrs, the node name.
#[test]
fn an_op_call_describes_itself_to_an_executor() {
    let call = OpCall::new("Mixed")
        .input(Tensor::scalar(1i32))
        .input_list([Tensor::scalar(2.0f32), Tensor::scalar(3.0f32)])
        .input(Tensor::scalar(4i64))
        .attr("k", 7i64)
        .attr("k", 8i64)
        .node_name("mixed");
    assert_eq!(call.op(), "Mixed");
    assert_eq!(call.given_node_name(), Some("mixed"));
    assert_eq!(
        call.input_groups().collect::<Vec<_>>(),
        [None, Some(2), None]
    );
    assert_eq!(call.attrs(), [("k", AttrValue::Int(8))]);
    assert_eq!(
        call.input_types(),
        [
            InputTypes::Single(DType::I32),
            InputTypes::List(vec![DType::F32, DType::F32]),
            InputTypes::Single(DType::I64),
        ]
    );
    let dtypes: Vec<DType> = call.into_inputs().iter().map(Tensor::dtype).collect();
    assert_eq!(dtypes, [DType::I32, DType::F32, DType::F32, DType::I64]);

    let singles = OpCall::new("Singles")
        .input(Tensor::scalar(1i32))
        .input(Tensor::scalar(2i32));
    assert_eq!(singles.input_groups().collect::<Vec<_>>(), [None, None]);
    assert_eq!(singles.given_node_name(), None);
}

/// A call on values of another executor builds alike.
#[test]
fn an_op_call_holds_any_executors_values() {
    let call = OpCall::<&str>::with_values("Symbolic")
        .input("a")
        .input_list(["b", "c"]);
    assert_eq!(call.inputs(), ["a", "b", "c"]);
    assert_eq!(call.input_groups().collect::<Vec<_>>(), [None, Some(2)]);
}

// An op with a tensor attr, whose kernel outputs the attr's first float.
op_core::inventory::submit! {
    OpRegistration::new("GlobalFirstFloat", || OpDefBuilder::new("GlobalFirstFloat").attr("value: tensor").output("y: float").build(), file!(), line!())
}
op_core::inventory::submit! {
    KernelRegistration::new("GlobalFirstFloat", op_core::DeviceType::Cpu, "global_first_float", |c| FnKernel::<()>::create(c, |ctx, _| {
            let value: op_core::TensorValue = ctx.instance().get_attr("value")?;
            let first = value.float_val.first().copied().unwrap_or_default();
            ctx.set_output(0, Tensor::scalar(first))
        }), file!(), line!())
}

/// Tensor attrs print summarized (`<tensor float>`), yet nodes that differ
/// only in one are two kernels.
#[test]
fn nodes_that_differ_only_in_a_tensor_attr_get_kernels_of_their_own() {
    let rt = Runtime::new();
    let value = |x: f32| op_core::TensorValue {
        dtype: Some(DType::F32),
        float_val: vec![x],
        ..op_core::TensorValue::default()
    };
    for x in [1.5f32, 2.5] {
        let prepared = rt
            .prepare("GlobalFirstFloat", &[], &[("value", value(x).into())])
            .unwrap();
        let y = prepared.run(Vec::new()).unwrap();
        assert_eq!(y[0].scalar_value::<f32>().unwrap(), x);
    }
}

/// A named node's kernel is its own, and sees the name.
#[test]
fn prepare_named_gives_each_name_its_own_kernel_that_knows_the_name() {
    let rt = runtime();
    let a = rt.prepare_named("ForgetsOutput", &[], &[], "a").unwrap();
    let b = rt.prepare_named("ForgetsOutput", &[], &[], "b").unwrap();
    let again = rt.prepare_named("ForgetsOutput", &[], &[], "a").unwrap();
    assert_eq!((a.node_name(), b.node_name()), ("a", "b"));
    assert!(Arc::ptr_eq(&a, &again));
    assert!(!Arc::ptr_eq(&a, &b));
    let err = b.run(Vec::new()).unwrap_err();
    assert_contains(&err, &["the kernel did not set output 1", "(node 'b'"]);
}
