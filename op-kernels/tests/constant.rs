//! `Const`, `Placeholder` and `PlaceholderWithDefault`: TensorFlow's shape
//! functions and kernels (`tensorflow_opdefs.rs` compares their OpDefs
//! with TensorFlow's).

use op_core::shape_inference::testing::ShapeTest;
use op_core::{AttrValue, Code, DType, ShapeValue, Tensor, TensorValue};
use op_kernels::constant::{Const, Placeholder, PlaceholderWithDefault};

mod common;
use common::assert_contains;

fn value_of(t: &Tensor) -> AttrValue {
    AttrValue::from(t.to_tensor_value().unwrap())
}

#[test]
fn const_outputs_its_value_attr() {
    let t = Tensor::from_vec([2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    let out = Const::call(value_of(&t), DType::F32).run().unwrap();
    assert_eq!(out, t);
    let s = Tensor::strings([2], ["a", "bc"]).unwrap();
    assert_eq!(Const::call(value_of(&s), DType::String).run().unwrap(), s);
}

#[test]
fn const_converts_its_value_once_and_shares_it_with_every_run() {
    let t = Tensor::from_vec([64], (0..64).map(|i| i as f64).collect()).unwrap();
    let first = Const::call(value_of(&t), DType::F64).run().unwrap();
    let second = Const::call(value_of(&t), DType::F64).run().unwrap();
    assert!(!first.is_unique(), "the kernel keeps its own reference");
    assert_eq!(
        first.as_slice::<f64>().unwrap().as_ptr(),
        second.as_slice::<f64>().unwrap().as_ptr()
    );
}

#[test]
fn const_with_a_value_of_another_dtype_is_tensorflows_type_mismatch_error() {
    let t = Tensor::from_vec([2], vec![1i32, 2]).unwrap();
    let err = Const::call(value_of(&t), DType::F32).run().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &["Type mismatch between value (int32) and dtype (float)"],
    );
}

#[test]
fn const_with_a_value_that_does_not_fill_its_shape_is_an_error() {
    let value = TensorValue {
        dtype: Some(DType::F32),
        shape: Some(ShapeValue::from_sizes(&[2])),
        tensor_content: vec![0; 3],
        ..TensorValue::default()
    };
    let err = Const::call(value, DType::F32).run().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["attr 'value'"]);
}

#[test]
fn const_shape_is_its_values_shape() {
    let t = |shape: &[i64]| {
        let value = TensorValue {
            dtype: Some(DType::F32),
            shape: Some(ShapeValue::from_sizes(shape)),
            ..TensorValue::default()
        };
        ShapeTest::new("Const")
            .attr("value", value)
            .attr("dtype", DType::F32)
    };
    op_kernels::link();
    t(&[2, 3]).ok("", "[2,3]");
    t(&[]).ok("", "[]");
    t(&[0, 5]).ok("", "[0,5]");
    t(&[-1, 3]).error(
        "",
        "attr 'value' has shape [?,3], but a tensor's shape must be fully known",
    );
    // No shape at all is a scalar, as in TensorFlow.
    let scalar = TensorValue {
        dtype: Some(DType::I32),
        int_val: vec![7],
        ..TensorValue::default()
    };
    ShapeTest::new("Const")
        .attr("value", scalar)
        .attr("dtype", DType::I32)
        .ok("", "[]");
}

#[test]
fn placeholder_shape_is_its_shape_attr() {
    op_kernels::link();
    let t = |shape: ShapeValue| {
        ShapeTest::new("Placeholder")
            .attr("dtype", DType::F32)
            .attr("shape", shape)
    };
    t(ShapeValue::from_sizes(&[-1, 3])).ok("", "[?,3]");
    t(ShapeValue::from_sizes(&[])).ok("", "[]");
    t(ShapeValue::unknown_rank()).ok("", "?");
    // The default shape is of unknown rank.
    ShapeTest::new("Placeholder")
        .attr("dtype", DType::F32)
        .ok("", "?");
}

#[test]
fn running_a_placeholder_is_tensorflows_error_naming_it_with_its_dtype_and_shape() {
    let err = Placeholder::call(DType::F32)
        .shape(ShapeValue::from_sizes(&[-1, 3]))
        .node_name("x")
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &["You must feed a value for placeholder tensor 'x' with dtype float and shape [?,3]"],
    );
    // TensorFlow names the shape only when its rank is known and above 0.
    for shape in [ShapeValue::unknown_rank(), ShapeValue::from_sizes(&[])] {
        let err = Placeholder::call(DType::I64)
            .shape(shape)
            .node_name("y")
            .run()
            .unwrap_err();
        assert!(
            err.message()
                .ends_with("You must feed a value for placeholder tensor 'y' with dtype int64"),
            "{err}"
        );
    }
}

#[test]
fn placeholder_with_default_passes_its_input_through_without_a_copy() {
    let x = Tensor::from_vec([3], vec![1u8, 2, 3]).unwrap();
    let at = x.as_slice::<u8>().unwrap().as_ptr();
    let y = PlaceholderWithDefault::call(x, ShapeValue::from_sizes(&[-1]))
        .run()
        .unwrap();
    assert_eq!(y.as_slice::<u8>().unwrap(), [1, 2, 3]);
    assert_eq!(y.as_slice::<u8>().unwrap().as_ptr(), at);
}

#[test]
fn placeholder_with_default_refuses_a_default_its_shape_attr_does_not_allow() {
    // The kernel refuses what the shape function refuses (opcheck found it
    // passing such a default through).
    let run = |dims: &[usize], shape: &[i64]| {
        let x = Tensor::zeros(DType::F32, dims).unwrap();
        PlaceholderWithDefault::call(x, ShapeValue::from_sizes(shape)).run()
    };
    for (dims, shape) in [(&[2, 3][..], &[-1, 4][..]), (&[2, 3], &[1]), (&[], &[-1])] {
        let err = run(dims, shape).unwrap_err();
        assert_eq!(err.code(), op_core::Code::InvalidArgument, "{err}");
        assert!(err.message().contains("which the shape attr"), "{err}");
    }
    assert_eq!(run(&[2, 3], &[-1, 3]).unwrap().dims(), [2, 3]);
    let any = PlaceholderWithDefault::call(Tensor::scalar(1.0f32), ShapeValue::unknown_rank());
    assert_eq!(any.run().unwrap().dims(), [0usize; 0]);
}

#[test]
fn placeholder_with_default_shape_checks_the_default_against_the_shape_attr() {
    op_kernels::link();
    let t = |shape: &[i64]| {
        ShapeTest::new("PlaceholderWithDefault")
            .attr("dtype", DType::F32)
            .attr("shape", ShapeValue::from_sizes(shape))
    };
    t(&[-1, 3]).ok("[2,3]", "[?,3]");
    t(&[-1, 3]).ok("?", "[?,3]");
    t(&[2, 3]).ok("[?,?]", "[2,3]");
    t(&[-1, 3]).error("[2,4]", "dimension 1 in both shapes must be equal");
    t(&[-1]).error("[2,4]", "shapes must be equal rank");
    let unknown = ShapeTest::new("PlaceholderWithDefault")
        .attr("dtype", DType::F32)
        .attr("shape", ShapeValue::unknown_rank());
    unknown.ok("[2,4]", "?");
}
