//! Direct (im2col-free) convolution loops for small channel counts: every
//! DEPTHWISE_CONV_2D, and CONV_2D of one group with at most
//! [`DIRECT_MAX_OUT`] output channels.
//!
//! # Why
//!
//! On such shapes the matrix product is tiny and its set-up dominates: the
//! im2col copies are a few floats each (a `memcpy` call per filter tap), and
//! a GEMM over 4 output channels fills a quarter of its registers. These
//! loops read the input in place and keep a register block of `MR` output
//! pixels by `NR` output channels ([`Kernel::compute`]): `MR` independent
//! sums hide the latency of the additions, and the `NR` lanes are plain
//! `[f32; NR]` arrays, multiplied and added by the `simd` module's
//! `MulAdd`: fused, in AVX2 registers, where the processor has AVX2 and FMA
//! (the whole walk is then compiled for them), SSE otherwise. CONV_2D's
//! filter is packed first (`pack_filter`) so that each block's weights
//! are read in order, `NR` at a time. Taps outside the input are never visited: each output
//! row's filter rows, and each block's filter columns, are the ranges of
//! [`valid_taps`]; pixels whose window crosses the left or right border go
//! one at a time (`MR = 1`).
//!
//! CONV_2D at stride 1 with fewer than 8 output channels (the cnn model's
//! first layer has 4) would leave those lanes half empty or scalar: it
//! takes [`conv2d_planar`] instead, whose lanes are 8 neighbouring output
//! pixels of one channel, read from the image copied once into per-channel
//! planes.
//!
//! Each output is still `bias + Σ taps`, over the filter rows, then
//! columns, then input channels, as TensorFlow Lite's reference kernels
//! sum, so results match them to rounding (the fused multiply-adds round
//! once per tap where the reference rounds twice).

use std::ops::Range;

use super::common::ActivationRange;
use super::conv::{Conv2DParams, ConvGeometry, Window};
use super::simd::{MulAdd, WithMulAdd, dispatch};

/// CONV_2D takes the direct loops up to this many output channels (one
/// group); past it the GEMM (AVX2 and FMA through nano-gemm) wins.
pub(super) const DIRECT_MAX_OUT: usize = 8;

/// The filter taps `f` in `0..filter` whose input index `o * stride + f *
/// dilation - pad` lies in `0..input`: a range, since the index grows with
/// `f`.
pub(super) fn valid_taps(
    o: usize,
    stride: usize,
    dilation: usize,
    pad: usize,
    filter: usize,
    input: usize,
) -> Range<usize> {
    // The input index of tap f, plus pad: origin + f * dilation.
    let origin = o * stride;
    let start = pad.saturating_sub(origin).div_ceil(dilation);
    let end = (input + pad)
        .saturating_sub(origin)
        .div_ceil(dilation)
        .min(filter);
    start.min(end)..end
}

/// One convolution's inner work, `NR` output channels at a time.
trait Kernel<const NR: usize> {
    /// The number of `NR`-channel blocks of the output.
    fn blocks(&self) -> usize;

    /// Block `cb`'s lanes: the output channel of lane 0 and the distance
    /// between consecutive lanes' channels.
    fn lanes(&self, cb: usize) -> (usize, usize);

    /// The sums of block `cb` for the `M` output pixels `(oy, ox0 + j)`
    /// over filter rows `fys` and columns `fxs` (all in bounds for every
    /// pixel), from one batch's `image`, multiplying and adding with
    /// `arith`.
    #[allow(clippy::too_many_arguments)]
    fn compute<const M: usize, A: MulAdd>(
        &self,
        arith: A,
        image: &[f32],
        oy: usize,
        ox0: usize,
        cb: usize,
        fys: Range<usize>,
        fxs: Range<usize>,
    ) -> [[f32; NR]; M];
}

/// CONV_2D of one group: `packed` is the filter packed by
/// [`pack_filter`], `[out_c / NR, taps * in_c, NR]`, so that a block's
/// weights for one tap are `NR` consecutive floats, and a block's taps
/// follow each other.
struct Dense<'a> {
    g: &'a ConvGeometry,
    params: &'a Conv2DParams,
    packed: &'a [f32],
}

impl<const NR: usize> Kernel<NR> for Dense<'_> {
    fn blocks(&self) -> usize {
        self.g.out_c / NR
    }

    fn lanes(&self, cb: usize) -> (usize, usize) {
        (cb * NR, 1)
    }

    #[inline(always)]
    fn compute<const M: usize, A: MulAdd>(
        &self,
        arith: A,
        image: &[f32],
        oy: usize,
        ox0: usize,
        cb: usize,
        fys: Range<usize>,
        fxs: Range<usize>,
    ) -> [[f32; NR]; M] {
        let (g, p) = (self.g, self.params);
        let c = g.in_c;
        let pixel_step = p.stride_w * c;
        let block_len = g.filter_h * g.filter_w * c * NR;
        let block = &self.packed[cb * block_len..][..block_len];
        let mut acc = [[0.0f32; NR]; M];
        for fy in fys {
            let iy = oy * p.stride_h + fy * p.dilation_h - g.rows.pad;
            let row = &image[iy * g.in_w * c..][..g.in_w * c];
            // Without dilation a window row's taps are one contiguous run
            // of the input row (filter columns times channels): one loop
            // over it instead of one per filter column.
            let (runs, run) = if p.dilation_w == 1 {
                (1, fxs.len() * c)
            } else {
                (fxs.len(), c)
            };
            for r in 0..runs {
                let fx = fxs.start + r;
                let ix0 = ox0 * p.stride_w + fx * p.dilation_w - g.cols.pad;
                // Each pixel's run, sliced once so that the loop below
                // indexes without bounds checks.
                let pixels: [&[f32]; M] =
                    std::array::from_fn(|j| &row[ix0 * c + j * pixel_step..][..run]);
                let taps = &block[(fy * g.filter_w + fx) * c * NR..][..run * NR];
                let (taps, _) = taps.as_chunks::<NR>();
                // As long as each pixel's run: no bounds checks below.
                let taps = &taps[..run];
                for (q, w) in taps.iter().enumerate() {
                    for (acc, pixel) in acc.iter_mut().zip(&pixels) {
                        arith.mul_add_scalar(acc, pixel[q], w);
                    }
                }
            }
        }
        acc
    }
}

/// DEPTHWISE_CONV_2D's weights: the filter as the model holds it
/// (`[taps, out_c]`; a block's lanes are gathered, `m` apart, once per
/// tap), or packed by [`pack_depthwise`] (`[blocks, taps, NR]`: a block's
/// weights for one tap are `NR` consecutive floats, its taps follow each
/// other).
#[derive(Copy, Clone, Debug)]
pub(super) enum DepthwiseWeights<'a> {
    /// The filter, `[1, filter_h, filter_w, out_c]`.
    Strided(&'a [f32]),
    /// The filter packed by [`pack_depthwise`].
    Packed(&'a [f32]),
}

/// DEPTHWISE_CONV_2D: block `cb` is input channels `NR * (cb / m)..` times
/// multiplier index `cb % m`, whose output channels are `m` apart.
struct Depthwise<'a> {
    g: &'a ConvGeometry,
    params: &'a Conv2DParams,
    weights: DepthwiseWeights<'a>,
}

impl<const NR: usize> Kernel<NR> for Depthwise<'_> {
    fn blocks(&self) -> usize {
        self.g.in_c / NR * self.g.filter_c
    }

    fn lanes(&self, cb: usize) -> (usize, usize) {
        let m = self.g.filter_c;
        ((cb / m) * NR * m + cb % m, m)
    }

    #[inline(always)]
    fn compute<const M: usize, A: MulAdd>(
        &self,
        arith: A,
        image: &[f32],
        oy: usize,
        ox0: usize,
        cb: usize,
        fys: Range<usize>,
        fxs: Range<usize>,
    ) -> [[f32; NR]; M] {
        let (g, p) = (self.g, self.params);
        let (c, oc, m) = (g.in_c, g.out_c, g.filter_c);
        let taps = g.filter_h * g.filter_w;
        let c0 = (cb / m) * NR;
        let (first, step) = <Self as Kernel<NR>>::lanes(self, cb);
        let pixel_step = p.stride_w * c;
        // When the block's pixels follow each other in the input (stride
        // 1 and NR channels: cnn's 4-channel depthwise), the M pixels' NR
        // lanes are one contiguous run, as the sums are: the loop goes
        // eight lanes at a time over both (two pixels per AVX2 register
        // where NR is 4), the tap's weights repeated.
        let flat = pixel_step == NR && 8 % NR == 0 && (M * NR).is_multiple_of(8);
        let mut acc = [[0.0f32; NR]; M];
        for fy in fys {
            let iy = oy * p.stride_h + fy * p.dilation_h - g.rows.pad;
            let row = &image[iy * g.in_w * c..][..g.in_w * c];
            for fx in fxs.clone() {
                let ix0 = ox0 * p.stride_w + fx * p.dilation_w - g.cols.pad;
                let xs = &row[ix0 * c + c0..][..(M - 1) * pixel_step + NR];
                let tap = fy * g.filter_w + fx;
                // Read once per tap, shared by the block's M pixels.
                let w: [f32; NR] = match self.weights {
                    DepthwiseWeights::Packed(packed) => *packed[(cb * taps + tap) * NR..]
                        .first_chunk::<NR>()
                        .expect("NR packed lanes"),
                    DepthwiseWeights::Strided(filter) => {
                        let taps = &filter[tap * oc..][..oc];
                        std::array::from_fn(|l| taps[first + l * step])
                    }
                };
                if flat {
                    let w8: [f32; 8] = std::array::from_fn(|l| w[l % NR]);
                    let (xs8, _) = xs[..M * NR].as_chunks::<8>();
                    let (acc8, _) = acc.as_flattened_mut().as_chunks_mut::<8>();
                    for (acc, x) in acc8.iter_mut().zip(xs8) {
                        arith.mul_add(acc, x, &w8);
                    }
                } else {
                    for (j, acc) in acc.iter_mut().enumerate() {
                        let x: &[f32; NR] =
                            xs[j * pixel_step..][..NR].try_into().expect("NR lanes");
                        arith.mul_add(acc, x, &w);
                    }
                }
            }
        }
        acc
    }
}

/// Runs `kernel` over every output pixel: blocks of `MR` (or 4) pixels
/// where their windows lie inside the row, single pixels at the borders. `MR`
/// times `NR` is 32 lanes, eight SSE registers of sums.
#[inline(always)]
fn walk<const NR: usize, const MR: usize, K: Kernel<NR>, A: MulAdd>(
    arith: A,
    kernel: &K,
    g: &ConvGeometry,
    params: &Conv2DParams,
    input: &[f32],
    bias: Option<&[f32]>,
    output: &mut [f32],
) {
    let act = ActivationRange::<f32>::new(params.activation);
    let (out_h, out_w, oc) = (g.rows.out, g.cols.out, g.out_c);
    let image_len = g.in_h * g.in_w * g.in_c;
    let cols = |ox: usize| {
        valid_taps(
            ox,
            params.stride_w,
            params.dilation_w,
            g.cols.pad,
            g.filter_w,
            g.in_w,
        )
    };
    let full = 0..g.filter_w;
    for b in 0..g.batches {
        let image = &input[b * image_len..][..image_len];
        let out_image = &mut output[b * out_h * out_w * oc..][..out_h * out_w * oc];
        for oy in 0..out_h {
            let fys = valid_taps(
                oy,
                params.stride_h,
                params.dilation_h,
                g.rows.pad,
                g.filter_h,
                g.in_h,
            );
            let out_row = &mut out_image[oy * out_w * oc..][..out_w * oc];
            let mut ox = 0;
            while ox < out_w {
                let fxs = cols(ox);
                // The pixels whose windows fit are consecutive: checking
                // the block's first and last is enough.
                let fits = |n: usize| fxs == full && ox + n <= out_w && cols(ox + n - 1) == full;
                // The widest block that fits: MR pixels, 4, or one.
                let n = if fits(MR) {
                    MR
                } else if MR > 4 && fits(4) {
                    4
                } else {
                    1
                };
                let out = &mut out_row[ox * oc..][..n * oc];
                for cb in 0..kernel.blocks() {
                    let lanes = kernel.lanes(cb);
                    match n {
                        1 => {
                            let acc = kernel.compute::<1, A>(
                                arith,
                                image,
                                oy,
                                ox,
                                cb,
                                fys.clone(),
                                fxs.clone(),
                            );
                            store(&acc, lanes, bias, act, out, oc);
                        }
                        4 => {
                            let acc = kernel.compute::<4, A>(
                                arith,
                                image,
                                oy,
                                ox,
                                cb,
                                fys.clone(),
                                full.clone(),
                            );
                            store(&acc, lanes, bias, act, out, oc);
                        }
                        _ => {
                            let acc = kernel.compute::<MR, A>(
                                arith,
                                image,
                                oy,
                                ox,
                                cb,
                                fys.clone(),
                                full.clone(),
                            );
                            store(&acc, lanes, bias, act, out, oc);
                        }
                    }
                }
                ox += n;
            }
        }
    }
}

/// [`walk`]'s arguments, for [`dispatch`].
struct Walk<'a, const NR: usize, const MR: usize, K> {
    kernel: &'a K,
    g: &'a ConvGeometry,
    params: &'a Conv2DParams,
    input: &'a [f32],
    bias: Option<&'a [f32]>,
    output: &'a mut [f32],
}

impl<const NR: usize, const MR: usize, K: Kernel<NR>> WithMulAdd for Walk<'_, NR, MR, K> {
    type Output = ();

    #[inline(always)]
    fn run<A: MulAdd>(self, arith: A) {
        let Walk {
            kernel,
            g,
            params,
            input,
            bias,
            output,
        } = self;
        walk::<NR, MR, K, A>(arith, kernel, g, params, input, bias, output);
    }
}

/// The lanes of a register block over `channels` channels (CONV_2D's
/// output channels, DEPTHWISE_CONV_2D's input channels): 8, 4 or 1.
pub(super) fn block_lanes(channels: usize) -> usize {
    match channels {
        c if c % 8 == 0 => 8,
        c if c % 4 == 0 => 4,
        _ => 1,
    }
}

/// [`walk`] with the best multiply-add of this processor, in blocks of
/// [`block_lanes`]`(channels)` lanes by as many pixels as make 32 sums.
fn run<K: Kernel<8> + Kernel<4> + Kernel<1>>(
    kernel: &K,
    channels: usize,
    g: &ConvGeometry,
    params: &Conv2DParams,
    input: &[f32],
    bias: Option<&[f32]>,
    output: &mut [f32],
) {
    fn blocks<const NR: usize, const MR: usize, K: Kernel<NR>>(
        kernel: &K,
        g: &ConvGeometry,
        params: &Conv2DParams,
        input: &[f32],
        bias: Option<&[f32]>,
        output: &mut [f32],
    ) {
        dispatch(Walk::<NR, MR, K> {
            kernel,
            g,
            params,
            input,
            bias,
            output,
        });
    }
    match block_lanes(channels) {
        8 => blocks::<8, 4, K>(kernel, g, params, input, bias, output),
        4 => blocks::<4, 8, K>(kernel, g, params, input, bias, output),
        _ => blocks::<1, 8, K>(kernel, g, params, input, bias, output),
    }
}

/// Writes `act(acc + bias)` for `M` consecutive pixels of `oc` channels,
/// lane `l` to channel `first + l * step`.
#[inline(always)]
fn store<const NR: usize, const M: usize>(
    acc: &[[f32; NR]; M],
    (first, step): (usize, usize),
    bias: Option<&[f32]>,
    act: ActivationRange<f32>,
    out: &mut [f32],
    oc: usize,
) {
    for (sums, pixel) in acc.iter().zip(out.chunks_exact_mut(oc)) {
        for (l, &sum) in sums.iter().enumerate() {
            let o = first + l * step;
            // Without a bias nothing is added, as in the reference (where
            // adding 0 would turn -0 into +0).
            pixel[o] = act.apply(match bias {
                Some(bias) => sum + bias[o],
                None => sum,
            });
        }
    }
}

/// The geometry of one image zero-padded so that no window leaves it (the
/// same convolution, without padding), when `g` pads at all.
///
/// CONV_2D pads into its scratch: its windows then all lie inside, so every
/// pixel goes in a register block (a 12-pixel row with SAME padding would
/// otherwise leave a third of its pixels to the one-pixel loop). The padded
/// taps add `0 * w`, as the im2col path's zeros do.
pub(super) fn padded(g: &ConvGeometry, params: &Conv2DParams) -> Option<ConvGeometry> {
    if g.rows.pad == 0 && g.cols.pad == 0 {
        return None;
    }
    Some(padded_extent(g, params))
}

/// The geometry of one image zero-padded on every side its windows reach
/// past, even when only the bottom or right edge is (SAME with an even
/// filter pads there alone: [`padded`] leaves that to [`valid_taps`]).
fn padded_extent(g: &ConvGeometry, params: &Conv2DParams) -> ConvGeometry {
    // The last window's far edge, or the padded input's, whichever is
    // further: (out - 1) * stride + (filter - 1) * dilation + 1.
    let reach = |out: usize, stride: usize, filter: usize, dilation: usize, pad: usize, input| {
        (out.saturating_sub(1) * stride + (filter - 1) * dilation + 1).max(input + pad)
    };
    ConvGeometry {
        batches: 1,
        in_h: reach(
            g.rows.out,
            params.stride_h,
            g.filter_h,
            params.dilation_h,
            g.rows.pad,
            g.in_h,
        ),
        in_w: reach(
            g.cols.out,
            params.stride_w,
            g.filter_w,
            params.dilation_w,
            g.cols.pad,
            g.in_w,
        ),
        rows: Window { pad: 0, ..g.rows },
        cols: Window { pad: 0, ..g.cols },
        ..*g
    }
}

/// Copies one image of `g` into `dst` as the zero-padded image of
/// `padded` (from [`padded`]).
fn pad_image(g: &ConvGeometry, padded: &ConvGeometry, image: &[f32], dst: &mut [f32]) {
    let c = g.in_c;
    let (row, padded_row) = (g.in_w * c, padded.in_w * c);
    let dst = &mut dst[..padded.in_h * padded_row];
    dst.fill(0.0);
    for (y, src) in image.chunks_exact(row).enumerate() {
        let at = (y + g.rows.pad) * padded_row + g.cols.pad * c;
        dst[at..at + row].copy_from_slice(src);
    }
}

/// The `g.batches` images of `input`, each beside its image of `output`,
/// for the loops that work an image at a time.
fn images<'a>(
    g: &ConvGeometry,
    input: &'a [f32],
    output: &'a mut [f32],
) -> impl Iterator<Item = (&'a [f32], &'a mut [f32])> {
    let image_len = g.in_h * g.in_w * g.in_c;
    let out_len = g.rows.out * g.cols.out * g.out_c;
    input
        .chunks_exact(image_len.max(1))
        .zip(output.chunks_exact_mut(out_len.max(1)))
        .take(g.batches)
}

/// Packs CONV_2D's OHWI `filter` (one group) into `packed` as `[out_c /
/// NR, taps * in_c, NR]` ([`Dense`]'s layout, `NR` from [`block_lanes`]);
/// returns the packed elements, `out_c * taps * in_c`.
pub(super) fn pack_filter<'p>(
    g: &ConvGeometry,
    filter: &[f32],
    packed: &'p mut [f32],
) -> &'p [f32] {
    let nr = block_lanes(g.out_c);
    let k = g.filter_h * g.filter_w * g.in_c;
    let packed = &mut packed[..k * g.out_c];
    for (o, row) in filter.chunks_exact(k.max(1)).take(g.out_c).enumerate() {
        let block = &mut packed[(o / nr) * k * nr..][..k * nr];
        for (w, &v) in block.iter_mut().skip(o % nr).step_by(nr).zip(row) {
            *w = v;
        }
    }
    packed
}

/// CONV_2D of one group into `output` (shapes checked by the caller):
/// `filter` is OHWI, `packed` holds at least its elements (packed here),
/// and `pad` at least one padded image when `g` pads (see [`padded`]).
#[allow(clippy::too_many_arguments)]
pub(super) fn conv2d(
    g: &ConvGeometry,
    params: &Conv2DParams,
    input: &[f32],
    filter: &[f32],
    bias: Option<&[f32]>,
    output: &mut [f32],
    packed: &mut [f32],
    pad: &mut [f32],
) {
    let packed = pack_filter(g, filter, packed);
    conv2d_prepacked(g, params, input, packed, bias, output, pad);
}

/// [`conv2d`] with its filter already packed by [`pack_filter`].
pub(super) fn conv2d_prepacked(
    g: &ConvGeometry,
    params: &Conv2DParams,
    input: &[f32],
    packed: &[f32],
    bias: Option<&[f32]>,
    output: &mut [f32],
    pad: &mut [f32],
) {
    if let Some(p) = padded(g, params) {
        for (image, out) in images(g, input, output) {
            pad_image(g, &p, image, pad);
            conv2d_unpadded(&p, params, pad, packed, bias, out);
        }
    } else {
        conv2d_unpadded(g, params, input, packed, bias, output);
    }
}

fn conv2d_unpadded(
    g: &ConvGeometry,
    params: &Conv2DParams,
    input: &[f32],
    packed: &[f32],
    bias: Option<&[f32]>,
    output: &mut [f32],
) {
    let kernel = Dense { g, params, packed };
    run(&kernel, g.out_c, g, params, input, bias, output);
}

/// The zeros after each plane of [`conv2d_planar`]'s scratch: its last
/// register block reads up to `8 * PLANAR_MAX_BLOCK - 1` floats past the
/// last output position.
const PLANAR_TAIL: usize = 8 * PLANAR_MAX_BLOCK;

/// The most 8-lane position vectors one register block of
/// [`conv2d_planar`] holds per output channel.
const PLANAR_MAX_BLOCK: usize = 4;

/// Whether CONV_2D takes [`conv2d_planar`]: one group, stride 1, and an
/// output channel count that would leave the channel-last loops' lanes
/// partly empty (1 to 7 channels: `Dense` then runs 4 lanes or one).
pub(super) fn is_planar(g: &ConvGeometry, params: &Conv2DParams) -> bool {
    g.groups == 1 && g.out_c < 8 && params.stride_h == 1 && params.stride_w == 1
}

/// The geometry of [`conv2d_planar`]'s padded planes for `g`: the image
/// as [`padded`] (or `g` itself when it does not pad), and the floats of
/// one plane, `in_h * in_w` plus [`PLANAR_TAIL`].
fn planar_planes(g: &ConvGeometry, params: &Conv2DParams) -> (ConvGeometry, usize) {
    let p = padded_extent(g, params);
    (p, p.in_h * p.in_w + PLANAR_TAIL)
}

/// The scratch elements [`conv2d_planar`] needs, `None` on overflow.
pub(super) fn planar_scratch_len(g: &ConvGeometry, params: &Conv2DParams) -> Option<usize> {
    let p = padded_extent(g, params);
    p.in_h
        .checked_mul(p.in_w)?
        .checked_add(PLANAR_TAIL)?
        .checked_mul(g.in_c)
}

/// CONV_2D at stride 1 with few output channels (see [`is_planar`]), into
/// `output`; `filter` is OHWI as the model holds it and `scratch` has
/// [`planar_scratch_len`] elements (shapes checked by the caller).
///
/// # Why
///
/// With 4 output channels (cnn's first layer) the channel-last loops fill
/// half an AVX2 register, with 1 to 3 a single lane. Here the lanes are 8
/// consecutive output pixels instead: the image is copied once into
/// zero-padded planes, one per input channel, so that the inputs of 8
/// neighbouring pixels for one tap are 8 consecutive floats. The pixels
/// are numbered across each padded row (`oy * padded_w + ox`), which makes
/// a tap one fixed offset for every pixel; the `padded_w - out_w` numbers
/// past each row's end are computed and dropped. Each output still sums
/// its taps over the filter rows, then columns, then input channels,
/// rounding as the other direct loops do.
pub(super) fn conv2d_planar(
    g: &ConvGeometry,
    params: &Conv2DParams,
    input: &[f32],
    filter: &[f32],
    bias: Option<&[f32]>,
    output: &mut [f32],
    scratch: &mut [f32],
) {
    let (p, plane) = planar_planes(g, params);
    let planes = &mut scratch[..plane * g.in_c];
    for (image, out) in images(g, input, output) {
        fill_planes(g, &p, plane, image, planes);
        dispatch(Planar {
            g,
            padded: &p,
            plane,
            params,
            planes,
            filter,
            bias,
            output: out,
        });
    }
}

/// Copies one NHWC image of `g` into `planes`: channel `c` at `c * plane`,
/// row `y` at `y * padded.in_w`, zeros around the image and after it.
fn fill_planes(
    g: &ConvGeometry,
    padded: &ConvGeometry,
    plane: usize,
    image: &[f32],
    planes: &mut [f32],
) {
    planes.fill(0.0);
    let c = g.in_c;
    for (y, row) in image.chunks_exact((g.in_w * c).max(1)).enumerate() {
        let at = (y + g.rows.pad) * padded.in_w + g.cols.pad;
        for ci in 0..c {
            let dst = &mut planes[ci * plane + at..][..g.in_w];
            for (dst, pixel) in dst.iter_mut().zip(row.chunks_exact(c)) {
                *dst = pixel[ci];
            }
        }
    }
}

/// [`conv2d_planar`]'s walk over one image, for [`dispatch`].
struct Planar<'a> {
    g: &'a ConvGeometry,
    padded: &'a ConvGeometry,
    plane: usize,
    params: &'a Conv2DParams,
    planes: &'a [f32],
    filter: &'a [f32],
    bias: Option<&'a [f32]>,
    output: &'a mut [f32],
}

impl WithMulAdd for Planar<'_> {
    type Output = ();

    #[inline(always)]
    fn run<A: MulAdd>(self, arith: A) {
        // Register blocks of OC channels by PB vectors of 8 pixels: at
        // most 12 AVX2 registers of sums, beside the inputs and a weight.
        match self.g.out_c {
            1 => self.walk::<1, 4, A>(arith),
            2 => self.walk::<2, 4, A>(arith),
            3 => self.walk::<3, 4, A>(arith),
            4 => self.walk::<4, 2, A>(arith),
            5 => self.walk::<5, 2, A>(arith),
            6 => self.walk::<6, 2, A>(arith),
            _ => self.walk::<7, 1, A>(arith),
        }
    }
}

impl Planar<'_> {
    #[inline(always)]
    fn walk<const OC: usize, const PB: usize, A: MulAdd>(self, arith: A) {
        const { assert!(PB <= PLANAR_MAX_BLOCK) };
        let (g, p) = (self.g, self.params);
        let (wp, c, out_w) = (self.padded.in_w, g.in_c, g.cols.out);
        let k = g.filter_h * g.filter_w * c;
        let rows: [&[f32]; OC] = std::array::from_fn(|o| &self.filter[o * k..][..k]);
        let (act, bias) = (ActivationRange::<f32>::new(p.activation), self.bias);
        // Position oy * wp + ox for output (oy, ox); the last is the last
        // row's last pixel.
        let positions = (g.rows.out - 1) * wp + out_w;
        let mut start = 0;
        while start < positions {
            let mut acc = [[[0.0f32; 8]; PB]; OC];
            let mut t = 0;
            for fy in 0..g.filter_h {
                for fx in 0..g.filter_w {
                    let at = start + fy * p.dilation_h * wp + fx * p.dilation_w;
                    for ci in 0..c {
                        let xs = &self.planes[ci * self.plane + at..][..8 * PB];
                        let (xs, _) = xs.as_chunks::<8>();
                        for (acc, row) in acc.iter_mut().zip(&rows) {
                            let w = row[t];
                            for (acc, x) in acc.iter_mut().zip(xs) {
                                arith.mul_add_scalar(acc, w, x);
                            }
                        }
                        t += 1;
                    }
                }
            }
            // The sums leave the registers by whole vectors: indexing
            // `acc` by lane below would keep it in memory all along.
            let mut sums = [[0.0f32; 8 * PLANAR_MAX_BLOCK]; OC];
            for (sums, acc) in sums.iter_mut().zip(&acc) {
                let (sums, _) = sums.as_chunks_mut::<8>();
                for (sums, acc) in sums.iter_mut().zip(acc) {
                    *sums = *acc;
                }
            }
            // Scatter the block's pixels to NHWC a row segment at a time,
            // dropping the numbers past a row's end and the last position.
            let lanes = (positions - start).min(8 * PB);
            let (mut oy, mut ox) = (start / wp, start % wp);
            let mut j = 0;
            while j < lanes {
                let take = (wp - ox).min(lanes - j);
                let kept = out_w.saturating_sub(ox).min(take);
                let out = &mut self.output[(oy * out_w + ox) * OC..][..kept * OC];
                for (pixel, lane) in out.chunks_exact_mut(OC).zip(j..) {
                    for (o, (out, sums)) in pixel.iter_mut().zip(&sums).enumerate() {
                        // Without a bias nothing is added (see `store`).
                        *out = act.apply(match bias {
                            Some(bias) => sums[lane] + bias[o],
                            None => sums[lane],
                        });
                    }
                }
                j += take;
                ox += take;
                if ox == wp {
                    (oy, ox) = (oy + 1, 0);
                }
            }
            start += 8 * PB;
        }
    }
}

/// Packs DEPTHWISE_CONV_2D's `filter` (`[1, filter_h, filter_w, out_c]`)
/// into `packed` (`out_c * taps` elements) as `[blocks, taps, NR]`, `NR`
/// from [`block_lanes`]: block `cb`'s lanes are [`Depthwise`]'s,
/// output channels `first + l * m`.
pub(super) fn pack_depthwise(g: &ConvGeometry, filter: &[f32], packed: &mut [f32]) {
    let nr = block_lanes(g.in_c);
    let (m, oc) = (g.filter_c, g.out_c);
    let taps = g.filter_h * g.filter_w;
    let packed = &mut packed[..taps * oc];
    for (cb, block) in packed.chunks_exact_mut((taps * nr).max(1)).enumerate() {
        let first = (cb / m) * nr * m + cb % m;
        for (tap, lanes) in block.chunks_exact_mut(nr).enumerate() {
            for (l, w) in lanes.iter_mut().enumerate() {
                *w = filter[tap * oc + first + l * m];
            }
        }
    }
}

/// DEPTHWISE_CONV_2D into `output` (shapes checked by the caller; packed
/// weights packed for `g`).
pub(super) fn depthwise_conv2d(
    g: &ConvGeometry,
    params: &Conv2DParams,
    input: &[f32],
    weights: DepthwiseWeights<'_>,
    bias: Option<&[f32]>,
    output: &mut [f32],
) {
    let kernel = Depthwise { g, params, weights };
    run(&kernel, g.in_c, g, params, input, bias, output);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_taps_are_the_in_bounds_ones() {
        for o in 0..6 {
            for stride in 1..4 {
                for dilation in 1..4 {
                    for pad in 0..4 {
                        for filter in 1..5 {
                            for input in 1..7 {
                                let want: Vec<usize> = (0..filter)
                                    .filter(|&f| {
                                        let i = (o * stride + f * dilation) as isize - pad as isize;
                                        (0..input as isize).contains(&i)
                                    })
                                    .collect();
                                let got: Vec<usize> =
                                    valid_taps(o, stride, dilation, pad, filter, input).collect();
                                assert_eq!(
                                    got, want,
                                    "{o} {stride} {dilation} {pad} {filter} {input}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    /// The packed depthwise weights and the gathered ones give the same
    /// sums as a plain loop, on the shapes of each path: 4 channels at
    /// stride 1 (the contiguous eight-lane run, two pixels a register), 8
    /// at stride 2, and 3 (one lane). Small enough for Miri, which runs
    /// this module's tests (through the SSE arithmetic).
    #[test]
    fn packed_depthwise_matches_plain_loops() {
        use crate::model::{Activation, Padding};
        for (c, m, stride, dilation) in [(4, 2, 1, 2), (8, 1, 2, 1), (3, 2, 1, 1), (1, 3, 1, 1)] {
            let params = Conv2DParams {
                padding: Padding::Valid,
                stride_h: stride,
                stride_w: stride,
                dilation_h: dilation,
                dilation_w: dilation,
                activation: Activation::None,
            };
            let (in_h, in_w, f) = (6, 13, 2);
            let window = |n| super::super::conv::window(Padding::Valid, n, f, stride, dilation);
            let (rows, cols) = (window(in_h).unwrap(), window(in_w).unwrap());
            let g = ConvGeometry {
                batches: 1,
                in_h,
                in_w,
                in_c: c,
                filter_h: f,
                filter_w: f,
                filter_c: m,
                out_c: c * m,
                groups: c,
                rows,
                cols,
            };
            let oc = c * m;
            let input: Vec<f32> = (0..in_h * in_w * c).map(|i| (i % 7) as f32 - 3.0).collect();
            let filter: Vec<f32> = (0..f * f * oc)
                .map(|i| (i % 5) as f32 * 0.5 - 1.0)
                .collect();
            let mut want = vec![0.0f32; rows.out * cols.out * oc];
            for oy in 0..rows.out {
                for ox in 0..cols.out {
                    for o in 0..oc {
                        let mut sum = 0.0;
                        for fy in 0..f {
                            for fx in 0..f {
                                let (iy, ix) =
                                    (oy * stride + fy * dilation, ox * stride + fx * dilation);
                                sum += input[(iy * in_w + ix) * c + o / m]
                                    * filter[(fy * f + fx) * oc + o];
                            }
                        }
                        want[(oy * cols.out + ox) * oc + o] = sum;
                    }
                }
            }
            let mut packed = vec![f32::NAN; filter.len()];
            pack_depthwise(&g, &filter, &mut packed);
            for weights in [
                DepthwiseWeights::Strided(&filter),
                DepthwiseWeights::Packed(&packed),
            ] {
                let mut got = vec![f32::NAN; want.len()];
                depthwise_conv2d(&g, &params, &input, weights, None, &mut got);
                assert_eq!(got, want, "c {c}, m {m}, stride {stride}, {weights:?}");
            }
        }
    }

    /// The planar loops give a plain loop's sums, bit for bit, for 1 to 7
    /// output channels (every register block shape), with and without
    /// padding, dilation and a bias, over two images. Small enough for
    /// Miri, which runs this module's tests.
    #[test]
    fn planar_conv_matches_plain_loops() {
        use crate::model::{Activation, Padding};
        // (output channels, input channels, padding, dilation, filter):
        // an even filter with SAME pads the bottom and right edges only.
        let cases = [
            (1, 2, Padding::Same, 1, 3),
            (2, 1, Padding::Valid, 1, 3),
            (3, 3, Padding::Same, 2, 3),
            (4, 3, Padding::Same, 1, 3),
            (4, 1, Padding::Same, 1, 2),
            (5, 2, Padding::Valid, 2, 3),
            (6, 1, Padding::Same, 1, 3),
            (7, 2, Padding::Same, 1, 2),
        ];
        for (oc, c, padding, dilation, f) in cases {
            let params = Conv2DParams {
                padding,
                stride_h: 1,
                stride_w: 1,
                dilation_h: dilation,
                dilation_w: dilation,
                activation: Activation::Relu6,
            };
            let (batches, in_h, in_w) = (2, 5, 7);
            let window = |n| super::super::conv::window(padding, n, f, 1, dilation);
            let (rows, cols) = (window(in_h).unwrap(), window(in_w).unwrap());
            let g = ConvGeometry {
                batches,
                in_h,
                in_w,
                in_c: c,
                filter_h: f,
                filter_w: f,
                filter_c: c,
                out_c: oc,
                groups: 1,
                rows,
                cols,
            };
            assert!(is_planar(&g, &params));
            let image_len = in_h * in_w * c;
            let input: Vec<f32> = (0..batches * image_len)
                .map(|i| (i % 7) as f32 - 3.0)
                .collect();
            let filter: Vec<f32> = (0..oc * f * f * c)
                .map(|i| (i % 5) as f32 * 0.5 - 1.0)
                .collect();
            let bias: Vec<f32> = (0..oc).map(|o| o as f32 - 2.5).collect();
            let mut want = vec![0.0f32; batches * rows.out * cols.out * oc];
            for b in 0..batches {
                for oy in 0..rows.out {
                    for ox in 0..cols.out {
                        for o in 0..oc {
                            let mut sum = 0.0f32;
                            for fy in 0..f {
                                for fx in 0..f {
                                    let iy = (oy + fy * dilation) as isize - rows.pad as isize;
                                    let ix = (ox + fx * dilation) as isize - cols.pad as isize;
                                    for ci in 0..c {
                                        // Padding adds 0 * w, as the loops do.
                                        let x = if (0..in_h as isize).contains(&iy)
                                            && (0..in_w as isize).contains(&ix)
                                        {
                                            input[b * image_len
                                                + (iy as usize * in_w + ix as usize) * c
                                                + ci]
                                        } else {
                                            0.0
                                        };
                                        sum += x * filter[((o * f + fy) * f + fx) * c + ci];
                                    }
                                }
                            }
                            want[((b * rows.out + oy) * cols.out + ox) * oc + o] =
                                (sum + bias[o]).clamp(0.0, 6.0);
                        }
                    }
                }
            }
            let mut scratch = vec![f32::NAN; planar_scratch_len(&g, &params).unwrap()];
            let mut got = vec![f32::NAN; want.len()];
            conv2d_planar(
                &g,
                &params,
                &input,
                &filter,
                Some(&bias),
                &mut got,
                &mut scratch,
            );
            assert_eq!(
                got, want,
                "oc {oc}, c {c}, {padding:?}, dilation {dilation}"
            );
        }
    }

    /// The SSE multiply-add (an `unsafe` block; CI runs this module's
    /// tests under Miri) and the scalar arithmetic compute the same sums.
    #[test]
    fn separate_mul_add_matches_scalar_arithmetic() {
        use super::super::simd::Separate;
        fn check<const NR: usize>() {
            let a: [f32; NR] = std::array::from_fn(|i| i as f32 * 0.5 - 1.0);
            let b: [f32; NR] = std::array::from_fn(|i| 3.0 - i as f32 * 0.25);
            let mut acc: [f32; NR] = std::array::from_fn(|i| i as f32);
            let want: [f32; NR] = std::array::from_fn(|i| acc[i] + a[i] * b[i]);
            Separate.mul_add(&mut acc, &a, &b);
            assert_eq!(acc, want, "NR = {NR}");
        }
        check::<1>();
        check::<4>();
        check::<8>();
    }
}
