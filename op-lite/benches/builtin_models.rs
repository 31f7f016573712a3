//! `invoke` with the builtin kernels, each beside a baseline in the same
//! run:
//!
//! - `cnn` and `mlp` (`tests/data/*.tflite`, TensorFlow's converter): the
//!   interpreter, and the same math functions called directly, node after
//!   node, on plain vectors (what the interpreter adds: the arena, the
//!   typed views and their checks, the dispatch through `dyn LiteNode`);
//! - a chain of 1,000 tiny ADD nodes (4 floats each, built in Rust as a
//!   `Model`) run by the builtin ADD kernel, beside the same 1,000 calls of
//!   `math::elementwise::binary`.
//!
//! ```sh
//! cargo bench -p op-lite --bench builtin_models
//! ```
//!
//! Then, from the medians of a plain timing loop: each cnn and mlp node's
//! direct math call alone (where a model's time goes; LiteRT's figures for
//! the same models come from `benches/litert_models.py`), and the ADD
//! chain's ns per node, both ways.

#[path = "../tests/common/mod.rs"]
mod common;

use std::hint::black_box;
use std::time::Instant;

use divan::Bencher;
use divan::counter::ItemsCount;
use op_lite::builtins::math::conv::{
    Conv2DParams, conv2d, conv2d_scratch_len, conv2d_shape, depthwise_conv2d,
    depthwise_conv2d_shape,
};
use op_lite::builtins::math::elementwise::{
    BinaryOp, BinaryParams, UnaryOp, binary, binary_shape, unary,
};
use op_lite::builtins::math::fully_connected::{
    FullyConnectedParams, PackedWeights, fully_connected_packed, fully_connected_shape,
};
use op_lite::builtins::math::pool::{Pool2DParams, average_pool2d, max_pool2d, pool2d_shape};
use op_lite::builtins::math::softmax::{SoftmaxParams, softmax};
use op_lite::model::{Activation, BuiltinOperator as Op, BuiltinOptions, Model};
use op_lite::{BuiltinOpResolver, Interpreter};

const NODES: usize = 1000;
const LEN: usize = 4;

fn main() {
    divan::main();
    // `cargo test --benches` runs each benchmark once, as a test; the
    // summary is for real runs.
    if !std::env::args().any(|arg| arg == "--test") {
        summary();
    }
}

fn read(name: &str) -> Model {
    let path = format!("{}/tests/data/{name}.tflite", env!("CARGO_MANIFEST_DIR"));
    Model::from_bytes(&std::fs::read(path).unwrap()).unwrap()
}

/// A deterministic input of `len` floats in [-2, 2).
fn input(len: usize) -> Vec<f32> {
    (0..len).map(|i| (i % 17) as f32 * 0.25 - 2.0).collect()
}

/// The interpreter of `model`, planned for an input of `shape`, filled.
fn interpreter(model: &Model, shape: &[usize]) -> Interpreter {
    let mut interpreter = Interpreter::new(model, &BuiltinOpResolver::new()).unwrap();
    if interpreter.input_shape(0).unwrap() != shape {
        interpreter.resize_input_tensor(0, shape).unwrap();
    }
    interpreter.allocate_tensors().unwrap();
    interpreter
        .set_input(0, &input(shape.iter().product()))
        .unwrap();
    interpreter
}

/// One node of the baseline: the math function to call, its params, and
/// the tensors it reads and writes.
enum Step {
    Unary(UnaryOp),
    Binary(BinaryParams),
    Conv(Conv2DParams),
    Depthwise(Conv2DParams),
    Pool(Pool2DParams, bool),
    FullyConnected(FullyConnectedParams, PackedWeights),
    Softmax(SoftmaxParams),
    Copy,
}

/// The baseline: a model's float nodes as direct calls of the math
/// functions over one vector per tensor, made once.
struct Direct {
    steps: Vec<(Step, Vec<Option<usize>>, usize)>,
    shapes: Vec<Vec<usize>>,
    buffers: Vec<Vec<f32>>,
    scratch: Vec<f32>,
    output: usize,
}

impl Direct {
    fn new(model: &Model, input_shape: &[usize]) -> Direct {
        let subgraph = &model.subgraphs[0];
        let mut shapes: Vec<Vec<usize>> =
            subgraph.tensors.iter().map(|t| t.shape.clone()).collect();
        let mut buffers: Vec<Vec<f32>> = subgraph
            .tensors
            .iter()
            .map(|t| {
                let data = &model.buffers[t.buffer].data;
                data.chunks_exact(4)
                    .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
                    .collect()
            })
            .collect();
        let x = subgraph.inputs[0];
        shapes[x] = input_shape.to_vec();
        buffers[x] = input(input_shape.iter().product());
        let mut steps = Vec::new();
        let mut scratch = 0;
        for op in &subgraph.operators {
            let code = model.operator_codes[op.opcode_index].builtin;
            let shape = |k: usize| shapes[op.inputs[k].unwrap()].clone();
            let bias = op
                .inputs
                .get(2)
                .copied()
                .flatten()
                .map(|t| shapes[t].clone());
            let (step, out_shape) = match (code, &op.builtin_options) {
                (Op::RELU | Op::RELU6 | Op::TANH | Op::LOGISTIC | Op::GELU, options) => {
                    let unary = match code {
                        Op::RELU => UnaryOp::Relu,
                        Op::RELU6 => UnaryOp::Relu6,
                        Op::TANH => UnaryOp::Tanh,
                        Op::LOGISTIC => UnaryOp::Logistic,
                        _ => UnaryOp::Gelu {
                            approximate: matches!(
                                options,
                                BuiltinOptions::Gelu { approximate: true }
                            ),
                        },
                    };
                    (Step::Unary(unary), shape(0))
                }
                (Op::ADD, BuiltinOptions::Arithmetic { activation }) => {
                    let params = BinaryParams {
                        op: BinaryOp::Add,
                        activation: *activation,
                    };
                    (
                        Step::Binary(params),
                        binary_shape(&shape(0), &shape(1)).unwrap(),
                    )
                }
                (Op::CONV_2D, options @ BuiltinOptions::Conv2D { .. }) => {
                    let p = Conv2DParams::from_options(options).unwrap();
                    scratch = scratch.max(conv2d_scratch_len(&shape(0), &shape(1), &p).unwrap());
                    let out = conv2d_shape(&shape(0), &shape(1), bias.as_deref(), &p).unwrap();
                    (Step::Conv(p), out)
                }
                (Op::DEPTHWISE_CONV_2D, options @ BuiltinOptions::DepthwiseConv2D { .. }) => {
                    let p = Conv2DParams::from_options(options).unwrap();
                    let out =
                        depthwise_conv2d_shape(&shape(0), &shape(1), bias.as_deref(), &p).unwrap();
                    (Step::Depthwise(p), out)
                }
                (
                    Op::MAX_POOL_2D | Op::AVERAGE_POOL_2D,
                    &BuiltinOptions::Pool2D {
                        padding,
                        stride_w,
                        stride_h,
                        filter_w,
                        filter_h,
                        activation,
                    },
                ) => {
                    let p = Pool2DParams {
                        padding,
                        stride_h,
                        stride_w,
                        filter_h,
                        filter_w,
                        activation,
                    };
                    let out = pool2d_shape(&shape(0), &p).unwrap();
                    (Step::Pool(p, code == Op::MAX_POOL_2D), out)
                }
                (
                    Op::FULLY_CONNECTED,
                    &BuiltinOptions::FullyConnected {
                        activation,
                        keep_num_dims,
                    },
                ) => {
                    let p = FullyConnectedParams {
                        activation,
                        keep_num_dims,
                    };
                    let out =
                        fully_connected_shape(&shape(0), &shape(1), bias.as_deref(), &p).unwrap();
                    // As the kernel: constant weights packed once.
                    let packed =
                        PackedWeights::new(&shape(1), &buffers[op.inputs[1].unwrap()]).unwrap();
                    (Step::FullyConnected(p, packed), out)
                }
                (Op::SOFTMAX, &BuiltinOptions::Softmax { beta }) => {
                    (Step::Softmax(SoftmaxParams { beta }), shape(0))
                }
                (Op::RESHAPE, _) => (Step::Copy, subgraph.tensors[op.outputs[0]].shape.clone()),
                (code, options) => panic!("the baseline has no {code} with {options:?}"),
            };
            let out = op.outputs[0];
            buffers[out] = vec![0.0; out_shape.iter().product()];
            shapes[out] = out_shape;
            steps.push((step, op.inputs.clone(), out));
        }
        Direct {
            steps,
            shapes,
            buffers,
            scratch: vec![0.0; scratch],
            output: subgraph.outputs[0],
        }
    }

    fn run(&mut self) {
        for k in 0..self.steps.len() {
            self.step(k);
        }
    }

    /// Runs node `k` alone (its inputs as the last run left them).
    fn step(&mut self, k: usize) {
        {
            let (step, inputs, out) = &self.steps[k];
            // The output taken out of the table while the inputs are read:
            // a move of the vector, no allocation.
            let mut y = std::mem::take(&mut self.buffers[*out]);
            let b = &self.buffers;
            let s = &self.shapes;
            let at = |k: usize| inputs[k].unwrap();
            let bias = inputs.get(2).copied().flatten().map(|t| &b[t][..]);
            let x = black_box(&b[at(0)][..]);
            let result = match step {
                Step::Unary(op) => unary(*op, x, &mut y),
                Step::Binary(p) => binary(*p, &s[at(0)], x, &s[at(1)], &b[at(1)], &mut y),
                Step::Conv(p) => conv2d(
                    p,
                    &s[at(0)],
                    x,
                    &s[at(1)],
                    &b[at(1)],
                    bias,
                    &mut y,
                    &mut self.scratch,
                ),
                Step::Depthwise(p) => {
                    depthwise_conv2d(p, &s[at(0)], x, &s[at(1)], &b[at(1)], bias, &mut y)
                }
                Step::Pool(p, true) => max_pool2d(p, &s[at(0)], x, &mut y),
                Step::Pool(p, false) => average_pool2d(p, &s[at(0)], x, &mut y),
                Step::FullyConnected(p, packed) => {
                    fully_connected_packed(p, &s[at(0)], x, packed, bias, &mut y)
                }
                Step::Softmax(p) => softmax(p, &s[at(0)], x, &mut y),
                Step::Copy => {
                    y.copy_from_slice(x);
                    Ok(())
                }
            };
            result.unwrap();
            self.buffers[*out] = y;
        }
    }

    /// What node `k` is, for the summary.
    fn name(&self, k: usize) -> String {
        let (step, _, out) = &self.steps[k];
        let kind = match step {
            Step::Unary(op) => format!("{op:?}"),
            Step::Binary(p) => format!("{:?}", p.op),
            Step::Conv(_) => "CONV_2D".into(),
            Step::Depthwise(_) => "DEPTHWISE_CONV_2D".into(),
            Step::Pool(_, true) => "MAX_POOL_2D".into(),
            Step::Pool(_, false) => "AVERAGE_POOL_2D".into(),
            Step::FullyConnected(..) => "FULLY_CONNECTED".into(),
            Step::Softmax(_) => "SOFTMAX".into(),
            Step::Copy => "RESHAPE (a copy)".into(),
        };
        format!("{kind} -> {:?}", self.shapes[*out])
    }

    fn output(&self) -> &[f32] {
        &self.buffers[self.output]
    }
}

const CNN_INPUT: [usize; 4] = [1, 12, 12, 3];
const MLP_INPUT: [usize; 2] = [3, 6];

/// Both ways agree before they are timed.
fn check(model: &Model, shape: &[usize]) -> (Interpreter, Direct) {
    let mut interpreter = interpreter(model, shape);
    let mut direct = Direct::new(model, shape);
    interpreter.invoke().unwrap();
    direct.run();
    assert_eq!(interpreter.output::<f32>(0).unwrap(), direct.output());
    (interpreter, direct)
}

#[divan::bench]
fn cnn_interpreter(bencher: Bencher) {
    let (mut interpreter, _) = check(&read("cnn"), &CNN_INPUT);
    bencher.bench_local(|| interpreter.invoke().unwrap());
}

#[divan::bench]
fn cnn_direct_math(bencher: Bencher) {
    let (_, mut direct) = check(&read("cnn"), &CNN_INPUT);
    bencher.bench_local(|| direct.run());
}

#[divan::bench]
fn mlp_interpreter(bencher: Bencher) {
    let (mut interpreter, _) = check(&read("mlp"), &MLP_INPUT);
    bencher.bench_local(|| interpreter.invoke().unwrap());
}

#[divan::bench]
fn mlp_direct_math(bencher: Bencher) {
    let (_, mut direct) = check(&read("mlp"), &MLP_INPUT);
    bencher.bench_local(|| direct.run());
}

fn add_chain_interpreter() -> Interpreter {
    interpreter(&common::add_chain(NODES, LEN), &[LEN])
}

/// The ADD chain's 1,000 additions as direct calls of the math function
/// over two alternating intermediates.
struct AddChain {
    x: Vec<f32>,
    c: Vec<f32>,
    t: [Vec<f32>; 2],
}

impl AddChain {
    fn new() -> AddChain {
        AddChain {
            x: input(LEN),
            c: vec![1.0; LEN],
            t: [vec![0.0; LEN], vec![0.0; LEN]],
        }
    }

    fn run(&mut self) {
        let params = BinaryParams {
            op: BinaryOp::Add,
            activation: Activation::None,
        };
        let [t0, t1] = &mut self.t;
        binary(params, &[LEN], black_box(&self.x), &[LEN], &self.c, t0).unwrap();
        for k in 1..NODES {
            let (from, to) = if k % 2 == 1 {
                (&*t0, &mut *t1)
            } else {
                (&*t1, &mut *t0)
            };
            binary(params, &[LEN], black_box(from), &[LEN], &self.c, to).unwrap();
        }
    }

    fn output(&self) -> &[f32] {
        &self.t[(NODES - 1) % 2]
    }
}

#[divan::bench]
fn add_chain_1000_interpreter(bencher: Bencher) {
    let mut interpreter = add_chain_interpreter();
    bencher
        .counter(ItemsCount::new(NODES))
        .bench_local(|| interpreter.invoke().unwrap());
    let mut direct = AddChain::new();
    direct.run();
    assert_eq!(interpreter.output::<f32>(0).unwrap(), direct.output());
}

#[divan::bench]
fn add_chain_1000_direct_math(bencher: Bencher) {
    let mut direct = AddChain::new();
    bencher
        .counter(ItemsCount::new(NODES))
        .bench_local(|| direct.run());
}

/// The median time of `f` over `samples` samples of `iters` calls, in
/// nanoseconds per call.
fn median_ns(samples: usize, iters: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..samples)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..iters {
                f();
            }
            start.elapsed().as_nanos() as f64 / iters as f64
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[samples / 2]
}

/// Where a model's time goes: each node's direct math call timed alone.
fn per_node(name: &str, shape: &[usize]) {
    let mut direct = Direct::new(&read(name), shape);
    direct.run();
    for k in 0..direct.steps.len() {
        let ns = median_ns(51, 200, || direct.step(k));
        println!("{name} node {k}: {:>8.0} ns  {}", ns, direct.name(k));
    }
}

fn summary() {
    per_node("cnn", &CNN_INPUT);
    per_node("mlp", &MLP_INPUT);
    let mut interpreter = add_chain_interpreter();
    let mut direct = AddChain::new();
    let invoke = median_ns(51, 100, || interpreter.invoke().unwrap()) / NODES as f64;
    let math = median_ns(51, 100, || direct.run()) / NODES as f64;
    println!(
        "ADD chain with the builtin ADD: invoke {invoke:.2} ns/node; direct math calls \
         {math:.2} ns/node; overhead {:.2} ns/node",
        invoke - math
    );
}
