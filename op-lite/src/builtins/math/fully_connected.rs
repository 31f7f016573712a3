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
//! output for one or two rows); no scratch is needed.

use op_core::{Error, Result};

use super::common::{ActivationRange, check_len, check_rank, num_elements};
use super::gemm::{MatMut, MatRef, matmul};
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
            "FULLY_CONNECTED: the input {input:?} cannot be read as rows of the weights' depth {depth}"
        )));
    }
    let batches = size / depth;
    if let Some(bias) = bias
        && num_elements(bias)? != units
    {
        return Err(Error::invalid_argument(format!(
            "FULLY_CONNECTED: the bias has shape {bias:?}, expected {units} elements"
        )));
    }
    if params.keep_num_dims && input.last() != Some(&depth) {
        return Err(Error::invalid_argument(format!(
            "FULLY_CONNECTED: with keep_num_dims the input's last dimension must be the weights' depth {depth}, got {input:?}"
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
