//! The builtin kernels through the interpreter, family by family, on
//! hand-built one-node models: output shapes and dtypes, values, options,
//! and the typed errors (each naming the node) that bad models get.
//! (Agreement with LiteRT on converted models is `builtin_models.rs`.)

mod common;

use common::ModelBuilder;
use op_core::error::Code;
use op_core::{DType, Error};
use op_lite::builtins::{BuiltinKernel, builtin_kernel};
use op_lite::kernel::{FnOp, InvokeContext, PrepareContext};
use op_lite::model::{
    Activation, BuiltinOperator as Op, BuiltinOptions, Model, Padding, Quantization,
};
use op_lite::{BuiltinOpResolver, Interpreter, OpResolver};

/// A model input: a float or int32 tensor the test fills, or a constant.
#[derive(Copy, Clone)]
enum In<'a> {
    F32(&'a [usize], &'a [f32]),
    I32(&'a [usize], &'a [i32]),
    Const32(&'a [usize], &'a [i32]),
    ConstF32(&'a [usize], &'a [f32]),
    /// An omitted optional input.
    Omitted,
}

/// One node of `op` with `options`, reading `inputs` and writing outputs
/// `y0`, `y1`... of `out` (their declared dtype; the kernel sets shapes).
fn model(op: Op, options: BuiltinOptions, inputs: &[In<'_>], out: &[DType]) -> Model {
    let mut b = ModelBuilder::new();
    let mut ins = Vec::new();
    for (k, input) in inputs.iter().enumerate() {
        let name = format!("x{k}");
        ins.push(match input {
            In::F32(shape, _) => Some(b.f32(&name, shape)),
            In::I32(shape, _) => Some(b.tensor(&name, DType::I32, shape)),
            In::Const32(shape, v) => {
                Some(b.with_data(&name, DType::I32, shape, bytemuck::cast_slice(v)))
            }
            In::ConstF32(shape, v) => Some(b.constant(&name, shape, v)),
            In::Omitted => None,
        });
    }
    for (input, t) in inputs.iter().zip(&ins) {
        if let (In::F32(..) | In::I32(..), Some(t)) = (input, t) {
            b.input(*t);
        }
    }
    let outs: Vec<usize> = out
        .iter()
        .enumerate()
        .map(|(k, dtype)| b.tensor(&format!("y{k}"), *dtype, &[]))
        .collect();
    for &t in &outs {
        b.output(t);
    }
    let node = b.builtin(op, 1, &[], &outs);
    let operator = &mut b.model_mut().subgraphs[0].operators[node];
    operator.inputs = ins;
    operator.builtin_options = options;
    b.build()
}

/// Builds, plans and invokes `model` with the builtins, its inputs filled
/// from `inputs`.
fn run(model: &Model, inputs: &[In<'_>]) -> Result<Interpreter, Error> {
    let mut interpreter = Interpreter::new(model, &BuiltinOpResolver::new())?;
    interpreter.allocate_tensors()?;
    let mut k = 0;
    for input in inputs {
        match input {
            In::F32(_, v) => interpreter.set_input(k, v)?,
            In::I32(_, v) => interpreter.set_input(k, v)?,
            _ => continue,
        }
        k += 1;
    }
    interpreter.invoke()?;
    Ok(interpreter)
}

/// Runs one node; returns output 0's shape and elements.
fn eval<T: op_lite::kernel::ArenaElement>(
    op: Op,
    options: BuiltinOptions,
    inputs: &[In<'_>],
    out: DType,
) -> (Vec<usize>, Vec<T>) {
    let m = model(op, options, inputs, &[out]);
    let interpreter = run(&m, inputs).unwrap_or_else(|e| panic!("{op}: {e}"));
    (
        interpreter.output_shape(0).unwrap().to_vec(),
        interpreter.output::<T>(0).unwrap().to_vec(),
    )
}

fn eval_f32(op: Op, options: BuiltinOptions, inputs: &[In<'_>]) -> (Vec<usize>, Vec<f32>) {
    eval(op, options, inputs, DType::F32)
}

/// The error of running one node.
fn error(op: Op, options: BuiltinOptions, inputs: &[In<'_>], out: DType) -> Error {
    match run(&model(op, options, inputs, &[out]), inputs) {
        Ok(_) => panic!("{op} ran"),
        Err(e) => e,
    }
}

/// Asserts `err` is framed with node 0 of `op` in `phase` and its message
/// holds each of `parts`.
#[track_caller]
fn assert_node_error(err: &Error, op: &str, phase: &str, parts: &[&str]) {
    let frame = format!("Node number 0 ({op}) failed to {phase}.");
    assert_eq!(err.context().last(), Some(&frame), "{err}");
    for part in parts {
        assert!(err.message().contains(part), "{err}\nlacks {part:?}");
    }
}

#[track_caller]
fn assert_close(got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len(), "{got:?} != {want:?}");
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g - w).abs() <= 1e-5 * (1.0 + w.abs()),
            "{got:?} != {want:?}"
        );
    }
}

fn arithmetic(activation: Activation) -> BuiltinOptions {
    BuiltinOptions::Arithmetic { activation }
}

// ---------------------------------------------------------------------------
// Elementwise.

#[test]
fn binary_ops_broadcast_and_apply_their_fused_activation() {
    let a = In::F32(&[2, 3], &[1.0, -2.0, 3.0, -4.0, 5.0, -6.0]);
    let b = In::ConstF32(&[3], &[0.5, 1.0, -7.0]);
    let (shape, y) = eval_f32(Op::ADD, arithmetic(Activation::Relu), &[a, b]);
    assert_eq!(shape, [2, 3]);
    assert_eq!(y, [1.5, 0.0, 0.0, 0.0, 6.0, 0.0]);

    let a = In::F32(&[2, 1], &[2.0, -8.0]);
    let b = In::F32(&[1, 3], &[1.0, 2.0, 4.0]);
    let (shape, y) = eval_f32(Op::DIV, arithmetic(Activation::ReluN1To1), &[a, b]);
    assert_eq!(shape, [2, 3]);
    assert_eq!(y, [1.0, 1.0, 0.5, -1.0, -1.0, -1.0]);

    let a = In::F32(&[3], &[1.0, 5.0, -2.0]);
    let b = In::F32(&[3], &[3.0, 2.0, -2.0]);
    for (op, want) in [
        (Op::SUB, [-2.0, 3.0, 0.0]),
        (Op::MUL, [3.0, 10.0, 4.0]),
        (Op::MAXIMUM, [3.0, 5.0, -2.0]),
        (Op::MINIMUM, [1.0, 2.0, -2.0]),
        (Op::SQUARED_DIFFERENCE, [4.0, 9.0, 0.0]),
    ] {
        let (_, y) = eval_f32(op, BuiltinOptions::None, &[a, b]);
        assert_eq!(y, want, "{op}");
    }
}

#[test]
fn binary_ops_run_on_int32() {
    let a = In::I32(&[2, 2], &[7, -7, 3, 9]);
    let b = In::Const32(&[2], &[2, -3]);
    let (shape, y) = eval::<i32>(Op::DIV, BuiltinOptions::None, &[a, b], DType::I32);
    assert_eq!(shape, [2, 2]);
    assert_eq!(y, [3, 2, 1, -3]);
    let a = In::I32(&[2], &[7, -7]);
    let b = In::I32(&[2], &[2, 0]);
    let err = error(Op::DIV, BuiltinOptions::None, &[a, b], DType::I32);
    assert_node_error(&err, "DIV", "invoke", &["division by zero"]);
}

#[test]
fn binary_ops_reject_mixed_dtypes_and_unbroadcastable_shapes() {
    let a = In::F32(&[2], &[1.0, 2.0]);
    let b = In::I32(&[2], &[1, 2]);
    let err = error(Op::ADD, BuiltinOptions::None, &[a, b], DType::F32);
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_node_error(
        &err,
        "ADD",
        "prepare",
        &["input 1 ('x1')", "int32", "expected float"],
    );

    let a = In::F32(&[2, 3], &[0.0; 6]);
    let b = In::F32(&[2], &[0.0; 2]);
    let err = error(Op::MUL, BuiltinOptions::None, &[a, b], DType::F32);
    assert_node_error(&err, "MUL", "prepare", &["not broadcastable"]);

    let err = error(
        Op::SUB,
        BuiltinOptions::None,
        &[In::F32(&[2], &[0.0; 2])],
        DType::F32,
    );
    assert_node_error(
        &err,
        "SUB",
        "prepare",
        &["SUB takes 2 inputs, the node has 1"],
    );
}

#[test]
fn unary_ops_compute_with_their_options() {
    let x = [-2.0f32, -0.5, 0.0, 0.5, 8.0];
    let input = || In::F32(&[5], &x);
    let leaky = BuiltinOptions::LeakyRelu { alpha: 0.1 };
    let (shape, y) = eval_f32(Op::LEAKY_RELU, leaky, &[input()]);
    assert_eq!(shape, [5]);
    assert_close(&y, &[-0.2, -0.05, 0.0, 0.5, 8.0]);
    let (_, y) = eval_f32(Op::RELU6, BuiltinOptions::None, &[input()]);
    assert_eq!(y, [0.0, 0.0, 0.0, 0.5, 6.0]);
    let (_, exact) = eval_f32(
        Op::GELU,
        BuiltinOptions::Gelu { approximate: false },
        &[input()],
    );
    let (_, approx) = eval_f32(
        Op::GELU,
        BuiltinOptions::Gelu { approximate: true },
        &[input()],
    );
    assert_close(&exact[..2], &[-0.045_500_26, -0.154_268_5]);
    assert!(
        (approx[0] - exact[0]).abs() > 1e-5,
        "the options reach the kernel"
    );
    let (_, y) = eval_f32(Op::HARD_SWISH, BuiltinOptions::None, &[input()]);
    assert_close(&y, &[-0.333_333_3, -0.208_333_3, 0.0, 0.291_666_7, 8.0]);
    for (op, f) in [
        (Op::EXP, f32::exp as fn(f32) -> f32),
        (Op::SIN, f32::sin),
        (Op::COS, f32::cos),
        (Op::TANH, f32::tanh),
        (Op::ABS, f32::abs),
        (Op::NEG, |v: f32| -v),
        (Op::SQUARE, |v: f32| v * v),
    ] {
        let (_, y) = eval_f32(op, BuiltinOptions::None, &[input()]);
        assert_close(&y, &x.map(f));
    }
    let pos = [0.25f32, 4.0];
    let (_, y) = eval_f32(Op::SQRT, BuiltinOptions::None, &[In::F32(&[2], &pos)]);
    assert_eq!(y, [0.5, 2.0]);
    let (_, y) = eval_f32(Op::RSQRT, BuiltinOptions::None, &[In::F32(&[2], &pos)]);
    assert_eq!(y, [2.0, 0.5]);
    let (_, y) = eval_f32(Op::LOG, BuiltinOptions::None, &[In::F32(&[2], &pos)]);
    assert_close(&y, &[-1.386_294_4, 1.386_294_4]);
    let (_, y) = eval_f32(Op::LOGISTIC, BuiltinOptions::None, &[In::F32(&[1], &[0.0])]);
    assert_eq!(y, [0.5]);
    let (_, y) = eval_f32(
        Op::RELU,
        BuiltinOptions::None,
        &[In::F32(&[2], &[-1.0, 1.0])],
    );
    assert_eq!(y, [0.0, 1.0]);
}

#[test]
fn abs_and_neg_run_on_int32_and_float_ops_reject_it() {
    let x = In::I32(&[3], &[-3, 0, i32::MIN]);
    let (_, y) = eval::<i32>(Op::ABS, BuiltinOptions::None, &[x], DType::I32);
    assert_eq!(y, [3, 0, i32::MIN]);
    let (_, y) = eval::<i32>(
        Op::NEG,
        BuiltinOptions::None,
        &[In::I32(&[2], &[-3, 4])],
        DType::I32,
    );
    assert_eq!(y, [3, -4]);
    let err = error(
        Op::SIN,
        BuiltinOptions::None,
        &[In::I32(&[2], &[1, 2])],
        DType::I32,
    );
    assert_node_error(
        &err,
        "SIN",
        "prepare",
        &["input 0 ('x0') of SIN has dtype int32, expected float"],
    );
}

// ---------------------------------------------------------------------------
// Convolutions, pooling, matrix products, softmax.

fn conv_options(padding: Padding, stride: usize, activation: Activation) -> BuiltinOptions {
    BuiltinOptions::Conv2D {
        padding,
        stride_w: stride,
        stride_h: stride,
        dilation_w: 1,
        dilation_h: 1,
        activation,
    }
}

#[test]
fn conv2d_computes_with_padding_strides_bias_and_activation() {
    let image: Vec<f32> = (1..=16).map(|v| v as f32).collect();
    let input = || In::F32(&[1, 4, 4, 1], &image);
    // A 2x2 sum, VALID, stride 2, bias -30, RELU.
    let filter = || In::ConstF32(&[1, 2, 2, 1], &[1.0; 4]);
    let options = conv_options(Padding::Valid, 2, Activation::Relu);
    let bias = In::ConstF32(&[1], &[-30.0]);
    let (shape, y) = eval_f32(Op::CONV_2D, options.clone(), &[input(), filter(), bias]);
    assert_eq!(shape, [1, 2, 2, 1]);
    assert_eq!(y, [0.0, 0.0, 16.0, 24.0]); // 14, 22, 46, 54 less 30, clamped
    // Without bias, SAME, stride 1: the window runs over the edge.
    let same = conv_options(Padding::Same, 1, Activation::None);
    let (shape, y) = eval_f32(Op::CONV_2D, same, &[input(), filter(), In::Omitted]);
    assert_eq!(shape, [1, 4, 4, 1]);
    assert_eq!(&y[..4], &[14.0, 18.0, 22.0, 12.0]);
    assert_eq!(y[15], 16.0);
}

#[test]
fn conv2d_rejects_a_wrong_rank_and_a_quantized_filter() {
    let options = conv_options(Padding::Valid, 1, Activation::None);
    let input = In::F32(&[4, 4, 1], &[0.0; 16]);
    let filter = In::ConstF32(&[1, 2, 2, 1], &[1.0; 4]);
    let err = error(Op::CONV_2D, options.clone(), &[input, filter], DType::F32);
    assert_node_error(&err, "CONV_2D", "prepare", &["rank"]);

    let mut m = model(
        Op::CONV_2D,
        options,
        &[
            In::F32(&[1, 4, 4, 1], &[0.0; 16]),
            In::ConstF32(&[1, 2, 2, 1], &[1.0; 4]),
        ],
        &[DType::F32],
    );
    let filter = &mut m.subgraphs[0].tensors[1];
    filter.dtype = DType::I8;
    m.buffers[filter.buffer].data.truncate(4);
    let err = Interpreter::new(&m, &BuiltinOpResolver::new())
        .and_then(|mut i| i.allocate_tensors())
        .unwrap_err();
    assert_node_error(
        &err,
        "CONV_2D",
        "prepare",
        &[
            "input 1 ('x1')",
            "int8",
            "quantized models are not supported",
        ],
    );
}

#[test]
fn depthwise_conv2d_multiplies_channels() {
    let options = BuiltinOptions::DepthwiseConv2D {
        padding: Padding::Valid,
        stride_w: 1,
        stride_h: 1,
        dilation_w: 1,
        dilation_h: 1,
        depth_multiplier: 2,
        activation: Activation::Relu6,
    };
    // Channels (1, 10) at each of 2x2 pixels; a 1x1 filter of multiplier 2.
    let input = In::F32(&[1, 2, 2, 2], &[1.0, 10.0, 2.0, 10.0, 3.0, 10.0, 4.0, 10.0]);
    let filter = In::ConstF32(&[1, 1, 1, 4], &[1.0, -1.0, 0.5, 2.0]);
    let (shape, y) = eval_f32(Op::DEPTHWISE_CONV_2D, options, &[input, filter]);
    assert_eq!(shape, [1, 2, 2, 4]);
    assert_eq!(&y[..8], &[1.0, 0.0, 5.0, 6.0, 2.0, 0.0, 5.0, 6.0]);
}

#[test]
fn each_convolution_takes_its_own_options_or_none() {
    let input = || In::F32(&[1, 2, 2, 1], &[1.0, 2.0, 3.0, 4.0]);
    let filter = || In::ConstF32(&[1, 1, 1, 1], &[2.0]);
    let conv = conv_options(Padding::Valid, 1, Activation::None);
    let depthwise = BuiltinOptions::DepthwiseConv2D {
        padding: Padding::Valid,
        stride_w: 1,
        stride_h: 1,
        dilation_w: 1,
        dilation_h: 1,
        depth_multiplier: 1,
        activation: Activation::None,
    };
    let err = error(
        Op::CONV_2D,
        depthwise.clone(),
        &[input(), filter()],
        DType::F32,
    );
    assert_node_error(
        &err,
        "CONV_2D",
        "initialize",
        &["its own builtin options", "DepthwiseConv2D"],
    );
    let err = error(
        Op::DEPTHWISE_CONV_2D,
        conv,
        &[input(), filter()],
        DType::F32,
    );
    assert_node_error(
        &err,
        "DEPTHWISE_CONV_2D",
        "initialize",
        &["its own builtin options", "Conv2D"],
    );
    // No options at all: stride and dilation 1, SAME padding, no activation.
    for op in [Op::CONV_2D, Op::DEPTHWISE_CONV_2D] {
        let (shape, y) = eval_f32(op, BuiltinOptions::None, &[input(), filter()]);
        assert_eq!(shape, [1, 2, 2, 1], "{op}");
        assert_eq!(y, [2.0, 4.0, 6.0, 8.0], "{op}");
    }
    let (_, y) = eval_f32(Op::DEPTHWISE_CONV_2D, depthwise, &[input(), filter()]);
    assert_eq!(y, [2.0, 4.0, 6.0, 8.0]);
}

#[test]
fn pooling_computes_with_its_window_and_needs_its_options() {
    let image: Vec<f32> = (1..=9).map(|v| v as f32).collect();
    let pool = |padding, activation| BuiltinOptions::Pool2D {
        padding,
        stride_w: 2,
        stride_h: 2,
        filter_w: 2,
        filter_h: 2,
        activation,
    };
    let input = || In::F32(&[1, 3, 3, 1], &image);
    let (shape, y) = eval_f32(
        Op::MAX_POOL_2D,
        pool(Padding::Same, Activation::None),
        &[input()],
    );
    assert_eq!(shape, [1, 2, 2, 1]);
    assert_eq!(y, [5.0, 6.0, 8.0, 9.0]);
    let relu6 = pool(Padding::Same, Activation::Relu6);
    let (_, y) = eval_f32(Op::AVERAGE_POOL_2D, relu6, &[input()]);
    assert_eq!(y, [3.0, 4.5, 6.0, 6.0]);
    let (shape, _) = eval_f32(
        Op::AVERAGE_POOL_2D,
        pool(Padding::Valid, Activation::None),
        &[input()],
    );
    assert_eq!(shape, [1, 1, 1, 1]);

    let err = error(
        Op::MAX_POOL_2D,
        BuiltinOptions::None,
        &[input()],
        DType::F32,
    );
    assert_node_error(&err, "MAX_POOL_2D", "initialize", &["Pool2DOptions"]);
}

#[test]
fn fully_connected_flattens_or_keeps_dims_with_or_without_bias() {
    let x: Vec<f32> = (0..12).map(|v| v as f32).collect();
    let weights = [1.0f32, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]; // [2 units, 4]
    let input = || In::F32(&[3, 1, 4], &x);
    let w = || In::ConstF32(&[2, 4], &weights);
    let flat = BuiltinOptions::FullyConnected {
        activation: Activation::None,
        keep_num_dims: false,
    };
    let (shape, y) = eval_f32(Op::FULLY_CONNECTED, flat, &[input(), w(), In::Omitted]);
    assert_eq!(shape, [3, 2]);
    assert_eq!(y, [0.0, 6.0, 4.0, 22.0, 8.0, 38.0]);
    let keep = BuiltinOptions::FullyConnected {
        activation: Activation::Relu,
        keep_num_dims: true,
    };
    let bias = In::ConstF32(&[2], &[-5.0, 0.5]);
    let (shape, y) = eval_f32(Op::FULLY_CONNECTED, keep, &[input(), w(), bias]);
    assert_eq!(shape, [3, 1, 2]);
    assert_eq!(y, [0.0, 6.5, 0.0, 22.5, 3.0, 38.5]);

    let err = error(
        Op::FULLY_CONNECTED,
        BuiltinOptions::None,
        &[input(), In::ConstF32(&[2, 5], &[0.0; 10])],
        DType::F32,
    );
    assert_node_error(&err, "FULLY_CONNECTED", "prepare", &[]);

    let conv = conv_options(Padding::Same, 1, Activation::None);
    let err = error(Op::FULLY_CONNECTED, conv, &[input(), w()], DType::F32);
    assert_node_error(
        &err,
        "FULLY_CONNECTED",
        "initialize",
        &["FULLY_CONNECTED needs its own builtin options, the node has Conv2D"],
    );
    let tanh = BuiltinOptions::FullyConnected {
        activation: Activation::Tanh,
        keep_num_dims: false,
    };
    let err = error(Op::FULLY_CONNECTED, tanh, &[input(), w()], DType::F32);
    assert_node_error(
        &err,
        "FULLY_CONNECTED",
        "initialize",
        &["fused Tanh activation is not supported"],
    );
}

#[test]
fn batch_matmul_broadcasts_and_adjoints() {
    let lhs = In::F32(&[2, 1, 2], &[1.0, 2.0, 3.0, 4.0]);
    let rhs = In::ConstF32(&[3, 2], &[1.0, 0.0, 0.0, 1.0, 1.0, 1.0]);
    let options = BuiltinOptions::BatchMatMul {
        adj_x: false,
        adj_y: true,
    };
    let (shape, y) = eval_f32(Op::BATCH_MATMUL, options, &[lhs, rhs]);
    assert_eq!(shape, [2, 1, 3]);
    assert_eq!(y, [1.0, 2.0, 3.0, 3.0, 4.0, 7.0]);
}

#[test]
fn softmax_uses_beta() {
    let x = [0.0f32, 2.0_f32.ln()];
    let (_, y) = eval_f32(
        Op::SOFTMAX,
        BuiltinOptions::Softmax { beta: 1.0 },
        &[In::F32(&[1, 2], &x)],
    );
    assert_close(&y, &[1.0 / 3.0, 2.0 / 3.0]);
    let (shape, y) = eval_f32(
        Op::SOFTMAX,
        BuiltinOptions::Softmax { beta: 2.0 },
        &[In::F32(&[1, 2], &x)],
    );
    assert_eq!(shape, [1, 2]);
    assert_close(&y, &[0.2, 0.8]);
}

// ---------------------------------------------------------------------------
// Shapes and element moves.

#[test]
fn reshape_reads_its_shape_input_or_option_and_infers_minus_one() {
    let x: Vec<f32> = (0..6).map(|v| v as f32).collect();
    let shape_input = In::Const32(&[2], &[-1, 2]);
    let (shape, y) = eval_f32(
        Op::RESHAPE,
        BuiltinOptions::None,
        &[In::F32(&[2, 3], &x), shape_input],
    );
    assert_eq!(shape, [3, 2]);
    assert_eq!(y, x);
    let option = BuiltinOptions::Reshape {
        new_shape: vec![6, 1],
    };
    let (shape, _) = eval_f32(Op::RESHAPE, option, &[In::F32(&[2, 3], &x)]);
    assert_eq!(shape, [6, 1]);

    let bad = In::Const32(&[2], &[4, 2]);
    let err = error(
        Op::RESHAPE,
        BuiltinOptions::None,
        &[In::F32(&[2, 3], &x), bad],
        DType::F32,
    );
    assert_node_error(&err, "RESHAPE", "prepare", &["holds 8 elements"]);
}

#[test]
fn a_shape_input_known_only_at_invoke_is_an_error_naming_it() {
    let x = In::F32(&[2, 3], &[0.0; 6]);
    let shape = In::I32(&[2], &[3, 2]);
    let err = error(Op::RESHAPE, BuiltinOptions::None, &[x, shape], DType::F32);
    assert_node_error(
        &err,
        "RESHAPE",
        "prepare",
        &["input 1 ('x1')", "not a constant", "static shapes"],
    );
    let x = In::F32(&[2, 3], &[0.0; 6]);
    let perm = In::I32(&[2], &[1, 0]);
    let err = error(Op::TRANSPOSE, BuiltinOptions::None, &[x, perm], DType::F32);
    assert_node_error(
        &err,
        "TRANSPOSE",
        "prepare",
        &["the permutation", "static shapes"],
    );
}

#[test]
fn squeeze_and_expand_dims_change_only_the_shape() {
    let x = [1.0f32, 2.0, 3.0];
    let squeeze = BuiltinOptions::Squeeze {
        squeeze_dims: vec![-1],
    };
    let (shape, y) = eval_f32(Op::SQUEEZE, squeeze, &[In::F32(&[1, 3, 1], &x)]);
    assert_eq!((shape, y), (vec![1, 3], x.to_vec()));
    let all = BuiltinOptions::Squeeze {
        squeeze_dims: vec![],
    };
    let (shape, _) = eval_f32(Op::SQUEEZE, all, &[In::F32(&[1, 3, 1], &x)]);
    assert_eq!(shape, [3]);
    let wrong = BuiltinOptions::Squeeze {
        squeeze_dims: vec![1],
    };
    let err = error(Op::SQUEEZE, wrong, &[In::F32(&[1, 3, 1], &x)], DType::F32);
    assert_node_error(&err, "SQUEEZE", "prepare", &["dimension 1", "is 3, not 1"]);

    let axis = In::Const32(&[], &[-1]);
    let (shape, y) = eval_f32(
        Op::EXPAND_DIMS,
        BuiltinOptions::None,
        &[In::F32(&[3], &x), axis],
    );
    assert_eq!((shape, y), (vec![3, 1], x.to_vec()));
    let axis = In::Const32(&[1], &[2]);
    let err = error(
        Op::EXPAND_DIMS,
        BuiltinOptions::None,
        &[In::F32(&[3], &x), axis],
        DType::F32,
    );
    assert_node_error(&err, "EXPAND_DIMS", "prepare", &["axis 2 is out of range"]);
}

#[test]
fn transpose_concatenation_and_pack_move_elements_of_any_width() {
    let x = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    let perm = In::Const32(&[2], &[1, 0]);
    let (shape, y) = eval_f32(
        Op::TRANSPOSE,
        BuiltinOptions::None,
        &[In::F32(&[2, 3], &x), perm],
    );
    assert_eq!(shape, [3, 2]);
    assert_eq!(y, [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);

    let concat = BuiltinOptions::Concatenation {
        axis: -1,
        activation: Activation::None,
    };
    let ins = [
        In::I32(&[2, 1], &[1, 2]),
        In::Const32(&[2, 2], &[3, 4, 5, 6]),
    ];
    let (shape, y) = eval::<i32>(Op::CONCATENATION, concat, &ins, DType::I32);
    assert_eq!(shape, [2, 3]);
    assert_eq!(y, [1, 3, 4, 2, 5, 6]);
    let relu = BuiltinOptions::Concatenation {
        axis: 0,
        activation: Activation::Relu,
    };
    let err = error(
        Op::CONCATENATION,
        relu,
        &[In::F32(&[1], &[1.0])],
        DType::F32,
    );
    assert_node_error(&err, "CONCATENATION", "initialize", &["fused activation"]);

    let pack = BuiltinOptions::Pack {
        values_count: 2,
        axis: 1,
    };
    let ins = [In::F32(&[2], &[1.0, 2.0]), In::F32(&[2], &[3.0, 4.0])];
    let (shape, y) = eval_f32(Op::PACK, pack.clone(), &ins);
    assert_eq!(shape, [2, 2]);
    assert_eq!(y, [1.0, 3.0, 2.0, 4.0]);
    let err = error(Op::PACK, pack, &[In::F32(&[2], &[1.0, 2.0])], DType::F32);
    assert_node_error(&err, "PACK", "prepare", &["PACK takes 2 inputs"]);
}

#[test]
fn slices_pad_and_gather_select_elements() {
    let x: Vec<f32> = (0..12).map(|v| v as f32).collect();
    let input = || In::F32(&[3, 4], &x);
    let options = BuiltinOptions::StridedSlice {
        begin_mask: 0,
        end_mask: 0,
        ellipsis_mask: 0,
        new_axis_mask: 0,
        shrink_axis_mask: 1,
        offset: false,
    };
    let ins = [
        input(),
        In::Const32(&[2], &[1, 3]),
        In::Const32(&[2], &[2, 0]),
        In::Const32(&[2], &[1, -2]),
    ];
    let (shape, y) = eval_f32(Op::STRIDED_SLICE, options, &ins);
    assert_eq!((shape, y), (vec![2], vec![7.0, 5.0]));

    let ins = [
        input(),
        In::Const32(&[2], &[1, 1]),
        In::Const32(&[2], &[2, -1]),
    ];
    let (shape, y) = eval_f32(Op::SLICE, BuiltinOptions::None, &ins);
    assert_eq!(shape, [2, 3]);
    assert_eq!(y, [5.0, 6.0, 7.0, 9.0, 10.0, 11.0]);

    let ins = [
        In::F32(&[1, 2], &[1.0, 2.0]),
        In::Const32(&[2, 2], &[1, 0, 0, 1]),
    ];
    let (shape, y) = eval_f32(Op::PAD, BuiltinOptions::None, &ins);
    assert_eq!(shape, [2, 3]);
    assert_eq!(y, [0.0, 0.0, 0.0, 1.0, 2.0, 0.0]);

    let gather = BuiltinOptions::Gather {
        axis: 1,
        batch_dims: 0,
    };
    let ins = [input(), In::I32(&[2], &[3, 0])];
    let (shape, y) = eval_f32(Op::GATHER, gather.clone(), &ins);
    assert_eq!(shape, [3, 2]);
    assert_eq!(y, [3.0, 0.0, 7.0, 4.0, 11.0, 8.0]);
    let ins = [input(), In::I32(&[1], &[4])];
    let err = error(Op::GATHER, gather, &ins, DType::F32);
    assert_node_error(&err, "GATHER", "invoke", &[]);
}

#[test]
fn mean_and_sum_reduce_over_constant_axes() {
    let x: Vec<f32> = (0..6).map(|v| v as f32).collect();
    let keep = BuiltinOptions::Reducer { keep_dims: true };
    let ins = [In::F32(&[2, 3], &x), In::Const32(&[1], &[-1])];
    let (shape, y) = eval_f32(Op::MEAN, keep, &ins);
    assert_eq!((shape, y), (vec![2, 1], vec![1.0, 4.0]));
    let drop = BuiltinOptions::Reducer { keep_dims: false };
    let ins = [
        In::I32(&[2, 3], &[1, 2, 3, 4, 5, 6]),
        In::Const32(&[2], &[0, 1]),
    ];
    let (shape, y) = eval::<i32>(Op::SUM, drop, &ins, DType::I32);
    assert_eq!((shape, y), (Vec::<usize>::new(), vec![21]));
    let ins = [In::F32(&[2, 3], &x), In::Const32(&[1], &[2])];
    let err = error(Op::SUM, BuiltinOptions::None, &ins, DType::F32);
    assert_node_error(&err, "SUM", "prepare", &["axis"]);
}

#[test]
fn cumsum_and_cast() {
    let options = BuiltinOptions::CumSum {
        exclusive: true,
        reverse: true,
    };
    let ins = [In::F32(&[4], &[1.0, 2.0, 3.0, 4.0]), In::Const32(&[], &[0])];
    let (_, y) = eval_f32(Op::CUMSUM, options, &ins);
    assert_eq!(y, [9.0, 7.0, 4.0, 0.0]);

    let x = In::F32(&[4], &[-1.7, 0.0, 2.9, f32::NAN]);
    let (shape, y) = eval::<i32>(Op::CAST, BuiltinOptions::None, &[x], DType::I32);
    assert_eq!((shape, y), (vec![4], vec![-1, 0, 2, i32::MAX]));
    // To bool and back, through the output tensors' dtypes.
    let mut b = ModelBuilder::new();
    let x = b.f32("x", &[3]);
    let flags = b.tensor("flags", DType::Bool, &[3]);
    let y = b.tensor("y", DType::I32, &[3]);
    b.builtin(Op::CAST, 1, &[x], &[flags]);
    b.builtin(Op::CAST, 1, &[flags], &[y]);
    b.input(x).output(y);
    let mut interpreter = Interpreter::new(&b.build(), &BuiltinOpResolver::new()).unwrap();
    interpreter.allocate_tensors().unwrap();
    interpreter.set_input(0, &[0.0f32, -0.5, 3.0]).unwrap();
    interpreter.invoke().unwrap();
    assert_eq!(interpreter.output::<i32>(0).unwrap(), [0, 1, 1]);

    // A float model's uint8 input (an image) is cast to float32.
    let mut m = model(
        Op::CAST,
        BuiltinOptions::None,
        &[In::F32(&[3], &[0.0; 3])],
        &[DType::F32],
    );
    m.subgraphs[0].tensors[0].dtype = DType::U8;
    let mut interpreter = Interpreter::new(&m, &BuiltinOpResolver::new()).unwrap();
    interpreter.allocate_tensors().unwrap();
    interpreter.set_input(0, &[0u8, 7, 255]).unwrap();
    interpreter.invoke().unwrap();
    assert_eq!(interpreter.output::<f32>(0).unwrap(), [0.0, 7.0, 255.0]);

    let err = error(
        Op::CAST,
        BuiltinOptions::None,
        &[In::F32(&[1], &[1.0])],
        DType::F64,
    );
    assert_node_error(
        &err,
        "CAST",
        "prepare",
        &["CAST to double is not supported"],
    );
}

// ---------------------------------------------------------------------------
// Quantized models.

#[test]
fn a_model_quantized_by_the_converter_is_rejected_naming_node_op_and_tensor() {
    let path = format!(
        "{}/tests/data/ops/quantized.tflite",
        env!("CARGO_MANIFEST_DIR")
    );
    let model = Model::from_bytes(&std::fs::read(path).unwrap()).unwrap();
    let err = Interpreter::new(&model, &BuiltinOpResolver::new()).unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented);
    // The first quantized tensor of the table, and the node that reads it.
    let subgraph = &model.subgraphs[0];
    let t = subgraph
        .tensors
        .iter()
        .position(|t| t.quantization.as_ref().is_some_and(|q| !q.scale.is_empty()))
        .unwrap();
    let (node, k) = subgraph
        .operators
        .iter()
        .enumerate()
        .find_map(|(n, op)| Some((n, op.inputs.iter().position(|&i| i == Some(t))?)))
        .unwrap();
    let op = model.operator_codes[subgraph.operators[node].opcode_index].builtin;
    let name = &subgraph.tensors[t].name;
    let start = format!("tensor {t} ('{name}'), input {k} of node {node} ({op}), is quantized");
    assert!(
        err.message().starts_with(&start),
        "{err}\nshould start {start:?}"
    );
    assert!(
        err.message().contains("quantized models are not supported"),
        "{err}"
    );
}

#[test]
fn quantize_dequantize_and_int8_inputs_are_rejected_as_quantized() {
    let x = In::F32(&[2], &[1.0, 2.0]);
    let err = error(Op::QUANTIZE, BuiltinOptions::None, &[x], DType::I8);
    assert_node_error(
        &err,
        "QUANTIZE",
        "prepare",
        &[
            "input 0 ('x0', float)",
            "output 0 ('y0', int8)",
            "quantized model",
        ],
    );
    let mut m = model(
        Op::DEQUANTIZE,
        BuiltinOptions::None,
        &[In::F32(&[2], &[1.0, 2.0])],
        &[DType::F32],
    );
    m.subgraphs[0].tensors[0].dtype = DType::I8;
    let err = Interpreter::new(&m, &BuiltinOpResolver::new())
        .and_then(|mut i| i.allocate_tensors())
        .unwrap_err();
    assert_node_error(&err, "DEQUANTIZE", "prepare", &["quantized model"]);

    let mut m = model(
        Op::ADD,
        BuiltinOptions::None,
        &[In::F32(&[2], &[0.0; 2]), In::F32(&[2], &[0.0; 2])],
        &[DType::F32],
    );
    m.subgraphs[0].tensors[1].dtype = DType::U8;
    let err = Interpreter::new(&m, &BuiltinOpResolver::new())
        .and_then(|mut i| i.allocate_tensors())
        .unwrap_err();
    assert_node_error(
        &err,
        "ADD",
        "prepare",
        &[
            "input 1 ('x1')",
            "uint8",
            "quantized models are not supported",
        ],
    );

    // With quantization parameters, the interpreter refuses the model
    // before any kernel runs, naming the tensor's first use.
    m.subgraphs[0].tensors[1].quantization = Some(Quantization {
        scale: vec![0.1],
        zero_point: vec![0],
        quantized_dimension: 0,
    });
    let err = Interpreter::new(&m, &BuiltinOpResolver::new()).unwrap_err();
    assert!(
        err.message()
            .starts_with("tensor 1 ('x1'), input 1 of node 0 (ADD), is quantized"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------
// The resolver.

#[test]
fn the_builtin_resolver_serves_tensorflow_lites_versions_and_no_others() {
    let resolver = BuiltinOpResolver::new();
    assert_eq!(BuiltinKernel::all().len(), 46);
    for kernel in BuiltinKernel::all() {
        let v = kernel.versions();
        assert_eq!(v.min, 1);
        assert!(
            resolver.find_builtin(kernel.code(), v.max).is_some(),
            "{:?}",
            kernel
        );
        assert!(
            resolver.find_builtin(kernel.code(), v.max + 1).is_none(),
            "{:?}",
            kernel
        );
        assert!(
            resolver.find_builtin(kernel.code(), 0).is_none(),
            "{:?}",
            kernel
        );
    }
    assert_eq!(builtin_kernel(Op::CONV_2D).unwrap().versions().max, 8);
    assert_eq!(
        builtin_kernel(Op::FULLY_CONNECTED).unwrap().versions().max,
        13
    );
    assert!(builtin_kernel(Op::CUSTOM).is_none());
    assert_eq!(resolver.builtin_ops().len(), 46);

    // A version past the range is a missing op, in TensorFlow Lite's words.
    let mut m = model(
        Op::RELU,
        BuiltinOptions::None,
        &[In::F32(&[1], &[1.0])],
        &[DType::F32],
    );
    m.operator_codes[0].version = 4;
    let err = Interpreter::new(&m, &resolver).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert!(err.message().contains("RELU"), "{err}");
}

fn doubling_prepare(ctx: &mut PrepareContext<'_>) -> op_core::Result<()> {
    let shape = ctx.input_shape(0)?;
    ctx.set_output_shape(0, shape)
}

fn doubling_invoke(ctx: &mut InvokeContext<'_>) -> op_core::Result<()> {
    let x = ctx.input::<f32>(0)?;
    for (y, x) in ctx.output_mut::<f32>(0)?.iter_mut().zip(x) {
        *y = 2.0 * x;
    }
    Ok(())
}

#[test]
fn builtins_are_overridden_and_custom_ops_added_through_deref_mut() {
    let mut resolver = BuiltinOpResolver::new();
    resolver
        .add_builtin(Op::RELU, FnOp::new(doubling_prepare, doubling_invoke))
        .add_custom("Double", FnOp::new(doubling_prepare, doubling_invoke));
    let m = model(
        Op::RELU,
        BuiltinOptions::None,
        &[In::F32(&[2], &[-1.0, 1.0])],
        &[DType::F32],
    );
    let mut interpreter = Interpreter::new(&m, &resolver).unwrap();
    interpreter.allocate_tensors().unwrap();
    interpreter.set_input(0, &[-1.0f32, 1.0]).unwrap();
    interpreter.invoke().unwrap();
    assert_eq!(interpreter.output::<f32>(0).unwrap(), [-2.0, 2.0]);
    assert!(resolver.find_custom("Double", 1).is_some());
    // The other builtins stay.
    assert!(resolver.find_builtin(Op::RELU6, 1).is_some());
}

// ---------------------------------------------------------------------------
// Properties.

mod properties {
    use proptest::prelude::*;

    use super::*;

    /// A small shape: rank 0 to 4, dimensions 0 to 3.
    fn shape() -> impl Strategy<Value = Vec<usize>> {
        prop::collection::vec(0usize..4, 0..5)
    }

    /// Small ints, as a constant shape, axes, begin, size, paddings or
    /// permutation might hold, wrong more often than right.
    fn ints() -> impl Strategy<Value = Vec<i32>> {
        prop::collection::vec(-5i32..6, 0..7)
    }

    const OPS: [Op; 14] = [
        Op::RESHAPE,
        Op::SQUEEZE,
        Op::EXPAND_DIMS,
        Op::TRANSPOSE,
        Op::CONCATENATION,
        Op::PACK,
        Op::STRIDED_SLICE,
        Op::SLICE,
        Op::PAD,
        Op::GATHER,
        Op::MEAN,
        Op::SUM,
        Op::CUMSUM,
        Op::SOFTMAX,
    ];

    /// The model's result for `op` on an input of `shape` with constant
    /// inputs and options made from `a`, `b`, `c` and `mask`.
    fn outcome(
        op: Op,
        shape: &[usize],
        a: &[i32],
        b: &[i32],
        c: &[i32],
        mask: i32,
    ) -> Result<Interpreter, Error> {
        let n: usize = shape.iter().product();
        let x: Vec<f32> = (0..n).map(|v| v as f32).collect();
        let x = In::F32(shape, &x);
        let axis = a.first().copied().unwrap_or(0);
        let scalar = [axis];
        let ca = [a.len()];
        let (cb, cc) = ([b.len()], [c.len()]);
        let pairs = [a.len() / 2, 2];
        let (options, inputs): (BuiltinOptions, Vec<In<'_>>) = match op {
            Op::RESHAPE => (BuiltinOptions::None, vec![x, In::Const32(&ca, a)]),
            Op::SQUEEZE => (
                BuiltinOptions::Squeeze {
                    squeeze_dims: a.to_vec(),
                },
                vec![x],
            ),
            Op::EXPAND_DIMS => (BuiltinOptions::None, vec![x, In::Const32(&[], &scalar)]),
            Op::TRANSPOSE => (BuiltinOptions::None, vec![x, In::Const32(&ca, a)]),
            Op::CONCATENATION => (
                BuiltinOptions::Concatenation {
                    axis,
                    activation: Activation::None,
                },
                vec![x, x],
            ),
            Op::PACK => (
                BuiltinOptions::Pack {
                    values_count: 2,
                    axis,
                },
                vec![x, x],
            ),
            Op::STRIDED_SLICE => (
                BuiltinOptions::StridedSlice {
                    begin_mask: mask & 7,
                    end_mask: mask >> 3 & 7,
                    ellipsis_mask: mask >> 6 & 3,
                    new_axis_mask: mask >> 8 & 3,
                    shrink_axis_mask: mask >> 10 & 7,
                    offset: mask >> 13 & 1 == 1,
                },
                vec![
                    x,
                    In::Const32(&ca, a),
                    In::Const32(&cb, b),
                    In::Const32(&cc, c),
                ],
            ),
            Op::SLICE => (
                BuiltinOptions::None,
                vec![x, In::Const32(&ca, a), In::Const32(&cb, b)],
            ),
            Op::PAD => (
                BuiltinOptions::None,
                vec![x, In::Const32(&pairs, &a[..a.len() / 2 * 2])],
            ),
            Op::GATHER => (
                BuiltinOptions::Gather {
                    axis,
                    batch_dims: mask % 3 - 1,
                },
                vec![x, In::I32(&cb, b)],
            ),
            Op::MEAN | Op::SUM => (
                BuiltinOptions::Reducer {
                    keep_dims: mask % 2 == 0,
                },
                vec![x, In::Const32(&ca, a)],
            ),
            Op::CUMSUM => (BuiltinOptions::None, vec![x, In::Const32(&[], &scalar)]),
            _ => (BuiltinOptions::Softmax { beta: 1.0 }, vec![x]),
        };
        run(&model(op, options, &inputs, &[DType::F32]), &inputs)
    }

    const NN_OPS: [Op; 8] = [
        Op::CONV_2D,
        Op::DEPTHWISE_CONV_2D,
        Op::AVERAGE_POOL_2D,
        Op::MAX_POOL_2D,
        Op::FULLY_CONNECTED,
        Op::BATCH_MATMUL,
        Op::ADD,
        Op::CONCATENATION,
    ];

    /// The model's result for `op` on inputs of `x` and `w` (the filter,
    /// weights or second operand) and an optional bias of `bias`, with
    /// window options made from `k`.
    fn nn_outcome(
        op: Op,
        x: &[usize],
        w: &[usize],
        bias: Option<&[usize]>,
        k: [usize; 5],
    ) -> Result<Interpreter, Error> {
        let xs: Vec<f32> = (0..x.iter().product()).map(|v| v as f32 * 0.5).collect();
        let ws: Vec<f32> = vec![0.25; w.iter().product()];
        let bs: Vec<f32> = vec![1.0; bias.map_or(0, |b| b.iter().product())];
        let padding = if k[0].is_multiple_of(2) {
            Padding::Same
        } else {
            Padding::Valid
        };
        let options = match op {
            Op::CONV_2D => BuiltinOptions::Conv2D {
                padding,
                stride_w: k[1],
                stride_h: k[2],
                dilation_w: k[3],
                dilation_h: k[4],
                activation: Activation::Relu,
            },
            Op::DEPTHWISE_CONV_2D => BuiltinOptions::DepthwiseConv2D {
                padding,
                stride_w: k[1],
                stride_h: k[2],
                dilation_w: k[3],
                dilation_h: k[4],
                depth_multiplier: 1,
                activation: Activation::None,
            },
            Op::AVERAGE_POOL_2D | Op::MAX_POOL_2D => BuiltinOptions::Pool2D {
                padding,
                stride_w: k[1],
                stride_h: k[2],
                filter_w: k[3],
                filter_h: k[4],
                activation: Activation::None,
            },
            Op::FULLY_CONNECTED => BuiltinOptions::FullyConnected {
                activation: Activation::None,
                keep_num_dims: k[0].is_multiple_of(2),
            },
            Op::BATCH_MATMUL => BuiltinOptions::BatchMatMul {
                adj_x: k[1].is_multiple_of(2),
                adj_y: k[2].is_multiple_of(2),
            },
            Op::CONCATENATION => BuiltinOptions::Concatenation {
                axis: k[1] as i32 - 2,
                activation: Activation::None,
            },
            _ => BuiltinOptions::None,
        };
        let mut inputs = vec![In::F32(x, &xs)];
        if !matches!(op, Op::AVERAGE_POOL_2D | Op::MAX_POOL_2D) {
            inputs.push(In::ConstF32(w, &ws));
        }
        if let (Some(b), Op::CONV_2D | Op::DEPTHWISE_CONV_2D | Op::FULLY_CONNECTED) = (bias, op) {
            inputs.push(In::ConstF32(b, &bs));
        }
        run(&model(op, options, &inputs, &[DType::F32]), &inputs)
    }

    /// `a` and `b` broadcast together, the naive way: each output element
    /// from its multi-index.
    fn naive_add(a_shape: &[usize], a: &[f32], b_shape: &[usize], b: &[f32]) -> Vec<f32> {
        let rank = a_shape.len().max(b_shape.len());
        let pad = |s: &[usize]| {
            let mut p = vec![1; rank - s.len()];
            p.extend_from_slice(s);
            p
        };
        let (ap, bp) = (pad(a_shape), pad(b_shape));
        let out: Vec<usize> = ap.iter().zip(&bp).map(|(&x, &y)| x.max(y)).collect();
        let count: usize = out.iter().product();
        let offset = |shape: &[usize], index: &[usize]| {
            shape
                .iter()
                .zip(index)
                .fold(0, |acc, (&d, &i)| acc * d + if d == 1 { 0 } else { i })
        };
        (0..count)
            .map(|mut flat| {
                let mut index = vec![0; rank];
                for k in (0..rank).rev() {
                    index[k] = flat % out[k];
                    flat /= out[k];
                }
                a[offset(&ap, &index)] + b[offset(&bp, &index)]
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Whatever the constant inputs and options, a shape op either runs
        /// or fails with a typed error framed with its node: never a panic
        /// (which the interpreter would report as an internal error).
        #[test]
        fn any_constant_inputs_give_a_result_or_a_framed_error(
            op in prop::sample::select(&OPS[..]),
            shape in shape(),
            a in ints(),
            b in ints(),
            c in ints(),
            mask in 0i32..(1 << 14),
        ) {
            if let Err(e) = outcome(op, &shape, &a, &b, &c, mask) {
                prop_assert_eq!(e.code(), Code::InvalidArgument, "{}", e);
                let frame = e.context().last().cloned().unwrap_or_default();
                prop_assert!(frame.starts_with(&format!("Node number 0 ({op}) failed to")), "{}", e);
            }
        }

        /// Whatever the shapes and window options, the convolutions,
        /// poolings and matrix products run or fail with a typed error
        /// framed with their node.
        #[test]
        fn any_shapes_and_windows_give_a_result_or_a_framed_error(
            op in prop::sample::select(&NN_OPS[..]),
            // Rank 4 most often, where the windows are worked out.
            x in prop_oneof![3 => prop::collection::vec(0usize..5, 4), 1 => prop::collection::vec(0usize..5, 0..6)],
            w in prop_oneof![3 => prop::collection::vec(0usize..4, 4), 1 => prop::collection::vec(0usize..4, 0..6)],
            bias in prop::option::of(prop::collection::vec(0usize..5, 0..3)),
            k in prop::array::uniform5(0usize..4),
        ) {
            if let Err(e) = nn_outcome(op, &x, &w, bias.as_deref(), k) {
                prop_assert_eq!(e.code(), Code::InvalidArgument, "{}", e);
                let frame = e.context().last().cloned().unwrap_or_default();
                prop_assert!(frame.starts_with(&format!("Node number 0 ({op}) failed to")), "{}", e);
            }
        }

        /// ADD through the interpreter broadcasts as NumPy does.
        #[test]
        fn add_broadcasts_like_numpy(
            a_shape in prop::collection::vec(1usize..4, 0..4),
            ones in prop::collection::vec(any::<bool>(), 4),
            drop in 0usize..4,
        ) {
            let b_shape: Vec<usize> = a_shape
                .iter()
                .zip(&ones)
                .map(|(&d, &one)| if one { 1 } else { d })
                .skip(drop.min(a_shape.len()))
                .collect();
            let a: Vec<f32> = (0..a_shape.iter().product()).map(|v| v as f32).collect();
            let b: Vec<f32> = (0..b_shape.iter().product()).map(|v| 100.0 * v as f32).collect();
            // Either operand first: broadcasting is symmetric.
            for (xs, x, ys, y) in [(&a_shape, &a, &b_shape, &b), (&b_shape, &b, &a_shape, &a)] {
                let ins = [In::F32(xs, x), In::F32(ys, y)];
                let (shape, got) = eval_f32(Op::ADD, BuiltinOptions::None, &ins);
                prop_assert_eq!(shape.iter().product::<usize>(), got.len());
                prop_assert_eq!(got, naive_add(xs, x, ys, y));
            }
        }
    }
}
