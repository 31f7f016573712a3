//! The declarations of `Range`, `FloorDiv`, `FloorMod`, `DivNoNan` and
//! `Conj`
//! (TensorFlow 2.21's `math_ops.cc` signatures), and `Range`'s shape
//! function.

use op_core::shape_inference::InferenceContext;
use op_core::{DType, Result, Tensor, register_op};

use super::math::RangeElement;

/// Range's shape function (TensorFlow's): `start`, `limit` and `delta` are
/// scalars; with all three values known, the output is a vector of the
/// range's length (their errors, as the kernel's), else of unknown length.
pub fn range_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    for (i, name) in ["start", "limit", "delta"].iter().enumerate() {
        let input = c.input(i)?;
        c.with_rank(input, 0)
            .map_err(|e| e.with_context(format!("for '{name}'")))?;
    }
    let values = (c.input_tensor(0), c.input_tensor(1), c.input_tensor(2));
    let (Some(start), Some(limit), Some(delta)) = values else {
        let unknown = c.unknown_dim();
        let output = c.vector(unknown);
        return c.set_output(0, output);
    };
    let size = range_len(start, limit, delta).map_err(|e| c.error(e.message()))?;
    let output = c.vector(size);
    c.set_output(0, output)
}

/// The length of the range of three scalars of one dtype.
fn range_len(start: &Tensor, limit: &Tensor, delta: &Tensor) -> Result<usize> {
    fn len<T: RangeElement>(start: &Tensor, limit: &Tensor, delta: &Tensor) -> Result<usize> {
        T::range_len(
            start.scalar_value::<T>()?,
            limit.scalar_value::<T>()?,
            delta.scalar_value::<T>()?,
        )
    }
    match start.dtype() {
        DType::F32 => len::<f32>(start, limit, delta),
        DType::F64 => len::<f64>(start, limit, delta),
        DType::I32 => len::<i32>(start, limit, delta),
        DType::I64 => len::<i64>(start, limit, delta),
        other => Err(op_core::Error::unimplemented(format!(
            "Range of {other} is not implemented"
        ))),
    }
}

/// Creates a sequence of numbers.
///
/// start: the first number, a scalar.
/// limit: the bound the sequence stops before, a scalar.
/// delta: the step, a non-zero scalar whose sign leads from `start`
///   toward `limit`.
/// output: `start + i * delta` for `i` from 0 while before `limit`.
#[register_op(
    attrs(
        "Tidx: {bfloat16, half, float, double, int8, int16, int32, int64, uint16, uint32, uint64} = DT_INT32"
    ),
    inputs("start: Tidx", "limit: Tidx", "delta: Tidx"),
    outputs("output: Tidx"),
    shape_fn = range_shape
)]
pub struct Range;

/// Returns x // y element-wise: the quotient rounded toward negative
/// infinity.
///
/// Supports broadcasting, NumPy style. An integer division by zero is an
/// error; the most negative integer divided by -1 wraps.
#[register_op(
    attrs(
        "T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, uint32, uint64, int64, complex64, complex128}"
    ),
    inputs("x: T", "y: T"),
    outputs("z: T"),
    shape = "broadcast"
)]
pub struct FloorDiv;

/// Returns the element-wise remainder of division, with the sign of `y`:
/// `x - floor(x / y) * y`.
///
/// Supports broadcasting, NumPy style. An integer division by zero is an
/// error.
#[register_op(
    attrs(
        "T: {int8, int16, int32, int64, uint8, uint16, uint32, uint64, bfloat16, half, float, double}"
    ),
    inputs("x: T", "y: T"),
    outputs("z: T"),
    shape = "broadcast"
)]
pub struct FloorMod;

/// Returns 0 if the denominator is zero, else x / y, element-wise.
///
/// Supports broadcasting, NumPy style.
#[register_op(
    attrs("T: {half, float, bfloat16, double, complex64, complex128}"),
    inputs("x: T", "y: T"),
    outputs("z: T"),
    shape = "broadcast"
)]
pub struct DivNoNan;
