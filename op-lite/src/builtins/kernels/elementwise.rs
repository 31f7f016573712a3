//! The elementwise kernels: one unary kernel (SQUARE ... HARD_SWISH) and
//! one binary kernel (ADD ... SQUARED_DIFFERENCE, broadcasting, with fused
//! activations), over [`math::elementwise`](crate::builtins::math::elementwise).

use op_core::{DType, Result};

use super::{check_counts, input_dtype_in, same_dtype, set_output, with_number};
use crate::builtins::math::elementwise::{
    BinaryOp, BinaryParams, UnaryOp, binary, binary_shape, unary, unary_shape,
};
use crate::kernel::{InitContext, InvokeContext, LiteNode, PrepareContext};
use crate::model::{Activation, BuiltinOperator as Op, BuiltinOptions};

const FLOAT: &[DType] = &[DType::F32];
const FLOAT_INT: &[DType] = &[DType::F32, DType::I32];
const NUMBERS: &[DType] = &[DType::F32, DType::I32, DType::I64];

/// A unary elementwise op: `output = op(input)`, same shape and dtype.
struct Unary {
    op: UnaryOp,
    /// The dtypes TensorFlow Lite's kernel takes for the op.
    dtypes: &'static [DType],
    dtype: DType,
}

/// `init` of the sixteen unary builtins: the op from the code, and
/// LEAKY_RELU's `alpha` and GELU's `approximate` from the options.
pub(crate) fn init_unary(ctx: &InitContext<'_>, code: Op) -> Result<Box<dyn LiteNode>> {
    let options = ctx.builtin_options();
    let (op, dtypes) = match code {
        Op::SQUARE => (UnaryOp::Square, FLOAT),
        Op::SQRT => (UnaryOp::Sqrt, FLOAT),
        Op::RSQRT => (UnaryOp::Rsqrt, FLOAT),
        Op::EXP => (UnaryOp::Exp, FLOAT),
        Op::LOG => (UnaryOp::Log, FLOAT),
        Op::SIN => (UnaryOp::Sin, FLOAT),
        Op::COS => (UnaryOp::Cos, FLOAT),
        Op::ABS => (UnaryOp::Abs, FLOAT_INT),
        Op::NEG => (UnaryOp::Neg, NUMBERS),
        Op::TANH => (UnaryOp::Tanh, FLOAT),
        Op::LOGISTIC => (UnaryOp::Logistic, FLOAT),
        Op::RELU => (UnaryOp::Relu, FLOAT),
        Op::RELU6 => (UnaryOp::Relu6, FLOAT),
        Op::HARD_SWISH => (UnaryOp::HardSwish, FLOAT),
        Op::LEAKY_RELU => {
            let alpha = match options {
                BuiltinOptions::LeakyRelu { alpha } => *alpha,
                // The schema's default.
                _ => 0.2,
            };
            (UnaryOp::LeakyRelu { alpha }, FLOAT)
        }
        Op::GELU => {
            let approximate = matches!(options, BuiltinOptions::Gelu { approximate: true });
            (UnaryOp::Gelu { approximate }, FLOAT)
        }
        _ => return Err(not_this_kernel(ctx, "unary", code)),
    };
    Ok(Box::new(Unary {
        op,
        dtypes,
        dtype: DType::F32,
    }))
}

impl LiteNode for Unary {
    fn prepare(&mut self, ctx: &mut PrepareContext<'_>) -> Result<()> {
        check_counts(ctx, 1..=1, 1)?;
        self.dtype = input_dtype_in(ctx, 0, self.dtypes)?;
        let shape = unary_shape(ctx.input_shape(0)?)?;
        set_output(ctx, self.dtype, &shape)
    }

    fn invoke(&mut self, ctx: &mut InvokeContext<'_>) -> Result<()> {
        let op = self.op;
        with_number!(ctx, self.dtype, T => {
            let input = ctx.input::<T>(0)?;
            unary(op, input, ctx.output_mut::<T>(0)?)
        })
    }
}

/// A binary elementwise op with NumPy broadcasting and a fused activation.
struct Binary {
    params: BinaryParams,
    dtypes: &'static [DType],
    dtype: DType,
}

/// `init` of the seven binary builtins: the op from the code, the fused
/// activation from ADD's, SUB's, MUL's and DIV's options.
pub(crate) fn init_binary(ctx: &InitContext<'_>, code: Op) -> Result<Box<dyn LiteNode>> {
    let (op, dtypes) = match code {
        Op::ADD => (BinaryOp::Add, NUMBERS),
        Op::SUB => (BinaryOp::Sub, NUMBERS),
        Op::MUL => (BinaryOp::Mul, NUMBERS),
        Op::DIV => (BinaryOp::Div, FLOAT_INT),
        Op::MAXIMUM => (BinaryOp::Maximum, NUMBERS),
        Op::MINIMUM => (BinaryOp::Minimum, NUMBERS),
        Op::SQUARED_DIFFERENCE => (BinaryOp::SquaredDifference, FLOAT_INT),
        _ => return Err(not_this_kernel(ctx, "binary", code)),
    };
    let activation = match ctx.builtin_options() {
        BuiltinOptions::Arithmetic { activation } => *activation,
        _ => Activation::None,
    };
    Ok(Box::new(Binary {
        params: BinaryParams { op, activation },
        dtypes,
        dtype: DType::F32,
    }))
}

impl LiteNode for Binary {
    fn prepare(&mut self, ctx: &mut PrepareContext<'_>) -> Result<()> {
        check_counts(ctx, 2..=2, 1)?;
        self.dtype = input_dtype_in(ctx, 0, self.dtypes)?;
        same_dtype(ctx, 1, self.dtype)?;
        let shape = binary_shape(ctx.input_shape(0)?, ctx.input_shape(1)?)?;
        set_output(ctx, self.dtype, &shape)
    }

    fn invoke(&mut self, ctx: &mut InvokeContext<'_>) -> Result<()> {
        let params = self.params;
        with_number!(ctx, self.dtype, T => {
            let (a, b) = (ctx.input::<T>(0)?, ctx.input::<T>(1)?);
            let (a_shape, b_shape) = (ctx.input_shape(0)?, ctx.input_shape(1)?);
            binary(params, a_shape, a, b_shape, b, ctx.output_mut::<T>(0)?)
        })
    }
}

/// The error of a family's `init` registered for an op not of the family
/// (through `add_builtin` under another code).
pub(super) fn not_this_kernel(ctx: &InitContext<'_>, family: &str, code: Op) -> op_core::Error {
    ctx.error(format_args!(
        "the {family} builtin kernel does not implement {code}"
    ))
}
