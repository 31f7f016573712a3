//! The ops the math gradients are built from (`SqrtGrad`, `RsqrtGrad`,
//! `TanhGrad`, `SigmoidGrad`, `ReciprocalGrad`, `ReluGrad`, `Reciprocal`,
//! `Conj`, `GreaterEqual`, `LessEqual`): TensorFlow's values (computed
//! with TensorFlow 2.21 on a CPU), shape functions, errors and buffer
//! reuse. Their OpDefs are `tensorflow_opdefs.rs`'s check, their kernel
//! types `math_ops.rs`'s, their gradients `gradients_math.rs`'s.

mod common;
mod math_common;

use common::assert_contains;
use math_common::{broadcastable, naive_binary, tensor};
use op_core::shape_inference::testing::ShapeTest;
use op_core::{Code, Complex64, DType, Element, OpCall, Tensor, bf16, f16};
use op_kernels::math::{Conj, GreaterEqual, LessEqual, Reciprocal, ReluGrad, SqrtGrad, TanhGrad};
use proptest::prelude::*;

// ---- Values ----

/// Op `op` on `(y, dy)` given as `f64`s, in `dtype`, as `f64`s.
fn run_grad_op(op: &str, dtype: DType, y: &[f64], dy: &[f64]) -> Vec<f64> {
    let make = |values: &[f64]| {
        cast(
            &Tensor::from_vec([values.len()], values.to_vec()).unwrap(),
            dtype,
        )
    };
    let out = OpCall::new(op)
        .input(make(y))
        .input(make(dy))
        .run()
        .unwrap()
        .remove(0);
    assert_eq!(out.dtype(), dtype);
    let wide = OpCall::new("Cast")
        .input(out)
        .attr("DstT", DType::F64)
        .run()
        .unwrap();
    wide[0].as_slice::<f64>().unwrap().to_vec()
}

#[test]
fn the_gradient_ops_give_tensorflows_values_bit_for_bit() {
    op_kernels::link();
    // Repeated so that TensorFlow computes every element with its
    // vectorized functor (`math::backprop` says why that matters).
    let y = [0.3, -1.7, 2.5, 0.0, 7.0, 0.0, 1e-30, 0.1].repeat(4);
    let dy = [1.1, 0.4, -2.3, 0.0, 3.0, 1.0, 1e-30, 0.7].repeat(4);
    // TensorFlow 2.21, CPU: tf.raw_ops.<op>(y=y, dy=dy) in each dtype (the
    // first 8 elements; the others repeat them).
    let inf = f64::INFINITY;
    #[rustfmt::skip]
    let tensorflow: &[(DType, &str, [f64; 8])] = &[
        (DType::F64, "SqrtGrad", [1.8333333333333335, -0.11764705882352942, -0.45999999999999996, 0.0, 0.21428571428571427, inf, 0.5, 3.5]),
        (DType::F64, "RsqrtGrad", [-0.01485, 0.9825999999999999, 17.96875, 0.0, -514.5, 0.0, -5.000000000000001e-121, -0.00035000000000000005]),
        (DType::F64, "TanhGrad", [1.0010000000000001, -0.7559999999999999, 12.075, 0.0, -144.0, 1.0, 1e-30, 0.693]),
        (DType::F64, "SigmoidGrad", [0.231, -1.836, 8.625, 0.0, -126.0, 0.0, 1.0000000000000001e-60, 0.063]),
        (DType::F64, "ReciprocalGrad", [-0.099, -1.156, 14.374999999999998, 0.0, -147.0, -0.0, -1.0000000000000002e-90, -0.007000000000000001]),
        (DType::F32, "SqrtGrad", [1.8333333730697632, -0.11764705181121826, -0.46000000834465027, 0.0, 0.2142857313156128, inf, 0.5, 3.5]),
        (DType::F32, "RsqrtGrad", [-0.014850000850856304, 0.9826000332832336, 17.96875, 0.0, -514.5, 0.0, 0.0, -0.00035000001662410796]),
        (DType::F32, "TanhGrad", [1.000999927520752, -0.7560000419616699, 12.074999809265137, 0.0, -144.0, 1.0, 1.0000000031710769e-30, 0.6930000185966492]),
        (DType::F32, "SigmoidGrad", [0.23100002110004425, -1.8360000848770142, 8.625, 0.0, -126.0, 0.0, 0.0, 0.06299999356269836]),
        (DType::F32, "ReciprocalGrad", [-0.0990000069141388, -1.156000018119812, 14.375, 0.0, -147.0, -0.0, -0.0, -0.007000000216066837]),
        (DType::F16, "SqrtGrad", [1.83203125, -0.11767578125, -0.4599609375, 0.0, 0.2142333984375, inf, 0.0, 3.5]),
        (DType::F16, "RsqrtGrad", [-0.0148468017578125, 0.982421875, 17.96875, 0.0, -514.5, 0.0, 0.0, -0.0003497600555419922]),
        (DType::F16, "TanhGrad", [1.0009765625, -0.755859375, 12.078125, 0.0, -144.0, 1.0, 0.0, 0.693359375]),
        (DType::F16, "SigmoidGrad", [0.23095703125, -1.8359375, 8.625, 0.0, -126.0, 0.0, 0.0, 0.06298828125]),
        (DType::F16, "ReciprocalGrad", [-0.0989990234375, -1.15625, 14.3828125, 0.0, -147.0, -0.0, 0.0, -0.006999969482421875]),
        (DType::BF16, "SqrtGrad", [1.8359375, -0.1171875, -0.458984375, 0.0, 0.2138671875, inf, 0.5, 3.5]),
        (DType::BF16, "RsqrtGrad", [-0.0150146484375, 0.9921875, 18.0, 0.0, -516.0, 0.0, 0.0, -0.0003490447998046875]),
        (DType::BF16, "TanhGrad", [1.0, -0.76171875, 12.0625, 0.0, -144.0, 1.0, 9.98402083170343e-31, 0.69140625]),
        (DType::BF16, "SigmoidGrad", [0.2314453125, -1.8359375, 8.625, 0.0, -126.0, 0.0, 0.0, 0.06298828125]),
        (DType::BF16, "ReciprocalGrad", [-0.099609375, -1.1640625, 14.375, 0.0, -147.0, -0.0, -0.0, -0.006988525390625]),
    ];
    for (dtype, op, want) in tensorflow {
        let got = run_grad_op(op, *dtype, &y, &dy);
        let want = want.repeat(4);
        let same = |g: &f64, w: &f64| g.to_bits() == w.to_bits();
        assert!(
            got.iter().zip(&want).all(|(g, w)| same(g, w)),
            "{op} ({dtype}): got {:?}, TensorFlow {:?}",
            &got[..8],
            &want[..8]
        );
    }
}

#[test]
fn complex_gradient_ops_conjugate_as_tensorflows_do() {
    op_kernels::link();
    let c = |re: f32, im: f32| Complex64::new(re, im);
    let y = [c(0.3, 1.0), c(-1.7, -0.5), c(0.0, 0.0), c(2.0, 0.0)].repeat(8);
    let dy = [c(1.1, -2.0), c(0.4, 0.1), c(1.0, 0.0), c(0.0, 0.0)].repeat(8);
    let (y, dy) = (
        Tensor::from_vec([32], y).unwrap(),
        Tensor::from_vec([32], dy).unwrap(),
    );
    // TensorFlow 2.21 (complex64; the others repeat these).
    let nan = f32::NAN;
    #[rustfmt::skip]
    let tensorflow: &[(&str, [Complex64; 4])] = &[
        ("SqrtGrad", [c(1.0688074, 0.22935781), c(-0.10031848, -0.058917195), c(nan, nan), c(0.0, 0.0)]),
        ("RsqrtGrad", [c(-0.24984992, -1.2744999), c(0.93810004, -0.66010004), c(0.0, 0.0), c(0.0, 0.0)]),
        ("TanhGrad", [c(0.901, -4.48), c(-0.48600006, -0.84400004), c(1.0, 0.0), c(-0.0, 0.0)]),
        ("SigmoidGrad", [c(2.131, -1.98), c(-1.516, -1.3140001), c(0.0, 0.0), c(-0.0, 0.0)]),
        ("ReciprocalGrad", [c(2.201, -1.1599998), c(-1.2260001, 0.41599998), c(-0.0, 0.0), c(0.0, 0.0)]),
    ];
    for (op, want) in tensorflow {
        let out = OpCall::new(op)
            .input(&y)
            .input(&dy)
            .run()
            .unwrap()
            .remove(0);
        for (got, want) in out
            .as_slice::<Complex64>()
            .unwrap()
            .iter()
            .zip(want.iter().cycle())
        {
            let close = (got - want).norm() <= 1e-6 * (1.0 + want.norm());
            let both_nan = got.re.is_nan() && want.re.is_nan();
            assert!(close || both_nan, "{op}: {got} vs TensorFlow's {want}");
        }
    }
    let y = y.reshape([32]).unwrap();
    let inverse = Reciprocal::call(&y).run().unwrap();
    let want = [c(0.27522936, -0.9174312), c(-0.54140127, 0.15923566)];
    for (got, want) in inverse.as_slice::<Complex64>().unwrap().iter().zip(want) {
        assert!((got - want).norm() < 1e-6, "Reciprocal: {got} vs {want}");
    }
    let conj = Conj::call(&y).run().unwrap();
    assert_eq!(
        conj.as_slice::<Complex64>().unwrap()[..2],
        [c(0.3, -1.0), c(-1.7, 0.5)]
    );
}

#[test]
fn reciprocal_gives_tensorflows_values_and_signed_infinities() {
    op_kernels::link();
    let x = [3.0, -0.7, 0.0, -0.0, 1e-3];
    // TensorFlow 2.21: float, half, bfloat16.
    #[rustfmt::skip]
    let tensorflow: &[(DType, [f64; 5])] = &[
        (DType::F32, [0.3333333432674408, -1.4285714626312256, f64::INFINITY, f64::NEG_INFINITY, 999.9999389648438]),
        (DType::F16, [0.333251953125, -1.427734375, f64::INFINITY, f64::NEG_INFINITY, 999.5]),
        (DType::BF16, [0.333984375, -1.4296875, f64::INFINITY, f64::NEG_INFINITY, 1000.0]),
    ];
    for (dtype, want) in tensorflow {
        let t = Tensor::from_vec([5], x.to_vec()).unwrap();
        let t = OpCall::new("Cast")
            .input(t)
            .attr("DstT", *dtype)
            .run()
            .unwrap()
            .remove(0);
        let y = Reciprocal::call(t).run().unwrap();
        let y = OpCall::new("Cast")
            .input(y)
            .attr("DstT", DType::F64)
            .run()
            .unwrap()
            .remove(0);
        assert_eq!(y.as_slice::<f64>().unwrap(), want, "{dtype}");
    }
}

#[test]
fn relu_grad_passes_the_gradient_where_the_feature_is_positive() {
    op_kernels::link();
    // TensorFlow 2.21: ReluGrad([-3, nan, 2, inf], [-1, -1, 0, 0]) is
    // [-0, nan, 0, nan]: it multiplies by 0 rather than choosing 0.
    let g = Tensor::from_vec([5], vec![-3.0f32, f32::NAN, 2.0, f32::INFINITY, 4.0]).unwrap();
    let f = Tensor::from_vec([5], vec![-1.0f32, -1.0, 0.0, 0.0, 0.5]).unwrap();
    let out = ReluGrad::call(g, f).run().unwrap();
    let out = out.as_slice::<f32>().unwrap();
    assert!(out[0] == 0.0 && out[0].is_sign_negative());
    assert!(out[1].is_nan() && out[3].is_nan());
    assert_eq!((out[2], out[4]), (0.0, 4.0));
    let g = tensor::<u16>(&[3], &[7, 8, 9]);
    let f = tensor::<u16>(&[3], &[0, 1, 2]);
    assert_eq!(
        ReluGrad::call(g, f)
            .run()
            .unwrap()
            .as_slice::<u16>()
            .unwrap(),
        [0, 8, 9]
    );
    let g = tensor::<bf16>(&[2], &[bf16::from_f32(1.5), bf16::from_f32(2.5)]);
    let f = tensor::<bf16>(&[2], &[bf16::from_f32(-1.0), bf16::from_f32(1.0)]);
    let out = ReluGrad::call(g, f).run().unwrap();
    assert_eq!(
        out.as_slice::<bf16>().unwrap(),
        [bf16::ZERO, bf16::from_f32(2.5)]
    );
}

proptest! {
    #[test]
    fn greater_equal_and_less_equal_match_a_naive_broadcast(
        dims in broadcastable(2),
        values in prop::collection::vec(prop_oneof![
            4 => (-3i32..3).prop_map(f64::from),
            1 => Just(f64::NAN),
        ], 1..8),
    ) {
        op_kernels::link();
        let x = tensor::<f64>(&dims[0], &values);
        let reversed: Vec<f64> = values.iter().rev().copied().collect();
        let y = tensor::<f64>(&dims[1], &reversed);
        let (shape, want) = naive_binary(&x, &y, |a: &f64, b: &f64| a >= b);
        let got = GreaterEqual::call(&x, &y).run().unwrap();
        prop_assert_eq!(got.dims(), &shape[..]);
        prop_assert_eq!(got.as_slice::<bool>().unwrap(), &want[..]);
        let (_, want) = naive_binary(&x, &y, |a: &f64, b: &f64| a <= b);
        let got = LessEqual::call(&x, &y).run().unwrap();
        prop_assert_eq!(got.as_slice::<bool>().unwrap(), &want[..]);
        // And an integer type.
        let (xi, yi) = (cast(&x, DType::I64), cast(&y, DType::I64));
        let (_, want) = naive_binary(&xi, &yi, |a: &i64, b: &i64| a <= b);
        let got = LessEqual::call(&xi, &yi).run().unwrap();
        prop_assert_eq!(got.as_slice::<bool>().unwrap(), &want[..]);
    }
}

fn cast(t: &Tensor, dtype: DType) -> Tensor {
    OpCall::new("Cast")
        .input(t)
        .attr("DstT", dtype)
        .run()
        .unwrap()
        .remove(0)
}

// ---- Shapes ----

#[test]
fn the_gradient_ops_take_the_shape_of_y_and_relu_grad_merges_both() {
    op_kernels::link();
    for op in [
        "SqrtGrad",
        "RsqrtGrad",
        "TanhGrad",
        "SigmoidGrad",
        "ReciprocalGrad",
    ] {
        // TensorFlow's UnchangedShape: dy is not looked at.
        let t = ShapeTest::new(op);
        t.ok("[2,?];[?,3]", "in0");
        t.ok("[2,?];[5]", "in0");
        t.ok("?;[5]", "in0");
    }
    for op in ["Reciprocal", "Conj"] {
        ShapeTest::new(op).ok("[2,?]", "in0");
    }
    let t = ShapeTest::new("ReluGrad");
    t.ok("[2,?];[?,3]", "[d0_0,d1_1]");
    t.ok("?;[5]", "in1");
    t.error("[2,?];[5]", "shapes must be equal rank, but input 0 ('gradients') has shape [2,?] and input 1 ('features') has shape [5]");
    t.error("[2];[3]", "dimension 0 in both shapes must be equal");
    for op in ["GreaterEqual", "LessEqual"] {
        let t = ShapeTest::new(op);
        t.ok("[?,3];[3]", "[d0_0,d0_1]");
        t.ok("[2,1];[1,4]", "[d0_0,d1_1]");
        t.error("[2];[3]", "incompatible shapes for broadcasting");
    }
}

// ---- Errors ----

#[test]
fn gradient_ops_need_as_many_elements_in_y_and_dy() {
    op_kernels::link();
    let y = tensor::<f32>(&[2, 3], &[1.0, 2.0, 4.0]);
    let dy = tensor::<f32>(&[2], &[1.0]);
    let error = SqrtGrad::call(&y, &dy).run().unwrap_err();
    assert_eq!(error.code(), Code::InvalidArgument);
    assert_contains(
        &error,
        &[
            "SqrtGrad",
            "The two arguments to a cwise op must have same number of elements, got 6 and 2",
        ],
    );
}

#[test]
fn gradient_ops_take_dy_of_another_shape_with_as_many_elements() {
    op_kernels::link();
    // As TensorFlow: SqrtGrad(y=[2,3], dy=[6]) is [2,3], and the reverse [6].
    let y = tensor::<f32>(&[2, 3], &[0.5, 1.0, 2.0, 4.0, 5.0, 10.0]);
    let dy = tensor::<f32>(&[6], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let z = SqrtGrad::call(&y, &dy).run().unwrap();
    assert_eq!(z.dims(), [2, 3]);
    assert_eq!(
        z.as_slice::<f32>().unwrap(),
        [1.0, 1.0, 0.75, 0.5, 0.5, 0.3]
    );
    let z = SqrtGrad::call(dy.reshape([6]).unwrap(), y.reshape([2, 3]).unwrap())
        .run()
        .unwrap();
    assert_eq!(z.dims(), [6]);
}

#[test]
fn relu_grad_needs_one_shape() {
    op_kernels::link();
    let g = tensor::<f32>(&[2, 3], &[1.0]);
    let f = tensor::<f32>(&[6], &[1.0]);
    let error = ReluGrad::call(g, f).run().unwrap_err();
    assert_eq!(error.code(), Code::InvalidArgument);
    assert_contains(
        &error,
        &[
            "Inputs to operation",
            "of type ReluGrad must have the same size and shape.  Input 0: [2,3] != input 1: [6]",
        ],
    );
}

#[test]
fn types_outside_the_ops_constraints_are_errors() {
    op_kernels::link();
    let ints = tensor::<i32>(&[2], &[1, 2]);
    let error = SqrtGrad::call(&ints, &ints).run().unwrap_err();
    assert_eq!(error.code(), Code::InvalidArgument);
    assert_contains(&error, &["SqrtGrad", "int32"]);
    let error = Conj::call(tensor::<f32>(&[2], &[1.0])).run().unwrap_err();
    assert_contains(&error, &["Conj", "float"]);
    // Allowed by the op, but TensorFlow has no CPU kernel for it either.
    let error = Reciprocal::call(ints).run().unwrap_err();
    assert_eq!(error.code(), Code::NotFound);
}

// ---- In place ----

fn address<T: Element>(t: &Tensor) -> *const T {
    t.as_slice::<T>().unwrap().as_ptr()
}

#[test]
fn gradient_ops_write_into_an_input_handed_over() {
    op_kernels::link();
    let y = Tensor::from_vec([1000], vec![0.5f64; 1000]).unwrap();
    let at = address::<f64>(&y);
    let dy = Tensor::from_vec([1000], vec![2.0f64; 1000]).unwrap();
    let z = TanhGrad::call(y, &dy).run().unwrap();
    assert_eq!(address::<f64>(&z), at);
    assert!(z.as_slice::<f64>().unwrap().iter().all(|&v| v == 1.5));
    // dy when y is shared.
    let at = address::<f64>(&dy);
    let z = TanhGrad::call(&z, dy).run().unwrap();
    assert_eq!(address::<f64>(&z), at);
    // y of another shape: still y's buffer.
    let y = Tensor::from_vec([10, 100], vec![4.0f64; 1000]).unwrap();
    let at = address::<f64>(&y);
    let z = SqrtGrad::call(y, &z).run().unwrap();
    assert_eq!((address::<f64>(&z), z.dims()), (at, &[10, 100][..]));
    let g = Tensor::from_vec([1000], vec![f16::ONE; 1000]).unwrap();
    let at = address::<f16>(&g);
    let features = Tensor::from_vec([1000], vec![f16::ONE; 1000]).unwrap();
    let z = ReluGrad::call(g, &features).run().unwrap();
    assert_eq!(address::<f16>(&z), at);
}
