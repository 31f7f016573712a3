//! The one way to be sure a kernel crate is linked: name it. This test
//! binary calls `examples::link()`, `op_kernels::link()` and
//! `tiny_kernels::link()`, so it sees the three crates' ops and kernels,
//! runs them as a user would, and its `require_linked!` of them is met.

use examples::{ClipByValue, L2Norm};
use op_core::{Code, OpCall, Registry, Tensor};

// Every crate this binary names, required: the registry confirms each is
// linked (`require_linked.rs` shows one that is not).
op_core::require_linked!(examples, op_kernels, tiny_kernels);

#[test]
fn named_crates_are_linked_and_their_ops_run() {
    examples::link();
    op_kernels::link();
    let registry = Registry::global();
    registry.check().unwrap();
    for op in [
        "Examples>ClipByValue",
        "Examples>L2Norm",
        "ZeroOut",
        "Example",
    ] {
        let entry = registry.op(op).unwrap();
        assert!(!entry.kernels().is_empty(), "{op} has no kernels");
    }
    let listing = registry.to_string();
    assert!(
        listing.contains("kernel ClipKernel::<f64>: device='cpu'; T=double"),
        "{listing}"
    );
    assert!(
        listing.contains("kernel l2_norm::<f32>: device='cpu'; T=float"),
        "{listing}"
    );
}

#[test]
fn clip_by_value_clamps_and_checks_its_bounds_once() {
    examples::link();
    let t = examples::sample().unwrap();
    let clipped = ClipByValue::call(&t).clip_max(0.5).run().unwrap();
    assert_eq!(clipped.as_slice::<f32>().unwrap(), [0.0, 0.25, 0.5, 0.5]);
    // The caller's tensor is shared, so it is left alone.
    assert_eq!(t.as_slice::<f32>().unwrap(), [-2.0, 0.25, 0.5, 3.0]);

    let ints = Tensor::from_vec([3], vec![-5i64, 3, 9]).unwrap();
    let clipped = ClipByValue::call(ints)
        .clip_min(-1.0)
        .clip_max(4.0)
        .run()
        .unwrap();
    assert_eq!(clipped.as_slice::<i64>().unwrap(), [-1, 3, 4]);

    let err = ClipByValue::call(&t)
        .clip_min(2.0)
        .clip_max(1.0)
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(err.message(), "clip_min (2) must not exceed clip_max (1)");
    assert!(
        err.context()[0].contains("while creating kernel ClipKernel::<f32>"),
        "{err}"
    );
}

#[test]
fn l2_norm_declared_by_its_signature() {
    examples::link();
    let t = Tensor::from_vec([2], vec![3.0f64, 4.0]).unwrap();
    assert_eq!(
        L2Norm::call(&t)
            .run()
            .unwrap()
            .scalar_value::<f64>()
            .unwrap(),
        5.0
    );
    assert_eq!(examples::l2_norm(t.view::<f64>().unwrap()), 5.0);
    let err = OpCall::new("Examples>L2Norm")
        .input(Tensor::scalar(1i32))
        .run()
        .unwrap_err();
    assert_eq!(
        err.message(),
        "op Examples>L2Norm: input 'x' has type int32, but attr 'T' allows only float, double"
    );
}

/// The README's "Running ops" snippet.
#[test]
fn running_ops_as_the_readme_shows() -> op_core::Result<()> {
    op_kernels::link();
    let t = Tensor::from_vec([3], vec![7i32, 8, 9])?;
    let (a, b) = (Tensor::scalar(1i32), Tensor::scalar(2i32));
    let x = Tensor::from_vec([2], vec![1.0f32, -3.0])?;

    let out = OpCall::new("ZeroOutPreserveIndex")
        .input(&t)
        .attr("preserve_index", 1i64)
        .run()?;
    assert_eq!(out[0].as_slice::<i32>()?, [0, 8, 0]);
    let sums = OpCall::new("IntListInputExample")
        .input_list([a, b])
        .run()?;
    assert_eq!(sums[0].scalar_value::<i32>()?, 3);

    let example =
        op_core::Runtime::global().prepare("Example", &[op_core::DType::F32.into()], &[])?;
    let y = example.run(vec![x])?;
    assert_eq!(y[0].as_slice::<f32>()?, [2.0, -6.0]);
    Ok(())
}

#[test]
fn required_crates_that_are_named_are_linked_and_their_ops_run() {
    tiny_kernels::link();
    let registry = Registry::global();
    assert_eq!(registry.unlinked(), []);
    let linked: Vec<&str> = registry.linked_crates().collect();
    for name in ["examples", "op_kernels", "tiny_kernels"] {
        assert!(linked.contains(&name), "{name} in {linked:?}");
    }
    let x = Tensor::from_vec([2], vec![3.0f32, -1.0]).unwrap();
    let y = tiny_kernels::Halve::call(&x).run().unwrap();
    assert_eq!(y.as_slice::<f32>().unwrap(), [1.5, -0.5]);
}
