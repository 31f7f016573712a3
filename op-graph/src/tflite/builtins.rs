//! The table of framework ops that have a TensorFlow Lite builtin: which
//! builtin, which op version, which options, and which inputs the builtin
//! reads as indices. Every op not here becomes a custom op.
//!
//! The versions and options are what TensorFlow 2.21's converter writes
//! for the same TensorFlow ops on float32 and int32 tensors (version 1 for
//! all of them but `BROADCAST_TO`, 2), including the empty options tables it
//! writes for `NEG`, `SQUARE`, `EXP`, `PAD`, `EXPAND_DIMS`, `SELECT` and
//! `SELECT_V2`: `tests/data/make_converter_ops.py` records what the
//! converter writes, and `tests/tflite_converter.rs` holds every rule here
//! to it.

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
    /// The version the converter writes.
    version: i32,
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
    Special(fn(&mut Lowering<'_>, &Node, &Rule) -> Result<()>),
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

const fn rule(op: &'static str, code: B, options: Options, inputs: Inputs) -> Rule {
    Rule {
        op,
        code,
        version: 1,
        options,
        inputs,
    }
}

const fn plain(op: &'static str, code: B) -> Rule {
    rule(op, code, Options::None, Inputs::All)
}

/// Every op with a builtin, by framework op name.
const RULES: &[Rule] = &[
    // Elementwise binary ops, broadcasting as TensorFlow's do.
    rule("AddV2", B::ADD, Options::Arithmetic, Inputs::All),
    rule("Sub", B::SUB, Options::Arithmetic, Inputs::All),
    rule("Mul", B::MUL, Options::Arithmetic, Inputs::All),
    rule("RealDiv", B::DIV, Options::Arithmetic, Inputs::All),
    plain("Maximum", B::MAXIMUM),
    plain("Minimum", B::MINIMUM),
    plain("SquaredDifference", B::SQUARED_DIFFERENCE),
    plain("Pow", B::POW),
    plain("FloorDiv", B::FLOOR_DIV),
    plain("FloorMod", B::FLOOR_MOD),
    plain("Greater", B::GREATER),
    plain("GreaterEqual", B::GREATER_EQUAL),
    plain("Less", B::LESS),
    plain("LessEqual", B::LESS_EQUAL),
    plain("Equal", B::EQUAL),
    plain("AddN", B::ADD_N),
    rule(
        "Select",
        B::SELECT,
        Options::Empty(union::SELECT),
        Inputs::All,
    ),
    rule(
        "SelectV2",
        B::SELECT_V2,
        Options::Empty(union::SELECT_V2),
        Inputs::All,
    ),
    // Elementwise unary ops.
    rule("Neg", B::NEG, Options::Empty(union::NEG), Inputs::All),
    rule(
        "Square",
        B::SQUARE,
        Options::Empty(union::SQUARE),
        Inputs::All,
    ),
    rule("Exp", B::EXP, Options::Empty(union::EXP), Inputs::All),
    plain("Sqrt", B::SQRT),
    plain("Rsqrt", B::RSQRT),
    plain("Log", B::LOG),
    plain("Sin", B::SIN),
    plain("Cos", B::COS),
    plain("Tanh", B::TANH),
    plain("Sigmoid", B::LOGISTIC),
    plain("Relu", B::RELU),
    plain("Cast", B::CAST),
    // Matrix products.
    rule(
        "MatMul",
        B::FULLY_CONNECTED,
        Options::None,
        Inputs::Special(matmul),
    ),
    // Reductions: the axes are the second input.
    rule("Mean", B::MEAN, Options::Reducer, Inputs::Indices(&[1])),
    rule("Sum", B::SUM, Options::Reducer, Inputs::Indices(&[1])),
    rule(
        "Max",
        B::REDUCE_MAX,
        Options::Reducer,
        Inputs::Indices(&[1]),
    ),
    rule(
        "Prod",
        B::REDUCE_PROD,
        Options::Reducer,
        Inputs::Indices(&[1]),
    ),
    rule("Cumsum", B::CUMSUM, Options::CumSum, Inputs::Indices(&[1])),
    // Shapes and layouts.
    rule("Reshape", B::RESHAPE, Options::None, Inputs::Indices(&[1])),
    rule(
        "Transpose",
        B::TRANSPOSE,
        Options::None,
        Inputs::Indices(&[1]),
    ),
    rule(
        "ExpandDims",
        B::EXPAND_DIMS,
        Options::Empty(union::EXPAND_DIMS),
        Inputs::Indices(&[1]),
    ),
    rule("Squeeze", B::SQUEEZE, Options::Squeeze, Inputs::All),
    rule("Slice", B::SLICE, Options::None, Inputs::Indices(&[1, 2])),
    rule(
        "Pad",
        B::PAD,
        Options::Empty(union::PAD),
        Inputs::Indices(&[1]),
    ),
    rule("Tile", B::TILE, Options::None, Inputs::Indices(&[1])),
    Rule {
        version: 2,
        ..rule(
            "BroadcastTo",
            B::BROADCAST_TO,
            Options::None,
            Inputs::Indices(&[1]),
        )
    },
    rule("Pack", B::PACK, Options::Pack, Inputs::All),
    rule(
        "ConcatV2",
        B::CONCATENATION,
        Options::None,
        Inputs::Special(concat),
    ),
];

/// The framework ops that export as builtins, with the builtin each
/// becomes (`MatMul` becomes `FULLY_CONNECTED` or `BATCH_MATMUL`).
pub fn builtin_ops() -> impl Iterator<Item = (&'static str, B)> {
    RULES.iter().map(|r| (r.op, r.code))
}

/// Adds `node` to the model as its builtin, or as a custom op when it has
/// none or the options keep it custom.
pub(super) fn lower(l: &mut Lowering<'_>, node: &Node) -> Result<()> {
    let rule = match RULES.iter().find(|r| r.op == node.op()) {
        Some(rule) if !l.keeps_custom(node.op()) => rule,
        _ => return l.custom(node),
    };
    if l.fuses() && (fuse::bias(l, node)? || fuse::activation(l, node)) {
        return Ok(());
    }
    let inputs = match rule.inputs {
        Inputs::Special(lower) => return lower(l, node, rule),
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
        builtin(rule.code, rule.version),
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
fn matmul(l: &mut Lowering<'_>, node: &Node, rule: &Rule) -> Result<()> {
    let transpose_a: bool = attr(node, "transpose_a")?;
    let transpose_b: bool = attr(node, "transpose_b")?;
    let [a, b] = [node.inputs()[0], node.inputs()[1]];
    let float = node.output_dtype(0) == Some(op_core::DType::F32);
    let weights = if transpose_a || !float {
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
            builtin(rule.code, rule.version),
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
fn concat(l: &mut Lowering<'_>, node: &Node, rule: &Rule) -> Result<()> {
    let n = node.inputs().len() - 1;
    let axis = l.constant_input(node, n, "axis")?;
    let axis = match axis.dtype() {
        op_core::DType::I64 => i32::try_from(axis.scalar_value::<i64>()?)
            .map_err(|_| Error::invalid_argument("the axis is beyond int32"))?,
        _ => axis.scalar_value::<i32>()?,
    };
    let inputs = node.inputs()[..n]
        .iter()
        .map(|&o| l.input_tensor(o).map(Some))
        .collect::<Result<_>>()?;
    let outputs = l.output_tensors(node)?;
    l.add_operator(
        builtin(rule.code, rule.version),
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
