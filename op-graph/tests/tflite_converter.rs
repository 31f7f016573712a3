//! The exporter's builtins held to TensorFlow's converter: every framework
//! op of the builtin table, exported alone on each dtype the framework has
//! it on, must be written as TensorFlow 2.21's converter writes the same
//! TensorFlow op on that dtype (`tests/data/converter_ops.json`, written by
//! `tests/data/make_converter_ops.py`): the same builtin, op version and
//! options table, or a custom op where the converter has no builtin for it.
//!
//! Each builtin case also runs in op-lite's interpreter where op-lite has
//! the builtin on the dtype, and must compute the session's output.
//!
//! With `OPKIT_TFLITE_EXPORT_DIR` set, each builtin case's model is also
//! written to its `ops/` folder with its inputs and the session's output,
//! for `tests/data/check_export.py` to run in LiteRT.

mod common;

use std::collections::BTreeSet;

use op_core::{AttrValue, DType, Tensor};
use op_graph::tflite::{self, ExportOptions};
use op_graph::{Graph, NewNode, Output};
use op_lite::model::{BuiltinOperator, BuiltinOptions};
use op_lite::{BuiltinOpResolver, Interpreter, Model, OpResolver};
use serde_json::Value;

/// An input of a case's op node.
enum In {
    /// A `[2, 3]` placeholder of the case's dtype.
    X,
    /// A placeholder of the case's dtype and this shape.
    XOf(&'static [usize]),
    /// A bool placeholder of this shape (a condition).
    Cond(&'static [usize]),
    /// A constant.
    Const(Tensor),
    /// A constant of the case's dtype and this shape, ones (zeros where
    /// the dtype has no one here).
    Ones(&'static [usize]),
}

use In::{Cond, Const, Ones, X, XOf};

fn ints(values: &[i32]) -> In {
    Const(Tensor::from_vec([values.len()], values.to_vec()).unwrap())
}

/// A case's name (as in `make_converter_ops.py`), framework op, inputs and
/// attrs.
type Case = (
    &'static str,
    &'static str,
    Vec<In>,
    Vec<(&'static str, AttrValue)>,
);

/// Every case of `make_converter_ops.py`, on `dtype`.
fn cases(dtype: DType) -> Vec<Case> {
    let binary = |op| (op, op, vec![X, X], vec![]);
    let unary = |op| (op, op, vec![X], vec![]);
    let cast_to = if dtype == DType::F32 {
        DType::I32
    } else {
        DType::F32
    };
    vec![
        binary("AddV2"),
        binary("Sub"),
        binary("Mul"),
        binary("RealDiv"),
        binary("Maximum"),
        binary("Minimum"),
        binary("SquaredDifference"),
        binary("Pow"),
        binary("FloorDiv"),
        binary("FloorMod"),
        binary("Greater"),
        binary("GreaterEqual"),
        binary("Less"),
        binary("LessEqual"),
        binary("Equal"),
        ("AddN", "AddN", vec![X, X, X], vec![]),
        ("Select", "Select", vec![Cond(&[2, 3]), X, X], vec![]),
        ("SelectV2", "SelectV2", vec![Cond(&[2, 3]), X, X], vec![]),
        (
            "SelectV2 (broadcast)",
            "SelectV2",
            vec![Cond(&[2, 1]), X, XOf(&[3])],
            vec![],
        ),
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
        ("Cast", "Cast", vec![X], vec![("DstT", cast_to.into())]),
        (
            "MatMul (constant b)",
            "MatMul",
            vec![X, Ones(&[3, 4])],
            vec![],
        ),
        (
            "MatMul (transpose_b)",
            "MatMul",
            vec![X, X],
            vec![("transpose_b", true.into())],
        ),
        (
            "MatMul (transpose_a)",
            "MatMul",
            vec![X, X],
            vec![("transpose_a", true.into())],
        ),
        (
            "Mean",
            "Mean",
            vec![X, ints(&[1])],
            vec![("keep_dims", true.into())],
        ),
        ("Sum", "Sum", vec![X, ints(&[0])], vec![]),
        ("Max", "Max", vec![X, ints(&[0])], vec![]),
        ("Prod", "Prod", vec![X, ints(&[0])], vec![]),
        (
            "Cumsum",
            "Cumsum",
            vec![X, Const(Tensor::scalar(1i32))],
            vec![],
        ),
        ("Reshape", "Reshape", vec![X, ints(&[3, 2])], vec![]),
        ("Transpose", "Transpose", vec![X, ints(&[1, 0])], vec![]),
        (
            "ExpandDims",
            "ExpandDims",
            vec![X, Const(Tensor::scalar(0i32))],
            vec![],
        ),
        (
            "Squeeze",
            "Squeeze",
            vec![XOf(&[2, 1, 3])],
            vec![("squeeze_dims", vec![1i64].into())],
        ),
        (
            "Slice",
            "Slice",
            vec![X, ints(&[0, 1]), ints(&[2, 2])],
            vec![],
        ),
        (
            "Pad",
            "Pad",
            vec![
                X,
                Const(Tensor::from_vec([2, 2], vec![1i32, 0, 0, 1]).unwrap()),
            ],
            vec![],
        ),
        ("Tile", "Tile", vec![X, ints(&[2, 1])], vec![]),
        (
            "BroadcastTo",
            "BroadcastTo",
            vec![X, ints(&[4, 2, 3])],
            vec![],
        ),
        ("Pack", "Pack", vec![X, X], vec![("axis", 1i64.into())]),
        (
            "ConcatV2",
            "ConcatV2",
            vec![X, X, Const(Tensor::scalar(1i32))],
            vec![],
        ),
    ]
}

/// Where the exporter writes a custom op though the converter writes a
/// builtin: uint8 EQUAL and MEAN, which LiteRT 2.3 takes for quantized ops
/// (it aborts on the EQUAL and gives 0 for the MEAN of ones, on the
/// converter's own files too).
const DEVIATIONS: [(&str, DType); 2] = [("Equal", DType::U8), ("Mean", DType::U8)];

/// The dtypes of `make_converter_ops.py`, by their names there.
const DTYPES: [(DType, &str); 7] = [
    (DType::F32, "float32"),
    (DType::I32, "int32"),
    (DType::I64, "int64"),
    (DType::I16, "int16"),
    (DType::I8, "int8"),
    (DType::U8, "uint8"),
    (DType::Bool, "bool"),
];

/// A value for each placeholder, by name.
type Feeds = Vec<(String, Tensor)>;

/// A graph of `op` on `inputs` of `dtype` (placeholders `p0`, `p1`, ...),
/// its output and a value for each placeholder; an error when the
/// framework does not have the op on `dtype`.
fn graph_of(
    op: &str,
    dtype: DType,
    inputs: Vec<In>,
    attrs: Vec<(&str, AttrValue)>,
) -> op_core::Result<(Graph, Output, Feeds)> {
    let mut graph = Graph::new();
    let mut outputs = Vec::new();
    let mut feeds = Vec::new();
    for (i, input) in inputs.into_iter().enumerate() {
        let placeholder = |dtype: DType, dims: &[usize]| {
            let sizes: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
            NewNode::new("Placeholder")
                .name(format!("p{i}"))
                .attr("dtype", dtype)
                .attr("shape", op_core::ShapeValue::from_sizes(&sizes))
        };
        let constant = |value: Tensor| {
            NewNode::new("Const").attr("dtype", value.dtype()).attr(
                "value",
                AttrValue::Tensor(Box::new(value.to_tensor_value().unwrap())),
            )
        };
        let node = match input {
            X | XOf(_) | Cond(_) => {
                let (dtype, dims): (DType, &[usize]) = match input {
                    X => (dtype, &[2, 3]),
                    XOf(dims) => (dtype, dims),
                    Cond(dims) => (DType::Bool, dims),
                    _ => unreachable!(),
                };
                feeds.push((format!("p{i}"), feed(dtype, dims, i)));
                placeholder(dtype, dims)
            }
            Const(value) => constant(value),
            Ones(dims) => constant(ones(dtype, dims)),
        };
        outputs.push(graph.add(node)?.output(0));
    }
    let node = attrs.into_iter().fold(
        NewNode::new(op).name("y").inputs(outputs),
        |n, (name, value)| n.attr(name, value),
    );
    let y = graph.add(node)?.output(0);
    Ok((graph, y, feeds))
}

fn ones(dtype: DType, dims: &[usize]) -> Tensor {
    let n = dims.iter().product();
    match dtype {
        DType::F32 => Tensor::from_vec(dims, vec![1.0f32; n]).unwrap(),
        DType::I32 => Tensor::from_vec(dims, vec![1i32; n]).unwrap(),
        _ => Tensor::zeros(dtype, dims).unwrap(),
    }
}

/// A value for placeholder `i`: floats in [0.5, 2) (inside every unary
/// op's domain), ints in 1..=3 (nonzero divisors, no overflow), mixed
/// bools.
fn feed(dtype: DType, dims: &[usize], i: usize) -> Tensor {
    let n: usize = dims.iter().product();
    let k: Vec<usize> = (0..n).map(|j| (j * 7 + i * 3) % 6).collect();
    let small = |k: &usize| 1 + k % 3;
    match dtype {
        DType::F32 => Tensor::from_vec(dims, k.iter().map(|&k| 0.5 + k as f32 / 4.0).collect()),
        DType::I32 => Tensor::from_vec(dims, k.iter().map(|k| small(k) as i32).collect()),
        DType::I64 => Tensor::from_vec(dims, k.iter().map(|k| small(k) as i64).collect()),
        DType::I16 => Tensor::from_vec(dims, k.iter().map(|k| small(k) as i16).collect()),
        DType::I8 => Tensor::from_vec(dims, k.iter().map(|k| small(k) as i8).collect()),
        DType::U8 => Tensor::from_vec(dims, k.iter().map(|k| small(k) as u8).collect()),
        _ => Tensor::from_vec(dims, k.iter().map(|k| k % 2 == 0).collect()),
    }
    .unwrap()
}

/// What the session computes for a case: its output, or `None` where the
/// framework has no kernel for the op on the case's dtype (it declares
/// some ops on dtypes it has no kernel for: int32 RealDiv).
fn session_output(graph: Graph, y: Output, feeds: &Feeds) -> Option<Tensor> {
    let session = op_graph::Session::new(graph).unwrap();
    let mut run = session.runner().fetch(y);
    for (placeholder, value) in feeds {
        run = run.feed(placeholder.as_str(), value.clone());
    }
    run.run().ok().map(|mut v| v.remove(0))
}

/// A tensor's elements as little-endian bytes.
fn le_bytes(tensor: &Tensor) -> Vec<u8> {
    fn le<T: op_core::Element, const N: usize>(t: &Tensor, f: impl Fn(&T) -> [u8; N]) -> Vec<u8> {
        t.as_slice::<T>().unwrap().iter().flat_map(f).collect()
    }
    match tensor.dtype() {
        DType::F32 => le(tensor, |v: &f32| v.to_le_bytes()),
        DType::I64 => le(tensor, |v: &i64| v.to_le_bytes()),
        DType::I32 => le(tensor, |v: &i32| v.to_le_bytes()),
        DType::I16 => le(tensor, |v: &i16| v.to_le_bytes()),
        DType::I8 => le(tensor, |v: &i8| v.to_le_bytes()),
        DType::U8 => le(tensor, |v: &u8| v.to_le_bytes()),
        DType::Bool => le(tensor, |v: &bool| [u8::from(*v)]),
        other => panic!("{other} outputs are not compared"),
    }
}

/// Runs a case's model in op-lite's interpreter with its builtins:
/// `Ok(None)` where op-lite has no kernel for the builtin, or its kernel
/// refuses the dtype, else whether the output is the session's (floats
/// within 1e-5, the rest exactly).
fn run_in_op_lite(model: &Model, feeds: &Feeds, expected: &Tensor) -> Option<bool> {
    let mut interpreter = Interpreter::new(model, &BuiltinOpResolver::new()).ok()?;
    interpreter.allocate_tensors().ok()?;
    for (name, value) in feeds {
        if let Ok(i) = interpreter.input_index(name) {
            interpreter
                .input_bytes_mut(i)
                .unwrap()
                .copy_from_slice(&le_bytes(value));
        }
    }
    interpreter.invoke().unwrap();
    if interpreter.output_shape(0).unwrap() != expected.dims() {
        return Some(false);
    }
    Some(match expected.dtype() {
        DType::F32 => {
            let actual = interpreter.output::<f32>(0).unwrap();
            let expected = expected.as_slice::<f32>().unwrap();
            actual
                .iter()
                .zip(expected)
                .all(|(a, e)| (a - e).abs() <= 1e-5 + 1e-5 * e.abs())
        }
        _ => interpreter.output_bytes(0).unwrap() == le_bytes(expected),
    })
}

/// With `OPKIT_TFLITE_EXPORT_DIR` set, writes a case's model, its inputs
/// and the session's output there, for `tests/data/check_export.py`.
fn write_case(name: &str, bytes: &[u8], feeds: &Feeds, output: &Tensor) {
    let Some(dir) = std::env::var_os("OPKIT_TFLITE_EXPORT_DIR") else {
        return;
    };
    let dir = std::path::PathBuf::from(dir).join("ops");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.tflite")), bytes).unwrap();
    for (i, (_, value)) in feeds.iter().enumerate() {
        common::write_npy(&dir.join(format!("{name}.input{i}.npy")), value);
    }
    common::write_npy(&dir.join(format!("{name}.output.npy")), output);
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

/// What an operator of `model` is: `(builtin name or "custom NAME",
/// version, options table)`.
fn describe(model: &Model, k: usize) -> (String, i32, Option<&'static str>) {
    let operator = &model.subgraphs[0].operators[k];
    let code = &model.operator_codes[operator.opcode_index];
    match &code.custom_name {
        Some(name) => (format!("custom {name}"), code.version, None),
        None => (
            code.builtin.name().expect("a named builtin").to_owned(),
            code.version,
            options_table(code.builtin, &operator.builtin_options),
        ),
    }
}

#[test]
fn every_builtin_is_written_as_the_converter_writes_it_on_every_dtype() {
    common::link();
    let json: Value =
        serde_json::from_str(include_str!("data/converter_ops.json")).expect("the JSON");
    assert_eq!(json["tensorflow"], "2.21.0");
    let mut builtins = BTreeSet::new();
    let (mut checked, mut customs) = (0, 0);
    let mut ran_in_op_lite = 0;
    let op_lite_builtins: Vec<BuiltinOperator> = BuiltinOpResolver::new()
        .builtin_ops()
        .into_iter()
        .map(|(code, _)| code)
        .collect();
    for (dtype, dtype_name) in DTYPES {
        for (case, op, inputs, attrs) in cases(dtype) {
            let what = format!("{case} on {dtype_name}");
            let converter = &json["cases"][case];
            assert!(converter.is_object(), "{case}: not in converter_ops.json");
            let Ok((graph, y, feeds)) = graph_of(op, dtype, inputs, attrs) else {
                continue; // The framework does not have the op on dtype.
            };
            let model = tflite::export(&graph, [y], &ExportOptions::default())
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let bytes = model.to_bytes().unwrap();
            assert_eq!(Model::from_bytes(&bytes).unwrap(), model, "{what}");
            assert_eq!(model.subgraphs[0].operators.len(), 1, "{what}");
            let ours = describe(&model, 0);
            // The converter's operators, when it writes the op as one.
            let theirs = match converter[dtype_name].as_array().map(Vec::as_slice) {
                Some([op]) => Some((
                    op[0].as_str().unwrap().to_owned(),
                    op[1].as_i64().unwrap() as i32,
                    op[2].as_str().map(|s| s.to_owned()),
                )),
                _ => None,
            };
            if ours.0.starts_with("custom ") {
                // The converter refused the op on dtype, or wrote it as
                // other ops (int32 Relu as MAXIMUM): no builtin of its own.
                let table_has_it = tflite::builtin_ops().any(|(o, code, _)| {
                    o == op
                        && theirs
                            .as_ref()
                            .is_some_and(|t| Some(t.0.as_str()) == code.name())
                });
                assert!(
                    !table_has_it || DEVIATIONS.contains(&(case, dtype)),
                    "{what}: custom, but the converter writes {theirs:?}"
                );
                assert_eq!(ours.0, format!("custom {op}"), "{what}");
                customs += 1;
                continue;
            }
            let theirs = theirs.unwrap_or_else(|| {
                panic!(
                    "{what}: we write {ours:?}, the converter {}",
                    converter[dtype_name]
                )
            });
            assert_eq!(
                (ours.0.as_str(), ours.1, ours.2),
                (theirs.0.as_str(), theirs.1, theirs.2.as_deref()),
                "{what}: ours, then the converter's"
            );
            builtins.insert((op, dtype));
            checked += 1;
            let Some(output) = session_output(graph, y, &feeds) else {
                continue;
            };
            write_case(
                &format!("{case}_{dtype_name}").replace([' ', '(', ')'], ""),
                &bytes,
                &feeds,
                &output,
            );
            match run_in_op_lite(&model, &feeds, &output) {
                Some(true) => ran_in_op_lite += 1,
                Some(false) => panic!("{what}: op-lite's interpreter computes another output"),
                // op-lite's kernels take float32 wherever they take anything.
                None => assert!(
                    dtype != DType::F32
                        || !op_lite_builtins.contains(&model.operator_codes[0].builtin),
                    "{what}: op-lite has {} but did not run it",
                    model.operator_codes[0].builtin
                ),
            }
        }
    }
    // Every entry of the table was checked.
    let table: BTreeSet<(&str, DType)> = tflite::builtin_ops()
        .flat_map(|(op, _, types)| types.iter().map(move |(dtype, _)| (op, *dtype)))
        .collect();
    let unchecked: Vec<_> = table.difference(&builtins).collect();
    assert!(
        unchecked.is_empty(),
        "table entries no case checked: {unchecked:?}"
    );
    assert!(
        checked > 100 && customs > 10,
        "{checked} builtins, {customs} customs"
    );
    assert!(ran_in_op_lite > 60, "{ran_in_op_lite} cases ran in op-lite");
}
