//! `MatMul`: products against a naive reference on random shapes and
//! transposes for every kernel's type, on one thread and split over
//! several; TensorFlow's results for empty and overflowing products; the
//! shape function over partial shapes; and the errors, which name both
//! inputs' shapes.

use std::sync::Arc;

use op_core::shape_inference::testing::ShapeTest;
use op_core::threads::ThreadPool;
use op_core::{Code, Complex64, DType, Element, OpCall, Runtime, Tensor, bf16, f16};
use op_kernels::matmul::MatMul;
use proptest::prelude::*;

mod common;
use common::assert_contains;

/// `MatMul` of `a` and `b` on `runtime`.
fn matmul(
    runtime: &Runtime,
    a: &Tensor,
    b: &Tensor,
    transpose_a: bool,
    transpose_b: bool,
) -> op_core::Result<Tensor> {
    op_kernels::link();
    OpCall::new("MatMul")
        .input(a)
        .input(b)
        .attr("transpose_a", transpose_a)
        .attr("transpose_b", transpose_b)
        .run_on(runtime)
        .map(|mut out| out.remove(0))
}

/// The `[rows, cols]` matrix `m` stored as given, or transposed (stored as
/// `[cols, rows]`) for an op that is told to transpose it back.
fn stored(m: &[i64], rows: usize, cols: usize, transpose: bool) -> (Vec<i64>, [usize; 2]) {
    if !transpose {
        return (m.to_vec(), [rows, cols]);
    }
    let t = (0..cols * rows)
        .map(|i| m[(i % rows) * cols + i / rows])
        .collect();
    (t, [cols, rows])
}

/// `a · b` by the definition, wrapping.
fn reference(a: &[i64], b: &[i64], m: usize, k: usize, n: usize, wrap: fn(i64) -> i64) -> Vec<i64> {
    let mut c = vec![0i64; m * n];
    for i in 0..m {
        for j in 0..n {
            let mut sum = 0i64;
            for p in 0..k {
                sum = wrap(sum.wrapping_add(wrap(a[i * k + p].wrapping_mul(b[p * n + j]))));
            }
            c[i * n + j] = sum;
        }
    }
    c
}

/// A product case: `[m, k] · [k, n]`, the transposes, and the operands'
/// values.
#[derive(Clone, Debug)]
struct Case {
    m: usize,
    k: usize,
    n: usize,
    transpose_a: bool,
    transpose_b: bool,
    a: Vec<i64>,
    b: Vec<i64>,
}

fn cases(max: usize, values: std::ops::RangeInclusive<i64>) -> impl Strategy<Value = Case> {
    (0..=max, 0..=max, 0..=max, any::<bool>(), any::<bool>()).prop_flat_map(
        move |(m, k, n, transpose_a, transpose_b)| {
            let values = values.clone();
            (
                proptest::collection::vec(values.clone(), m * k),
                proptest::collection::vec(values, k * n),
            )
                .prop_map(move |(a, b)| Case {
                    m,
                    k,
                    n,
                    transpose_a,
                    transpose_b,
                    a,
                    b,
                })
        },
    )
}

/// Runs `case` with its values converted to `T` and checks the product
/// against the reference (computed wrapping as `wrap` says), converted to
/// `T` too.
fn check<T: Element + Copy + PartialEq + std::fmt::Debug>(
    runtime: &Runtime,
    case: &Case,
    to: fn(i64) -> T,
    wrap: fn(i64) -> i64,
) -> Result<(), TestCaseError> {
    let (a, a_dims) = stored(&case.a, case.m, case.k, case.transpose_a);
    let (b, b_dims) = stored(&case.b, case.k, case.n, case.transpose_b);
    let a = Tensor::from_vec(a_dims, a.into_iter().map(to).collect()).unwrap();
    let b = Tensor::from_vec(b_dims, b.into_iter().map(to).collect()).unwrap();
    let out = matmul(runtime, &a, &b, case.transpose_a, case.transpose_b)
        .map_err(|e| TestCaseError::fail(format!("{case:?}: {e}")))?;
    prop_assert_eq!(out.dims(), [case.m, case.n]);
    let expected: Vec<T> = reference(&case.a, &case.b, case.m, case.k, case.n, wrap)
        .into_iter()
        .map(to)
        .collect();
    prop_assert_eq!(
        out.as_slice::<T>().unwrap(),
        &expected[..],
        "{} {:?}",
        T::DTYPE,
        case
    );
    Ok(())
}

fn wrap_i32(v: i64) -> i64 {
    v as i32 as i64
}

fn no_wrap(v: i64) -> i64 {
    v
}

fn one_thread() -> Runtime {
    Runtime::new().with_threads(Arc::new(ThreadPool::single()))
}

fn four_threads() -> Runtime {
    Runtime::new().with_threads(Arc::new(ThreadPool::new(4).unwrap()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Small integers: every product is exact in every type, so floats are
    /// compared exactly too.
    #[test]
    fn every_kernel_matches_the_reference_with_any_transposes(case in cases(9, -8..=8)) {
        let rt = one_thread();
        check(&rt, &case, |v| v as f32, no_wrap)?;
        check(&rt, &case, |v| v as f64, no_wrap)?;
        check(&rt, &case, |v| v as i32, no_wrap)?;
        check(&rt, &case, |v| v, no_wrap)?;
        check(&rt, &case, |v| f16::from_f64(v as f64), no_wrap)?;
        check(&rt, &case, |v| bf16::from_f64(v as f64), no_wrap)?;
        check_complex(&rt, &case)?;
    }

    /// Integers over their whole range: products and sums wrap.
    #[test]
    fn integer_products_wrap_as_tensorflows(case in cases(6, i64::MIN..=i64::MAX)) {
        let rt = one_thread();
        check(&rt, &case, |v| v as i32, wrap_i32)?;
        check(&rt, &case, |v| v, no_wrap)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// Large enough to be split in blocks that start and end inside rows.
    #[test]
    fn large_products_split_over_threads_match_the_reference(case in cases(90, -8..=8)) {
        let rt = four_threads();
        check(&rt, &case, |v| v as f32, no_wrap)?;
        check(&rt, &case, |v| v, no_wrap)?;
        check(&rt, &case, |v| f16::from_f64(v as f64), no_wrap)?;
    }
}

/// Complex products against the definition (the reference above is real).
fn check_complex(rt: &Runtime, case: &Case) -> Result<(), TestCaseError> {
    let z = |v: i64| Complex64::new(v as f32, (v % 3) as f32);
    let (a, a_dims) = stored(&case.a, case.m, case.k, case.transpose_a);
    let (b, b_dims) = stored(&case.b, case.k, case.n, case.transpose_b);
    let at = Tensor::from_vec(a_dims, a.into_iter().map(z).collect()).unwrap();
    let bt = Tensor::from_vec(b_dims, b.into_iter().map(z).collect()).unwrap();
    let out = matmul(rt, &at, &bt, case.transpose_a, case.transpose_b).unwrap();
    let got = out.as_slice::<Complex64>().unwrap();
    for i in 0..case.m {
        for j in 0..case.n {
            let want: Complex64 = (0..case.k)
                .map(|p| z(case.a[i * case.k + p]) * z(case.b[p * case.n + j]))
                .sum();
            prop_assert_eq!(got[i * case.n + j], want, "{:?}", case);
        }
    }
    Ok(())
}

#[test]
fn complex_products_are_complex() {
    // (1+2i)(3-i) + (i)(2) = 5+5i + 2i = 5+7i
    let a = Tensor::from_vec(
        [1, 2],
        vec![Complex64::new(1.0, 2.0), Complex64::new(0.0, 1.0)],
    )
    .unwrap();
    let b = Tensor::from_vec(
        [2, 1],
        vec![Complex64::new(3.0, -1.0), Complex64::new(2.0, 0.0)],
    )
    .unwrap();
    let out = matmul(&Runtime::new(), &a, &b, false, false).unwrap();
    assert_eq!(
        out.as_slice::<Complex64>().unwrap(),
        [Complex64::new(5.0, 7.0)]
    );
    let out = matmul(&Runtime::new(), &a, &a, false, true).unwrap();
    // (1+2i)² + i² = -3+4i - 1
    assert_eq!(
        out.as_slice::<Complex64>().unwrap(),
        [Complex64::new(-4.0, 4.0)]
    );
}

#[test]
fn an_empty_inner_dimension_gives_zeros() {
    let a = Tensor::from_vec([2, 0], Vec::<f32>::new()).unwrap();
    let b = Tensor::from_vec([0, 3], Vec::<f32>::new()).unwrap();
    let out = matmul(&Runtime::new(), &a, &b, false, false).unwrap();
    assert_eq!(out.dims(), [2, 3]);
    assert_eq!(out.as_slice::<f32>().unwrap(), [0.0; 6]);
    let out = matmul(&Runtime::new(), &b, &a, true, true).unwrap();
    assert_eq!(out.dims(), [3, 2]);
}

#[test]
fn int32_overflow_wraps_as_in_tensorflow() {
    // TensorFlow 2.21: [[2147483647]] · [[2]] = [[-2]].
    let a = Tensor::from_vec([1, 1], vec![i32::MAX]).unwrap();
    let b = Tensor::from_vec([1, 1], vec![2i32]).unwrap();
    let out = matmul(&Runtime::new(), &a, &b, false, false).unwrap();
    assert_eq!(out.as_slice::<i32>().unwrap(), [-2]);
}

#[test]
fn half_products_accumulate_in_f32() {
    // 2048 + 1 + 1 is 2050 in f32, but 2048 in half one step at a time.
    let a = Tensor::from_vec([1, 3], [2048.0f32, 1.0, 1.0].map(f16::from_f32).to_vec()).unwrap();
    let b = Tensor::from_vec([3, 1], vec![f16::ONE; 3]).unwrap();
    let out = matmul(&Runtime::new(), &a, &b, false, false).unwrap();
    assert_eq!(out.as_slice::<f16>().unwrap(), [f16::from_f32(2050.0)]);
}

#[test]
fn the_typed_wrapper_takes_the_transposes_and_tensorflows_grad_hints() {
    op_kernels::link();
    let a = Tensor::from_vec([2, 3], vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    // a · aᵀ
    let out = MatMul::call(&a, &a).transpose_b(true).run().unwrap();
    assert_eq!(out.dims(), [2, 2]);
    assert_eq!(out.as_slice::<f64>().unwrap(), [14.0, 32.0, 32.0, 77.0]);
    // aᵀ · a, with the hints TensorFlow's gradients set: no effect here.
    let out = MatMul::call(&a, &a)
        .transpose_a(true)
        .grad_a(true)
        .grad_b(true)
        .run()
        .unwrap();
    assert_eq!(out.dims(), [3, 3]);
    assert_eq!(
        out.as_slice::<f64>().unwrap(),
        [17.0, 22.0, 27.0, 22.0, 29.0, 36.0, 27.0, 36.0, 45.0]
    );
}

// ---- Errors ----

#[test]
fn inner_dimensions_that_differ_name_both_shapes() {
    let rt = Runtime::new();
    let a = Tensor::from_vec([2, 3], vec![0.0f32; 6]).unwrap();
    let b = Tensor::from_vec([4, 5], vec![0.0f32; 20]).unwrap();
    let err = matmul(&rt, &a, &b, false, false).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &[
            "MatMul",
            "input 0 ('a') has shape [2,3]",
            "input 1 ('b') has shape [4,5]",
            "transpose_a=false, transpose_b=false",
            "a's 3 columns must equal b's 4 rows",
        ],
    );
    // Compatible only without the transpose.
    let b = Tensor::from_vec([3, 4], vec![0i64; 12]).unwrap();
    let a = Tensor::from_vec([2, 3], vec![0i64; 6]).unwrap();
    let err = matmul(&rt, &a, &b, false, true).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &[
            "[2,3]",
            "[3,4]",
            "transpose_b=true",
            "a's 3 columns must equal b's 4 rows",
        ],
    );
}

#[test]
fn a_product_too_large_for_memory_is_an_error_not_a_panic() {
    // No elements in either input, but a [2^40, 2^40] product.
    let a = Tensor::from_vec([1 << 40, 0], Vec::<f64>::new()).unwrap();
    let b = Tensor::from_vec([0, 1 << 40], Vec::<f64>::new()).unwrap();
    let err = matmul(&Runtime::new(), &a, &b, false, false).unwrap_err();
    assert!(
        matches!(err.code(), Code::ResourceExhausted | Code::InvalidArgument),
        "{err}"
    );
    assert_contains(&err, &["MatMul", "output 0"]);
}

#[test]
fn inputs_that_are_not_matrices_are_invalid_arguments() {
    let rt = Runtime::new();
    let m = Tensor::from_vec([2, 2], vec![1i32; 4]).unwrap();
    let cube = Tensor::from_vec([2, 2, 1], vec![1i32; 4]).unwrap();
    let err = matmul(&rt, &cube, &m, false, false).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &["input 0 ('a') must be a matrix, but has shape [2,2,1]"],
    );
    let err = matmul(&rt, &m, &Tensor::scalar(1i32), false, false).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["input 1 ('b') must be a matrix, but has shape []"]);
}

#[test]
fn operands_of_two_types_or_without_a_kernel_are_rejected() {
    let rt = Runtime::new();
    let f = Tensor::from_vec([1, 1], vec![1.0f32]).unwrap();
    let d = Tensor::from_vec([1, 1], vec![1.0f64]).unwrap();
    let err = matmul(&rt, &f, &d, false, false).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["MatMul", "float", "double"]);
    let u = Tensor::from_vec([1, 1], vec![1u8]).unwrap();
    let err = matmul(&rt, &u, &u, false, false).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_contains(&err, &["MatMul", "uint8"]);
    let s = Tensor::strings([1, 1], ["x"]).unwrap();
    let err = matmul(&rt, &s, &s, false, false).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
}

// ---- The shape function ----

fn t() -> ShapeTest {
    op_kernels::link();
    ShapeTest::new("MatMul")
}

#[test]
fn the_product_has_the_outer_dimensions_after_the_transposes() {
    let t = t();
    t.ok("[2,3];[3,4]", "[d0_0,d1_1]");
    t.ok("[?,3];[?,?]", "[d0_0,d1_1]");
    t.ok("[2,?];[3,4]", "[d0_0,d1_1]");
    t.ok("?;[3,4]", "[?,d1_1]");
    t.ok("?;?", "[?,?]");
    let ta = t.clone().attr("transpose_a", true);
    ta.ok("[3,2];[3,4]", "[d0_1,d1_1]");
    let tb = t.clone().attr("transpose_b", true);
    tb.ok("[2,3];[4,3]", "[d0_0,d1_0]");
    let both = ta.attr("transpose_b", true);
    both.ok("[3,2];[4,3]", "[d0_1,d1_0]");
    both.ok("[?,2];[4,?]", "[d0_1,d1_0]");
}

#[test]
fn incompatible_inner_dimensions_are_shape_errors_naming_both_inputs() {
    let t = t();
    t.error("[2,3];[4,5]", "dimensions must be equal, but are 3 and 4");
    t.error(
        "[2,3];[4,5]",
        "dimension 1 of input 0 ('a') with shape [2,3]",
    );
    t.error(
        "[2,3];[4,5]",
        "dimension 0 of input 1 ('b') with shape [4,5]",
    );
    t.clone().attr("transpose_a", true).error(
        "[2,3];[3,5]",
        "dimension 0 of input 0 ('a') with shape [2,3]",
    );
    t.error(
        "[2,3,4];[3,4]",
        "input 0 ('a') has shape [2,3,4], which must be rank 2 but is rank 3",
    );
    t.error(
        "[2,3];[3]",
        "input 1 ('b') has shape [3], which must be rank 2 but is rank 1",
    );
}

#[test]
fn grad_hints_and_every_type_keep_the_shape_function() {
    for dtype in [DType::BF16, DType::F16, DType::F32, DType::I64, DType::U8] {
        t().attr("T", dtype)
            .attr("grad_a", true)
            .ok("[2,3];[3,4]", "[d0_0,d1_1]");
    }
}
