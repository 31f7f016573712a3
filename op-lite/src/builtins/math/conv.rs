//! CONV_2D and DEPTHWISE_CONV_2D over NHWC inputs, and the window
//! arithmetic (output size and padding) that they and the pooling ops
//! share.
//!
//! Semantics are TensorFlow Lite's: `tensorflow/lite/kernels/padding.h`
//! (`ComputeOutSize`, `ComputePaddingHeightWidth`),
//! `tensorflow/lite/kernels/internal/reference/conv.h` (grouped
//! convolution included: the input's channels a multiple of the filter's)
//! and `reference/depthwiseconv_float.h`. CONV_2D's filter is OHWI
//! (`[out_channels, height, width, in_channels / groups]`),
//! DEPTHWISE_CONV_2D's `[1, height, width, in_channels * multiplier]`; the
//! depth multiplier is derived from the shapes, as TensorFlow Lite's
//! `ComputeDepthMultiplier` does, so the option's value is not needed.
//!
//! CONV_2D lowers to a matrix product: each output pixel's receptive field
//! is copied into a row of the caller's scratch (im2col; skipped for a 1x1
//! filter with stride 1 over one group, whose input already is that
//! matrix), the filter is transposed into the scratch, and
//! the private `gemm` module (`gemm.rs`) multiplies. The sums are the same as the
//! reference's, added in another order, so results agree to rounding.
//! CONV_2D of one group with few output channels, and every
//! DEPTHWISE_CONV_2D, take the direct loops of the private `conv_direct`
//! module instead (register blocks over the input in place; CONV_2D first
//! copies a padded image into its scratch), where a GEMM would be mostly
//! set-up.

use op_core::{Error, Result};

use super::common::{ActivationRange, check_len_of, check_rank, num_elements};
use super::conv_direct;
use super::gemm::{MatMut, MatRef, matmul, transpose_into};
use crate::model::{Activation, BuiltinOptions, Padding};

/// One spatial axis of a window op: the output size and the padding before
/// the first element (`ComputePaddingWithOffset`'s result; the extra
/// element of odd padding goes after, so it never matters).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Window {
    /// The output size along the axis.
    pub out: usize,
    /// The padding before the first input element.
    pub pad: usize,
}

/// TensorFlow Lite's window arithmetic along one axis: `ComputeOutSize`
/// (`SAME`: `ceil(in / stride)`; `VALID`: `ceil((in - effective + 1) /
/// stride)`, where `effective = (filter - 1) * dilation + 1`) and the
/// padding before the first element, `max(0, (out - 1) * stride +
/// effective - in) / 2`.
///
/// Fails for a zero stride, dilation or filter size, and for a VALID window
/// larger than the input plus one stride (TensorFlow Lite would compute a
/// negative size); a VALID window that fits nowhere gives an output of 0.
///
/// ```
/// use op_lite::builtins::math::conv::{Window, window};
/// use op_lite::model::Padding;
/// assert_eq!(window(Padding::Same, 5, 3, 2, 1).unwrap(), Window { out: 3, pad: 1 });
/// assert_eq!(window(Padding::Valid, 5, 3, 2, 1).unwrap(), Window { out: 2, pad: 0 });
/// ```
pub fn window(
    padding: Padding,
    input: usize,
    filter: usize,
    stride: usize,
    dilation: usize,
) -> Result<Window> {
    if stride == 0 || dilation == 0 || filter == 0 {
        return Err(Error::invalid_argument(format!(
            "window: stride ({stride}), dilation ({dilation}) and filter size ({filter}) must be positive"
        )));
    }
    let overflow = || Error::invalid_argument("window: sizes overflow");
    let effective = (filter - 1)
        .checked_mul(dilation)
        .and_then(|e| e.checked_add(1))
        .ok_or_else(overflow)?;
    let out = match padding {
        Padding::Same => input.div_ceil(stride),
        Padding::Valid => {
            let reach = input.checked_add(stride).ok_or_else(overflow)?;
            if reach < effective {
                return Err(Error::invalid_argument(format!(
                    "window: a VALID window of effective size {effective} does not fit an input of {input} with stride {stride}"
                )));
            }
            (reach - effective) / stride
        }
    };
    // In i128, where every term fits: out - 1 is -1 for an empty output.
    let total = (out as i128 - 1) * stride as i128 + effective as i128 - input as i128;
    let pad = usize::try_from(total.max(0) / 2).map_err(|_| overflow())?;
    Ok(Window { out, pad })
}

/// CONV_2D's options.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Conv2DParams {
    /// SAME or VALID.
    pub padding: Padding,
    /// The stride along the height.
    pub stride_h: usize,
    /// The stride along the width.
    pub stride_w: usize,
    /// The dilation along the height (1 for none).
    pub dilation_h: usize,
    /// The dilation along the width (1 for none).
    pub dilation_w: usize,
    /// The fused activation.
    pub activation: Activation,
}

impl Conv2DParams {
    /// The params in CONV_2D's or DEPTHWISE_CONV_2D's builtin options
    /// (`None` for any other options). The depth multiplier is left out:
    /// the filter's shape says it, and the math checks it against that.
    pub fn from_options(options: &BuiltinOptions) -> Option<Conv2DParams> {
        match *options {
            BuiltinOptions::Conv2D {
                padding,
                stride_w,
                stride_h,
                dilation_w,
                dilation_h,
                activation,
            }
            | BuiltinOptions::DepthwiseConv2D {
                padding,
                stride_w,
                stride_h,
                dilation_w,
                dilation_h,
                activation,
                depth_multiplier: _,
            } => Some(Conv2DParams {
                padding,
                stride_h,
                stride_w,
                dilation_h,
                dilation_w,
                activation,
            }),
            _ => None,
        }
    }
}

/// DEPTHWISE_CONV_2D's options (the depth multiplier comes from the
/// shapes).
pub type DepthwiseConv2DParams = Conv2DParams;

/// Everything a convolution's compute needs, derived from the shapes once.
#[derive(Copy, Clone, Debug)]
pub(super) struct ConvGeometry {
    pub(super) batches: usize,
    pub(super) in_h: usize,
    pub(super) in_w: usize,
    pub(super) in_c: usize,
    pub(super) filter_h: usize,
    pub(super) filter_w: usize,
    /// Input channels per group (CONV_2D) or the depth multiplier
    /// (DEPTHWISE_CONV_2D).
    pub(super) filter_c: usize,
    pub(super) out_c: usize,
    pub(super) groups: usize,
    pub(super) rows: Window,
    pub(super) cols: Window,
}

impl ConvGeometry {
    fn out_shape(&self) -> [usize; 4] {
        [self.batches, self.rows.out, self.cols.out, self.out_c]
    }

    /// The elements of one group's im2col row: filter_h * filter_w * filter_c.
    fn patch_len(&self) -> usize {
        self.filter_h * self.filter_w * self.filter_c
    }

    /// Whether CONV_2D takes the direct loops of `conv_direct` (no im2col).
    fn is_direct(&self) -> bool {
        self.groups == 1 && self.out_c <= conv_direct::DIRECT_MAX_OUT
    }

    /// Whether CONV_2D takes the channel-last direct loops, the ones that
    /// read a [`PackedFilter`] (the planar loops read the filter as is).
    fn takes_packed_filter(&self, params: &Conv2DParams) -> bool {
        self.is_direct() && !conv_direct::is_planar(self, params)
    }

    /// Whether the input already is CONV_2D's im2col matrix.
    fn is_pointwise(&self, params: &Conv2DParams) -> bool {
        self.filter_h == 1
            && self.filter_w == 1
            && params.stride_h == 1
            && params.stride_w == 1
            && self.rows.pad == 0
            && self.cols.pad == 0
            && self.groups == 1
    }
}

/// Checks the shapes shared by both convolutions and computes the windows.
fn geometry(
    op: &str,
    input: &[usize],
    filter: &[usize],
    bias: Option<&[usize]>,
    params: &Conv2DParams,
    depthwise: bool,
) -> Result<ConvGeometry> {
    check_rank("the input", input, 4).map_err(|e| e.with_context(op))?;
    check_rank("the filter", filter, 4).map_err(|e| e.with_context(op))?;
    num_elements(input)?;
    num_elements(filter)?;
    let [batches, in_h, in_w, in_c] = [input[0], input[1], input[2], input[3]];
    let (out_c, filter_h, filter_w, filter_c, groups);
    if depthwise {
        if filter[0] != 1 {
            return Err(Error::invalid_argument(format!(
                "{op}: the filter must be [1, height, width, channels], got {filter}",
                filter = op_core::error::dims(filter)
            )));
        }
        out_c = filter[3];
        if in_c == 0 || out_c % in_c != 0 {
            return Err(Error::invalid_argument(format!(
                "{op}: the filter's {out_c} channels are not a multiple of the input's {in_c}"
            )));
        }
        (filter_h, filter_w, filter_c, groups) = (filter[1], filter[2], out_c / in_c, in_c);
    } else {
        (out_c, filter_h, filter_w, filter_c) = (filter[0], filter[1], filter[2], filter[3]);
        if filter_c == 0 || in_c == 0 || in_c % filter_c != 0 {
            return Err(Error::invalid_argument(format!(
                "{op}: the input's {in_c} channels are not a multiple of the filter's {filter_c}"
            )));
        }
        groups = in_c / filter_c;
        if out_c % groups != 0 {
            return Err(Error::invalid_argument(format!(
                "{op}: {out_c} output channels cannot be split into {groups} groups"
            )));
        }
    }
    if let Some(bias) = bias
        && num_elements(bias)? != out_c
    {
        return Err(Error::invalid_argument(format!(
            "{op}: the bias has shape {bias}, expected {out_c} elements",
            bias = op_core::error::dims(bias)
        )));
    }
    let rows = window(
        params.padding,
        in_h,
        filter_h,
        params.stride_h,
        params.dilation_h,
    )
    .map_err(|e| e.with_context(format!("{op}: the height")))?;
    let cols = window(
        params.padding,
        in_w,
        filter_w,
        params.stride_w,
        params.dilation_w,
    )
    .map_err(|e| e.with_context(format!("{op}: the width")))?;
    let g = ConvGeometry {
        batches,
        in_h,
        in_w,
        in_c,
        filter_h,
        filter_w,
        filter_c,
        out_c,
        groups,
        rows,
        cols,
    };
    num_elements(&g.out_shape())?;
    Ok(g)
}

/// CONV_2D's output shape, `[batches, out_height, out_width,
/// out_channels]`, for an NHWC `input`, an OHWI `filter` and an optional
/// `bias` of `out_channels` elements.
///
/// ```
/// use op_lite::builtins::math::conv::{Conv2DParams, conv2d_shape};
/// use op_lite::model::{Activation, Padding};
/// let params = Conv2DParams {
///     padding: Padding::Same, stride_h: 2, stride_w: 2,
///     dilation_h: 1, dilation_w: 1, activation: Activation::Relu,
/// };
/// let out = conv2d_shape(&[1, 32, 32, 16], &[32, 3, 3, 16], Some(&[32]), &params).unwrap();
/// assert_eq!(out, [1, 16, 16, 32]);
/// ```
pub fn conv2d_shape(
    input: &[usize],
    filter: &[usize],
    bias: Option<&[usize]>,
    params: &Conv2DParams,
) -> Result<Vec<usize>> {
    Ok(geometry("CONV_2D", input, filter, bias, params, false)?
        .out_shape()
        .to_vec())
}

/// The scratch elements [`conv2d`] needs: the transposed filter of one
/// group, and one batch's im2col matrix for one group unless the filter is
/// pointwise (1x1, stride 1, one group).
pub fn conv2d_scratch_len(
    input: &[usize],
    filter: &[usize],
    params: &Conv2DParams,
) -> Result<usize> {
    let g = geometry("CONV_2D", input, filter, None, params, false)?;
    scratch_len(&g, params)
}

fn scratch_len(g: &ConvGeometry, params: &Conv2DParams) -> Result<usize> {
    let overflow = || Error::invalid_argument("CONV_2D: the scratch size overflows");
    let patch = g.patch_len();
    let filter_t = patch.checked_mul(g.out_c / g.groups).ok_or_else(overflow)?;
    if conv_direct::is_planar(g, params) {
        return conv_direct::planar_scratch_len(g, params).ok_or_else(overflow);
    }
    let im2col = if g.is_direct() {
        // The direct loops' zero-padded image, if any.
        match conv_direct::padded(g, params) {
            Some(p) => num_elements(&[p.in_h, p.in_w, p.in_c])?,
            None => 0,
        }
    } else if g.is_pointwise(params) {
        0
    } else {
        num_elements(&[g.rows.out, g.cols.out, patch])?
    };
    filter_t.checked_add(im2col).ok_or_else(overflow)
}

/// One call's slices beside the shapes they must have: the checks every
/// convolution entry point starts with.
struct CallShapes<'a> {
    input_shape: &'a [usize],
    input: &'a [f32],
    filter_shape: &'a [usize],
    /// `None` for a packed filter, checked when it was packed.
    filter: Option<&'a [f32]>,
    bias: Option<&'a [f32]>,
    output: &'a [f32],
}

impl CallShapes<'_> {
    /// The geometry of `op`'s call, once the shapes agree and each slice
    /// holds its shape's elements.
    fn check(&self, op: &str, params: &Conv2DParams, depthwise: bool) -> Result<ConvGeometry> {
        let bias_shape = self.bias.map(|b| [b.len()]);
        let g = geometry(
            op,
            self.input_shape,
            self.filter_shape,
            bias_shape.as_ref().map(|s| &s[..]),
            params,
            depthwise,
        )?;
        check_len_of(op, "the input", self.input.len(), self.input_shape)?;
        if let Some(filter) = self.filter {
            check_len_of(op, "the filter", filter.len(), self.filter_shape)?;
        }
        check_len_of(op, "the output", self.output.len(), &g.out_shape())?;
        Ok(g)
    }
}

/// Fails unless `scratch` holds what CONV_2D needs for `g`.
fn check_scratch(g: &ConvGeometry, params: &Conv2DParams, scratch: &[f32]) -> Result<()> {
    let need = scratch_len(g, params)?;
    if scratch.len() < need {
        return Err(Error::invalid_argument(format!(
            "CONV_2D: the scratch has {} elements, {need} needed",
            scratch.len()
        )));
    }
    Ok(())
}

/// CONV_2D: `output = act(conv(input, filter) + bias)`, NHWC input, OHWI
/// filter, into `output` of [`conv2d_shape`] and with `scratch` of at least
/// [`conv2d_scratch_len`] elements. Allocates nothing.
///
/// ```
/// use op_lite::builtins::math::conv::{Conv2DParams, conv2d, conv2d_scratch_len};
/// use op_lite::model::{Activation, Padding};
/// let params = Conv2DParams {
///     padding: Padding::Valid, stride_h: 1, stride_w: 1,
///     dilation_h: 1, dilation_w: 1, activation: Activation::None,
/// };
/// // A 2x2 sum over a 1x3x3x1 image.
/// let input: Vec<f32> = (1..=9).map(|v| v as f32).collect();
/// let mut scratch = vec![0.0; conv2d_scratch_len(&[1, 3, 3, 1], &[1, 2, 2, 1], &params).unwrap()];
/// let mut out = [0.0f32; 4];
/// conv2d(&params, &[1, 3, 3, 1], &input, &[1, 2, 2, 1], &[1.0; 4], None, &mut out, &mut scratch).unwrap();
/// assert_eq!(out, [12.0, 16.0, 24.0, 28.0]);
/// ```
#[allow(clippy::too_many_arguments)]
pub fn conv2d(
    params: &Conv2DParams,
    input_shape: &[usize],
    input: &[f32],
    filter_shape: &[usize],
    filter: &[f32],
    bias: Option<&[f32]>,
    output: &mut [f32],
    scratch: &mut [f32],
) -> Result<()> {
    let g = CallShapes {
        input_shape,
        input,
        filter_shape,
        filter: Some(filter),
        bias,
        output,
    }
    .check("CONV_2D", params, false)?;
    check_scratch(&g, params, scratch)?;
    if output.is_empty() {
        return Ok(());
    }
    if conv_direct::is_planar(&g, params) {
        conv_direct::conv2d_planar(&g, params, input, filter, bias, output, scratch);
        return Ok(());
    }
    let patch = g.patch_len();
    let group_out = g.out_c / g.groups;
    let pixels = g.rows.out * g.cols.out;
    let (filter_t, im2col) = scratch.split_at_mut(patch * group_out);
    if g.is_direct() {
        conv_direct::conv2d(&g, params, input, filter, bias, output, filter_t, im2col);
        return Ok(());
    }
    for group in 0..g.groups {
        // This group's filters, [group_out, patch] row-major, transposed so
        // that the product reads them with contiguous rows.
        let rows = &filter[group * group_out * patch..(group + 1) * group_out * patch];
        let rhs = transpose_into(MatRef::row_major(rows, group_out, patch).t(), filter_t)?;
        for b in 0..g.batches {
            let image = &input[b * g.in_h * g.in_w * g.in_c..(b + 1) * g.in_h * g.in_w * g.in_c];
            let lhs = if g.is_pointwise(params) {
                MatRef::row_major(image, pixels, patch)
            } else {
                fill_im2col(&g, params, image, group, &mut im2col[..pixels * patch]);
                MatRef::row_major(&im2col[..pixels * patch], pixels, patch)
            };
            let start = b * pixels * g.out_c + group * group_out;
            let dst = MatMut {
                data: &mut output[start..],
                rows: pixels,
                cols: group_out,
                row_stride: g.out_c,
                col_stride: 1,
            };
            matmul(dst, lhs, rhs)?;
        }
    }
    add_bias_and_activate(output, g.out_c, bias, params.activation);
    Ok(())
}

/// Writes one image's receptive fields for `group` as rows of `patches`
/// (`[pixels, filter_h * filter_w * filter_c]`), zeros outside the image.
fn fill_im2col(
    g: &ConvGeometry,
    params: &Conv2DParams,
    image: &[f32],
    group: usize,
    patches: &mut [f32],
) {
    let c0 = group * g.filter_c;
    let mut rows = patches.chunks_exact_mut(g.patch_len());
    for oy in 0..g.rows.out {
        for ox in 0..g.cols.out {
            let Some(row) = rows.next() else { return };
            let mut taps = row.chunks_exact_mut(g.filter_c.max(1));
            for fy in 0..g.filter_h {
                let iy = (oy * params.stride_h + fy * params.dilation_h).checked_sub(g.rows.pad);
                for fx in 0..g.filter_w {
                    let ix =
                        (ox * params.stride_w + fx * params.dilation_w).checked_sub(g.cols.pad);
                    let Some(tap) = taps.next() else { return };
                    match (iy, ix) {
                        (Some(iy), Some(ix)) if iy < g.in_h && ix < g.in_w => {
                            let at = (iy * g.in_w + ix) * g.in_c + c0;
                            tap.copy_from_slice(&image[at..at + g.filter_c]);
                        }
                        _ => tap.fill(0.0),
                    }
                }
            }
        }
    }
}

/// `out[.., c] = act(out[.., c] + bias[c])` over rows of `channels`.
fn add_bias_and_activate(
    output: &mut [f32],
    channels: usize,
    bias: Option<&[f32]>,
    activation: Activation,
) {
    let act = ActivationRange::<f32>::new(activation);
    match bias {
        Some(bias) => {
            for row in output.chunks_exact_mut(channels.max(1)) {
                for (o, &b) in row.iter_mut().zip(bias) {
                    *o = act.apply(*o + b);
                }
            }
        }
        None => act.apply_all(output),
    }
}

/// DEPTHWISE_CONV_2D's output shape, `[batches, out_height, out_width,
/// channels * multiplier]`, for an NHWC `input` and a `[1, height, width,
/// channels * multiplier]` filter.
pub fn depthwise_conv2d_shape(
    input: &[usize],
    filter: &[usize],
    bias: Option<&[usize]>,
    params: &DepthwiseConv2DParams,
) -> Result<Vec<usize>> {
    Ok(
        geometry("DEPTHWISE_CONV_2D", input, filter, bias, params, true)?
            .out_shape()
            .to_vec(),
    )
}

/// DEPTHWISE_CONV_2D: each input channel `c` convolved with its own
/// `multiplier` filters into output channels `c * multiplier + m`, plus
/// bias, then the activation. Needs no scratch; allocates nothing.
#[allow(clippy::too_many_arguments)]
pub fn depthwise_conv2d(
    params: &DepthwiseConv2DParams,
    input_shape: &[usize],
    input: &[f32],
    filter_shape: &[usize],
    filter: &[f32],
    bias: Option<&[f32]>,
    output: &mut [f32],
) -> Result<()> {
    let g = CallShapes {
        input_shape,
        input,
        filter_shape,
        filter: Some(filter),
        bias,
        output,
    }
    .check("DEPTHWISE_CONV_2D", params, true)?;
    if output.is_empty() {
        return Ok(());
    }
    conv_direct::depthwise_conv2d(
        &g,
        params,
        input,
        conv_direct::DepthwiseWeights::Strided(filter),
        bias,
        output,
    );
    Ok(())
}

/// A convolution's filter packed once (in `prepare`, when it is a constant
/// of the model) into the layout of the direct loops' register blocks, for
/// [`conv2d_packed`] and [`depthwise_conv2d_packed`]: CONV_2D then skips
/// packing it on each call, DEPTHWISE_CONV_2D reads each tap's weights as
/// consecutive floats instead of gathering them.
///
/// ```
/// use op_lite::builtins::math::conv::{Conv2DParams, PackedFilter, depthwise_conv2d_packed};
/// use op_lite::model::{Activation, Padding};
/// let params = Conv2DParams {
///     padding: Padding::Valid, stride_h: 1, stride_w: 1,
///     dilation_h: 1, dilation_w: 1, activation: Activation::None,
/// };
/// // One channel, multiplier 2: a 1x1 filter scaling by 2 and by -1.
/// let packed = PackedFilter::depthwise_conv2d(&params, &[1, 1, 2, 1], &[1, 1, 1, 2], &[2.0, -1.0]).unwrap();
/// let mut out = [0.0f32; 4];
/// depthwise_conv2d_packed(&params, &[1, 1, 2, 1], &[1.0, 3.0], &packed, None, &mut out).unwrap();
/// assert_eq!(out, [2.0, -1.0, 6.0, -3.0]);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct PackedFilter {
    depthwise: bool,
    filter_shape: [usize; 4],
    /// The lanes of the register blocks it was packed for.
    lanes: usize,
    data: Vec<f32>,
}

impl PackedFilter {
    /// CONV_2D's OHWI `filter` packed for inputs of `input_shape`'s
    /// channels, or `None` where CONV_2D does not take the channel-last
    /// direct loops: past 8 output channels or with groups (the GEMM path
    /// transposes its filter on each call), and at stride 1 with fewer than
    /// 8 (the planar loops read the filter as the model holds it).
    pub fn conv2d(
        params: &Conv2DParams,
        input_shape: &[usize],
        filter_shape: &[usize],
        filter: &[f32],
    ) -> Result<Option<PackedFilter>> {
        let g = geometry("CONV_2D", input_shape, filter_shape, None, params, false)?;
        check_len_of("CONV_2D", "the filter", filter.len(), filter_shape)?;
        if !g.takes_packed_filter(params) {
            return Ok(None);
        }
        let mut data = vec![0.0; filter.len()];
        conv_direct::pack_filter(&g, filter, &mut data);
        Ok(Some(PackedFilter {
            depthwise: false,
            filter_shape: [g.out_c, g.filter_h, g.filter_w, g.filter_c],
            lanes: conv_direct::block_lanes(g.out_c),
            data,
        }))
    }

    /// DEPTHWISE_CONV_2D's `filter` (`[1, height, width, channels *
    /// multiplier]`) packed for inputs of `input_shape`'s channels.
    pub fn depthwise_conv2d(
        params: &DepthwiseConv2DParams,
        input_shape: &[usize],
        filter_shape: &[usize],
        filter: &[f32],
    ) -> Result<PackedFilter> {
        let g = geometry(
            "DEPTHWISE_CONV_2D",
            input_shape,
            filter_shape,
            None,
            params,
            true,
        )?;
        check_len_of(
            "DEPTHWISE_CONV_2D",
            "the filter",
            filter.len(),
            filter_shape,
        )?;
        let mut data = vec![0.0; filter.len()];
        conv_direct::pack_depthwise(&g, filter, &mut data);
        Ok(PackedFilter {
            depthwise: true,
            filter_shape: [1, g.filter_h, g.filter_w, g.out_c],
            lanes: conv_direct::block_lanes(g.in_c),
            data,
        })
    }

    /// The shape of the filter it packs.
    pub fn filter_shape(&self) -> [usize; 4] {
        self.filter_shape
    }

    /// The geometry of a call with this filter and these slices
    /// ([`CallShapes::check`]), of DEPTHWISE_CONV_2D or CONV_2D as
    /// `depthwise` says, once it is sure the filter was packed by that op's
    /// constructor for the lanes the call takes.
    fn check_call(
        &self,
        params: &Conv2DParams,
        depthwise: bool,
        input_shape: &[usize],
        input: &[f32],
        bias: Option<&[f32]>,
        output: &[f32],
    ) -> Result<ConvGeometry> {
        let op = if depthwise {
            "DEPTHWISE_CONV_2D"
        } else {
            "CONV_2D"
        };
        let g = CallShapes {
            input_shape,
            input,
            filter_shape: &self.filter_shape,
            filter: None,
            bias,
            output,
        }
        .check(op, params, depthwise)?;
        let lanes = conv_direct::block_lanes(if depthwise { g.in_c } else { g.out_c });
        if self.depthwise != depthwise || self.lanes != lanes {
            return Err(Error::invalid_argument(format!(
                "{op}: the packed filter was packed for another op or input"
            )));
        }
        Ok(g)
    }
}

/// [`conv2d`] with its filter packed by [`PackedFilter::conv2d`] (for an
/// input with these channels); `scratch` as [`conv2d`]'s.
#[allow(clippy::too_many_arguments)]
pub fn conv2d_packed(
    params: &Conv2DParams,
    input_shape: &[usize],
    input: &[f32],
    packed: &PackedFilter,
    bias: Option<&[f32]>,
    output: &mut [f32],
    scratch: &mut [f32],
) -> Result<()> {
    let g = packed.check_call(params, false, input_shape, input, bias, output)?;
    if !g.takes_packed_filter(params) {
        return Err(Error::invalid_argument(
            "CONV_2D: a packed filter needs the direct loops",
        ));
    }
    check_scratch(&g, params, scratch)?;
    if output.is_empty() {
        return Ok(());
    }
    let (_, pad) = scratch.split_at_mut(g.patch_len() * g.out_c);
    conv_direct::conv2d_prepacked(&g, params, input, &packed.data, bias, output, pad);
    Ok(())
}

/// [`depthwise_conv2d`] with its filter packed by
/// [`PackedFilter::depthwise_conv2d`] (for an input with these channels).
pub fn depthwise_conv2d_packed(
    params: &DepthwiseConv2DParams,
    input_shape: &[usize],
    input: &[f32],
    packed: &PackedFilter,
    bias: Option<&[f32]>,
    output: &mut [f32],
) -> Result<()> {
    let g = packed.check_call(params, true, input_shape, input, bias, output)?;
    if output.is_empty() {
        return Ok(());
    }
    conv_direct::depthwise_conv2d(
        &g,
        params,
        input,
        conv_direct::DepthwiseWeights::Packed(&packed.data),
        bias,
        output,
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_follow_compute_padding_height_width() {
        // SAME: ceil(in / stride), padding centred, the odd one after.
        assert_eq!(
            window(Padding::Same, 4, 3, 1, 1).unwrap(),
            Window { out: 4, pad: 1 }
        );
        assert_eq!(
            window(Padding::Same, 4, 4, 1, 1).unwrap(),
            Window { out: 4, pad: 1 }
        );
        assert_eq!(
            window(Padding::Same, 7, 3, 2, 2).unwrap(),
            Window { out: 4, pad: 2 }
        );
        // A stride past the filter: windows skip inputs.
        assert_eq!(
            window(Padding::Valid, 10, 2, 5, 1).unwrap(),
            Window { out: 2, pad: 0 }
        );
        // A filter larger than the input: SAME pads it, VALID has no room.
        assert_eq!(
            window(Padding::Same, 2, 5, 1, 1).unwrap(),
            Window { out: 2, pad: 2 }
        );
        assert_eq!(
            window(Padding::Valid, 3, 5, 2, 1).unwrap(),
            Window { out: 0, pad: 0 }
        );
        assert!(window(Padding::Valid, 2, 5, 1, 1).is_err());
        assert!(window(Padding::Same, 2, 3, 0, 1).is_err());
        assert!(window(Padding::Same, 2, usize::MAX, 1, 2).is_err());
    }

    #[test]
    fn mismatched_channels_are_errors_not_panics() {
        let p = Conv2DParams {
            padding: Padding::Same,
            stride_h: 1,
            stride_w: 1,
            dilation_h: 1,
            dilation_w: 1,
            activation: Activation::None,
        };
        assert!(conv2d_shape(&[1, 4, 4, 3], &[2, 3, 3, 2], None, &p).is_err());
        assert!(conv2d_shape(&[1, 4, 4, 4], &[3, 3, 3, 2], None, &p).is_err());
        assert!(conv2d_shape(&[1, 4, 4, 4], &[2, 3, 3, 2], Some(&[3]), &p).is_err());
        assert!(conv2d_shape(&[1, 4, 4], &[2, 3, 3, 2], None, &p).is_err());
        assert!(depthwise_conv2d_shape(&[1, 4, 4, 3], &[1, 3, 3, 4], None, &p).is_err());
        assert!(depthwise_conv2d_shape(&[1, 4, 4, 3], &[2, 3, 3, 3], None, &p).is_err());
        assert_eq!(
            conv2d_shape(&[1, 4, 4, 4], &[6, 3, 3, 2], None, &p).unwrap(),
            [1, 4, 4, 6]
        );
    }
}
