//! The neural-network kernels, float32: CONV_2D, DEPTHWISE_CONV_2D,
//! AVERAGE_POOL_2D, MAX_POOL_2D, FULLY_CONNECTED, BATCH_MATMUL, SOFTMAX.

use op_core::{DType, Result};

use super::wrong_options;
use super::{check_counts, input_dtype_in, set_output};
use crate::builtins::math::batch_matmul::{BatchMatMulParams, batch_matmul, batch_matmul_shape};
use crate::builtins::math::conv::{
    Conv2DParams, PackedFilter, conv2d, conv2d_packed, conv2d_scratch_len, conv2d_shape,
    depthwise_conv2d, depthwise_conv2d_packed, depthwise_conv2d_shape,
};
use crate::builtins::math::fully_connected::{
    FullyConnectedParams, PackedWeights, fully_connected, fully_connected_packed,
    fully_connected_shape,
};
use crate::builtins::math::pool::{Pool2DParams, average_pool2d, max_pool2d, pool2d_shape};
use crate::builtins::math::softmax::{SoftmaxParams, softmax, softmax_shape};
use crate::kernel::{
    InitContext, InvokeContext, LiteNode, NodeInfo, PrepareContext, TemporaryLifetime,
};
use crate::model::{Activation, BuiltinOperator as Op, BuiltinOptions, Padding};

const FLOAT: &[DType] = &[DType::F32];

/// Checks that inputs `0..n` that are present are float32 (a quantized
/// dtype gets the quantized-model message).
fn float_inputs(ctx: &NodeInfo<'_>, n: usize) -> Result<()> {
    for i in 0..n {
        if ctx.has_input(i) {
            input_dtype_in(ctx, i, FLOAT)?;
        }
    }
    Ok(())
}

/// The optional input `i`'s shape (a bias), `None` when omitted or absent.
fn optional_shape<'a>(ctx: &NodeInfo<'a>, i: usize) -> Result<Option<&'a [usize]>> {
    if ctx.has_input(i) {
        ctx.input_shape(i).map(Some)
    } else {
        Ok(None)
    }
}

/// The optional input `i`'s elements, `None` when omitted or absent.
fn optional_input<'a>(ctx: &InvokeContext<'a>, i: usize) -> Result<Option<&'a [f32]>> {
    if ctx.has_input(i) {
        ctx.input::<f32>(i).map(Some)
    } else {
        Ok(None)
    }
}

/// CONV_2D and DEPTHWISE_CONV_2D: `act(conv(input, filter) + bias)`.
struct Conv {
    params: Conv2DParams,
    depthwise: bool,
    /// The scratch temporary CONV_2D's im2col needs.
    scratch: Option<usize>,
    /// The filter packed by prepare when it is a constant and the op reads
    /// a packed filter: every DEPTHWISE_CONV_2D, and CONV_2D where
    /// [`PackedFilter::conv2d`] says so (one group, at most 8 output
    /// channels, and not the planar loops of stride 1 with fewer than 8).
    packed: Option<PackedFilter>,
}

/// `init` of CONV_2D.
pub(crate) fn init_conv2d(ctx: &InitContext<'_>, code: Op) -> Result<Box<dyn LiteNode>> {
    init_conv(ctx, code, false)
}

/// `init` of DEPTHWISE_CONV_2D.
pub(crate) fn init_depthwise_conv2d(ctx: &InitContext<'_>, code: Op) -> Result<Box<dyn LiteNode>> {
    init_conv(ctx, code, true)
}

/// `init` of both convolutions: the options must be the op's own.
fn init_conv(ctx: &InitContext<'_>, code: Op, depthwise: bool) -> Result<Box<dyn LiteNode>> {
    let options = ctx.builtin_options();
    let params = match (options, depthwise) {
        (BuiltinOptions::None, _) => default_conv(),
        (BuiltinOptions::Conv2D { .. }, false) | (BuiltinOptions::DepthwiseConv2D { .. }, true) => {
            Conv2DParams::from_options(options).ok_or_else(|| wrong_options(ctx, code))?
        }
        _ => return Err(wrong_options(ctx, code)),
    };
    Ok(Box::new(Conv {
        params,
        depthwise,
        scratch: None,
        packed: None,
    }))
}

/// A convolution without options: stride and dilation 1, SAME padding.
fn default_conv() -> Conv2DParams {
    Conv2DParams {
        padding: Padding::Same,
        stride_h: 1,
        stride_w: 1,
        dilation_h: 1,
        dilation_w: 1,
        activation: Activation::None,
    }
}

impl LiteNode for Conv {
    fn prepare(&mut self, ctx: &mut PrepareContext<'_>) -> Result<()> {
        check_counts(ctx, 2..=3, 1)?;
        float_inputs(ctx, 3)?;
        let (input, filter) = (ctx.input_shape(0)?, ctx.input_shape(1)?);
        let bias = optional_shape(ctx, 2)?;
        let shape = if self.depthwise {
            depthwise_conv2d_shape(input, filter, bias, &self.params)?
        } else {
            conv2d_shape(input, filter, bias, &self.params)?
        };
        set_output(ctx, DType::F32, &shape)?;
        self.scratch = if self.depthwise {
            None
        } else {
            let len = conv2d_scratch_len(input, filter, &self.params)?;
            Some(ctx.add_temporary(DType::F32, &[len], TemporaryLifetime::Scratch)?)
        };
        self.packed = if ctx.is_constant_input(1)? {
            let values = ctx.constant_input::<f32>(1)?;
            if self.depthwise {
                Some(PackedFilter::depthwise_conv2d(
                    &self.params,
                    input,
                    filter,
                    values,
                )?)
            } else {
                PackedFilter::conv2d(&self.params, input, filter, values)?
            }
        } else {
            None
        };
        Ok(())
    }

    fn invoke(&mut self, ctx: &mut InvokeContext<'_>) -> Result<()> {
        let (input, input_shape) = (ctx.input::<f32>(0)?, ctx.input_shape(0)?);
        let bias = optional_input(ctx, 2)?;
        if let Some(packed) = &self.packed {
            let output = ctx.output_mut::<f32>(0)?;
            return match self.scratch {
                Some(k) => {
                    let scratch = ctx.temporary_mut::<f32>(k)?;
                    conv2d_packed(
                        &self.params,
                        input_shape,
                        input,
                        packed,
                        bias,
                        output,
                        scratch,
                    )
                }
                None => {
                    depthwise_conv2d_packed(&self.params, input_shape, input, packed, bias, output)
                }
            };
        }
        let (filter, filter_shape) = (ctx.input::<f32>(1)?, ctx.input_shape(1)?);
        let output = ctx.output_mut::<f32>(0)?;
        match self.scratch {
            Some(k) => {
                let scratch = ctx.temporary_mut::<f32>(k)?;
                conv2d(
                    &self.params,
                    input_shape,
                    input,
                    filter_shape,
                    filter,
                    bias,
                    output,
                    scratch,
                )
            }
            None => depthwise_conv2d(
                &self.params,
                input_shape,
                input,
                filter_shape,
                filter,
                bias,
                output,
            ),
        }
    }
}

/// AVERAGE_POOL_2D and MAX_POOL_2D.
struct Pool {
    params: Pool2DParams,
    max: bool,
}

fn init_pool(ctx: &InitContext<'_>, code: Op, max: bool) -> Result<Box<dyn LiteNode>> {
    let BuiltinOptions::Pool2D {
        padding,
        stride_w,
        stride_h,
        filter_w,
        filter_h,
        activation,
    } = *ctx.builtin_options()
    else {
        return Err(ctx.error(format_args!(
            "{code} needs its Pool2DOptions (window, strides, padding)"
        )));
    };
    let params = Pool2DParams {
        padding,
        stride_h,
        stride_w,
        filter_h,
        filter_w,
        activation,
    };
    Ok(Box::new(Pool { params, max }))
}

/// `init` of AVERAGE_POOL_2D.
pub(crate) fn init_average_pool(ctx: &InitContext<'_>, code: Op) -> Result<Box<dyn LiteNode>> {
    init_pool(ctx, code, false)
}

/// `init` of MAX_POOL_2D.
pub(crate) fn init_max_pool(ctx: &InitContext<'_>, code: Op) -> Result<Box<dyn LiteNode>> {
    init_pool(ctx, code, true)
}

impl LiteNode for Pool {
    fn prepare(&mut self, ctx: &mut PrepareContext<'_>) -> Result<()> {
        check_counts(ctx, 1..=1, 1)?;
        float_inputs(ctx, 1)?;
        let shape = pool2d_shape(ctx.input_shape(0)?, &self.params)?;
        set_output(ctx, DType::F32, &shape)
    }

    fn invoke(&mut self, ctx: &mut InvokeContext<'_>) -> Result<()> {
        let (input, shape) = (ctx.input::<f32>(0)?, ctx.input_shape(0)?);
        let output = ctx.output_mut::<f32>(0)?;
        if self.max {
            max_pool2d(&self.params, shape, input, output)
        } else {
            average_pool2d(&self.params, shape, input, output)
        }
    }
}

/// FULLY_CONNECTED, with or without bias, `keep_num_dims` or not.
struct FullyConnected {
    params: FullyConnectedParams,
    /// The weights packed by prepare when they are a constant and the
    /// batch is small (a matrix-vector product, where packing pays most).
    packed: Option<PackedWeights>,
}

/// Batches up to which FULLY_CONNECTED with constant weights takes the
/// packed matrix-vector path; larger ones go through the GEMM.
const PACKED_MAX_BATCHES: usize = 8;

/// `init` of FULLY_CONNECTED.
pub(crate) fn init_fully_connected(ctx: &InitContext<'_>, code: Op) -> Result<Box<dyn LiteNode>> {
    let params = match *ctx.builtin_options() {
        BuiltinOptions::FullyConnected {
            activation,
            keep_num_dims,
        } => FullyConnectedParams {
            activation,
            keep_num_dims,
        },
        BuiltinOptions::None => FullyConnectedParams::default(),
        _ => return Err(wrong_options(ctx, code)),
    };
    // TensorFlow Lite's float kernel takes the clamping activations only
    // (the other kernels, as TensorFlow Lite's, clamp nothing for TANH).
    if matches!(params.activation, Activation::Tanh | Activation::SignBit) {
        return Err(ctx.error(format_args!(
            "FULLY_CONNECTED with a fused {:?} activation is not supported (only RELU, \
             RELU_N1_TO_1 and RELU6)",
            params.activation
        )));
    }
    Ok(Box::new(FullyConnected {
        params,
        packed: None,
    }))
}

impl LiteNode for FullyConnected {
    fn prepare(&mut self, ctx: &mut PrepareContext<'_>) -> Result<()> {
        check_counts(ctx, 2..=3, 1)?;
        float_inputs(ctx, 3)?;
        let shape = fully_connected_shape(
            ctx.input_shape(0)?,
            ctx.input_shape(1)?,
            optional_shape(ctx, 2)?,
            &self.params,
        )?;
        let weights_shape = ctx.input_shape(1)?;
        let batches = shape.iter().product::<usize>() / weights_shape[0].max(1);
        self.packed = if batches <= PACKED_MAX_BATCHES && ctx.is_constant_input(1)? {
            Some(PackedWeights::new(
                weights_shape,
                ctx.constant_input::<f32>(1)?,
            )?)
        } else {
            None
        };
        set_output(ctx, DType::F32, &shape)
    }

    fn invoke(&mut self, ctx: &mut InvokeContext<'_>) -> Result<()> {
        let input = ctx.input::<f32>(0)?;
        let bias = optional_input(ctx, 2)?;
        let input_shape = ctx.input_shape(0)?;
        if let Some(packed) = &self.packed {
            let output = ctx.output_mut::<f32>(0)?;
            return fully_connected_packed(&self.params, input_shape, input, packed, bias, output);
        }
        let (weights, weights_shape) = (ctx.input::<f32>(1)?, ctx.input_shape(1)?);
        let output = ctx.output_mut::<f32>(0)?;
        fully_connected(
            &self.params,
            input_shape,
            input,
            weights_shape,
            weights,
            bias,
            output,
        )
    }
}

/// BATCH_MATMUL.
struct BatchMatMul {
    params: BatchMatMulParams,
}

/// `init` of BATCH_MATMUL.
pub(crate) fn init_batch_matmul(ctx: &InitContext<'_>, _code: Op) -> Result<Box<dyn LiteNode>> {
    let (adj_x, adj_y) = match *ctx.builtin_options() {
        BuiltinOptions::BatchMatMul { adj_x, adj_y } => (adj_x, adj_y),
        _ => (false, false),
    };
    Ok(Box::new(BatchMatMul {
        params: BatchMatMulParams { adj_x, adj_y },
    }))
}

impl LiteNode for BatchMatMul {
    fn prepare(&mut self, ctx: &mut PrepareContext<'_>) -> Result<()> {
        check_counts(ctx, 2..=2, 1)?;
        float_inputs(ctx, 2)?;
        let shape = batch_matmul_shape(ctx.input_shape(0)?, ctx.input_shape(1)?, &self.params)?;
        set_output(ctx, DType::F32, &shape)
    }

    fn invoke(&mut self, ctx: &mut InvokeContext<'_>) -> Result<()> {
        let (lhs, rhs) = (ctx.input::<f32>(0)?, ctx.input::<f32>(1)?);
        let (lhs_shape, rhs_shape) = (ctx.input_shape(0)?, ctx.input_shape(1)?);
        let output = ctx.output_mut::<f32>(0)?;
        batch_matmul(&self.params, lhs_shape, lhs, rhs_shape, rhs, output)
    }
}

/// SOFTMAX along the last axis, with `beta`.
struct Softmax {
    params: SoftmaxParams,
}

/// `init` of SOFTMAX.
pub(crate) fn init_softmax(ctx: &InitContext<'_>, _code: Op) -> Result<Box<dyn LiteNode>> {
    let beta = match *ctx.builtin_options() {
        BuiltinOptions::Softmax { beta } => beta,
        _ => 1.0,
    };
    Ok(Box::new(Softmax {
        params: SoftmaxParams { beta },
    }))
}

impl LiteNode for Softmax {
    fn prepare(&mut self, ctx: &mut PrepareContext<'_>) -> Result<()> {
        check_counts(ctx, 1..=1, 1)?;
        float_inputs(ctx, 1)?;
        let shape = softmax_shape(ctx.input_shape(0)?)?;
        set_output(ctx, DType::F32, &shape)
    }

    fn invoke(&mut self, ctx: &mut InvokeContext<'_>) -> Result<()> {
        let (input, shape) = (ctx.input::<f32>(0)?, ctx.input_shape(0)?);
        softmax(&self.params, shape, input, ctx.output_mut::<f32>(0)?)
    }
}
