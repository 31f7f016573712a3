//! `Cast`: every pair of supported types (small whole numbers survive any
//! cast and back), TensorFlow's results (recorded from its CPU kernel)
//! where C++ defines them, our saturation where it does not, `Truncate`,
//! a cast to the same type, and the pairs that are errors.

use op_core::{Code, Complex64, Complex128, DType, Element, OpCall, Tensor, bf16, f16};
use op_kernels::math::Cast;
use proptest::prelude::*;

mod common;
use common::assert_contains;

/// Every dtype `Cast` converts between.
const TYPES: [DType; 15] = [
    DType::F32,
    DType::F64,
    DType::F16,
    DType::BF16,
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::U8,
    DType::U16,
    DType::U32,
    DType::U64,
    DType::Bool,
    DType::Complex64,
    DType::Complex128,
];

fn cast(x: &Tensor, to: DType) -> Tensor {
    op_kernels::link();
    Cast::call(x, to).run().unwrap()
}

fn vector<T: Element>(values: &[T]) -> Tensor {
    Tensor::from_vec([values.len()], values.to_vec()).unwrap()
}

/// `values` (small whole numbers) as a vector of `dtype`, built without
/// `Cast`.
fn whole_numbers(dtype: DType, values: &[u8]) -> Tensor {
    macro_rules! build {
        ($($d:ident => $e:expr),* $(,)?) => {
            match dtype {
                $(DType::$d => vector(&values.iter().map($e).collect::<Vec<_>>()),)*
                other => panic!("{other}"),
            }
        };
    }
    build!(
        F32 => |&v| v as f32,
        F64 => |&v| v as f64,
        F16 => |&v| f16::from_f32(v as f32),
        BF16 => |&v| bf16::from_f32(v as f32),
        I8 => |&v| v as i8,
        I16 => |&v| v as i16,
        I32 => |&v| v as i32,
        I64 => |&v| v as i64,
        U8 => |&v| v,
        U16 => |&v| v as u16,
        U32 => |&v| v as u32,
        U64 => |&v| v as u64,
        Bool => |&v| v != 0,
        Complex64 => |&v| Complex64::new(v as f32, 0.0),
        Complex128 => |&v| Complex128::new(v as f64, 0.0),
    )
}

proptest! {
    #[test]
    fn small_whole_numbers_survive_every_cast_and_back(
        values in prop::collection::vec(0u8..=100, 0..12),
    ) {
        for from in TYPES {
            let x = whole_numbers(from, &values);
            for to in TYPES {
                let y = cast(&x, to);
                prop_assert_eq!(y.dtype(), to);
                prop_assert_eq!(y.dims(), x.dims());
                let bools: Vec<u8> = values.iter().map(|&v| u8::from(v != 0)).collect();
                // A trip through bool keeps only zero or not.
                let expected = if from == DType::Bool || to == DType::Bool { &bools } else { &values };
                prop_assert_eq!(&y, &whole_numbers(to, expected), "{} -> {}", from, to);
                prop_assert_eq!(cast(&y, from), whole_numbers(from, expected), "{} -> {} -> {}", from, to, from);
            }
        }
    }
}

#[test]
fn conversions_give_tensorflows_results_where_cpp_defines_them() {
    let x = vector(&[2.7f32, -2.7, 0.5, -0.5, 300.0, -129.0, 65539.0]);
    assert_eq!(
        cast(&x, DType::I32).as_slice::<i32>().unwrap(),
        [2, -2, 0, 0, 300, -129, 65539]
    );
    assert_eq!(
        cast(&x, DType::I64).as_slice::<i64>().unwrap(),
        [2, -2, 0, 0, 300, -129, 65539]
    );
    let big = vector(&[(1i64 << 40) + 1, -1]);
    assert_eq!(cast(&big, DType::I32).as_slice::<i32>().unwrap(), [1, -1]);
    assert_eq!(cast(&big, DType::U8).as_slice::<u8>().unwrap(), [1, 255]);
    let doubles = vector(&[2049.0f64, 65520.0, 1e6]);
    assert_eq!(
        cast(&doubles, DType::F16).as_slice::<f16>().unwrap(),
        [f16::from_f32(2048.0), f16::INFINITY, f16::INFINITY]
    );
    let int = vector(&[16_777_217i64]);
    assert_eq!(
        cast(&int, DType::BF16).as_slice::<bf16>().unwrap(),
        [bf16::from_f32(16_777_216.0)]
    );
    assert_eq!(
        cast(&vector(&[true, false]), DType::F16)
            .as_slice::<f16>()
            .unwrap(),
        [f16::ONE, f16::ZERO]
    );
    let nan = vector(&[f32::NAN, 0.0, -0.0, 3.0]);
    assert_eq!(
        cast(&nan, DType::Bool).as_slice::<bool>().unwrap(),
        [true, false, false, true]
    );
    // Complex numbers keep their real part (TensorFlow: [False, True] and
    // [0, 1, 2]).
    let z = vector(&[
        Complex128::new(0.0, 1.0),
        Complex128::new(1.0, 0.0),
        Complex128::new(2.7, -3.0),
    ]);
    assert_eq!(
        cast(&z, DType::Bool).as_slice::<bool>().unwrap(),
        [false, true, true]
    );
    assert_eq!(cast(&z, DType::I32).as_slice::<i32>().unwrap(), [0, 1, 2]);
    assert_eq!(
        cast(&vector(&[1.5f32]), DType::Complex128)
            .as_slice::<Complex128>()
            .unwrap(),
        [Complex128::new(1.5, 0.0)]
    );
}

#[test]
fn floats_out_of_an_integer_range_saturate_and_nan_becomes_zero() {
    let x = vector(&[1e10f32, -1e10, f32::NAN, f32::INFINITY, f32::NEG_INFINITY]);
    assert_eq!(
        cast(&x, DType::I32).as_slice::<i32>().unwrap(),
        [i32::MAX, i32::MIN, 0, i32::MAX, i32::MIN]
    );
    assert_eq!(
        cast(&x, DType::U8).as_slice::<u8>().unwrap(),
        [255, 0, 0, 255, 0]
    );
    let x = vector(&[300.0f64, -129.0, -1.0, 9.3e18]);
    assert_eq!(
        cast(&x, DType::I8).as_slice::<i8>().unwrap(),
        [127, -128, -1, 127]
    );
    assert_eq!(
        cast(&x, DType::U64).as_slice::<u64>().unwrap(),
        [300, 0, 0, 9_300_000_000_000_000_000]
    );
    let h = vector(&[f16::INFINITY, f16::from_f32(-2.5)]);
    assert_eq!(
        cast(&h, DType::I16).as_slice::<i16>().unwrap(),
        [i16::MAX, -2]
    );
}

#[test]
fn truncate_rounds_toward_zero_for_the_pairs_tensorflow_truncates() {
    op_kernels::link();
    let truncated = |x: &Tensor, to: DType| Cast::call(x, to).Truncate(true).run().unwrap();
    let v = 1.9999999999f64;
    let x = vector(&[v, -v, 3.0000001]);
    // TensorFlow: [1.9999999 -1.9999999 3.] and [1.999 -1.999 3.].
    assert_eq!(
        truncated(&x, DType::F32).as_slice::<f32>().unwrap(),
        [1.9999999, -1.9999999, 3.0]
    );
    assert_eq!(
        cast(&x, DType::F32).as_slice::<f32>().unwrap(),
        [2.0, -2.0, 3.0]
    );
    assert_eq!(
        truncated(&x, DType::F16).as_slice::<f16>().unwrap(),
        [
            f16::from_f32(1.999),
            f16::from_f32(-1.999),
            f16::from_f32(3.0)
        ]
    );
    // complex128 to complex64: both parts.
    let z = vector(&[Complex128::new(v, -v)]);
    assert_eq!(
        truncated(&z, DType::Complex64)
            .as_slice::<Complex64>()
            .unwrap(),
        [Complex64::new(1.9999999, -1.9999999)]
    );
    assert_eq!(
        truncated(&z, DType::F32).as_slice::<f32>().unwrap(),
        [1.9999999]
    );
    // double to complex64: our 24 bits (TensorFlow 2.21 gives 0.5 here).
    assert_eq!(
        truncated(&x, DType::Complex64)
            .as_slice::<Complex64>()
            .unwrap()[0],
        Complex64::new(1.9999999, 0.0)
    );
    // Other pairs ignore it, as TensorFlow's do.
    let f = vector(&[1.9999999f32]);
    assert_eq!(
        truncated(&f, DType::BF16).as_slice::<bf16>().unwrap(),
        cast(&f, DType::BF16).as_slice::<bf16>().unwrap()
    );
    assert_eq!(
        truncated(&f, DType::F16).as_slice::<f16>().unwrap(),
        [f16::from_f32(2.0)]
    );
    // NaN stays NaN.
    let nan = truncated(&vector(&[f64::NAN]), DType::F32);
    assert!(nan.as_slice::<f32>().unwrap()[0].is_nan());
}

#[test]
fn a_cast_to_the_same_type_is_the_input_itself_for_every_type() {
    let x = Tensor::from_vec([1000], vec![0.25f32; 1000]).unwrap();
    let y = cast(&x, DType::F32);
    assert_eq!(
        y.as_slice::<f32>().unwrap().as_ptr(),
        x.as_slice::<f32>().unwrap().as_ptr()
    );
    let s = Tensor::strings([2], ["a", "b"]).unwrap();
    assert_eq!(cast(&s, DType::String), s);
}

#[test]
fn unsupported_pairs_are_unimplemented_errors_with_tensorflows_message() {
    op_kernels::link();
    for (x, to, message) in [
        (
            vector(&[1.0f32]),
            DType::String,
            "Cast float to string is not supported",
        ),
        (
            Tensor::strings([1], ["a"]).unwrap(),
            DType::F32,
            "Cast string to float is not supported",
        ),
        (
            vector(&[1i32]),
            DType::Resource,
            "Cast int32 to resource is not supported",
        ),
        (
            vector(&[op_core::QInt8(1)]),
            DType::I32,
            "Cast qint8 to int32 is not supported",
        ),
    ] {
        let err = OpCall::new("Cast")
            .input(x)
            .attr("DstT", to)
            .run()
            .unwrap_err();
        assert_eq!(err.code(), Code::Unimplemented, "{message}");
        assert_contains(&err, &[message]);
    }
    // DstT is required.
    let err = OpCall::new("Cast")
        .input(vector(&[1i32]))
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["DstT"]);
}

#[test]
fn large_casts_split_over_threads() {
    op_kernels::link();
    let runtime = op_core::Runtime::new().with_threads(std::sync::Arc::new(
        op_core::threads::ThreadPool::new(4).unwrap(),
    ));
    let x = Tensor::from_vec([100_000], (0..100_000).map(|i| i as f64 * 0.5).collect()).unwrap();
    let y = Cast::call(&x, DType::I32).run_on(&runtime).unwrap();
    let values = y.as_slice::<i32>().unwrap();
    assert!(values.iter().enumerate().all(|(i, &v)| v == (i / 2) as i32));
}
