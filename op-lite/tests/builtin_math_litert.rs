//! The builtins' math against TensorFlow Lite's own numbers: single-op
//! models run in LiteRT with its reference kernels by
//! `tests/data/make_math_cases.py`, their operands and outputs saved as
//! `.npy` files under `tests/data/math/<case>/`.

use std::path::Path;

use op_lite::builtins::math::batch_matmul::{BatchMatMulParams, batch_matmul};
use op_lite::builtins::math::conv::{Conv2DParams, conv2d, conv2d_scratch_len, depthwise_conv2d};
use op_lite::builtins::math::elementwise::{BinaryOp, BinaryParams, UnaryOp, binary, unary};
use op_lite::builtins::math::fully_connected::{FullyConnectedParams, fully_connected};
use op_lite::builtins::math::pool::{Pool2DParams, average_pool2d, max_pool2d};
use op_lite::builtins::math::reduce::{ReduceOp, reduce};
use op_lite::builtins::math::shape_ops::{StridedSliceParams, cast, strided_slice};
use op_lite::builtins::math::softmax::{SoftmaxParams, softmax};
use op_lite::model::{Activation, Padding};

/// A `.npy` array: its shape and its little-endian element bytes.
struct Npy {
    descr: String,
    shape: Vec<usize>,
    data: Vec<u8>,
}

/// Reads a version 1 to 3 `.npy` file (C order), enough for these cases.
fn read_npy(case: &str, name: &str) -> Npy {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/math")
        .join(case)
        .join(format!("{name}.npy"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(&bytes[..6], b"\x93NUMPY", "{}", path.display());
    let (len, start) = if bytes[6] == 1 {
        (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10)
    } else {
        (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        )
    };
    let header = std::str::from_utf8(&bytes[start..start + len]).unwrap();
    assert!(header.contains("'fortran_order': False"), "{header}");
    let field = |key: &str| {
        header
            .split(key)
            .nth(1)
            .unwrap()
            .trim_start_matches([':', ' '])
    };
    let descr = field("'descr'")
        .trim_start_matches('\'')
        .split('\'')
        .next()
        .unwrap()
        .to_string();
    let shape_text = field("'shape'")
        .trim_start_matches('(')
        .split(')')
        .next()
        .unwrap();
    let shape = shape_text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    Npy {
        descr,
        shape,
        data: bytes[start + len..].to_vec(),
    }
}

impl Npy {
    fn f32(&self) -> Vec<f32> {
        assert_eq!(self.descr, "<f4");
        self.data
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }
    fn i32(&self) -> Vec<i32> {
        assert_eq!(self.descr, "<i4");
        self.data
            .chunks_exact(4)
            .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }
}

/// Compares with LiteRT's output, to rounding (sums may add in another
/// order) and exactly where both are infinite or NaN.
fn check(case: &str, got: &[f32]) {
    let want = read_npy(case, "out").f32();
    assert_eq!(got.len(), want.len(), "{case}");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        let ok = (g.is_nan() && w.is_nan()) || g == w || (g - w).abs() <= 2e-6 * (1.0 + w.abs());
        assert!(ok, "{case}, element {i}: op-lite {g}, LiteRT {w}");
    }
}

fn out_len(case: &str) -> usize {
    read_npy(case, "out").shape.iter().product()
}

fn conv_params(
    padding: Padding,
    stride: usize,
    dilation: usize,
    activation: Activation,
) -> Conv2DParams {
    Conv2DParams {
        padding,
        stride_h: stride,
        stride_w: stride,
        dilation_h: dilation,
        dilation_w: dilation,
        activation,
    }
}

#[test]
fn convolutions_match_litert() {
    for (case, params, with_bias) in [
        (
            "conv_same_stride2_relu",
            conv_params(Padding::Same, 2, 1, Activation::Relu),
            true,
        ),
        (
            "conv_valid_dilation2",
            conv_params(Padding::Valid, 1, 2, Activation::None),
            false,
        ),
    ] {
        let (x, f) = (read_npy(case, "input"), read_npy(case, "filter"));
        let bias = with_bias.then(|| read_npy(case, "bias").f32());
        let mut out = vec![f32::NAN; out_len(case)];
        let mut scratch = vec![0.0; conv2d_scratch_len(&x.shape, &f.shape, &params).unwrap()];
        conv2d(
            &params,
            &x.shape,
            &x.f32(),
            &f.shape,
            &f.f32(),
            bias.as_deref(),
            &mut out,
            &mut scratch,
        )
        .unwrap();
        check(case, &out);
    }
    let case = "depthwise_same_stride2_relu6";
    let (x, f, b) = (
        read_npy(case, "input"),
        read_npy(case, "filter"),
        read_npy(case, "bias").f32(),
    );
    let params = conv_params(Padding::Same, 2, 1, Activation::Relu6);
    let mut out = vec![f32::NAN; out_len(case)];
    depthwise_conv2d(
        &params,
        &x.shape,
        &x.f32(),
        &f.shape,
        &f.f32(),
        Some(&b),
        &mut out,
    )
    .unwrap();
    check(case, &out);
}

#[test]
fn pooling_matches_litert_at_the_edges() {
    let pool = |filter_h, filter_w| Pool2DParams {
        padding: Padding::Same,
        stride_h: 2,
        stride_w: 2,
        filter_h,
        filter_w,
        activation: Activation::None,
    };
    let case = "average_pool_same_3x3_stride2";
    let x = read_npy(case, "input");
    let mut out = vec![f32::NAN; out_len(case)];
    average_pool2d(&pool(3, 3), &x.shape, &x.f32(), &mut out).unwrap();
    check(case, &out);
    let case = "max_pool_same_3x2_stride2";
    let mut out = vec![f32::NAN; out_len(case)];
    max_pool2d(&pool(3, 2), &x.shape, &x.f32(), &mut out).unwrap();
    check(case, &out);
}

#[test]
fn matrix_products_match_litert() {
    let case = "fully_connected_bias";
    let (x, w, b) = (
        read_npy(case, "input"),
        read_npy(case, "weights"),
        read_npy(case, "bias").f32(),
    );
    let mut out = vec![f32::NAN; out_len(case)];
    fully_connected(
        &FullyConnectedParams::default(),
        &x.shape,
        &x.f32(),
        &w.shape,
        &w.f32(),
        Some(&b),
        &mut out,
    )
    .unwrap();
    check(case, &out);
    let case = "batch_matmul_adj_y";
    let (a, c) = (read_npy(case, "lhs"), read_npy(case, "rhs"));
    let mut out = vec![f32::NAN; out_len(case)];
    let params = BatchMatMulParams {
        adj_x: false,
        adj_y: true,
    };
    batch_matmul(&params, &a.shape, &a.f32(), &c.shape, &c.f32(), &mut out).unwrap();
    check(case, &out);
}

#[test]
fn softmax_and_reductions_match_litert() {
    let case = "softmax";
    let x = read_npy(case, "input");
    let mut out = vec![f32::NAN; out_len(case)];
    softmax(&SoftmaxParams { beta: 1.0 }, &x.shape, &x.f32(), &mut out).unwrap();
    check(case, &out);
    for (case, op, axes) in [
        ("mean_axes_0_2_keep", ReduceOp::Mean, &[0i32, 2][..]),
        ("sum_axis_minus1", ReduceOp::Sum, &[-1]),
    ] {
        let x = read_npy(case, "input");
        let mut out = vec![f32::NAN; out_len(case)];
        reduce(op, &x.shape, &x.f32(), axes, &mut out).unwrap();
        check(case, &out);
    }
}

#[test]
fn unary_ops_match_litert_including_their_cutoffs() {
    for (case, op) in [
        ("gelu_exact", UnaryOp::Gelu { approximate: false }),
        ("gelu_approximate", UnaryOp::Gelu { approximate: true }),
        ("logistic", UnaryOp::Logistic),
        ("hard_swish", UnaryOp::HardSwish),
    ] {
        let x = read_npy(case, "input").f32();
        let mut out = vec![f32::NAN; x.len()];
        unary(op, &x, &mut out).unwrap();
        check(case, &out);
    }
}

#[test]
fn broadcast_add_with_relu_matches_litert_clamping_infinity() {
    let case = "add_broadcast_relu";
    let (a, b) = (read_npy(case, "a"), read_npy(case, "b"));
    let mut out = vec![f32::NAN; out_len(case)];
    let params = BinaryParams {
        op: BinaryOp::Add,
        activation: Activation::Relu,
    };
    binary(params, &a.shape, &a.f32(), &b.shape, &b.f32(), &mut out).unwrap();
    assert_eq!(out[0], f32::MAX);
    check(case, &out);
}

#[test]
fn strided_slice_and_cast_match_litert() {
    let case = "strided_slice_reverse_shrink";
    let x = read_npy(case, "input");
    let params = StridedSliceParams {
        begin_mask: 2,
        end_mask: 2,
        shrink_axis_mask: 1,
        ..Default::default()
    };
    let mut out = vec![f32::NAN; out_len(case)];
    strided_slice(
        &x.shape,
        &x.f32(),
        &[1i32, 0, 1],
        &[2, 0, 4],
        &[1, -2, 1],
        &params,
        &mut out,
    )
    .unwrap();
    check(case, &out);
    let case = "cast_float_to_int32";
    let x = read_npy(case, "input").f32();
    let mut out = vec![0i32; x.len()];
    cast(&x, &mut out).unwrap();
    assert_eq!(out, read_npy(case, "out").i32());
}
