//! AVERAGE_POOL_2D and MAX_POOL_2D over NHWC inputs.
//!
//! Semantics are TensorFlow Lite's `reference/pooling.h`: windows are
//! clamped to the input, so padding adds nothing and average pooling
//! divides by the number of in-bounds elements only; the maximum starts
//! from `f32::MIN` (`lowest()`) and compares as `std::max` does. Output
//! sizes and padding are [`window`]'s (dilation 1).

use op_core::{Error, Result};

use super::common::{ActivationRange, check_len, check_rank, num_elements};
use super::conv::{Window, window};
use crate::model::{Activation, Padding};

/// The options of AVERAGE_POOL_2D and MAX_POOL_2D.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Pool2DParams {
    /// SAME or VALID.
    pub padding: Padding,
    /// The stride along the height.
    pub stride_h: usize,
    /// The stride along the width.
    pub stride_w: usize,
    /// The window's height.
    pub filter_h: usize,
    /// The window's width.
    pub filter_w: usize,
    /// The fused activation.
    pub activation: Activation,
}

fn windows(input: &[usize], params: &Pool2DParams) -> Result<(Window, Window)> {
    check_rank("POOL_2D: the input", input, 4)?;
    num_elements(input)?;
    let rows = window(
        params.padding,
        input[1],
        params.filter_h,
        params.stride_h,
        1,
    )
    .map_err(|e| e.with_context("POOL_2D: the height"))?;
    let cols = window(
        params.padding,
        input[2],
        params.filter_w,
        params.stride_w,
        1,
    )
    .map_err(|e| e.with_context("POOL_2D: the width"))?;
    Ok((rows, cols))
}

/// The output shape of both pooling ops: `[batches, out_height, out_width,
/// channels]`.
///
/// ```
/// use op_lite::builtins::math::pool::{Pool2DParams, pool2d_shape};
/// use op_lite::model::{Activation, Padding};
/// let p = Pool2DParams {
///     padding: Padding::Valid, stride_h: 2, stride_w: 2,
///     filter_h: 2, filter_w: 2, activation: Activation::None,
/// };
/// assert_eq!(pool2d_shape(&[1, 8, 8, 3], &p).unwrap(), [1, 4, 4, 3]);
/// ```
pub fn pool2d_shape(input: &[usize], params: &Pool2DParams) -> Result<Vec<usize>> {
    let (rows, cols) = windows(input, params)?;
    let out = vec![input[0], rows.out, cols.out, input[3]];
    num_elements(&out)?;
    Ok(out)
}

/// The two pooling reductions.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Pooling {
    Average,
    Max,
}

/// AVERAGE_POOL_2D: the mean of each window's in-bounds elements, then the
/// activation. A window with no element in bounds gives NaN (0 / 0), as in
/// TensorFlow Lite.
pub fn average_pool2d(
    params: &Pool2DParams,
    input_shape: &[usize],
    input: &[f32],
    output: &mut [f32],
) -> Result<()> {
    pool(Pooling::Average, params, input_shape, input, output)
}

/// MAX_POOL_2D: the maximum of each window's in-bounds elements, then the
/// activation.
pub fn max_pool2d(
    params: &Pool2DParams,
    input_shape: &[usize],
    input: &[f32],
    output: &mut [f32],
) -> Result<()> {
    pool(Pooling::Max, params, input_shape, input, output)
}

fn pool(
    kind: Pooling,
    params: &Pool2DParams,
    input_shape: &[usize],
    input: &[f32],
    output: &mut [f32],
) -> Result<()> {
    let (rows, cols) = windows(input_shape, params)?;
    let [batches, in_h, in_w, channels] = [
        input_shape[0],
        input_shape[1],
        input_shape[2],
        input_shape[3],
    ];
    check_len("POOL_2D: the input", input.len(), input_shape)?;
    check_len(
        "POOL_2D: the output",
        output.len(),
        &[batches, rows.out, cols.out, channels],
    )?;
    if output.is_empty() {
        return Ok(());
    }
    let act = ActivationRange::<f32>::new(params.activation);
    let mut pixels = output.chunks_exact_mut(channels);
    for b in 0..batches {
        for oy in 0..rows.out {
            // The window clamped to the image: [y0, y1) x [x0, x1).
            let origin_y = (oy * params.stride_h) as isize - rows.pad as isize;
            let y0 = origin_y.max(0) as usize;
            let y1 = (origin_y + params.filter_h as isize).clamp(0, in_h as isize) as usize;
            for ox in 0..cols.out {
                let origin_x = (ox * params.stride_w) as isize - cols.pad as isize;
                let x0 = origin_x.max(0) as usize;
                let x1 = (origin_x + params.filter_w as isize).clamp(0, in_w as isize) as usize;
                let Some(acc) = pixels.next() else {
                    return Err(Error::internal("POOL_2D: output exhausted"));
                };
                acc.fill(match kind {
                    Pooling::Average => 0.0,
                    Pooling::Max => f32::MIN,
                });
                let mut count = 0usize;
                for iy in y0..y1.max(y0) {
                    for ix in x0..x1.max(x0) {
                        let at = ((b * in_h + iy) * in_w + ix) * channels;
                        let pixel = &input[at..at + channels];
                        match kind {
                            Pooling::Average => lanes(acc, pixel, |a, x| a + x),
                            // std::max(max, x): NaN never replaces.
                            Pooling::Max => lanes(acc, pixel, |a, x| if a < x { x } else { a }),
                        }
                        count += 1;
                    }
                }
                if kind == Pooling::Average {
                    let count = count as f32;
                    for a in acc.iter_mut() {
                        *a /= count;
                    }
                }
                act.apply_all(acc);
            }
        }
    }
    Ok(())
}

/// `acc[c] = f(acc[c], x[c])`, four channels at a time: fixed-size blocks
/// that LLVM keeps in one vector register, where a loop over a pixel's
/// few channels (8 in the cnn model) ran scalar.
#[inline(always)]
fn lanes(acc: &mut [f32], x: &[f32], f: impl Fn(f32, f32) -> f32) {
    let (acc4, acc_tail) = acc.as_chunks_mut::<4>();
    let (x4, x_tail) = x.as_chunks::<4>();
    for (a, x) in acc4.iter_mut().zip(x4) {
        *a = std::array::from_fn(|l| f(a[l], x[l]));
    }
    for (a, &x) in acc_tail.iter_mut().zip(x_tail) {
        *a = f(*a, x);
    }
}
