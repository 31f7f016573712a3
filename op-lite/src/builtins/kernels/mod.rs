//! The builtin kernels: each builtin's [`LiteNode`](crate::LiteNode) over
//! the arithmetic of [`math`](super::math).
//!
//! Every kernel has TensorFlow Lite's shape: `init` reads the builtin
//! options into the math's params; `prepare` checks the input and output
//! counts and dtypes, reads the constant inputs the output shape depends on
//! (a reshape's shape, axes, paddings, a permutation, begin and size), sets
//! the outputs' dtypes and shapes through the math's `*_shape` function and
//! requests scratch as temporaries; `invoke` calls the math function on
//! typed slices of the arena, allocating nothing.
//!
//! Kernels of the same shape share one implementation: one unary kernel for
//! the sixteen elementwise unary ops, one binary kernel for the seven binary
//! ops, one reduction kernel for MEAN and SUM, one copy kernel for RESHAPE,
//! SQUEEZE and EXPAND_DIMS, one pooling kernel for both poolings. Ops that
//! only move elements (TRANSPOSE, CONCATENATION, PACK, the slices, PAD,
//! GATHER) run on elements of any dtype by their width (1, 2, 4 or 8 bytes).
//!
//! Only static shapes: a constant input that shapes depend on must be a
//! constant of the model, or prepare fails naming it.

mod elementwise;
mod nn;
mod quantized;
mod shape;

pub(crate) use elementwise::{init_binary, init_unary};
pub(crate) use nn::{
    init_average_pool, init_batch_matmul, init_conv2d, init_depthwise_conv2d, init_fully_connected,
    init_max_pool, init_softmax,
};
pub(crate) use quantized::init_quantized;
pub(crate) use shape::{
    init_cast, init_concatenation, init_cumsum, init_expand_dims, init_gather, init_mean,
    init_pack, init_pad, init_reshape, init_slice, init_squeeze, init_strided_slice, init_sum,
    init_transpose,
};

use op_core::error::quoted;
use op_core::{DType, Error, Result};

use crate::kernel::{InitContext, InvokeContext, NodeInfo, PrepareContext};
use crate::model::BuiltinOperator;

/// The dtypes of integer quantized tensors: TensorFlow Lite's quantized
/// kernels run on these, and this runtime has none.
const QUANTIZED_DTYPES: [DType; 3] = [DType::I8, DType::U8, DType::I16];

/// Fails unless the node has `inputs` inputs (a range, for optional ones)
/// and `outputs` outputs.
fn check_counts(
    ctx: &NodeInfo<'_>,
    inputs: std::ops::RangeInclusive<usize>,
    outputs: usize,
) -> Result<()> {
    if !inputs.contains(&ctx.num_inputs()) {
        let expected = if inputs.start() == inputs.end() {
            inputs.start().to_string()
        } else if *inputs.end() == usize::MAX {
            format!("at least {}", inputs.start())
        } else {
            format!("{} to {}", inputs.start(), inputs.end())
        };
        return Err(ctx.error(format_args!(
            "{} takes {expected} inputs, the node has {}",
            ctx.op_name(),
            ctx.num_inputs()
        )));
    }
    if ctx.num_outputs() != outputs {
        return Err(ctx.error(format_args!(
            "{} has {outputs} output{}, the node has {}",
            ctx.op_name(),
            if outputs == 1 { "" } else { "s" },
            ctx.num_outputs()
        )));
    }
    Ok(())
}

/// Input `i`'s dtype, checked to be one of `allowed`. An integer dtype of
/// quantized models (int8, uint8, int16) gets its own message: quantized
/// models are not supported.
fn input_dtype_in(ctx: &NodeInfo<'_>, i: usize, allowed: &[DType]) -> Result<DType> {
    let dtype = ctx.input_dtype(i)?;
    if allowed.contains(&dtype) {
        return Ok(dtype);
    }
    let name = quoted(ctx.input_name(i)?);
    if QUANTIZED_DTYPES.contains(&dtype) {
        return Err(ctx.error(format_args!(
            "input {i} ({name}) of {} has dtype {dtype}: quantized models are not supported \
             by this runtime; convert the model without quantization",
            ctx.op_name()
        )));
    }
    Err(ctx.error(format_args!(
        "input {i} ({name}) of {} has dtype {dtype}, expected {}",
        ctx.op_name(),
        dtype_list(allowed)
    )))
}

/// `float32`, `float32 or int32`, `float32, int32 or int64`.
fn dtype_list(dtypes: &[DType]) -> String {
    let names: Vec<String> = dtypes.iter().map(ToString::to_string).collect();
    match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => "no dtype".into(),
    }
}

/// Fails unless input `i` has dtype `dtype` (as input 0, usually).
fn same_dtype(ctx: &NodeInfo<'_>, i: usize, dtype: DType) -> Result<()> {
    input_dtype_in(ctx, i, &[dtype]).map(|_| ())
}

/// The values of input `i`, an int32 or int64 constant of the model (a
/// shape, axes, paddings, a permutation), widened to `i64`.
///
/// Fails naming the input when it is not a constant: this runtime plans
/// static shapes, so what a shape depends on must be known at prepare.
fn constant_ints(ctx: &PrepareContext<'_>, i: usize, what: &str) -> Result<Vec<i64>> {
    if !ctx.is_constant_input(i)? {
        return Err(ctx.error(format_args!(
            "input {i} ({}) of {}, {what}, is not a constant of the model: this runtime \
             supports static shapes only, so {what} must be known before invoke",
            quoted(ctx.input_name(i)?),
            ctx.op_name()
        )));
    }
    match input_dtype_in(ctx, i, &[DType::I32, DType::I64])? {
        DType::I32 => Ok(ctx
            .constant_input::<i32>(i)?
            .iter()
            .map(|&v| i64::from(v))
            .collect()),
        _ => Ok(ctx.constant_input::<i64>(i)?.to_vec()),
    }
}

/// The error of an `init` whose node has options of another kind than
/// its op's (a hand-made model, or a builtin registered under another
/// code), or none where the op needs them.
fn wrong_options(ctx: &InitContext<'_>, code: BuiltinOperator) -> Error {
    ctx.error(format_args!(
        "{code} needs its own builtin options, the node has {:?}",
        ctx.builtin_options()
    ))
}

/// Sets output 0's dtype and shape.
fn set_output(ctx: &mut PrepareContext<'_>, dtype: DType, shape: &[usize]) -> Result<()> {
    ctx.set_output_dtype(0, dtype)?;
    ctx.set_output_shape(0, shape)
}

/// The bytes of input `i` as elements of width `W` (`u8` to `u64`): what
/// the ops that only move elements read, whatever the dtype.
#[inline]
fn input_words<'a, W: bytemuck::Pod>(ctx: &InvokeContext<'a>, i: usize) -> Result<&'a [W]> {
    words(ctx, ctx.input_bytes(i)?)
}

/// The bytes of output `i` as elements of width `W`.
#[inline]
fn output_words<'a, W: bytemuck::Pod>(
    ctx: &mut InvokeContext<'a>,
    i: usize,
) -> Result<&'a mut [W]> {
    let bytes = ctx.output_bytes_mut(i)?;
    if bytes.is_empty() {
        return Ok(&mut []);
    }
    bytemuck::try_cast_slice_mut(bytes).map_err(|e| misaligned(ctx, e))
}

#[inline]
fn words<'a, W: bytemuck::Pod>(ctx: &InvokeContext<'a>, bytes: &'a [u8]) -> Result<&'a [W]> {
    if bytes.is_empty() {
        return Ok(&[]);
    }
    bytemuck::try_cast_slice(bytes).map_err(|e| misaligned(ctx, e))
}

#[cold]
fn misaligned(ctx: &InvokeContext<'_>, e: bytemuck::PodCastError) -> Error {
    ctx.error(format_args!(
        "a tensor's bytes are not whole aligned elements: {e}"
    ))
}

/// Runs `$body` with `$W` the unsigned integer as wide as one element of
/// `$dtype`: for the ops that only move elements.
macro_rules! with_width {
    ($ctx:expr, $dtype:expr, $W:ident => $body:expr) => {
        match $dtype.size_of() {
            Some(1) => {
                type $W = u8;
                $body
            }
            Some(2) => {
                type $W = u16;
                $body
            }
            Some(4) => {
                type $W = u32;
                $body
            }
            Some(8) => {
                type $W = u64;
                $body
            }
            _ => Err($ctx.error(::core::format_args!(
                "{} does not move elements of dtype {}",
                $ctx.op_name(),
                $dtype
            ))),
        }
    };
}
use with_width;

/// Runs `$body` with `$T` the number type of `$dtype` (float32, int32 or
/// int64): for the arithmetic kernels, whose prepare has checked the dtype.
macro_rules! with_number {
    ($ctx:expr, $dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            ::op_core::DType::F32 => {
                type $T = f32;
                $body
            }
            ::op_core::DType::I32 => {
                type $T = i32;
                $body
            }
            ::op_core::DType::I64 => {
                type $T = i64;
                $body
            }
            other => Err($ctx.error(::core::format_args!(
                "{} has no kernel for dtype {other}",
                $ctx.op_name()
            ))),
        }
    };
}
use with_number;
