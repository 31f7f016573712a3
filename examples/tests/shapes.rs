//! The shape functions of the downstream crate's ops, one line per case in
//! the `INFER_OK` / `INFER_ERROR` notation: `ClipByValue` keeps its input's
//! shape, `L2Norm` gives a scalar whatever its input. And the kernels agree
//! with them when run with the runtime's shape check on.

use op_core::shape_inference::PartialShape;
use op_core::shape_inference::testing::ShapeTest;
use op_core::{DType, OpCall, Registry, Runtime, Tensor};

#[test]
fn clip_by_value_keeps_the_input_shape() {
    examples::link();
    for dtype in [DType::F32, DType::F64, DType::I32, DType::I64] {
        let t = ShapeTest::new("Examples>ClipByValue").attr("T", dtype);
        t.ok("[2,3]", "in0");
        t.ok("[?,3]", "in0");
        t.ok("?", "in0");
        t.ok("[]", "in0");
        t.error("[2];[2]", "got 2 input shape(s) for 1 input tensor(s)");
    }
}

#[test]
fn l2_norm_is_a_scalar() {
    examples::link();
    for dtype in [DType::F32, DType::F64] {
        let t = ShapeTest::new("Examples>L2Norm").attr("T", dtype);
        t.ok("[4]", "[]");
        t.ok("[2,?,3]", "[]");
        t.ok("?", "[]");
        t.ok("[]", "[]");
        t.ok("[0]", "[]");
        t.error("", "got 0 input shape(s) for 1 input tensor(s)");
    }
}

#[test]
fn the_registry_infers_shapes_without_running_a_kernel() {
    examples::link();
    let registry = Registry::global();
    let shape = |s: &str| s.parse::<PartialShape>().unwrap();
    // Far too large to allocate: only the shape functions run.
    let huge = [shape("[100000,100000,100000]")];
    let out = registry
        .infer_shapes(
            "Examples>ClipByValue",
            &[DType::F32.into()],
            &[],
            &huge,
            &[],
        )
        .unwrap();
    assert_eq!(out, huge);
    let out = registry
        .infer_shapes("Examples>L2Norm", &[DType::F64.into()], &[], &huge, &[])
        .unwrap();
    assert_eq!(out, [shape("[]")]);
}

#[test]
fn the_kernels_agree_with_their_shape_functions() {
    examples::link();
    let runtime = Runtime::new().check_shapes(true);
    for dims in [&[4][..], &[2, 2], &[], &[0, 3]] {
        let n = dims.iter().product();
        let x = Tensor::from_vec(dims, vec![0.5f32; n]).unwrap();
        let clipped = OpCall::new("Examples>ClipByValue")
            .input(&x)
            .run_on(&runtime)
            .unwrap();
        assert_eq!(clipped[0].dims(), dims);
        let norm = OpCall::new("Examples>L2Norm")
            .input(&x)
            .run_on(&runtime)
            .unwrap();
        assert_eq!(norm[0].dims(), [0usize; 0]);
    }
}
