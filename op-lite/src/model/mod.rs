//! A `.tflite` model in memory: the plain, checked form of TensorFlow Lite's
//! flatbuffer schema (`schema.fbs`) that the reader produces, the writer
//! consumes and the interpreter runs.
//!
//! Everything here is owned and already checked: every tensor, buffer and
//! operator-code index is in range, every shape is non-negative, and every
//! constant buffer holds exactly the bytes its tensor needs. Code that takes a
//! [`Model`] never checks the file again.
//!
//! [`Model::from_bytes`] reads a file (`read.rs`), [`Model::to_bytes`] writes
//! one (`write.rs`), and [`Model::validate`] is the one list of the rules both
//! hold a model to (`check.rs`); `options.rs` translates builtin options both
//! ways.
//!
//! ```
//! use op_lite::Model;
//! use op_lite::model::BuiltinOperator;
//!
//! let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/sin_custom.tflite"))?;
//! let model = Model::from_bytes(&bytes)?;
//! let sin = &model.operator_codes[1];
//! assert_eq!(sin.builtin, BuiltinOperator::CUSTOM);
//! assert_eq!(sin.custom_name.as_deref(), Some("Sin"));
//! assert_eq!(Model::from_bytes(&model.to_bytes()?)?, model);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod check;
mod options;
mod read;
mod write;

pub use check::encode_strings;

use op_core::DType;

/// A whole model: operator codes, subgraphs and the buffers their constant
/// tensors read (TensorFlow Lite's `Model` table).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Model {
    /// The schema version the file was written with (3 for current files).
    pub version: u32,
    /// Free text, usually the converter's name ("MLIR Converted.").
    pub description: String,
    /// The ops the model uses; an [`Operator`] names one by index.
    pub operator_codes: Vec<OperatorCode>,
    /// The subgraphs; the first is the one the interpreter runs.
    pub subgraphs: Vec<Subgraph>,
    /// Raw data of constant tensors. Buffer 0 is always empty, by convention:
    /// a tensor with buffer 0 has no constant data.
    pub buffers: Vec<Buffer>,
    /// Named entry points (`signature_defs`): input and output names mapped
    /// to tensor indices of a subgraph.
    pub signatures: Vec<Signature>,
}

/// The bytes of one buffer (little-endian elements, row-major), empty when
/// the buffer holds no data.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Buffer {
    /// The data, copied out of the file.
    pub data: Vec<u8>,
}

/// Which op an operator runs: a builtin code, or a custom op's name, each
/// with a version (TensorFlow Lite's `OperatorCode`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OperatorCode {
    /// The builtin op, or [`BuiltinOperator::CUSTOM`] for a custom op. The
    /// reader takes the larger of the file's `deprecated_builtin_code` and
    /// `builtin_code`, so codes above 127 come out right from old and new
    /// writers.
    pub builtin: BuiltinOperator,
    /// The custom op's name, for [`BuiltinOperator::CUSTOM`].
    pub custom_name: Option<String>,
    /// The op's version (1 when the file does not say).
    pub version: i32,
}

/// A builtin op's code in TensorFlow Lite's `BuiltinOperator` enum. A plain
/// number, so a model with a code this crate has no name for still reads:
/// the resolver reports it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BuiltinOperator(pub i32);

macro_rules! builtin_operators {
    ($($name:ident = $code:literal,)*) => {
        impl BuiltinOperator {
            $(
                #[doc = concat!("`", stringify!($name), "` (", stringify!($code), ").")]
                pub const $name: BuiltinOperator = BuiltinOperator($code);
            )*

            /// The name TensorFlow Lite gives the code (`"CONV_2D"`), for the
            /// codes this crate knows.
            pub fn name(self) -> Option<&'static str> {
                match self.0 {
                    $($code => Some(stringify!($name)),)*
                    _ => None,
                }
            }
        }
    };
}

builtin_operators! {
    ADD = 0,
    AVERAGE_POOL_2D = 1,
    CONCATENATION = 2,
    CONV_2D = 3,
    DEPTHWISE_CONV_2D = 4,
    DEQUANTIZE = 6,
    FULLY_CONNECTED = 9,
    LOGISTIC = 14,
    MAX_POOL_2D = 17,
    MUL = 18,
    RELU = 19,
    RELU6 = 21,
    RESHAPE = 22,
    SOFTMAX = 25,
    TANH = 28,
    CUSTOM = 32,
    PAD = 34,
    GATHER = 36,
    TRANSPOSE = 39,
    MEAN = 40,
    SUB = 41,
    DIV = 42,
    SQUEEZE = 43,
    STRIDED_SLICE = 45,
    EXP = 47,
    CAST = 53,
    MAXIMUM = 55,
    MINIMUM = 57,
    LESS = 58,
    NEG = 59,
    GREATER = 61,
    GREATER_EQUAL = 62,
    LESS_EQUAL = 63,
    SELECT = 64,
    SLICE = 65,
    SIN = 66,
    TILE = 69,
    EXPAND_DIMS = 70,
    EQUAL = 71,
    LOG = 73,
    SUM = 74,
    SQRT = 75,
    RSQRT = 76,
    POW = 78,
    REDUCE_PROD = 81,
    REDUCE_MAX = 82,
    PACK = 83,
    FLOOR_DIV = 90,
    SQUARE = 92,
    FLOOR_MOD = 95,
    LEAKY_RELU = 98,
    SQUARED_DIFFERENCE = 99,
    ABS = 101,
    ADD_N = 106,
    COS = 108,
    QUANTIZE = 114,
    HARD_SWISH = 117,
    SELECT_V2 = 123,
    BATCH_MATMUL = 126,
    CUMSUM = 128,
    BROADCAST_TO = 130,
    GELU = 150,
}

impl std::fmt::Display for BuiltinOperator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "builtin operator {}", self.0),
        }
    }
}

/// One subgraph: its tensors, its inputs and outputs (tensor indices), and
/// its operators in execution order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Subgraph {
    /// The subgraph's name (often empty, or `"main"`).
    pub name: String,
    /// Every tensor the subgraph's operators read or write.
    pub tensors: Vec<TensorInfo>,
    /// The subgraph's inputs, as indices into `tensors`.
    pub inputs: Vec<usize>,
    /// The subgraph's outputs, as indices into `tensors`.
    pub outputs: Vec<usize>,
    /// The operators, in the order the interpreter runs them.
    pub operators: Vec<Operator>,
}

/// What a model says about one tensor (TensorFlow Lite's `Tensor` table).
#[derive(Clone, Debug, PartialEq)]
pub struct TensorInfo {
    /// The tensor's name, unique within its subgraph in converted models.
    pub name: String,
    /// The element type. TensorFlow Lite's `TensorType` codes are mapped to
    /// the framework's dtypes with [`dtype_from_tflite`].
    pub dtype: DType,
    /// The shape, every dimension at least 0; `[]` for a scalar.
    pub shape: Vec<usize>,
    /// The shape with `-1` where a dimension may change at run time
    /// (`shape_signature`), when the file gives one.
    pub shape_signature: Option<Vec<i32>>,
    /// The buffer holding the tensor's constant value; 0 when it has none.
    pub buffer: usize,
    /// Quantization parameters, when the file gives any. The interpreter
    /// rejects quantized tensors; the reader keeps them so that it can say
    /// so by name.
    pub quantization: Option<Quantization>,
    /// A variable tensor: state that persists from one invoke to the next.
    pub is_variable: bool,
}

/// A tensor's affine quantization: `real = scale * (q - zero_point)`,
/// per tensor or per channel along `quantized_dimension`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Quantization {
    /// One scale per tensor, or per channel.
    pub scale: Vec<f32>,
    /// One zero point per scale.
    pub zero_point: Vec<i64>,
    /// The channel dimension of per-channel quantization.
    pub quantized_dimension: usize,
}

/// One node: which op (an index into [`Model::operator_codes`]), its input
/// and output tensors, and its options.
#[derive(Clone, Debug, PartialEq)]
pub struct Operator {
    /// The index of the node's [`OperatorCode`].
    pub opcode_index: usize,
    /// Input tensor indices; `None` where an optional input is left out
    /// (`-1` in the file, such as a convolution's missing bias).
    pub inputs: Vec<Option<usize>>,
    /// Output tensor indices.
    pub outputs: Vec<usize>,
    /// Tensors the op may use as intermediates (TensorFlow Lite's
    /// `intermediates`, used by a few quantized ops).
    pub intermediates: Vec<usize>,
    /// The builtin op's options, parsed.
    pub builtin_options: BuiltinOptions,
    /// A custom op's options: a flexbuffer map, as the file holds it.
    pub custom_options: Vec<u8>,
}

/// A fused activation that some builtins apply to their output.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Activation {
    /// None.
    #[default]
    None,
    /// `max(x, 0)`.
    Relu,
    /// `clamp(x, -1, 1)`.
    ReluN1To1,
    /// `clamp(x, 0, 6)`.
    Relu6,
    /// `tanh(x)`.
    Tanh,
    /// TensorFlow Lite's `SIGN_BIT`, which no builtin kernel implements.
    SignBit,
}

/// How a window op pads its input.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Padding {
    /// Output size `ceil(in / stride)`, zeros (or nothing, for pooling)
    /// around the edges.
    #[default]
    Same,
    /// Only windows wholly inside the input.
    Valid,
}

/// The options of a builtin op, parsed from the operator's
/// `builtin_options` union. Ops without options, and options this crate
/// does not parse, are [`BuiltinOptions::None`] and
/// [`BuiltinOptions::Other`].
#[derive(Clone, Debug, Default, PartialEq)]
#[allow(missing_docs)] // The fields are TensorFlow Lite's, named as in schema.fbs.
pub enum BuiltinOptions {
    /// The operator has no options.
    #[default]
    None,
    /// `ADD`, `SUB`, `MUL`, `DIV`.
    Arithmetic { activation: Activation },
    /// `CONV_2D`.
    Conv2D {
        padding: Padding,
        stride_w: usize,
        stride_h: usize,
        dilation_w: usize,
        dilation_h: usize,
        activation: Activation,
    },
    /// `DEPTHWISE_CONV_2D`.
    DepthwiseConv2D {
        padding: Padding,
        stride_w: usize,
        stride_h: usize,
        dilation_w: usize,
        dilation_h: usize,
        depth_multiplier: usize,
        activation: Activation,
    },
    /// `AVERAGE_POOL_2D`, `MAX_POOL_2D`.
    Pool2D {
        padding: Padding,
        stride_w: usize,
        stride_h: usize,
        filter_w: usize,
        filter_h: usize,
        activation: Activation,
    },
    /// `FULLY_CONNECTED` (the default weights format only).
    FullyConnected {
        activation: Activation,
        keep_num_dims: bool,
    },
    /// `SOFTMAX`.
    Softmax { beta: f32 },
    /// `RESHAPE`: the new shape, when given as an option rather than an
    /// input.
    Reshape { new_shape: Vec<i32> },
    /// `SQUEEZE`.
    Squeeze { squeeze_dims: Vec<i32> },
    /// `CONCATENATION`.
    Concatenation { axis: i32, activation: Activation },
    /// `PACK`.
    Pack { values_count: usize, axis: i32 },
    /// `MEAN`, `SUM` and the other reductions.
    Reducer { keep_dims: bool },
    /// `STRIDED_SLICE`.
    StridedSlice {
        begin_mask: i32,
        end_mask: i32,
        ellipsis_mask: i32,
        new_axis_mask: i32,
        shrink_axis_mask: i32,
        offset: bool,
    },
    /// `GATHER`.
    Gather { axis: i32, batch_dims: i32 },
    /// `CAST`: the types, when the file gives them.
    Cast {
        in_type: Option<DType>,
        out_type: Option<DType>,
    },
    /// `BATCH_MATMUL`.
    BatchMatMul { adj_x: bool, adj_y: bool },
    /// `GELU`.
    Gelu { approximate: bool },
    /// `LEAKY_RELU`.
    LeakyRelu { alpha: f32 },
    /// `CUMSUM`.
    CumSum { exclusive: bool, reverse: bool },
    /// Options of a type this crate does not parse: the union's type code.
    Other { union_type: u8 },
}

/// A named entry point into a subgraph (`SignatureDef`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Signature {
    /// The signature's key (`"serving_default"`).
    pub key: String,
    /// The subgraph it runs.
    pub subgraph: usize,
    /// Input names and their tensor indices.
    pub inputs: Vec<(String, usize)>,
    /// Output names and their tensor indices.
    pub outputs: Vec<(String, usize)>,
}

/// The framework dtype of a TensorFlow Lite `TensorType` code, or `None`
/// for a code with no framework dtype (`INT4`, and codes past the schema).
pub fn dtype_from_tflite(code: i8) -> Option<DType> {
    TENSOR_TYPES
        .iter()
        .find(|(c, _)| *c == code)
        .map(|(_, dtype)| *dtype)
}

/// The TensorFlow Lite `TensorType` code of a framework dtype, or `None`
/// for a dtype TensorFlow Lite has no code for (the quantized `QInt*` ones).
pub fn tflite_type(dtype: DType) -> Option<i8> {
    TENSOR_TYPES
        .iter()
        .find(|(_, d)| *d == dtype)
        .map(|(code, _)| *code)
}

/// TensorFlow Lite's `TensorType` codes (schema.fbs) beside the framework's
/// dtypes. `INT4` (17) has no framework dtype.
const TENSOR_TYPES: [(i8, DType); 18] = [
    (0, DType::F32),
    (1, DType::F16),
    (2, DType::I32),
    (3, DType::U8),
    (4, DType::I64),
    (5, DType::String),
    (6, DType::Bool),
    (7, DType::I16),
    (8, DType::Complex64),
    (9, DType::I8),
    (10, DType::F64),
    (11, DType::Complex128),
    (12, DType::U64),
    (13, DType::Resource),
    (14, DType::Variant),
    (15, DType::U32),
    (16, DType::U16),
    (18, DType::BF16),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tensor_type_codes_map_both_ways() {
        for (code, dtype) in TENSOR_TYPES {
            assert_eq!(dtype_from_tflite(code), Some(dtype));
            assert_eq!(tflite_type(dtype), Some(code));
        }
        assert_eq!(dtype_from_tflite(17), None, "INT4");
        assert_eq!(tflite_type(DType::QInt8), None);
    }

    #[test]
    fn builtin_operators_print_their_names_or_their_code() {
        assert_eq!(BuiltinOperator::CONV_2D.to_string(), "CONV_2D");
        assert_eq!(BuiltinOperator(150).to_string(), "GELU");
        assert_eq!(BuiltinOperator(7).to_string(), "builtin operator 7");
    }
}
