//! The declaration of `MatMul` (TensorFlow's `math_ops.cc` signature) and
//! its shape function, TensorFlow's `MatMulShape`.

use op_core::shape_inference::InferenceContext;
use op_core::{DType, Result, register_op};

/// The output shape of `MatMul` (TensorFlow's `MatMulShape`): both inputs
/// are matrices; the output is `[rows of a, columns of b]`, after the
/// transposes. The inner dimensions, where known, must be equal: an error
/// names both inputs and their shapes.
pub fn matmul_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let a = c.input(0)?;
    let a = c.with_rank(a, 2)?;
    let b = c.input(1)?;
    let b = c.with_rank(b, 2)?;
    let transpose_a: bool = c.get_attr("transpose_a")?;
    let transpose_b: bool = c.get_attr("transpose_b")?;
    let (rows, inner_a) = if transpose_a { (1, 0) } else { (0, 1) };
    let (inner_b, cols) = if transpose_b { (1, 0) } else { (0, 1) };
    let (inner_a, inner_b) = (c.dim(a, inner_a)?, c.dim(b, inner_b)?);
    // The error names both dimensions' inputs and shapes.
    c.merge_dim(inner_a, inner_b)?;
    let (rows, cols) = (c.dim(a, rows)?, c.dim(b, cols)?);
    let out = c.matrix(rows, cols);
    c.set_output(0, out)
}

/// Multiplies the matrix `a` by the matrix `b`: `a * b`.
///
/// The inputs must be two-dimensional and, after any transposition, the
/// inner dimensions must agree: `a` (after `transpose_a`) is `[m, k]` and
/// `b` (after `transpose_b`) is `[k, n]`; the product is `[m, n]`. Integer
/// products wrap on overflow.
///
/// a: the left matrix.
/// b: the right matrix.
/// product: `[m, n]`.
#[register_op(inputs("a: T", "b: T"), outputs("product: T"), shape_fn = matmul_shape)]
pub struct MatMul {
    /// If true, `a` is transposed before multiplication.
    #[attr(default = false)]
    pub transpose_a: bool,
    /// If true, `b` is transposed before multiplication.
    #[attr(default = false)]
    pub transpose_b: bool,
    /// The element type.
    #[attr(
        name = "T",
        one_of(
            bfloat16, half, float, double, int32, int64, uint8, uint16, uint32, uint64, complex64,
            complex128
        )
    )]
    pub t: DType,
    /// Set by TensorFlow's gradient code when the op computes the gradient
    /// of `a`, for its optimizer; the kernels ignore it.
    #[attr(default = false)]
    pub grad_a: bool,
    /// Set by TensorFlow's gradient code when the op computes the gradient
    /// of `b`, for its optimizer; the kernels ignore it.
    #[attr(default = false)]
    pub grad_b: bool,
}
