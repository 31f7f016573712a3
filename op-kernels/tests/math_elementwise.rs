//! The unary ops, the broadcasting binary ops and the comparisons: values
//! TensorFlow 2.21 gives (recorded from its CPU kernels), every op against a
//! naive broadcast over random shapes for each dtype family (with shared
//! and with handed-over inputs), buffers reused in place, large tensors
//! split over threads, and the errors.

use std::sync::Arc;

use op_core::threads::ThreadPool;
use op_core::{
    AttrValue, Code, Complex64, Complex128, DType, Element, OpCall, Runtime, Tensor, bf16, f16,
};
use op_kernels::math::{AddV2, Equal, Mul, Neg, Pow, RealDiv, Relu, Sqrt, Sub};
use proptest::prelude::*;

mod common;
mod math_common;
use common::assert_contains;
use math_common::{broadcastable, naive_binary, run_both_ways, same_tensors, tensor};

fn vector<T: Element>(values: &[T]) -> Tensor {
    Tensor::from_vec([values.len()], values.to_vec()).unwrap()
}

/// Runs a one-input op by name on the global runtime.
fn unary(op: &str, x: Tensor) -> Tensor {
    op_kernels::link();
    OpCall::new(op).input(x).run().unwrap().remove(0)
}

#[track_caller]
fn assert_close(got: &[f64], want: &[f64], tolerance: f64) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        let ok =
            (g.is_nan() && w.is_nan()) || g == w || (g - w).abs() <= tolerance * w.abs().max(1e-30);
        assert!(ok, "got {got:?}, want {want:?}");
    }
}

fn floats(t: &Tensor) -> Vec<f64> {
    match t.dtype() {
        DType::F32 => t
            .as_slice::<f32>()
            .unwrap()
            .iter()
            .map(|&v| v as f64)
            .collect(),
        DType::F64 => t.as_slice::<f64>().unwrap().to_vec(),
        DType::F16 => t
            .as_slice::<f16>()
            .unwrap()
            .iter()
            .map(|v| v.to_f64())
            .collect(),
        DType::BF16 => t
            .as_slice::<bf16>()
            .unwrap()
            .iter()
            .map(|v| v.to_f64())
            .collect(),
        other => panic!("not a float: {other}"),
    }
}

// ---- Values TensorFlow gives ----

#[test]
fn unary_float_ops_give_tensorflows_values() {
    let x = [-2.5f32, -1.0, -0.0, 0.0, 0.5, 1.0, 3.0, 20.0];
    let expect: &[(&str, [f64; 8])] = &[
        ("Neg", [2.5, 1.0, 0.0, -0.0, -0.5, -1.0, -3.0, -20.0]),
        ("Square", [6.25, 1.0, 0.0, 0.0, 0.25, 1.0, 9.0, 400.0]),
        (
            "Exp",
            [
                0.08208499848842621,
                0.3678794503211975,
                1.0,
                1.0,
                1.6487212181091309,
                2.7182817459106445,
                20.08553695678711,
                485165184.0,
            ],
        ),
        (
            "Sin",
            [
                -0.5984721779823303,
                -0.8414709568023682,
                -0.0,
                0.0,
                0.4794255495071411,
                0.8414709568023682,
                0.14112000167369843,
                0.9129452705383301,
            ],
        ),
        (
            "Cos",
            [
                -0.8011435866355896,
                0.5403022766113281,
                1.0,
                1.0,
                0.8775825500488281,
                0.5403022766113281,
                -0.9899924993515015,
                0.4080820679664612,
            ],
        ),
        (
            "Tanh",
            [
                -0.9866143465042114,
                -0.7615941762924194,
                -0.0,
                0.0,
                0.46211713552474976,
                0.7615941762924194,
                0.9950547218322754,
                1.0,
            ],
        ),
        (
            "Sigmoid",
            [
                0.07585816830396652,
                0.26894140243530273,
                0.5,
                0.5,
                0.622459352016449,
                0.7310585379600525,
                0.9525741338729858,
                1.0,
            ],
        ),
        ("Relu", [0.0, 0.0, 0.0, 0.0, 0.5, 1.0, 3.0, 20.0]),
    ];
    for (op, want) in expect {
        // float within 2 ulps of TensorFlow's (Eigen's own approximations
        // differ from libm in the last bits); double close to it.
        assert_close(&floats(&unary(op, vector(&x))), want, 2.5e-7);
        let x64: Vec<f64> = x.iter().map(|&v| v as f64).collect();
        assert_close(&floats(&unary(op, vector(&x64))), want, 2.5e-7);
    }
    let positive = [0.0f32, 0.25, 1.0, 2.0, 100.0];
    let expect: &[(&str, [f64; 5])] = &[
        ("Sqrt", [0.0, 0.5, 1.0, 1.4142135381698608, 10.0]),
        (
            "Rsqrt",
            [
                f64::INFINITY,
                2.0,
                1.0,
                0.7071067690849304,
                0.10000000149011612,
            ],
        ),
        (
            "Log",
            [
                f64::NEG_INFINITY,
                -1.3862943649291992,
                0.0,
                0.6931471824645996,
                4.605170249938965,
            ],
        ),
    ];
    for (op, want) in expect {
        assert_close(&floats(&unary(op, vector(&positive))), want, 1.2e-7);
    }
    // Out of the domain: NaN, as in TensorFlow.
    let nan = unary("Sqrt", vector(&[-1.0f64]));
    assert!(nan.as_slice::<f64>().unwrap()[0].is_nan());
    let relu = unary("Relu", vector(&[f32::NAN, -1.0]));
    assert!(relu.as_slice::<f32>().unwrap()[0].is_nan());
}

#[test]
fn sixteen_bit_floats_give_tensorflows_values() {
    let h = |v: &[f32]| vector(&v.iter().map(|&x| f16::from_f32(x)).collect::<Vec<_>>());
    let b = |v: &[f32]| vector(&v.iter().map(|&x| bf16::from_f32(x)).collect::<Vec<_>>());
    let x = [0.1, 1.7, -3.3];
    let cases: &[(&str, &[f64], &[f64])] = &[
        (
            "Exp",
            &[1.10546875, 5.4765625, 0.036865234375],
            &[1.1015625, 5.5, 0.037109375],
        ),
        (
            "Tanh",
            &[0.09967041015625, 0.935546875, -0.9970703125],
            &[0.099609375, 0.9375, -0.99609375],
        ),
        (
            "Sigmoid",
            &[0.52490234375, 0.845703125, 0.035552978515625],
            &[0.52734375, 0.84765625, 0.03564453125],
        ),
    ];
    for (op, half, bfloat) in cases {
        assert_eq!(floats(&unary(op, h(&x))), *half, "{op} half");
        assert_eq!(floats(&unary(op, b(&x))), *bfloat, "{op} bfloat16");
    }
    let sqrt = Sqrt::call(h(&[0.1, 1.7, 3.3])).run().unwrap();
    assert_eq!(floats(&sqrt), [0.316162109375, 1.3037109375, 1.81640625]);
    let pow = Pow::call(h(&[1.5, 2.0, 9.0]), h(&[2.5, -1.0, 0.5]))
        .run()
        .unwrap();
    assert_eq!(floats(&pow), [2.755859375, 0.5, 3.0]);
    let sd = OpCall::new("SquaredDifference")
        .input(b(&[94.0, 3.3, -7.1]))
        .input(b(&[0.60546875, 1.1, 2.9]))
        .run()
        .unwrap();
    assert_eq!(floats(&sd[0]), [8768.0, 4.78125, 100.0]);
    // bfloat16 rounds every sum to 8 bits: 1 + 2^-8 is 1.
    let sum = AddV2::call(b(&[1.0, 256.0]), b(&[0.00390625, 1.0]))
        .run()
        .unwrap();
    assert_eq!(floats(&sum), [1.0, 256.0]);
}

#[test]
fn complex_ops_give_tensorflows_values() {
    let c = Complex128::new;
    let z = vector(&[c(1.0, 2.0), c(-3.0, 0.5), c(0.25, -1.0)]);
    let cases: &[(&str, [Complex128; 3])] = &[
        ("Neg", [c(-1.0, -2.0), c(3.0, -0.5), c(-0.25, 1.0)]),
        ("Square", [c(-3.0, 4.0), c(8.75, -3.0), c(-0.9375, -0.5)]),
        (
            "Sqrt",
            [
                c(1.272019649514069, 0.7861513777574233),
                c(0.14384238796180673, 1.738013415533538),
                c(0.8002425902201205, -0.6248105338438266),
            ],
        ),
        (
            "Rsqrt",
            [
                c(0.5688644810057831, -0.3515775842541429),
                c(0.0472950858250107, -0.5714552908736776),
                c(0.776349347198924, 0.6061552534203895),
            ],
        ),
        (
            "Exp",
            [
                c(-1.1312043837568135, 2.4717266720048188),
                c(0.04369226300728118, 0.02386919206778745),
                c(0.6937618934296856, -1.0804701318986034),
            ],
        ),
        (
            "Log",
            [
                c(0.8047189562170503, 1.1071487177940904),
                c(1.112311775762167, 2.976443976175166),
                c(0.03031231090821743, -1.3258176636680326),
            ],
        ),
        (
            "Sin",
            [
                c(3.165778513216168, 1.9596010414216063),
                c(-0.15913058529843999, -0.5158804424525267),
                c(0.38176425850227397, -1.138667034530656),
            ],
        ),
        (
            "Cos",
            [
                c(2.0327230070196656, -3.0518977991518),
                c(-1.1163412445261518, 0.0735369737112366),
                c(1.4951099947736368, 0.2907494282281178),
            ],
        ),
        (
            "Tanh",
            [
                c(1.16673625724092, -0.2434582011857253),
                c(-0.9973163652832018, 0.00416042659289383),
                c(0.7324112324640304, -1.278038090223709),
            ],
        ),
        (
            "Sigmoid",
            [
                c(1.0214153641721806, 0.40343870608154253),
                c(0.042364043369342984, 0.021901088462583592),
                c(0.5803619777105872, -0.26769190584079794),
            ],
        ),
    ];
    let close = |got: &Tensor, want: &[Complex128]| {
        let got = got.as_slice::<Complex128>().unwrap();
        got.iter()
            .zip(want)
            .all(|(g, w)| (g - w).norm() <= 1e-12 * w.norm().max(1.0))
    };
    for (op, want) in cases {
        let got = unary(op, z.clone());
        assert!(close(&got, want), "{op}: {got:?}");
    }
    let pow = Pow::call(&z, vector(&[c(0.5, 1.0), c(2.0, 0.0), c(-1.0, 0.0)]))
        .run()
        .unwrap();
    assert!(close(
        &pow,
        &[
            c(0.1042330549168707, 0.48309593926990946),
            c(8.749999999999996, -3.0000000000000027),
            c(0.23529411764705874, 0.9411764705882353),
        ]
    ));
    let div = RealDiv::call(&z, vector(&[c(0.5, 1.0), c(2.0, 0.0), c(-1.0, 3.0)]))
        .run()
        .unwrap();
    assert!(close(&div, &[c(2.0, 0.0), c(-1.5, 0.25), c(-0.325, 0.025)]));
    let sd = OpCall::new("SquaredDifference")
        .input(vector(&[Complex64::new(1.0, 2.0)]))
        .input(vector(&[Complex64::new(0.0, 0.0)]))
        .run()
        .unwrap();
    assert_eq!(
        sd[0].as_slice::<Complex64>().unwrap(),
        [Complex64::new(5.0, 0.0)]
    );
}

#[test]
fn integer_ops_wrap_as_tensorflows_do() {
    let neg = Neg::call(vector(&[i32::MIN, 5])).run().unwrap();
    assert_eq!(neg.as_slice::<i32>().unwrap(), [i32::MIN, -5]);
    let square = unary("Square", vector(&[70_000i32, -3]));
    assert_eq!(
        square.as_slice::<i32>().unwrap(),
        [70_000i32.wrapping_mul(70_000), 9]
    );
    let relu = Relu::call(vector(&[-3i64, 4])).run().unwrap();
    assert_eq!(relu.as_slice::<i64>().unwrap(), [0, 4]);
    let relu = unary("Relu", vector(&[253u8, 4]));
    assert_eq!(relu.as_slice::<u8>().unwrap(), [253, 4]);
    let pow = Pow::call(vector(&[2i32, 3]), vector(&[40i32, 2]))
        .run()
        .unwrap();
    assert_eq!(pow.as_slice::<i32>().unwrap(), [0, 9]);
    let pow = Pow::call(vector(&[2i64, 0, -1]), vector(&[70i64, 0, 3]))
        .run()
        .unwrap();
    assert_eq!(pow.as_slice::<i64>().unwrap(), [0, 1, -1]);
    let sum = AddV2::call(vector(&[u8::MAX]), vector(&[2u8]))
        .run()
        .unwrap();
    assert_eq!(sum.as_slice::<u8>().unwrap(), [1]);
    let difference = Sub::call(vector(&[i64::MIN]), vector(&[1i64]))
        .run()
        .unwrap();
    assert_eq!(difference.as_slice::<i64>().unwrap(), [i64::MAX]);
}

#[test]
fn maximum_and_minimum_propagate_nan_and_comparisons_of_nan_are_false() {
    let x = vector(&[f32::NAN, 1.0, -0.0, 0.0]);
    let y = vector(&[1.0f32, f32::NAN, 0.0, -0.0]);
    for op in ["Maximum", "Minimum"] {
        let out = OpCall::new(op).input(&x).input(&y).run().unwrap().remove(0);
        let v = out.as_slice::<f32>().unwrap();
        assert!(v[0].is_nan() && v[1].is_nan(), "{op}: {v:?}");
        // A tie keeps the first operand, as TensorFlow's.
        assert!(
            v[2].is_sign_negative() && v[3].is_sign_positive(),
            "{op}: {v:?}"
        );
    }
    for op in ["Greater", "Less", "Equal"] {
        let out = OpCall::new(op).input(&x).input(&y).run().unwrap().remove(0);
        assert_eq!(out.as_slice::<bool>().unwrap()[..2], [false, false], "{op}");
    }
    let same = Equal::call(&x, &x).run().unwrap();
    assert_eq!(same.as_slice::<bool>().unwrap(), [false, true, true, true]);
}

#[test]
fn equal_compares_strings_bools_and_quantized_values() {
    let a = Tensor::strings([3], ["a", "bc", ""]).unwrap();
    let b = Tensor::strings([], ["bc"]).unwrap();
    let out = Equal::call(&a, &b).run().unwrap();
    assert_eq!(out.as_slice::<bool>().unwrap(), [false, true, false]);
    let out = Equal::call(vector(&[true, false]), Tensor::scalar(false))
        .run()
        .unwrap();
    assert_eq!(out.as_slice::<bool>().unwrap(), [false, true]);
    let q = |v: &[i8]| vector(&v.iter().map(|&x| op_core::QInt8(x)).collect::<Vec<_>>());
    let out = Equal::call(q(&[1, 2]), q(&[1, 3])).run().unwrap();
    assert_eq!(out.as_slice::<bool>().unwrap(), [true, false]);
}

// ---- Every op against a naive broadcast ----

/// Runs binary `op` on `a` and `b` both ways and checks it against
/// `reference` over the naive broadcast.
fn check_binary<T: Element, U: Element>(
    op: &str,
    a: &Tensor,
    b: &Tensor,
    reference: impl Fn(&T, &T) -> U,
) -> Result<(), TestCaseError> {
    op_kernels::link();
    let got = run_both_ways(Runtime::global(), op, &[a.clone(), b.clone()], &[])
        .map_err(|e| TestCaseError::fail(format!("{op}: {e}")))?;
    let (dims, values) = naive_binary(a, b, reference);
    let want = Tensor::from_vec(dims, values).unwrap();
    prop_assert!(
        same_tensors(&got, &want),
        "{} of {:?} and {:?}: got {:?}, want {:?}",
        op,
        a,
        b,
        got,
        want
    );
    Ok(())
}

/// A unary op's function, written with plain Rust arithmetic.
type UnaryReference = fn(f64) -> f64;

fn float_values() -> impl Strategy<Value = Vec<f64>> {
    let value = prop_oneof![
        8 => -100.0f64..100.0,
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(-0.0f64),
        1 => Just(0.0f64),
    ];
    prop::collection::vec(value, 1..16)
}

/// The binary ops on a float type `$t`: `(op, reference)`, where each
/// reference is written with plain Rust arithmetic.
macro_rules! float_binary_ops {
    ($t:ty) => {{
        let ops: [(&str, fn(&$t, &$t) -> $t); 8] = [
            ("AddV2", |a, b| a + b),
            ("Sub", |a, b| a - b),
            ("Mul", |a, b| a * b),
            ("RealDiv", |a, b| a / b),
            ("Maximum", |a, b| {
                if a.is_nan() || b.is_nan() {
                    <$t>::NAN
                } else if a < b {
                    *b
                } else {
                    *a
                }
            }),
            ("Minimum", |a, b| {
                if a.is_nan() || b.is_nan() {
                    <$t>::NAN
                } else if b < a {
                    *b
                } else {
                    *a
                }
            }),
            ("Pow", |a, b| a.powf(*b)),
            ("SquaredDifference", |a, b| (a - b) * (a - b)),
        ];
        ops
    }};
}

macro_rules! comparisons {
    ($t:ty) => {{
        let ops: [(&str, fn(&$t, &$t) -> bool); 3] = [
            ("Greater", |a, b| a > b),
            ("Less", |a, b| a < b),
            ("Equal", |a, b| a == b),
        ];
        ops
    }};
}

proptest! {
    #[test]
    fn float_binary_ops_match_a_naive_broadcast(
        shapes in broadcastable(2),
        xs in float_values(),
        ys in float_values(),
    ) {
        let (x32, y32): (Vec<f32>, Vec<f32>) =
            (xs.iter().map(|&v| v as f32).collect(), ys.iter().map(|&v| v as f32).collect());
        let (a, b) = (tensor(&shapes[0], &x32), tensor(&shapes[1], &y32));
        for (op, f) in float_binary_ops!(f32) {
            check_binary(op, &a, &b, f)?;
        }
        for (op, f) in comparisons!(f32) {
            check_binary(op, &a, &b, f)?;
        }
        let (a, b) = (tensor(&shapes[0], &xs), tensor(&shapes[1], &ys));
        for (op, f) in float_binary_ops!(f64) {
            check_binary(op, &a, &b, f)?;
        }
        for (op, f) in comparisons!(f64) {
            check_binary(op, &a, &b, f)?;
        }
    }

    #[test]
    fn sixteen_bit_float_ops_match_float_arithmetic_rounded(
        shapes in broadcastable(2),
        xs in float_values(),
        ys in float_values(),
    ) {
        let h = |v: &[f64]| v.iter().map(|&x| f16::from_f64(x)).collect::<Vec<_>>();
        let (a, b) = (tensor(&shapes[0], &h(&xs)), tensor(&shapes[1], &h(&ys)));
        let via = |f: fn(f32, f32) -> f32| move |a: &f16, b: &f16| f16::from_f32(f(a.to_f32(), b.to_f32()));
        check_binary("AddV2", &a, &b, via(|a, b| a + b))?;
        check_binary("Mul", &a, &b, via(|a, b| a * b))?;
        check_binary("RealDiv", &a, &b, via(|a, b| a / b))?;
        check_binary("Pow", &a, &b, via(f32::powf))?;
        check_binary("Greater", &a, &b, |a: &f16, b: &f16| a > b)?;
        let b16 = |v: &[f64]| v.iter().map(|&x| bf16::from_f64(x)).collect::<Vec<_>>();
        let (a, b) = (tensor(&shapes[0], &b16(&xs)), tensor(&shapes[1], &b16(&ys)));
        let via = |f: fn(f32, f32) -> f32| move |a: &bf16, b: &bf16| bf16::from_f32(f(a.to_f32(), b.to_f32()));
        check_binary("Sub", &a, &b, via(|a, b| a - b))?;
        // Two steps, each rounded (TensorFlow: 94 and 0.60546875 give 8768,
        // not the 8704 of one rounding).
        check_binary("SquaredDifference", &a, &b, |a: &bf16, b: &bf16| {
            let d = bf16::from_f32(a.to_f32() - b.to_f32());
            bf16::from_f32(d.to_f32() * d.to_f32())
        })?;
        check_binary("Less", &a, &b, |a: &bf16, b: &bf16| a < b)?;
    }

    #[test]
    fn integer_binary_ops_wrap_like_a_naive_broadcast(
        shapes in broadcastable(2),
        xs in prop::collection::vec(any::<i64>(), 1..16),
        ys in prop::collection::vec(any::<i64>(), 1..16),
    ) {
        macro_rules! integer_ops {
            ($t:ty) => {{
                let x: Vec<$t> = xs.iter().map(|&v| v as $t).collect();
                let y: Vec<$t> = ys.iter().map(|&v| v as $t).collect();
                let (a, b) = (tensor(&shapes[0], &x), tensor(&shapes[1], &y));
                check_binary("AddV2", &a, &b, |a: &$t, b: &$t| a.wrapping_add(*b))?;
                check_binary("Sub", &a, &b, |a: &$t, b: &$t| a.wrapping_sub(*b))?;
                check_binary("Mul", &a, &b, |a: &$t, b: &$t| a.wrapping_mul(*b))?;
                check_binary("Maximum", &a, &b, |a: &$t, b: &$t| *a.max(b))?;
                check_binary("Minimum", &a, &b, |a: &$t, b: &$t| *a.min(b))?;
                for (op, f) in comparisons!($t) {
                    check_binary(op, &a, &b, f)?;
                }
            }};
        }
        integer_ops!(i32);
        integer_ops!(i64);
        integer_ops!(u8);
        integer_ops!(u64);
        integer_ops!(i16);
        // SquaredDifference has int32 and int64 kernels only.
        let (a, b) = (tensor(&shapes[0], &xs), tensor(&shapes[1], &ys));
        check_binary("SquaredDifference", &a, &b, |a: &i64, b: &i64| {
            a.wrapping_sub(*b).wrapping_mul(a.wrapping_sub(*b))
        })?;
    }

    #[test]
    fn integer_powers_wrap_and_fail_on_negative_exponents(
        shapes in broadcastable(2),
        xs in prop::collection::vec(-9i32..10, 1..16),
        ys in prop::collection::vec(-1i32..40, 1..16),
    ) {
        let (a, b) = (tensor(&shapes[0], &xs), tensor(&shapes[1], &ys));
        let (_, exponents) = naive_binary(&a, &b, |_: &i32, e: &i32| *e);
        if exponents.iter().any(|e| *e < 0) {
            let err = run_both_ways(Runtime::global(), "Pow", &[a, b], &[]).unwrap_err();
            prop_assert_eq!(err.code(), Code::InvalidArgument);
            prop_assert_eq!(err.message(), "Integers to negative integer powers are not allowed");
        } else {
            check_binary("Pow", &a, &b, |a: &i32, e: &i32| a.wrapping_pow(*e as u32))?;
        }
    }

    #[test]
    fn complex_binary_ops_match_a_naive_broadcast(
        shapes in broadcastable(2),
        xs in prop::collection::vec((-10.0f32..10.0, -10.0f32..10.0), 1..16),
        ys in prop::collection::vec((-10.0f32..10.0, -10.0f32..10.0), 1..16),
    ) {
        let c = |v: &[(f32, f32)]| v.iter().map(|&(re, im)| Complex64::new(re, im)).collect::<Vec<_>>();
        let (a, b) = (tensor(&shapes[0], &c(&xs)), tensor(&shapes[1], &c(&ys)));
        check_binary("AddV2", &a, &b, |a: &Complex64, b: &Complex64| a + b)?;
        check_binary("Mul", &a, &b, |a: &Complex64, b: &Complex64| a * b)?;
        check_binary("RealDiv", &a, &b, |a: &Complex64, b: &Complex64| a / b)?;
        check_binary("SquaredDifference", &a, &b, |a: &Complex64, b: &Complex64| (a - b) * (a - b).conj())?;
        check_binary("Equal", &a, &b, |a: &Complex64, b: &Complex64| a == b)?;
    }

    #[test]
    fn unary_ops_apply_their_function_to_every_element(
        dims in prop::collection::vec(0usize..5, 0..4),
        xs in float_values(),
    ) {
        op_kernels::link();
        let x = tensor(&dims, &xs);
        let ops: [(&str, UnaryReference); 11] = [
            ("Neg", |v| -v),
            ("Square", |v| v * v),
            ("Sqrt", f64::sqrt),
            ("Rsqrt", |v| 1.0 / v.sqrt()),
            ("Exp", f64::exp),
            ("Log", f64::ln),
            ("Sin", f64::sin),
            ("Cos", f64::cos),
            ("Tanh", f64::tanh),
            ("Sigmoid", |v| 1.0 / (1.0 + (-v).exp())),
            ("Relu", |v| if v < 0.0 { 0.0 } else { v }),
        ];
        for (op, f) in ops {
            let got = run_both_ways(Runtime::global(), op, std::slice::from_ref(&x), &[]).unwrap();
            let want = Tensor::from_vec(&dims, x.as_slice::<f64>().unwrap().iter().map(|v| f(*v)).collect()).unwrap();
            prop_assert!(same_tensors(&got, &want), "{}: {:?} gave {:?}", op, x, got);
        }
    }
}

// ---- In place ----

/// The address of a tensor's first element.
fn address<T: Element>(t: &Tensor) -> *const T {
    t.as_slice::<T>().unwrap().as_ptr()
}

#[test]
fn a_binary_op_writes_into_an_input_handed_over() {
    op_kernels::link();
    let x = Tensor::from_vec([4, 250], vec![1.5f32; 1000]).unwrap();
    let at = address::<f32>(&x);
    // Same shapes: into x.
    let y = Tensor::from_vec([4, 250], vec![2.0f32; 1000]).unwrap();
    let sum = AddV2::call(x, &y).run().unwrap();
    assert_eq!(address::<f32>(&sum), at);
    assert!(sum.as_slice::<f32>().unwrap().iter().all(|&v| v == 3.5));
    // A scalar operand, then a broadcast row: still the same buffer.
    let scaled = Mul::call(sum, Tensor::scalar(2.0f32)).run().unwrap();
    assert_eq!(address::<f32>(&scaled), at);
    let row = Tensor::from_vec([250], (0..250).map(|i| i as f32).collect()).unwrap();
    let shifted = Sub::call(scaled, &row).run().unwrap();
    assert_eq!(address::<f32>(&shifted), at);
    assert_eq!(shifted.as_slice::<f32>().unwrap()[251], 7.0 - 1.0);
    // The second input when the first is shared: a [1,1000] against a
    // [1000], which has as many elements as the [1,1000] output.
    let y = Tensor::from_vec([1, 1000], vec![1.0f32; 1000]).unwrap();
    let at_y = address::<f32>(&y);
    let flat = shifted.reshape([1000]).unwrap();
    let out = AddV2::call(&flat, y).run().unwrap();
    assert_eq!(out.dims(), [1, 1000]);
    assert_eq!(address::<f32>(&out), at_y);
    // A chain of unary and binary ops stays in one buffer.
    let chained = Neg::call(AddV2::call(out, Tensor::scalar(1.0f32)).run().unwrap())
        .run()
        .unwrap();
    assert_eq!(address::<f32>(&chained), at_y);
}

#[test]
fn shared_inputs_are_neither_reused_nor_changed() {
    op_kernels::link();
    let x = Tensor::from_vec([1000], vec![1i64; 1000]).unwrap();
    let y = Tensor::from_vec([1000], vec![2i64; 1000]).unwrap();
    let sum = AddV2::call(&x, &y).run().unwrap();
    assert_ne!(address::<i64>(&sum), address::<i64>(&x));
    assert_ne!(address::<i64>(&sum), address::<i64>(&y));
    assert!(x.as_slice::<i64>().unwrap().iter().all(|&v| v == 1));
    assert!(y.as_slice::<i64>().unwrap().iter().all(|&v| v == 2));
    // An input with fewer elements than the output is never the output.
    let small = Tensor::from_vec([1000], vec![1i64; 1000]).unwrap();
    let at = address::<i64>(&small);
    let big = Tensor::from_vec([3, 1000], vec![1i64; 3000]).unwrap();
    let out = AddV2::call(small, &big).run().unwrap();
    assert_eq!(out.dims(), [3, 1000]);
    assert_ne!(address::<i64>(&out), at);
    // A comparison's output is bool: never an input's buffer.
    let z = Tensor::from_vec([1000], vec![0.5f64; 1000]).unwrap();
    let at = address::<f64>(&z);
    let greater = OpCall::new("Greater")
        .input(z)
        .input(Tensor::scalar(0.0f64))
        .run()
        .unwrap();
    assert_eq!(greater[0].dtype(), DType::Bool);
    assert_ne!(
        greater[0].as_slice::<bool>().unwrap().as_ptr() as *const f64,
        at
    );
}

// ---- Large tensors, split over threads ----

#[test]
fn large_broadcasts_split_over_threads_give_the_naive_result() {
    op_kernels::link();
    let runtime = Runtime::new().with_threads(Arc::new(ThreadPool::new(4).unwrap()));
    let values: Vec<i64> = (0..997).map(|i| i * 7919 % 1009 - 500).collect();
    for (da, db) in [
        (vec![64, 1, 50], vec![1, 40, 50]),
        (vec![200, 300], vec![300]),
        (vec![60_000], vec![]),
        (vec![7, 1, 3000], vec![7, 5, 1]),
        (vec![50_000], vec![50_000]),
    ] {
        let (a, b) = (tensor(&da, &values), tensor(&db, &values));
        for (op, f) in [
            (
                "AddV2",
                (|a, b| a.wrapping_add(*b)) as fn(&i64, &i64) -> i64,
            ),
            ("Mul", |a, b| a.wrapping_mul(*b)),
            ("Maximum", |a, b| *a.max(b)),
        ] {
            let got = run_both_ways(&runtime, op, &[a.clone(), b.clone()], &[]).unwrap();
            let (dims, want) = naive_binary(&a, &b, f);
            assert_eq!(got.dims(), dims, "{op} {da:?} {db:?}");
            assert!(got.as_slice::<i64>().unwrap() == want, "{op} {da:?} {db:?}");
        }
        let got = run_both_ways(&runtime, "Less", &[a.clone(), b.clone()], &[]).unwrap();
        let (_, want) = naive_binary(&a, &b, |a: &i64, b: &i64| a < b);
        assert!(got.as_slice::<bool>().unwrap() == want);
    }
    // The first failing element's error, however the work was split.
    let base = tensor(&[100_000], &[2i32]);
    let mut exponents = vec![1i32; 100_000];
    exponents[70_000] = -1;
    exponents[99_999] = -2;
    let exponents = Tensor::from_vec([100_000], exponents).unwrap();
    let err = run_both_ways(&runtime, "Pow", &[base, exponents], &[]).unwrap_err();
    assert_eq!(
        err.message(),
        "Integers to negative integer powers are not allowed"
    );
}

// ---- Errors ----

#[test]
fn shapes_that_do_not_broadcast_are_an_error_naming_both_inputs() {
    op_kernels::link();
    let err = AddV2::call(vector(&[1.0f32, 2.0]), vector(&[1.0f32, 2.0, 3.0]))
        .node_name("add")
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &[
            "op AddV2 (node 'add')",
            "Incompatible shapes: [2] vs. [3]",
            "input 0 ('x') and input 1 ('y') do not broadcast",
        ],
    );
    for op in [
        "Sub",
        "Mul",
        "RealDiv",
        "Maximum",
        "Minimum",
        "Pow",
        "SquaredDifference",
        "Greater",
        "Less",
        "Equal",
    ] {
        let err = OpCall::new(op)
            .input(tensor(&[2, 3], &[1.0f64]))
            .input(tensor(&[4, 3], &[1.0f64]))
            .run()
            .unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{op}");
        assert_contains(&err, &["Incompatible shapes: [2,3] vs. [4,3]"]);
    }
}

#[test]
fn equal_without_incompatible_shape_error_gives_false_for_shapes_that_do_not_broadcast() {
    op_kernels::link();
    let out = Equal::call(vector(&[1i32, 2]), vector(&[1i32, 2, 3]))
        .incompatible_shape_error(false)
        .run()
        .unwrap();
    assert_eq!(out, Tensor::scalar(false));
    // Shapes that broadcast are compared as usual.
    let out = run_both_ways(
        Runtime::global(),
        "Equal",
        &[tensor(&[2, 1], &[1i32, 2]), vector(&[1i32, 2, 3])],
        &[("incompatible_shape_error", AttrValue::from(false))],
    )
    .unwrap();
    assert_eq!(out.dims(), [2, 3]);
    assert_eq!(
        out.as_slice::<bool>().unwrap(),
        [true, false, false, false, true, false]
    );
}

#[test]
fn wrong_dtypes_are_errors() {
    op_kernels::link();
    // Two types for one T.
    let err = AddV2::call(vector(&[1.0f32]), vector(&[1i32]))
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["AddV2", "int32", "float"]);
    // A type the op does not allow.
    let err = Neg::call(vector(&[1u8])).run().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["Neg", "uint8"]);
    let err = OpCall::new("Greater")
        .input(vector(&[true]))
        .input(vector(&[false]))
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    // Allowed by the op, but TensorFlow has no CPU kernel: integer RealDiv.
    let err = RealDiv::call(vector(&[1i32]), vector(&[0i32]))
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_contains(&err, &["RealDiv", "int32"]);
    let err = Relu::call(vector(&[op_core::QInt8(1)])).run().unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
}
