//! The list ops: pass-through of `list(type)` lists and elementwise sums of
//! `N * T` lists, with the errors for short lists, mixed or disallowed
//! types, mismatched shapes and single tensors where lists belong.

use op_core::{AttrValue, Code, DType, ListValue, OpCall, Tensor};
use op_kernels::list::{
    IntListInputExample, ListTypeRestrictionExample, MinLengthIntListExample,
    MinimumLengthPolymorphicListExample, PolymorphicListExample, SameListInputExample,
};

mod common;
use common::assert_contains;

fn ints(dims: &[usize], values: Vec<i32>) -> Tensor {
    Tensor::from_vec(dims, values).unwrap()
}

fn floats(dims: &[usize], values: Vec<f32>) -> Tensor {
    Tensor::from_vec(dims, values).unwrap()
}

#[test]
fn polymorphic_list_passes_any_types_through() {
    op_kernels::link();
    let a = ints(&[2], vec![1, 2]);
    let b = Tensor::string("x");
    let c = Tensor::from_vec([1, 1], vec![2.5f64]).unwrap();
    let out = PolymorphicListExample::call([&a, &b, &c]).run().unwrap();
    assert_eq!(out, vec![a.clone(), b.clone(), c.clone()]);
    assert_eq!(out[1].dtype(), DType::String);
    assert_eq!(out[2].dims(), [1, 1]);
    // Passed through: the output shares the input's buffer.
    assert_eq!(
        out[0].as_slice::<i32>().unwrap().as_ptr(),
        a.as_slice::<i32>().unwrap().as_ptr()
    );

    let grouped = OpCall::new("PolymorphicListExample")
        .input_list([&a, &b])
        .run_grouped()
        .unwrap();
    assert_eq!(grouped, vec![vec![a.clone(), b.clone()]]);

    let prepared = OpCall::new("PolymorphicListExample")
        .input_list([&a, &b, &c])
        .prepared(op_core::Runtime::global())
        .unwrap();
    assert_eq!(
        prepared.instance().attr("T"),
        Some(&AttrValue::List(ListValue::Type(vec![
            DType::I32,
            DType::String,
            DType::F64
        ])))
    );
    assert_eq!(
        prepared.instance().output_types(),
        [DType::I32, DType::String, DType::F64]
    );
}

#[test]
fn polymorphic_list_may_not_be_empty() {
    // As in TensorFlow, a `list(type)` arg has an implicit minimum of 1.
    let err = PolymorphicListExample::call(Vec::<Tensor>::new())
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(
        err.message(),
        "op PolymorphicListExample: input 'in' has 0 tensor(s), but attr 'T' requires at least 1"
    );
}

#[test]
fn polymorphic_list_rejects_a_single_tensor() {
    let a = ints(&[2], vec![1, 2]);
    let err = OpCall::new("PolymorphicListExample")
        .input(&a)
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &[
            "PolymorphicListExample",
            "input 'in' takes a list of tensors",
        ],
    );
}

#[test]
fn type_restricted_list_allows_float_and_double_only() {
    let f = floats(&[2], vec![1.0, 2.0]);
    let d = Tensor::from_vec([1], vec![3.0f64]).unwrap();
    let out = ListTypeRestrictionExample::call([&f, &d, &f])
        .run()
        .unwrap();
    assert_eq!(out, vec![f.clone(), d.clone(), f.clone()]);

    let i = ints(&[1], vec![1]);
    let err = ListTypeRestrictionExample::call([&f, &i])
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &[
            "ListTypeRestrictionExample",
            "input 'in'",
            "attr 'T'",
            "int32",
        ],
    );
}

#[test]
fn int_list_adds_elementwise() {
    let a = ints(&[2, 2], vec![1, 2, 3, 4]);
    let b = ints(&[2, 2], vec![10, 20, 30, 40]);
    let c = ints(&[2, 2], vec![-1, -1, -1, i32::MAX]);
    let out = IntListInputExample::call([&a, &b, &c]).run().unwrap();
    assert_eq!(out.dtype(), DType::I32);
    assert_eq!(out.dims(), [2, 2]);
    // Integers wrap on overflow, as in TensorFlow (4 + 40 + MAX).
    assert_eq!(
        out.as_slice::<i32>().unwrap(),
        [10, 21, 32, 44i32.wrapping_add(i32::MAX)]
    );

    let out = IntListInputExample::call([&a]).run().unwrap();
    assert_eq!(out.as_slice::<i32>().unwrap(), [1, 2, 3, 4]);

    let out = OpCall::new("IntListInputExample")
        .input_list([&a, &b])
        .run()
        .unwrap();
    assert_eq!(out[0].as_slice::<i32>().unwrap(), [11, 22, 33, 44]);
    // The inputs are unchanged.
    assert_eq!(a.as_slice::<i32>().unwrap(), [1, 2, 3, 4]);

    let prepared = OpCall::new("IntListInputExample")
        .input_list([&a, &b, &a])
        .prepared(op_core::Runtime::global())
        .unwrap();
    assert_eq!(prepared.instance().attr("N"), Some(&AttrValue::Int(3)));
}

#[test]
fn int_list_rejects_other_types_and_mismatched_shapes() {
    let a = ints(&[2], vec![1, 2]);
    let f = floats(&[2], vec![1.0, 2.0]);
    let err = IntListInputExample::call([&a, &f]).run().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &[
            "IntListInputExample",
            "input 'in' is a list of int32",
            "float",
        ],
    );

    let b = ints(&[3], vec![1, 2, 3]);
    let err = IntListInputExample::call([&a, &b]).run().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(
        err.message(),
        "all inputs must have one shape: in[0] has shape [2] but in[1] has shape [3]"
    );
    assert_contains(&err, &["IntListInputExample"]);

    // Same element count, different shape.
    let m = ints(&[2, 1], vec![1, 2]);
    let err = IntListInputExample::call([&a, &a, &m]).run().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["in[0] has shape [2] but in[2] has shape [2,1]"]);

    let err = OpCall::new("IntListInputExample")
        .input(&a)
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["IntListInputExample", "input 'in' takes a list"]);
}

#[test]
fn int_list_rejects_an_empty_list() {
    let err = IntListInputExample::call(Vec::<Tensor>::new())
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert_eq!(
        err.message(),
        "op IntListInputExample: input 'in' has 0 tensor(s), but attr 'N' requires at least 1"
    );
}

#[test]
fn same_list_adds_any_real_type() {
    let a = floats(&[3], vec![0.5, 1.0, 1.5]);
    let b = floats(&[3], vec![0.25, 0.25, -1.5]);
    let out = SameListInputExample::call([&a, &b]).run().unwrap();
    assert_eq!(out.dtype(), DType::F32);
    assert_eq!(out.as_slice::<f32>().unwrap(), [0.75, 1.25, 0.0]);

    let x = Tensor::from_vec([2], vec![1u8, 2]).unwrap();
    let out = SameListInputExample::call([&x, &x, &x]).run().unwrap();
    assert_eq!(out.dtype(), DType::U8);
    assert_eq!(out.as_slice::<u8>().unwrap(), [3, 6]);

    let x = Tensor::from_vec([1], vec![-7i64]).unwrap();
    let out = OpCall::new("SameListInputExample")
        .input_list([&x, &x])
        .attr("T", DType::I64)
        .run()
        .unwrap();
    assert_eq!(out[0].as_slice::<i64>().unwrap(), [-14]);
}

#[test]
fn same_list_rejects_mixed_types_and_non_real_types() {
    let a = floats(&[1], vec![1.0]);
    let i = ints(&[1], vec![1]);
    let err = SameListInputExample::call([&a, &i]).run().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(
        err.message(),
        "op SameListInputExample: input 'in' has tensors of types float and int32, \
         but all tensors of a list typed by attr 'T' must have one type"
    );

    // `T: type` allows strings, but the kernels cover real numbers only.
    let s = Tensor::string("1");
    let err = SameListInputExample::call([&s, &s]).run().unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_contains(
        &err,
        &[
            "no kernel for op 'SameListInputExample' on device 'cpu' with attrs N=2, T=string",
            "same_list_input_example::<f32>",
        ],
    );

    // Wrapping sums for small integer types, too.
    let x = Tensor::from_vec([2], vec![200u8, 255]).unwrap();
    let out = SameListInputExample::call([&x, &x]).run().unwrap();
    assert_eq!(out.as_slice::<u8>().unwrap(), [144, 254]);

    let b = floats(&[2], vec![1.0, 2.0]);
    let err = SameListInputExample::call([&a, &b]).run().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["in[0] has shape [1] but in[1] has shape [2]"]);

    let err = OpCall::new("SameListInputExample")
        .input_list([&a])
        .attr("T", DType::F64)
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["attr 'T' was given as double", "float"]);
}

#[test]
fn same_list_of_nothing_is_an_error() {
    // `N` has an implicit minimum of 1, as in TensorFlow.
    let err = SameListInputExample::call(Vec::<Tensor>::new())
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &[
            "SameListInputExample",
            "input 'in' has 0 tensor(s)",
            "attr 'N'",
        ],
    );

    // Even with T given.
    let err = OpCall::new("SameListInputExample")
        .input_list(Vec::<Tensor>::new())
        .attr("T", DType::F32)
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert_contains(&err, &["SameListInputExample"]);
}

#[test]
fn min_length_int_list_needs_two() {
    let a = ints(&[2], vec![1, 2]);
    let out = MinLengthIntListExample::call([&a, &a]).run().unwrap();
    assert_eq!(out.as_slice::<i32>().unwrap(), [2, 4]);

    let err = MinLengthIntListExample::call([&a]).run().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(
        err.message(),
        "op MinLengthIntListExample: input 'in' has 1 tensor(s), but attr 'N' requires at least 2"
    );

    let err = MinLengthIntListExample::call(Vec::<Tensor>::new())
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["input 'in' has 0 tensor(s)", "at least 2"]);
}

#[test]
fn minimum_length_polymorphic_list_needs_three() {
    let a = ints(&[1], vec![1]);
    let b = Tensor::scalar(true);
    let c = floats(&[0], vec![]);
    let out = MinimumLengthPolymorphicListExample::call([&a, &b, &c, &a])
        .run()
        .unwrap();
    assert_eq!(out, vec![a.clone(), b.clone(), c.clone(), a.clone()]);

    let err = MinimumLengthPolymorphicListExample::call([&a, &b])
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(
        err.message(),
        "op MinimumLengthPolymorphicListExample: input 'in' has 2 tensor(s), but attr 'T' requires at least 3"
    );

    let err = OpCall::new("MinimumLengthPolymorphicListExample")
        .input_list([&a, &b, &c])
        .input_list([&a, &b, &c])
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["expects 1 input(s) (in), got 2"]);
}
