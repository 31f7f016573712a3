//! The declarations of the math ops, with TensorFlow's signatures
//! (`tensorflow/core/ops/math_ops.cc`, `nn_ops.cc` for `Relu` and
//! `ReluGrad`), and the shape functions the library does not have.

use op_core::shape_inference::InferenceContext;
use op_core::shape_inference::library::broadcast_shapes;
use op_core::{DType, Result, Tensor, register_op};

use super::range::RangeElement;

// ---- Shape functions (TensorFlow's, from math_ops.cc) ----

/// `Equal`: the inputs broadcast together; with `incompatible_shape_error`
/// false, shapes that cannot broadcast give a scalar and shapes that may
/// not an unknown rank, as the kernel then outputs a scalar (see
/// [`broadcast_shapes`]).
pub fn equal_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let incompatible_shape_error: bool = c.get_attr("incompatible_shape_error")?;
    let (x, y) = (c.input(0)?, c.input(1)?);
    let out = broadcast_shapes(c, x, y, incompatible_shape_error)?;
    c.set_output(0, out)
}

/// `Select`: `t` and `e` must have one shape, the output's; `condition`
/// must be a scalar, have that shape too, or be a vector as long as its
/// first dimension.
pub fn select_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let (t, e) = (c.input(1)?, c.input(2)?);
    let data = c.merge(t, e)?;
    let cond = c.input(0)?;
    let (Some(cond_rank), Some(data_rank)) = (c.rank(cond), c.rank(data)) else {
        return c.set_output(0, data);
    };
    if cond_rank == 0 {
        return c.set_output(0, data);
    }
    if cond_rank != 1 || data_rank == 0 {
        // The condition must have the data's shape (a vector condition
        // with scalar data fails here, as in TensorFlow).
        let data = c.merge(data, cond)?;
        return c.set_output(0, data);
    }
    // A vector condition: one element per slice along dimension 0.
    let first = c.dim(data, 0)?;
    let batch = c.vector(first);
    c.merge(cond, batch)?;
    c.set_output(0, data)
}

/// `SelectV2`: `condition`, `t` and `e` broadcast together (`t` with `e`,
/// then the condition with the result).
pub fn select_v2_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let (cond, t, e) = (c.input(0)?, c.input(1)?, c.input(2)?);
    let values = broadcast_shapes(c, t, e, true)?;
    let out = broadcast_shapes(c, cond, values, true)?;
    c.set_output(0, out)
}

/// `AddN`: every input has the output's shape; the inputs are merged from
/// the last to the first, as TensorFlow does, and an error says which
/// merge failed.
pub fn add_n_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let last = c.num_inputs().saturating_sub(1);
    let mut merged = c.input(last)?;
    for i in (0..last).rev() {
        let input = c.input(i)?;
        merged = c
            .merge(input, merged)
            .map_err(|e| e.with_context(format!("From merging shape {i} with other shapes.")))?;
    }
    c.set_output(0, merged)
}

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

// ---- Unary ops ----

/// Computes numerical negative value element-wise.
///
/// I.e., \\(y = -x\\). Integers wrap: the most negative value is its own
/// negative.
///
/// x: The input.
/// y: The result, of `x`'s shape.
#[register_op(
    attrs("T: {bfloat16, half, float, double, int8, int16, int32, int64, complex64, complex128}"),
    inputs("x: T"),
    outputs("y: T"),
    shape = "unchanged"
)]
pub struct Neg;

/// Computes square of x element-wise.
///
/// I.e., \\(y = x * x = x^2\\). Integers wrap on overflow.
///
/// x: The input.
/// y: The result, of `x`'s shape.
#[register_op(
    attrs(
        "T: {bfloat16, half, float, double, int8, int16, int32, int64, uint8, uint16, uint32, uint64, complex64, complex128}"
    ),
    inputs("x: T"),
    outputs("y: T"),
    shape = "unchanged"
)]
pub struct Square;

/// Computes square root of x element-wise.
///
/// I.e., \\(y = \sqrt{x} = x^{1/2}\\).
///
/// x: The input.
/// y: The result, of `x`'s shape.
#[register_op(
    attrs("T: {bfloat16, half, float, double, complex64, complex128}"),
    inputs("x: T"),
    outputs("y: T"),
    shape = "unchanged"
)]
pub struct Sqrt;

/// Computes reciprocal of square root of x element-wise.
///
/// I.e., \\(y = 1 / \sqrt{x}\\).
///
/// x: The input.
/// y: The result, of `x`'s shape.
#[register_op(
    attrs("T: {bfloat16, half, float, double, complex64, complex128}"),
    inputs("x: T"),
    outputs("y: T"),
    shape = "unchanged"
)]
pub struct Rsqrt;

/// Computes exponential of x element-wise.
///
/// \\(y = e^x\\).
///
/// x: The input.
/// y: The result, of `x`'s shape.
#[register_op(
    attrs("T: {bfloat16, half, float, double, complex64, complex128}"),
    inputs("x: T"),
    outputs("y: T"),
    shape = "unchanged"
)]
pub struct Exp;

/// Computes natural logarithm of x element-wise.
///
/// I.e., \\(y = \log_e x\\).
///
/// x: The input.
/// y: The result, of `x`'s shape.
#[register_op(
    attrs("T: {bfloat16, half, float, double, complex64, complex128}"),
    inputs("x: T"),
    outputs("y: T"),
    shape = "unchanged"
)]
pub struct Log;

/// Computes sine of x element-wise.
///
/// x: The input.
/// y: The result, of `x`'s shape.
#[register_op(
    attrs("T: {bfloat16, half, float, double, complex64, complex128}"),
    inputs("x: T"),
    outputs("y: T"),
    shape = "unchanged"
)]
pub struct Sin;

/// Computes cos of x element-wise.
///
/// x: The input.
/// y: The result, of `x`'s shape.
#[register_op(
    attrs("T: {bfloat16, half, float, double, complex64, complex128}"),
    inputs("x: T"),
    outputs("y: T"),
    shape = "unchanged"
)]
pub struct Cos;

/// Computes hyperbolic tangent of `x` element-wise.
///
/// x: The input.
/// y: The result, of `x`'s shape.
#[register_op(
    attrs("T: {bfloat16, half, float, double, complex64, complex128}"),
    inputs("x: T"),
    outputs("y: T"),
    shape = "unchanged"
)]
pub struct Tanh;

/// Computes sigmoid of `x` element-wise.
///
/// Specifically, `y = 1 / (1 + exp(-x))`.
///
/// x: The input.
/// y: The result, of `x`'s shape.
#[register_op(
    attrs("T: {bfloat16, half, float, double, complex64, complex128}"),
    inputs("x: T"),
    outputs("y: T"),
    shape = "unchanged"
)]
pub struct Sigmoid;

/// Computes rectified linear: `max(features, 0)`.
///
/// NaN stays NaN. (TensorFlow's op allows `qint8`, for which it has no CPU
/// kernel; neither do we.)
///
/// features: the values.
/// activations: `max(features, 0)`, elementwise.
#[register_op(
    attrs(
        "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64, qint8}"
    ),
    inputs("features: T"),
    outputs("activations: T"),
    shape = "unchanged"
)]
pub struct Relu;

/// Computes the reciprocal of x element-wise.
///
/// I.e., \\(y = 1 / x\\). (TensorFlow's op allows integers, for which it
/// has no CPU kernel; neither do we.)
///
/// x: The input.
/// y: The result, of `x`'s shape.
#[register_op(
    attrs("T: {bfloat16, half, float, double, int8, int16, int32, int64, complex64, complex128}"),
    inputs("x: T"),
    outputs("y: T"),
    shape = "unchanged"
)]
pub struct Reciprocal;

/// Returns the complex conjugate of a complex number.
///
/// Given a tensor `input` of complex numbers, this operation returns a
/// tensor of complex numbers that are the complex conjugate of each element
/// in `input`, of the form \\(a - bj\\) for an element \\(a + bj\\).
/// (TensorFlow's op allows `variant`, whose tensors we cannot make.)
///
/// input: The values.
/// output: Their conjugates, of `input`'s shape (real values unchanged).
#[register_op(
    attrs("T: {complex64, complex128, variant} = DT_COMPLEX64"),
    inputs("input: T"),
    outputs("output: T"),
    shape = "unchanged"
)]
pub struct Conj;

// ---- The gradients of unary ops ----

/// Declares an op computing the gradient of a unary op from its output `y`
/// and the gradient `dy` flowing into it (TensorFlow's
/// `UNARY_GRADIENT_COMPLEX`): all five share the signature.
macro_rules! unary_gradient_op {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        /// dy: the gradient flowing into `y`, with as many elements.
        /// z: the gradient of `x`, of `y`'s shape.
        #[register_op(
            attrs("T: {bfloat16, half, float, double, complex64, complex128}"),
            inputs("y: T", "dy: T"),
            outputs("z: T"),
            shape = "unchanged"
        )]
        pub struct $name;
    };
}

unary_gradient_op! {
    /// Computes the gradient for the sqrt of `x` wrt its input.
    ///
    /// Specifically, `grad = dy * 0.5 / y`, where `y = sqrt(x)`, and `dy` is
    /// the corresponding input gradient (0 where `dy` is 0).
    ///
    /// y: `sqrt(x)`.
    SqrtGrad
}

unary_gradient_op! {
    /// Computes the gradient for the rsqrt of `x` wrt its input.
    ///
    /// Specifically, `grad = dy * -0.5 * y^3`, where `y = rsqrt(x)`, and `dy`
    /// is the corresponding input gradient (0 where `dy` is 0).
    ///
    /// y: `rsqrt(x)`.
    RsqrtGrad
}

unary_gradient_op! {
    /// Computes the gradient for the tanh of `x` wrt its input.
    ///
    /// Specifically, `grad = dy * (1 - y*y)`, where `y = tanh(x)`, and `dy` is
    /// the corresponding input gradient.
    ///
    /// y: `tanh(x)`.
    TanhGrad
}

unary_gradient_op! {
    /// Computes the gradient of the sigmoid of `x` wrt its input.
    ///
    /// Specifically, `grad = dy * y * (1 - y)`, where `y = sigmoid(x)`, and
    /// `dy` is the corresponding input gradient.
    ///
    /// y: `sigmoid(x)`.
    SigmoidGrad
}

unary_gradient_op! {
    /// Computes the gradient for the inverse of `x` wrt its input.
    ///
    /// Specifically, `grad = -dy * y*y`, where `y = 1/x`, and `dy` is the
    /// corresponding input gradient (0 where `dy` is 0).
    ///
    /// y: `1 / x`.
    ReciprocalGrad
}

/// Computes rectified linear gradients for a Relu operation.
///
/// gradients: The backpropagated gradients to the corresponding Relu
///   operation.
/// features: The features passed as input to the corresponding Relu
///   operation, OR the outputs of that operation (both work equivalently);
///   of `gradients`' shape.
/// backprops: `gradients * (features > 0)`.
#[register_op(
    attrs(
        "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64}"
    ),
    inputs("gradients: T", "features: T"),
    outputs("backprops: T"),
    shape = "merge_inputs"
)]
pub struct ReluGrad;

// ---- Binary ops (broadcasting) ----

/// Returns x + y element-wise.
///
/// Supports broadcasting, NumPy style. Integers wrap on overflow.
///
/// x: The left operand.
/// y: The right operand; its shape broadcasts with `x`'s.
/// z: The result, of the broadcast shape of `x` and `y`.
#[register_op(
    attrs(
        "T: {bfloat16, half, float, double, uint8, uint16, uint32, uint64, int8, int16, int32, int64, complex64, complex128}"
    ),
    inputs("x: T", "y: T"),
    outputs("z: T"),
    commutative,
    aggregate,
    shape = "broadcast"
)]
pub struct AddV2;

/// Returns x - y element-wise.
///
/// Supports broadcasting, NumPy style. Integers wrap on overflow.
///
/// x: The left operand.
/// y: The right operand; its shape broadcasts with `x`'s.
/// z: The result, of the broadcast shape of `x` and `y`.
#[register_op(
    attrs(
        "T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, int64, complex64, complex128, uint32, uint64}"
    ),
    inputs("x: T", "y: T"),
    outputs("z: T"),
    shape = "broadcast"
)]
pub struct Sub;

/// Returns x * y element-wise.
///
/// Supports broadcasting, NumPy style. Integers wrap on overflow.
///
/// x: The left operand.
/// y: The right operand; its shape broadcasts with `x`'s.
/// z: The result, of the broadcast shape of `x` and `y`.
#[register_op(
    attrs(
        "T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, uint32, uint64, int64, complex64, complex128}"
    ),
    inputs("x: T", "y: T"),
    outputs("z: T"),
    commutative,
    shape = "broadcast"
)]
pub struct Mul;

/// Returns x / y element-wise for real types.
///
/// Supports broadcasting, NumPy style. TensorFlow registers CPU kernels
/// for floats and complex numbers only, and so do we: an integer `RealDiv`
/// finds no kernel.
///
/// x: The left operand.
/// y: The right operand; its shape broadcasts with `x`'s.
/// z: The result, of the broadcast shape of `x` and `y`.
#[register_op(
    attrs(
        "T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, uint32, uint64, int64, complex64, complex128}"
    ),
    inputs("x: T", "y: T"),
    outputs("z: T"),
    shape = "broadcast"
)]
pub struct RealDiv;

/// Returns the max of x and y (i.e. x > y ? x : y) element-wise.
///
/// Supports broadcasting, NumPy style. NaN in either gives NaN.
///
/// x: The left operand.
/// y: The right operand; its shape broadcasts with `x`'s.
/// z: The result, of the broadcast shape of `x` and `y`.
#[register_op(
    attrs(
        "T: {bfloat16, half, float, double, int8, uint8, int16, uint16, int32, uint32, int64, uint64}"
    ),
    inputs("x: T", "y: T"),
    outputs("z: T"),
    shape = "broadcast"
)]
pub struct Maximum;

/// Returns the min of x and y (i.e. x < y ? x : y) element-wise.
///
/// Supports broadcasting, NumPy style. NaN in either gives NaN.
///
/// x: The left operand.
/// y: The right operand; its shape broadcasts with `x`'s.
/// z: The result, of the broadcast shape of `x` and `y`.
#[register_op(
    attrs(
        "T: {bfloat16, half, float, double, int8, uint8, int16, uint16, int32, uint32, int64, uint64}"
    ),
    inputs("x: T", "y: T"),
    outputs("z: T"),
    shape = "broadcast"
)]
pub struct Minimum;

/// Computes the power of one value to another.
///
/// Given a tensor `x` and a tensor `y`, this operation computes \\(x^y\\)
/// for corresponding elements in `x` and `y`, broadcasting NumPy style.
/// An integer to a negative integer power is an `InvalidArgument` error;
/// integer powers wrap on overflow.
///
/// x: The left operand.
/// y: The right operand; its shape broadcasts with `x`'s.
/// z: The result, of the broadcast shape of `x` and `y`.
#[register_op(
    attrs("T: {bfloat16, float, half, double, int8, int16, int32, int64, complex64, complex128}"),
    inputs("x: T", "y: T"),
    outputs("z: T"),
    shape = "broadcast"
)]
pub struct Pow;

/// Returns conj(x - y)(x - y) element-wise.
///
/// Supports broadcasting, NumPy style.
///
/// x: The left operand.
/// y: The right operand; its shape broadcasts with `x`'s.
/// z: The result, of the broadcast shape of `x` and `y`.
#[register_op(
    attrs("T: {bfloat16, half, float, double, int32, int64, complex64, complex128}"),
    inputs("x: T", "y: T"),
    outputs("z: T"),
    commutative,
    shape = "broadcast"
)]
pub struct SquaredDifference;

/// Returns x // y element-wise: the quotient rounded toward negative
/// infinity.
///
/// Supports broadcasting, NumPy style. An integer division by zero is an
/// error; the most negative integer divided by -1 wraps.
///
/// x: The left operand.
/// y: The right operand; its shape broadcasts with `x`'s.
/// z: The result, of the broadcast shape of `x` and `y`.
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
///
/// x: The left operand.
/// y: The right operand; its shape broadcasts with `x`'s.
/// z: The result, of the broadcast shape of `x` and `y`.
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
///
/// x: The left operand.
/// y: The right operand; its shape broadcasts with `x`'s.
/// z: The result, of the broadcast shape of `x` and `y`.
#[register_op(
    attrs("T: {half, float, bfloat16, double, complex64, complex128}"),
    inputs("x: T", "y: T"),
    outputs("z: T"),
    shape = "broadcast"
)]
pub struct DivNoNan;

// ---- Comparisons (broadcasting, bool output) ----

/// Declares an ordering comparison: all four share the signature.
macro_rules! comparison_op {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        ///
        /// Supports broadcasting, NumPy style. A comparison with NaN is false.
        ///
        /// x: The left operand.
        /// y: The right operand; its shape broadcasts with `x`'s.
        /// z: Whether the comparison holds, element by element, of the broadcast shape.
        #[register_op(
            attrs(
                "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64}"
            ),
            inputs("x: T", "y: T"),
            outputs("z: bool"),
            shape = "broadcast"
        )]
        pub struct $name;
    };
}

comparison_op! {
    /// Returns the truth value of (x > y) element-wise.
    Greater
}

comparison_op! {
    /// Returns the truth value of (x < y) element-wise.
    Less
}

comparison_op! {
    /// Returns the truth value of (x >= y) element-wise.
    GreaterEqual
}

comparison_op! {
    /// Returns the truth value of (x <= y) element-wise.
    LessEqual
}

/// Returns the truth value of (x == y) element-wise.
///
/// Supports broadcasting, NumPy style. NaN equals nothing, itself
/// included.
///
/// x: The left operand.
/// y: The right operand; its shape broadcasts with `x`'s.
/// z: Whether the comparison holds, element by element, of the broadcast shape.
#[register_op(
    attrs("T: type"),
    inputs("x: T", "y: T"),
    outputs("z: bool"),
    commutative,
    shape_fn = equal_shape
)]
pub struct Equal {
    /// Whether shapes that do not broadcast are an error (the default);
    /// if false, they give the scalar `false`.
    #[attr(default = true)]
    pub incompatible_shape_error: bool,
}

// ---- Selection ----

/// Selects elements from `t` or `e`, depending on `condition`.
///
/// `t` and `e` must have one shape, the output's. `condition` is a scalar
/// (choosing the whole of `t` or `e`), a tensor of that shape (choosing
/// element by element), or a vector as long as their first dimension
/// (choosing rows). `SelectV2` broadcasts instead.
///
/// condition: where true, take `t`, else `e`.
/// t: the values where `condition` is true.
/// e: the values where `condition` is false, of `t`'s shape.
/// output: the chosen values, of `t`'s shape.
#[register_op(
    attrs("T: type"),
    inputs("condition: bool", "t: T", "e: T"),
    outputs("output: T"),
    shape_fn = select_shape
)]
pub struct Select;

/// Selects elements from `t` or `e`, depending on `condition`, all three
/// broadcast together NumPy style.
///
/// condition: where true, take `t`, else `e`.
/// t: the values where `condition` is true.
/// e: the values where `condition` is false.
/// output: the chosen values, of the three shapes broadcast together.
#[register_op(
    attrs("T: type"),
    inputs("condition: bool", "t: T", "e: T"),
    outputs("output: T"),
    shape_fn = select_v2_shape
)]
pub struct SelectV2;

// ---- Sum of a list ----

/// Add all input tensors element wise.
///
/// Integers wrap on overflow.
///
/// inputs: Must all be the same size and shape.
/// sum: their sum, of that shape.
#[register_op(
    attrs("N: int >= 1", "T: {numbertype, variant}"),
    inputs("inputs: N * T"),
    outputs("sum: T"),
    commutative,
    aggregate,
    shape_fn = add_n_shape
)]
pub struct AddN;

// ---- Conversion ----

/// Cast x of type SrcT to y of DstT.
///
/// See [`math`](super) for the conversion of each pair of types. A cast to
/// the same type returns `x` itself; a pair not supported (strings,
/// resources, quantized types, to or from another type) is an
/// `Unimplemented` error, `Cast string to float is not supported`.
///
/// x: the values to convert.
/// y: `x` converted to `DstT`.
/// SrcT: the dtype of `x`.
/// DstT: the dtype to convert to.
#[register_op(
    attrs("SrcT: type", "DstT: type"),
    inputs("x: SrcT"),
    outputs("y: DstT"),
    shape = "unchanged"
)]
pub struct Cast {
    /// Whether to clear the low mantissa bits that `DstT` cannot hold
    /// before converting (round toward zero rather than to nearest), for
    /// `double` and `complex128` to `float`, `half` and `complex64`.
    #[attr(name = "Truncate", default = false)]
    pub truncate: bool,
}

// ---- Sequences ----

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
