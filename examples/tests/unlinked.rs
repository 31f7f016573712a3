//! The link-time pitfall, shown: this test binary depends on `op-kernels`
//! (through the package's dependencies) but never names it, so the linker
//! drops that crate and none of its ops or kernels are registered. The
//! runtime's error says what to do about it. Compare `linking.rs`.

use op_core::{Code, OpCall, Registry, Tensor};

#[test]
fn a_crate_nobody_names_is_not_linked() {
    let registry = Registry::global();
    assert!(registry.get("ZeroOut").is_none(), "{registry}");
    assert!(registry.get("Examples>ClipByValue").is_none(), "{registry}");
    let err = OpCall::new("ZeroOut")
        .input(Tensor::scalar(1i32))
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert!(
        err.message()
            .contains("make sure that crate is linked, e.g. with `use that_crate as _;`"),
        "{err}"
    );
    // A framework op of op-kernels: the error names the crate to link.
    let err = OpCall::new("Identity")
        .input(Tensor::scalar(1i32))
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert!(
        err.message()
            .contains("it ships in op-kernels, which is not linked: add op-kernels to [dependencies] and call `op_kernels::link()` once"),
        "{err}"
    );
}
