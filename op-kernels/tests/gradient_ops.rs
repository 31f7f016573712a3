//! The ops the gradients are built from, run: InvertPermutation, Slice,
//! Pad, Unpack, ConcatOffset, DynamicStitch, ListDiff, Cumsum, Cumprod,
//! Range, FloorDiv, FloorMod, DivNoNan and Conj. Results on hand-checked cases (TensorFlow's
//! documented examples and its results where they are subtle), both index
//! types, property tests against naive references on random shapes (on a
//! runtime of three threads that checks every output against the op's
//! shape function, with large tensors that split over the threads), the
//! errors of bad input (typed, naming the op and what is wrong, never a
//! panic), and the shape functions in the one-line notation. (The OpDefs
//! are compared with TensorFlow's in `tensorflow_opdefs.rs`.)

use std::sync::{Arc, LazyLock};

use op_core::ndarray::{ArrayD, IxDyn, Slice as Range1};
use op_core::shape_inference::testing::ShapeTest;
use op_core::threads::ThreadPool;
use op_core::{AttrValue, Code, Complex64, Complex128, DType, OpCall, Runtime, Tensor, f16};
use proptest::prelude::*;

mod common;
use common::assert_contains;

/// A runtime that splits work over three threads and checks every output
/// against its op's shape function.
static RUNTIME: LazyLock<Runtime> = LazyLock::new(|| {
    op_kernels::link();
    let threads = Arc::new(ThreadPool::new(3).expect("three threads"));
    Runtime::new().with_threads(threads).check_shapes(true)
});

/// One input: a tensor or a list of them.
enum In {
    T(Tensor),
    L(Vec<Tensor>),
}

/// Runs `op` on [`RUNTIME`].
fn call(op: &str, inputs: Vec<In>, attrs: &[(&str, AttrValue)]) -> op_core::Result<Vec<Tensor>> {
    let mut call = OpCall::new(op);
    for input in inputs {
        call = match input {
            In::T(t) => call.input(t),
            In::L(ts) => call.input_list(ts),
        };
    }
    for (name, value) in attrs {
        call = call.attr(name, value.clone());
    }
    call.run_on(&*RUNTIME)
}

/// Runs `op` and returns output 0, panicking on an error.
fn run1(op: &str, inputs: Vec<In>, attrs: &[(&str, AttrValue)]) -> Tensor {
    call(op, inputs, attrs)
        .unwrap_or_else(|e| panic!("{op}: {e}"))
        .remove(0)
}

fn t<T: op_core::Element>(dims: &[usize], values: Vec<T>) -> In {
    In::T(Tensor::from_vec(dims, values).unwrap())
}

fn v<T: op_core::Element>(values: Vec<T>) -> In {
    let n = values.len();
    t(&[n], values)
}

fn s<T: op_core::Element>(value: T) -> In {
    In::T(Tensor::scalar(value))
}

fn vals<T: op_core::Element>(t: &Tensor) -> Vec<T> {
    t.as_slice::<T>().unwrap().to_vec()
}

fn shape_test(op: &str) -> ShapeTest {
    op_kernels::link();
    ShapeTest::new(op)
}

fn i32s(values: &[i32]) -> Tensor {
    Tensor::from_vec([values.len()], values.to_vec()).unwrap()
}

/// A tensor of shape `dims` holding 0, 1, 2, ...
fn iota(dims: &[usize]) -> ArrayD<i32> {
    let n: usize = dims.iter().product();
    ArrayD::from_shape_vec(IxDyn(dims), (0..n as i32).collect()).unwrap()
}

fn array(t: &Tensor) -> ArrayD<i32> {
    t.clone().into_array::<i32>().unwrap()
}

fn index(values: &[i64], wide: bool) -> In {
    if wide {
        v(values.to_vec())
    } else {
        v(values.iter().map(|&x| x as i32).collect::<Vec<i32>>())
    }
}

// ---- InvertPermutation ----

#[test]
fn invert_permutation_inverts_int32_and_int64_permutations() {
    let y = run1("InvertPermutation", vec![v(vec![3i32, 4, 0, 2, 1])], &[]);
    assert_eq!(vals::<i32>(&y), [2, 4, 3, 0, 1]);
    let y = run1("InvertPermutation", vec![v(vec![1i64, 0])], &[]);
    assert_eq!(vals::<i64>(&y), [1, 0]);
    let y = run1("InvertPermutation", vec![v(Vec::<i32>::new())], &[]);
    assert_eq!(y.dims(), [0]);
}

#[test]
fn invert_permutation_rejects_what_is_not_a_permutation() {
    let e = call("InvertPermutation", vec![v(vec![0i32, 0])], &[]).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert_contains(&e, &["InvertPermutation", "0 is duplicated in the input"]);
    let e = call("InvertPermutation", vec![v(vec![0i32, 2])], &[]).unwrap_err();
    assert_contains(&e, &["2 is not between 0 and 2"]);
    let e = call("InvertPermutation", vec![v(vec![-1i64])], &[]).unwrap_err();
    assert_contains(&e, &["-1 is not between 0 and 1"]);
    let e = call("InvertPermutation", vec![s(0i32)], &[]).unwrap_err();
    assert_contains(&e, &["input 0 ('x') must be a vector"]);
}

#[test]
fn invert_permutation_shape_is_its_input_vector() {
    let st = shape_test("InvertPermutation");
    st.ok("[5]", "in0");
    st.ok("?", "[?]");
    st.error("[2,2]", "must be rank 1");
}

// ---- Slice ----

/// Slice's reference: ndarray's slicing.
fn sliced(x: &ArrayD<i32>, begin: &[usize], size: &[usize]) -> ArrayD<i32> {
    let mut view = x.view();
    for (k, (&b, &n)) in begin.iter().zip(size).enumerate() {
        view.slice_axis_inplace(op_core::ndarray::Axis(k), Range1::from(b..b + n));
    }
    view.as_standard_layout().into_owned()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn slice_matches_ndarrays_slicing(
        (dims, cuts, wide) in prop::collection::vec(0..=4usize, 0..=4).prop_flat_map(|dims| {
            let cuts: Vec<_> = dims
                .iter()
                .map(|&d| (0..=d).prop_flat_map(move |b| (Just(b), 0..=d - b, any::<bool>())))
                .collect();
            (Just(dims), cuts, any::<bool>())
        })
    ) {
        let x = iota(&dims);
        let begin: Vec<usize> = cuts.iter().map(|c| c.0).collect();
        let size: Vec<usize> = cuts.iter().map(|c| c.1).collect();
        // -1 for "the rest" where the slice runs to the end (not on an
        // empty dimension, which TensorFlow slices only as 0, 0).
        let size_values: Vec<i64> = cuts
            .iter()
            .zip(&dims)
            .map(|(&(b, n, rest), &d)| if rest && b + n == d && d > 0 { -1 } else { n as i64 })
            .collect();
        let begin_values: Vec<i64> = begin.iter().map(|&b| b as i64).collect();
        let y = run1(
            "Slice",
            vec![In::T(Tensor::from_array(x.clone())), index(&begin_values, wide), index(&size_values, wide)],
            &[],
        );
        prop_assert_eq!(array(&y), sliced(&x, &begin, &size));
    }
}

#[test]
fn slice_of_a_large_tensor_splits_over_the_threads_and_matches() {
    let dims = [64, 50, 30];
    let x = iota(&dims);
    let y = run1(
        "Slice",
        vec![
            In::T(Tensor::from_array(x.clone())),
            index(&[3, 1, 2], false),
            index(&[60, -1, 25], false),
        ],
        &[],
    );
    assert_eq!(array(&y), sliced(&x, &[3, 1, 2], &[60, 49, 25]));
}

#[test]
fn slice_of_the_whole_input_shares_its_buffer() {
    let x = Tensor::from_vec([2, 2], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let y = run1(
        "Slice",
        vec![
            In::T(x.clone()),
            index(&[0, 0], false),
            index(&[-1, 2], false),
        ],
        &[],
    );
    assert_eq!(
        y.as_slice::<f32>().unwrap().as_ptr(),
        x.as_slice::<f32>().unwrap().as_ptr()
    );
}

#[test]
fn slice_rejects_bounds_outside_the_input() {
    let x = || t(&[2, 3], vec![0i32; 6]);
    let e = call(
        "Slice",
        vec![x(), index(&[1, 3], false), index(&[1, 1], false)],
        &[],
    )
    .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert_contains(&e, &["Slice", "Expected size[1] in [0, 0], but got 1"]);
    let e = call(
        "Slice",
        vec![x(), index(&[3, 0], false), index(&[0, 1], false)],
        &[],
    )
    .unwrap_err();
    assert_contains(&e, &["Expected begin[0] in [0, 2], but got 3"]);
    let e = call(
        "Slice",
        vec![x(), index(&[0, 0], false), index(&[-2, 1], false)],
        &[],
    )
    .unwrap_err();
    assert_contains(&e, &["Expected size[0] in [0, 2], but got -2"]);
    let e = call(
        "Slice",
        vec![x(), index(&[0], false), index(&[1], false)],
        &[],
    )
    .unwrap_err();
    assert_contains(&e, &["1-D tensors of size 2"]);
    let e = call(
        "Slice",
        vec![
            t(&[0], Vec::<i32>::new()),
            index(&[0], false),
            index(&[-1], false),
        ],
        &[],
    )
    .unwrap_err();
    assert_contains(
        &e,
        &["Expected begin[0] == 0 (got 0) and size[0] == 0 (got -1) when input.dim_size(0) == 0"],
    );
}

#[test]
fn slice_shape_uses_the_sizes_when_constant() {
    let st = shape_test("Slice").attr("Index", DType::I32);
    st.ok("[4,5];[2];[2]", "[?,?]");
    st.ok("?;[2];[2]", "[?,?]");
    st.ok("?;?;?", "?");
    st.error("[4,5];[3];[3]", "must be rank 3");
    let sizes = st.clone().input_tensor(2, i32s(&[2, -1]));
    sizes.ok("[4,5];[2];[2]", "[2,?]");
    let both = sizes.input_tensor(1, i32s(&[1, 2]));
    both.ok("[4,5];[2];[2]", "[2,3]");
    st.clone()
        .input_tensor(2, i32s(&[-2, 1]))
        .error("[4,5];[2];[2]", "sizes vector cannot be < -1, but was -2");
}

// ---- Pad ----

/// Pad's reference: element by element.
fn padded(x: &ArrayD<i32>, pads: &[(usize, usize)]) -> ArrayD<i32> {
    let dims: Vec<usize> = x
        .shape()
        .iter()
        .zip(pads)
        .map(|(d, (b, a))| b + d + a)
        .collect();
    ArrayD::from_shape_fn(IxDyn(&dims), |i| {
        let source: Option<Vec<usize>> = (0..dims.len())
            .map(|k| i[k].checked_sub(pads[k].0).filter(|&j| j < x.shape()[k]))
            .collect();
        source.map_or(0, |s| x[IxDyn(&s)])
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn pad_matches_a_naive_padding(
        (dims, pads, wide) in prop::collection::vec(0..=3usize, 0..=4).prop_flat_map(|dims| {
            let rank = dims.len();
            (Just(dims), prop::collection::vec((0..=2usize, 0..=2usize), rank), any::<bool>())
        })
    ) {
        let x = iota(&dims).mapv(|v| v + 1);
        let flat: Vec<i64> = pads.iter().flat_map(|&(b, a)| [b as i64, a as i64]).collect();
        let paddings = if wide {
            t(&[dims.len(), 2], flat)
        } else {
            t(&[dims.len(), 2], flat.iter().map(|&p| p as i32).collect::<Vec<_>>())
        };
        let y = run1("Pad", vec![In::T(Tensor::from_array(x.clone())), paddings], &[]);
        prop_assert_eq!(array(&y), padded(&x, &pads));
    }
}

#[test]
fn pad_of_a_large_tensor_splits_over_the_threads_and_matches() {
    let x = iota(&[40, 30, 20]);
    let pads = [(1, 2), (0, 3), (2, 1)];
    let flat: Vec<i32> = pads
        .iter()
        .flat_map(|&(b, a)| [b as i32, a as i32])
        .collect();
    let y = run1(
        "Pad",
        vec![In::T(Tensor::from_array(x.clone())), t(&[3, 2], flat)],
        &[],
    );
    assert_eq!(array(&y), padded(&x, &pads));
}

#[test]
fn pad_fills_strings_and_bools_with_their_zeros() {
    let y = run1(
        "Pad",
        vec![
            In::T(Tensor::strings([1], ["a"]).unwrap()),
            t(&[1, 2], vec![1i32, 1]),
        ],
        &[],
    );
    assert_eq!(
        vals::<Vec<u8>>(&y),
        [b"".to_vec(), b"a".to_vec(), b"".to_vec()]
    );
    let y = run1("Pad", vec![v(vec![true]), t(&[1, 2], vec![0i32, 2])], &[]);
    assert_eq!(vals::<bool>(&y), [true, false, false]);
}

#[test]
fn pad_rejects_negative_and_misshapen_paddings() {
    let e = call(
        "Pad",
        vec![v(vec![1.0f32]), t(&[1, 2], vec![-1i32, 0])],
        &[],
    )
    .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert_contains(&e, &["Pad", "Paddings must be non-negative: -1 0"]);
    let e = call(
        "Pad",
        vec![v(vec![1.0f32]), t(&[1, 3], vec![0i32, 0, 0])],
        &[],
    )
    .unwrap_err();
    assert_contains(
        &e,
        &["input 1 ('paddings') must be a matrix with 2 columns"],
    );
    let e = call("Pad", vec![v(vec![1.0f32]), t(&[2, 2], vec![0i32; 4])], &[]).unwrap_err();
    assert_contains(
        &e,
        &["The first dimension of paddings must be the rank of inputs"],
    );
}

#[test]
fn pad_shape_adds_the_constant_paddings() {
    let st = shape_test("Pad");
    st.ok("[2,3];[2,2]", "[?,?]");
    st.ok("?;[?,2]", "?");
    st.ok("?;[3,2]", "[?,?,?]");
    st.error("[2,3];[3,2]", "must be rank 3");
    st.error("[2,3];[2,3]", "");
    let known = st
        .clone()
        .input_tensor(1, Tensor::from_vec([2, 2], vec![1i32, 0, 2, 2]).unwrap());
    known.ok("[2,?];[2,2]", "[3,?]");
    known.ok("[2,3];[2,2]", "[3,7]");
    st.input_tensor(1, Tensor::from_vec([1, 2], vec![-1i32, 0]).unwrap())
        .error("[2];[1,2]", "Paddings must be non-negative");
}

// ---- Unpack ----

#[test]
fn unpack_takes_a_tensor_apart_along_any_axis() {
    let x = || t(&[2, 3], vec![1i32, 2, 3, 4, 5, 6]);
    let out = call("Unpack", vec![x()], &[("num", AttrValue::from(2i64))]).unwrap();
    assert_eq!(
        out.iter().map(vals::<i32>).collect::<Vec<_>>(),
        [vec![1, 2, 3], vec![4, 5, 6]]
    );
    let attrs = [
        ("num", AttrValue::from(3i64)),
        ("axis", AttrValue::from(-1i64)),
    ];
    let out = call("Unpack", vec![x()], &attrs).unwrap();
    assert_eq!(
        out.iter().map(vals::<i32>).collect::<Vec<_>>(),
        [vec![1, 4], vec![2, 5], vec![3, 6]]
    );
    // Pack undoes it.
    let packed = run1("Pack", vec![In::L(out)], &[("axis", AttrValue::from(1i64))]);
    assert_eq!(vals::<i32>(&packed), [1, 2, 3, 4, 5, 6]);
}

#[test]
fn unpack_of_a_large_tensor_matches_its_slices() {
    let x = iota(&[30, 4, 300]);
    let out = call(
        "Unpack",
        vec![In::T(Tensor::from_array(x.clone()))],
        &[
            ("num", AttrValue::from(4i64)),
            ("axis", AttrValue::from(1i64)),
        ],
    )
    .unwrap();
    for (j, y) in out.iter().enumerate() {
        assert_eq!(
            array(y),
            x.index_axis(op_core::ndarray::Axis(1), j).to_owned()
        );
    }
}

#[test]
fn unpack_rejects_a_bad_axis_or_count() {
    let x = || t(&[2, 3], vec![0i32; 6]);
    let e = call("Unpack", vec![x()], &[("num", AttrValue::from(3i64))]).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert_contains(
        &e,
        &["Unpack", "Input shape axis 0 must equal 3, got shape [2,3]"],
    );
    let attrs = [
        ("num", AttrValue::from(2i64)),
        ("axis", AttrValue::from(2i64)),
    ];
    let e = call("Unpack", vec![x()], &attrs).unwrap_err();
    assert_contains(&e, &["axis = 2 not in [-2, 2)"]);
    let e = call("Unpack", vec![s(1i32)], &[("num", AttrValue::from(1i64))]).unwrap_err();
    assert_contains(&e, &["not in [0, 0)"]);
}

#[test]
fn unpack_shape_drops_the_axis() {
    let st = shape_test("Unpack").attr("num", 3i64);
    st.ok("[3,4]", "[d0_1];[d0_1];[d0_1]");
    st.ok("?", "?;?;?");
    st.error("[2,4]", "");
    let unpack = |axis: i64| shape_test("Unpack").attr("num", 3i64).attr("axis", axis);
    unpack(-1).ok("[2,3]", "[d0_0];[d0_0];[d0_0]");
    unpack(2).error("[2,3]", "Invalid axis: 2; must be in [-2, 2)");
}

// ---- ConcatOffset ----

#[test]
fn concat_offset_gives_each_inputs_start() {
    let shapes = || {
        In::L(vec![
            i32s(&[2, 2, 5, 7]),
            i32s(&[2, 3, 5, 7]),
            i32s(&[2, 4, 5, 7]),
        ])
    };
    let out = call("ConcatOffset", vec![s(1i32), shapes()], &[]).unwrap();
    let offsets: Vec<Vec<i32>> = out.iter().map(vals::<i32>).collect();
    assert_eq!(
        offsets,
        [vec![0, 0, 0, 0], vec![0, 2, 0, 0], vec![0, 5, 0, 0]]
    );
    // A negative axis counts from the end; int64 shapes give int64 offsets.
    let out = call(
        "ConcatOffset",
        vec![
            s(-1i32),
            In::L(vec![
                Tensor::from_vec([2], vec![3i64, 1]).unwrap(),
                Tensor::from_vec([2], vec![3i64, 4]).unwrap(),
            ]),
        ],
        &[],
    )
    .unwrap();
    assert_eq!(
        out.iter().map(vals::<i64>).collect::<Vec<_>>(),
        [vec![0, 0], vec![0, 1]]
    );
}

#[test]
fn concat_offset_rejects_shapes_that_do_not_concatenate() {
    let e = call(
        "ConcatOffset",
        vec![s(1i32), In::L(vec![i32s(&[2, 2]), i32s(&[3, 2])])],
        &[],
    )
    .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert_contains(
        &e,
        &[
            "ConcatOffset",
            "All dimensions except 1 must match. Input 1 has shape [3,2]",
        ],
    );
    let e = call(
        "ConcatOffset",
        vec![s(2i32), In::L(vec![i32s(&[2, 2]), i32s(&[2, 2])])],
        &[],
    )
    .unwrap_err();
    assert_contains(&e, &["Concat dim is out of range: 2 vs. 2"]);
    let e = call(
        "ConcatOffset",
        vec![s(0i32), In::L(vec![i32s(&[2, 2]), i32s(&[2])])],
        &[],
    )
    .unwrap_err();
    assert_contains(&e, &["input 1 should contain 2 elements, but got 1"]);
    let e = call(
        "ConcatOffset",
        vec![s(0i32), In::L(vec![i32s(&[-2]), i32s(&[2])])],
        &[],
    )
    .unwrap_err();
    assert_contains(&e, &["with a negative size"]);
}

#[test]
fn concat_offset_shapes_are_the_shape_inputs() {
    shape_test("ConcatOffset").ok("[];[3];[3]", "in1;in2");
}

// ---- DynamicStitch ----

#[test]
fn dynamic_stitch_interleaves_as_tensorflows_example() {
    let indices = In::L(vec![
        Tensor::scalar(6i32),
        Tensor::from_vec([2], vec![4i32, 1]).unwrap(),
        Tensor::from_vec([2, 2], vec![5i32, 2, 0, 3]).unwrap(),
    ]);
    let data = In::L(vec![
        Tensor::from_vec([2], vec![61.0f32, 62.0]).unwrap(),
        Tensor::from_vec([2, 2], vec![41.0f32, 42.0, 11.0, 12.0]).unwrap(),
        Tensor::from_vec(
            [2, 2, 2],
            vec![51.0f32, 52.0, 21.0, 22.0, 1.0, 2.0, 31.0, 32.0],
        )
        .unwrap(),
    ]);
    let merged = run1("DynamicStitch", vec![indices, data], &[]);
    assert_eq!(merged.dims(), [7, 2]);
    assert_eq!(
        vals::<f32>(&merged),
        [
            1.0, 2.0, 11.0, 12.0, 21.0, 22.0, 31.0, 32.0, 41.0, 42.0, 51.0, 52.0, 61.0, 62.0
        ]
    );
}

#[test]
fn dynamic_stitch_takes_the_later_value_and_zeros_for_no_index() {
    let indices = In::L(vec![i32s(&[0, 3]), i32s(&[3])]);
    let data = In::L(vec![i32s(&[1, 2]), i32s(&[9])]);
    let merged = run1("DynamicStitch", vec![indices, data], &[]);
    assert_eq!(vals::<i32>(&merged), [1, 0, 0, 9]);
}

#[test]
fn dynamic_stitch_of_many_rows_splits_over_the_threads() {
    let n = 50_000;
    let reversed: Vec<i32> = (0..n as i32).rev().collect();
    let data: Vec<i64> = (0..n as i64).collect();
    let merged = run1(
        "DynamicStitch",
        vec![
            In::L(vec![i32s(&reversed)]),
            In::L(vec![Tensor::from_vec([n], data).unwrap()]),
        ],
        &[],
    );
    let expected: Vec<i64> = (0..n as i64).rev().collect();
    assert_eq!(vals::<i64>(&merged), expected);
}

#[test]
fn dynamic_stitch_rejects_negative_indices_and_mismatched_data() {
    let e = call(
        "DynamicStitch",
        vec![In::L(vec![i32s(&[0, -1])]), In::L(vec![i32s(&[1, 2])])],
        &[],
    )
    .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert_contains(&e, &["DynamicStitch", "indices[1] is out of range"]);
    let e = call(
        "DynamicStitch",
        vec![In::L(vec![i32s(&[0, 1])]), In::L(vec![i32s(&[1])])],
        &[],
    )
    .unwrap_err();
    assert_contains(
        &e,
        &["data[0].shape = [1] does not start with indices[0].shape = [2]"],
    );
    let e = call(
        "DynamicStitch",
        vec![
            In::L(vec![i32s(&[0]), i32s(&[1])]),
            In::L(vec![
                Tensor::from_vec([1, 2], vec![1i32, 2]).unwrap(),
                Tensor::from_vec([1, 3], vec![1i32, 2, 3]).unwrap(),
            ]),
        ],
        &[],
    )
    .unwrap_err();
    assert_contains(&e, &["Need data[0].shape[1:] = data[1].shape[1:]"]);
}

#[test]
fn dynamic_stitch_shape_knows_the_rows_from_constant_indices() {
    let st = shape_test("DynamicStitch").list_lengths(&[2, 2]);
    st.ok("[2];[3];[2,5];[3,5]", "[?,d2_1]");
    st.ok("?;[3];?;[3,5]", "[?,d3_1]");
    st.error("[2];[3];[2,5];[3,4]", "");
    let known = st
        .input_tensor(0, i32s(&[0, 7]))
        .input_tensor(1, i32s(&[1, 2, 3]));
    known.ok("[2];[3];[2,5];[3,5]", "[8,d2_1]");
}

// ---- ListDiff ----

#[test]
fn list_diff_keeps_the_values_not_removed_with_their_positions() {
    let out = call(
        "ListDiff",
        vec![v(vec![1i32, 2, 3, 4, 5, 6]), v(vec![1i32, 3, 5])],
        &[],
    )
    .unwrap();
    assert_eq!(vals::<i32>(&out[0]), [2, 4, 6]);
    assert_eq!(vals::<i32>(&out[1]), [1, 3, 5]);
    let out = call(
        "ListDiff",
        vec![
            v(vec![0.0f32, -0.0, f32::NAN, 2.5]),
            v(vec![0.0f32, f32::NAN]),
        ],
        &[("out_idx", AttrValue::from(DType::I64))],
    )
    .unwrap();
    // -0.0 == 0.0 goes; NaN equals nothing, so it stays.
    assert_eq!(vals::<i64>(&out[1]), [2, 3]);
    let out = call(
        "ListDiff",
        vec![
            In::T(Tensor::strings([3], ["a", "b", "a"]).unwrap()),
            In::T(Tensor::strings([1], ["b"]).unwrap()),
        ],
        &[],
    )
    .unwrap();
    assert_eq!(vals::<i32>(&out[1]), [0, 2]);
}

#[test]
fn list_diff_rejects_what_is_not_a_vector() {
    let e = call("ListDiff", vec![s(1i32), v(vec![1i32])], &[]).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert_contains(&e, &["ListDiff", "x should be a 1D vector"]);
    shape_test("ListDiff").ok("[3];[2]", "[?];[?]");
    shape_test("ListDiff").error("[3,1];[2]", "must be rank 1");
}

// ---- Cumsum, Cumprod ----

/// Cumsum's reference, along `axis`, element by element.
fn cumsum_naive(x: &ArrayD<f64>, axis: usize, exclusive: bool, reverse: bool) -> ArrayD<f64> {
    scan_naive(x, axis, exclusive, reverse, |values| values.sum())
}

/// Cumprod's reference, along `axis`, element by element.
fn cumprod_naive(x: &ArrayD<f64>, axis: usize, exclusive: bool, reverse: bool) -> ArrayD<f64> {
    scan_naive(x, axis, exclusive, reverse, |values| values.product())
}

/// A scan's reference: each output element `combine`s the elements its
/// range along `axis` covers.
fn scan_naive(
    x: &ArrayD<f64>,
    axis: usize,
    exclusive: bool,
    reverse: bool,
    combine: fn(&mut dyn Iterator<Item = f64>) -> f64,
) -> ArrayD<f64> {
    let len = x.shape()[axis];
    ArrayD::from_shape_fn(x.raw_dim(), |i| {
        let k = i[axis];
        let range: Vec<usize> = match (exclusive, reverse) {
            (false, false) => (0..=k).collect(),
            (true, false) => (0..k).collect(),
            (false, true) => (k..len).collect(),
            (true, true) => (k + 1..len).collect(),
        };
        combine(&mut range.into_iter().map(|j| {
            let mut at = i.clone();
            at[axis] = j;
            x[at]
        }))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn scans_match_a_naive_sum_and_product_in_every_direction(
        (dims, axis, negative) in prop::collection::vec(0..=4usize, 1..=4).prop_flat_map(|dims| {
            let rank = dims.len();
            (Just(dims), 0..rank, any::<bool>())
        }),
        exclusive in any::<bool>(),
        reverse in any::<bool>(),
        wide in any::<bool>(),
    ) {
        let n: usize = dims.iter().product();
        let x = ArrayD::from_shape_vec(IxDyn(&dims), (0..n).map(|i| (i % 5) as f64 * 0.5 - 0.5).collect()).unwrap();
        let rank = dims.len() as i64;
        let a = if negative { axis as i64 - rank } else { axis as i64 };
        let axis_tensor = if wide { s(a) } else { s(a as i32) };
        let attrs = [("exclusive", AttrValue::from(exclusive)), ("reverse", AttrValue::from(reverse))];
        let input = || In::T(Tensor::from_array(x.clone()));
        let y = run1("Cumprod", vec![input(), axis_tensor], &attrs);
        prop_assert_eq!(y.into_array::<f64>().unwrap(), cumprod_naive(&x, axis, exclusive, reverse));
        let axis_tensor = if wide { s(a) } else { s(a as i32) };
        let y = run1("Cumsum", vec![input(), axis_tensor], &attrs);
        prop_assert_eq!(y.into_array::<f64>().unwrap(), cumsum_naive(&x, axis, exclusive, reverse));
    }
}

#[test]
fn cumprod_of_large_tensors_splits_over_the_threads_and_matches() {
    // Many outer indices (split by index), and one long row (split within
    // each row).
    for (dims, axis) in [(vec![2000, 3, 4], 1usize), (vec![5, 30_000], 0)] {
        let n: usize = dims.iter().product();
        let x = ArrayD::from_shape_vec(
            IxDyn(&dims),
            (0..n).map(|i| [1.0, -1.0, 0.5, 2.0][i % 4]).collect(),
        )
        .unwrap();
        for (exclusive, reverse) in [(false, false), (true, true)] {
            let attrs = [
                ("exclusive", AttrValue::from(exclusive)),
                ("reverse", AttrValue::from(reverse)),
            ];
            let y = run1(
                "Cumprod",
                vec![In::T(Tensor::from_array(x.clone())), s(axis as i32)],
                &attrs,
            );
            assert_eq!(
                y.into_array::<f64>().unwrap(),
                cumprod_naive(&x, axis, exclusive, reverse)
            );
        }
    }
}

#[test]
fn scans_run_for_every_type_the_reductions_do() {
    let y = run1(
        "Cumsum",
        vec![v(vec![1i64, 2, 3]), s(0i32)],
        &[("reverse", AttrValue::from(true))],
    );
    assert_eq!(vals::<i64>(&y), [6, 5, 3]);
    let y = run1("Cumprod", vec![v(vec![1i32, 2, 3, 4]), s(0i32)], &[]);
    assert_eq!(vals::<i32>(&y), [1, 2, 6, 24]);
    let y = run1(
        "Cumprod",
        vec![v(vec![3i64, -2]), s(0i64)],
        &[("exclusive", AttrValue::from(true))],
    );
    assert_eq!(vals::<i64>(&y), [1, 3]);
    let y = run1(
        "Cumprod",
        vec![v(vec![f16::from_f32(2.0), f16::from_f32(3.0)]), s(0i32)],
        &[],
    );
    assert_eq!(vals::<f16>(&y), [f16::from_f32(2.0), f16::from_f32(6.0)]);
}

#[test]
fn scans_reject_a_bad_axis() {
    let e = call("Cumsum", vec![v(vec![1.0f32]), s(-2i64)], &[]).unwrap_err();
    assert_contains(
        &e,
        &[
            "Cumsum",
            "ScanOp: Expected scan axis in the range [-1, 1), but got -2",
        ],
    );
    let e = call("Cumprod", vec![v(vec![1.0f32]), s(1i32)], &[]).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert_contains(
        &e,
        &[
            "Cumprod",
            "ScanOp: Expected scan axis in the range [-1, 1), but got 1",
        ],
    );
    let e = call("Cumprod", vec![v(vec![1.0f32]), v(vec![0i32])], &[]).unwrap_err();
    assert_contains(&e, &["ScanOp: axis must be a scalar, not [1]"]);
    let e = call("Cumprod", vec![s(1.0f32), s(0i32)], &[]).unwrap_err();
    assert_contains(&e, &["range [0, 0)"]);
}

// ---- Range ----

#[test]
fn range_counts_from_start_by_delta_before_limit() {
    assert_eq!(
        vals::<i32>(&run1("Range", vec![s(0i32), s(5i32), s(1i32)], &[])),
        [0, 1, 2, 3, 4]
    );
    assert_eq!(
        vals::<i32>(&run1("Range", vec![s(5i32), s(0i32), s(-2i32)], &[])),
        [5, 3, 1]
    );
    assert_eq!(
        vals::<i64>(&run1("Range", vec![s(3i64), s(3i64), s(1i64)], &[])),
        Vec::<i64>::new()
    );
    assert_eq!(
        vals::<f64>(&run1("Range", vec![s(0.0f64), s(1.0f64), s(0.25f64)], &[])),
        [0.0, 0.25, 0.5, 0.75]
    );
    // TensorFlow's float values: start + i * delta in float (0.90000004).
    let y = run1("Range", vec![s(0.0f32), s(1.0f32), s(0.3f32)], &[]);
    assert_eq!(vals::<f32>(&y), [0.0, 0.3, 0.6, 3.0 * 0.3f32]);
    // Extremes of the type do not overflow the count.
    let y = run1("Range", vec![s(i32::MIN), s(i32::MAX), s(i32::MAX)], &[]);
    assert_eq!(vals::<i32>(&y), [i32::MIN, -1, i32::MAX - 1]);
}

#[test]
fn range_of_many_elements_splits_over_the_threads() {
    let y = run1("Range", vec![s(0i64), s(100_000i64), s(1i64)], &[]);
    assert!(
        vals::<i64>(&y)
            .iter()
            .enumerate()
            .all(|(i, &v)| v == i as i64)
    );
}

#[test]
fn range_rejects_steps_that_never_reach_the_limit() {
    let e = call("Range", vec![s(0i32), s(10i32), s(0i32)], &[]).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert_contains(&e, &["Range", "Requires delta != 0: 0"]);
    let e = call("Range", vec![s(10i32), s(0i32), s(1i32)], &[]).unwrap_err();
    assert_contains(&e, &["Requires start <= limit when delta > 0: 10/0"]);
    let e = call("Range", vec![s(0.0f32), s(1.0f32), s(-1.0f32)], &[]).unwrap_err();
    assert_contains(&e, &["Requires start >= limit when delta < 0: 0/1"]);
    let e = call("Range", vec![s(0.0f32), s(f32::INFINITY), s(1.0f32)], &[]).unwrap_err();
    assert_contains(&e, &["fit in memory"]);
    let e = call("Range", vec![v(vec![0i32]), s(1i32), s(1i32)], &[]).unwrap_err();
    assert_contains(&e, &["start must be a scalar, not shape [1]"]);
}

#[test]
fn range_shape_is_known_from_constant_bounds() {
    let st = shape_test("Range");
    st.ok("[];[];[]", "[?]");
    st.error(
        "[1];[];[]",
        "input 0 ('start') has shape [1], which must be rank 0",
    );
    let known = st
        .clone()
        .input_tensor(0, Tensor::scalar(1i32))
        .input_tensor(1, Tensor::scalar(10i32))
        .input_tensor(2, Tensor::scalar(4i32));
    known.ok("[];[];[]", "[3]");
    st.input_tensor(0, Tensor::scalar(1i32))
        .input_tensor(1, Tensor::scalar(10i32))
        .input_tensor(2, Tensor::scalar(0i32))
        .error("[];[];[]", "Requires delta != 0");
}

// ---- FloorDiv, FloorMod ----

#[test]
fn floor_division_rounds_toward_negative_infinity_as_tensorflows() {
    let x = || v(vec![-7i32, 7, -7, 7]);
    let y = || v(vec![3i32, -3, -3, 3]);
    assert_eq!(
        vals::<i32>(&run1("FloorDiv", vec![x(), y()], &[])),
        [-3, -3, 2, 2]
    );
    assert_eq!(
        vals::<i32>(&run1("FloorMod", vec![x(), y()], &[])),
        [2, -2, -1, 1]
    );
    // The most negative value by -1 wraps, as TensorFlow's does.
    assert_eq!(
        vals::<i8>(&run1(
            "FloorDiv",
            vec![v(vec![i8::MIN]), v(vec![-1i8])],
            &[]
        )),
        [i8::MIN]
    );
    assert_eq!(
        vals::<i8>(&run1(
            "FloorMod",
            vec![v(vec![i8::MIN]), v(vec![-1i8])],
            &[]
        )),
        [0]
    );
    assert_eq!(
        vals::<u8>(&run1("FloorMod", vec![v(vec![7u8]), v(vec![3u8])], &[])),
        [1]
    );
    // Floats: floor(x / y), and fmod moved to the divisor's sign.
    let z = run1(
        "FloorMod",
        vec![v(vec![-7.5f32, 7.5, -0.0]), v(vec![2.0f32, -2.0, 3.0])],
        &[],
    );
    assert_eq!(vals::<f32>(&z), [0.5, -0.5, -0.0]);
    assert!(vals::<f32>(&z)[2].is_sign_negative());
    let z = run1(
        "FloorDiv",
        vec![v(vec![-7.5f64, 1.0]), v(vec![2.0f64, 0.0])],
        &[],
    );
    assert_eq!(vals::<f64>(&z), [-4.0, f64::INFINITY]);
    let z = run1(
        "FloorDiv",
        vec![v(vec![f16::from_f32(-3.0)]), v(vec![f16::from_f32(2.0)])],
        &[],
    );
    assert_eq!(vals::<f16>(&z), [f16::from_f32(-2.0)]);
}

#[test]
fn floor_division_broadcasts_and_splits_large_tensors() {
    let n = 60_000;
    let x: Vec<i64> = (0..n as i64).map(|i| i - 30_000).collect();
    let q = run1("FloorDiv", vec![v(x.clone()), s(7i64)], &[]);
    let r = run1("FloorMod", vec![v(x.clone()), s(7i64)], &[]);
    let expected_q: Vec<i64> = x.iter().map(|a| a.div_euclid(7)).collect();
    let expected_r: Vec<i64> = x.iter().map(|a| a.rem_euclid(7)).collect();
    assert_eq!(vals::<i64>(&q), expected_q);
    assert_eq!(vals::<i64>(&r), expected_r);
}

#[test]
fn integer_division_by_zero_is_an_error() {
    for op in ["FloorDiv", "FloorMod"] {
        let e = call(op, vec![v(vec![1i32, 2]), v(vec![1i32, 0])], &[]).unwrap_err();
        assert_eq!(e.code(), Code::InvalidArgument);
        assert_contains(&e, &[op, "Integer division by zero"]);
    }
    let e = call("FloorMod", vec![v(vec![1u16]), v(vec![0u16])], &[]).unwrap_err();
    assert_contains(&e, &["Integer division by zero"]);
}

// ---- DivNoNan ----

#[test]
fn div_no_nan_is_zero_wherever_the_divisor_is() {
    let z = run1(
        "DivNoNan",
        vec![
            v(vec![1.0f32, 0.0, f32::NAN, 3.0]),
            v(vec![0.0f32, 0.0, 0.0, 2.0]),
        ],
        &[],
    );
    assert_eq!(vals::<f32>(&z), [0.0, 0.0, 0.0, 1.5]);
    // Broadcasting, and the other types.
    let z = run1(
        "DivNoNan",
        vec![
            t(&[2, 2], vec![1.0f64, 2.0, 3.0, 4.0]),
            v(vec![2.0f64, 0.0]),
        ],
        &[],
    );
    assert_eq!(vals::<f64>(&z), [0.5, 0.0, 1.5, 0.0]);
    let z = run1(
        "DivNoNan",
        vec![s(f16::from_f32(1.0)), s(f16::from_f32(4.0))],
        &[],
    );
    assert_eq!(vals::<f16>(&z), [f16::from_f32(0.25)]);
    let z = run1(
        "DivNoNan",
        vec![
            s(Complex64::new(2.0, 2.0)),
            v(vec![Complex64::new(0.0, 0.0), Complex64::new(0.0, 1.0)]),
        ],
        &[],
    );
    assert_eq!(
        vals::<Complex64>(&z),
        [Complex64::new(0.0, 0.0), Complex64::new(2.0, -2.0)]
    );
    let e = call("DivNoNan", vec![v(vec![1i32]), v(vec![1i32])], &[]).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
}

// ---- Conj ----

#[test]
fn conj_negates_the_imaginary_parts() {
    let y = run1(
        "Conj",
        vec![v(vec![
            Complex64::new(1.0, 2.0),
            Complex64::new(-3.0, -0.5),
        ])],
        &[],
    );
    assert_eq!(
        vals::<Complex64>(&y),
        [Complex64::new(1.0, -2.0), Complex64::new(-3.0, 0.5)]
    );
    let y = run1("Conj", vec![s(Complex128::new(0.0, 1.0))], &[]);
    assert_eq!(vals::<Complex128>(&y), [Complex128::new(0.0, -1.0)]);
    let e = call("Conj", vec![v(vec![1.0f32])], &[]).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
}
