//! The exporter's builtins held to TensorFlow's converter: every framework
//! op of the builtin table, exported alone, must give the builtins, op
//! versions and options tables that TensorFlow 2.21's converter writes for
//! the same TensorFlow op (`tests/data/converter_ops.json`, written by
//! `tests/data/make_converter_ops.py`).
//!
//! With `OPKIT_TFLITE_EXPORT_DIR` set, each case's model is also written to
//! its `ops/` folder with its inputs and the session's output, for
//! `tests/data/check_export.py` to run in LiteRT.

mod common;

use std::collections::BTreeSet;

use op_core::{AttrValue, DType, Tensor};
use op_graph::tflite::{self, ExportOptions};
use op_graph::{Graph, NewNode, Output};
use op_lite::Model;
use op_lite::model::{BuiltinOperator, BuiltinOptions};
use serde_json::Value;

/// An input of a case's op node.
enum In {
    /// A `[2, 3]` placeholder of this dtype.
    Placeholder(DType),
    /// A constant.
    Const(Tensor),
}

use In::{Const, Placeholder};

const F: In = Placeholder(DType::F32);
const I: In = Placeholder(DType::I32);
const B: In = Placeholder(DType::Bool);

fn ints(values: &[i32]) -> In {
    Const(Tensor::from_vec([values.len()], values.to_vec()).unwrap())
}

/// A framework op, its inputs and its attrs.
type Case = (&'static str, Vec<In>, Vec<(&'static str, AttrValue)>);

/// One framework op with its inputs and attrs, as `make_converter_ops.py`
/// has the TensorFlow op.
fn cases() -> Vec<Case> {
    let binary = |op| (op, vec![F, F], vec![]);
    let unary = |op| (op, vec![F], vec![]);
    let matrix = Const(Tensor::from_vec([3, 4], vec![1.0f32; 12]).unwrap());
    vec![
        binary("AddV2"),
        binary("Sub"),
        binary("Mul"),
        binary("RealDiv"),
        binary("Maximum"),
        binary("Minimum"),
        binary("SquaredDifference"),
        binary("Pow"),
        ("FloorDiv", vec![I, I], vec![]),
        ("FloorMod", vec![I, I], vec![]),
        binary("Greater"),
        binary("GreaterEqual"),
        binary("Less"),
        binary("LessEqual"),
        binary("Equal"),
        ("AddN", vec![F, F, F], vec![]),
        ("Select", vec![B, F, F], vec![]),
        ("SelectV2", vec![B, F, F], vec![]),
        unary("Neg"),
        unary("Square"),
        unary("Exp"),
        unary("Sqrt"),
        unary("Rsqrt"),
        unary("Log"),
        unary("Sin"),
        unary("Cos"),
        unary("Tanh"),
        unary("Sigmoid"),
        unary("Relu"),
        ("Cast", vec![F], vec![("DstT", DType::I32.into())]),
        ("MatMul", vec![F, matrix], vec![]),
        ("MatMul", vec![F, F], vec![("transpose_b", true.into())]),
        ("MatMul", vec![F, F], vec![("transpose_a", true.into())]),
        (
            "Mean",
            vec![F, ints(&[1])],
            vec![("keep_dims", true.into())],
        ),
        ("Sum", vec![F, ints(&[0])], vec![]),
        ("Max", vec![F, ints(&[0])], vec![]),
        ("Prod", vec![F, ints(&[0])], vec![]),
        ("Cumsum", vec![F, Const(Tensor::scalar(1i32))], vec![]),
        ("Reshape", vec![F, ints(&[3, 2])], vec![]),
        ("Transpose", vec![F, ints(&[1, 0])], vec![]),
        ("ExpandDims", vec![F, Const(Tensor::scalar(0i32))], vec![]),
        (
            "Squeeze",
            vec![Const(Tensor::from_vec([1, 3], vec![1.0f32; 3]).unwrap())],
            vec![],
        ),
        ("Slice", vec![F, ints(&[0, 1]), ints(&[2, 2])], vec![]),
        (
            "Pad",
            vec![
                F,
                Const(Tensor::from_vec([2, 2], vec![1i32, 0, 0, 1]).unwrap()),
            ],
            vec![],
        ),
        ("Tile", vec![F, ints(&[2, 1])], vec![]),
        ("BroadcastTo", vec![F, ints(&[4, 2, 3])], vec![]),
        ("Pack", vec![F, F], vec![("axis", 1i64.into())]),
        ("ConcatV2", vec![F, F, Const(Tensor::scalar(1i32))], vec![]),
    ]
}

/// A graph of `op` on `inputs` (placeholders `p0`, `p1`, ...); its output
/// and a value for each placeholder.
fn graph_of(
    op: &str,
    inputs: Vec<In>,
    attrs: Vec<(&str, AttrValue)>,
) -> (Graph, Output, Vec<(String, Tensor)>) {
    let mut graph = Graph::new();
    let mut outputs = Vec::new();
    let mut feeds = Vec::new();
    for (i, input) in inputs.into_iter().enumerate() {
        let node = match input {
            Placeholder(dtype) => {
                feeds.push((format!("p{i}"), feed(dtype, i)));
                NewNode::new("Placeholder")
                    .name(format!("p{i}"))
                    .attr("dtype", dtype)
                    .attr("shape", op_core::ShapeValue::from_sizes(&[2, 3]))
            }
            Const(value) => NewNode::new("Const").attr("dtype", value.dtype()).attr(
                "value",
                AttrValue::Tensor(Box::new(value.to_tensor_value().unwrap())),
            ),
        };
        outputs.push(graph.add(node).unwrap().output(0));
    }
    let node = attrs.into_iter().fold(
        NewNode::new(op).name("y").inputs(outputs),
        |n, (name, value)| n.attr(name, value),
    );
    let y = graph
        .add(node)
        .unwrap_or_else(|e| panic!("{op}: {e}"))
        .output(0);
    (graph, y, feeds)
}

/// A `[2, 3]` value for placeholder `i`: floats in [0.5, 2) (inside every
/// unary op's domain), nonzero ints, mixed bools.
fn feed(dtype: DType, i: usize) -> Tensor {
    let k = (0..6).map(|j| (j * 7 + i * 3) % 6);
    match dtype {
        DType::F32 => Tensor::from_vec([2, 3], k.map(|k| 0.5 + k as f32 / 4.0).collect()),
        DType::I32 => Tensor::from_vec(
            [2, 3],
            k.map(|k| k as i32 - 2 + i32::from(k >= 2)).collect(),
        ),
        _ => Tensor::from_vec([2, 3], k.map(|k| k % 2 == 0).collect()),
    }
    .unwrap()
}

/// With `OPKIT_TFLITE_EXPORT_DIR` set, writes case `k`'s model, its inputs
/// and the session's output there, for `tests/data/check_export.py`.
fn write_case(
    k: usize,
    op: &str,
    bytes: &[u8],
    graph: Graph,
    y: Output,
    feeds: Vec<(String, Tensor)>,
) {
    let Some(dir) = std::env::var_os("OPKIT_TFLITE_EXPORT_DIR") else {
        return;
    };
    let dir = std::path::PathBuf::from(dir).join("ops");
    std::fs::create_dir_all(&dir).unwrap();
    let name = format!("{k:02}_{op}");
    std::fs::write(dir.join(format!("{name}.tflite")), bytes).unwrap();
    let session = op_graph::Session::new(graph).unwrap();
    let mut run = session.runner().fetch(y);
    for (i, (placeholder, value)) in feeds.into_iter().enumerate() {
        common::write_npy(&dir.join(format!("{name}.input{i}.npy")), &value);
        run = run.feed(placeholder.as_str(), value);
    }
    let output = run.run().unwrap().remove(0);
    common::write_npy(&dir.join(format!("{name}.output.npy")), &output);
}

/// The name of the options table an operator is written with.
fn options_table(code: BuiltinOperator, options: &BuiltinOptions) -> Option<&'static str> {
    Some(match options {
        BuiltinOptions::None => return None,
        BuiltinOptions::Arithmetic { .. } => match code {
            BuiltinOperator::ADD => "AddOptions",
            BuiltinOperator::SUB => "SubOptions",
            BuiltinOperator::MUL => "MulOptions",
            _ => "DivOptions",
        },
        BuiltinOptions::FullyConnected { .. } => "FullyConnectedOptions",
        BuiltinOptions::BatchMatMul { .. } => "BatchMatMulOptions",
        BuiltinOptions::Reducer { .. } => "ReducerOptions",
        BuiltinOptions::Pack { .. } => "PackOptions",
        BuiltinOptions::Squeeze { .. } => "SqueezeOptions",
        BuiltinOptions::CumSum { .. } => "CumsumOptions",
        BuiltinOptions::Concatenation { .. } => "ConcatenationOptions",
        BuiltinOptions::Other { union_type } => match union_type {
            22 => "PadOptions",
            33 => "ExpOptions",
            42 => "NegOptions",
            47 => "SelectOptions",
            52 => "ExpandDimsOptions",
            66 => "SquareOptions",
            98 => "SelectV2Options",
            other => panic!("options table of union type {other}"),
        },
        other => panic!("unexpected options {other:?}"),
    })
}

#[test]
fn every_builtin_is_written_with_the_converters_version_and_options() {
    common::link();
    let json: Value =
        serde_json::from_str(include_str!("data/converter_ops.json")).expect("the JSON");
    assert_eq!(json["tensorflow"], "2.21.0");
    let converter = &json["builtins"];
    let mut written = BTreeSet::new();
    for (k, (op, inputs, attrs)) in cases().into_iter().enumerate() {
        let (graph, y, feeds) = graph_of(op, inputs, attrs);
        let model: Model = tflite::export(&graph, [y], &ExportOptions::default())
            .unwrap_or_else(|e| panic!("{op}: {e}"));
        let bytes = model.to_bytes().unwrap();
        assert_eq!(Model::from_bytes(&bytes).unwrap(), model, "{op}");
        for operator in &model.subgraphs[0].operators {
            let code = &model.operator_codes[operator.opcode_index];
            let name = code.builtin.name().expect("a named builtin");
            let expected = &converter[name];
            assert!(
                !expected.is_null(),
                "{op}: the converter never writes {name}"
            );
            assert_eq!(
                code.version, expected["version"],
                "{op} as {name}: the version"
            );
            assert_eq!(
                options_table(code.builtin, &operator.builtin_options),
                expected["options"].as_str(),
                "{op} as {name}: the options table"
            );
            written.insert(code.builtin);
        }
        write_case(k, op, &bytes, graph, y, feeds);
    }
    // Every rule of the table was checked.
    let table: BTreeSet<BuiltinOperator> = tflite::builtin_ops()
        .map(|(_, code)| code)
        .chain([BuiltinOperator::BATCH_MATMUL])
        .collect();
    assert_eq!(written, table);
}
