//! FULLY_CONNECTED: `output = act(input · weightsᵀ + bias)`, float32, the
//! default weights format.
//!
//! Semantics are TensorFlow Lite's `reference/fully_connected.h` and the
//! shape rules of `tensorflow/lite/kernels/fully_connected.cc`: the weights
//! are `[units, depth]`; the input is any shape whose element count is a
//! multiple of `depth`, read as `[batches, depth]`; the output is
//! `[batches, units]`, or with `keep_num_dims` the input's shape with its
//! last dimension (which must then be `depth`) replaced by `units`.
//! The product goes through the private `gemm` module (`gemm.rs`) (a dot product per
//! output for one or two rows); no scratch is needed. With weights packed
//! once ([`PackedWeights`]), up to four batch rows go through each block of
//! weights together, with fused multiply-adds in AVX2 registers where the
//! processor has AVX2 and FMA.

use op_core::{Error, Result};

use super::common::{ActivationRange, check_len, check_rank, num_elements};
use super::gemm::{MatMut, MatRef, matmul};
use super::simd::{MulAdd, WithMulAdd, dispatch};
use crate::model::Activation;

/// FULLY_CONNECTED's options.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct FullyConnectedParams {
    /// The fused activation.
    pub activation: Activation,
    /// Keep the input's leading dimensions instead of flattening them.
    pub keep_num_dims: bool,
}

/// `(batches, units, depth)` and the output shape.
fn geometry(
    input: &[usize],
    weights: &[usize],
    bias: Option<&[usize]>,
    params: &FullyConnectedParams,
) -> Result<(usize, usize, usize)> {
    check_rank("FULLY_CONNECTED: the weights", weights, 2)?;
    let (units, depth) = (weights[0], weights[1]);
    num_elements(weights)?;
    let size = num_elements(input)?;
    if depth == 0 || size % depth != 0 {
        return Err(Error::invalid_argument(format!(
            "FULLY_CONNECTED: the input {input} cannot be read as rows of the weights' depth {depth}",
            input = op_core::error::dims(input)
        )));
    }
    let batches = size / depth;
    if let Some(bias) = bias
        && num_elements(bias)? != units
    {
        return Err(Error::invalid_argument(format!(
            "FULLY_CONNECTED: the bias has shape {bias}, expected {units} elements",
            bias = op_core::error::dims(bias)
        )));
    }
    if params.keep_num_dims && input.last() != Some(&depth) {
        return Err(Error::invalid_argument(format!(
            "FULLY_CONNECTED: with keep_num_dims the input's last dimension must be the weights' depth {depth}, got {input}",
            input = op_core::error::dims(input)
        )));
    }
    num_elements(&[batches, units])?;
    Ok((batches, units, depth))
}

/// FULLY_CONNECTED's output shape.
///
/// ```
/// use op_lite::builtins::math::fully_connected::{FullyConnectedParams, fully_connected_shape};
/// let flat = FullyConnectedParams::default();
/// assert_eq!(fully_connected_shape(&[2, 3, 4], &[5, 4], None, &flat).unwrap(), [6, 5]);
/// let keep = FullyConnectedParams { keep_num_dims: true, ..flat };
/// assert_eq!(fully_connected_shape(&[2, 3, 4], &[5, 4], None, &keep).unwrap(), [2, 3, 5]);
/// ```
pub fn fully_connected_shape(
    input: &[usize],
    weights: &[usize],
    bias: Option<&[usize]>,
    params: &FullyConnectedParams,
) -> Result<Vec<usize>> {
    let (batches, units, _) = geometry(input, weights, bias, params)?;
    Ok(if params.keep_num_dims {
        let mut out = input.to_vec();
        if let Some(last) = out.last_mut() {
            *last = units;
        }
        out
    } else {
        vec![batches, units]
    })
}

/// FULLY_CONNECTED: `output[b, u] = act(Σ_d input[b, d] * weights[u, d] +
/// bias[u])`, into `output` of [`fully_connected_shape`]. Allocates
/// nothing.
///
/// ```
/// use op_lite::builtins::math::fully_connected::{FullyConnectedParams, fully_connected};
/// let mut out = [0.0f32; 2];
/// fully_connected(
///     &FullyConnectedParams::default(),
///     &[1, 3], &[1.0, 2.0, 3.0],
///     &[2, 3], &[1.0, 0.0, 0.0, 1.0, 1.0, 1.0],
///     Some(&[0.5, -6.0]),
///     &mut out,
/// ).unwrap();
/// assert_eq!(out, [1.5, 0.0]);
/// ```
pub fn fully_connected(
    params: &FullyConnectedParams,
    input_shape: &[usize],
    input: &[f32],
    weights_shape: &[usize],
    weights: &[f32],
    bias: Option<&[f32]>,
    output: &mut [f32],
) -> Result<()> {
    let bias_shape = bias.map(|b| [b.len()]);
    let (batches, units, depth) = geometry(
        input_shape,
        weights_shape,
        bias_shape.as_ref().map(|s| &s[..]),
        params,
    )?;
    check_len("FULLY_CONNECTED: the input", input.len(), input_shape)?;
    check_len("FULLY_CONNECTED: the weights", weights.len(), weights_shape)?;
    if output.len() != batches * units {
        return Err(Error::invalid_argument(format!(
            "FULLY_CONNECTED: the output has {} elements, expected {batches} x {units}",
            output.len()
        )));
    }
    matmul(
        MatMut::row_major(output, batches, units),
        MatRef::row_major(input, batches, depth),
        MatRef::row_major(weights, units, depth).t(),
    )?;
    let act = ActivationRange::<f32>::new(params.activation);
    match bias {
        Some(bias) => {
            for row in output.chunks_exact_mut(units.max(1)) {
                for (o, &b) in row.iter_mut().zip(bias) {
                    *o = act.apply(*o + b);
                }
            }
        }
        None => act.apply_all(output),
    }
    Ok(())
}

/// Units per block of [`PackedWeights`]: eight `f32` accumulators, two SSE
/// registers or one AVX2 register, stay in registers across the whole
/// depth.
const BLOCK: usize = 8;

/// FULLY_CONNECTED's weights packed once (in `prepare`, when they are a
/// constant of the model) for [`fully_connected_packed`]: blocks of
/// 8 units (`BLOCK`), each stored depth-major (`[depth][BLOCK]`), the last
/// block padded with zeros.
///
/// With a few batch rows the product is a matrix-vector one, which the
/// general GEMM serves poorly (its set-up costs as much as the arithmetic
/// on mlp's 16 x 16 layers); with this layout each block's eight sums run
/// in registers over contiguous weights, and the bias and activation are
/// applied on the way out.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PackedWeights {
    units: usize,
    depth: usize,
    data: Vec<f32>,
}

impl PackedWeights {
    /// Packs `weights` of shape `[units, depth]` (FULLY_CONNECTED's
    /// weights layout).
    ///
    /// ```
    /// use op_lite::builtins::math::fully_connected::PackedWeights;
    /// let packed = PackedWeights::new(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    /// assert_eq!(packed.shape(), [2, 3]);
    /// ```
    pub fn new(weights_shape: &[usize], weights: &[f32]) -> Result<Self> {
        check_rank("FULLY_CONNECTED: the weights", weights_shape, 2)?;
        check_len("FULLY_CONNECTED: the weights", weights.len(), weights_shape)?;
        let (units, depth) = (weights_shape[0], weights_shape[1]);
        let blocks = units.div_ceil(BLOCK);
        let len = blocks
            .checked_mul(depth)
            .and_then(|n| n.checked_mul(BLOCK))
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "FULLY_CONNECTED: the weights {weights_shape} are too large to pack",
                    weights_shape = op_core::error::dims(weights_shape)
                ))
            })?;
        let mut data = vec![0.0; len];
        if depth > 0 {
            for (u, row) in weights.chunks_exact(depth).enumerate() {
                let block = &mut data[(u / BLOCK) * depth * BLOCK..][..depth * BLOCK];
                for (d, &w) in row.iter().enumerate() {
                    block[d * BLOCK + u % BLOCK] = w;
                }
            }
        }
        Ok(PackedWeights { units, depth, data })
    }

    /// The shape of the weights packed, `[units, depth]`.
    pub fn shape(&self) -> [usize; 2] {
        [self.units, self.depth]
    }
}

/// [`fully_connected`] with weights packed by [`PackedWeights::new`]: the
/// same result up to the order of the sums (within float rounding), faster
/// for few batch rows. Allocates nothing.
///
/// ```
/// use op_lite::builtins::math::fully_connected::{
///     FullyConnectedParams, PackedWeights, fully_connected_packed,
/// };
/// let packed = PackedWeights::new(&[2, 3], &[1.0, 0.0, 0.0, 1.0, 1.0, 1.0]).unwrap();
/// let mut out = [0.0f32; 2];
/// fully_connected_packed(
///     &FullyConnectedParams::default(),
///     &[1, 3], &[1.0, 2.0, 3.0],
///     &packed,
///     Some(&[0.5, -6.0]),
///     &mut out,
/// ).unwrap();
/// assert_eq!(out, [1.5, 0.0]);
/// ```
pub fn fully_connected_packed(
    params: &FullyConnectedParams,
    input_shape: &[usize],
    input: &[f32],
    weights: &PackedWeights,
    bias: Option<&[f32]>,
    output: &mut [f32],
) -> Result<()> {
    let bias_shape = bias.map(|b| [b.len()]);
    let (batches, units, depth) = geometry(
        input_shape,
        &weights.shape(),
        bias_shape.as_ref().map(|s| &s[..]),
        params,
    )?;
    check_len("FULLY_CONNECTED: the input", input.len(), input_shape)?;
    if output.len() != batches * units {
        return Err(Error::invalid_argument(format!(
            "FULLY_CONNECTED: the output has {} elements, expected {batches} x {units}",
            output.len()
        )));
    }
    if units == 0 || batches == 0 {
        return Ok(());
    }
    dispatch(Packed {
        act: ActivationRange::new(params.activation),
        input: &input[..batches * depth],
        weights,
        bias,
        output,
    });
    Ok(())
}

/// [`fully_connected_packed`]'s product, for [`dispatch`]: `input` is
/// `[batches, depth]`, `output` `[batches, units]`, both checked.
struct Packed<'a> {
    act: ActivationRange<f32>,
    input: &'a [f32],
    weights: &'a PackedWeights,
    bias: Option<&'a [f32]>,
    output: &'a mut [f32],
}

impl WithMulAdd for Packed<'_> {
    type Output = ();

    /// Up to four batch rows at a time against each block of units: four
    /// independent sums per weight loaded.
    #[inline(always)]
    fn run<A: MulAdd>(self, arith: A) {
        let Packed {
            act,
            input,
            weights,
            bias,
            output,
        } = self;
        let (units, depth) = (weights.units, weights.depth);
        let batches = output.len() / units;
        let mut b = 0;
        while b < batches {
            let rows = (batches - b).min(4);
            let x = &input[b * depth..][..rows * depth];
            let out = &mut output[b * units..][..rows * units];
            match rows {
                1 => packed_rows::<1, A>(arith, act, x, weights, bias, out),
                2 => packed_rows::<2, A>(arith, act, x, weights, bias, out),
                3 => packed_rows::<3, A>(arith, act, x, weights, bias, out),
                _ => packed_rows::<4, A>(arith, act, x, weights, bias, out),
            }
            b += rows;
        }
    }
}

/// `out = act(x · weightsᵀ + bias)` for `M` batch rows (`x` is `[M,
/// depth]`, `out` `[M, units]`).
#[inline(always)]
fn packed_rows<const M: usize, A: MulAdd>(
    arith: A,
    act: ActivationRange<f32>,
    x: &[f32],
    weights: &PackedWeights,
    bias: Option<&[f32]>,
    out: &mut [f32],
) {
    let (units, depth) = (weights.units, weights.depth);
    let xs: [&[f32]; M] = std::array::from_fn(|j| &x[j * depth..][..depth]);
    for (blk, w_block) in weights.data.chunks_exact(depth * BLOCK).enumerate() {
        let (w8, _) = w_block.as_chunks::<BLOCK>();
        let w8 = &w8[..depth];
        let mut acc = [[0.0f32; BLOCK]; M];
        for (d, w) in w8.iter().enumerate() {
            for (acc, x) in acc.iter_mut().zip(&xs) {
                arith.mul_add_scalar(acc, x[d], w);
            }
        }
        let first = blk * BLOCK;
        let lanes = BLOCK.min(units - first);
        let bias = bias.map(|b| &b[first..][..lanes]);
        for (j, acc) in acc.iter().enumerate() {
            let o = &mut out[j * units + first..][..lanes];
            for (l, o) in o.iter_mut().enumerate() {
                *o = act.apply(acc[l] + bias.map_or(0.0, |b| b[l]));
            }
        }
    }
}
