//! The gradients of the array, identity, reduction, matmul, variable,
//! constant and guide ops (and of the ops those gradients are built from),
//! checked against central differences on random inputs: random shapes
//! (empty dimensions and scalars included), axes (negative, scalar or
//! list), permutations, multiples, paddings, `keep_dims`, transposes and
//! index types, in `double` (step 1e-6) and `float` (step 1e-2, looser
//! tolerance). The gradients are the registered eager functions, called on
//! an eager run as a tape calls them ([`gradient_check`]). Ops without a
//! gradient are checked to be marked not differentiable where TensorFlow
//! marks them.

use op_core::{AttrValue, DType, Registry, ShapeValue, Tensor};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

mod array_gradient_check;
use array_gradient_check::{Arg, check, float_tensor, gradients, inputs, run, values_f64};

// ---- Helpers ----

/// Checks `op`'s gradient in double and float.
fn check_both(op: &str, args: &[Arg], attrs: &[(&str, AttrValue)]) -> Result<(), TestCaseError> {
    for dtype in [DType::F64, DType::F32] {
        check(op, args, attrs, dtype).map_err(|m| TestCaseError::fail(m.0))?;
    }
    Ok(())
}

/// An index vector, int64 or int32.
fn index(values: &[i64], int64: bool) -> Tensor {
    if int64 {
        Tensor::from_vec([values.len()], values.to_vec()).unwrap()
    } else {
        let values: Vec<i32> = values.iter().map(|&v| v as i32).collect();
        Tensor::from_vec([values.len()], values).unwrap()
    }
}

/// An index scalar, int64 or int32.
fn index_scalar(value: i64, int64: bool) -> Tensor {
    if int64 {
        Tensor::scalar(value)
    } else {
        Tensor::scalar(value as i32)
    }
}

/// A dimension size: mostly 1 to 3, sometimes 0.
fn dim() -> impl Strategy<Value = usize> {
    prop_oneof![1 => Just(0usize), 8 => 1..=3usize]
}

/// A dimension size from 1 to 3.
fn nonzero_dim() -> impl Strategy<Value = usize> {
    1..=3usize
}

/// A shape of rank in `ranks`.
fn shape(ranks: std::ops::RangeInclusive<usize>) -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(dim(), ranks)
}

/// Values for a tensor of `n` elements.
fn values(n: usize) -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(-1.5f64..1.5, n)
}

/// A float arg of shape `dims` with random values.
fn float_arg(dims: Vec<usize>) -> impl Strategy<Value = Arg> {
    let n = dims.iter().product();
    values(n).prop_map(move |v| Arg::Float(dims.clone(), v))
}

/// A float arg of a random shape of rank in `ranks`.
fn any_float_arg(ranks: std::ops::RangeInclusive<usize>) -> impl Strategy<Value = Arg> {
    shape(ranks).prop_flat_map(float_arg)
}

/// The dims of a float arg.
fn dims_of(arg: &Arg) -> Vec<usize> {
    match arg {
        Arg::Float(dims, _) => dims.clone(),
        other => panic!("not a float arg: {other:?}"),
    }
}

/// `axis` (in `0..n`) written as itself or counted from the end.
fn signed(axis: usize, n: usize, negative: bool) -> i64 {
    if negative {
        axis as i64 - n as i64
    } else {
        axis as i64
    }
}

/// The registered gradient of a one-output `op` on float `args`, given
/// `grad` for the output.
fn gradient_given(
    op: &str,
    args: &[Arg],
    attrs: &[(&str, AttrValue)],
    dtype: DType,
    grad: Tensor,
) -> Vec<Option<Tensor>> {
    let (tensors, types) = inputs(args, dtype);
    let outputs = run(op, &tensors, &types, attrs).unwrap();
    gradients(op, &tensors, &types, attrs, &outputs, &[Some(grad)]).unwrap()
}

// ---- Registrations ----

#[test]
fn ops_without_gradients_are_marked_not_differentiable_as_in_tensorflow() {
    op_kernels::link();
    for op in [
        "Shape",
        "Size",
        "Rank",
        "ZerosLike",
        "OnesLike",
        "BroadcastGradientArgs",
        "InvertPermutation",
        "ConcatOffset",
        "StopGradient",
        "Const",
        "VarIsInitializedOp",
        "Range",
        "FloorDiv",
    ] {
        let registration = Registry::global()
            .gradient(op)
            .unwrap()
            .unwrap_or_else(|| panic!("{op} is not marked"));
        assert!(
            registration.functions.is_none(),
            "{op} should not be differentiable"
        );
    }
}

#[test]
fn every_differentiable_op_of_these_families_has_a_gradient() {
    op_kernels::link();
    for op in [
        "Reshape",
        "ExpandDims",
        "Squeeze",
        "Transpose",
        "ConcatV2",
        "Pack",
        "Unpack",
        "Tile",
        "BroadcastTo",
        "Fill",
        "Slice",
        "Pad",
        "Identity",
        "IdentityN",
        "PlaceholderWithDefault",
        "Sum",
        "Mean",
        "Max",
        "Prod",
        "MatMul",
        "ReadVariableOp",
        "ZeroOut",
        "ZeroOutPolymorphic",
        "Example",
        "Examples>MultiplexDense",
        "FloorMod",
        "DivNoNan",
        "Conj",
        "Cumsum",
        "Cumprod",
    ] {
        let registration = Registry::global()
            .gradient(op)
            .unwrap()
            .unwrap_or_else(|| panic!("{op} has no gradient"));
        assert!(
            registration.functions.is_some(),
            "{op} is marked not differentiable"
        );
    }
}

// ---- Array ops ----

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn reshape_gradient_is_the_gradient_reshaped_back(
        (x, order, wildcard, int64) in any_float_arg(0..=4).prop_flat_map(|x| {
            let rank = dims_of(&x).len();
            (Just(x), Just((0..rank).collect::<Vec<_>>()).prop_shuffle(), any::<bool>(), any::<bool>())
        })
    ) {
        let dims = dims_of(&x);
        let mut target: Vec<i64> = order.iter().map(|&i| dims[i] as i64).collect();
        target.push(1);
        if wildcard && !dims.contains(&0) {
            target[0] = -1;
        }
        check_both("Reshape", &[x, Arg::Fixed(index(&target, int64))], &[])?;
    }

    #[test]
    fn expand_dims_gradient_drops_the_new_dimension(
        (x, axis, int64) in any_float_arg(0..=3).prop_flat_map(|x| {
            let rank = dims_of(&x).len() as i64;
            (Just(x), -rank - 1..=rank, any::<bool>())
        })
    ) {
        check_both("ExpandDims", &[x, Arg::Fixed(index_scalar(axis, int64))], &[])?;
    }

    #[test]
    fn squeeze_gradient_restores_the_squeezed_dimensions(
        (dims, pick, negative) in prop::collection::vec(prop_oneof![Just(1usize), dim()], 0..=4)
            .prop_flat_map(|dims| {
                let rank = dims.len();
                (Just(dims), prop::collection::vec(any::<bool>(), rank), any::<bool>())
            }),
        seed in any::<u64>(),
    ) {
        let rank = dims.len();
        let axes: Vec<i64> = (0..rank)
            .filter(|&i| dims[i] == 1 && pick[i])
            .map(|i| signed(i, rank, negative))
            .collect();
        let n: usize = dims.iter().product();
        let values: Vec<f64> = (0..n).map(|i| ((i as u64 ^ seed) % 7) as f64 * 0.3 - 1.0).collect();
        let x = Arg::Float(dims, values);
        check_both("Squeeze", &[x], &[("squeeze_dims", AttrValue::from(axes))])?;
    }

    #[test]
    fn transpose_gradient_transposes_back(
        (x, perm, int64) in any_float_arg(0..=4).prop_flat_map(|x| {
            let rank = dims_of(&x).len();
            (Just(x), Just((0..rank as i64).collect::<Vec<_>>()).prop_shuffle(), any::<bool>())
        })
    ) {
        check_both("Transpose", &[x, Arg::Fixed(index(&perm, int64))], &[])?;
    }

    #[test]
    fn concat_gradient_slices_each_input_back_out(
        (base, axis, sizes, negative, int64) in prop::collection::vec(dim(), 1..=3)
            .prop_flat_map(|base| {
                let rank = base.len();
                (Just(base), 0..rank, prop::collection::vec(0..=3usize, 2..=4), any::<bool>(), any::<bool>())
            }),
        seed in any::<u64>(),
    ) {
        let rank = base.len();
        let list: Vec<(Vec<usize>, Vec<f64>)> = sizes
            .iter()
            .enumerate()
            .map(|(k, &s)| {
                let mut dims = base.clone();
                dims[axis] = s;
                let n: usize = dims.iter().product();
                let values = (0..n).map(|i| ((i as u64 * 31 + k as u64 + seed) % 11) as f64 * 0.2 - 1.0).collect();
                (dims, values)
            })
            .collect();
        let axis = signed(axis, rank, negative);
        check_both("ConcatV2", &[Arg::Floats(list), Arg::Fixed(index_scalar(axis, int64))], &[])?;
    }

    #[test]
    fn pack_gradient_unpacks_the_gradient(
        (dims, n, axis) in shape(0..=3).prop_flat_map(|dims| {
            let rank = dims.len() as i64;
            (Just(dims), 1..=3usize, -rank - 1..=rank)
        }),
        seed in any::<u64>(),
    ) {
        let count: usize = dims.iter().product();
        let list = (0..n)
            .map(|k| (dims.clone(), (0..count).map(|i| ((i as u64 * 5 + k as u64 * 3 + seed) % 13) as f64 * 0.15 - 0.9).collect()))
            .collect();
        check_both("Pack", &[Arg::Floats(list)], &[("axis", AttrValue::from(axis))])?;
    }

    #[test]
    fn unpack_gradient_packs_the_gradients(
        (x, axis, negative) in prop::collection::vec(nonzero_dim(), 1..=3)
            .prop_flat_map(|dims| {
                let rank = dims.len();
                (float_arg(dims), 0..rank, any::<bool>())
            })
    ) {
        let dims = dims_of(&x);
        let num = dims[axis] as i64;
        let axis = signed(axis, dims.len(), negative);
        check_both("Unpack", &[x], &[("num", AttrValue::from(num)), ("axis", AttrValue::from(axis))])?;
    }

    #[test]
    fn tile_gradient_sums_the_copies(
        (x, multiples, int64) in any_float_arg(0..=3).prop_flat_map(|x| {
            let rank = dims_of(&x).len();
            (Just(x), prop::collection::vec(0..=3i64, rank), any::<bool>())
        })
    ) {
        check_both("Tile", &[x, Arg::Fixed(index(&multiples, int64))], &[])?;
    }

    #[test]
    fn broadcast_to_gradient_sums_over_the_broadcast_axes(
        (target, keep, lead, int64) in shape(0..=3).prop_flat_map(|target| {
            let rank = target.len();
            (Just(target), prop::collection::vec(any::<bool>(), rank), 0..=rank, any::<bool>())
        }),
        seed in any::<u64>(),
    ) {
        // x: the target's trailing dims, some of them 1.
        let dims: Vec<usize> = (lead..target.len())
            .map(|i| if keep[i] { target[i] } else { 1 })
            .collect();
        let n: usize = dims.iter().product();
        let values = (0..n).map(|i| ((i as u64 * 7 + seed) % 9) as f64 * 0.25 - 1.0).collect();
        let target: Vec<i64> = target.iter().map(|&d| d as i64).collect();
        check_both("BroadcastTo", &[Arg::Float(dims, values), Arg::Fixed(index(&target, int64))], &[])?;
    }

    #[test]
    fn fill_gradient_is_the_sum_of_the_gradient_for_the_value(
        dims in shape(0..=3),
        value in -1.5f64..1.5,
        int64 in any::<bool>(),
    ) {
        let dims: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
        check_both("Fill", &[Arg::Fixed(index(&dims, int64)), Arg::Float(vec![], vec![value])], &[])?;
    }

    #[test]
    fn slice_gradient_pads_the_gradient_back(
        (x, cuts, int64) in any_float_arg(0..=4).prop_flat_map(|x| {
            let dims = dims_of(&x);
            let cuts: Vec<_> = dims
                .iter()
                .map(|&d| (0..=d).prop_flat_map(move |b| (Just(b), prop_oneof![Just(-1i64), (0..=(d - b) as i64)])))
                .collect();
            (Just(x), cuts, any::<bool>())
        })
    ) {
        let dims = dims_of(&x);
        let begin: Vec<i64> = cuts.iter().map(|&(b, _)| b as i64).collect();
        // TensorFlow slices an empty dimension only as begin = size = 0.
        let size: Vec<i64> = cuts
            .iter()
            .zip(&dims)
            .map(|(&(_, s), &d)| if d == 0 { 0 } else { s })
            .collect();
        check_both("Slice", &[x, Arg::Fixed(index(&begin, int64)), Arg::Fixed(index(&size, int64))], &[])?;
    }

    #[test]
    fn pad_gradient_slices_the_padding_off(
        (x, paddings, int64) in any_float_arg(0..=3).prop_flat_map(|x| {
            let rank = dims_of(&x).len();
            (Just(x), prop::collection::vec(0..=2i64, 2 * rank), any::<bool>())
        })
    ) {
        let rank = dims_of(&x).len();
        let paddings = if int64 {
            Tensor::from_vec([rank, 2], paddings).unwrap()
        } else {
            Tensor::from_vec([rank, 2], paddings.iter().map(|&p| p as i32).collect()).unwrap()
        };
        check_both("Pad", &[x, Arg::Fixed(paddings)], &[])?;
    }
}

// ---- Identities and graph leaves ----

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    #[test]
    fn identity_passes_the_gradient_through(x in any_float_arg(0..=3)) {
        check_both("Identity", &[x], &[])?;
    }

    #[test]
    fn identity_n_passes_each_gradient_to_its_input(a in any_float_arg(0..=2), b in any_float_arg(0..=2)) {
        let (Arg::Float(da, va), Arg::Float(db, vb)) = (a, b) else { unreachable!() };
        check_both("IdentityN", &[Arg::Floats(vec![(da, va), (db, vb)])], &[])?;
    }

    #[test]
    fn placeholder_with_default_passes_the_gradient_to_its_default(x in any_float_arg(0..=3)) {
        let attrs = [("shape", AttrValue::from(ShapeValue::unknown_rank()))];
        check_both("PlaceholderWithDefault", &[x], &attrs)?;
    }
}

#[test]
fn identity_n_gives_no_gradient_to_an_input_whose_output_nobody_used() {
    let args = [Arg::Floats(vec![
        (vec![2], vec![1.0, 2.0]),
        (vec![], vec![3.0]),
    ])];
    let (tensors, types) = inputs(&args, DType::F32);
    let outputs = run("IdentityN", &tensors, &types, &[]).unwrap();
    let grad = Tensor::from_vec([2], vec![5.0f32, 6.0]).unwrap();
    let grads = gradients(
        "IdentityN",
        &tensors,
        &types,
        &[],
        &outputs,
        &[Some(grad), None],
    )
    .unwrap();
    assert_eq!(
        grads[0].as_ref().unwrap().as_slice::<f32>().unwrap(),
        [5.0, 6.0]
    );
    assert!(grads[1].is_none());
}

// ---- Reductions ----

/// An input and reduction axes: a shape of rank 0 to 4, a subset of its
/// axes (each maybe negative), given as a scalar when one axis and
/// `scalar`, and `keep_dims`.
fn reduction_case(
    values: fn(usize) -> BoxedStrategy<Vec<f64>>,
) -> impl Strategy<Value = (Arg, Tensor, bool)> {
    shape(0..=4).prop_flat_map(move |dims| {
        let rank = dims.len();
        let n: usize = dims.iter().product();
        (
            Just(dims),
            values(n),
            Just((0..rank).collect::<Vec<_>>()).prop_shuffle(),
            0..=rank,
            prop::collection::vec(any::<bool>(), rank),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(
                move |(dims, values, order, count, negative, scalar, int64, keep_dims)| {
                    let axes: Vec<i64> = order[..count]
                        .iter()
                        .map(|&a| signed(a, rank, negative[a]))
                        .collect();
                    let axes = if scalar && axes.len() == 1 {
                        index_scalar(axes[0], int64)
                    } else {
                        index(&axes, int64)
                    };
                    (Arg::Float(dims, values), axes, keep_dims)
                },
            )
    })
}

fn plain_values(n: usize) -> BoxedStrategy<Vec<f64>> {
    values(n).boxed()
}

/// Distinct values, 0.1 apart and shuffled: a maximum without ties.
fn distinct_values(n: usize) -> BoxedStrategy<Vec<f64>> {
    Just((0..n).collect::<Vec<_>>())
        .prop_shuffle()
        .prop_map(|p| p.iter().map(|&i| i as f64 * 0.1 - 1.0).collect())
        .boxed()
}

/// Values of which some are exactly 0: a product's gradient must not
/// divide by them.
fn values_with_zeros(n: usize) -> BoxedStrategy<Vec<f64>> {
    prop::collection::vec(prop_oneof![1 => Just(0.0), 4 => -1.5f64..1.5], n).boxed()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn sum_gradient_broadcasts_the_gradient_over_the_reduced_axes(
        (x, axes, keep_dims) in reduction_case(plain_values)
    ) {
        check_both("Sum", &[x, Arg::Fixed(axes)], &[("keep_dims", AttrValue::from(keep_dims))])?;
    }

    #[test]
    fn mean_gradient_shares_the_gradient_among_the_averaged_elements(
        (x, axes, keep_dims) in reduction_case(plain_values)
    ) {
        check_both("Mean", &[x, Arg::Fixed(axes)], &[("keep_dims", AttrValue::from(keep_dims))])?;
    }

    #[test]
    fn max_gradient_goes_to_the_maximum(
        (x, axes, keep_dims) in reduction_case(distinct_values)
    ) {
        check_both("Max", &[x, Arg::Fixed(axes)], &[("keep_dims", AttrValue::from(keep_dims))])?;
    }

    #[test]
    fn prod_gradient_is_the_product_of_the_others_even_with_zeros(
        (x, axes, keep_dims) in reduction_case(values_with_zeros)
    ) {
        check_both("Prod", &[x, Arg::Fixed(axes)], &[("keep_dims", AttrValue::from(keep_dims))])?;
    }
}

#[test]
fn max_gradient_is_shared_among_ties() {
    let x = Arg::Float(vec![2, 3], vec![1.0, 3.0, 3.0, 2.0, 2.0, 0.0]);
    let axes = Arg::Fixed(index(&[1], false));
    let attrs = [("keep_dims", AttrValue::from(false))];
    let grad = float_tensor(&[2], &[6.0, 4.0], DType::F64);
    let grads = gradient_given("Max", &[x, axes], &attrs, DType::F64, grad);
    let dx = values_f64(grads[0].as_ref().unwrap());
    assert_eq!(dx, [0.0, 3.0, 3.0, 2.0, 2.0, 0.0]);
    assert!(grads[1].is_none());
}

#[test]
fn prod_gradient_with_one_zero_is_the_product_of_the_others_there_only() {
    let x = Arg::Float(vec![4], vec![2.0, 0.0, 3.0, 5.0]);
    let axes = Arg::Fixed(index(&[0], true));
    let grad = float_tensor(&[], &[1.0], DType::F32);
    let grads = gradient_given("Prod", &[x, axes], &[], DType::F32, grad);
    assert_eq!(
        values_f64(grads[0].as_ref().unwrap()),
        [0.0, 30.0, 0.0, 0.0]
    );
}

// ---- MatMul ----

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn matmul_gradient_holds_for_each_of_the_four_transposes(
        (m, k, n) in (dim(), nonzero_dim(), dim()),
        transpose_a in any::<bool>(),
        transpose_b in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let a_dims = if transpose_a { vec![k, m] } else { vec![m, k] };
        let b_dims = if transpose_b { vec![n, k] } else { vec![k, n] };
        let fill = |n: usize, salt: u64| -> Vec<f64> {
            (0..n).map(|i| ((i as u64 * 11 + salt + seed) % 13) as f64 * 0.2 - 1.2).collect()
        };
        let a = Arg::Float(a_dims, fill(m * k, 1));
        let b = Arg::Float(b_dims, fill(k * n, 5));
        let attrs = [
            ("transpose_a", AttrValue::from(transpose_a)),
            ("transpose_b", AttrValue::from(transpose_b)),
        ];
        check_both("MatMul", &[a, b], &attrs)?;
    }
}

#[test]
fn matmul_gradient_of_complex_matrices_uses_the_conjugates() {
    use op_core::Complex64;
    let c = |re: f32, im: f32| Complex64::new(re, im);
    // a [1,2], b [2,1]: da = grad b^H, db = a^H grad.
    let a = Tensor::from_vec([1, 2], vec![c(1.0, 2.0), c(3.0, -1.0)]).unwrap();
    let b = Tensor::from_vec([2, 1], vec![c(0.5, 1.0), c(-2.0, 0.0)]).unwrap();
    let grad = Tensor::from_vec([1, 1], vec![c(1.0, 1.0)]).unwrap();
    let args = [Arg::Fixed(a), Arg::Fixed(b)];
    let (tensors, types) = inputs(&args, DType::F32);
    let outputs = run("MatMul", &tensors, &types, &[]).unwrap();
    let grads = gradients("MatMul", &tensors, &types, &[], &outputs, &[Some(grad)]).unwrap();
    let da = grads[0]
        .as_ref()
        .unwrap()
        .as_slice::<Complex64>()
        .unwrap()
        .to_vec();
    let db = grads[1]
        .as_ref()
        .unwrap()
        .as_slice::<Complex64>()
        .unwrap()
        .to_vec();
    let g = c(1.0, 1.0);
    assert_eq!(da, [g * c(0.5, -1.0), g * c(-2.0, 0.0)]);
    assert_eq!(db, [c(1.0, -2.0) * g, c(3.0, 1.0) * g]);
}

// ---- Variables ----

#[test]
fn read_variable_gradient_reaches_the_handle_unchanged() {
    op_kernels::link();
    let variable =
        op_kernels::variable::Variable::new(Tensor::from_vec([3], vec![1.0f32, 2.0, 3.0]).unwrap())
            .unwrap();
    let handle = variable.handle().clone();
    let args = [Arg::Fixed(handle)];
    let (tensors, types) = inputs(&args, DType::F32);
    let attrs = [("dtype", AttrValue::from(DType::F32))];
    let outputs = run("ReadVariableOp", &tensors, &types, &attrs).unwrap();
    let grad = Tensor::from_vec([3], vec![0.5f32, -1.0, 4.0]).unwrap();
    let grads = gradients(
        "ReadVariableOp",
        &tensors,
        &types,
        &attrs,
        &outputs,
        &[Some(grad)],
    )
    .unwrap();
    assert_eq!(
        grads[0].as_ref().unwrap().as_slice::<f32>().unwrap(),
        [0.5, -1.0, 4.0]
    );
}

// ---- The guide's ops ----

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn zero_out_gradient_reaches_only_the_first_element(
        x in shape(0..=3).prop_filter("ZeroOut's gradient needs a first element", |d| !d.contains(&0)).prop_flat_map(float_arg)
    ) {
        check_both("ZeroOutPolymorphic", &[x], &[])?;
    }

    #[test]
    fn example_gradient_is_the_gradient_doubled(x in any_float_arg(0..=3)) {
        check_both("Example", &[x], &[])?;
    }

    #[test]
    fn multiplex_gradient_goes_to_the_chosen_branch(
        (a, b, cond) in shape(0..=3).prop_flat_map(|dims| {
            let n: usize = dims.iter().product();
            (float_arg(dims.clone()), float_arg(dims.clone()), prop::collection::vec(any::<bool>(), n), Just(dims))
        }).prop_map(|(a, b, cond, dims)| (a, b, Tensor::from_vec(dims, cond).unwrap()))
    ) {
        check_both("Examples>MultiplexDense", &[Arg::Fixed(cond), a, b], &[])?;
    }
}

#[test]
fn zero_out_gradient_is_the_guides_one_hot_for_int32() {
    // The guide's ZeroOut is int32 only: its gradient is never trained, but
    // computes what the guide's `_zero_out_grad` does.
    let args = [Arg::Fixed(
        Tensor::from_vec([2, 2], vec![7i32, 8, 9, 10]).unwrap(),
    )];
    let (tensors, types) = inputs(&args, DType::I32);
    let outputs = run("ZeroOut", &tensors, &types, &[]).unwrap();
    let grad = Tensor::from_vec([2, 2], vec![3i32, 4, 5, 6]).unwrap();
    let grads = gradients("ZeroOut", &tensors, &types, &[], &outputs, &[Some(grad)]).unwrap();
    let dx = grads[0].as_ref().unwrap();
    assert_eq!(dx.dims(), [2, 2]);
    assert_eq!(dx.as_slice::<i32>().unwrap(), [3, 0, 0, 0]);
}

#[test]
fn zero_out_gradient_of_a_scalar_is_the_gradient() {
    let grad = float_tensor(&[], &[2.5], DType::F64);
    let grads = gradient_given(
        "ZeroOutPolymorphic",
        &[Arg::Float(vec![], vec![4.0])],
        &[],
        DType::F64,
        grad,
    );
    assert_eq!(values_f64(grads[0].as_ref().unwrap()), [2.5]);
}

// ---- The ops the gradients are built from ----

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn floor_mod_gradient_sums_over_the_broadcast_axes(
        (full, keep, quotients, fractions, divisors) in shape(0..=3).prop_flat_map(|full| {
            let rank = full.len();
            let n: usize = full.iter().product();
            (
                Just(full),
                prop::collection::vec(any::<bool>(), rank),
                prop::collection::vec(-3i32..3, n),
                prop::collection::vec(0.2f64..0.8, n),
                prop::collection::vec(prop_oneof![-2.0f64..-0.5, 0.5f64..2.0], n),
            )
        })
    ) {
        // y broadcasts along the dims not kept; x = (q + f) * y, so that
        // x / y is at least 0.2 from an integer.
        let y_dims: Vec<usize> = full.iter().zip(&keep).map(|(&d, &k)| if k { d } else { 1 }).collect();
        let y_len: usize = y_dims.iter().product();
        let y_values: Vec<f64> = divisors[..y_len.min(divisors.len())].to_vec();
        let y_values = if y_values.len() < y_len { vec![1.0; y_len] } else { y_values };
        let y_strides = op_kernels::array::row_major_strides(&y_dims);
        let full_strides = op_kernels::array::row_major_strides(&full);
        let x_values: Vec<f64> = (0..quotients.len())
            .map(|i| {
                let at: usize = (0..full.len())
                    .map(|k| if keep[k] { (i / full_strides[k]) % full[k] * y_strides[k] } else { 0 })
                    .sum();
                (f64::from(quotients[i]) + fractions[i]) * y_values[at]
            })
            .collect();
        check_both("FloorMod", &[Arg::Float(full, x_values), Arg::Float(y_dims, y_values)], &[])?;
    }
}

#[test]
fn conj_gradient_is_the_conjugate_of_the_gradient() {
    use op_core::Complex128;
    let x = Tensor::from_vec(
        [2],
        vec![Complex128::new(1.0, 2.0), Complex128::new(-1.0, 0.5)],
    )
    .unwrap();
    let args = [Arg::Fixed(x)];
    let (tensors, types) = inputs(&args, DType::F64);
    let outputs = run("Conj", &tensors, &types, &[]).unwrap();
    let grad = Tensor::from_vec(
        [2],
        vec![Complex128::new(3.0, -4.0), Complex128::new(0.0, 1.0)],
    )
    .unwrap();
    let grads = gradients("Conj", &tensors, &types, &[], &outputs, &[Some(grad)]).unwrap();
    assert_eq!(
        grads[0].as_ref().unwrap().as_slice::<Complex128>().unwrap(),
        [Complex128::new(3.0, 4.0), Complex128::new(0.0, -1.0)]
    );
}

#[test]
fn unpack_gradient_gives_zeros_for_the_outputs_nobody_used() {
    let x = Arg::Float(vec![2, 2], vec![1.0, 2.0, 3.0, 4.0]);
    let attrs = [("num", AttrValue::from(2i64))];
    let (tensors, types) = inputs(&[x], DType::F64);
    let outputs = run("Unpack", &tensors, &types, &attrs).unwrap();
    let grad = float_tensor(&[2], &[5.0, 6.0], DType::F64);
    let grads = gradients(
        "Unpack",
        &tensors,
        &types,
        &attrs,
        &outputs,
        &[None, Some(grad)],
    )
    .unwrap();
    assert_eq!(values_f64(grads[0].as_ref().unwrap()), [0.0, 0.0, 5.0, 6.0]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn div_no_nan_gradient_sums_over_the_broadcast_axes(
        (full, keep, numerators, denominators) in shape(0..=3).prop_flat_map(|full| {
            let rank = full.len();
            let n: usize = full.iter().product();
            (
                Just(full),
                prop::collection::vec(any::<bool>(), rank),
                prop::collection::vec(-1.5f64..1.5, n),
                prop::collection::vec(prop_oneof![-2.0f64..-0.5, 0.5f64..2.0], n),
            )
        })
    ) {
        // y (away from 0) broadcasts along the dims not kept.
        let y_dims: Vec<usize> = full.iter().zip(&keep).map(|(&d, &k)| if k { d } else { 1 }).collect();
        let y_len: usize = y_dims.iter().product();
        let y_values = if y_len <= denominators.len() { denominators[..y_len].to_vec() } else { vec![1.0; y_len] };
        let args = [Arg::Float(full, numerators), Arg::Float(y_dims, y_values)];
        check_both("DivNoNan", &args, &[])?;
    }

    #[test]
    fn scan_gradients_run_the_scan_the_other_way(
        (dims, axis, negative) in prop::collection::vec(dim(), 1..=3).prop_flat_map(|dims| {
            let rank = dims.len();
            (Just(dims), 0..rank, any::<bool>())
        }),
        exclusive in any::<bool>(),
        reverse in any::<bool>(),
        int64 in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let n: usize = dims.iter().product();
        // Away from 0, where Cumprod's gradient (TensorFlow's) divides.
        let values: Vec<f64> = (0..n)
            .map(|i| [0.5, -0.75, 1.25, -1.5, 0.9][((i as u64 + seed) % 5) as usize])
            .collect();
        let axis = signed(axis, dims.len(), negative);
        let attrs = [("exclusive", AttrValue::from(exclusive)), ("reverse", AttrValue::from(reverse))];
        for op in ["Cumsum", "Cumprod"] {
            let args = [Arg::Float(dims.clone(), values.clone()), Arg::Fixed(index_scalar(axis, int64))];
            check_both(op, &args, &attrs)?;
        }
    }
}

#[test]
fn div_no_nan_gradient_is_zero_where_the_divisor_is() {
    let args = [
        Arg::Float(vec![2], vec![3.0, 4.0]),
        Arg::Float(vec![2], vec![0.0, 2.0]),
    ];
    let (tensors, types) = inputs(&args, DType::F64);
    let outputs = run("DivNoNan", &tensors, &types, &[]).unwrap();
    let grad = float_tensor(&[2], &[1.0, 1.0], DType::F64);
    let grads = gradients("DivNoNan", &tensors, &types, &[], &outputs, &[Some(grad)]).unwrap();
    assert_eq!(values_f64(grads[0].as_ref().unwrap()), [0.0, 0.5]);
    assert_eq!(values_f64(grads[1].as_ref().unwrap()), [0.0, -1.0]);
}
