//! The builtins' heavy ops against baselines in the same run: CONV_2D on a
//! small CNN's layer (1x32x32x16 to 32 channels, 3x3, SAME) and
//! FULLY_CONNECTED 1x256 to 256, each beside a plain naive loop (TensorFlow
//! Lite's reference kernel, transcribed) and nano-gemm called directly on
//! the same matrix product (for CONV_2D, on an im2col matrix made before
//! timing; for FULLY_CONNECTED, with the weights as its left operand).
//!
//! Run with:
//!
//! ```text
//! cargo bench -p op-lite --bench builtin_math
//! ```

use divan::{Bencher, black_box};
use op_lite::builtins::math::conv::{Conv2DParams, conv2d, conv2d_scratch_len};
use op_lite::builtins::math::fully_connected::{FullyConnectedParams, fully_connected};
use op_lite::model::{Activation, Padding};

fn main() {
    divan::main();
}

const INPUT: [usize; 4] = [1, 32, 32, 16];
const FILTER: [usize; 4] = [32, 3, 3, 16];

fn data(n: usize) -> Vec<f32> {
    (0..n).map(|i| (i % 23) as f32 * 0.05 - 0.5).collect()
}

fn params() -> Conv2DParams {
    Conv2DParams {
        padding: Padding::Same,
        stride_h: 1,
        stride_w: 1,
        dilation_h: 1,
        dilation_w: 1,
        activation: Activation::Relu,
    }
}

#[divan::bench]
fn conv2d_op_lite(bencher: Bencher) {
    let (x, w, b) = (data(32 * 32 * 16), data(32 * 9 * 16), data(32));
    let mut out = vec![0.0; 32 * 32 * 32];
    let mut scratch = vec![0.0; conv2d_scratch_len(&INPUT, &FILTER, &params()).unwrap()];
    bencher.bench_local(|| {
        conv2d(
            &params(),
            &INPUT,
            &x,
            &FILTER,
            &w,
            Some(&b),
            &mut out,
            &mut scratch,
        )
        .unwrap();
        black_box(&mut out);
    });
}

/// reference/conv.h's loops.
#[divan::bench]
fn conv2d_naive_loop(bencher: Bencher) {
    let (x, w, b) = (data(32 * 32 * 16), data(32 * 9 * 16), data(32));
    let mut out = vec![0.0f32; 32 * 32 * 32];
    bencher.bench_local(|| {
        for oy in 0..32i64 {
            for ox in 0..32i64 {
                for oc in 0..32 {
                    let mut total = 0.0f32;
                    for fy in 0..3i64 {
                        for fx in 0..3i64 {
                            let (iy, ix) = (oy - 1 + fy, ox - 1 + fx);
                            if !(0..32).contains(&iy) || !(0..32).contains(&ix) {
                                continue;
                            }
                            for ic in 0..16 {
                                total += x[((iy * 32 + ix) * 16) as usize + ic]
                                    * w[((oc * 3 + fy as usize) * 3 + fx as usize) * 16 + ic];
                            }
                        }
                    }
                    out[((oy * 32 + ox) * 32) as usize + oc] = (total + b[oc]).max(0.0);
                }
            }
        }
        black_box(&mut out);
    });
}

/// nano-gemm alone on the product CONV_2D lowers to: [1024, 144] x [144,
/// 32], operands already laid out (no im2col, no bias).
#[divan::bench]
fn conv2d_gemm_only_nano_gemm(bencher: Bencher) {
    let (m, k, n) = (1024, 144, 32);
    let (a, bt) = (data(m * k), data(k * n));
    let mut c = vec![0.0f32; m * n];
    bencher.bench_local(|| {
        let plan = nano_gemm::Plan::new_colmajor_lhs_and_dst_f32(n, m, k);
        // SAFETY: the three buffers hold exactly n x m, n x k and k x m
        // column-major matrices with these strides.
        unsafe {
            plan.execute_unchecked(
                n,
                m,
                k,
                c.as_mut_ptr(),
                1,
                n as isize,
                bt.as_ptr(),
                1,
                n as isize,
                a.as_ptr(),
                1,
                k as isize,
                0.0,
                1.0,
                false,
                false,
            );
        }
        black_box(&mut c);
    });
}

#[divan::bench]
fn fully_connected_op_lite(bencher: Bencher) {
    let (x, w, b) = (data(256), data(256 * 256), data(256));
    let mut out = vec![0.0; 256];
    let params = FullyConnectedParams {
        activation: Activation::Relu,
        keep_num_dims: false,
    };
    bencher.bench_local(|| {
        fully_connected(&params, &[1, 256], &x, &[256, 256], &w, Some(&b), &mut out).unwrap();
        black_box(&mut out);
    });
}

/// reference/fully_connected.h's loops.
#[divan::bench]
fn fully_connected_naive_loop(bencher: Bencher) {
    let (x, w, b) = (data(256), data(256 * 256), data(256));
    let mut out = vec![0.0f32; 256];
    bencher.bench_local(|| {
        for u in 0..256 {
            let mut total = 0.0f32;
            for d in 0..256 {
                total += x[d] * w[u * 256 + d];
            }
            out[u] = (total + b[u]).max(0.0);
        }
        black_box(&mut out);
    });
}

/// nano-gemm alone on the same product: weights [256, 256] (row-major, its
/// general plan) times the input column.
#[divan::bench]
fn fully_connected_gemm_only_nano_gemm(bencher: Bencher) {
    let (x, w) = (data(256), data(256 * 256));
    let mut out = vec![0.0f32; 256];
    bencher.bench_local(|| {
        let plan = nano_gemm::Plan::new_f32(256, 1, 256);
        // SAFETY: w is 256 x 256 (row stride 256), x is 256 x 1, out is
        // 256 x 1, all in bounds with these strides.
        unsafe {
            plan.execute_unchecked(
                256,
                1,
                256,
                out.as_mut_ptr(),
                1,
                256,
                w.as_ptr(),
                256,
                1,
                x.as_ptr(),
                1,
                256,
                0.0,
                1.0,
                false,
                false,
            );
        }
        black_box(&mut out);
    });
}
