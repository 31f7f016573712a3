//! Graphs exported as TensorFlow Lite models (`op_graph::tflite`): read
//! back, validated, their structure checked (op codes, options, custom
//! options, constants equal to the variables' values), and run in op-lite's
//! interpreter (its `BuiltinOpResolver`) against the session's own outputs.
//!
//! With `OPKIT_TFLITE_EXPORT_DIR` set, each model is also written there
//! with its input and the session's output as `.npy`, for
//! `tests/data/check_export.py` to run in LiteRT.

mod common;

use std::path::PathBuf;

use common::{assert_contains, write_npy};
use op_core::{AttrValue, Code, DType, Result, ShapeValue, Tensor};
use op_graph::tflite::{self, ExportOptions};
use op_graph::{Graph, GraphBuilder, NewNode, Output, Session};
use op_kernels::array::{ConcatV2, Pack, Reshape, Transpose};
use op_kernels::constant::PlaceholderWithDefault;
use op_kernels::identity::Identity;
use op_kernels::math::{
    AddV2, Cast, Cos, Exp, Log, Maximum, Minimum, Mul, Neg, RealDiv, Relu, Rsqrt, Sigmoid, Sin,
    Sqrt, Square, Sub, Tanh,
};
use op_kernels::matmul::MatMul;
use op_kernels::reduction::{Mean, Sum};
use op_kernels::variable::{AssignVariableOp, ReadVariableOp, VarHandleOp};
use op_lite::bridge::FrameworkOps;
use op_lite::builtins::builtin_kernel;
use op_lite::model::{Activation, BuiltinOperator, BuiltinOptions};
use op_lite::{BuiltinOpResolver, Interpreter, Model, OpResolver};
use proptest::prelude::*;

// ---- Programs ----

/// A variable named `name` holding `value`, assigned by node `name/init`;
/// returns its read. (Node names are `&'static`: the few here are leaked.)
fn variable(b: &GraphBuilder, name: &'static str, value: Tensor) -> Result<Output> {
    let dims: Vec<i64> = value.dims().iter().map(|&d| d as i64).collect();
    let handle = VarHandleOp::call_with(value.dtype(), ShapeValue::from_sizes(&dims))
        .shared_name(format!("{name}-{}", std::process::id()))
        .node_name(name)
        .run_on(b)?;
    let init = b.constant(value)?;
    AssignVariableOp::call_with(handle, init)
        .node_name(format!("{name}/init").leak())
        .run_on(b)?;
    ReadVariableOp::call_with(handle, DType::F32)
        .node_name(format!("{name}/read").leak())
        .run_on(b)
}

/// A session over `b`'s graph with every `*/init` node run.
fn session(b: GraphBuilder) -> Result<Session> {
    let graph = b.into_graph();
    let inits: Vec<String> = graph
        .nodes()
        .iter()
        .filter(|n| n.name().ends_with("/init"))
        .map(|n| n.name().to_owned())
        .collect();
    let session = Session::new(graph)?;
    let mut run = session.runner();
    for init in inits {
        run = run.target(init.as_str());
    }
    run.run()?;
    Ok(session)
}

const OFFSET: f32 = 1.0000001;
const SIN_X: [f32; 5] = [-8.0, 0.5, 2.0, 2.2, 201.0];

/// The seed's program, `y = sin(x + offset)`, with `offset` a variable at
/// what training finds; returns the session and `y`.
fn sin_program() -> Result<(Session, Output)> {
    let b = GraphBuilder::new();
    let x = b.placeholder("x", DType::F32, "[5]")?;
    let offset = variable(&b, "offset", Tensor::scalar(OFFSET))?;
    let shifted = AddV2::call_with(x, offset).run_on(&b)?;
    let y = Sin::call_with(shifted).node_name("Sin").run_on(&b)?;
    Ok((session(b)?, y))
}

/// A value in [-1, 1) from a fixed sequence, so models are reproducible.
fn values(dims: &[usize], seed: u32) -> Tensor {
    let n: usize = dims.iter().product();
    let data = (0..n)
        .map(|i| {
            let h = (i as u32 + 1)
                .wrapping_mul(2_654_435_761)
                .wrapping_add(seed.wrapping_mul(40_503));
            (h >> 8) as f32 / (1u32 << 23) as f32 - 1.0
        })
        .collect();
    Tensor::from_vec(dims, data).unwrap()
}

/// A two-layer perceptron on a dynamic batch: `sigmoid(relu(x W1 + b1) W2
/// + b2)`, the first layer's weights variables, the second's constants.
fn mlp_program() -> Result<(Session, Output)> {
    let b = GraphBuilder::new();
    let x = b.placeholder("x", DType::F32, "[?,4]")?;
    let w1 = variable(&b, "dense/kernel", values(&[4, 8], 1))?;
    let b1 = variable(&b, "dense/bias", values(&[8], 2))?;
    let w2 = b.constant(values(&[8, 3], 3))?;
    let b2 = b.constant(values(&[3], 4))?;
    let h = MatMul::call_with(x, w1).run_on(&b)?;
    let h = AddV2::call_with(h, b1).run_on(&b)?;
    let h = Relu::call_with(h).run_on(&b)?;
    let y = MatMul::call_with(h, w2).run_on(&b)?;
    let y = AddV2::call_with(y, b2).run_on(&b)?;
    let y = Sigmoid::call_with(y).node_name("y").run_on(&b)?;
    Ok((session(b)?, y))
}

/// Every other builtin of the table on one `[2, 3]` input.
fn ops_program() -> Result<(Session, Output)> {
    let b = GraphBuilder::new();
    let x = b.placeholder("x", DType::F32, "[2,3]")?;
    let c = b.constant(values(&[3], 5))?;
    let positive = Square::call_with(x).run_on(&b)?;
    let positive = AddV2::call_with(positive, b.constant(Tensor::scalar(0.5f32))?).run_on(&b)?;
    let a = Sub::call_with(x, c).run_on(&b)?;
    let a = Mul::call_with(a, c).run_on(&b)?;
    let a = RealDiv::call_with(a, positive).run_on(&b)?;
    let a = Maximum::call_with(a, Neg::call_with(x).run_on(&b)?).run_on(&b)?;
    let a = Minimum::call_with(a, Exp::call_with(x).run_on(&b)?).run_on(&b)?;
    let s = Sqrt::call_with(positive).run_on(&b)?;
    let s = AddV2::call_with(s, Rsqrt::call_with(positive).run_on(&b)?).run_on(&b)?;
    let s = AddV2::call_with(s, Log::call_with(positive).run_on(&b)?).run_on(&b)?;
    let s = AddV2::call_with(s, Cos::call_with(x).run_on(&b)?).run_on(&b)?;
    let s = AddV2::call_with(s, Tanh::call_with(a).run_on(&b)?).run_on(&b)?;
    let axis1 = b.constant(Tensor::from_vec([1], vec![1i64])?)?;
    let mean = Mean::call_with(s, axis1).keep_dims(true).run_on(&b)?; // [2, 1]
    let t =
        Transpose::call_with(s, b.constant(Tensor::from_vec([2], vec![1i32, 0])?)?).run_on(&b)?; // [3, 2]
    let t = Reshape::call_with(t, b.constant(Tensor::from_vec([2], vec![2i32, 3])?)?).run_on(&b)?;
    let joined = ConcatV2::call_with([s, t, mean], b.constant(Tensor::scalar(1i32))?).run_on(&b)?; // [2, 7]
    let packed = Pack::call_with([joined, joined]).axis(0).run_on(&b)?; // [2, 2, 7]
    let axis0 = b.constant(Tensor::from_vec([1], vec![0i32])?)?;
    let summed = Sum::call_with(packed, axis0).run_on(&b)?; // [2, 7]
    let rounded = Cast::call_with(summed, DType::I32).run_on(&b)?;
    let back = Cast::call_with(rounded, DType::F32).run_on(&b)?;
    let y = AddV2::call_with(summed, back).node_name("y").run_on(&b)?;
    Ok((session(b)?, y))
}

fn run_session(session: &Session, y: Output, input: &Tensor) -> Tensor {
    session
        .runner()
        .feed("x", input.clone())
        .fetch(y)
        .run()
        .unwrap()
        .remove(0)
}

/// Exports, checks that the bytes read back to the same model, and writes
/// the model, its input and the session's output for the LiteRT check.
fn export(
    session: &Session,
    y: Output,
    options: &ExportOptions,
    name: &str,
    input: &Tensor,
) -> Model {
    let model = tflite::export(session, [y], options).unwrap();
    let bytes = model.to_bytes().unwrap();
    assert_eq!(&bytes[4..8], b"TFL3");
    let read = Model::from_bytes(&bytes).unwrap();
    read.validate().unwrap();
    assert_eq!(read, model);
    if let Some(dir) = std::env::var_os("OPKIT_TFLITE_EXPORT_DIR") {
        let dir = PathBuf::from(dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{name}.tflite")), &bytes).unwrap();
        write_npy(&dir.join(format!("{name}.input.npy")), input);
        write_npy(
            &dir.join(format!("{name}.output.npy")),
            &run_session(session, y, input),
        );
    }
    model
}

fn ops(model: &Model) -> Vec<String> {
    let subgraph = &model.subgraphs[0];
    subgraph
        .operators
        .iter()
        .map(|op| {
            let code = &model.operator_codes[op.opcode_index];
            match &code.custom_name {
                Some(name) => format!("custom {name}"),
                None => code.builtin.to_string(),
            }
        })
        .collect()
}

fn constant_f32(model: &Model, tensor: usize) -> Vec<f32> {
    let info = &model.subgraphs[0].tensors[tensor];
    assert_eq!(info.dtype, DType::F32);
    assert_ne!(info.buffer, 0, "tensor {} has no data", info.name);
    model.buffers[info.buffer]
        .data
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

// ---- op-lite's interpreter ----

/// op-lite's builtins.
fn resolver() -> BuiltinOpResolver {
    BuiltinOpResolver::new()
}

/// Unary ops of the table, for random programs.
const UNARY: [&str; 7] = ["Sin", "Cos", "Tanh", "Sigmoid", "Relu", "Neg", "Square"];

/// Binary ops of the table, for random programs.
const BINARY: [&str; 6] = [
    "AddV2",
    "Sub",
    "Mul",
    "Maximum",
    "Minimum",
    "SquaredDifference",
];

/// Runs a one-input, one-output model in op-lite's interpreter.
fn run_lite(model: &Model, resolver: &dyn OpResolver, input: &Tensor) -> Vec<f32> {
    let mut interpreter = Interpreter::new(model, resolver).unwrap();
    let x = interpreter.input_index("x").unwrap();
    if interpreter.input_shape(x).unwrap() != input.dims() {
        interpreter.resize_input_tensor(x, input.dims()).unwrap();
    }
    interpreter.allocate_tensors().unwrap();
    interpreter
        .set_input(x, input.as_slice::<f32>().unwrap())
        .unwrap();
    interpreter.invoke().unwrap();
    interpreter.output::<f32>(0).unwrap().to_vec()
}

fn assert_close(actual: &[f32], expected: &[f32], tolerance: f32) {
    assert_eq!(actual.len(), expected.len());
    for (i, (a, e)) in actual.iter().zip(expected).enumerate() {
        assert!((a - e).abs() <= tolerance, "element {i}: {a} vs {e}");
    }
}

// ---- The tests ----

/// A random program of elementwise ops: placeholders `a` (of `shape`) and
/// `b` (of `shape` with some dims 1 and maybe fewer of them, so that every
/// pair of values broadcasts), then each step applies a unary op to a
/// value, or a binary op to two.
fn random_program(
    shape: &[usize],
    b_ones: &[bool],
    b_rank: usize,
    steps: &[(bool, usize, usize, usize)],
) -> Result<(Graph, Output)> {
    let mut graph = Graph::new();
    let b_shape: Vec<usize> = shape[shape.len() - b_rank..]
        .iter()
        .zip(b_ones)
        .map(|(&d, &one)| if one { 1 } else { d })
        .collect();
    let mut values = Vec::new();
    for (name, dims) in [("a", shape.to_vec()), ("b", b_shape)] {
        let dims: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
        let node = NewNode::new("Placeholder")
            .name(name)
            .attr("dtype", DType::F32)
            .attr("shape", ShapeValue::from_sizes(&dims));
        values.push(graph.add(node)?.output(0));
    }
    for &(is_unary, op, x, y) in steps {
        let pick = |k: usize| values[k % values.len()];
        let node = if is_unary {
            NewNode::new(UNARY[op % UNARY.len()]).input(pick(x))
        } else {
            NewNode::new(BINARY[op % BINARY.len()])
                .input(pick(x))
                .input(pick(y))
        };
        values.push(graph.add(node)?.output(0));
    }
    let y = *values.last().expect("two placeholders at least");
    Ok((graph, y))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn random_elementwise_programs_compute_the_same_in_the_lite_runtime(
        shape in prop::collection::vec(1usize..4, 1..4),
        b_ones in prop::collection::vec(any::<bool>(), 3),
        b_rank in 0usize..4,
        steps in prop::collection::vec((any::<bool>(), 0usize..16, any::<usize>(), any::<usize>()), 1..8),
        seed in any::<u32>(),
    ) {
        common::link();
        let b_rank = b_rank.min(shape.len());
        let (graph, y) = random_program(&shape, &b_ones, b_rank, &steps).unwrap();
        let model = tflite::export(&graph, [y], &ExportOptions::default()).unwrap();
        let model = Model::from_bytes(&model.to_bytes().unwrap()).unwrap();
        let feeds: Vec<(&str, Tensor)> = ["a", "b"]
            .iter()
            .enumerate()
            .map(|(k, &name)| {
                let node = graph.node_by_name(name).unwrap();
                let dims: Vec<usize> = match &node.output_shape(0).unwrap().0 {
                    Some(dims) => dims.iter().map(|d| d.unwrap()).collect(),
                    None => unreachable!("placeholders of known shapes"),
                };
                let value = values(&dims, seed.wrapping_add(k as u32));
                let doubled: Vec<f32> = value.as_slice::<f32>().unwrap().iter().map(|v| v * 2.0).collect();
                (name, Tensor::from_vec(&dims, doubled).unwrap())
            })
            .collect();

        let session = Session::new(graph).unwrap();
        let mut run = session.runner().fetch(y);
        for (name, value) in &feeds {
            run = run.feed(*name, value.clone());
        }
        let expected = run.run().unwrap().remove(0);

        let mut interpreter = Interpreter::new(&model, &resolver()).unwrap();
        interpreter.allocate_tensors().unwrap();
        for (name, value) in &feeds {
            // A placeholder the output does not need is not an input.
            if let Ok(i) = interpreter.input_index(name) {
                interpreter.set_input(i, value.as_slice::<f32>().unwrap()).unwrap();
            }
        }
        interpreter.invoke().unwrap();
        prop_assert_eq!(interpreter.output_shape(0).unwrap(), expected.dims());
        let actual = interpreter.output::<f32>(0).unwrap();
        for (a, e) in actual.iter().zip(expected.as_slice::<f32>().unwrap()) {
            // Squares of squares may overflow; both sides then agree on
            // infinity or NaN.
            let close = a == e || (a.is_nan() && e.is_nan()) || (a - e).abs() <= 1e-5 + 1e-5 * e.abs();
            prop_assert!(close, "{} vs {}", a, e);
        }
    }
}

#[test]
fn the_sin_program_exports_as_add_and_sin_with_the_offset_frozen() {
    common::link();
    let (session, y) = sin_program().unwrap();
    let input = Tensor::from_vec([5], SIN_X.to_vec()).unwrap();
    let model = export(
        &session,
        y,
        &ExportOptions::default(),
        "sin_builtin",
        &input,
    );
    assert_eq!(ops(&model), ["ADD", "SIN"]);
    assert!(model.operator_codes.iter().all(|c| c.version == 1));
    let subgraph = &model.subgraphs[0];
    let names = |list: &[usize]| -> Vec<&str> {
        list.iter()
            .map(|&t| subgraph.tensors[t].name.as_str())
            .collect()
    };
    assert_eq!(names(&subgraph.inputs), ["x"]);
    assert_eq!(names(&subgraph.outputs), ["Sin"]);
    assert_eq!(subgraph.tensors[subgraph.inputs[0]].shape, [5]);
    // Only what y needs: x, the frozen offset, x + offset, y; no handle.
    assert_eq!(subgraph.tensors.len(), 4);
    let add = &subgraph.operators[0];
    let offset = add.inputs[1].unwrap();
    assert_eq!(subgraph.tensors[offset].name, "offset/read");
    assert_eq!(constant_f32(&model, offset), [OFFSET]);
    assert_eq!(
        add.builtin_options,
        BuiltinOptions::Arithmetic {
            activation: Activation::None
        }
    );
    let signature = &model.signatures[0];
    assert_eq!(signature.key, "serving_default");
    assert_eq!(signature.inputs, [("x".to_owned(), subgraph.inputs[0])]);
    assert_eq!(signature.outputs, [("Sin".to_owned(), subgraph.outputs[0])]);

    let expected = run_session(&session, y, &input);
    let actual = run_lite(&model, &resolver(), &input);
    assert_close(&actual, expected.as_slice::<f32>().unwrap(), 1e-6);
}

#[test]
fn sin_kept_custom_is_a_custom_op_that_the_interpreter_asks_for() {
    common::link();
    let (session, y) = sin_program().unwrap();
    let input = Tensor::from_vec([5], SIN_X.to_vec()).unwrap();
    let options = ExportOptions::default().keep_custom("Sin");
    let model = export(&session, y, &options, "sin_custom", &input);
    assert_eq!(ops(&model), ["ADD", "custom Sin"]);
    let operator = &model.subgraphs[0].operators[1];
    let sin = &model.operator_codes[operator.opcode_index];
    assert_eq!(sin.builtin, BuiltinOperator::CUSTOM);
    assert_eq!(sin.version, 1);
    assert_eq!(
        decode_attrs("Sin", &operator.custom_options),
        [("T".to_owned(), AttrValue::Type(DType::F32))]
    );

    let error = Interpreter::new(&model, &resolver()).unwrap_err();
    assert!(
        error
            .message()
            .starts_with("Didn't find custom operator for name 'Sin'"),
        "{error}"
    );
    let mut with_sin = resolver();
    with_sin.add_custom("Sin", builtin_kernel(BuiltinOperator::SIN).unwrap());
    let expected = run_session(&session, y, &input);
    let actual = run_lite(&model, &with_sin, &input);
    assert_close(&actual, expected.as_slice::<f32>().unwrap(), 1e-6);
}

#[test]
fn the_mlp_exports_as_fully_connected_layers_with_transposed_weights() {
    common::link();
    let (session, y) = mlp_program().unwrap();
    let input = values(&[3, 4], 9);
    let expected = run_session(&session, y, &input);
    let w1 = values(&[4, 8], 1);
    let w1 = w1.as_slice::<f32>().unwrap();
    let transposed: Vec<f32> = (0..8)
        .flat_map(|o| (0..4).map(move |i| w1[i * 8 + o]))
        .collect();

    // As the converter writes it: the biases and the Relu fused.
    let model = export(&session, y, &ExportOptions::default(), "mlp", &input);
    assert_eq!(
        ops(&model),
        ["FULLY_CONNECTED", "FULLY_CONNECTED", "LOGISTIC"]
    );
    let subgraph = &model.subgraphs[0];
    let x = &subgraph.tensors[subgraph.inputs[0]];
    assert_eq!(
        (x.shape.as_slice(), x.shape_signature.as_deref()),
        (&[1, 4][..], Some(&[-1, 4][..]))
    );
    let [first, second] = [&subgraph.operators[0], &subgraph.operators[1]];
    // FULLY_CONNECTED's weights are [out, in]: the variable's [4, 8] value
    // transposed.
    let weights = first.inputs[1].unwrap();
    assert_eq!(subgraph.tensors[weights].shape, [8, 4]);
    assert_eq!(constant_f32(&model, weights), transposed);
    let bias = first.inputs[2].expect("the first layer's bias, fused");
    assert_eq!(
        constant_f32(&model, bias),
        values(&[8], 2).as_slice::<f32>().unwrap()
    );
    assert_eq!(
        first.builtin_options,
        BuiltinOptions::FullyConnected {
            activation: Activation::Relu,
            keep_num_dims: false
        }
    );
    // The fused tensor is named after the last op fused in.
    assert_eq!(subgraph.tensors[first.outputs[0]].name, "Relu");
    let bias = second.inputs[2].expect("the second layer's bias, fused");
    assert_eq!(
        constant_f32(&model, bias),
        values(&[3], 4).as_slice::<f32>().unwrap()
    );
    assert_eq!(
        second.builtin_options,
        BuiltinOptions::FullyConnected {
            activation: Activation::None,
            keep_num_dims: false
        }
    );
    let actual = run_lite(&model, &resolver(), &input);
    assert_close(&actual, expected.as_slice::<f32>().unwrap(), 1e-5);

    // Unfused: one operator per op.
    let options = ExportOptions {
        fuse: false,
        ..ExportOptions::default()
    };
    let model = export(&session, y, &options, "mlp_unfused", &input);
    assert_eq!(
        ops(&model),
        [
            "FULLY_CONNECTED",
            "ADD",
            "RELU",
            "FULLY_CONNECTED",
            "ADD",
            "LOGISTIC"
        ]
    );
    assert_eq!(model.subgraphs[0].operators[0].inputs[2], None, "no bias");
    let actual = run_lite(&model, &resolver(), &input);
    assert_close(&actual, expected.as_slice::<f32>().unwrap(), 1e-5);
}

#[test]
fn a_value_read_twice_through_identities_is_not_fused_away() {
    common::link();
    // relu(identity(identity(x W))) where the first identity is also read by
    // the Sub: the Relu must not be fused into the product.
    let b = GraphBuilder::new();
    let x = b.placeholder("x", DType::F32, "[2,4]").unwrap();
    let w = b.constant(values(&[4, 3], 1)).unwrap();
    let h = MatMul::call_with(x, w).run_on(&b).unwrap();
    let first = Identity::call_with(h).run_on(&b).unwrap();
    let second = Identity::call_with(first).run_on(&b).unwrap();
    let r = Relu::call_with(second).run_on(&b).unwrap();
    let y = Sub::call_with(r, first).node_name("y").run_on(&b).unwrap();
    let session = session(b).unwrap();
    let input = values(&[2, 4], 3);
    let model = export(&session, y, &ExportOptions::default(), "identities", &input);
    assert_eq!(ops(&model), ["FULLY_CONNECTED", "RELU", "SUB"]);
    let expected = run_session(&session, y, &input);
    let actual = run_lite(&model, &resolver(), &input);
    assert_close(&actual, expected.as_slice::<f32>().unwrap(), 1e-5);
}

#[test]
fn a_value_read_twice_is_not_fused_away() {
    common::link();
    // h = x W + b is read by the Relu and by the output's Sub: the bias is
    // fused into the product (which only the addition reads), the Relu is
    // not (the Sub would read relu(h) for h).
    let b = GraphBuilder::new();
    let x = b.placeholder("x", DType::F32, "[2,4]").unwrap();
    let w = b.constant(values(&[4, 3], 1)).unwrap();
    let bias = b.constant(values(&[3], 2)).unwrap();
    let h = MatMul::call_with(x, w).run_on(&b).unwrap();
    let h = AddV2::call_with(h, bias).run_on(&b).unwrap();
    let r = Relu::call_with(h).run_on(&b).unwrap();
    let y = Sub::call_with(r, h).node_name("y").run_on(&b).unwrap();
    let session = session(b).unwrap();
    let input = values(&[2, 4], 3);
    let model = export(&session, y, &ExportOptions::default(), "shared", &input);
    assert_eq!(ops(&model), ["FULLY_CONNECTED", "RELU", "SUB"]);
    let fc = &model.subgraphs[0].operators[0];
    assert!(fc.inputs[2].is_some(), "the bias, fused");
    assert_eq!(
        fc.builtin_options,
        BuiltinOptions::FullyConnected {
            activation: Activation::None,
            keep_num_dims: false
        }
    );
    let expected = run_session(&session, y, &input);
    let actual = run_lite(&model, &resolver(), &input);
    assert_close(&actual, expected.as_slice::<f32>().unwrap(), 1e-5);
}

#[test]
fn the_other_builtins_export_with_their_options() {
    common::link();
    let (session, y) = ops_program().unwrap();
    let input = values(&[2, 3], 7);
    let model = export(&session, y, &ExportOptions::default(), "ops", &input);
    let expected = run_session(&session, y, &input);
    let actual = run_lite(&model, &resolver(), &input);
    assert_close(&actual, expected.as_slice::<f32>().unwrap(), 1e-5);
    let mut codes = ops(&model);
    codes.sort();
    codes.dedup();
    assert_eq!(
        codes,
        [
            "ADD",
            "CAST",
            "CONCATENATION",
            "COS",
            "DIV",
            "EXP",
            "LOG",
            "MAXIMUM",
            "MEAN",
            "MINIMUM",
            "MUL",
            "NEG",
            "PACK",
            "RESHAPE",
            "RSQRT",
            "SQRT",
            "SQUARE",
            "SUB",
            "SUM",
            "TANH",
            "TRANSPOSE"
        ]
    );
    let subgraph = &model.subgraphs[0];
    let find = |code: BuiltinOperator| {
        subgraph
            .operators
            .iter()
            .find(|op| model.operator_codes[op.opcode_index].builtin == code)
            .unwrap()
    };
    assert_eq!(
        find(BuiltinOperator::CONCATENATION).builtin_options,
        BuiltinOptions::Concatenation {
            axis: 1,
            activation: Activation::None
        }
    );
    assert_eq!(
        find(BuiltinOperator::CONCATENATION).inputs.len(),
        3,
        "the axis is an option"
    );
    assert_eq!(
        find(BuiltinOperator::PACK).builtin_options,
        BuiltinOptions::Pack {
            values_count: 2,
            axis: 0
        }
    );
    assert_eq!(
        find(BuiltinOperator::MEAN).builtin_options,
        BuiltinOptions::Reducer { keep_dims: true }
    );
    assert_eq!(
        find(BuiltinOperator::SUM).builtin_options,
        BuiltinOptions::Reducer { keep_dims: false }
    );
    // The int64 axes of MEAN are written as int32, which MEAN reads.
    let axes = &subgraph.tensors[find(BuiltinOperator::MEAN).inputs[1].unwrap()];
    assert_eq!(axes.dtype, DType::I32);
    assert_eq!(model.buffers[axes.buffer].data, 1i32.to_le_bytes());
    // The options tables the converter writes empty.
    assert_eq!(
        find(BuiltinOperator::NEG).builtin_options,
        BuiltinOptions::Other { union_type: 42 }
    );
    assert_eq!(
        find(BuiltinOperator::SQRT).builtin_options,
        BuiltinOptions::None
    );
}

#[test]
fn every_op_of_the_builtin_table_is_an_op_of_the_registry() {
    common::link();
    let registry = op_core::Registry::global();
    for (op, code, _) in tflite::builtin_ops() {
        assert!(
            registry.op(op).is_ok(),
            "{op} (exported as {code}) is not registered"
        );
    }
}

#[test]
fn ops_without_a_builtin_are_custom_ops_with_their_attrs_in_the_options() {
    common::link();
    let b = GraphBuilder::new();
    let x = b.placeholder("x", DType::F32, "[3]").unwrap();
    let y = op_kernels::example::Example::call_with(x)
        .node_name("y")
        .run_on(&b)
        .unwrap();
    let graph = b.into_graph();
    let model = tflite::export(&graph, [y], &ExportOptions::default()).unwrap();
    assert_eq!(ops(&model), ["custom Example"]);
    let operator = &model.subgraphs[0].operators[0];
    assert_eq!(
        decode_attrs("Example", &operator.custom_options),
        graph.node_by_name("y").unwrap().attrs()
    );

    // MatMul kept custom: its attrs, as the node has them.
    let (session, y) = mlp_program().unwrap();
    let options = ExportOptions::default().keep_custom("MatMul");
    let model = tflite::export(&session, [y], &options).unwrap();
    // The Relu fused into the ADD before it.
    assert_eq!(
        ops(&model),
        ["custom MatMul", "ADD", "custom MatMul", "ADD", "LOGISTIC"]
    );
    let operator = &model.subgraphs[0].operators[0];
    let attrs = decode_attrs("MatMul", &operator.custom_options);
    assert_eq!(
        attrs,
        session.graph().node_by_name("MatMul").unwrap().attrs()
    );
    assert!(attrs.contains(&("transpose_b".to_owned(), AttrValue::Bool(false))));
    assert!(attrs.contains(&("T".to_owned(), AttrValue::Type(DType::F32))));
    // The weights are the variable's value as it is, not transposed.
    let weights = operator.inputs[1].unwrap();
    assert_eq!(
        constant_f32(&model, weights),
        values(&[4, 8], 1).as_slice::<f32>().unwrap()
    );
}

/// The attrs in a custom op's options, decoded for op `op`.
fn decode_attrs(op: &str, options: &[u8]) -> Vec<(String, AttrValue)> {
    let registry = op_core::Registry::global();
    op_lite::attrs::decode_attrs(registry.op(op).unwrap().def(), options).unwrap()
}

#[test]
fn several_inputs_and_outputs_keep_their_order_and_names() {
    common::link();
    let b = GraphBuilder::new();
    let _unused = b.placeholder("unused", DType::F32, "[2]").unwrap();
    let x = b.placeholder("x", DType::F32, "[2]").unwrap();
    let w = b.placeholder("w", DType::F32, "[2]").unwrap();
    let sum = AddV2::call_with(x, w).node_name("sum").run_on(&b).unwrap();
    let product = Mul::call_with(sum, w)
        .node_name("product")
        .run_on(&b)
        .unwrap();
    let graph = b.into_graph();
    let model = tflite::export(&graph, [product, sum, x], &ExportOptions::default()).unwrap();
    let subgraph = &model.subgraphs[0];
    let names = |list: &[usize]| -> Vec<String> {
        list.iter()
            .map(|&t| subgraph.tensors[t].name.clone())
            .collect()
    };
    // Placeholders in the graph's order, the unneeded one left out; the
    // outputs in the order asked, an input among them.
    assert_eq!(names(&subgraph.inputs), ["x", "w"]);
    assert_eq!(names(&subgraph.outputs), ["product", "sum", "x"]);
    assert_eq!(subgraph.outputs[2], subgraph.inputs[0]);
    let signature = &model.signatures[0];
    let keys: Vec<&str> = signature.outputs.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["product", "sum", "x"]);

    let mut interpreter = Interpreter::new(&model, &resolver()).unwrap();
    interpreter.allocate_tensors().unwrap();
    interpreter.set_input(0, &[1.0f32, 2.0]).unwrap();
    interpreter.set_input(1, &[10.0f32, 20.0]).unwrap();
    interpreter.invoke().unwrap();
    assert_eq!(interpreter.output::<f32>(0).unwrap(), [110.0, 440.0]);
    assert_eq!(interpreter.output::<f32>(1).unwrap(), [11.0, 22.0]);
    assert_eq!(interpreter.output::<f32>(2).unwrap(), [1.0, 2.0]);
}

#[test]
fn a_placeholder_with_default_is_its_default() {
    common::link();
    let b = GraphBuilder::new();
    let default = b.constant(values(&[3], 1)).unwrap();
    let x = PlaceholderWithDefault::call_with(default, ShapeValue::from_sizes(&[-1]))
        .node_name("x")
        .run_on(&b)
        .unwrap();
    let y = Sin::call_with(x).node_name("y").run_on(&b).unwrap();
    let session = session(b).unwrap();
    let model = tflite::export(&session, [y], &ExportOptions::default()).unwrap();
    let subgraph = &model.subgraphs[0];
    assert!(subgraph.inputs.is_empty());
    assert_eq!(ops(&model), ["SIN"]);
    let input = subgraph.operators[0].inputs[0].unwrap();
    assert_eq!(
        constant_f32(&model, input),
        values(&[3], 1).as_slice::<f32>().unwrap()
    );

    let mut interpreter = Interpreter::new(&model, &resolver()).unwrap();
    interpreter.allocate_tensors().unwrap();
    interpreter.invoke().unwrap();
    let expected = session.runner().fetch(y).run().unwrap().remove(0);
    assert_close(
        interpreter.output::<f32>(0).unwrap(),
        expected.as_slice::<f32>().unwrap(),
        1e-6,
    );
}

#[test]
fn to_bytes_and_write_give_the_file_of_the_model() {
    common::link();
    let (session, y) = sin_program().unwrap();
    let options = ExportOptions::default();
    let model = tflite::export(&session, ["Sin"], &options).unwrap();
    let bytes = tflite::to_bytes(&session, [y], &options).unwrap();
    assert_eq!(bytes, model.to_bytes().unwrap());

    let dir = std::env::temp_dir().join(format!("opkit-tflite-export-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("sin.tflite");
    tflite::write(&session, [y], &options, &path).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    // A directory where the file should be.
    let error = tflite::write(&session, [y], &options, &dir).unwrap_err();
    assert_contains(&error, &["cannot write", &dir.display().to_string()]);
    std::fs::remove_dir_all(&dir).unwrap();

    // A graph without variables exports from the graph alone (here as the
    // session holds it).
    let b = GraphBuilder::new();
    let x = b.placeholder("x", DType::F32, "[3]").unwrap();
    let y = Sin::call_with(x).run_on(&b).unwrap();
    let graph = std::sync::Arc::new(b.into_graph());
    let model = tflite::export(&graph, [y], &options).unwrap();
    assert_eq!(ops(&model), ["SIN"]);
    assert_eq!(model.description, options.description);
}

#[test]
fn errors_name_the_node_and_what_a_tflite_file_cannot_say() {
    common::link();
    let options = ExportOptions::default();

    // An output the graph does not have.
    let (session, _) = sin_program().unwrap();
    let error = tflite::export(&session, ["Sinn"], &options).unwrap_err();
    assert_eq!(error.code(), Code::NotFound);
    assert_contains(&error, &["'Sinn'", "did you mean 'Sin'"]);

    // A variable, exported from the graph alone.
    let error = tflite::export(session.graph(), ["Sin"], &options).unwrap_err();
    assert_eq!(error.code(), Code::FailedPrecondition);
    assert_contains(
        &error,
        &["'offset/read' (op ReadVariableOp)", "export the Session"],
    );

    // A variable never assigned.
    let b = GraphBuilder::new();
    let handle = VarHandleOp::call_with(DType::F32, ShapeValue::from_sizes(&[]))
        .shared_name(format!("never-{}", std::process::id()))
        .run_on(&b)
        .unwrap();
    let read = ReadVariableOp::call_with(handle, DType::F32)
        .node_name("read")
        .run_on(&b)
        .unwrap();
    let session = Session::new(b.into_graph()).unwrap();
    let error = tflite::export(&session, [read], &options).unwrap_err();
    assert_contains(&error, &["'read' (op ReadVariableOp)", "freeze"]);

    // A placeholder of unknown rank.
    let b = GraphBuilder::new();
    let x = b
        .placeholder(
            "x",
            DType::F32,
            op_core::shape_inference::PartialShape::unknown(),
        )
        .unwrap();
    let y = Sin::call_with(x).run_on(&b).unwrap();
    let error = tflite::export(&b.into_graph(), [y], &options).unwrap_err();
    assert_contains(&error, &["'x' (op Placeholder)", "rank is unknown"]);

    // A concatenation axis computed at run time.
    let b = GraphBuilder::new();
    let x = b.placeholder("x", DType::F32, "[2]").unwrap();
    let axis = b.placeholder("axis", DType::I32, "[]").unwrap();
    let y = ConcatV2::call_with([x, x], axis)
        .node_name("concat")
        .run_on(&b)
        .unwrap();
    let error = tflite::export(&b.into_graph(), [y], &options).unwrap_err();
    assert_eq!(error.code(), Code::Unimplemented);
    assert_contains(
        &error,
        &[
            "'concat' (op ConcatV2)",
            "axis (input 2, 'axis')",
            "constant",
        ],
    );

    // A tensor TensorFlow Lite has no type for (a resource handle).
    let b = GraphBuilder::new();
    let handle = VarHandleOp::call_with(DType::F32, ShapeValue::from_sizes(&[]))
        .node_name("handle")
        .run_on(&b)
        .unwrap();
    let error = tflite::export(&b.into_graph(), [handle], &options).unwrap_err();
    assert_contains(&error, &["'handle' (op VarHandleOp)", "resource"]);

    // An op to keep custom that does not exist.
    let (session, y) = sin_program().unwrap();
    let error =
        tflite::export(&session, [y], &ExportOptions::default().keep_custom("sin")).unwrap_err();
    assert_eq!(error.code(), Code::NotFound);
    assert_contains(&error, &["keep_custom names 'sin'", "'Sin'"]);

    // No outputs.
    let error = tflite::export(
        &GraphBuilder::new().into_graph(),
        Vec::<Output>::new(),
        &options,
    )
    .unwrap_err();
    assert_contains(&error, &["no outputs"]);
}

#[test]
fn custom_ops_run_in_op_lite_through_the_framework_bridge() {
    common::link();
    // Both layers of the MLP with MatMul kept custom: op-lite runs them with
    // the framework's own kernel, the attrs decoded from the custom options
    // this export wrote.
    let (session, y) = mlp_program().unwrap();
    let options = ExportOptions::default().keep_custom("MatMul");
    let model = tflite::export(&session, [y], &options).unwrap();
    let model = Model::from_bytes(&model.to_bytes().unwrap()).unwrap();
    assert_eq!(
        ops(&model),
        ["custom MatMul", "ADD", "custom MatMul", "ADD", "LOGISTIC"]
    );
    let input = values(&[3, 4], 9);
    let expected = run_session(&session, y, &input);
    let resolver = FrameworkOps::new().over(BuiltinOpResolver::new());
    let actual = run_lite(&model, &resolver, &input);
    assert_close(&actual, expected.as_slice::<f32>().unwrap(), 1e-5);
}

/// An op of this test without a shape function: its outputs' shapes are
/// unknown in graphs.
#[op_core::register_op(inputs("x: float"), outputs("y: float"))]
struct ShapelessOp;

#[test]
fn an_unknown_rank_names_its_cause_not_the_placeholder() {
    common::link();
    let b = GraphBuilder::new();
    let x = b.placeholder("x", DType::F32, "[2,3]").unwrap();
    let mut graph = b.into_graph();
    let shapeless = graph
        .add(NewNode::new("ShapelessOp").name("shapeless").input(x))
        .unwrap();
    let y = graph
        .add(NewNode::new("Relu").name("y").input(shapeless.output(0)))
        .unwrap();
    let error = tflite::export(&graph, [y.output(0)], &ExportOptions::default()).unwrap_err();
    assert_contains(
        &error,
        &[
            "its rank is unknown",
            "it comes from node 'shapeless', whose op 'ShapelessOp' has no shape function",
            "`shape_fn = ...` on `#[register_op]`",
        ],
    );
    assert!(
        !error.to_string().contains("give the placeholder"),
        "{error}"
    );

    // A placeholder of unknown rank is the placeholder's fault.
    let b = GraphBuilder::new();
    let x = b.placeholder("x", DType::F32, "?").unwrap();
    let y = Relu::call_with(x).node_name("y").run_on(&b).unwrap();
    let error = tflite::export(&b.into_graph(), [y], &ExportOptions::default()).unwrap_err();
    assert_contains(
        &error,
        &["it comes from placeholder 'x', which has no shape: give the placeholder a shape"],
    );
}
