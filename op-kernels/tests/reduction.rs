//! `Sum`, `Mean`, `Max` and `Prod`: results against a naive reference on
//! random shapes, axes (negative, scalar or vector, `int32` or `int64`)
//! and `keep_dims`, on one thread and split over several; TensorFlow's
//! results for empty reductions, NaN and overflow; the shape function over
//! partial shapes with constant and unknown axes; and the errors.

use std::sync::Arc;

use op_core::shape_inference::PartialShape;
use op_core::shape_inference::testing::ShapeTest;
use op_core::threads::ThreadPool;
use op_core::{Code, DType, Element, OpCall, Registry, Runtime, Tensor, bf16, f16};
use op_kernels::reduction::{Max, Mean, Prod, Sum};
use proptest::prelude::*;

mod common;
use common::assert_contains;

const OPS: [&str; 4] = ["Sum", "Mean", "Max", "Prod"];

fn vector<T: Element>(values: Vec<T>) -> Tensor {
    Tensor::from_vec([values.len()], values).unwrap()
}

/// `op` of `x` over `axes` on `runtime`.
fn reduce(
    runtime: &Runtime,
    op: &str,
    x: &Tensor,
    axes: &Tensor,
    keep_dims: bool,
) -> op_core::Result<Tensor> {
    op_kernels::link();
    OpCall::new(op)
        .input(x)
        .input(axes)
        .attr("keep_dims", keep_dims)
        .run_on(runtime)
        .map(|mut out| out.remove(0))
}

// ---- The naive reference ----

/// Arithmetic the reference needs, in the type it computes in.
trait RefNum: Copy + PartialEq + std::fmt::Debug {
    fn zero() -> Self;
    fn one() -> Self;
    fn lowest() -> Self;
    fn add(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn max(self, o: Self) -> Self;
    fn mean(self, count: usize) -> Self;
    /// Whether `self` (ours) is `reference`: exactly for integers, within
    /// the relative tolerance `tol` for floats.
    fn matches(self, reference: Self, tol: f64) -> bool;
}

macro_rules! ref_int {
    ($($t:ty),*) => {$(
        impl RefNum for $t {
            fn zero() -> Self { 0 }
            fn one() -> Self { 1 }
            fn lowest() -> Self { <$t>::MIN }
            fn add(self, o: Self) -> Self { self.wrapping_add(o) }
            fn mul(self, o: Self) -> Self { self.wrapping_mul(o) }
            fn max(self, o: Self) -> Self { Ord::max(self, o) }
            fn mean(self, count: usize) -> Self { if count == 0 { 0 } else { self / count as $t } }
            fn matches(self, reference: Self, _tol: f64) -> bool { self == reference }
        }
    )*};
}
ref_int!(i32, i64);

impl RefNum for f64 {
    fn zero() -> Self {
        0.0
    }
    fn one() -> Self {
        1.0
    }
    fn lowest() -> Self {
        f64::NEG_INFINITY
    }
    fn add(self, o: Self) -> Self {
        self + o
    }
    fn mul(self, o: Self) -> Self {
        self * o
    }
    fn max(self, o: Self) -> Self {
        f64::max(self, o)
    }
    fn mean(self, count: usize) -> Self {
        self / count as f64
    }
    fn matches(self, reference: Self, tol: f64) -> bool {
        (self.is_nan() && reference.is_nan())
            || self == reference
            || (self - reference).abs() <= tol * reference.abs().max(1.0)
    }
}

/// `op` of `data` (shape `dims`) over the axes `reduced` (flags), as the
/// definition says: every element added into its output slot.
fn reference<N: RefNum>(
    op: &str,
    dims: &[usize],
    data: &[N],
    reduced: &[bool],
    keep_dims: bool,
) -> (Vec<usize>, Vec<N>) {
    let out_dims: Vec<usize> = dims
        .iter()
        .zip(reduced)
        .filter_map(|(&d, &r)| match (r, keep_dims) {
            (false, _) => Some(d),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect();
    let kept: Vec<usize> = (0..dims.len()).filter(|&i| !reduced[i]).collect();
    let out_len: usize = kept.iter().map(|&i| dims[i]).product();
    let identity = match op {
        "Prod" => N::one(),
        "Max" => N::lowest(),
        _ => N::zero(),
    };
    let mut out = vec![identity; out_len];
    for (flat, &x) in data.iter().enumerate() {
        // The element's index along each axis, then its output slot.
        let mut rest = flat;
        let mut index = vec![0; dims.len()];
        for (i, &d) in dims.iter().enumerate().rev() {
            index[i] = rest % d;
            rest /= d;
        }
        let slot = kept.iter().fold(0, |slot, &i| slot * dims[i] + index[i]);
        out[slot] = match op {
            "Prod" => out[slot].mul(x),
            "Max" => out[slot].max(x),
            _ => out[slot].add(x),
        };
    }
    if op == "Mean" {
        let count: usize = (0..dims.len())
            .filter(|&i| reduced[i])
            .map(|i| dims[i])
            .product();
        out.iter_mut().for_each(|v| *v = v.mean(count));
    }
    (out_dims, out)
}

/// A reduction case: a shape, the axes as given (each possibly negative,
/// in any order), how they are given, and `keep_dims`.
#[derive(Clone, Debug)]
struct Case {
    dims: Vec<usize>,
    axes: Vec<i64>,
    scalar_axis: bool,
    int64_axes: bool,
    keep_dims: bool,
}

impl Case {
    fn reduced(&self) -> Vec<bool> {
        let rank = self.dims.len() as i64;
        let mut reduced = vec![false; self.dims.len()];
        for &a in &self.axes {
            reduced[(if a < 0 { a + rank } else { a }) as usize] = true;
        }
        reduced
    }

    fn axes_tensor(&self) -> Tensor {
        match (self.scalar_axis, self.int64_axes) {
            (true, false) => Tensor::scalar(self.axes[0] as i32),
            (true, true) => Tensor::scalar(self.axes[0]),
            (false, false) => vector(self.axes.iter().map(|&a| a as i32).collect()),
            (false, true) => vector(self.axes.clone()),
        }
    }
}

/// Shapes of rank 0 to `max_rank` with dims `0..=max_dim` (0 now and
/// then), and a random set of their axes.
fn cases(max_rank: usize, min_dim: usize, max_dim: usize) -> impl Strategy<Value = Case> {
    let dim = prop_oneof![1 => Just(0usize), 9 => min_dim.max(1)..=max_dim];
    proptest::collection::vec(dim, 0..=max_rank)
        .prop_flat_map(|dims| {
            let rank = dims.len();
            (
                Just(dims),
                proptest::collection::vec((any::<bool>(), any::<bool>()), rank),
                any::<u64>(),
                any::<(bool, bool, bool)>(),
            )
        })
        .prop_map(|(dims, picks, seed, (scalar, int64, keep_dims))| {
            let rank = dims.len() as i64;
            let mut axes: Vec<i64> = picks
                .iter()
                .enumerate()
                .filter(|(_, (pick, _))| *pick)
                .map(|(i, (_, negative))| if *negative { i as i64 - rank } else { i as i64 })
                .collect();
            // Any order: rotate by the seed.
            if !axes.is_empty() {
                let by = (seed % axes.len() as u64) as usize;
                axes.rotate_left(by);
            }
            Case {
                scalar_axis: scalar && axes.len() == 1,
                dims,
                axes,
                int64_axes: int64,
                keep_dims,
            }
        })
}

/// How a type is checked: widened to the reference's type, the
/// reference's result rounded back to it, and the tolerance of floats.
struct Check<T, N> {
    widen: fn(T) -> N,
    narrow: fn(N) -> T,
    tol: f64,
}

const I32: Check<i32, i32> = Check {
    widen: |v| v,
    narrow: |v| v,
    tol: 0.0,
};
const I64: Check<i64, i64> = Check {
    widen: |v| v,
    narrow: |v| v,
    tol: 0.0,
};
const F32: Check<f32, f64> = Check {
    widen: |v| v as f64,
    narrow: |v| v as f32,
    tol: 1e-5,
};
const F64: Check<f64, f64> = Check {
    widen: |v| v,
    narrow: |v| v,
    tol: 1e-12,
};
const F16: Check<f16, f64> = Check {
    widen: |v| v.to_f64(),
    narrow: f16::from_f64,
    tol: 2e-3,
};
const BF16: Check<bf16, f64> = Check {
    widen: |v| v.to_f64(),
    narrow: bf16::from_f64,
    tol: 1e-2,
};

/// Runs each of `ops` on `case` with `values` and checks it against the
/// reference, computed in `N` and rounded to `T`.
fn check<T: Element + Copy, N: RefNum>(
    runtime: &Runtime,
    ops: &[&str],
    case: &Case,
    values: &[T],
    how: &Check<T, N>,
) -> Result<(), TestCaseError> {
    let x = Tensor::from_vec(case.dims.clone(), values.to_vec()).unwrap();
    let wide: Vec<N> = values.iter().map(|v| (how.widen)(*v)).collect();
    for &op in ops {
        let out = reduce(runtime, op, &x, &case.axes_tensor(), case.keep_dims)
            .map_err(|e| TestCaseError::fail(format!("{op} {case:?}: {e}")))?;
        let (dims, expected) = reference(op, &case.dims, &wide, &case.reduced(), case.keep_dims);
        prop_assert_eq!(out.dims(), &dims[..], "{} {:?}", op, case);
        prop_assert_eq!(out.dtype(), T::DTYPE);
        let got = out.as_slice::<T>().unwrap();
        for (g, e) in got.iter().zip(&expected) {
            let (g, e) = ((how.widen)(*g), (how.widen)((how.narrow)(*e)));
            prop_assert!(
                g.matches(e, how.tol),
                "{op} {case:?}: got {g:?}, expected {e:?}"
            );
        }
    }
    Ok(())
}

/// Floats whose sums of a few hundred are exact and whose products are
/// signed powers of two (exact, far from overflow).
const DYADIC: [f32; 7] = [-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0];

fn values_for(case: &Case) -> impl Strategy<Value = Vec<i32>> + use<> {
    let len: usize = case.dims.iter().product();
    proptest::collection::vec(-8i32..=8, len)
}

fn one_thread() -> Runtime {
    Runtime::new().with_threads(Arc::new(ThreadPool::single()))
}

fn four_threads() -> Runtime {
    Runtime::new().with_threads(Arc::new(ThreadPool::new(4).unwrap()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn every_reduction_matches_the_reference_for_every_type(
        (case, small) in cases(4, 1, 4).prop_flat_map(|c| (Just(c.clone()), values_for(&c))),
        wide in any::<u64>(),
    ) {
        let rt = one_thread();
        // Integers over their whole range, so that sums and products wrap.
        let mut state = wide;
        let mut next = move || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            state
        };
        let i32s: Vec<i32> = small.iter().map(|_| (next() >> 32) as i32).collect();
        let i64s: Vec<i64> = small.iter().map(|_| next() as i64).collect();
        check(&rt, &OPS, &case, &i32s, &I32)?;
        check(&rt, &OPS, &case, &i64s, &I64)?;
        let f32s: Vec<f32> = small.iter().map(|&v| DYADIC[v.rem_euclid(7) as usize]).collect();
        let f64s: Vec<f64> = f32s.iter().map(|&v| v as f64).collect();
        let halves: Vec<f16> = f32s.iter().map(|&v| f16::from_f32(v)).collect();
        let brains: Vec<bf16> = f32s.iter().map(|&v| bf16::from_f32(v)).collect();
        check(&rt, &OPS, &case, &f32s, &F32)?;
        check(&rt, &OPS, &case, &f64s, &F64)?;
        check(&rt, &OPS, &case, &halves, &F16)?;
        check(&rt, &OPS, &case, &brains, &BF16)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn large_reductions_split_over_threads_match_the_reference(
        case in cases(3, 8, 60),
        seed in any::<u64>(),
    ) {
        let rt = four_threads();
        let len: usize = case.dims.iter().product();
        let mut state = seed;
        let values: Vec<i64> = (0..len)
            .map(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (state >> 40) as i64 - (1 << 23)
            })
            .collect();
        check(&rt, &OPS, &case, &values, &I64)?;
        // Exact sums; products of thousands of floats overflow, in an
        // order-dependent way, so not those.
        let floats: Vec<f32> = values.iter().map(|&v| (v % 64) as f32).collect();
        check(&rt, &["Sum", "Mean", "Max"], &case, &floats, &F32)?;
    }
}

#[test]
fn reducing_everything_of_a_large_tensor_splits_the_rows_and_stays_exact() {
    let rt = four_threads();
    let n = 3_000_000;
    let x = Tensor::from_vec([n], vec![1.0f32; n]).unwrap();
    let all = vector(vec![0i32]);
    assert_eq!(
        reduce(&rt, "Sum", &x, &all, false)
            .unwrap()
            .scalar_value::<f32>()
            .unwrap(),
        n as f32
    );
    assert_eq!(
        reduce(&rt, "Mean", &x, &all, false)
            .unwrap()
            .scalar_value::<f32>()
            .unwrap(),
        1.0
    );
    let ints = Tensor::from_vec([1000, 3000], (0..n as i64).collect()).unwrap();
    let out = reduce(&rt, "Max", &ints, &vector(vec![0i64, 1]), true).unwrap();
    assert_eq!(out.dims(), [1, 1]);
    assert_eq!(out.as_slice::<i64>().unwrap(), [n as i64 - 1]);
    // Two outputs, each a long row: split by rows, combined at the end.
    let out = reduce(&rt, "Sum", &ints, &vector(vec![1i32]), false).unwrap();
    let row = |r: i64| (0..3000).map(|c| r * 3000 + c).sum::<i64>();
    assert_eq!(out.as_slice::<i64>().unwrap()[..2], [row(0), row(1)]);
    let two_rows = ints.reshape([2, 1_500_000]).unwrap();
    let out = reduce(&rt, "Sum", &two_rows, &vector(vec![-1i32]), false).unwrap();
    let total: i64 = (0..n as i64).sum();
    let first: i64 = (0..1_500_000i64).sum();
    assert_eq!(out.as_slice::<i64>().unwrap(), [first, total - first]);
}

// ---- TensorFlow's results ----

#[test]
fn reducing_no_elements_gives_tensorflows_identities() {
    let rt = Runtime::new();
    let axis0 = vector(vec![0i32]);
    let f = Tensor::from_vec([0, 3], Vec::<f32>::new()).unwrap();
    let i = Tensor::from_vec([0, 3], Vec::<i32>::new()).unwrap();
    let h = Tensor::from_vec([0, 2], Vec::<f16>::new()).unwrap();
    let sum = reduce(&rt, "Sum", &f, &axis0, false).unwrap();
    assert_eq!(sum.as_slice::<f32>().unwrap(), [0.0; 3]);
    let prod = reduce(&rt, "Prod", &i, &axis0, false).unwrap();
    assert_eq!(prod.as_slice::<i32>().unwrap(), [1; 3]);
    let max = reduce(&rt, "Max", &f, &axis0, false).unwrap();
    assert_eq!(max.as_slice::<f32>().unwrap(), [f32::NEG_INFINITY; 3]);
    let max = reduce(&rt, "Max", &i, &axis0, false).unwrap();
    assert_eq!(max.as_slice::<i32>().unwrap(), [i32::MIN; 3]);
    let mean = reduce(&rt, "Mean", &f, &axis0, false).unwrap();
    assert!(mean.as_slice::<f32>().unwrap().iter().all(|v| v.is_nan()));
    let mean = reduce(&rt, "Mean", &i, &axis0, false).unwrap();
    assert_eq!(mean.as_slice::<i32>().unwrap(), [0; 3]);
    let mean = reduce(&rt, "Mean", &h, &axis0, false).unwrap();
    assert!(mean.as_slice::<f16>().unwrap().iter().all(|v| v.is_nan()));
    let max = reduce(&rt, "Max", &h, &axis0, true).unwrap();
    assert_eq!(max.dims(), [1, 2]);
    assert_eq!(max.as_slice::<f16>().unwrap(), [f16::NEG_INFINITY; 2]);
    // Reducing a non-empty axis of an empty tensor: an empty output.
    let out = reduce(&rt, "Sum", &f, &vector(vec![1i32]), false).unwrap();
    assert_eq!(out.dims(), [0]);
}

#[test]
fn no_axes_reduce_nothing_and_share_the_input_buffer() {
    let rt = Runtime::new();
    let x = Tensor::from_vec([2, 3], vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    for op in OPS {
        for keep_dims in [false, true] {
            let out = reduce(&rt, op, &x, &vector(Vec::<i32>::new()), keep_dims).unwrap();
            assert_eq!(out, x, "{op}");
            assert!(x.is_shared(), "{op}: the output holds the input's buffer");
        }
    }
    // Reducing only axes of size 1 moves no element either.
    let y = x.reshape([2, 1, 3]).unwrap();
    let out = reduce(&rt, "Mean", &y, &Tensor::scalar(1i64), false).unwrap();
    assert_eq!(out.dims(), [2, 3]);
    assert_eq!(out.as_slice::<f64>().unwrap(), x.as_slice::<f64>().unwrap());
    // A scalar's reduction over no axes is itself.
    let s = Tensor::scalar(3i32);
    assert_eq!(
        reduce(&rt, "Sum", &s, &vector(Vec::<i64>::new()), false).unwrap(),
        s
    );
}

#[test]
fn a_nan_makes_the_maximum_nan_wherever_it_is() {
    let rt = Runtime::new();
    for at in 0..3 {
        let mut values = vec![1.0f32, 2.0, 3.0];
        values[at] = f32::NAN;
        let out = reduce(&rt, "Max", &vector(values), &Tensor::scalar(0i32), false).unwrap();
        assert!(out.scalar_value::<f32>().unwrap().is_nan(), "NaN at {at}");
    }
}

#[test]
fn integers_wrap_and_integer_means_truncate_toward_zero() {
    let rt = Runtime::new();
    let axis = Tensor::scalar(0i32);
    let sum = reduce(&rt, "Sum", &vector(vec![i32::MAX, 1]), &axis, false).unwrap();
    assert_eq!(sum.scalar_value::<i32>().unwrap(), i32::MIN);
    let prod = reduce(&rt, "Prod", &vector(vec![i64::MAX, 2]), &axis, false).unwrap();
    assert_eq!(prod.scalar_value::<i64>().unwrap(), -2);
    let mean = reduce(&rt, "Mean", &vector(vec![-1i32, -2]), &axis, false).unwrap();
    assert_eq!(mean.scalar_value::<i32>().unwrap(), -1);
    let mean = reduce(&rt, "Mean", &vector(vec![1i64, 2]), &axis, false).unwrap();
    assert_eq!(mean.scalar_value::<i64>().unwrap(), 1);
}

#[test]
fn half_and_bfloat16_accumulate_in_f32() {
    let rt = Runtime::new();
    let axis = Tensor::scalar(0i32);
    // 120000 overflows half: TensorFlow's half sum is inf here.
    let x = vector([60000.0f32, 60000.0, -60000.0].map(f16::from_f32).to_vec());
    let sum = reduce(&rt, "Sum", &x, &axis, false).unwrap();
    assert_eq!(sum.scalar_value::<f16>().unwrap(), f16::from_f32(60000.0));
    // 257 ones: bfloat16 cannot count past 256 one at a time.
    let ones = vector(vec![bf16::ONE; 257]);
    let sum = reduce(&rt, "Sum", &ones, &axis, false).unwrap();
    assert_eq!(sum.scalar_value::<bf16>().unwrap(), bf16::from_f32(257.0));
    let mean = reduce(&rt, "Mean", &ones, &axis, false).unwrap();
    assert_eq!(mean.scalar_value::<bf16>().unwrap(), bf16::ONE);
}

#[test]
fn the_typed_wrappers_reduce_with_keep_dims() {
    op_kernels::link();
    let x = Tensor::from_vec([2, 3], vec![1i32, 5, 3, 4, 2, 6]).unwrap();
    let axes = vector(vec![1i32]);
    let sum = Sum::call(&x, &axes).keep_dims(true).run().unwrap();
    assert_eq!(sum.dims(), [2, 1]);
    assert_eq!(sum.as_slice::<i32>().unwrap(), [9, 12]);
    let max = Max::call(&x, &axes).run().unwrap();
    assert_eq!(max.as_slice::<i32>().unwrap(), [5, 6]);
    let prod = Prod::call(&x, Tensor::scalar(0i64)).run().unwrap();
    assert_eq!(prod.as_slice::<i32>().unwrap(), [4, 10, 18]);
    let mean = Mean::call(&x, vector(vec![0i32, 1])).run().unwrap();
    assert_eq!(mean.dims(), [] as [usize; 0]);
    assert_eq!(mean.scalar_value::<i32>().unwrap(), 3);
}

// ---- Errors ----

#[test]
fn axes_out_of_range_are_invalid_arguments_naming_the_axis_and_shape() {
    let rt = Runtime::new();
    let x = Tensor::from_vec([2, 3], vec![0.0f32; 6]).unwrap();
    for op in OPS {
        for bad in [2i32, -3] {
            let err = reduce(&rt, op, &x, &vector(vec![0, bad]), false).unwrap_err();
            assert_eq!(err.code(), Code::InvalidArgument, "{op}");
            assert_contains(
                &err,
                &[
                    op,
                    "reduction_indices",
                    &format!("invalid reduction dimension {bad}"),
                    "[-2, 2)",
                    "[2,3]",
                ],
            );
        }
    }
    let err = reduce(
        &rt,
        "Sum",
        &Tensor::scalar(1.0f32),
        &Tensor::scalar(0i32),
        false,
    )
    .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["a scalar has no axes to reduce"]);
    let err = reduce(&rt, "Sum", &x, &Tensor::scalar(i64::MIN), false).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
}

#[test]
fn outputs_too_large_for_memory_are_errors_not_panics() {
    // No elements, but a dimension of 2^40: the sum over the empty axis
    // would have 2^40 elements.
    let x = Tensor::from_vec([1 << 40, 0], Vec::<f32>::new()).unwrap();
    let err = reduce(&Runtime::new(), "Sum", &x, &Tensor::scalar(1i32), false).unwrap_err();
    assert!(
        matches!(err.code(), Code::ResourceExhausted | Code::InvalidArgument),
        "{err}"
    );
    assert_contains(&err, &["Sum", "output 0"]);
    // Over the other axis: nothing to compute.
    let out = reduce(&Runtime::new(), "Sum", &x, &Tensor::scalar(0i32), false).unwrap();
    assert_eq!(out.dims(), [0]);
}

#[test]
fn an_axis_named_twice_is_an_invalid_argument_as_in_tensorflows_kernels() {
    let rt = Runtime::new();
    let x = Tensor::from_vec([2, 3], vec![0i64; 6]).unwrap();
    for axes in [vec![1i32, 1], vec![1, -1], vec![-2, 0, 1]] {
        let err = reduce(&rt, "Prod", &x, &vector(axes.clone()), false).unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{axes:?}");
        assert_contains(&err, &["duplicate dimension"]);
    }
}

#[test]
fn axes_of_rank_two_or_float_type_are_rejected() {
    let rt = Runtime::new();
    let x = Tensor::from_vec([2, 3], vec![0.0f32; 6]).unwrap();
    let matrix = Tensor::from_vec([1, 1], vec![1i32]).unwrap();
    let err = reduce(&rt, "Sum", &x, &matrix, false).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &[
            "input 1 ('reduction_indices') must be a scalar or a vector",
            "[1,1]",
        ],
    );
    let err = reduce(&rt, "Sum", &x, &vector(vec![1.0f32]), false).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["Sum", "Tidx"]);
}

#[test]
fn element_types_without_a_kernel_are_not_found_naming_the_kernels() {
    let x = vector(vec![1u8, 2]);
    let err = reduce(&Runtime::new(), "Sum", &x, &Tensor::scalar(0i32), false).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_contains(&err, &["Sum", "uint8", "T=float"]);
    // Not a numbertype at all: the op itself refuses it.
    let s = Tensor::strings([1], ["a"]).unwrap();
    let err = reduce(&Runtime::new(), "Max", &s, &Tensor::scalar(0i32), false).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
}

// ---- The shape function ----

fn t(op: &str) -> ShapeTest {
    op_kernels::link();
    ShapeTest::new(op)
}

#[test]
fn unknown_axes_give_the_rank_with_keep_dims_and_nothing_without() {
    for op in OPS {
        let t = t(op);
        t.ok("[2,3];[1]", "?");
        t.ok("[2,3];[]", "?");
        t.ok("?;[2]", "?");
        let keep = t.clone().attr("keep_dims", true);
        keep.ok("[2,3];[1]", "[?,?]");
        keep.ok("[?,3,4];?", "[?,?,?]");
        keep.ok("?;[1]", "?");
        t.error(
            "[2,3];[1,1]",
            "input 1 ('reduction_indices') has shape [1,1], which must be at most rank 1",
        );
    }
}

#[test]
fn constant_axes_drop_or_keep_their_dimensions() {
    for op in OPS {
        let with = |axes: Tensor| t(op).input_tensor(1, axes);
        with(vector(vec![1i32])).ok("[2,3];[1]", "[d0_0]");
        with(vector(vec![-1i32])).ok("[2,3];[1]", "[d0_0]");
        with(Tensor::scalar(0i32)).ok("[2,3];[]", "[d0_1]");
        with(vector(vec![0i32, 2])).ok("[?,3,4];[2]", "[d0_1]");
        with(vector(vec![0i32, 2]))
            .attr("keep_dims", true)
            .ok("[?,3,4];[2]", "[1,d0_1,1]");
        with(vector(Vec::<i32>::new())).ok("[2,?];[0]", "[d0_0,d0_1]");
        with(vector(vec![0i32, 1])).ok("[2,3];[2]", "[]");
        // Repeats are accepted here, as by TensorFlow's shape function.
        with(vector(vec![1i32, -1])).ok("[2,3];[2]", "[d0_0]");
        // An input of unknown rank: nothing is known.
        with(vector(vec![0i32])).ok("?;[1]", "?");
        with(vector(vec![0i32]))
            .attr("keep_dims", true)
            .ok("?;[1]", "?");
        // int64 axes.
        t(op)
            .attr("Tidx", DType::I64)
            .input_tensor(1, vector(vec![-2i64]))
            .ok("[5,?];[1]", "[d0_1]");
    }
}

#[test]
fn constant_axes_out_of_range_are_shape_errors() {
    let t = t("Sum").input_tensor(1, vector(vec![2i32]));
    t.error(
        "[2,3];[1]",
        "input 1 ('reduction_indices'): invalid reduction dimension 2 for an input of rank 2",
    );
    t.error("[2,3];[1]", "input 0 ('input') has shape [2,3]");
    let t = self::t("Max").input_tensor(1, Tensor::scalar(0i32));
    t.error("[];[]", "a scalar has no axes to reduce");
}

#[test]
fn the_shape_function_agrees_with_the_kernels_for_constant_axes() {
    op_kernels::link();
    let registry = Registry::global();
    let x = Tensor::from_vec([2, 3, 4], vec![1.0f32; 24]).unwrap();
    for axes in [vec![0i32], vec![2, 0], vec![-1], vec![]] {
        for keep_dims in [false, true] {
            let axes = vector(axes.clone());
            let inferred = registry
                .infer_shapes(
                    "Sum",
                    &[DType::F32.into(), DType::I32.into()],
                    &[("keep_dims", keep_dims.into())],
                    &["[2,3,4]".parse().unwrap(), PartialShape::known(axes.dims())],
                    &[None, Some(&axes)],
                )
                .unwrap();
            let out = reduce(&Runtime::new(), "Sum", &x, &axes, keep_dims).unwrap();
            assert_eq!(inferred, [PartialShape::known(out.dims())]);
        }
    }
}
