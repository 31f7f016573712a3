//! The declarations of `Const`, `Placeholder` and `PlaceholderWithDefault`
//! (TensorFlow's `array_ops.cc` signatures) and their shape functions.

use op_core::shape_inference::{InferenceContext, ShapeHandle};
use op_core::{Error, Result, ShapeValue, TensorValue, register_op};

// ---- Shape functions (TensorFlow's, in `array_ops.cc`) ----

/// `shape`, a shape attr's value, as a handle: unknown rank, or one
/// dimension per entry (`-1` unknown). TensorFlow's
/// `MakeShapeFromPartialTensorShape`.
fn partial_shape_of(
    c: &mut InferenceContext<'_>,
    attr: &str,
    shape: &ShapeValue,
) -> Result<ShapeHandle> {
    shape.validate().map_err(|e| {
        Error::invalid_argument(format!(
            "op {}: attr '{attr}' is not a shape: {e}",
            c.op_def().name
        ))
    })?;
    if shape.unknown_rank {
        return Ok(c.unknown_shape());
    }
    let dims: Vec<Option<usize>> = shape
        .dims
        .iter()
        .map(|d| usize::try_from(d.size).ok())
        .collect();
    Ok(c.make_shape(
        dims.into_iter()
            .map(op_core::shape_inference::DimOrValue::Value),
    ))
}

/// `Const`: the shape of the `value` attr's tensor, which must be fully
/// known (a tensor with no `tensor_shape` is a scalar).
pub fn const_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let value: TensorValue = c.get_attr("value")?;
    let shape = value.shape.unwrap_or_default();
    if shape.unknown_rank || shape.dims.iter().any(|d| d.size < 0) {
        return Err(Error::invalid_argument(format!(
            "op {}: attr 'value' has shape {shape}, but a tensor's shape must be fully known",
            c.op_def().name
        )));
    }
    let out = partial_shape_of(c, "value", &shape)?;
    c.set_output(0, out)
}

/// `Placeholder`: the `shape` attr, partially known or of unknown rank.
pub fn placeholder_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let shape: ShapeValue = c.get_attr("shape")?;
    let out = partial_shape_of(c, "shape", &shape)?;
    c.set_output(0, out)
}

/// `PlaceholderWithDefault`: the default (input 0) must be compatible with
/// the `shape` attr, and the output has the attr's shape (which may be
/// less specific than the default's, so that a feed of another size fits).
pub fn placeholder_with_default_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let shape: ShapeValue = c.get_attr("shape")?;
    let out = partial_shape_of(c, "shape", &shape)?;
    let input = c.input(0)?;
    c.merge(input, out)?;
    c.set_output(0, out)
}

// ---- Ops (TensorFlow's `array_ops.cc` signatures) ----

/// Returns a constant tensor.
///
/// The kernel turns `value` into a tensor once, when it is created, and
/// every run outputs that tensor, shared (never copied).
///
/// value: the tensor, as TensorFlow's `TensorProto`.
/// dtype: its element type.
/// output: the tensor `value` holds.
#[register_op(
    attrs("value: tensor", "dtype: type"),
    outputs("output: dtype"),
    shape_fn = const_shape
)]
pub struct Const;

/// A placeholder for a value that will be fed when the graph runs.
///
/// Running it is an error: a graph that needs its output must feed it. Its
/// shape function gives the `shape` attr, so that nodes built on it are
/// checked against what will be fed.
///
/// dtype: the type of the fed value.
/// shape: the shape of the fed value, partially known or of unknown rank.
/// output: a placeholder tensor that must be replaced with a fed value.
#[register_op(
    attrs("dtype: type", "shape: shape = { unknown_rank: true }"),
    outputs("output: dtype"),
    shape_fn = placeholder_shape
)]
pub struct Placeholder;

/// A placeholder that passes `input` through when its output is not fed.
///
/// dtype: the type of the output.
/// shape: the (possibly partial) shape of the output.
/// input: the default value, used when the output is not fed.
/// output: a tensor of the `shape` attr's shape.
#[register_op(
    attrs("dtype: type", "shape: shape"),
    inputs("input: dtype"),
    outputs("output: dtype"),
    shape_fn = placeholder_with_default_shape
)]
pub struct PlaceholderWithDefault;
