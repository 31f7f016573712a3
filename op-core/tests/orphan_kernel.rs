//! A kernel registered with the macros for an op that does not exist (a
//! typo in `#[kernel(op = "...")]`): the registry lists it as a conflict,
//! and calling the misspelled op is `NotFound` with the closest op's name,
//! not a `FailedPrecondition` about conflicting registrations.
//!
//! Its own test binary: the orphan kernel is a conflict of the global
//! registry, which other test binaries check to be clean.

use op_core::registry::{ConflictKind, Registry};
use op_core::{Code, KernelContext, OpCall, Result, Tensor, kernel, register_op};

/// `y = 3 * x`.
#[register_op(name = "Orphan>Triple", inputs("x: float"), outputs("y: float"))]
struct Triple;

#[kernel(op = Triple)]
fn triple(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.unary(0, 0, 1, |x: &f32| 3.0 * x)
}

/// A second kernel, for a misspelled op name.
#[kernel(op = "Orphan>Tripple")]
fn tripple(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.unary(0, 0, 1, |x: &f32| 3.0 * x)
}

#[test]
fn calling_a_misspelled_op_that_has_a_kernel_is_not_found_with_a_suggestion() {
    let err = OpCall::new("Orphan>Tripple")
        .input(Tensor::scalar(1.0f32))
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{err}");
    let message = err.message();
    assert!(
        message.starts_with("op 'Orphan>Tripple' is not registered: did you mean 'Orphan>Triple'?"),
        "{err}"
    );
    assert!(
        message.contains("kernels registered for it, with no op: tripple (device='cpu') at "),
        "{err}"
    );
    assert!(message.contains("orphan_kernel.rs:"), "{err}");
}

#[test]
fn the_registry_still_reports_the_orphan_kernel_as_a_conflict() {
    let conflicts = Registry::global().conflicts();
    assert_eq!(conflicts.len(), 1, "{conflicts:#?}");
    assert_eq!(conflicts[0].kind, ConflictKind::KernelForUnknownOp);
    assert_eq!(conflicts[0].op, "Orphan>Tripple");
    assert!(
        conflicts[0]
            .message
            .ends_with("did you mean 'Orphan>Triple'?"),
        "{}",
        conflicts[0].message
    );
}

#[test]
fn the_op_the_kernel_meant_still_runs() {
    let y = Triple::call(Tensor::scalar(2.0f32)).run().unwrap();
    assert_eq!(y.scalar_value::<f32>().unwrap(), 6.0);
}
