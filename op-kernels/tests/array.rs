//! The array ops run: Shape, Size, Rank, Reshape, ExpandDims, Squeeze,
//! Fill, ZerosLike, OnesLike, Transpose, ConcatV2, Pack, BroadcastTo,
//! BroadcastGradientArgs and Tile, by name ([`OpCall`]) and through their
//! typed wrappers: results on hand-checked cases, index inputs of both
//! int32 and int64, zero-copy outputs, the errors of bad input (typed,
//! naming the op, node and argument, never a panic), and OpDefs identical
//! to TensorFlow's.

use op_core::{Code, DType, OpCall, Registry, Tensor};
use op_kernels::array::{
    BroadcastGradientArgs, BroadcastTo, ConcatV2, ExpandDims, Fill, OnesLike, Pack, Rank, Reshape,
    Shape, Size, Squeeze, Tile, Transpose, ZerosLike,
};

mod common;
use common::assert_contains;

const OPS: [&str; 15] = [
    "Reshape",
    "Shape",
    "Size",
    "Rank",
    "Fill",
    "ZerosLike",
    "OnesLike",
    "ExpandDims",
    "Squeeze",
    "Transpose",
    "ConcatV2",
    "Pack",
    "BroadcastTo",
    "BroadcastGradientArgs",
    "Tile",
];

/// The `op { ... }` block of `name` in TensorFlow's registry dump, every
/// field (Shape's full type too), without the enclosing `op {`.
fn tensorflow_op_def(name: &str) -> String {
    let text = include_str!("data/tensorflow_ops.pbtxt");
    let mut blocks = text.split("\nop {\n").skip(1);
    let block = blocks
        .find(|b| b.starts_with(&format!("  name: \"{name}\"\n")))
        .unwrap_or_else(|| panic!("{name} is not in tensorflow_ops.pbtxt"));
    let body = &block[..block.find("\n}").expect("a block ends with }") + 1];
    body.lines()
        .map(|line| format!("{}\n", &line[2..]))
        .collect()
}

#[test]
fn the_array_ops_have_tensorflows_op_defs() {
    op_kernels::link();
    for name in OPS {
        let mut def = Registry::global().op(name).unwrap().def().as_ref().clone();
        def.summary.clear();
        def.description.clear();
        for arg in def.inputs.iter_mut().chain(def.outputs.iter_mut()) {
            arg.description.clear();
        }
        for attr in &mut def.attrs {
            attr.description.clear();
        }
        assert_eq!(
            op_core::op_spec::pbtxt::op_def_to_string(&def),
            tensorflow_op_def(name),
            "OpDef of {name}"
        );
    }
}

/// A tensor of shape `dims` holding 0, 1, 2, ... as `f32`.
fn iota(dims: &[usize]) -> Tensor {
    let n: usize = dims.iter().product();
    Tensor::from_vec(dims, (0..n).map(|i| i as f32).collect()).unwrap()
}

/// An int32 vector.
fn i32s(values: &[i32]) -> Tensor {
    Tensor::from_vec([values.len()], values.to_vec()).unwrap()
}

/// An int64 vector.
fn i64s(values: &[i64]) -> Tensor {
    Tensor::from_vec([values.len()], values.to_vec()).unwrap()
}

fn f32s(t: &Tensor) -> Vec<f32> {
    t.as_slice::<f32>().unwrap().to_vec()
}

/// Runs `op` by name on `inputs` and returns its one output.
fn run(op: &str, inputs: Vec<Tensor>) -> op_core::Result<Tensor> {
    op_kernels::link();
    let mut call = OpCall::new(op);
    for input in inputs {
        call = call.input(input);
    }
    call.run().map(|mut outputs| outputs.remove(0))
}

/// Asserts that `result` is an `InvalidArgument` error naming op `op` and
/// containing each of `parts`.
#[track_caller]
fn assert_invalid(result: op_core::Result<Tensor>, op: &str, parts: &[&str]) {
    let error = result.expect_err("expected an error");
    assert_eq!(error.code(), Code::InvalidArgument, "{error}");
    assert_contains(&error, &[&format!("op {op} (node '{op}')")]);
    assert_contains(&error, parts);
}

/// Whether `a` and `b` hold the same buffer (not just equal values).
fn same_buffer(a: &Tensor, b: &Tensor) -> bool {
    std::ptr::eq(
        a.as_slice::<f32>().unwrap().as_ptr(),
        b.as_slice::<f32>().unwrap().as_ptr(),
    )
}

// ---- Shape, Size, Rank ----

#[test]
fn shape_size_and_rank_describe_any_tensor() -> op_core::Result<()> {
    op_kernels::link();
    let x = iota(&[2, 3, 4]);
    let shape = Shape::call(&x).run()?;
    assert_eq!(shape.dtype(), DType::I32);
    assert_eq!(shape.as_slice::<i32>()?, [2, 3, 4]);
    let shape = Shape::call(&x).out_type(DType::I64).run()?;
    assert_eq!(shape.as_slice::<i64>()?, [2, 3, 4]);
    assert_eq!(Size::call(&x).run()?.scalar_value::<i32>()?, 24);
    let size = Size::call(&x).out_type(DType::I64).run()?;
    assert_eq!(size.scalar_value::<i64>()?, 24);
    assert_eq!(Rank::call(&x).run()?.scalar_value::<i32>()?, 3);

    // Any dtype, any rank: they never read the elements.
    let words = Tensor::strings([2], ["a", "b"])?;
    assert_eq!(Shape::call(&words).run()?.as_slice::<i32>()?, [2]);
    let scalar = Tensor::scalar(true);
    assert_eq!(Shape::call(&scalar).run()?.dims(), [0]);
    assert_eq!(Size::call(&scalar).run()?.scalar_value::<i32>()?, 1);
    assert_eq!(Rank::call(&scalar).run()?.scalar_value::<i32>()?, 0);
    let empty = Tensor::zeros(DType::F64, [3, 0])?;
    assert_eq!(Size::call(&empty).run()?.scalar_value::<i32>()?, 0);
    Ok(())
}

#[test]
fn an_element_count_beyond_int32_is_an_error_for_int32_outputs() {
    op_kernels::link();
    // 2^31 bools would be 2 GiB; a zero-sized dim keeps the tensor empty
    // while its other dims stay large, and Shape must still fit them.
    let x = Tensor::zeros(DType::Bool, [0, 1 << 31]).unwrap();
    assert_invalid(
        Shape::call(&x).run(),
        "Shape",
        &["dimension size 2147483648 does not fit the output type int32"],
    );
    let shape = Shape::call(&x).out_type(DType::I64).run().unwrap();
    assert_eq!(shape.as_slice::<i64>().unwrap(), [0, 1 << 31]);
}

// ---- Reshape, ExpandDims, Squeeze ----

#[test]
fn reshape_gives_the_elements_a_new_shape() -> op_core::Result<()> {
    op_kernels::link();
    let x = iota(&[2, 3]);
    let y = Reshape::call(&x, i32s(&[3, 2])).run()?;
    assert_eq!((y.dims(), f32s(&y)), (&[3, 2][..], f32s(&x)));
    let y = Reshape::call(&x, i64s(&[-1])).run()?;
    assert_eq!(y.dims(), [6]);
    let y = Reshape::call(&x, i32s(&[1, -1, 2])).run()?;
    assert_eq!(y.dims(), [1, 3, 2]);
    let y = Reshape::call(Tensor::scalar(5i64), i32s(&[1, 1])).run()?;
    assert_eq!((y.dims(), y.as_slice::<i64>()?), (&[1, 1][..], &[5][..]));
    let y = Reshape::call(Tensor::from_vec([1], vec![5i64])?, i32s(&[])).run()?;
    assert_eq!(y.rank(), 0);
    // A -1 next to a 0 takes the count of the other dims, as TensorFlow's.
    let empty = Tensor::zeros(DType::F32, [0, 3])?;
    assert_eq!(Reshape::call(&empty, i32s(&[-1, 0])).run()?.dims(), [3, 0]);
    assert_eq!(Reshape::call(&empty, i32s(&[0, -1])).run()?.dims(), [0, 3]);
    let words = Tensor::strings([2, 2], ["a", "b", "c", "d"])?;
    let y = Reshape::call(&words, i32s(&[4])).run()?;
    assert_eq!(y.as_slice::<Vec<u8>>()?[3], b"d");
    Ok(())
}

#[test]
fn reshape_expand_dims_and_squeeze_share_the_inputs_buffer() -> op_core::Result<()> {
    op_kernels::link();
    let x = iota(&[10, 100]);
    let reshaped = Reshape::call(&x, i32s(&[100, -1])).run()?;
    assert_eq!(reshaped.dims(), [100, 10]);
    assert!(same_buffer(&x, &reshaped));
    let expanded = ExpandDims::call(&x, Tensor::scalar(1i32)).run()?;
    assert_eq!(expanded.dims(), [10, 1, 100]);
    assert!(same_buffer(&x, &expanded));
    let squeezed = Squeeze::call(&expanded).run()?;
    assert_eq!(squeezed.dims(), [10, 100]);
    assert!(same_buffer(&x, &squeezed));
    // The caller's tensor is untouched, and now shared.
    assert!(x.is_shared());
    assert_eq!(x.dims(), [10, 100]);
    Ok(())
}

#[test]
fn reshape_rejects_what_tensorflow_rejects() {
    let x = || iota(&[2, 3]);
    assert_invalid(
        run("Reshape", vec![x(), i32s(&[4])]),
        "Reshape",
        &["Input to reshape is a tensor with 6 values, but the requested shape has 4"],
    );
    assert_invalid(
        run("Reshape", vec![x(), i32s(&[4, -1])]),
        "Reshape",
        &["requested shape requires a multiple of 4"],
    );
    assert_invalid(
        run("Reshape", vec![x(), i32s(&[-1, -1])]),
        "Reshape",
        &["Only one input size may be -1, not both 0 and 1"],
    );
    assert_invalid(
        run("Reshape", vec![x(), i64s(&[-3, -2])]),
        "Reshape",
        &["Size 0 must be non-negative, not -3"],
    );
    assert_invalid(
        run("Reshape", vec![x(), i64s(&[i64::MAX, i64::MAX])]),
        "Reshape",
        &["has too many elements"],
    );
    assert_invalid(
        run(
            "Reshape",
            vec![x(), Tensor::from_vec([1, 2], vec![3, 2]).unwrap()],
        ),
        "Reshape",
        &["input 1 ('shape') must be a vector (rank 1), but has shape [1,2]"],
    );
}

#[test]
fn expand_dims_inserts_a_dimension_where_numpy_does() -> op_core::Result<()> {
    op_kernels::link();
    let x = iota(&[2, 3]);
    for (dim, dims) in [
        (0, [1, 2, 3]),
        (1, [2, 1, 3]),
        (2, [2, 3, 1]),
        (-1, [2, 3, 1]),
        (-2, [2, 1, 3]),
        (-3, [1, 2, 3]),
    ] {
        let y = ExpandDims::call(&x, Tensor::scalar(dim as i64)).run()?;
        assert_eq!(y.dims(), dims, "dim {dim}");
        assert_eq!(f32s(&y), f32s(&x));
    }
    // `dim` may be any tensor of one value.
    let y = ExpandDims::call(&x, i32s(&[0])).run()?;
    assert_eq!(y.dims(), [1, 2, 3]);
    let y = ExpandDims::call(Tensor::scalar(1.5f32), Tensor::scalar(0i32)).run()?;
    assert_eq!(y.dims(), [1]);
    Ok(())
}

#[test]
fn expand_dims_rejects_a_dim_out_of_range_or_of_several_values() {
    assert_invalid(
        run("ExpandDims", vec![iota(&[2, 3]), Tensor::scalar(3i32)]),
        "ExpandDims",
        &[
            "Tried to expand dim index 3 for tensor with 2 dimensions",
            "[-3, 2]",
        ],
    );
    assert_invalid(
        run("ExpandDims", vec![iota(&[2, 3]), Tensor::scalar(-4i64)]),
        "ExpandDims",
        &["Tried to expand dim index -4"],
    );
    assert_invalid(
        run("ExpandDims", vec![iota(&[2, 3]), i32s(&[0, 1])]),
        "ExpandDims",
        &["input 1 ('dim') must hold a single value, but has shape [2]"],
    );
}

#[test]
fn squeeze_removes_dimensions_of_size_one() -> op_core::Result<()> {
    op_kernels::link();
    let x = iota(&[1, 2, 1, 3, 1]);
    assert_eq!(Squeeze::call(&x).run()?.dims(), [2, 3]);
    let y = Squeeze::call(&x).squeeze_dims(vec![0, -1]).run()?;
    assert_eq!(y.dims(), [2, 1, 3]);
    assert_eq!(f32s(&y), f32s(&x));
    let y = Squeeze::call(&x).squeeze_dims(vec![2, 2]).run()?;
    assert_eq!(y.dims(), [1, 2, 3, 1]);
    assert_eq!(Squeeze::call(iota(&[1, 1])).run()?.rank(), 0);
    Ok(())
}

#[test]
fn squeeze_rejects_a_dimension_that_is_not_one_or_out_of_range() {
    op_kernels::link();
    let x = iota(&[1, 2]);
    assert_invalid(
        Squeeze::call(&x).squeeze_dims(vec![1]).run(),
        "Squeeze",
        &["Can not squeeze dim[1], expected a dimension of 1, got 2"],
    );
    assert_invalid(
        Squeeze::call(&x).squeeze_dims(vec![2]).run(),
        "Squeeze",
        &[
            "Tried to squeeze dim index 2 for tensor with 2 dimensions: squeeze_dims must be in [-2, 2)",
        ],
    );
    assert_invalid(
        Squeeze::call(&x).squeeze_dims(vec![i64::MIN]).run(),
        "Squeeze",
        &["Tried to squeeze dim index"],
    );
}

// ---- Fill, ZerosLike, OnesLike ----

#[test]
fn fill_repeats_a_value_to_a_shape() -> op_core::Result<()> {
    op_kernels::link();
    let y = Fill::call(i32s(&[2, 3]), Tensor::scalar(7.5f32)).run()?;
    assert_eq!((y.dims(), f32s(&y)), (&[2, 3][..], vec![7.5; 6]));
    let y = Fill::call(i64s(&[2]), Tensor::scalar(-3i64)).run()?;
    assert_eq!(y.as_slice::<i64>()?, [-3, -3]);
    let y = Fill::call(i32s(&[]), Tensor::scalar(true)).run()?;
    assert_eq!((y.rank(), y.scalar_value::<bool>()?), (0, true));
    let y = Fill::call(i32s(&[2, 0]), Tensor::scalar(1.0f64)).run()?;
    assert_eq!(y.dims(), [2, 0]);
    let y = Fill::call(i32s(&[3]), Tensor::string("ab")).run()?;
    assert_eq!(y.as_slice::<Vec<u8>>()?, [b"ab", b"ab", b"ab"]);
    // Large enough to be split over threads: every element written.
    let y = Fill::call(i32s(&[300, 1000]), Tensor::scalar(2i32)).run()?;
    assert!(y.as_slice::<i32>()?.iter().all(|&v| v == 2));
    Ok(())
}

#[test]
fn fill_rejects_negative_sizes_and_inputs_of_the_wrong_rank() {
    assert_invalid(
        run("Fill", vec![i32s(&[2, -1]), Tensor::scalar(1.0f32)]),
        "Fill",
        &["dims[1] = -1 must be >= 0"],
    );
    assert_invalid(
        run("Fill", vec![Tensor::scalar(2i32), Tensor::scalar(1.0f32)]),
        "Fill",
        &["input 0 ('dims') must be a vector (rank 1), but has shape []"],
    );
    assert_invalid(
        run(
            "Fill",
            vec![i32s(&[2]), Tensor::from_vec([1], vec![1.0f32]).unwrap()],
        ),
        "Fill",
        &["input 1 ('value') must be a scalar, but has shape [1]"],
    );
    // Sizes whose element count does not fit: an error, not a panic.
    assert_invalid(
        run("Fill", vec![i64s(&[1 << 40, 1 << 40]), Tensor::scalar(1u8)]),
        "Fill",
        &["has too many elements"],
    );
}

#[test]
fn zeros_like_and_ones_like_have_their_inputs_shape_and_dtype() -> op_core::Result<()> {
    op_kernels::link();
    let x = iota(&[2, 2]);
    let zeros = ZerosLike::call(&x).run()?;
    assert_eq!((zeros.dims(), f32s(&zeros)), (&[2, 2][..], vec![0.0; 4]));
    let ones = OnesLike::call(&x).run()?;
    assert_eq!(f32s(&ones), vec![1.0; 4]);
    assert_eq!(f32s(&x), [0.0, 1.0, 2.0, 3.0], "the input is unchanged");
    let flags = Tensor::from_vec([3], vec![true, false, true])?;
    assert_eq!(
        ZerosLike::call(&flags).run()?.as_slice::<bool>()?,
        [false; 3]
    );
    assert_eq!(OnesLike::call(&flags).run()?.as_slice::<bool>()?, [true; 3]);
    let z = Tensor::from_vec([1], vec![op_core::Complex64::new(2.0, 3.0)])?;
    let one = OnesLike::call(&z).run()?;
    assert_eq!(
        one.as_slice::<op_core::Complex64>()?,
        [op_core::Complex64::new(1.0, 0.0)]
    );
    let h = Tensor::from_vec([2], vec![op_core::f16::from_f32(3.0); 2])?;
    assert_eq!(
        OnesLike::call(&h).run()?.as_slice::<op_core::f16>()?,
        [op_core::f16::ONE; 2]
    );
    let words = Tensor::strings([2], ["a", "b"])?;
    assert_eq!(
        ZerosLike::call(&words).run()?.as_slice::<Vec<u8>>()?,
        [b"", b""]
    );
    Ok(())
}

#[test]
fn zeros_like_and_ones_like_write_in_a_buffer_handed_over() -> op_core::Result<()> {
    op_kernels::link();
    let x = iota(&[100, 10]);
    let buffer = x.as_slice::<f32>()?.as_ptr();
    let zeros = ZerosLike::call(x).run()?;
    assert!(std::ptr::eq(zeros.as_slice::<f32>()?.as_ptr(), buffer));
    let ones = OnesLike::call(zeros).run()?;
    assert!(std::ptr::eq(ones.as_slice::<f32>()?.as_ptr(), buffer));
    assert_eq!(f32s(&ones), vec![1.0; 1000]);
    Ok(())
}

// ---- Transpose ----

#[test]
fn transpose_permutes_dimensions() -> op_core::Result<()> {
    op_kernels::link();
    let x = iota(&[2, 3]);
    let y = Transpose::call(&x, i32s(&[1, 0])).run()?;
    assert_eq!(y.dims(), [3, 2]);
    assert_eq!(f32s(&y), [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    let x = iota(&[2, 3, 4]);
    let y = Transpose::call(&x, i64s(&[2, 0, 1])).run()?;
    assert_eq!(y.dims(), [4, 2, 3]);
    let view = x.view::<f32>()?;
    let y_view = y.view::<f32>()?;
    for (i, j, k) in [(0, 0, 0), (1, 2, 3), (0, 1, 2), (1, 0, 3)] {
        assert_eq!(y_view[[k, i, j]], view[[i, j, k]]);
    }
    let words = Tensor::strings([2, 2], ["a", "b", "c", "d"])?;
    let y = Transpose::call(&words, i32s(&[1, 0])).run()?;
    assert_eq!(y.as_slice::<Vec<u8>>()?, [b"a", b"c", b"b", b"d"]);
    Ok(())
}

#[test]
fn a_transpose_that_changes_nothing_shares_the_inputs_buffer() -> op_core::Result<()> {
    op_kernels::link();
    let x = iota(&[4, 5, 6]);
    let y = Transpose::call(&x, i32s(&[0, 1, 2])).run()?;
    assert!(same_buffer(&x, &y));
    let v = iota(&[50]);
    assert!(same_buffer(&v, &Transpose::call(&v, i32s(&[0])).run()?));
    let moved = Transpose::call(&x, i32s(&[1, 0, 2])).run()?;
    assert!(!same_buffer(&x, &moved));
    Ok(())
}

#[test]
fn transpose_rejects_a_perm_that_is_not_a_permutation() {
    let x = || iota(&[2, 3]);
    assert_invalid(
        run("Transpose", vec![x(), i32s(&[0, 0])]),
        "Transpose",
        &["perm [0,0] is not a permutation: 0 appears twice"],
    );
    assert_invalid(
        run("Transpose", vec![x(), i32s(&[0, 2])]),
        "Transpose",
        &["perm [0,2] is not a permutation: 2 is out of range [0 .. 2)"],
    );
    assert_invalid(
        run("Transpose", vec![x(), i64s(&[-1, 0])]),
        "Transpose",
        &["-1 is out of range"],
    );
    assert_invalid(
        run("Transpose", vec![x(), i32s(&[1, 0, 2])]),
        "Transpose",
        &["transpose expects a vector of size 2, but perm is a vector of size 3"],
    );
    assert_invalid(
        run("Transpose", vec![x(), Tensor::scalar(0i32)]),
        "Transpose",
        &["input 1 ('perm') must be a vector (rank 1), but has shape []"],
    );
}

// ---- ConcatV2, Pack ----

#[test]
fn concat_joins_tensors_along_an_axis() -> op_core::Result<()> {
    op_kernels::link();
    let a = iota(&[2, 2]);
    let b = Tensor::from_vec([2, 1], vec![10.0f32, 11.0])?;
    let y = ConcatV2::call([&a, &b], Tensor::scalar(1i32)).run()?;
    assert_eq!(y.dims(), [2, 3]);
    assert_eq!(f32s(&y), [0.0, 1.0, 10.0, 2.0, 3.0, 11.0]);
    let y = ConcatV2::call([&a, &b], Tensor::scalar(-1i64)).run()?;
    assert_eq!(f32s(&y), [0.0, 1.0, 10.0, 2.0, 3.0, 11.0]);
    let y = ConcatV2::call([&a, &a, &a], Tensor::scalar(0i32)).run()?;
    assert_eq!(y.dims(), [6, 2]);
    assert_eq!(f32s(&y)[4..8], [0.0, 1.0, 2.0, 3.0]);
    // Empty inputs take no room.
    let empty = Tensor::zeros(DType::F32, [2, 0])?;
    let y = ConcatV2::call([&empty, &b, &empty], Tensor::scalar(1i32)).run()?;
    assert_eq!((y.dims(), f32s(&y)), (&[2, 1][..], vec![10.0, 11.0]));
    let words = Tensor::strings([1], ["x"])?;
    let y = ConcatV2::call([&words, &words], Tensor::scalar(0i32)).run()?;
    assert_eq!(y.as_slice::<Vec<u8>>()?, [b"x", b"x"]);
    Ok(())
}

#[test]
fn concat_rejects_scalars_bad_axes_and_shapes_that_differ() {
    op_kernels::link();
    let concat = |values: Vec<Tensor>, axis: Tensor| {
        OpCall::new("ConcatV2")
            .input_list(values)
            .input(axis)
            .run()
            .map(|mut o| o.remove(0))
    };
    let s = || Tensor::scalar(1.0f32);
    assert_invalid(
        concat(vec![s(), s()], Tensor::scalar(0i32)),
        "ConcatV2",
        &["Can't concatenate scalars (use tf.stack instead)"],
    );
    assert_invalid(
        concat(vec![iota(&[2]), iota(&[2])], Tensor::scalar(1i32)),
        "ConcatV2",
        &["Expected concatenating dimensions in the range [-1, 1), but got axis = 1"],
    );
    assert_invalid(
        concat(vec![iota(&[2]), iota(&[2])], Tensor::scalar(i64::MIN)),
        "ConcatV2",
        &["but got axis = -9223372036854775808"],
    );
    assert_invalid(
        concat(vec![iota(&[2, 2]), iota(&[4])], Tensor::scalar(0i32)),
        "ConcatV2",
        &["Ranks of all input tensors should match: shape[0] = [2,2] vs. shape[1] = [4]"],
    );
    assert_invalid(
        concat(vec![iota(&[2, 2]), iota(&[2, 3])], Tensor::scalar(0i32)),
        "ConcatV2",
        &["Dimensions of inputs should match: shape[0] = [2,2] vs. shape[1] = [2,3]"],
    );
    assert_invalid(
        concat(vec![iota(&[2]), iota(&[2])], i32s(&[0])),
        "ConcatV2",
        &["input 2 ('axis') must be a scalar, but has shape [1]"],
    );
}

#[test]
fn pack_stacks_tensors_along_a_new_axis() -> op_core::Result<()> {
    op_kernels::link();
    let a = iota(&[2, 3]);
    let b = Tensor::from_vec([2, 3], (10..16).map(|v| v as f32).collect())?;
    let y = Pack::call([&a, &b]).run()?;
    assert_eq!(y.dims(), [2, 2, 3]);
    assert_eq!(f32s(&y)[6..], f32s(&b));
    let y = Pack::call([&a, &b]).axis(1).run()?;
    assert_eq!(y.dims(), [2, 2, 3]);
    assert_eq!(
        f32s(&y),
        [
            0.0, 1.0, 2.0, 10.0, 11.0, 12.0, 3.0, 4.0, 5.0, 13.0, 14.0, 15.0
        ]
    );
    let y = Pack::call([&a, &b]).axis(-1).run()?;
    assert_eq!(y.dims(), [2, 3, 2]);
    assert_eq!(f32s(&y)[..4], [0.0, 10.0, 1.0, 11.0]);
    let scalars = [
        Tensor::scalar(1i64),
        Tensor::scalar(2i64),
        Tensor::scalar(3i64),
    ];
    let y = Pack::call(&scalars).run()?;
    assert_eq!(y.as_slice::<i64>()?, [1, 2, 3]);
    // One tensor: the same buffer, one dimension more.
    let big = iota(&[40, 30]);
    let y = Pack::call([&big]).axis(1).run()?;
    assert_eq!(y.dims(), [40, 1, 30]);
    assert!(same_buffer(&big, &y));
    Ok(())
}

#[test]
fn pack_rejects_shapes_that_differ_and_bad_axes() {
    op_kernels::link();
    assert_invalid(
        Pack::call([iota(&[2]), iota(&[3])]).run(),
        "Pack",
        &["Shapes of all inputs must match: values[0].shape = [2] != values[1].shape = [3]"],
    );
    assert_invalid(
        Pack::call([iota(&[2]), iota(&[2])]).axis(2).run(),
        "Pack",
        &["axis = 2 not in [-2, 2)"],
    );
    assert_invalid(
        Pack::call([iota(&[2]), iota(&[2])]).axis(-3).run(),
        "Pack",
        &["axis = -3 not in [-2, 2)"],
    );
}

// ---- BroadcastTo, BroadcastGradientArgs ----

#[test]
fn broadcast_to_repeats_dimensions_of_size_one() -> op_core::Result<()> {
    op_kernels::link();
    let row = iota(&[3]);
    let y = BroadcastTo::call(&row, i32s(&[2, 3])).run()?;
    assert_eq!(f32s(&y), [0.0, 1.0, 2.0, 0.0, 1.0, 2.0]);
    let column = iota(&[2, 1]);
    let y = BroadcastTo::call(&column, i64s(&[2, 3])).run()?;
    assert_eq!(f32s(&y), [0.0, 0.0, 0.0, 1.0, 1.0, 1.0]);
    let y = BroadcastTo::call(Tensor::scalar(4i32), i32s(&[2, 2])).run()?;
    assert_eq!(y.as_slice::<i32>()?, [4; 4]);
    let y = BroadcastTo::call(iota(&[1, 2]), i32s(&[3, 0, 2])).run()?;
    assert_eq!(y.dims(), [3, 0, 2]);
    // To its own shape: the same buffer.
    let x = iota(&[20, 20]);
    assert!(same_buffer(
        &x,
        &BroadcastTo::call(&x, i32s(&[20, 20])).run()?
    ));
    Ok(())
}

#[test]
fn broadcast_to_rejects_shapes_it_cannot_reach() {
    assert_invalid(
        run("BroadcastTo", vec![iota(&[3]), i32s(&[2, 4])]),
        "BroadcastTo",
        &["Unable to broadcast tensor of shape [3] to tensor of shape [2,4]"],
    );
    assert_invalid(
        run("BroadcastTo", vec![iota(&[3]), i32s(&[1])]),
        "BroadcastTo",
        &["Unable to broadcast tensor of shape [3] to tensor of shape [1]"],
    );
    assert_invalid(
        run("BroadcastTo", vec![iota(&[1, 3]), i32s(&[3])]),
        "BroadcastTo",
        &["Rank of input (2) must be no greater than rank of output shape (1)"],
    );
    assert_invalid(
        run("BroadcastTo", vec![iota(&[3]), i32s(&[-2, 3])]),
        "BroadcastTo",
        &["shape[0] = -2 must be >= 0"],
    );
    assert_invalid(
        run("BroadcastTo", vec![iota(&[1]), i64s(&[1 << 62, 4])]),
        "BroadcastTo",
        &["has too many elements"],
    );
}

#[test]
fn broadcast_gradient_args_lists_the_axes_each_input_was_stretched_along() -> op_core::Result<()> {
    op_kernels::link();
    let args = |s0: &[i32], s1: &[i32]| -> op_core::Result<(Vec<i32>, Vec<i32>)> {
        let (r0, r1) = BroadcastGradientArgs::call(i32s(s0), i32s(s1)).run()?;
        Ok((
            r0.as_slice::<i32>()?.to_vec(),
            r1.as_slice::<i32>()?.to_vec(),
        ))
    };
    assert_eq!(args(&[2, 3, 5], &[1])?, (vec![], vec![0, 1, 2]));
    assert_eq!(args(&[2, 3, 5], &[5])?, (vec![], vec![0, 1]));
    assert_eq!(args(&[2, 3, 5], &[3, 5])?, (vec![], vec![0]));
    assert_eq!(args(&[2, 3, 5], &[3, 1])?, (vec![], vec![0, 2]));
    assert_eq!(args(&[2, 1, 5], &[3, 1])?, (vec![1], vec![0, 2]));
    assert_eq!(args(&[1, 1], &[1])?, (vec![0, 1], vec![0, 1]));
    assert_eq!(args(&[2, 1], &[2, 1])?, (vec![], vec![]), "equal shapes");
    assert_eq!(args(&[], &[4])?, (vec![0], vec![]));
    assert_eq!(args(&[0, 1], &[1])?, (vec![1], vec![0, 1]));
    let (r0, r1) = BroadcastGradientArgs::call(i64s(&[4, 1]), i64s(&[3])).run()?;
    assert_eq!(r0.dtype(), DType::I64);
    assert_eq!(
        (r0.as_slice::<i64>()?, r1.as_slice::<i64>()?),
        (&[1][..], &[0][..])
    );
    Ok(())
}

#[test]
fn broadcast_gradient_args_rejects_shapes_that_do_not_broadcast() {
    op_kernels::link();
    let error = BroadcastGradientArgs::call(i32s(&[2, 3]), i32s(&[4]))
        .run()
        .unwrap_err();
    assert_eq!(error.code(), Code::InvalidArgument);
    assert_contains(
        &error,
        &[
            "BroadcastGradientArgs",
            "Incompatible shapes: s0 = [2,3] vs. s1 = [4]",
        ],
    );
    let error = BroadcastGradientArgs::call(i32s(&[-1]), i32s(&[4]))
        .run()
        .unwrap_err();
    assert_contains(&error, &["s0[0] = -1 is not a dimension size (>= 0)"]);
    let error = BroadcastGradientArgs::call(i32s(&[2]), Tensor::scalar(2i32))
        .run()
        .unwrap_err();
    assert_contains(
        &error,
        &["input 1 ('s1') must be a vector (rank 1), but has shape []"],
    );
}

// ---- Tile ----

#[test]
fn tile_repeats_a_tensor_along_each_dimension() -> op_core::Result<()> {
    op_kernels::link();
    let x = iota(&[2, 2]);
    let y = Tile::call(&x, i32s(&[1, 2])).run()?;
    assert_eq!(y.dims(), [2, 4]);
    assert_eq!(f32s(&y), [0.0, 1.0, 0.0, 1.0, 2.0, 3.0, 2.0, 3.0]);
    let y = Tile::call(&x, i64s(&[2, 1])).run()?;
    assert_eq!(f32s(&y), [0.0, 1.0, 2.0, 3.0, 0.0, 1.0, 2.0, 3.0]);
    let y = Tile::call(&x, i32s(&[0, 3])).run()?;
    assert_eq!(y.dims(), [0, 6]);
    let y = Tile::call(Tensor::scalar(true), i32s(&[])).run()?;
    assert!(y.scalar_value::<bool>()?);
    // Multiples of one: the same buffer.
    let big = iota(&[30, 30]);
    assert!(same_buffer(&big, &Tile::call(&big, i32s(&[1, 1])).run()?));
    Ok(())
}

#[test]
fn tile_of_nothing_by_huge_multiples_is_empty() -> op_core::Result<()> {
    // Each tiled dimension fits, their product does not, yet the output
    // has no elements (opcheck found the copy's view overflowing).
    op_kernels::link();
    let empty = Tensor::zeros(DType::F32, [2, 1, 0])?;
    let y = Tile::call(&empty, i32s(&[i32::MAX, i32::MAX, i32::MAX])).run()?;
    let max = i32::MAX as usize;
    assert_eq!(y.dims(), [2 * max, max, 0]);
    Ok(())
}

#[test]
fn tile_rejects_negative_multiples_and_the_wrong_count() {
    assert_invalid(
        run("Tile", vec![iota(&[2, 2]), i32s(&[1, -1])]),
        "Tile",
        &["expected multiples[1] >= 0, but got -1"],
    );
    assert_invalid(
        run("Tile", vec![iota(&[2, 2]), i32s(&[2])]),
        "Tile",
        &["expected multiples to be a vector of length 2, but got length 1"],
    );
    assert_invalid(
        run(
            "Tile",
            vec![iota(&[2, 2]), Tensor::from_vec([1, 2], vec![1, 1]).unwrap()],
        ),
        "Tile",
        &["input 1 ('multiples') must be a vector (rank 1), but has shape [1,2]"],
    );
    assert_invalid(
        run("Tile", vec![iota(&[4, 1]), i64s(&[i64::MAX, 1])]),
        "Tile",
        &["tiling dimension 0 of size 4 by 9223372036854775807 overflows"],
    );
    assert_invalid(
        run("Tile", vec![iota(&[2, 2]), i64s(&[1 << 40, 1 << 40])]),
        "Tile",
        &["has too many elements"],
    );
}
