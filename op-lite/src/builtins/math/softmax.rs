//! SOFTMAX over the last axis, with `beta`.
//!
//! Semantics are TensorFlow Lite's `reference/softmax.h` (float):
//! `exp((x - max) * beta) / Σ exp((x - max) * beta)` per row, the maximum
//! taken from `f32::MIN` with `std::max`'s comparison.

use op_core::{Error, Result};

use super::common::{check_len, num_elements};

/// SOFTMAX's options.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct SoftmaxParams {
    /// The inverse temperature multiplying the inputs.
    pub beta: f32,
}

/// SOFTMAX's output shape: the input's, which needs at least one
/// dimension.
pub fn softmax_shape(input: &[usize]) -> Result<Vec<usize>> {
    check_shape(input)?;
    Ok(input.to_vec())
}

/// Fails unless `input` is a shape SOFTMAX takes; allocates nothing (the
/// compute function calls it).
fn check_shape(input: &[usize]) -> Result<()> {
    if input.is_empty() {
        return Err(Error::invalid_argument(
            "SOFTMAX: the input must have at least one dimension",
        ));
    }
    num_elements(input)?;
    Ok(())
}

/// SOFTMAX along the last axis of `input`, into `output` of the same shape.
///
/// ```
/// use op_lite::builtins::math::softmax::{SoftmaxParams, softmax};
/// let mut out = [0.0f32; 2];
/// softmax(&SoftmaxParams { beta: 1.0 }, &[1, 2], &[0.0, 0.0], &mut out).unwrap();
/// assert_eq!(out, [0.5, 0.5]);
/// ```
pub fn softmax(
    params: &SoftmaxParams,
    input_shape: &[usize],
    input: &[f32],
    output: &mut [f32],
) -> Result<()> {
    check_shape(input_shape)?;
    check_len("SOFTMAX: the input", input.len(), input_shape)?;
    check_len("SOFTMAX: the output", output.len(), input_shape)?;
    let depth = input_shape[input_shape.len() - 1];
    if depth == 0 {
        return Ok(());
    }
    for (x, y) in input
        .chunks_exact(depth)
        .zip(output.chunks_exact_mut(depth))
    {
        let mut max = f32::MIN;
        for &v in x {
            if max < v {
                max = v;
            }
        }
        let mut sum = 0.0f32;
        for (o, &v) in y.iter_mut().zip(x) {
            *o = ((v - max) * params.beta).exp();
            sum += *o;
        }
        for o in y.iter_mut() {
            *o /= sum;
        }
    }
    Ok(())
}
