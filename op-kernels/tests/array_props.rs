//! Property tests of the copying array ops against naive references (mostly
//! ndarray's own operations) on random shapes, including empty dimensions
//! and scalars: Transpose, ConcatV2, Pack, Tile and BroadcastTo. Each call
//! runs on a runtime of three intra-op threads that checks every output
//! against the op's shape function from shapes alone, and the shape
//! function given the constant inputs' values must infer the output's
//! exact shape. Large tensors, split over the threads, give the same
//! results as small ones.

use std::sync::{Arc, LazyLock};

use op_core::ndarray::{ArrayD, ArrayViewD, Axis, IxDyn};
use op_core::shape_inference::PartialShape;
use op_core::threads::ThreadPool;
use op_core::{AttrValue, DType, InputTypes, OpCall, Registry, Runtime, Tensor};
use proptest::prelude::*;

/// A runtime that splits work over three threads and checks every output
/// against its op's shape function.
static RUNTIME: LazyLock<Runtime> = LazyLock::new(|| {
    op_kernels::link();
    let threads = Arc::new(ThreadPool::new(3).expect("three threads"));
    Runtime::new().with_threads(threads).check_shapes(true)
});

/// One input of a call: a tensor or a list of them, and whether a shape
/// function may see its value.
enum Arg {
    Tensor(Tensor),
    Constant(Tensor),
    List(Vec<Tensor>),
}

/// Runs `op` on `args` with `attrs` on [`RUNTIME`], checks that the shape
/// function given the constant args infers exactly the output's shape, and
/// returns the output.
fn run(op: &str, args: Vec<Arg>, attrs: &[(&str, AttrValue)]) -> Tensor {
    let mut call = OpCall::new(op);
    let (mut types, mut shapes, mut constants) = (Vec::new(), Vec::new(), Vec::new());
    for arg in &args {
        match arg {
            Arg::Tensor(t) | Arg::Constant(t) => {
                call = call.input(t);
                types.push(InputTypes::Single(t.dtype()));
                shapes.push(PartialShape::known(t.dims()));
                constants.push(matches!(arg, Arg::Constant(_)).then_some(t));
            }
            Arg::List(ts) => {
                call = call.input_list(ts);
                types.push(InputTypes::List(ts.iter().map(Tensor::dtype).collect()));
                for t in ts {
                    shapes.push(PartialShape::known(t.dims()));
                    constants.push(None);
                }
            }
        }
    }
    for (name, value) in attrs {
        call = call.attr(name, value.clone());
    }
    let output = call
        .run_on(&*RUNTIME)
        .unwrap_or_else(|e| panic!("{op}: {e}"))
        .remove(0);
    let inferred = Registry::global()
        .infer_shapes(op, &types, attrs, &shapes, &constants)
        .unwrap_or_else(|e| panic!("{op}: {e}"));
    assert_eq!(inferred, [PartialShape::known(output.dims())], "{op}");
    output
}

/// A tensor of shape `dims` holding 0, 1, 2, ... (distinct values, so that
/// a misplaced element shows).
fn iota(dims: &[usize]) -> ArrayD<i32> {
    let n: usize = dims.iter().product();
    ArrayD::from_shape_vec(IxDyn(dims), (0..n as i32).collect()).unwrap()
}

/// An index vector, int32 or int64 as `wide` says.
fn index(values: &[i64], wide: bool) -> Tensor {
    if wide {
        Tensor::from_vec([values.len()], values.to_vec()).unwrap()
    } else {
        let narrow: Vec<i32> = values.iter().map(|&v| v as i32).collect();
        Tensor::from_vec([values.len()], narrow).unwrap()
    }
}

fn array(t: &Tensor) -> ArrayD<i32> {
    t.clone().into_array::<i32>().unwrap()
}

/// A shape of rank `ranks` with dims in `0..=max`.
fn shape(ranks: std::ops::RangeInclusive<usize>, max: usize) -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0..=max, ranks)
}

/// Transpose's reference: ndarray's permuted axes, in standard layout.
fn transposed(x: &ArrayD<i32>, perm: &[usize]) -> ArrayD<i32> {
    x.view()
        .permuted_axes(IxDyn(perm))
        .as_standard_layout()
        .into_owned()
}

/// Tile's reference: element by element, output index `i` reads input
/// index `i % dims`.
fn tiled(x: &ArrayD<i32>, multiples: &[usize]) -> ArrayD<i32> {
    let dims: Vec<usize> = x
        .shape()
        .iter()
        .zip(multiples)
        .map(|(d, m)| d * m)
        .collect();
    ArrayD::from_shape_fn(IxDyn(&dims), |index| {
        let source: Vec<usize> = (0..dims.len()).map(|k| index[k] % x.shape()[k]).collect();
        x[IxDyn(&source)]
    })
}

fn check_transpose(dims: &[usize], perm: &[usize], wide: bool) {
    let x = iota(dims);
    let perm_values: Vec<i64> = perm.iter().map(|&p| p as i64).collect();
    let y = run(
        "Transpose",
        vec![
            Arg::Tensor(Tensor::from_array(x.clone())),
            Arg::Constant(index(&perm_values, wide)),
        ],
        &[],
    );
    assert_eq!(array(&y), transposed(&x, perm));
}

fn check_concat(dims: &[usize], axis: usize, sizes: &[usize], negative: bool, wide: bool) {
    let inputs: Vec<ArrayD<i32>> = sizes
        .iter()
        .enumerate()
        .map(|(j, &size)| {
            let mut d = dims.to_vec();
            d[axis] = size;
            iota(&d).mapv(|v| v + 1000 * j as i32)
        })
        .collect();
    let axis_value = if negative {
        axis as i64 - dims.len() as i64
    } else {
        axis as i64
    };
    let axis_tensor = if wide {
        Tensor::scalar(axis_value)
    } else {
        Tensor::scalar(axis_value as i32)
    };
    let y = run(
        "ConcatV2",
        vec![
            Arg::List(inputs.iter().cloned().map(Tensor::from_array).collect()),
            Arg::Constant(axis_tensor),
        ],
        &[],
    );
    let views: Vec<ArrayViewD<'_, i32>> = inputs.iter().map(|a| a.view()).collect();
    let expected = op_core::ndarray::concatenate(Axis(axis), &views).unwrap();
    assert_eq!(array(&y), expected);
}

fn check_pack(dims: &[usize], count: usize, axis: i64) {
    let inputs: Vec<ArrayD<i32>> = (0..count)
        .map(|j| iota(dims).mapv(|v| v + 1000 * j as i32))
        .collect();
    let y = run(
        "Pack",
        vec![Arg::List(
            inputs.iter().cloned().map(Tensor::from_array).collect(),
        )],
        &[("axis", AttrValue::from(axis))],
    );
    let index = if axis < 0 {
        axis + dims.len() as i64 + 1
    } else {
        axis
    } as usize;
    let views: Vec<ArrayViewD<'_, i32>> = inputs.iter().map(|a| a.view()).collect();
    let expected = op_core::ndarray::stack(Axis(index), &views).unwrap();
    assert_eq!(array(&y), expected);
}

fn check_tile(dims: &[usize], multiples: &[usize], wide: bool) {
    let x = iota(dims);
    let values: Vec<i64> = multiples.iter().map(|&m| m as i64).collect();
    let y = run(
        "Tile",
        vec![
            Arg::Tensor(Tensor::from_array(x.clone())),
            Arg::Constant(index(&values, wide)),
        ],
        &[],
    );
    assert_eq!(array(&y), tiled(&x, multiples));
}

fn check_broadcast_to(from: &[usize], to: &[usize], wide: bool) {
    let x = iota(from);
    let values: Vec<i64> = to.iter().map(|&d| d as i64).collect();
    let y = run(
        "BroadcastTo",
        vec![
            Arg::Tensor(Tensor::from_array(x.clone())),
            Arg::Constant(index(&values, wide)),
        ],
        &[],
    );
    let expected = x.broadcast(IxDyn(to)).unwrap().to_owned();
    assert_eq!(array(&y), expected);
}

/// A shape and a permutation of its dimensions.
fn shape_and_perm() -> impl Strategy<Value = (Vec<usize>, Vec<usize>)> {
    shape(0..=5, 4).prop_flat_map(|dims| {
        let perm = Just((0..dims.len()).collect::<Vec<usize>>()).prop_shuffle();
        (Just(dims), perm)
    })
}

/// A shape of rank 1 to 4, an axis of it, and the sizes along the axis of
/// two to four inputs.
fn concat_case() -> impl Strategy<Value = (Vec<usize>, usize, Vec<usize>)> {
    shape(1..=4, 4).prop_flat_map(|dims| {
        let rank = dims.len();
        (
            Just(dims),
            0..rank,
            prop::collection::vec(0usize..=4, 2..=4),
        )
    })
}

/// A shape of rank 0 to 3, a count of inputs, and an axis in `[-(rank +
/// 1), rank + 1)`.
fn pack_case() -> impl Strategy<Value = (Vec<usize>, usize, i64)> {
    shape(0..=3, 4).prop_flat_map(|dims| {
        let slots = dims.len() as i64 + 1;
        (Just(dims), 1usize..=4, -slots..slots)
    })
}

/// A shape and one multiple per dimension.
fn tile_case() -> impl Strategy<Value = (Vec<usize>, Vec<usize>)> {
    shape(0..=4, 3).prop_flat_map(|dims| {
        let rank = dims.len();
        (Just(dims), prop::collection::vec(0usize..=3, rank))
    })
}

/// A target shape and an input that broadcasts to it: a suffix of the
/// target's dims with some of them replaced by 1.
fn broadcast_case() -> impl Strategy<Value = (Vec<usize>, Vec<usize>)> {
    shape(0..=4, 4).prop_flat_map(|to| {
        let rank = to.len();
        (
            Just(to),
            0..=rank,
            prop::collection::vec(any::<bool>(), rank),
        )
            .prop_map(|(to, keep, ones)| {
                let from: Vec<usize> = to[to.len() - keep..]
                    .iter()
                    .zip(&ones)
                    .map(|(&d, &one)| if one { 1 } else { d })
                    .collect();
                (from, to)
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn transpose_matches_ndarrays_permuted_axes((dims, perm) in shape_and_perm(), wide: bool) {
        check_transpose(&dims, &perm, wide);
    }

    #[test]
    fn concat_matches_ndarrays_concatenate(
        (dims, axis, sizes) in concat_case(),
        negative: bool,
        wide: bool,
    ) {
        check_concat(&dims, axis, &sizes, negative, wide);
    }

    #[test]
    fn pack_matches_ndarrays_stack((dims, count, axis) in pack_case()) {
        check_pack(&dims, count, axis);
    }

    #[test]
    fn tile_matches_indexing_modulo_the_input((dims, multiples) in tile_case(), wide: bool) {
        check_tile(&dims, &multiples, wide);
    }

    #[test]
    fn broadcast_to_matches_ndarrays_broadcast((from, to) in broadcast_case(), wide: bool) {
        check_broadcast_to(&from, &to, wide);
    }
}

#[test]
fn large_copies_split_over_threads_give_the_same_results() {
    // Each output is well over the ~20,000 elements below which a copy
    // runs on the calling thread alone.
    check_transpose(&[64, 50, 30], &[2, 0, 1], false);
    check_transpose(&[300, 301], &[1, 0], true);
    check_concat(&[200, 30, 10], 1, &[17, 30, 1], true, false);
    check_pack(&[101, 99], 3, 1);
    check_tile(&[37, 41], &[5, 3], false);
    check_broadcast_to(&[1, 300, 1], &[3, 300, 70], true);
    let fill = OpCall::new("Fill")
        .input(index(&[301, 299], false))
        .input(Tensor::scalar(7i32))
        .run_on(&*RUNTIME)
        .unwrap()
        .remove(0);
    assert!(fill.as_slice::<i32>().unwrap().iter().all(|&v| v == 7));
}

#[test]
fn the_copying_ops_move_strings_and_bools_as_they_move_numbers() {
    let words = Tensor::strings([2, 3], ["a", "b", "c", "d", "e", "f"]).unwrap();
    let y = run(
        "Transpose",
        vec![
            Arg::Tensor(words.clone()),
            Arg::Constant(index(&[1, 0], false)),
        ],
        &[],
    );
    let text: Vec<&[u8]> = y
        .as_slice::<Vec<u8>>()
        .unwrap()
        .iter()
        .map(Vec::as_slice)
        .collect();
    assert_eq!(text, [b"a", b"d", b"b", b"e", b"c", b"f"]);
    let flags = Tensor::from_vec([2], vec![true, false]).unwrap();
    let y = run(
        "Tile",
        vec![Arg::Tensor(flags), Arg::Constant(index(&[2], true))],
        &[],
    );
    assert_eq!(y.dtype(), DType::Bool);
    assert_eq!(y.as_slice::<bool>().unwrap(), [true, false, true, false]);
}
