//! Index tensors: the shapes, axes, permutations and multiples that the
//! array ops take as int32 or int64 tensors, read as `i64` values in
//! kernels (from their inputs) and in shape functions (from constant inputs,
//! when known), and the int32/int64 outputs of Shape, Size and
//! BroadcastGradientArgs; with the shape-function helpers that go with
//! them (TensorFlow's `MakeShapeFromShapeTensor` and `ReplaceDim`).
//!
//! The index dtype (`Tshape`, `Tidx`, `Tperm`, ...) is read from the tensor
//! at run time rather than made a type parameter of each kernel: a kernel
//! then serves both index types, as TensorFlow's do, and no copy routine is
//! compiled twice for it.

use op_core::shape_inference::{DimOrValue, DimensionHandle, InferenceContext, ShapeHandle};
use op_core::{Code, DType, Element, Error, KernelContext, Result, Tensor};

/// The element types of index outputs: int32 and int64.
pub trait IndexElement: Element + Copy {
    /// `value` as this type, if it fits.
    fn from_usize(value: usize) -> Option<Self>;
}

impl IndexElement for i32 {
    fn from_usize(value: usize) -> Option<i32> {
        i32::try_from(value).ok()
    }
}

impl IndexElement for i64 {
    fn from_usize(value: usize) -> Option<i64> {
        i64::try_from(value).ok()
    }
}

/// The values of an int32 or int64 tensor, in row-major order.
pub fn index_values(tensor: &Tensor) -> Result<Vec<i64>> {
    match tensor.dtype() {
        DType::I32 => Ok(tensor
            .as_slice::<i32>()?
            .iter()
            .map(|&v| i64::from(v))
            .collect()),
        DType::I64 => Ok(tensor.as_slice::<i64>()?.to_vec()),
        other => Err(Error::invalid_argument(format!(
            "an index tensor must be int32 or int64, not {other}"
        ))),
    }
}

/// `input 1 ('shape')`: input `index` by the name of its arg.
fn describe_input(index: usize, name: &str) -> String {
    format!("input {index} ('{name}')")
}

/// The values of kernel input `index` (arg `name`), which must be an int32
/// or int64 vector; otherwise an `InvalidArgument` error naming the op, the
/// node, the input and its shape.
pub(super) fn input_vector(ctx: &KernelContext<'_>, index: usize, name: &str) -> Result<Vec<i64>> {
    input_of_rank(ctx, index, name, 1, "a vector (rank 1)")
}

/// The value of kernel input `index` (arg `name`), which must be an int32
/// or int64 scalar.
pub(super) fn input_scalar(ctx: &KernelContext<'_>, index: usize, name: &str) -> Result<i64> {
    Ok(input_of_rank(ctx, index, name, 0, "a scalar")?[0])
}

/// The values of kernel input `index` (arg `name`), an int32 or int64
/// tensor that must have rank `rank` (`what` says so in the error).
fn input_of_rank(
    ctx: &KernelContext<'_>,
    index: usize,
    name: &str,
    rank: usize,
    what: &str,
) -> Result<Vec<i64>> {
    let tensor = ctx.input(index)?;
    if tensor.rank() != rank {
        return Err(ctx.error(
            Code::InvalidArgument,
            format_args!(
                "{} must be {what}, but has shape {}",
                describe_input(index, name),
                tensor.shape()
            ),
        ));
    }
    index_values(tensor).map_err(|e| in_input(ctx, index, name, e))
}

/// `e`, about kernel input `index`, as an error of the op and node.
fn in_input(ctx: &KernelContext<'_>, index: usize, name: &str, e: Error) -> Error {
    ctx.error(
        e.code(),
        format_args!("{}: {}", describe_input(index, name), e.message()),
    )
}

/// `e` (from this family's plain functions) as an error of the kernel's op
/// and node.
pub(super) fn in_kernel(ctx: &KernelContext<'_>, e: Error) -> Error {
    ctx.error(e.code(), e.message())
}

/// `values` as a tensor of the index type `I`, or an `InvalidArgument`
/// error naming the op, the node and the value that does not fit.
pub(super) fn index_output<I: IndexElement>(
    ctx: &KernelContext<'_>,
    what: &str,
    values: &[usize],
) -> Result<Tensor> {
    let converted = values
        .iter()
        .map(|&v| {
            I::from_usize(v).ok_or_else(|| {
                ctx.error(
                    Code::InvalidArgument,
                    format_args!("{what} {v} does not fit the output type {}", I::DTYPE),
                )
            })
        })
        .collect::<Result<Vec<I>>>()?;
    Tensor::from_vec([converted.len()], converted)
}

/// The value of constant input `index` as `i64`s, when the shape function
/// knows it; `None` otherwise.
pub(super) fn constant_values(c: &InferenceContext<'_>, index: usize) -> Result<Option<Vec<i64>>> {
    let Some(tensor) = c.input_tensor(index) else {
        return Ok(None);
    };
    index_values(tensor)
        .map(Some)
        .map_err(|e| c.error(format!("constant input {index}: {}", e.message())))
}

/// The shape that int32/int64 vector input `index` holds (TensorFlow's
/// `MakeShapeFromShapeTensor`): the input must be a vector; when its value
/// is known, each `-1` is an unknown dimension and any other negative value
/// an error; when only its length is known, that many unknown dimensions;
/// otherwise a shape of unknown rank.
pub(super) fn shape_from_shape_tensor(
    c: &mut InferenceContext<'_>,
    index: usize,
) -> Result<ShapeHandle> {
    let input = c.input(index)?;
    let vector = c.with_rank(input, 1)?;
    let length = c.dim(vector, 0)?;
    match constant_values(c, index)? {
        Some(values) => {
            let rank = c.input_tensor(index).map_or(1, Tensor::rank);
            if rank != 1 {
                return Err(c.error(format!(
                    "input {index} must be a vector to be used as a shape, but its value has rank {rank}"
                )));
            }
            c.with_value(length, values.len())?;
            let dims = values
                .iter()
                .map(|&v| match v {
                    -1 => Ok(None),
                    v => usize::try_from(v).map(Some).map_err(|_| {
                        c.error(format!(
                            "invalid value {v} in input {index}, which holds a shape: sizes are >= 0, or -1 for unknown"
                        ))
                    }),
                })
                .collect::<Result<Vec<Option<usize>>>>()?;
            Ok(c.make_shape(dims.into_iter().map(DimOrValue::Value)))
        }
        None => match c.value(length) {
            Some(n) => Ok(c.unknown_shape_of_rank(n)),
            None => Ok(c.unknown_shape()),
        },
    }
}

/// `s` with dimension `k` replaced by `d` (TensorFlow's `ReplaceDim`); `s`
/// must have a known rank greater than `k`.
pub(super) fn replace_dim(
    c: &mut InferenceContext<'_>,
    s: ShapeHandle,
    k: usize,
    d: DimensionHandle,
) -> Result<ShapeHandle> {
    let rank = c.rank(s).unwrap_or(0);
    let dims = (0..rank)
        .map(|i| if i == k { Ok(d) } else { c.dim(s, i as i64) })
        .collect::<Result<Vec<DimensionHandle>>>()?;
    Ok(c.make_shape(dims))
}

/// The dims of `s`, whose rank is `rank`.
pub(super) fn dims_of(
    c: &mut InferenceContext<'_>,
    s: ShapeHandle,
    rank: usize,
) -> Result<Vec<DimensionHandle>> {
    (0..rank).map(|i| c.dim(s, i as i64)).collect()
}
