//! `Examples>MultiplexDense`: the guide's multiplex tests in Rust (ints,
//! floats, strings, an empty and a scalar input), mismatched shapes named
//! in the error, the shape function one line per case, the registered
//! signature and kernels, and random masks against a plain loop.

use op_core::shape_inference::testing::ShapeTest;
use op_core::{Code, DType, OpCall, Registry, Tensor};
use op_kernels::multiplex::{MultiplexDense, multiplex};
use proptest::prelude::*;

mod common;
use common::assert_contains;

const OP: &str = "Examples>MultiplexDense";

fn bools(values: &[bool]) -> Tensor {
    Tensor::from_vec([values.len()], values.to_vec()).unwrap()
}

#[test]
fn multiplex_int() {
    op_kernels::link();
    // The guide's test_multiplex_int.
    let a = Tensor::from_vec([5], vec![1i64, 2, 3, 4, 5]).unwrap();
    let b = Tensor::from_vec([5], vec![10i64, 20, 30, 40, 50]).unwrap();
    let cond = bools(&[true, false, true, false, true]);
    let out = MultiplexDense::call(cond, &a, &b).run().unwrap();
    assert_eq!(out.dims(), [5]);
    assert_eq!(out.as_slice::<i64>().unwrap(), [1, 20, 3, 40, 5]);
}

#[test]
fn multiplex_float_and_matrix() {
    op_kernels::link();
    let a = Tensor::from_vec([2, 2], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let b = Tensor::from_vec([2, 2], vec![-1.0f32, -2.0, -3.0, -4.0]).unwrap();
    let cond = Tensor::from_vec([2, 2], vec![false, true, true, false]).unwrap();
    let out = OpCall::new(OP).input(cond).input(a).input(b).run().unwrap();
    assert_eq!(out[0].dims(), [2, 2]);
    assert_eq!(out[0].as_slice::<f32>().unwrap(), [-1.0, 2.0, 3.0, -4.0]);
}

#[test]
fn multiplex_strings_bools_complex() {
    op_kernels::link();
    let a = Tensor::strings([3], ["a", "b", "c"]).unwrap();
    let b = Tensor::strings([3], ["x", "y", "z"]).unwrap();
    let out = MultiplexDense::call(bools(&[false, true, false]), a, b)
        .run()
        .unwrap();
    assert_eq!(out, Tensor::strings([3], ["x", "b", "z"]).unwrap());

    let out = MultiplexDense::call(
        bools(&[true, false]),
        bools(&[true, true]),
        bools(&[false, false]),
    )
    .run()
    .unwrap();
    assert_eq!(out.as_slice::<bool>().unwrap(), [true, false]);

    let c = |re: f64| op_core::Complex128::new(re, -re);
    let out = MultiplexDense::call(
        bools(&[false, true]),
        Tensor::from_vec([2], vec![c(1.0), c(2.0)]).unwrap(),
        Tensor::from_vec([2], vec![c(3.0), c(4.0)]).unwrap(),
    )
    .run()
    .unwrap();
    assert_eq!(
        out.as_slice::<op_core::Complex128>().unwrap(),
        [c(3.0), c(2.0)]
    );
}

#[test]
fn multiplex_empty_and_scalar() {
    op_kernels::link();
    let empty = MultiplexDense::call(
        Tensor::from_vec([0, 3], Vec::<bool>::new()).unwrap(),
        Tensor::from_vec([0, 3], Vec::<i32>::new()).unwrap(),
        Tensor::from_vec([0, 3], Vec::<i32>::new()).unwrap(),
    )
    .run()
    .unwrap();
    assert_eq!(empty.dims(), [0, 3]);
    let scalar = MultiplexDense::call(
        Tensor::scalar(true),
        Tensor::scalar(1u8),
        Tensor::scalar(2u8),
    )
    .run()
    .unwrap();
    assert_eq!(scalar, Tensor::scalar(1u8));
}

#[test]
fn mismatched_shapes_are_invalid_argument_naming_the_inputs() {
    op_kernels::link();
    // The guide's test_multiplex_bad_types / bad_size checks.
    let err = MultiplexDense::call(
        bools(&[true, false, true]),
        Tensor::from_vec([3], vec![1i32, 2, 3]).unwrap(),
        Tensor::from_vec([2], vec![1i32, 2]).unwrap(),
    )
    .run()
    .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &[
            "op Examples>MultiplexDense (node 'Examples>MultiplexDense'): a_values and b_values must have the same shape, but a_values (input 1) has shape [3] and b_values (input 2) has shape [2]",
        ],
    );
    let err = MultiplexDense::call(
        Tensor::from_vec([1, 3], vec![true; 3]).unwrap(),
        Tensor::from_vec([3], vec![1i32, 2, 3]).unwrap(),
        Tensor::from_vec([3], vec![1i32, 2, 3]).unwrap(),
    )
    .run()
    .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &[
            "cond and a_values must have the same shape, but cond (input 0) has shape [1,3] and a_values (input 1) has shape [3]",
        ],
    );
    // a_values and b_values of different types: no node can be built.
    let err = OpCall::new(OP)
        .input(bools(&[true]))
        .input(Tensor::from_vec([1], vec![1i32]).unwrap())
        .input(Tensor::from_vec([1], vec![1i64]).unwrap())
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    // cond must be bool.
    let err = OpCall::new(OP)
        .input(Tensor::from_vec([1], vec![1i32]).unwrap())
        .input(Tensor::from_vec([1], vec![1i32]).unwrap())
        .input(Tensor::from_vec([1], vec![1i32]).unwrap())
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
}

#[test]
fn shape_function_merges_the_three_shapes() {
    op_kernels::link();
    let t = ShapeTest::new(OP).attr("T", DType::I64);
    t.ok("[5];[5];[5]", "in0");
    t.ok("?;?;?", "in0");
    t.ok("?;[2,3];?", "in1");
    t.ok("[?,3];[2,?];?", "[d1_0,d0_1]");
    t.ok("?;?;[4]", "in2");
    t.error(
        "[5];[4];[5]",
        "op Examples>MultiplexDense (node 'Examples>MultiplexDense'): dimension 0 in both shapes must be equal, but input 0 ('cond') has shape [5] and input 1 ('a_values') has shape [4]",
    );
    t.error(
        "[5];[5];[4]",
        "dimension 0 in both shapes must be equal, but input 0 ('cond') has shape [5] and input 2 ('b_values') has shape [4]",
    );
    t.error(
        "[5];[5,1];[5]",
        "shapes must be equal rank, but input 0 ('cond') has shape [5] and input 1 ('a_values') has shape [5,1]",
    );
}

#[test]
fn the_op_has_the_guides_signature_and_many_kernels() {
    op_kernels::link();
    let registry = Registry::global();
    let entry = registry.op(OP).unwrap();
    let def = entry.def();
    assert!(!def.is_stateful);
    let inputs: Vec<String> = def.inputs.iter().map(|a| a.to_spec()).collect();
    assert_eq!(inputs, ["cond: bool", "a_values: T", "b_values: T"]);
    let outputs: Vec<String> = def.outputs.iter().map(|a| a.to_spec()).collect();
    assert_eq!(outputs, ["output_values: T"]);
    let attrs: Vec<String> = def.attrs.iter().map(|a| a.to_spec()).collect();
    assert_eq!(attrs, ["T: type"]);
    let dtypes: Vec<DType> = entry
        .kernels()
        .iter()
        .map(|k| k.constraints[0].dtype)
        .collect();
    for dtype in [
        DType::F32,
        DType::F64,
        DType::I64,
        DType::U8,
        DType::F16,
        DType::Bool,
        DType::String,
        DType::Complex64,
        DType::QInt8,
    ] {
        assert!(dtypes.contains(&dtype), "no kernel for {dtype}");
    }
    assert!(!dtypes.contains(&DType::Resource));
}

proptest! {
    /// Random masks over random values: the op agrees with a plain loop,
    /// for vectors and for the same values as a matrix.
    #[test]
    fn random_masks_pick_elementwise(
        rows in 1usize..6,
        cols in 0usize..8,
        seed in proptest::collection::vec((any::<bool>(), any::<i32>(), any::<i32>()), 48),
    ) {
        op_kernels::link();
        let n = rows * cols;
        let cond: Vec<bool> = seed[..n].iter().map(|s| s.0).collect();
        let a: Vec<i32> = seed[..n].iter().map(|s| s.1).collect();
        let b: Vec<i32> = seed[..n].iter().map(|s| s.2).collect();
        let expected: Vec<i32> = (0..n).map(|i| if cond[i] { a[i] } else { b[i] }).collect();
        prop_assert_eq!(multiplex(&cond, &a, &b), expected.clone());
        for dims in [vec![n], vec![rows, cols]] {
            let out = MultiplexDense::call(
                Tensor::from_vec(&dims, cond.clone()).unwrap(),
                Tensor::from_vec(&dims, a.clone()).unwrap(),
                Tensor::from_vec(&dims, b.clone()).unwrap(),
            )
            .run()
            .unwrap();
            prop_assert_eq!(out.dims(), &dims[..]);
            prop_assert_eq!(out.as_slice::<i32>().unwrap(), &expected[..]);
        }
    }

    /// All-true picks `a`, all-false picks `b`, for strings too.
    #[test]
    fn uniform_masks_pick_one_side(
        values in proptest::collection::vec(("[a-z]{0,4}", "[A-Z]{0,4}"), 0..20),
        pick_a in any::<bool>(),
    ) {
        op_kernels::link();
        let n = values.len();
        let a: Vec<&str> = values.iter().map(|v| v.0.as_str()).collect();
        let b: Vec<&str> = values.iter().map(|v| v.1.as_str()).collect();
        let out = MultiplexDense::call(
            Tensor::from_vec([n], vec![pick_a; n]).unwrap(),
            Tensor::strings([n], &a).unwrap(),
            Tensor::strings([n], &b).unwrap(),
        )
        .run()
        .unwrap();
        let expected = if pick_a { &a } else { &b };
        prop_assert_eq!(out, Tensor::strings([n], expected).unwrap());
    }
}
