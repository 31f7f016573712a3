//! The shape functions of the array ops, one line per case in the
//! `INFER_OK` / `INFER_ERROR` notation of
//! [`ShapeTest`](op_core::shape_inference::testing::ShapeTest) (`in0`:
//! input 0's shape itself, `d0_1`: input 0's dimension 1 itself): fully
//! known, partially known (`[?,3]`) and unknown (`?`) input shapes, with and
//! without the values of constant inputs (shapes, axes, permutations,
//! multiples), and the inputs each op rejects before anything runs.

use op_core::Tensor;
use op_core::shape_inference::testing::ShapeTest;

fn t(op: &str) -> ShapeTest {
    op_kernels::link();
    ShapeTest::new(op)
}

/// An int32 vector, as a constant input's value.
fn i32s(values: &[i32]) -> Tensor {
    Tensor::from_vec([values.len()], values.to_vec()).unwrap()
}

/// `op`'s shape function with input `index` the constant `value`.
fn with_constant(op: &str, index: usize, value: Tensor) -> ShapeTest {
    t(op).input_tensor(index, value)
}

#[test]
fn shape_is_a_vector_as_long_as_the_rank() {
    let s = t("Shape");
    s.ok("[?,3]", "[2]");
    s.ok("[2,3,4]", "[3]");
    s.ok("[]", "[0]");
    s.ok("?", "[?]");
}

#[test]
fn size_and_rank_are_scalars() {
    for op in ["Size", "Rank"] {
        t(op).ok("[?,3]", "[]");
        t(op).ok("?", "[]");
    }
}

#[test]
fn reshape_without_the_shapes_value_knows_its_length() {
    let r = t("Reshape");
    r.ok("?;?", "?");
    r.ok("[2,3];?", "?");
    r.ok("[2,3];[2]", "[?,?]");
    r.ok("?;[3]", "[?,?,?]");
    // One output dim: the input's element count, when known.
    r.ok("[2,3];[1]", "[6]");
    r.ok("[0,3];[1]", "[0]");
    r.ok("[?,3];[1]", "[?]");
    r.ok("[];[0]", "[]");
    r.error(
        "[2,3];[2,2]",
        "input 1 ('shape') has shape [2,2], which must be rank 1",
    );
}

#[test]
fn reshape_uses_the_shapes_value_when_constant() {
    let r = |value: &[i32]| with_constant("Reshape", 1, i32s(value));
    r(&[3, 2]).ok("[2,3];[2]", "[3,2]");
    r(&[3, -1]).ok("[2,3];[2]", "[3,2]");
    r(&[-1]).ok("[2,3];[1]", "[6]");
    r(&[-1]).ok("[0,3];[1]", "[0]");
    r(&[3, -1]).ok("?;[2]", "[3,?]");
    r(&[3, -1]).ok("[?,2];[2]", "[3,?]");
    // The unknown dims of both sides hold the same count: they are one.
    r(&[-1, 3]).ok("[?,3];[2]", "[d0_0,3]");
    r(&[6]).ok("[?,3];[1]", "[6]");
    // A -1 beside a 0 stays unknown (the kernel decides).
    r(&[-1, 0]).ok("[2,3];[2]", "[?,0]");
    r(&[4]).error(
        "[2,3];[1]",
        "Cannot reshape a tensor with 6 elements to shape [4] (4 elements)",
    );
    r(&[4, -1]).error("[2,3];[2]", "6 is not a multiple of 4");
    r(&[4]).error("[?,3];[1]", "4 is not a multiple of 3");
    r(&[-2, 3]).error("[2,3];[2]", "invalid value -2 in input 1");
    r(&[2, 3]).error("[2,3];[3]", "dimension must be 2 but is 3");
}

#[test]
fn fill_is_the_shape_its_dims_hold() {
    let f = t("Fill");
    f.ok("?;?", "?");
    f.ok("[3];[]", "[?,?,?]");
    f.ok("[?];[]", "?");
    f.error(
        "[2,2];[]",
        "input 0 ('dims') has shape [2,2], which must be rank 1",
    );
    f.error(
        "[2];[1]",
        "input 1 ('value') has shape [1], which must be rank 0",
    );
    let f = |value: &[i32]| with_constant("Fill", 0, i32s(value));
    f(&[2, 3]).ok("[2];[]", "[2,3]");
    f(&[]).ok("[0];[]", "[]");
    f(&[2, -1]).error("[2];[]", "Fill dimensions must be >= 0, but dims = [2,-1]");
}

#[test]
fn zeros_like_and_ones_like_keep_their_inputs_shape() {
    for op in ["ZerosLike", "OnesLike"] {
        t(op).ok("[?,3]", "in0");
        t(op).ok("?", "in0");
    }
}

#[test]
fn expand_dims_needs_the_dim_and_the_rank() {
    let e = t("ExpandDims");
    e.ok("[2,3];[]", "?");
    let e = |dim: i32| with_constant("ExpandDims", 1, Tensor::scalar(dim));
    e(0).ok("[2,?];[]", "[1,d0_0,d0_1]");
    e(1).ok("[2,?];[]", "[d0_0,1,d0_1]");
    e(2).ok("[2,?];[]", "[d0_0,d0_1,1]");
    e(-1).ok("[2,?];[]", "[d0_0,d0_1,1]");
    e(-3).ok("[2,?];[]", "[1,d0_0,d0_1]");
    e(0).ok("[];[]", "[1]");
    e(0).ok("?;[]", "?");
    e(3).error("[2,3];[]", "dim 3 not in the interval [-3, 2]");
    e(-4).error("[2,3];[]", "dim -4 not in the interval [-3, 2]");
    with_constant("ExpandDims", 1, i32s(&[0, 1])).error(
        "[2,3];[2]",
        "'dim' input must be a tensor with a single value, but has 2 values",
    );
}

#[test]
fn squeeze_removes_known_and_named_ones() {
    let s = t("Squeeze");
    s.ok("?", "?");
    s.ok("[1,2,1,3]", "[d0_1,d0_3]");
    s.ok("[1,1]", "[]");
    // Squeezing every 1: an unknown dim might be one.
    s.ok("[1,?,3]", "?");
    let s = |dims: Vec<i64>| t("Squeeze").attr("squeeze_dims", dims);
    s(vec![0]).ok("[?,2]", "[d0_1]");
    s(vec![0]).ok("[1,?]", "[d0_1]");
    s(vec![-1]).ok("[2,1]", "[d0_0]");
    s(vec![0, 2]).ok("[1,?,1]", "[d0_1]");
    s(vec![1]).error(
        "[1,2]",
        "Can not squeeze dim[1], expected a dimension of 1, got 2",
    );
    s(vec![2]).error("[1,2]", "squeeze_dims[0] = 2 not in [-2, 2)");
    s(vec![i64::MIN]).error("[1,2]", "not in [-2, 2)");
}

#[test]
fn transpose_permutes_known_dims_when_perm_is_constant() {
    let p = t("Transpose");
    p.ok("?;?", "?");
    p.ok("[2,3];?", "[?,?]");
    p.ok("[2,3];[2]", "[?,?]");
    p.ok("?;[3]", "[?,?,?]");
    // One element: a scalar or a vector, either way unchanged.
    p.ok("?;[1]", "in0");
    p.error(
        "[2,3];[3]",
        "input 1 ('perm') has 3 elements, but input 0 ('x') has rank 2",
    );
    p.error(
        "[2,3];[2,2]",
        "input 1 ('perm') has shape [2,2], which must be rank 1",
    );
    let p = |perm: &[i32]| with_constant("Transpose", 1, i32s(perm));
    p(&[1, 0]).ok("[2,?];[2]", "[d0_1,d0_0]");
    p(&[2, 0, 1]).ok("[2,3,4];[3]", "[d0_2,d0_0,d0_1]");
    p(&[1, 0]).ok("?;[2]", "[?,?]");
    p(&[1, 0]).ok("?;?", "[?,?]");
    p(&[0, 0]).error(
        "[2,3];[2]",
        "perm [0,0] is not a permutation: 0 appears twice",
    );
    p(&[0, 2]).error("[2,3];[2]", "2 is out of range [0 .. 2)");
    p(&[-1, 0]).error("[2,3];[2]", "-1 is out of range [0 .. 2)");
}

#[test]
fn concat_without_the_axis_knows_the_rank() {
    let c = t("ConcatV2");
    c.ok("[2,3];[2,4];[]", "[?,?]");
    c.ok("?;[2,3];[]", "[?,?]");
    c.ok("?;?;[]", "?");
    c.ok("?;?;?", "?");
    c.error(
        "[];[];[]",
        "Can't concatenate scalars (use tf.stack instead)",
    );
    c.error(
        "[2];[2,3];[]",
        "input 1 ('values'[1]) has shape [2,3], which must be rank 1",
    );
    c.error(
        "[2];[2];[1]",
        "input 2 ('axis') has shape [1], which must be rank 0",
    );
}

#[test]
fn concat_adds_up_the_axis_and_merges_the_rest_when_the_axis_is_constant() {
    let c = |axis: i32| with_constant("ConcatV2", 2, Tensor::scalar(axis));
    c(1).ok("[2,3];[2,4];[]", "[d0_0,7]");
    c(-1).ok("[2,3];[2,4];[]", "[d0_0,7]");
    c(1).ok("[?,3];[2,4];[]", "[d1_0,7]");
    c(1).ok("[2,?];[2,4];[]", "[d0_0,?]");
    c(0).ok("[1,3];[2,3];[]", "[3,d0_1]");
    c(0).ok("?;?;[]", "?");
    c(0).ok("[2,3];?;[]", "[?,d0_1]");
    c(1).error("[2,3];[3,4];[]", "dimension 0 in both shapes must be equal");
    c(2).error(
        "[2,3];[2,4];[]",
        "which must be at least rank 3 but is rank 2",
    );
    c(-3).error(
        "[2,3];[2,4];[]",
        "which must be at least rank 3 but is rank 2",
    );
    c(i32::MIN).error("[2,3];[2,4];[]", "which must be at least rank 2147483648");
    let three = with_constant("ConcatV2", 3, Tensor::scalar(0i32));
    three.ok("[1,2];[3,2];[5,2];[]", "[9,d0_1]");
}

#[test]
fn pack_merges_its_inputs_and_inserts_their_count() {
    let p = t("Pack");
    p.ok("[2,3];[2,3]", "[2,d0_0,d0_1]");
    p.ok("[2]", "[1,d0_0]");
    p.ok("?;?", "?");
    p.ok("?;[2,?]", "[2,d1_0,d1_1]");
    p.ok("[?,3];[2,?]", "[2,d1_0,d0_1]");
    p.error("[2];[3]", "dimension 0 in both shapes must be equal");
    p.error("[2];[2,1]", "shapes must be equal rank");
    let p = |axis: i64| t("Pack").attr("axis", axis);
    p(1).ok("[2,3];[2,3]", "[d0_0,2,d0_1]");
    p(2).ok("[2,3];[2,3]", "[d0_0,d0_1,2]");
    p(-1).ok("[2,3];[2,3]", "[d0_0,d0_1,2]");
    p(-3).ok("[2,3];[2,3]", "[2,d0_0,d0_1]");
    p(3).error("[2,3];[2,3]", "Invalid axis: 3; must be in [-3, 3)");
    p(-4).error("[2,3];[2,3]", "Invalid axis: -4; must be in [-3, 3)");
}

#[test]
fn broadcast_to_aligns_the_inputs_dims_with_the_shape() {
    let b = t("BroadcastTo");
    b.ok("[2,3];[3]", "[?,d0_0,d0_1]");
    b.ok("[1,3];[2]", "[?,d0_1]");
    b.ok("?;[2]", "[?,?]");
    b.ok("[2];?", "?");
    b.error(
        "[1,2,3];[2]",
        "input 0 ('input') has shape [1,2,3], which must be at most rank 2",
    );
    b.error(
        "[2];[2,2]",
        "input 1 ('shape') has shape [2,2], which must be rank 1",
    );
    let b = |shape: &[i32]| with_constant("BroadcastTo", 1, i32s(shape));
    b(&[4, 2, 3]).ok("[2,3];[3]", "[4,d0_0,d0_1]");
    b(&[4, 2, 3]).ok("[1,3];[3]", "[4,2,d0_1]");
    b(&[-1, 3]).ok("[3];[2]", "[?,d0_0]");
    b(&[4, 5]).ok("?;[2]", "[4,5]");
    b(&[4, 5]).error("[2,3];[2]", "dimensions must be equal, but are 3 and 5");
}

#[test]
fn broadcast_gradient_args_gives_two_vectors() {
    let b = t("BroadcastGradientArgs");
    b.ok("[2];[3]", "[?];[?]");
    b.ok("?;?", "[?];[?]");
    b.error(
        "[];[2]",
        "input 0 ('s0') has shape [], which must be rank 1",
    );
}

#[test]
fn tile_multiplies_each_dim_by_its_multiple() {
    let p = t("Tile");
    p.ok("[2,3];[2]", "[?,?]");
    p.ok("[2,3];?", "[?,?]");
    p.ok("?;[2]", "[?,?]");
    p.ok("?;?", "?");
    p.ok("[];[0]", "[]");
    p.error(
        "[2,3];[3]",
        "input 1 ('multiples') has 3 elements, but input 0 ('input') has rank 2",
    );
    let p = |multiples: &[i32]| with_constant("Tile", 1, i32s(multiples));
    p(&[1, 2]).ok("[2,3];[2]", "[d0_0,6]");
    p(&[1, 2]).ok("[?,?];[2]", "[d0_0,?]");
    p(&[0, 2]).ok("[?,3];[2]", "[0,6]");
    p(&[2, 2]).ok("?;[2]", "[?,?]");
    p(&[-2, 1]).error("[2,3];[2]", "invalid value -2 in input 1");
}

#[test]
fn shape_function_errors_name_the_op_and_node() {
    let error = t("Pack").attr("axis", 3i64).run("[2];[2]").unwrap_err();
    assert_eq!(error.code(), op_core::Code::InvalidArgument);
    assert!(
        error
            .message()
            .starts_with("op Pack (node 'Pack'): Invalid axis: 3"),
        "{error}"
    );
    let error = with_constant("Reshape", 1, i32s(&[4]))
        .run("[2,3];[1]")
        .unwrap_err();
    assert!(
        error
            .message()
            .starts_with("op Reshape (node 'Reshape'): Cannot reshape"),
        "{error}"
    );
}
