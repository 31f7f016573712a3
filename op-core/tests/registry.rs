//! Registry conflicts, over isolated registries of `static` registrations:
//! each kind is detected, named in `check()` and the listing with source
//! locations, and blocks only its own op.

use std::sync::Arc;

use op_core::registry::{
    ConflictKind, KernelRegistration, MissingOp, OpRegistration, Registry, TypeConstraint,
};
use op_core::{
    Code, DType, FnKernel, KernelContext, OpCall, OpDefBuilder, Result, Runtime, Tensor,
};

fn identity(ctx: &mut KernelContext<'_>, _: &()) -> Result<()> {
    let x = ctx.input(0)?.clone();
    ctx.set_output(0, x)
}

/// `Good`: `T: {float, int32}`, `x: T -> y: T`, with a kernel per type. It
/// must keep running whatever else conflicts.
static GOOD: OpRegistration = OpRegistration::new(
    "Good",
    || {
        OpDefBuilder::new("Good")
            .attr("T: {float, int32}")
            .input("x: T")
            .output("y: T")
            .build()
    },
    "good.rs",
    1,
);
static GOOD_F32: KernelRegistration = KernelRegistration::new(
    "Good",
    op_core::DeviceType::Cpu,
    "good::<f32>",
    |c| FnKernel::<()>::create(c, identity),
    "good.rs",
    2,
)
.with_constraints(&[TypeConstraint::new("T", DType::F32)]);
static GOOD_I32: KernelRegistration = KernelRegistration::new(
    "Good",
    op_core::DeviceType::Cpu,
    "good::<i32>",
    |c| FnKernel::<()>::create(c, identity),
    "good.rs",
    3,
)
.with_constraints(&[TypeConstraint::new("T", DType::I32)])
.with_host_memory(&["x"]);

/// `Other`: like `Good`, the op that the kernel conflicts are about.
static OTHER: OpRegistration = OpRegistration::new(
    "Other",
    || {
        OpDefBuilder::new("Other")
            .attr("T: {float, int32}")
            .attr("n: int = 1")
            .input("x: T")
            .output("y: T")
            .build()
    },
    "other.rs",
    10,
);
static OTHER_F32: KernelRegistration = KernelRegistration::new(
    "Other",
    op_core::DeviceType::Cpu,
    "other::<f32>",
    |c| FnKernel::<()>::create(c, identity),
    "other.rs",
    11,
)
.with_constraints(&[TypeConstraint::new("T", DType::F32)]);

const fn kernel(
    op: &'static str,
    constraints: &'static [TypeConstraint],
    host_memory: &'static [&'static str],
    name: &'static str,
    line: u32,
) -> KernelRegistration {
    KernelRegistration::new(
        op,
        op_core::DeviceType::Cpu,
        name,
        |c| FnKernel::<()>::create(c, identity),
        "bad.rs",
        line,
    )
    .with_constraints(constraints)
    .with_host_memory(host_memory)
}

/// A registry of `Good`, `Other` (with its f32 kernel) and `extra`.
fn with_extra(
    ops: &[&'static OpRegistration],
    kernels: &[&'static KernelRegistration],
) -> Registry {
    let mut all_ops = vec![&GOOD, &OTHER];
    all_ops.extend_from_slice(ops);
    let mut all_kernels = vec![&GOOD_F32, &GOOD_I32, &OTHER_F32];
    all_kernels.extend_from_slice(kernels);
    Registry::new(all_ops, all_kernels)
}

/// Checks that `registry` has exactly one conflict, of `kind`, about op
/// `op`, whose message contains `parts`; that `check()` and the listing
/// report it; that `op` cannot run and `Good` can.
#[track_caller]
fn assert_one_conflict(registry: Registry, kind: ConflictKind, op: &str, parts: &[&str]) {
    let registry = assert_one_listed_conflict(registry, kind, op, parts);
    let conflict = registry.conflicts()[0].clone();
    let err = registry.op(op).unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert_eq!(
        err.message(),
        format!(
            "op '{op}' cannot run because its registrations conflict:\n  {}",
            conflict.message
        )
    );

    let runtime = Runtime::with_registry(Arc::new(registry));
    let err = OpCall::new(op)
        .input(Tensor::scalar(1.0f32))
        .run_on(&runtime)
        .unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert_good_runs(&runtime);
}

/// Checks that `registry` has exactly one conflict, of `kind`, about op
/// `op`, whose message contains `parts`, and that `check()` and the
/// listing report it; returns the registry.
#[track_caller]
fn assert_one_listed_conflict(
    registry: Registry,
    kind: ConflictKind,
    op: &str,
    parts: &[&str],
) -> Registry {
    let conflicts = registry.conflicts();
    assert_eq!(conflicts.len(), 1, "{conflicts:#?}");
    let conflict = &conflicts[0];
    assert_eq!(conflict.kind, kind);
    assert_eq!(conflict.op, op);
    for part in parts {
        assert!(
            conflict.message.contains(part),
            "expected {part:?} in the conflict:\n{}",
            conflict.message
        );
    }
    assert_eq!(conflict.to_string(), conflict.message);

    let err = registry.check().unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert_eq!(
        err.message(),
        format!("1 registration conflict(s):\n  {}", conflict.message)
    );

    let listing = registry.to_string();
    assert!(
        listing.ends_with(&format!("1 conflict(s):\n  {}\n", conflict.message)),
        "{listing}"
    );
    registry
}

/// Checks that `Good` runs on `runtime` for both of its types.
#[track_caller]
fn assert_good_runs(runtime: &Runtime) {
    for t in [Tensor::scalar(2.0f32), Tensor::scalar(2i32)] {
        let out = OpCall::new("Good").input(&t).run_on(runtime).unwrap();
        assert_eq!(out, [t]);
    }
}

#[test]
fn a_clean_registry_has_no_conflicts() {
    let registry = with_extra(&[], &[]);
    registry.check().unwrap();
    assert!(registry.conflicts().is_empty());
    let listing = registry.to_string();
    assert_eq!(
        listing,
        "2 op(s):\
         \n  Good  (good.rs:1)\
         \n    kernel good::<f32>: device='cpu'; T=float\
         \n    kernel good::<i32>: device='cpu'; T=int32; host_memory: x\
         \n  Other  (other.rs:10)\
         \n    kernel other::<f32>: device='cpu'; T=float\n"
    );
    let good = registry.op("Good").unwrap();
    assert_eq!(good.kernels().len(), 2);
    assert_eq!(good.registration().file, "good.rs");
    assert_eq!(good.kernels()[1].host_memory, ["x"]);
    assert_eq!(good.kernels()[0].describe(), "device='cpu'; T=float");
}

#[test]
fn registration_order_does_not_matter() {
    let a = Registry::new([&OTHER, &GOOD], [&OTHER_F32, &GOOD_I32, &GOOD_F32]);
    let b = Registry::new([&GOOD, &OTHER], [&GOOD_F32, &GOOD_I32, &OTHER_F32]);
    assert_eq!(a.to_string(), b.to_string());
}

static DUPLICATE_OP: OpRegistration = OpRegistration::new(
    "Good",
    || OpDefBuilder::new("Good").input("x: int32").build(),
    "zzz_dup.rs",
    7,
);

#[test]
fn duplicate_op() {
    let registry = Registry::new([&OTHER, &DUPLICATE_OP, &GOOD], [&OTHER_F32]);
    let conflicts = registry.conflicts();
    assert_eq!(conflicts.len(), 1);
    assert_eq!(conflicts[0].kind, ConflictKind::DuplicateOp);
    assert_eq!(
        conflicts[0].message,
        "op 'Good' is registered twice, at good.rs:1 and at zzz_dup.rs:7: rename one (ops can be namespaced, as 'MyProject>Good')"
    );
    let err = registry.op("Good").unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert!(err.message().contains("good.rs:1"), "{err}");
    assert!(err.message().contains("zzz_dup.rs:7"), "{err}");
    let check = registry.check().unwrap_err();
    assert!(check.message().contains("registered twice"), "{check}");
    // Other ops are unaffected.
    let runtime = Runtime::with_registry(Arc::new(registry));
    let out = OpCall::new("Other")
        .input(Tensor::scalar(1.0f32))
        .run_on(&runtime)
        .unwrap();
    assert_eq!(out, [Tensor::scalar(1.0f32)]);
}

static INVALID_OP: OpRegistration = OpRegistration::new(
    "Broken",
    || {
        OpDefBuilder::new("Broken")
            .input("x: T")
            .output("y: T")
            .build()
    },
    "broken.rs",
    4,
);
static MISNAMED_OP: OpRegistration = OpRegistration::new(
    "Misnamed",
    || OpDefBuilder::new("Renamed").input("x: int32").build(),
    "misnamed.rs",
    5,
);

#[test]
fn invalid_op() {
    let registry = with_extra(&[&INVALID_OP], &[]);
    assert_one_conflict(
        registry,
        ConflictKind::InvalidOp,
        "Broken",
        &["op 'Broken' (at broken.rs:4) is invalid: ", "'T'"],
    );
}

#[test]
fn op_building_a_definition_of_another_name() {
    let registry = with_extra(&[&MISNAMED_OP], &[]);
    assert_one_conflict(
        registry,
        ConflictKind::InvalidOp,
        "Misnamed",
        &["op 'Misnamed' (at misnamed.rs:5) builds a definition named 'Renamed'"],
    );
}

static FOR_UNKNOWN_OP: KernelRegistration = kernel(
    "Gooood",
    &[TypeConstraint::new("T", DType::F32)],
    &[],
    "gooood",
    20,
);
static FOR_NOBODY: KernelRegistration = kernel("Xyzzy", &[], &[], "xyzzy", 21);

#[test]
fn kernel_for_unknown_op_with_a_suggestion() {
    let registry = with_extra(&[], &[&FOR_UNKNOWN_OP]);
    assert_one_listed_conflict(
        registry,
        ConflictKind::KernelForUnknownOp,
        "Gooood",
        &[
            "kernel gooood (device='cpu'; T=float) at bad.rs:20 is for op 'Gooood', which is not registered; did you mean 'Good'?",
        ],
    );
    let registry = with_extra(&[], &[&FOR_NOBODY]);
    assert_eq!(
        registry.conflicts()[0].message,
        "kernel xyzzy (device='cpu') at bad.rs:21 is for op 'Xyzzy', which is not registered"
    );
}

#[test]
fn calling_an_op_that_only_a_kernel_names_is_not_found_with_the_suggestion() {
    // The op is what is missing (often a typo in the kernel's `op = ".."`):
    // NotFound with the closest op, not "registrations conflict".
    let registry = with_extra(&[], &[&FOR_UNKNOWN_OP]);
    let err = registry.op("Gooood").unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{err}");
    assert_eq!(
        err.message(),
        "op 'Gooood' is not registered: did you mean 'Good'? (2 ops are registered; if it is \
         defined in another crate, make sure that crate is linked, e.g. with `use that_crate as _;`)\
         ; kernels registered for it, with no op: gooood (device='cpu'; T=float) at bad.rs:20"
    );

    let runtime = Runtime::with_registry(Arc::new(registry));
    let err = OpCall::new("Gooood")
        .input(Tensor::scalar(1.0f32))
        .run_on(&runtime)
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{err}");
    assert!(err.message().contains("did you mean 'Good'?"), "{err}");
    assert_good_runs(&runtime);

    // With no op close to its name: NotFound, naming the kernel.
    let registry = with_extra(&[], &[&FOR_NOBODY]);
    let err = registry.op("Xyzzy").unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{err}");
    assert!(
        err.message()
            .starts_with("op 'Xyzzy' is not registered (2 ops"),
        "{err}"
    );
    assert!(
        err.message()
            .ends_with("kernels registered for it, with no op: xyzzy (device='cpu') at bad.rs:21"),
        "{err}"
    );
}

static DUPLICATE_KERNEL: KernelRegistration = kernel(
    "Other",
    &[TypeConstraint::new("T", DType::F32)],
    &[],
    "other_again::<f32>",
    30,
);

#[test]
fn duplicate_kernel() {
    let registry = with_extra(&[], &[&DUPLICATE_KERNEL]);
    assert_one_conflict(
        registry,
        ConflictKind::DuplicateKernel,
        "Other",
        &[
            // Kernels are added in order of source location: bad.rs first.
            "kernel other::<f32> (device='cpu'; T=float) at other.rs:11 for op 'Other' \
             has the same device and constraints as kernel other_again::<f32> at bad.rs:30: \
             remove one, or give them different `types(...)`",
        ],
    );
    // The same kernel on another device is not a duplicate.
    static ON_GPU: KernelRegistration = KernelRegistration::new(
        "Other",
        op_core::DeviceType::Gpu,
        "other_gpu",
        |c| FnKernel::<()>::create(c, identity),
        "bad.rs",
        31,
    )
    .with_constraints(&[TypeConstraint::new("T", DType::F32)]);
    let registry = with_extra(&[], &[&ON_GPU]);
    registry.check().unwrap();
    assert_eq!(registry.op("Other").unwrap().kernels().len(), 2);
}

static UNKNOWN_ATTR: KernelRegistration = kernel(
    "Other",
    &[TypeConstraint::new("U", DType::F32)],
    &[],
    "other_u",
    40,
);
static NOT_A_TYPE_ATTR: KernelRegistration = kernel(
    "Other",
    &[TypeConstraint::new("n", DType::I32)],
    &[],
    "other_n",
    41,
);

#[test]
fn unknown_constraint_attr() {
    let registry = with_extra(&[], &[&UNKNOWN_ATTR]);
    assert_one_conflict(
        registry,
        ConflictKind::UnknownConstraintAttr,
        "Other",
        &[
            "kernel other_u (device='cpu'; U=float) at bad.rs:40 for op 'Other' \
             constrains attr 'U', which is not a type attr of the op (its type attrs: T)",
        ],
    );
    // An attr that exists but is not a type.
    let registry = with_extra(&[], &[&NOT_A_TYPE_ATTR]);
    assert_one_conflict(
        registry,
        ConflictKind::UnknownConstraintAttr,
        "Other",
        &[
            "kernel other_n",
            "bad.rs:41",
            "constrains attr 'n', which is not a type attr",
        ],
    );
}

static DISALLOWED_TYPE: KernelRegistration = kernel(
    "Other",
    &[TypeConstraint::new("T", DType::F64)],
    &[],
    "other::<f64>",
    50,
);

#[test]
fn disallowed_constraint_type() {
    let registry = with_extra(&[], &[&DISALLOWED_TYPE]);
    assert_one_conflict(
        registry,
        ConflictKind::DisallowedConstraintType,
        "Other",
        &[
            "kernel other::<f64> (device='cpu'; T=double) at bad.rs:50 for op 'Other' \
             constrains attr 'T' to double, which the op does not allow (allowed: float, int32)",
        ],
    );
}

static UNKNOWN_HOST_MEMORY: KernelRegistration = kernel(
    "Other",
    &[TypeConstraint::new("T", DType::I32)],
    &["x", "nope"],
    "other::<i32>",
    60,
);

#[test]
fn unknown_host_memory_arg() {
    let registry = with_extra(&[], &[&UNKNOWN_HOST_MEMORY]);
    assert_one_conflict(
        registry,
        ConflictKind::UnknownHostMemoryArg,
        "Other",
        &[
            "kernel other::<i32> (device='cpu'; T=int32) at bad.rs:60 for op 'Other' \
             puts 'nope' in host memory, but the op has no input or output of that name",
        ],
    );
}

#[test]
fn several_conflicts_are_all_reported() {
    let registry = with_extra(
        &[&INVALID_OP, &DUPLICATE_OP],
        &[
            &FOR_UNKNOWN_OP,
            &DUPLICATE_KERNEL,
            &UNKNOWN_ATTR,
            &DISALLOWED_TYPE,
            &UNKNOWN_HOST_MEMORY,
        ],
    );
    let kinds: Vec<ConflictKind> = registry.conflicts().iter().map(|c| c.kind).collect();
    for kind in [
        ConflictKind::InvalidOp,
        ConflictKind::DuplicateOp,
        ConflictKind::KernelForUnknownOp,
        ConflictKind::DuplicateKernel,
        ConflictKind::UnknownConstraintAttr,
        ConflictKind::DisallowedConstraintType,
        ConflictKind::UnknownHostMemoryArg,
    ] {
        assert!(kinds.contains(&kind), "{kind:?} missing from {kinds:?}");
    }
    let err = registry.check().unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert!(
        err.message()
            .starts_with(&format!("{} registration conflict(s):", kinds.len())),
        "{err}"
    );
    for conflict in registry.conflicts() {
        assert!(err.message().contains(&conflict.message), "{err}");
    }
    for location in [
        "broken.rs:4",
        "zzz_dup.rs:7",
        "bad.rs:20",
        "bad.rs:30",
        "bad.rs:40",
        "bad.rs:50",
        "bad.rs:60",
    ] {
        assert!(
            err.message().contains(location),
            "{location} missing from {err}"
        );
    }
    // The op `Other` lists every conflict about it.
    let other = registry.op("Other").unwrap_err();
    assert_eq!(other.code(), Code::FailedPrecondition);
    for line in ["bad.rs:30", "bad.rs:40", "bad.rs:50", "bad.rs:60"] {
        assert!(other.message().contains(line), "{other}");
    }
    assert!(!other.message().contains("bad.rs:20"), "{other}");
    assert!(registry.op("Good").is_err(), "Good was registered twice");
}

#[test]
fn unknown_op_is_not_found() {
    let registry = with_extra(&[], &[]);
    let err = registry.op("Godo").unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_eq!(
        err.message(),
        "op 'Godo' is not registered: did you mean 'Good'? (2 ops are registered; if it is \
         defined in another crate, make sure that crate is linked, e.g. with `use that_crate as _;`)"
    );
    assert!(registry.get("Godo").is_none());
}

#[test]
fn an_unknown_op_with_no_close_name_has_no_dangling_colon() {
    let registry = with_extra(&[], &[]);
    let err = registry.op("ZeroOut").unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_eq!(
        err.message(),
        "op 'ZeroOut' is not registered (2 ops are registered; if it is defined in another \
         crate, make sure that crate is linked, e.g. with `use that_crate as _;`)"
    );
}

/// An op of op-kernels' registered from op-kernels: what the registry
/// sees when op-kernels is linked.
static FROM_OP_KERNELS: OpRegistration = OpRegistration::new(
    "NoOp",
    || OpDefBuilder::new("NoOp").build(),
    "op-kernels/src/control/ops.rs",
    1,
)
.with_module_path("op_kernels::control");

#[test]
fn a_missing_framework_op_says_it_ships_in_op_kernels_and_how_to_link_it() {
    // op-kernels is not linked: none of its ops is registered.
    let registry = with_extra(&[], &[]);
    let err = registry.op("Placeholder").unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_eq!(
        err.message(),
        "op 'Placeholder' is not registered: it ships in op-kernels, which is not linked: add \
         op-kernels to [dependencies] and call `op_kernels::link()` once, in `main` or in each \
         test file (or write `use op_kernels as _;`) (2 ops are registered)"
    );
    assert!(
        registry
            .op("DestroyResourceOp")
            .unwrap_err()
            .message()
            .contains("ships in op-kernels")
    );
    // A misspelt one: the suggestion, and where it ships.
    assert_eq!(
        registry.missing_op("Placeholdr").to_string(),
        "did you mean 'Placeholder'? It ships in op-kernels, which is not linked: add op-kernels \
         to [dependencies] and call `op_kernels::link()` once, in `main` or in each test file \
         (or write `use op_kernels as _;`)"
    );
    // A registered op closer than any of op-kernels' is the suggestion.
    assert_eq!(registry.missing_op("Goo"), MissingOp::Close("Good"));
    // op-kernels' tutorial ops are not framework ops: a user's crate may
    // define its own ZeroOut.
    assert_eq!(registry.missing_op("ZeroOut"), MissingOp::Unknown);
    assert_eq!(registry.missing_op("Frobnicate"), MissingOp::Unknown);

    // With op-kernels linked, an op it lacks is not said to ship there.
    let linked = with_extra(&[&FROM_OP_KERNELS], &[]);
    assert_eq!(linked.missing_op("Placeholder"), MissingOp::Unknown);
    let err = linked.op("Placeholder").unwrap_err();
    assert!(
        err.message().contains("if it is defined in another crate"),
        "{err}"
    );
    assert_eq!(
        linked.missing_op("NoOpp").to_string(),
        "did you mean 'NoOp'?"
    );
}

#[test]
fn a_huge_unknown_op_name_is_rejected_with_a_short_message_and_no_suggestion() {
    let registry = with_extra(&[], &[]);
    // Close to a registered name, and 1 MB long: quoted in part, not
    // searched for a suggestion.
    let name = format!("Goo{}", "d".repeat(1 << 20));
    let err = registry.op(&name).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    let message = err.to_string();
    assert!(message.len() < 1024, "{} bytes", message.len());
    assert!(
        message.contains(&format!("…' ({} bytes) is not registered", name.len())),
        "{message}"
    );
    assert!(!message.contains("did you mean"), "{message}");

    // Through OpCall too, and the same for an unknown attr name.
    let runtime = Runtime::with_registry(Arc::new(registry));
    let err = OpCall::new(&name).run_on(&runtime).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert!(err.to_string().len() < 1024);
    let attr = format!("T{}", "x".repeat(1 << 20));
    let err = OpCall::new("Good")
        .input(Tensor::scalar(1.0f32))
        .attr(&attr, 1i64)
        .run_on(&runtime)
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    let message = err.to_string();
    assert!(message.len() < 1024, "{} bytes", message.len());
    assert!(message.contains("has no attr named 'Txxx"), "{message}");
    assert!(!message.contains("did you mean"), "{message}");
    // A huge string value, where the input implies a type.
    let value = "v".repeat(10 << 20);
    let err = OpCall::new("Good")
        .input(Tensor::scalar(1.0f32))
        .attr("T", value.as_str())
        .run_on(&runtime)
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    let message = err.to_string();
    assert!(message.len() < 1024, "{} bytes", message.len());
    assert!(message.contains("attr 'T' was given as \"vvv"), "{message}");
}
