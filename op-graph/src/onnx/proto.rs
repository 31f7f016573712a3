//! ONNX's model messages, as prost structs: the subset a model of tensor
//! ops needs, written by hand with prost's derives from the field numbers
//! of `onnx/onnx.proto` (as `graphdef::proto` is from TensorFlow's); no
//! build script and no `protoc`. Checked by decoding the files we write
//! with Python's `onnx` package (`onnx.checker.check_model`) and running
//! them in ONNX Runtime (op-onnx's Python tests).

/// `onnx.ModelProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ModelProto {
    /// The IR version.
    #[prost(int64, tag = "1")]
    pub ir_version: i64,
    /// The tool that wrote the model.
    #[prost(string, tag = "2")]
    pub producer_name: String,
    /// Its version.
    #[prost(string, tag = "3")]
    pub producer_version: String,
    /// The graph.
    #[prost(message, optional, tag = "7")]
    pub graph: Option<GraphProto>,
    /// The opsets (domains and versions) the graph's nodes use.
    #[prost(message, repeated, tag = "8")]
    pub opset_import: Vec<OperatorSetIdProto>,
}

/// `onnx.OperatorSetIdProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct OperatorSetIdProto {
    /// The domain ("" for ONNX's own ops).
    #[prost(string, tag = "1")]
    pub domain: String,
    /// The opset version.
    #[prost(int64, tag = "2")]
    pub version: i64,
}

/// `onnx.GraphProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GraphProto {
    /// The nodes, in a topological order.
    #[prost(message, repeated, tag = "1")]
    pub node: Vec<NodeProto>,
    /// The graph's name.
    #[prost(string, tag = "2")]
    pub name: String,
    /// Constant tensors, by name.
    #[prost(message, repeated, tag = "5")]
    pub initializer: Vec<TensorProto>,
    /// The inputs.
    #[prost(message, repeated, tag = "11")]
    pub input: Vec<ValueInfoProto>,
    /// The outputs.
    #[prost(message, repeated, tag = "12")]
    pub output: Vec<ValueInfoProto>,
}

/// `onnx.NodeProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NodeProto {
    /// Input value names.
    #[prost(string, repeated, tag = "1")]
    pub input: Vec<String>,
    /// Output value names.
    #[prost(string, repeated, tag = "2")]
    pub output: Vec<String>,
    /// The node's name.
    #[prost(string, tag = "3")]
    pub name: String,
    /// The op.
    #[prost(string, tag = "4")]
    pub op_type: String,
    /// Its attributes.
    #[prost(message, repeated, tag = "5")]
    pub attribute: Vec<AttributeProto>,
    /// The op's domain ("" for ONNX's own).
    #[prost(string, tag = "7")]
    pub domain: String,
}

/// `onnx.AttributeProto.AttributeType`'s values.
pub mod attribute_type {
    /// `FLOAT`.
    pub const FLOAT: i32 = 1;
    /// `INT`.
    pub const INT: i32 = 2;
    /// `STRING`.
    pub const STRING: i32 = 3;
    /// `FLOATS`.
    pub const FLOATS: i32 = 6;
    /// `INTS`.
    pub const INTS: i32 = 7;
    /// `STRINGS`.
    pub const STRINGS: i32 = 8;
}

/// `onnx.AttributeProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct AttributeProto {
    /// The name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// A float value.
    #[prost(float, tag = "2")]
    pub f: f32,
    /// An int value.
    #[prost(int64, tag = "3")]
    pub i: i64,
    /// A string value.
    #[prost(bytes = "vec", tag = "4")]
    pub s: Vec<u8>,
    /// Float values.
    #[prost(float, repeated, tag = "7")]
    pub floats: Vec<f32>,
    /// Int values.
    #[prost(int64, repeated, tag = "8")]
    pub ints: Vec<i64>,
    /// String values.
    #[prost(bytes = "vec", repeated, tag = "9")]
    pub strings: Vec<Vec<u8>>,
    /// Which of the above it holds ([`attribute_type`]).
    #[prost(int32, tag = "20")]
    pub r#type: i32,
}

/// `onnx.ValueInfoProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ValueInfoProto {
    /// The value's name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// Its type.
    #[prost(message, optional, tag = "2")]
    pub r#type: Option<TypeProto>,
}

/// `onnx.TypeProto`, for tensors.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TypeProto {
    /// A tensor's element type and shape.
    #[prost(message, optional, tag = "1")]
    pub tensor_type: Option<TensorTypeProto>,
}

/// `onnx.TypeProto.Tensor`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorTypeProto {
    /// The element type (`TensorProto.DataType`).
    #[prost(int32, tag = "1")]
    pub elem_type: i32,
    /// The shape (none: unknown rank).
    #[prost(message, optional, tag = "2")]
    pub shape: Option<TensorShapeProto>,
}

/// `onnx.TensorShapeProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorShapeProto {
    /// The dims.
    #[prost(message, repeated, tag = "1")]
    pub dim: Vec<Dimension>,
}

/// `onnx.TensorShapeProto.Dimension`: a size, a name, or neither
/// (unknown).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Dimension {
    /// The size, when known.
    #[prost(int64, optional, tag = "1")]
    pub dim_value: Option<i64>,
    /// A symbolic name, for an unknown size.
    #[prost(string, optional, tag = "2")]
    pub dim_param: Option<String>,
}

/// `onnx.TensorProto`, with its data as `raw_data` (little-endian).
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorProto {
    /// The dims.
    #[prost(int64, repeated, tag = "1")]
    pub dims: Vec<i64>,
    /// The element type.
    #[prost(int32, tag = "2")]
    pub data_type: i32,
    /// The name (an initializer's is the value it gives).
    #[prost(string, tag = "8")]
    pub name: String,
    /// The elements' bytes.
    #[prost(bytes = "vec", tag = "9")]
    pub raw_data: Vec<u8>,
}
