//! The table of framework ops that have a TensorFlow Lite builtin: which
//! builtin, for which dtypes and with which op version, which options, and
//! which inputs the builtin reads as indices. Every op not here, or on a
//! dtype its builtin does not take, becomes a custom op.
//!
//! The dtypes, versions and options are what TensorFlow 2.21's converter
//! writes for the same TensorFlow op (the version depends on the dtype:
//! `ADD` is 1 on float32 and 4 on int64), including the empty options
//! tables it writes for `NEG`, `SQUARE`, `EXP`, `PAD`, `EXPAND_DIMS`,
//! `SELECT` and `SELECT_V2`; a dtype is listed where the converter writes
//! the op as that one builtin, and the framework has the op on it.
//! `tests/data/make_converter_ops.py` records what the converter writes, and
//! `tests/tflite_converter.rs` holds every entry here to it.

use op_core::DType::{self, Bool, F32, I8, I16, I32, I64, U8};
use op_core::error::quoted;
use op_core::{Error, Result, Tensor};
use op_lite::model::{Activation, BuiltinOperator as B, BuiltinOptions, OperatorCode};

use super::fuse;
use super::lower::Lowering;
use crate::graph::Node;

/// How one op becomes its builtin.
struct Rule {
    /// The framework op.
    op: &'static str,
    /// The builtin.
    code: B,
    /// The dtypes the builtin takes (of the node's first input; of its
    /// second for `Select` and `SelectV2`), each with the op version the
    /// converter writes for it.
    types: &'static [(DType, i32)],
    /// What the builtin's options are made of.
    options: Options,
    /// The node's inputs, in order, as the builtin reads them.
    inputs: Inputs,
}

/// A builtin's options, from the node.
#[derive(Copy, Clone)]
enum Options {
    /// No options table.
    None,
    /// An empty table of this union type (what the converter writes for
    /// some ops without options).
    Empty(u8),
    /// `ADD`, `SUB`, `MUL`, `DIV`: no fused activation.
    Arithmetic,
    /// `MEAN`, `SUM`, ...: `keep_dims` from the node.
    Reducer,
    /// `PACK`: `N` values along `axis`.
    Pack,
    /// `SQUEEZE`: `squeeze_dims`.
    Squeeze,
    /// `CUMSUM`: `exclusive`, `reverse`.
    CumSum,
}

/// Which of the node's inputs the builtin takes, and how.
#[derive(Copy, Clone)]
enum Inputs {
    /// All of them, as they are.
    All,
    /// All of them; those at these positions are indices (written int32 when
    /// constant; see [`Lowering::index_input`]).
    Indices(&'static [usize]),
    /// Lowered by a function of its own.
    Special(fn(&mut Lowering<'_>, &Node, i32) -> Result<()>),
}

/// Union type codes of options tables written empty (schema.fbs).
mod union {
    pub const PAD: u8 = 22;
    pub const EXP: u8 = 33;
    pub const NEG: u8 = 42;
    pub const SELECT: u8 = 47;
    pub const EXPAND_DIMS: u8 = 52;
    pub const SQUARE: u8 = 66;
    pub const SELECT_V2: u8 = 98;
}

const fn rule(
    op: &'static str,
    code: B,
    types: &'static [(DType, i32)],
    options: Options,
    inputs: Inputs,
) -> Rule {
    Rule {
        op,
        code,
        types,
        options,
        inputs,
    }
}

const fn plain(op: &'static str, code: B, types: &'static [(DType, i32)]) -> Rule {
    rule(op, code, types, Options::None, Inputs::All)
}

/// Float32 alone, version 1: the float math.
const FLOAT: &[(DType, i32)] = &[(F32, 1)];
/// The numbers of the comparisons and reductions, version 1.
const NUMBERS: &[(DType, i32)] = &[(F32, 1), (I32, 1), (I64, 1)];
/// Every dtype tried, version 1: the ops that only move bytes.
const ANY: &[(DType, i32)] = &[
    (F32, 1),
    (I32, 1),
    (I64, 1),
    (I16, 1),
    (I8, 1),
    (U8, 1),
    (Bool, 1),
];

/// Every op with a builtin, by framework op name.
const RULES: &[Rule] = &[
    // Elementwise binary ops, broadcasting as TensorFlow's do.
    rule(
        "AddV2",
        B::ADD,
        &[(F32, 1), (I32, 1), (I64, 4), (I16, 1)],
        Options::Arithmetic,
        Inputs::All,
    ),
    rule(
        "Sub",
        B::SUB,
        &[(F32, 1), (I32, 1), (I64, 4)],
        Options::Arithmetic,
        Inputs::All,
    ),
    rule(
        "Mul",
        B::MUL,
        &[(F32, 1), (I32, 1), (I64, 5), (I16, 4)],
        Options::Arithmetic,
        Inputs::All,
    ),
    rule(
        "RealDiv",
        B::DIV,
        &[(F32, 1), (I32, 1)],
        Options::Arithmetic,
        Inputs::All,
    ),
    plain("Maximum", B::MAXIMUM, NUMBERS),
    plain("Minimum", B::MINIMUM, NUMBERS),
    plain(
        "SquaredDifference",
        B::SQUARED_DIFFERENCE,
        &[(F32, 1), (I32, 1)],
    ),
    plain("Pow", B::POW, &[(F32, 1), (I32, 1)]),
    plain(
        "FloorDiv",
        B::FLOOR_DIV,
        &[(F32, 2), (I32, 1), (I16, 3), (I8, 3)],
    ),
    plain(
        "FloorMod",
        B::FLOOR_MOD,
        &[(F32, 1), (I32, 1), (I64, 1), (I16, 2), (I8, 2)],
    ),
    plain("Greater", B::GREATER, NUMBERS),
    plain(
        "GreaterEqual",
        B::GREATER_EQUAL,
        &[(F32, 1), (I32, 1), (I64, 1), (I16, 3)],
    ),
    plain("Less", B::LESS, &[(F32, 1), (I32, 1), (I64, 1), (I16, 3)]),
    plain("LessEqual", B::LESS_EQUAL, NUMBERS),
    plain(
        "Equal",
        B::EQUAL,
        // Not uint8, which the converter writes: LiteRT 2.3 takes a uint8
        // EQUAL for quantized and aborts without quantization parameters
        // (on the converter's own file too), so it stays custom.
        &[(F32, 1), (I32, 1), (I64, 1), (I16, 5), (Bool, 1)],
    ),
    plain("AddN", B::ADD_N, &[(F32, 1), (I32, 1)]),
    rule(
        "Select",
        B::SELECT,
        SELECT,
        Options::Empty(union::SELECT),
        Inputs::All,
    ),
    rule(
        "SelectV2",
        B::SELECT_V2,
        SELECT,
        Options::Empty(union::SELECT_V2),
        Inputs::Special(select_v2),
    ),
    // Elementwise unary ops.
    rule(
        "Neg",
        B::NEG,
        NUMBERS,
        Options::Empty(union::NEG),
        Inputs::All,
    ),
    rule(
        "Square",
        B::SQUARE,
        FLOAT,
        Options::Empty(union::SQUARE),
        Inputs::All,
    ),
    rule(
        "Exp",
        B::EXP,
        FLOAT,
        Options::Empty(union::EXP),
        Inputs::All,
    ),
    plain("Sqrt", B::SQRT, FLOAT),
    plain("Rsqrt", B::RSQRT, FLOAT),
    plain("Log", B::LOG, FLOAT),
    plain("Sin", B::SIN, FLOAT),
    plain("Cos", B::COS, FLOAT),
    plain("Tanh", B::TANH, FLOAT),
    plain("Sigmoid", B::LOGISTIC, FLOAT),
    plain("Relu", B::RELU, FLOAT),
    plain(
        "Cast",
        B::CAST,
        &[
            (F32, 1),
            (I32, 1),
            (I64, 1),
            (I16, 1),
            (I8, 3),
            (U8, 1),
            (Bool, 1),
        ],
    ),
    // Matrix products: FULLY_CONNECTED or BATCH_MATMUL, both float32.
    rule(
        "MatMul",
        B::FULLY_CONNECTED,
        FLOAT,
        Options::None,
        Inputs::Special(matmul),
    ),
    // Reductions: the axes are the second input.
    rule(
        "Mean",
        B::MEAN,
        // Not uint8, which the converter writes: LiteRT 2.3 computes a
        // uint8 MEAN as quantized (the converter's own file gives 0 for
        // the mean of ones), so it stays custom.
        NUMBERS,
        Options::Reducer,
        Inputs::Indices(&[1]),
    ),
    rule(
        "Sum",
        B::SUM,
        NUMBERS,
        Options::Reducer,
        Inputs::Indices(&[1]),
    ),
    rule(
        "Max",
        B::REDUCE_MAX,
        NUMBERS,
        Options::Reducer,
        Inputs::Indices(&[1]),
    ),
    rule(
        "Prod",
        B::REDUCE_PROD,
        NUMBERS,
        Options::Reducer,
        Inputs::Indices(&[1]),
    ),
    rule(
        "Cumsum",
        B::CUMSUM,
        NUMBERS,
        Options::CumSum,
        Inputs::Indices(&[1]),
    ),
    // Shapes and layouts.
    rule(
        "Reshape",
        B::RESHAPE,
        ANY,
        Options::None,
        Inputs::Indices(&[1]),
    ),
    rule(
        "Transpose",
        B::TRANSPOSE,
        &[(F32, 1), (I32, 1), (I64, 1), (I8, 2), (U8, 1), (Bool, 3)],
        Options::None,
        Inputs::Indices(&[1]),
    ),
    rule(
        "ExpandDims",
        B::EXPAND_DIMS,
        ANY,
        Options::Empty(union::EXPAND_DIMS),
        Inputs::Indices(&[1]),
    ),
    rule("Squeeze", B::SQUEEZE, ANY, Options::Squeeze, Inputs::All),
    rule(
        "Slice",
        B::SLICE,
        &[(F32, 1), (I32, 1), (I64, 1), (I8, 2), (U8, 1), (Bool, 1)],
        Options::None,
        Inputs::Indices(&[1, 2]),
    ),
    rule(
        "Pad",
        B::PAD,
        &[(F32, 1), (I32, 1), (I64, 1), (Bool, 5)],
        Options::Empty(union::PAD),
        Inputs::Indices(&[1]),
    ),
    rule(
        "Tile",
        B::TILE,
        &[(F32, 1), (I32, 1), (I64, 1), (U8, 1), (Bool, 1)],
        Options::None,
        Inputs::Indices(&[1]),
    ),
    rule(
        "BroadcastTo",
        B::BROADCAST_TO,
        &[
            (F32, 2),
            (I32, 2),
            (I64, 2),
            (I16, 3),
            (I8, 3),
            (U8, 2),
            (Bool, 2),
        ],
        Options::None,
        Inputs::Indices(&[1]),
    ),
    rule(
        "Pack",
        B::PACK,
        &[(F32, 1), (I32, 1), (I64, 1), (I16, 3), (I8, 2), (U8, 1)],
        Options::Pack,
        Inputs::All,
    ),
    rule(
        "ConcatV2",
        B::CONCATENATION,
        &[
            (F32, 1),
            (I32, 1),
            (I64, 1),
            (I16, 3),
            (I8, 2),
            (U8, 1),
            (Bool, 1),
        ],
        Options::None,
        Inputs::Special(concat),
    ),
];

/// `SELECT` and `SELECT_V2` take the same dtypes, at version 1.
const SELECT: &[(DType, i32)] = &[(F32, 1), (I32, 1), (I64, 1), (I16, 1), (I8, 1), (Bool, 1)];

/// The framework ops that export as builtins, with the builtin each
/// becomes (`MatMul` becomes `FULLY_CONNECTED` or `BATCH_MATMUL`,
/// `SelectV2` `SELECT_V2` or `SELECT`) and the dtypes it takes, each with
/// the op version written.
pub fn builtin_ops() -> impl Iterator<Item = (&'static str, B, &'static [(DType, i32)])> {
    RULES.iter().map(|r| (r.op, r.code, r.types))
}

/// Adds `node` to the model as its builtin, or as a custom op when it has
/// none or the options keep it custom.
pub(super) fn lower(l: &mut Lowering<'_>, node: &Node) -> Result<()> {
    let rule = match RULES.iter().find(|r| r.op == node.op()) {
        Some(rule) if !l.keeps_custom(node.op()) => rule,
        _ => return l.custom(node),
    };
    // The dtype that decides: the values', not a condition's.
    let key = match node.op() {
        "Select" | "SelectV2" => 1,
        _ => 0,
    };
    let dtype = node.instance().input_types().get(key).copied();
    let Some(&(_, version)) = rule.types.iter().find(|(t, _)| Some(*t) == dtype) else {
        // TensorFlow Lite has the op, but not on this dtype.
        return l.custom(node);
    };
    if l.fuses() && (fuse::bias(l, node)? || fuse::activation(l, node)) {
        return Ok(());
    }
    let inputs = match rule.inputs {
        Inputs::Special(lower) => return lower(l, node, version),
        Inputs::All => l.input_tensors(node)?,
        Inputs::Indices(indices) => (0..node.inputs().len())
            .map(|i| match indices.contains(&i) {
                true => l.index_input(node, i).map(Some),
                false => l.input_tensor(node.inputs()[i]).map(Some),
            })
            .collect::<Result<_>>()?,
    };
    let options = options(rule.options, node)?;
    let outputs = l.output_tensors(node)?;
    l.add_operator(
        builtin(rule.code, version),
        inputs,
        outputs,
        options,
        Vec::new(),
    );
    Ok(())
}

fn builtin(code: B, version: i32) -> OperatorCode {
    OperatorCode {
        builtin: code,
        custom_name: None,
        version,
    }
}

fn options(options: Options, node: &Node) -> Result<BuiltinOptions> {
    Ok(match options {
        Options::None => BuiltinOptions::None,
        Options::Empty(union_type) => BuiltinOptions::Other { union_type },
        Options::Arithmetic => BuiltinOptions::Arithmetic {
            activation: Activation::None,
        },
        Options::Reducer => BuiltinOptions::Reducer {
            keep_dims: attr(node, "keep_dims")?,
        },
        Options::Pack => BuiltinOptions::Pack {
            values_count: usize::try_from(attr::<i64>(node, "N")?)
                .map_err(|_| Error::internal("a negative N"))?,
            axis: int32_attr(node, "axis")?,
        },
        Options::Squeeze => BuiltinOptions::Squeeze {
            squeeze_dims: attr::<Vec<i64>>(node, "squeeze_dims")?
                .into_iter()
                .map(|d| {
                    i32::try_from(d)
                        .map_err(|_| Error::invalid_argument("squeeze_dims beyond int32"))
                })
                .collect::<Result<_>>()?,
        },
        Options::CumSum => BuiltinOptions::CumSum {
            exclusive: attr(node, "exclusive")?,
            reverse: attr(node, "reverse")?,
        },
    })
}

fn attr<T: op_core::FromAttrValue>(node: &Node, name: &str) -> Result<T> {
    node.instance().get_attr(name)
}

fn int32_attr(node: &Node, name: &str) -> Result<i32> {
    let value: i64 = attr(node, name)?;
    i32::try_from(value).map_err(|_| {
        Error::invalid_argument(format!(
            "attr {} is {value}, beyond the int32 TensorFlow Lite holds",
            quoted(name)
        ))
    })
}

/// `MatMul` as the converter lowers it: `FULLY_CONNECTED` (weights
/// `[out, in]`, so `b` transposed) when `a` is not transposed, both are
/// 2-D float32, and `b` is either transposed already or a constant (then
/// written transposed); `BATCH_MATMUL` otherwise.
fn matmul(l: &mut Lowering<'_>, node: &Node, version: i32) -> Result<()> {
    let transpose_a: bool = attr(node, "transpose_a")?;
    let transpose_b: bool = attr(node, "transpose_b")?;
    let [a, b] = [node.inputs()[0], node.inputs()[1]];
    let weights = if transpose_a {
        None
    } else if transpose_b {
        Some(l.input_tensor(b)?)
    } else {
        match l.constant(b) {
            Some(value) if value.rank() == 2 => {
                let transposed = value.view::<f32>()?.t().to_owned();
                let name = format!("{}/transposed", node.name());
                Some(l.add_constant(name, Tensor::from_array(transposed))?)
            }
            _ => None,
        }
    };
    let a = l.input_tensor(a)?;
    let outputs = l.output_tensors(node)?;
    match weights {
        Some(weights) => l.add_operator(
            builtin(B::FULLY_CONNECTED, version),
            vec![Some(a), Some(weights), None],
            outputs,
            BuiltinOptions::FullyConnected {
                activation: Activation::None,
                keep_num_dims: false,
            },
            Vec::new(),
        ),
        None => {
            let b = l.input_tensor(b)?;
            l.add_operator(
                builtin(B::BATCH_MATMUL, 1),
                vec![Some(a), Some(b)],
                outputs,
                BuiltinOptions::BatchMatMul {
                    adj_x: transpose_a,
                    adj_y: transpose_b,
                },
                Vec::new(),
            );
        }
    }
    Ok(())
}

/// `ConcatV2` as `CONCATENATION`: the values are the inputs, the axis (the
/// last input, a constant) an option.
fn concat(l: &mut Lowering<'_>, node: &Node, version: i32) -> Result<()> {
    let n = node.inputs().len() - 1;
    let axis = l.constant_input(node, n, "axis")?;
    let axis = match axis.dtype() {
        DType::I64 => i32::try_from(axis.scalar_value::<i64>()?)
            .map_err(|_| Error::invalid_argument("the axis is beyond int32"))?,
        _ => axis.scalar_value::<i32>()?,
    };
    let inputs = node.inputs()[..n]
        .iter()
        .map(|&o| l.input_tensor(o).map(Some))
        .collect::<Result<_>>()?;
    let outputs = l.output_tensors(node)?;
    l.add_operator(
        builtin(B::CONCATENATION, version),
        inputs,
        outputs,
        BuiltinOptions::Concatenation {
            axis,
            activation: Activation::None,
        },
        Vec::new(),
    );
    Ok(())
}

/// `SelectV2` as the converter writes it: `SELECT` when the three inputs
/// have one known shape (`SELECT` broadcasts only a vector condition, which
/// equal shapes never need), `SELECT_V2` (which broadcasts all three)
/// otherwise.
fn select_v2(l: &mut Lowering<'_>, node: &Node, version: i32) -> Result<()> {
    let shapes: Vec<_> = node
        .inputs()
        .iter()
        .map(|&o| l.known_shape(o))
        .collect::<Result<_>>()?;
    let same = shapes[0].is_some() && shapes.iter().all(|s| *s == shapes[0]);
    let (code, union_type) = match same {
        true => (B::SELECT, union::SELECT),
        false => (B::SELECT_V2, union::SELECT_V2),
    };
    let inputs = l.input_tensors(node)?;
    let outputs = l.output_tensors(node)?;
    l.add_operator(
        builtin(code, version),
        inputs,
        outputs,
        BuiltinOptions::Other { union_type },
        Vec::new(),
    );
    Ok(())
}
