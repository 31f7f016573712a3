//! `require_linked!` and the registry's check of it: a required crate
//! counts as linked when some op, kernel or gradient records a
//! `module_path` in it; one that submitted nothing is listed, blocks every
//! op with an error naming it and the fix, and is suggested a close name.
//! Isolated registries of `static` registrations test the check; this test
//! binary's own macro-declared registrations test that every macro records
//! its module path (what makes the check work for real crates).

use op_core::gradient::{Gradient, GradientRegistration, Value};
use op_core::registry::{KernelRegistration, LinkRequirement, OpRegistration, Registry};
use op_core::{
    Code, FnKernel, KernelContext, OpCall, OpDefBuilder, Result, Tensor, kernel, register_op,
};

// This binary requires itself (the test crate is named after this file)
// and nothing else, so the global registry is satisfied.
op_core::require_linked!(linking);

fn identity(ctx: &mut KernelContext<'_>, _: &()) -> Result<()> {
    let x = ctx.input(0)?.clone();
    ctx.set_output(0, x)
}

fn same_op(name: &'static str) -> std::result::Result<op_core::OpDef, op_core::SpecErrors> {
    OpDefBuilder::new(name)
        .input("x: float")
        .output("y: float")
        .build()
}

/// `Lk>Same`, declared in crate `my_kernels`.
static SAME: OpRegistration =
    OpRegistration::new("Lk>Same", || same_op("Lk>Same"), "my_kernels/src/ops.rs", 3)
        .with_module_path("my_kernels::ops");
/// Its kernel, in crate `my_kernels` too.
static SAME_CPU: KernelRegistration = KernelRegistration::new(
    "Lk>Same",
    op_core::DeviceType::Cpu,
    "same",
    |c| FnKernel::<()>::create(c, identity),
    "my_kernels/src/cpu.rs",
    7,
)
.with_module_path("my_kernels::cpu");
/// A kernel of crate `gpu_kernels` for an op nobody declared: a conflict,
/// but the crate did submit it.
static STRAY_KERNEL: KernelRegistration = KernelRegistration::new(
    "Lk>Nowhere",
    op_core::DeviceType::Cpu,
    "stray",
    |c| FnKernel::<()>::create(c, identity),
    "gpu_kernels/src/lib.rs",
    1,
)
.with_module_path("gpu_kernels");
/// A `not_differentiable` mark, the only thing crate `grads` submits.
static ONLY_A_GRADIENT: GradientRegistration =
    GradientRegistration::not_differentiable("Lk>Same", "grads/src/lib.rs", 2)
        .with_module_path("grads::marks");
/// An op that recorded no module path: it counts for no crate.
static ANONYMOUS: OpRegistration =
    OpRegistration::new("Lk>Anonymous", || same_op("Lk>Anonymous"), "anon.rs", 1);

static NEEDS_MY_KERNELS: LinkRequirement = LinkRequirement::new("my_kernels", "main.rs", 4);
static NEEDS_GPU_KERNELS: LinkRequirement = LinkRequirement::new("gpu_kernels", "main.rs", 5);
static NEEDS_GRADS: LinkRequirement = LinkRequirement::new("grads", "main.rs", 6);
static NEEDS_TINY: LinkRequirement = LinkRequirement::new("tiny_kernels", "main.rs", 7);
static NEEDS_TINY_AGAIN: LinkRequirement = LinkRequirement::new("tiny_kernels", "lib.rs", 1);
static MISSPELLED: LinkRequirement = LinkRequirement::new("my_kernel", "main.rs", 8);

fn registry(requirements: &[&'static LinkRequirement]) -> Registry {
    Registry::new([&SAME, &ANONYMOUS], [&SAME_CPU, &STRAY_KERNEL])
        .with_gradients([&ONLY_A_GRADIENT])
        .with_link_requirements(requirements.iter().copied())
}

/// The text `UnlinkedCrate` shows for `tiny_kernels` required at `main.rs:7`.
const TINY_MISSING: &str = "crate 'tiny_kernels' (required by `require_linked!` at main.rs:7) submitted no ops, kernels or gradients: it is not linked into this program. Name it once, in `main` or in each test file: call `tiny_kernels::link()`, or write `use tiny_kernels as _;`";

#[test]
fn a_crate_counts_as_linked_by_its_ops_kernels_or_gradients() {
    let registry = registry(&[&NEEDS_MY_KERNELS, &NEEDS_GPU_KERNELS, &NEEDS_GRADS]);
    assert_eq!(registry.unlinked(), []);
    assert_eq!(
        registry.linked_crates().collect::<Vec<_>>(),
        ["gpu_kernels", "grads", "my_kernels"],
        "the first segment of each module path; an empty one counts for none"
    );
    // The stray kernel is a conflict, reported as before, and nothing more.
    let err = registry.check().unwrap_err();
    assert!(
        err.message().starts_with("1 registration conflict(s):"),
        "{err}"
    );
    assert!(!err.message().contains("not linked"), "{err}");
    assert!(registry.op("Lk>Same").is_ok());
}

#[test]
fn requirements_and_gradients_may_come_in_either_order() {
    let registry = Registry::new([&SAME], [&SAME_CPU])
        .with_link_requirements([&NEEDS_GRADS])
        .with_gradients([&ONLY_A_GRADIENT]);
    assert_eq!(registry.unlinked(), []);
}

#[test]
fn a_required_crate_that_submitted_nothing_is_reported_everywhere() {
    let registry = registry(&[&NEEDS_MY_KERNELS, &NEEDS_TINY]);
    let [missing] = registry.unlinked() else {
        panic!("{:?}", registry.unlinked())
    };
    assert_eq!(missing.requirement, &NEEDS_TINY);
    assert_eq!(missing.did_you_mean, None);
    assert_eq!(missing.to_string(), TINY_MISSING);

    let listing = format!("1 required crate(s) not linked:\n  {TINY_MISSING}");
    let err = registry.check().unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert_eq!(
        err.message(),
        format!(
            "1 registration conflict(s):\n  {}\n{listing}",
            registry.conflicts()[0]
        )
    );
    assert!(
        registry.to_string().ends_with(&format!("{listing}\n")),
        "{registry}"
    );

    // Every op is refused, the linked crate's own too, so the first op the
    // program runs says what is missing.
    for op in ["Lk>Same", "Lk>NotAnOp"] {
        let err = registry.op(op).unwrap_err();
        assert_eq!(err.code(), Code::FailedPrecondition);
        assert_eq!(err.message(), format!("op '{op}' cannot run: {listing}"));
    }
    // `get` still answers, for listings and tools.
    assert!(registry.get("Lk>Same").is_some());
}

#[test]
fn a_crate_required_twice_is_listed_once_at_its_first_requirement() {
    let registry = registry(&[&NEEDS_TINY, &NEEDS_TINY_AGAIN]);
    let [missing] = registry.unlinked() else {
        panic!("{:?}", registry.unlinked())
    };
    assert_eq!(
        missing.requirement, &NEEDS_TINY_AGAIN,
        "lib.rs sorts before main.rs"
    );
}

#[test]
fn a_misspelled_crate_name_gets_the_closest_linked_one() {
    let registry = registry(&[&MISSPELLED, &NEEDS_TINY]);
    let names: Vec<_> = registry
        .unlinked()
        .iter()
        .map(|u| (u.requirement.crate_name, u.did_you_mean))
        .collect();
    assert_eq!(
        names,
        [("my_kernel", Some("my_kernels")), ("tiny_kernels", None)],
        "sorted by name"
    );
    assert!(
        registry.unlinked()[0]
            .to_string()
            .ends_with("or write `use my_kernel as _;`; or, if the name is misspelled, did you mean 'my_kernels'?"),
        "{}",
        registry.unlinked()[0]
    );
    let err = registry.check().unwrap_err();
    assert!(
        err.message().contains("2 required crate(s) not linked:"),
        "{err}"
    );
}

// Registrations made by every macro, in this crate's root and in a module.

/// An op declared on a struct.
///
/// x: any float.
/// y: the same.
#[register_op(
    name = "Lk>StructOp",
    inputs("x: float"),
    outputs("y: float"),
    not_differentiable
)]
struct StructOp;

#[kernel(op = StructOp)]
fn struct_op(ctx: &mut KernelContext<'_>, _: &StructOp) -> Result<()> {
    let x = ctx.input(0)?.clone();
    ctx.set_output(0, x)
}

mod inner {
    use op_core::gradient::{Gradient, Value};
    use op_core::ndarray::ArrayViewD;
    use op_core::{Result, op};

    /// An op declared by a function's signature.
    ///
    /// x: a float scalar.
    /// y: its negation.
    #[op(name = "Lk>FnOp", outputs("y"))]
    pub fn fn_op(x: ArrayViewD<'_, f32>) -> f32 {
        -x.sum()
    }

    #[op_core::gradient(op = "Lk>FnOp")]
    fn fn_op_grad<V: Value>(_: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
        Ok([None])
    }

    op_core::not_differentiable!("Lk>Marked");
}

/// An op marked not differentiable from elsewhere.
///
/// x: any float.
/// y: the same.
#[register_op(name = "Lk>Marked", inputs("x: float"), outputs("y: float"))]
struct Marked;

#[op_core::gradient(op = StructOpTwin)]
fn twin_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    Ok([Some(g.grad(0)?)])
}

/// A differentiable twin of `StructOp`, for `#[gradient(op = Path)]`.
///
/// x: any float.
/// y: the same.
#[register_op(name = "Lk>StructOpTwin", inputs("x: float"), outputs("y: float"))]
struct StructOpTwin;

#[test]
fn every_macro_records_the_module_it_was_written_in() {
    let registry = Registry::global();
    let op_module = |name: &str| registry.get(name).unwrap().registration().module_path;
    assert_eq!(op_module("Lk>StructOp"), "linking");
    assert_eq!(op_module("Lk>FnOp"), "linking::inner");
    let kernel_modules: Vec<_> = ["Lk>StructOp", "Lk>FnOp"]
        .iter()
        .map(|op| registry.get(op).unwrap().kernels()[0].module_path)
        .collect();
    assert_eq!(kernel_modules, ["linking", "linking::inner"]);
    let gradient_module = |op: &str| registry.gradient(op).unwrap().unwrap().module_path;
    assert_eq!(
        gradient_module("Lk>StructOp"),
        "linking",
        "`not_differentiable` on #[register_op]"
    );
    assert_eq!(gradient_module("Lk>FnOp"), "linking::inner", "#[gradient]");
    assert_eq!(
        gradient_module("Lk>Marked"),
        "linking::inner",
        "not_differentiable!"
    );
    assert_eq!(gradient_module("Lk>StructOpTwin"), "linking");

    // So this binary's requirement of itself is met, and its ops run.
    assert_eq!(registry.unlinked(), []);
    assert!(registry.linked_crates().any(|name| name == "linking"));
    let y = OpCall::new("Lk>FnOp")
        .input(Tensor::scalar(2.0f32))
        .run()
        .unwrap();
    assert_eq!(y[0].scalar_value::<f32>().unwrap(), -2.0);
}

#[test]
fn require_linked_submits_one_requirement_per_name_where_it_is_written() {
    op_core::require_linked!(linking, linking,);
    let mine: Vec<_> = op_core::inventory::iter::<LinkRequirement>
        .into_iter()
        .filter(|r| r.crate_name == "linking")
        .map(|r| (r.file, r.line))
        .collect();
    assert_eq!(mine.len(), 3, "{mine:?}");
    assert!(
        mine.iter()
            .all(|(file, _)| *file == "op-core/tests/linking.rs")
    );
    // A requirement written twice is listed once if unmet; met, it is silent.
    assert_eq!(Registry::global().unlinked(), []);
}
