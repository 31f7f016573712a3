//! The kernels that reshape, move, reduce or convert elements: RESHAPE,
//! SQUEEZE, EXPAND_DIMS (one copy kernel), TRANSPOSE, CONCATENATION, PACK,
//! STRIDED_SLICE, SLICE, PAD, GATHER (any dtype, by element width), MEAN
//! and SUM (one reduction kernel), CUMSUM and CAST.

use op_core::error::quoted;
use op_core::{DType, Result};

use super::wrong_options;
use super::{
    check_counts, constant_ints, input_dtype_in, input_words, output_words, same_dtype, set_output,
    with_number, with_width,
};
use crate::builtins::math::num_elements;
use crate::builtins::math::reduce::{ReduceOp, ReduceParams, reduce, reduce_shape};
use crate::builtins::math::shape_ops::{
    CastTo, CumSumParams, GatherParams, StridedSliceParams, cast, concatenation,
    concatenation_shape, cumsum, cumsum_shape, gather, gather_shape, pack, pack_shape, pad,
    pad_shape, slice, slice_shape, strided_slice, strided_slice_shape, transpose, transpose_shape,
};
use crate::kernel::{ArenaElement, InitContext, InvokeContext, LiteNode, PrepareContext};
use crate::model::{Activation, BuiltinOperator as Op, BuiltinOptions};

const NUMBERS: &[DType] = &[DType::F32, DType::I32, DType::I64];
const INDICES: &[DType] = &[DType::I32, DType::I64];

/// Fails when input 0 has a quantized integer dtype: the ops that move
/// elements take any dtype, but an int8 tensor of a quantized model would
/// move silently and be wrong further on.
fn not_quantized(ctx: &PrepareContext<'_>, i: usize) -> Result<DType> {
    let dtype = ctx.input_dtype(i)?;
    if dtype.size_of().is_some() && !super::QUANTIZED_DTYPES.contains(&dtype) {
        return Ok(dtype);
    }
    // Reuses the message of the dtype check.
    input_dtype_in(ctx, i, &[])
}

// ---------------------------------------------------------------------------
// RESHAPE, SQUEEZE, EXPAND_DIMS: the output is the input's bytes.

/// How a copy kernel computes its output shape.
#[derive(Clone, Debug)]
enum ShapeRule {
    /// RESHAPE: the shape input (a constant), or else the options' shape.
    Reshape { option: Option<Vec<i32>> },
    /// SQUEEZE: drop these dimensions of size 1, or all of them.
    Squeeze { dims: Vec<i32> },
    /// EXPAND_DIMS: a dimension of 1 at the axis input (a constant).
    ExpandDims,
}

/// The output is the input's elements under another shape.
struct Reshaped {
    rule: ShapeRule,
}

/// `init` of RESHAPE.
pub(crate) fn init_reshape(ctx: &InitContext<'_>, _code: Op) -> Result<Box<dyn LiteNode>> {
    let option = match ctx.builtin_options() {
        BuiltinOptions::Reshape { new_shape } => Some(new_shape.clone()),
        _ => None,
    };
    Ok(Box::new(Reshaped {
        rule: ShapeRule::Reshape { option },
    }))
}

/// `init` of SQUEEZE.
pub(crate) fn init_squeeze(ctx: &InitContext<'_>, _code: Op) -> Result<Box<dyn LiteNode>> {
    let dims = match ctx.builtin_options() {
        BuiltinOptions::Squeeze { squeeze_dims } => squeeze_dims.clone(),
        _ => Vec::new(),
    };
    Ok(Box::new(Reshaped {
        rule: ShapeRule::Squeeze { dims },
    }))
}

/// `init` of EXPAND_DIMS.
pub(crate) fn init_expand_dims(_ctx: &InitContext<'_>, _code: Op) -> Result<Box<dyn LiteNode>> {
    Ok(Box::new(Reshaped {
        rule: ShapeRule::ExpandDims,
    }))
}

impl Reshaped {
    fn output_shape(&self, ctx: &PrepareContext<'_>) -> Result<Vec<usize>> {
        let input = ctx.input_shape(0)?;
        match &self.rule {
            ShapeRule::Reshape { option } => {
                let requested = if ctx.has_input(1) {
                    constant_ints(ctx, 1, "the new shape")?
                } else if let Some(shape) = option {
                    shape.iter().map(|&d| i64::from(d)).collect()
                } else {
                    return Err(ctx.error("RESHAPE needs a shape input or a new_shape option"));
                };
                reshape_shape(ctx, input, &requested)
            }
            ShapeRule::Squeeze { dims } => {
                let rank = input.len();
                let mut squeezed = vec![dims.is_empty(); rank];
                for &d in dims {
                    let axis = i64::from(d) + if d < 0 { rank as i64 } else { 0 };
                    let Some(axis) = usize::try_from(axis).ok().filter(|&a| a < rank) else {
                        return Err(ctx.error(format_args!(
                            "SQUEEZE: dimension {d} is out of range for an input of rank {rank}"
                        )));
                    };
                    if input[axis] != 1 {
                        return Err(ctx.error(format_args!(
                            "SQUEEZE: dimension {d} of the input {input} is {}, not 1",
                            input[axis],
                            input = op_core::error::dims(input)
                        )));
                    }
                    squeezed[axis] = true;
                }
                Ok(input
                    .iter()
                    .zip(&squeezed)
                    .filter(|&(&size, &squeeze)| !(squeeze && size == 1))
                    .map(|(&size, _)| size)
                    .collect())
            }
            ShapeRule::ExpandDims => {
                let axis = constant_ints(ctx, 1, "the axis")?;
                let [axis] = axis[..] else {
                    return Err(ctx.error(format_args!(
                        "EXPAND_DIMS: the axis must be one value, not {}",
                        axis.len()
                    )));
                };
                let rank = input.len() as i64;
                let at = if axis < 0 { axis + rank + 1 } else { axis };
                if !(0..=rank).contains(&at) {
                    return Err(ctx.error(format_args!(
                        "EXPAND_DIMS: axis {axis} is out of range for an input of rank {rank}"
                    )));
                }
                let mut out = input.to_vec();
                out.insert(at as usize, 1);
                Ok(out)
            }
        }
    }
}

/// RESHAPE's output shape: `requested` with its one `-1` inferred, holding
/// as many elements as `input`.
fn reshape_shape(
    ctx: &PrepareContext<'_>,
    input: &[usize],
    requested: &[i64],
) -> Result<Vec<usize>> {
    let count = num_elements(input)?;
    let mut unknown = None;
    let mut known = 1usize;
    let mut out = Vec::with_capacity(requested.len());
    for (k, &d) in requested.iter().enumerate() {
        if d == -1 {
            if unknown.replace(k).is_some() {
                return Err(ctx.error(format_args!(
                    "RESHAPE: the new shape {requested} has more than one -1",
                    requested = op_core::error::dims(requested)
                )));
            }
            out.push(1);
        } else {
            let Ok(d) = usize::try_from(d) else {
                return Err(ctx.error(format_args!(
                    "RESHAPE: the new shape {requested} has a negative dimension",
                    requested = op_core::error::dims(requested)
                )));
            };
            known = known.checked_mul(d).ok_or_else(|| {
                ctx.error(format_args!(
                    "RESHAPE: the new shape {requested} overflows",
                    requested = op_core::error::dims(requested)
                ))
            })?;
            out.push(d);
        }
    }
    if let Some(k) = unknown {
        if known == 0 || count % known != 0 {
            return Err(ctx.error(format_args!(
                "RESHAPE: cannot infer the -1 of {requested} for {count} elements",
                requested = op_core::error::dims(requested)
            )));
        }
        out[k] = count / known;
    } else if known != count {
        return Err(ctx.error(format_args!(
            "RESHAPE: the new shape {requested} holds {known} elements, the input {input} {count}",
            requested = op_core::error::dims(requested),
            input = op_core::error::dims(input)
        )));
    }
    Ok(out)
}

impl LiteNode for Reshaped {
    fn prepare(&mut self, ctx: &mut PrepareContext<'_>) -> Result<()> {
        let inputs = match self.rule {
            ShapeRule::Reshape { .. } => 1..=2,
            ShapeRule::Squeeze { .. } => 1..=1,
            ShapeRule::ExpandDims => 2..=2,
        };
        check_counts(ctx, inputs, 1)?;
        let dtype = not_quantized(ctx, 0)?;
        let shape = self.output_shape(ctx)?;
        set_output(ctx, dtype, &shape)
    }

    fn invoke(&mut self, ctx: &mut InvokeContext<'_>) -> Result<()> {
        let input = ctx.input_bytes(0)?;
        let output = ctx.output_bytes_mut(0)?;
        if input.len() != output.len() {
            return Err(ctx.error(format_args!(
                "the output has {} bytes, the input {}",
                output.len(),
                input.len()
            )));
        }
        output.copy_from_slice(input);
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// The ops that move elements: any dtype, by width.

/// TRANSPOSE by a constant permutation.
struct Transpose {
    perm: Vec<i64>,
    dtype: DType,
}

/// `init` of TRANSPOSE.
pub(crate) fn init_transpose(_ctx: &InitContext<'_>, _code: Op) -> Result<Box<dyn LiteNode>> {
    Ok(Box::new(Transpose {
        perm: Vec::new(),
        dtype: DType::F32,
    }))
}

impl LiteNode for Transpose {
    fn prepare(&mut self, ctx: &mut PrepareContext<'_>) -> Result<()> {
        check_counts(ctx, 2..=2, 1)?;
        self.dtype = not_quantized(ctx, 0)?;
        self.perm = constant_ints(ctx, 1, "the permutation")?;
        let shape = transpose_shape(ctx.input_shape(0)?, &self.perm)?;
        set_output(ctx, self.dtype, &shape)
    }

    fn invoke(&mut self, ctx: &mut InvokeContext<'_>) -> Result<()> {
        with_width!(ctx, self.dtype, W => {
            let input = input_words::<W>(ctx, 0)?;
            let shape = ctx.input_shape(0)?;
            transpose(shape, input, &self.perm, output_words::<W>(ctx, 0)?)
        })
    }
}

/// CONCATENATION of any number of inputs along an axis.
struct Concatenation {
    axis: i64,
    dtype: DType,
}

/// `init` of CONCATENATION. A fused activation is refused, as TensorFlow
/// Lite's kernel refuses it.
pub(crate) fn init_concatenation(ctx: &InitContext<'_>, code: Op) -> Result<Box<dyn LiteNode>> {
    let (axis, activation) = match *ctx.builtin_options() {
        BuiltinOptions::Concatenation { axis, activation } => (axis, activation),
        BuiltinOptions::None => (0, Activation::None),
        _ => return Err(wrong_options(ctx, code)),
    };
    if activation != Activation::None {
        return Err(ctx.error(format_args!(
            "CONCATENATION with a fused activation ({activation:?}) is not supported"
        )));
    }
    Ok(Box::new(Concatenation {
        axis: axis.into(),
        dtype: DType::F32,
    }))
}

impl LiteNode for Concatenation {
    fn prepare(&mut self, ctx: &mut PrepareContext<'_>) -> Result<()> {
        check_counts(ctx, 1..=usize::MAX, 1)?;
        self.dtype = not_quantized(ctx, 0)?;
        let mut shapes = Vec::with_capacity(ctx.num_inputs());
        for i in 0..ctx.num_inputs() {
            same_dtype(ctx, i, self.dtype)?;
            shapes.push(ctx.input_shape(i)?);
        }
        let shape = concatenation_shape(&shapes, self.axis)?;
        set_output(ctx, self.dtype, &shape)
    }

    fn invoke(&mut self, ctx: &mut InvokeContext<'_>) -> Result<()> {
        with_width!(ctx, self.dtype, W => {
            let output = output_words::<W>(ctx, 0)?;
            let ctx: &InvokeContext<'_> = ctx;
            // Every input read once here, so that the iterator below, which
            // cannot return errors, finds them all.
            for i in 0..ctx.num_inputs() {
                input_words::<W>(ctx, i)?;
            }
            let inputs = (0..ctx.num_inputs()).map(|i| {
                (
                    ctx.input_shape(i).unwrap_or(&[]),
                    input_words::<W>(ctx, i).unwrap_or(&[]),
                )
            });
            concatenation(self.axis, inputs, output)
        })
    }
}

/// PACK of `values_count` inputs of one shape along a new axis.
struct Pack {
    count: usize,
    axis: i64,
    dtype: DType,
}

/// `init` of PACK.
pub(crate) fn init_pack(ctx: &InitContext<'_>, code: Op) -> Result<Box<dyn LiteNode>> {
    let BuiltinOptions::Pack { values_count, axis } = *ctx.builtin_options() else {
        return Err(wrong_options(ctx, code));
    };
    Ok(Box::new(Pack {
        count: values_count,
        axis: axis.into(),
        dtype: DType::F32,
    }))
}

impl LiteNode for Pack {
    fn prepare(&mut self, ctx: &mut PrepareContext<'_>) -> Result<()> {
        check_counts(ctx, self.count..=self.count, 1)?;
        self.dtype = not_quantized(ctx, 0)?;
        let first = ctx.input_shape(0)?;
        for i in 1..self.count {
            same_dtype(ctx, i, self.dtype)?;
            if ctx.input_shape(i)? != first {
                return Err(ctx.error(format_args!(
                    "PACK: input {i} ({}) has shape {}, input 0 {first}",
                    quoted(ctx.input_name(i)?),
                    op_core::error::dims(ctx.input_shape(i)?),
                    first = op_core::error::dims(first)
                )));
            }
        }
        let shape = pack_shape(first, self.count, self.axis)?;
        set_output(ctx, self.dtype, &shape)
    }

    fn invoke(&mut self, ctx: &mut InvokeContext<'_>) -> Result<()> {
        with_width!(ctx, self.dtype, W => {
            let output = output_words::<W>(ctx, 0)?;
            let ctx: &InvokeContext<'_> = ctx;
            for i in 0..ctx.num_inputs() {
                input_words::<W>(ctx, i)?;
            }
            let inputs = (0..ctx.num_inputs()).map(|i| input_words::<W>(ctx, i).unwrap_or(&[]));
            pack(ctx.input_shape(0)?, self.axis, inputs, output)
        })
    }
}

/// STRIDED_SLICE by constant begin, end and strides.
struct StridedSlice {
    params: StridedSliceParams,
    begin: Vec<i64>,
    end: Vec<i64>,
    strides: Vec<i64>,
    dtype: DType,
}

/// `init` of STRIDED_SLICE.
pub(crate) fn init_strided_slice(ctx: &InitContext<'_>, code: Op) -> Result<Box<dyn LiteNode>> {
    let params = match *ctx.builtin_options() {
        BuiltinOptions::StridedSlice {
            begin_mask,
            end_mask,
            ellipsis_mask,
            new_axis_mask,
            shrink_axis_mask,
            offset,
        } => StridedSliceParams {
            begin_mask,
            end_mask,
            ellipsis_mask,
            new_axis_mask,
            shrink_axis_mask,
            offset,
        },
        BuiltinOptions::None => StridedSliceParams::default(),
        _ => return Err(wrong_options(ctx, code)),
    };
    Ok(Box::new(StridedSlice {
        params,
        begin: Vec::new(),
        end: Vec::new(),
        strides: Vec::new(),
        dtype: DType::F32,
    }))
}

impl LiteNode for StridedSlice {
    fn prepare(&mut self, ctx: &mut PrepareContext<'_>) -> Result<()> {
        check_counts(ctx, 4..=4, 1)?;
        self.dtype = not_quantized(ctx, 0)?;
        self.begin = constant_ints(ctx, 1, "the begin")?;
        self.end = constant_ints(ctx, 2, "the end")?;
        self.strides = constant_ints(ctx, 3, "the strides")?;
        let shape = strided_slice_shape(
            ctx.input_shape(0)?,
            &self.begin,
            &self.end,
            &self.strides,
            &self.params,
        )?;
        set_output(ctx, self.dtype, &shape)
    }

    fn invoke(&mut self, ctx: &mut InvokeContext<'_>) -> Result<()> {
        with_width!(ctx, self.dtype, W => {
            let input = input_words::<W>(ctx, 0)?;
            let shape = ctx.input_shape(0)?;
            let output = output_words::<W>(ctx, 0)?;
            strided_slice(shape, input, &self.begin, &self.end, &self.strides, &self.params, output)
        })
    }
}

/// SLICE by constant begin and size.
struct Slice {
    begin: Vec<i64>,
    size: Vec<i64>,
    dtype: DType,
}

/// `init` of SLICE.
pub(crate) fn init_slice(_ctx: &InitContext<'_>, _code: Op) -> Result<Box<dyn LiteNode>> {
    Ok(Box::new(Slice {
        begin: Vec::new(),
        size: Vec::new(),
        dtype: DType::F32,
    }))
}

impl LiteNode for Slice {
    fn prepare(&mut self, ctx: &mut PrepareContext<'_>) -> Result<()> {
        check_counts(ctx, 3..=3, 1)?;
        self.dtype = not_quantized(ctx, 0)?;
        self.begin = constant_ints(ctx, 1, "the begin")?;
        self.size = constant_ints(ctx, 2, "the size")?;
        let shape = slice_shape(ctx.input_shape(0)?, &self.begin, &self.size)?;
        set_output(ctx, self.dtype, &shape)
    }

    fn invoke(&mut self, ctx: &mut InvokeContext<'_>) -> Result<()> {
        with_width!(ctx, self.dtype, W => {
            let input = input_words::<W>(ctx, 0)?;
            let shape = ctx.input_shape(0)?;
            slice(shape, input, &self.begin, &self.size, output_words::<W>(ctx, 0)?)
        })
    }
}

/// PAD with zeros by constant paddings.
struct Pad {
    paddings: Vec<i64>,
    dtype: DType,
}

/// `init` of PAD.
pub(crate) fn init_pad(_ctx: &InitContext<'_>, _code: Op) -> Result<Box<dyn LiteNode>> {
    Ok(Box::new(Pad {
        paddings: Vec::new(),
        dtype: DType::F32,
    }))
}

impl LiteNode for Pad {
    fn prepare(&mut self, ctx: &mut PrepareContext<'_>) -> Result<()> {
        check_counts(ctx, 2..=2, 1)?;
        self.dtype = not_quantized(ctx, 0)?;
        self.paddings = constant_ints(ctx, 1, "the paddings")?;
        let shape = pad_shape(ctx.input_shape(0)?, &self.paddings)?;
        set_output(ctx, self.dtype, &shape)
    }

    fn invoke(&mut self, ctx: &mut InvokeContext<'_>) -> Result<()> {
        with_width!(ctx, self.dtype, W => {
            let input = input_words::<W>(ctx, 0)?;
            let shape = ctx.input_shape(0)?;
            // Zero bits are zero in every dtype.
            pad(shape, input, &self.paddings, 0 as W, output_words::<W>(ctx, 0)?)
        })
    }
}

/// GATHER along an axis, by int32 or int64 indices known at invoke.
struct Gather {
    params: GatherParams,
    dtype: DType,
    indices: DType,
}

/// `init` of GATHER.
pub(crate) fn init_gather(ctx: &InitContext<'_>, _code: Op) -> Result<Box<dyn LiteNode>> {
    let (axis, batch_dims) = match *ctx.builtin_options() {
        BuiltinOptions::Gather { axis, batch_dims } => (axis, batch_dims),
        _ => (0, 0),
    };
    Ok(Box::new(Gather {
        params: GatherParams {
            axis: axis.into(),
            batch_dims: batch_dims.into(),
        },
        dtype: DType::F32,
        indices: DType::I32,
    }))
}

impl LiteNode for Gather {
    fn prepare(&mut self, ctx: &mut PrepareContext<'_>) -> Result<()> {
        check_counts(ctx, 2..=2, 1)?;
        self.dtype = not_quantized(ctx, 0)?;
        self.indices = input_dtype_in(ctx, 1, INDICES)?;
        let shape = gather_shape(ctx.input_shape(0)?, ctx.input_shape(1)?, &self.params)?;
        set_output(ctx, self.dtype, &shape)
    }

    fn invoke(&mut self, ctx: &mut InvokeContext<'_>) -> Result<()> {
        let p = self.params;
        let (params_shape, indices_shape) = (ctx.input_shape(0)?, ctx.input_shape(1)?);
        with_width!(ctx, self.dtype, W => {
            let params = input_words::<W>(ctx, 0)?;
            if self.indices == DType::I64 {
                let indices = ctx.input::<i64>(1)?;
                gather(&p, params_shape, params, indices_shape, indices, output_words::<W>(ctx, 0)?)
            } else {
                let indices = ctx.input::<i32>(1)?;
                gather(&p, params_shape, params, indices_shape, indices, output_words::<W>(ctx, 0)?)
            }
        })
    }
}

// ---------------------------------------------------------------------------
// Arithmetic on numbers: MEAN, SUM, CUMSUM, CAST.

/// MEAN or SUM over constant axes.
struct Reduce {
    op: ReduceOp,
    params: ReduceParams,
    axes: Vec<i64>,
    dtype: DType,
}

fn init_reduce(ctx: &InitContext<'_>, op: ReduceOp) -> Result<Box<dyn LiteNode>> {
    let keep_dims = matches!(
        ctx.builtin_options(),
        BuiltinOptions::Reducer { keep_dims: true }
    );
    Ok(Box::new(Reduce {
        op,
        params: ReduceParams { keep_dims },
        axes: Vec::new(),
        dtype: DType::F32,
    }))
}

/// `init` of MEAN.
pub(crate) fn init_mean(ctx: &InitContext<'_>, _code: Op) -> Result<Box<dyn LiteNode>> {
    init_reduce(ctx, ReduceOp::Mean)
}

/// `init` of SUM.
pub(crate) fn init_sum(ctx: &InitContext<'_>, _code: Op) -> Result<Box<dyn LiteNode>> {
    init_reduce(ctx, ReduceOp::Sum)
}

impl LiteNode for Reduce {
    fn prepare(&mut self, ctx: &mut PrepareContext<'_>) -> Result<()> {
        check_counts(ctx, 2..=2, 1)?;
        self.dtype = input_dtype_in(ctx, 0, NUMBERS)?;
        self.axes = constant_ints(ctx, 1, "the axes")?;
        let shape = reduce_shape(ctx.input_shape(0)?, &self.axes, &self.params)?;
        set_output(ctx, self.dtype, &shape)
    }

    fn invoke(&mut self, ctx: &mut InvokeContext<'_>) -> Result<()> {
        with_number!(ctx, self.dtype, T => {
            let (input, shape) = (ctx.input::<T>(0)?, ctx.input_shape(0)?);
            reduce(self.op, shape, input, &self.axes, ctx.output_mut::<T>(0)?)
        })
    }
}

/// CUMSUM along a constant axis.
struct CumSum {
    params: CumSumParams,
    axis: i64,
    dtype: DType,
}

/// `init` of CUMSUM.
pub(crate) fn init_cumsum(ctx: &InitContext<'_>, _code: Op) -> Result<Box<dyn LiteNode>> {
    let (exclusive, reverse) = match *ctx.builtin_options() {
        BuiltinOptions::CumSum { exclusive, reverse } => (exclusive, reverse),
        _ => (false, false),
    };
    Ok(Box::new(CumSum {
        params: CumSumParams { exclusive, reverse },
        axis: 0,
        dtype: DType::F32,
    }))
}

impl LiteNode for CumSum {
    fn prepare(&mut self, ctx: &mut PrepareContext<'_>) -> Result<()> {
        check_counts(ctx, 2..=2, 1)?;
        self.dtype = input_dtype_in(ctx, 0, NUMBERS)?;
        let axis = constant_ints(ctx, 1, "the axis")?;
        let [axis] = axis[..] else {
            return Err(ctx.error(format_args!(
                "CUMSUM: the axis must be one value, not {}",
                axis.len()
            )));
        };
        self.axis = axis;
        let shape = cumsum_shape(ctx.input_shape(0)?, axis)?;
        set_output(ctx, self.dtype, &shape)
    }

    fn invoke(&mut self, ctx: &mut InvokeContext<'_>) -> Result<()> {
        with_number!(ctx, self.dtype, T => {
            let (input, shape) = (ctx.input::<T>(0)?, ctx.input_shape(0)?);
            cumsum(&self.params, shape, input, self.axis, ctx.output_mut::<T>(0)?)
        })
    }
}

/// CAST between float32, int32, int64 and bool.
struct Cast {
    from: DType,
    /// The options' output dtype, when they give it.
    option: Option<DType>,
    to: DType,
}

const CASTABLE: &[DType] = &[DType::F32, DType::I32, DType::I64, DType::Bool];

/// What CAST also reads: the small integers of a float model's inputs (a
/// uint8 image). A quantized tensor never gets here: the interpreter
/// refuses tensors with quantization parameters.
const SMALL_INTS: &[DType] = &[DType::U8, DType::I8, DType::I16];

/// `init` of CAST: the output dtype comes from the options where they give
/// it, else from the output tensor (in prepare).
pub(crate) fn init_cast(ctx: &InitContext<'_>, _code: Op) -> Result<Box<dyn LiteNode>> {
    let to = match *ctx.builtin_options() {
        BuiltinOptions::Cast { out_type, .. } => out_type,
        _ => None,
    };
    Ok(Box::new(Cast {
        from: DType::F32,
        option: to,
        to: DType::F32,
    }))
}

impl LiteNode for Cast {
    fn prepare(&mut self, ctx: &mut PrepareContext<'_>) -> Result<()> {
        check_counts(ctx, 1..=1, 1)?;
        self.from = match ctx.input_dtype(0)? {
            small if SMALL_INTS.contains(&small) => small,
            _ => input_dtype_in(ctx, 0, CASTABLE)?,
        };
        self.to = match self.option {
            Some(dtype) => dtype,
            None => ctx.output_dtype(0)?,
        };
        if !CASTABLE.contains(&self.to) {
            return Err(ctx.error(format_args!(
                "CAST to {} is not supported (only float32, int32, int64 and bool)",
                self.to
            )));
        }
        let shape = ctx.input_shape(0)?;
        set_output(ctx, self.to, shape)
    }

    fn invoke(&mut self, ctx: &mut InvokeContext<'_>) -> Result<()> {
        match (self.from, self.to) {
            (DType::Bool, DType::Bool) => {
                let input = ctx.input_bytes(0)?;
                cast_bytes(input, ctx.output_bytes_mut(0)?, |b: bool| u8::from(b))
            }
            (DType::Bool, to) => with_number!(ctx, to, B => {
                let input = ctx.input_bytes(0)?;
                let output = ctx.output_mut::<B>(0)?;
                cast_bytes(input, output, CastTo::<B>::cast)
            }),
            (from, DType::Bool) => with_number!(ctx, from, A => {
                let input = ctx.input::<A>(0)?;
                let output = ctx.output_bytes_mut(0)?;
                cast_to_bool(input, output)
            }),
            (DType::U8, to) => with_number!(ctx, to, B => cast_numbers::<u8, B>(ctx)),
            (DType::I8, to) => with_number!(ctx, to, B => cast_numbers::<i8, B>(ctx)),
            (DType::I16, to) => with_number!(ctx, to, B => cast_numbers::<i16, B>(ctx)),
            (from, to) => with_number!(ctx, from, A => with_number!(ctx, to, B => {
                cast_numbers::<A, B>(ctx)
            })),
        }
    }
}

fn cast_numbers<A: ArenaElement + CastTo<B>, B: ArenaElement>(
    ctx: &mut InvokeContext<'_>,
) -> Result<()> {
    let input = ctx.input::<A>(0)?;
    cast(input, ctx.output_mut::<B>(0)?)
}

/// Bools (bytes 0 or 1; any other byte reads as true) through `f`.
fn cast_bytes<B>(input: &[u8], output: &mut [B], f: impl Fn(bool) -> B) -> Result<()> {
    let bools = input.iter().map(|&b| b != 0);
    same_len(input.len(), output.len())?;
    for (o, b) in output.iter_mut().zip(bools) {
        *o = f(b);
    }
    Ok(())
}

/// Numbers to bools, written as bytes 0 and 1.
fn cast_to_bool<A: CastTo<bool> + Copy>(input: &[A], output: &mut [u8]) -> Result<()> {
    same_len(input.len(), output.len())?;
    for (o, &x) in output.iter_mut().zip(input) {
        *o = u8::from(x.cast());
    }
    Ok(())
}

fn same_len(input: usize, output: usize) -> Result<()> {
    if input == output {
        Ok(())
    } else {
        Err(op_core::Error::invalid_argument(format!(
            "CAST: the output has {output} elements, the input {input}"
        )))
    }
}
