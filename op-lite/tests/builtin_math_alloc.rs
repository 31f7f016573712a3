//! The builtins' heavy compute functions allocate nothing: CONV_2D (im2col
//! and the GEMM included), DEPTHWISE_CONV_2D, FULLY_CONNECTED (one row, the
//! dot-product path, and many, nano-gemm) and BATCH_MATMUL (with
//! transposes and broadcasting), counted by a global allocator that
//! counts every allocation made on the test's thread.

mod counting;
use op_lite::builtins::math::batch_matmul::{BatchMatMulParams, batch_matmul, batch_matmul_shape};
use op_lite::builtins::math::conv::{
    Conv2DParams, conv2d, conv2d_scratch_len, conv2d_shape, depthwise_conv2d,
    depthwise_conv2d_shape,
};
use op_lite::builtins::math::fully_connected::{
    FullyConnectedParams, fully_connected, fully_connected_shape,
};
use op_lite::builtins::math::num_elements;
use op_lite::model::{Activation, Padding};

#[global_allocator]
static ALLOCATOR: counting::Counting = counting::Counting;

fn data(shape: &[usize]) -> Vec<f32> {
    (0..num_elements(shape).unwrap())
        .map(|i| (i % 17) as f32 * 0.1 - 0.8)
        .collect()
}

#[test]
fn convolutions_allocate_nothing() {
    for (input, filter, padding, stride, dilation) in [
        ([1, 32, 32, 16], [32, 3, 3, 16], Padding::Same, 1, 1),
        ([2, 9, 7, 4], [6, 3, 2, 2], Padding::Valid, 2, 2),
        ([1, 8, 8, 16], [8, 1, 1, 16], Padding::Valid, 1, 1),
    ] {
        let params = Conv2DParams {
            padding,
            stride_h: stride,
            stride_w: stride,
            dilation_h: dilation,
            dilation_w: dilation,
            activation: Activation::Relu6,
        };
        let out_shape = conv2d_shape(&input, &filter, None, &params).unwrap();
        let (x, w, b) = (data(&input), data(&filter), data(&[filter[0]]));
        let mut out = vec![0.0; num_elements(&out_shape).unwrap()];
        let mut scratch = vec![0.0; conv2d_scratch_len(&input, &filter, &params).unwrap()];
        let n = counting::allocations(|| {
            conv2d(
                &params,
                &input,
                &x,
                &filter,
                &w,
                Some(&b),
                &mut out,
                &mut scratch,
            )
            .unwrap();
        });
        assert_eq!(n, 0, "CONV_2D {input:?} * {filter:?}");

        let dw_filter = [1, 3, 3, input[3] * 2];
        let dw_shape = depthwise_conv2d_shape(&input, &dw_filter, None, &params).unwrap();
        let dw = data(&dw_filter);
        let mut out = vec![0.0; num_elements(&dw_shape).unwrap()];
        let n = counting::allocations(|| {
            depthwise_conv2d(&params, &input, &x, &dw_filter, &dw, None, &mut out).unwrap();
        });
        assert_eq!(n, 0, "DEPTHWISE_CONV_2D {input:?} * {dw_filter:?}");
    }
}

#[test]
fn fully_connected_allocates_nothing_for_one_row_or_many() {
    for input in [[1, 256], [32, 256], [3, 256]] {
        let weights = [256, 256];
        let params = FullyConnectedParams {
            activation: Activation::Relu,
            keep_num_dims: false,
        };
        let out_shape = fully_connected_shape(&input, &weights, Some(&[256]), &params).unwrap();
        let (x, w, b) = (data(&input), data(&weights), data(&[256]));
        let mut out = vec![0.0; num_elements(&out_shape).unwrap()];
        let n = counting::allocations(|| {
            fully_connected(&params, &input, &x, &weights, &w, Some(&b), &mut out).unwrap();
        });
        assert_eq!(n, 0, "FULLY_CONNECTED {input:?}");
    }
}

#[test]
fn batch_matmul_allocates_nothing_with_transposes_and_broadcasting() {
    for (lhs, rhs, adj_x, adj_y) in [
        (vec![4, 70, 33], vec![33, 65], false, false),
        (vec![2, 1, 33, 70], vec![3, 65, 33], true, true),
    ] {
        let params = BatchMatMulParams { adj_x, adj_y };
        let out_shape = batch_matmul_shape(&lhs, &rhs, &params).unwrap();
        let (a, b) = (data(&lhs), data(&rhs));
        let mut out = vec![0.0; num_elements(&out_shape).unwrap()];
        let n =
            counting::allocations(|| batch_matmul(&params, &lhs, &a, &rhs, &b, &mut out).unwrap());
        assert_eq!(n, 0, "BATCH_MATMUL {lhs:?} x {rhs:?}");
    }
}
