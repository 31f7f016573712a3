//! `require_linked!` catching a crate that is not linked: this test binary
//! requires `examples` (which it names, so it is linked) and `tiny_kernels`
//! (a dev-dependency it never names, so the linker drops it). The registry
//! lists `tiny_kernels` and refuses every op, with the fix in the message.
//! Compare `linking.rs`, where both are named and required.

use op_core::{Code, OpCall, Registry};

op_core::require_linked!(examples, tiny_kernels);

/// What the registry says about `tiny_kernels`, required on line 9.
const MISSING: &str = "1 required crate(s) not linked:\n  crate 'tiny_kernels' (required by `require_linked!` at examples/tests/require_linked.rs:9) submitted no ops, kernels or gradients: it is not linked into this program. Name it once, in `main` or in each test file: call `tiny_kernels::link()`, or write `use tiny_kernels as _;`";

#[test]
fn the_crate_nobody_names_is_reported_and_the_named_one_is_not() {
    examples::link();
    let registry = Registry::global();
    let unlinked: Vec<&str> = registry
        .unlinked()
        .iter()
        .map(|u| u.requirement.crate_name)
        .collect();
    assert_eq!(unlinked, ["tiny_kernels"]);
    assert!(registry.get("Tiny>Halve").is_none(), "{registry}");
    assert!(registry.get("Examples>ClipByValue").is_some());
    assert!(registry.linked_crates().any(|name| name == "examples"));

    let err = registry.check().unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert_eq!(err.message(), MISSING);
    assert!(registry.to_string().ends_with(&format!("{MISSING}\n")));
}

#[test]
fn the_first_op_the_program_runs_says_which_crate_is_missing() {
    examples::link();
    let t = examples::sample().unwrap();
    // An op of the linked crate is refused too: the program said it needs
    // both, and learns at its first op, not at the first missing one.
    let err = examples::ClipByValue::call(&t).run().unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert_eq!(
        err.message(),
        format!("op 'Examples>ClipByValue' cannot run: {MISSING}")
    );
    let err = OpCall::new("Tiny>Halve").input(&t).run().unwrap_err();
    assert_eq!(
        err.message(),
        format!("op 'Tiny>Halve' cannot run: {MISSING}")
    );
}
