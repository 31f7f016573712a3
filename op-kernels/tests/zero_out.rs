//! The ZeroOut ops: exact outputs, buffer forwarding, and the errors for
//! wrong dtypes, ranks, input counts and `preserve_index` values.

use op_core::{AttrValue, Code, DType, OpCall, Tensor};
use op_kernels::zero_out::{ZeroOut, ZeroOutPolymorphic, ZeroOutPreserveIndex, ZeroOutVector};
use proptest::prelude::*;

mod common;
use common::assert_contains;

fn ints(dims: &[usize], values: Vec<i32>) -> Tensor {
    Tensor::from_vec(dims, values).unwrap()
}

#[test]
fn zero_out_keeps_the_first_element() {
    op_kernels::link();
    let t = ints(&[5], vec![1, 2, 3, 4, 5]);
    let out = ZeroOut::call(&t).run().unwrap();
    assert_eq!(out.dtype(), DType::I32);
    assert_eq!(out.dims(), [5]);
    assert_eq!(out.as_slice::<i32>().unwrap(), [1, 0, 0, 0, 0]);
}

#[test]
fn zero_out_keeps_the_shape_of_a_matrix() {
    let t = ints(&[2, 3], vec![7, 8, 9, 10, 11, 12]);
    let out = ZeroOut::call(&t).run().unwrap();
    assert_eq!(out.dims(), [2, 3]);
    assert_eq!(out.as_slice::<i32>().unwrap(), [7, 0, 0, 0, 0, 0]);
}

#[test]
fn zero_out_of_a_scalar_and_of_an_empty_tensor() {
    let out = ZeroOut::call(Tensor::scalar(42i32)).run().unwrap();
    assert_eq!(out.rank(), 0);
    assert_eq!(out.scalar_value::<i32>().unwrap(), 42);

    let empty = ints(&[0], vec![]);
    let out = ZeroOut::call(&empty).run().unwrap();
    assert_eq!(out.dims(), [0]);
    assert!(out.as_slice::<i32>().unwrap().is_empty());

    let empty = ints(&[3, 0], vec![]);
    let out = ZeroOut::call(empty).run().unwrap();
    assert_eq!(out.dims(), [3, 0]);
}

#[test]
fn zero_out_by_name_matches_the_wrapper() {
    let t = ints(&[3], vec![-4, 5, 6]);
    let out = OpCall::new("ZeroOut").input(&t).run().unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].as_slice::<i32>().unwrap(), [-4, 0, 0]);
}

#[test]
fn zero_out_rejects_float_input() {
    let t = Tensor::from_vec([2], vec![1.0f32, 2.0]).unwrap();
    let err = ZeroOut::call(&t).run().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["ZeroOut", "to_zero", "int32", "float"]);

    let err = OpCall::new("ZeroOut").input(&t).run().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["ZeroOut", "to_zero", "int32", "float"]);
}

#[test]
fn zero_out_rejects_a_wrong_number_of_inputs() {
    let t = ints(&[2], vec![1, 2]);
    let err = OpCall::new("ZeroOut")
        .input(&t)
        .input(&t)
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["ZeroOut", "expects 1 input(s)", "to_zero", "got 2"]);

    let err = OpCall::new("ZeroOut").run().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["ZeroOut", "expects 1 input(s)", "got 0"]);
}

#[test]
fn zero_out_rejects_a_list_and_unknown_attrs() {
    let t = ints(&[2], vec![1, 2]);
    let err = OpCall::new("ZeroOut")
        .input_list([&t, &t])
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["ZeroOut", "to_zero", "single tensor", "list of 2"]);

    let err = OpCall::new("ZeroOut")
        .input(&t)
        .attr("T", DType::F32)
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["ZeroOut", "no attr named 'T'"]);
}

#[test]
fn unknown_op_name_suggests_the_closest() {
    let err = OpCall::new("ZeroOot")
        .input(ints(&[1], vec![1]))
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_contains(
        &err,
        &["'ZeroOot' is not registered", "did you mean 'ZeroOut'?"],
    );
}

#[test]
fn polymorphic_handles_each_registered_type() {
    let f = Tensor::from_vec([3], vec![1.5f32, 2.5, 3.5]).unwrap();
    let out = ZeroOutPolymorphic::call(&f).run().unwrap();
    assert_eq!(out.dtype(), DType::F32);
    assert_eq!(out.as_slice::<f32>().unwrap(), [1.5, 0.0, 0.0]);

    let d = Tensor::from_vec([2, 2], vec![-1.0f64, 2.0, 3.0, 4.0]).unwrap();
    let out = ZeroOutPolymorphic::call(&d).run().unwrap();
    assert_eq!(out.dtype(), DType::F64);
    assert_eq!(out.dims(), [2, 2]);
    assert_eq!(out.as_slice::<f64>().unwrap(), [-1.0, 0.0, 0.0, 0.0]);

    let i = ints(&[3], vec![9, 8, 7]);
    let out = ZeroOutPolymorphic::call(&i).run().unwrap();
    assert_eq!(out.dtype(), DType::I32);
    assert_eq!(out.as_slice::<i32>().unwrap(), [9, 0, 0]);
}

#[test]
fn polymorphic_infers_t_from_the_input() {
    // T defaults to int32 but is always inferred from the input: an int32
    // input gives T=int32 with or without the attr spelled out, and a float
    // input gives T=float.
    let i = ints(&[2], vec![3, 4]);
    let out = OpCall::new("ZeroOutPolymorphic")
        .input(&i)
        .attr("T", DType::I32)
        .run()
        .unwrap();
    assert_eq!(out[0].as_slice::<i32>().unwrap(), [3, 0]);

    let f = Tensor::from_vec([2], vec![3.0f32, 4.0]).unwrap();
    let prepared = OpCall::new("ZeroOutPolymorphic")
        .input(&f)
        .prepared(op_core::Runtime::global())
        .unwrap();
    assert_eq!(
        prepared.instance().attr("T"),
        Some(&AttrValue::Type(DType::F32))
    );
    assert_eq!(prepared.kernel().name, "zero_out_polymorphic::<f32>");

    let prepared = OpCall::new("ZeroOutPolymorphic")
        .input(&i)
        .prepared(op_core::Runtime::global())
        .unwrap();
    assert_eq!(
        prepared.instance().attr("T"),
        Some(&AttrValue::Type(DType::I32))
    );
}

#[test]
fn polymorphic_rejects_a_contradicting_attr_and_a_disallowed_type() {
    let f = Tensor::from_vec([2], vec![3.0f32, 4.0]).unwrap();
    let err = OpCall::new("ZeroOutPolymorphic")
        .input(&f)
        .attr("T", DType::I32)
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["ZeroOutPolymorphic", "attr 'T'", "int32", "float"]);

    let h = Tensor::from_vec([2], vec![1i64, 2]).unwrap();
    let err = ZeroOutPolymorphic::call(&h).run().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &[
            "ZeroOutPolymorphic",
            "to_zero",
            "int64",
            "attr 'T'",
            "float, double, int32",
        ],
    );
}

#[test]
fn preserve_index_keeps_the_chosen_element() {
    let t = ints(&[4], vec![1, 2, 3, 4]);
    let out = ZeroOutPreserveIndex::call(&t, 2).run().unwrap();
    assert_eq!(out.as_slice::<i32>().unwrap(), [0, 0, 3, 0]);
    let out = ZeroOutPreserveIndex::call(&t, 3).run().unwrap();
    assert_eq!(out.as_slice::<i32>().unwrap(), [0, 0, 0, 4]);
    let out = ZeroOutPreserveIndex::call(t.clone(), 0).run().unwrap();
    assert_eq!(out.as_slice::<i32>().unwrap(), [1, 0, 0, 0]);
    // Handed over: the buffer is reused, the result the same.
    let out = ZeroOutPreserveIndex::call(ints(&[4], vec![1, 2, 3, 4]), 1)
        .run()
        .unwrap();
    assert_eq!(out.as_slice::<i32>().unwrap(), [0, 2, 0, 0]);
    let out = OpCall::new("ZeroOutPreserveIndex")
        .input(&t)
        .attr("preserve_index", 1i64)
        .run()
        .unwrap();
    assert_eq!(out[0].as_slice::<i32>().unwrap(), [0, 2, 0, 0]);
}

#[test]
fn preserve_index_negative_fails_when_the_kernel_is_created() {
    let t = ints(&[4], vec![1, 2, 3, 4]);
    let err = ZeroOutPreserveIndex::call(&t, -1).run().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(err.message(), "Need preserve_index >= 0, got -1");
    assert_contains(&err, &["while creating kernel", "ZeroOutPreserveIndex"]);
    // Creation failed, so nothing was cached: it fails again the same way.
    let again = ZeroOutPreserveIndex::call(&t, -1).run().unwrap_err();
    assert_eq!(again, err);
    // The prepare step alone reports it, before any tensor is seen.
    let err = op_core::Runtime::global()
        .prepare(
            "ZeroOutPreserveIndex",
            &[DType::I32.into()],
            &[("preserve_index", AttrValue::Int(-5))],
        )
        .unwrap_err();
    assert_eq!(err.message(), "Need preserve_index >= 0, got -5");
}

#[test]
fn preserve_index_out_of_range_fails_at_compute() {
    let t = ints(&[3], vec![1, 2, 3]);
    // The kernel is created fine (3 is not negative)...
    let prepared = op_core::Runtime::global()
        .prepare(
            "ZeroOutPreserveIndex",
            &[DType::I32.into()],
            &[("preserve_index", AttrValue::Int(3))],
        )
        .unwrap();
    // ...and fails when run on a vector that is too short.
    let err = prepared.run(vec![t.clone()]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(
        err.message(),
        "preserve_index out of range: 3 for a vector of 3 elements"
    );
    assert_contains(&err, &["in kernel", "ZeroOutPreserveIndex"]);
    // A longer vector works with the same kernel.
    let out = prepared.run(vec![ints(&[5], vec![1, 2, 3, 4, 5])]).unwrap();
    assert_eq!(out[0].as_slice::<i32>().unwrap(), [0, 0, 0, 4, 0]);

    let err = ZeroOutPreserveIndex::call(&t, 10).run().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["preserve_index out of range: 10", "3 elements"]);
    // Empty vector: every index is out of range.
    let err = ZeroOutPreserveIndex::call(ints(&[0], vec![]), 0)
        .run()
        .unwrap_err();
    assert_contains(&err, &["preserve_index out of range: 0 for a vector of 0"]);
}

#[test]
fn preserve_index_requires_its_attr_and_a_vector() {
    let t = ints(&[3], vec![1, 2, 3]);
    let err = OpCall::new("ZeroOutPreserveIndex")
        .input(&t)
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &["ZeroOutPreserveIndex", "preserve_index", "required"],
    );

    let err = OpCall::new("ZeroOutPreserveIndex")
        .input(&t)
        .attr("preserve_index", 1.5f32)
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["ZeroOutPreserveIndex", "preserve_index"]);

    let m = ints(&[2, 2], vec![1, 2, 3, 4]);
    let err = ZeroOutPreserveIndex::call(&m, 0).run().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(
        err.message(),
        "ZeroOut expects a 1-D vector, got shape [2,2]"
    );
}

#[test]
fn vector_zero_out_accepts_vectors_only() {
    let v = ints(&[3], vec![5, 6, 7]);
    let out = ZeroOutVector::call(&v).run().unwrap();
    assert_eq!(out.as_slice::<i32>().unwrap(), [5, 0, 0]);

    let m = ints(&[2, 2], vec![1, 2, 3, 4]);
    let err = ZeroOutVector::call(&m).run().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(err.message(), "ZeroOut expects a 1-D vector.");
    assert_contains(&err, &["ZeroOutVector", "in kernel zero_out_vector"]);

    let err = ZeroOutVector::call(Tensor::scalar(1i32)).run().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(err.message(), "ZeroOut expects a 1-D vector.");

    let err = ZeroOutVector::call(Tensor::from_vec([1], vec![1u8]).unwrap())
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["ZeroOutVector", "to_zero", "int32", "uint8"]);
}

#[test]
fn a_handed_over_tensor_is_reused_for_the_output() {
    let t = ints(&[4], vec![1, 2, 3, 4]);
    let before = t.as_slice::<i32>().unwrap().as_ptr();
    let out = ZeroOut::call(t).run().unwrap();
    assert_eq!(out.as_slice::<i32>().unwrap(), [1, 0, 0, 0]);
    assert_eq!(out.as_slice::<i32>().unwrap().as_ptr(), before);

    let f = Tensor::from_vec([2, 2], vec![1.0f64, 2.0, 3.0, 4.0]).unwrap();
    let before = f.as_slice::<f64>().unwrap().as_ptr();
    let out = OpCall::new("ZeroOutPolymorphic").input(f).run().unwrap();
    assert_eq!(out[0].as_slice::<f64>().unwrap(), [1.0, 0.0, 0.0, 0.0]);
    assert_eq!(out[0].as_slice::<f64>().unwrap().as_ptr(), before);

    let v = ints(&[3], vec![1, 2, 3]);
    let before = v.as_slice::<i32>().unwrap().as_ptr();
    let out = ZeroOutPreserveIndex::call(v, 2).run().unwrap();
    assert_eq!(out.as_slice::<i32>().unwrap(), [0, 0, 3]);
    assert_eq!(out.as_slice::<i32>().unwrap().as_ptr(), before);
}

#[test]
fn a_shared_tensor_is_left_unchanged() {
    let t = ints(&[4], vec![1, 2, 3, 4]);
    let before = t.as_slice::<i32>().unwrap().as_ptr();
    let out = ZeroOut::call(&t).run().unwrap();
    assert_eq!(out.as_slice::<i32>().unwrap(), [1, 0, 0, 0]);
    assert_ne!(out.as_slice::<i32>().unwrap().as_ptr(), before);
    assert_eq!(t.as_slice::<i32>().unwrap(), [1, 2, 3, 4]);
    assert!(t.is_unique(), "the runtime kept a reference to the input");

    // A clone held elsewhere also keeps the input from being reused.
    let keep = t.clone();
    let out = ZeroOut::call(t).run().unwrap();
    assert_eq!(out.as_slice::<i32>().unwrap(), [1, 0, 0, 0]);
    assert_eq!(keep.as_slice::<i32>().unwrap(), [1, 2, 3, 4]);

    let v = ints(&[3], vec![1, 2, 3]);
    let out = ZeroOutPreserveIndex::call(&v, 1).run().unwrap();
    assert_eq!(out.as_slice::<i32>().unwrap(), [0, 2, 0]);
    assert_eq!(v.as_slice::<i32>().unwrap(), [1, 2, 3]);
}

proptest! {
    #[test]
    fn zero_out_keeps_only_element_zero(values in proptest::collection::vec(any::<i32>(), 0..64)) {
        let len = values.len();
        let t = Tensor::from_vec([len], values.clone()).unwrap();
        let shared = ZeroOut::call(&t).run().unwrap();
        let owned = ZeroOut::call(t.clone()).run().unwrap();
        let mut expected = vec![0; len];
        if let Some(first) = values.first() {
            expected[0] = *first;
        }
        prop_assert_eq!(shared.dims(), &[len]);
        prop_assert_eq!(shared.as_slice::<i32>().unwrap(), &expected[..]);
        prop_assert_eq!(owned.as_slice::<i32>().unwrap(), &expected[..]);
        prop_assert_eq!(t.as_slice::<i32>().unwrap(), &values[..]);
    }
}

#[test]
fn a_shared_input_is_copied_from_the_runtimes_allocator() {
    use op_core::Runtime;
    use op_core::allocator::{AllocatorConfig, HostAllocator};

    let alloc = HostAllocator::new(AllocatorConfig::default());
    let runtime = Runtime::new().with_allocator(alloc.clone());
    let t = ints(&[100_000], vec![5; 100_000]);
    let out = ZeroOut::call(&t).run_on(&runtime).unwrap();
    assert_eq!(t.as_slice::<i32>().unwrap()[1], 5, "the input is unchanged");
    assert_eq!(out.as_slice::<i32>().unwrap()[..3], [5, 0, 0]);
    // The runtime's allocator holds the copy (in a size class of at least
    // its 400,000 bytes).
    let in_use = alloc.stats().bytes_in_use;
    assert!((400_000..=500_000).contains(&in_use), "{in_use}");
    drop(out);
    // Handed over, the input is zeroed in place: no allocation.
    let ptr = t.as_slice::<i32>().unwrap().as_ptr();
    let out = ZeroOut::call(t).run_on(&runtime).unwrap();
    assert_eq!(out.as_slice::<i32>().unwrap().as_ptr(), ptr);
    assert_eq!(alloc.stats().bytes_in_use, 0);
}
