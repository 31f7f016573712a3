//! TensorFlow's GraphDef messages, as prost structs.
//!
//! Written by hand with prost's derives, from the field numbers of
//! TensorFlow 2.21's `.proto` files (`tensorflow/core/framework/graph.proto`,
//! `node_def.proto`, `attr_value.proto`, `tensor.proto`, `tensor_shape.proto`,
//! `versions.proto`; checked against the descriptors of TensorFlow's own
//! Python modules). No build script and no `protoc`: the subset that a
//! graph of ops needs is small and stable, and TensorFlow only ever adds
//! fields.
//!
//! Fields left out are skipped when read (prost ignores unknown fields): a
//! GraphDef's function `library` and `debug_info`, a NodeDef's
//! `experimental_debug_info` and `experimental_type` (TensorFlow 2.x writes
//! the latter on Shape nodes), a TensorProto's resource and variant values.
//! Enum fields (`DataType`) are kept as their `i32` values so that a value
//! this crate does not know is an error at import naming the node, not a
//! decoding failure.

use std::collections::BTreeMap;

/// A program: its nodes, in any order (`tensorflow.GraphDef`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct GraphDef {
    /// The nodes.
    #[prost(message, repeated, tag = "1")]
    pub node: Vec<NodeDef>,
    /// The versions of the producer and the oldest consumer allowed.
    #[prost(message, optional, tag = "4")]
    pub versions: Option<VersionDef>,
    /// Deprecated single version number (before `versions`).
    #[prost(int32, tag = "3")]
    pub version: i32,
}

/// One node: an op instance with its inputs (`tensorflow.NodeDef`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct NodeDef {
    /// The node's name, unique in its graph.
    #[prost(string, tag = "1")]
    pub name: String,
    /// The op's name.
    #[prost(string, tag = "2")]
    pub op: String,
    /// `node:k` (`node` for output 0) for data inputs, then `^node` for
    /// control inputs.
    #[prost(string, repeated, tag = "3")]
    pub input: Vec<String>,
    /// The requested device (`/device:CPU:0`), empty for any.
    #[prost(string, tag = "4")]
    pub device: String,
    /// The attrs, by name (ordered, so that writing is deterministic).
    #[prost(btree_map = "string, message", tag = "5")]
    pub attr: BTreeMap<String, AttrValue>,
}

/// An attr's value (`tensorflow.AttrValue`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct AttrValue {
    /// The value, one of its kinds.
    #[prost(oneof = "attr_value::Value", tags = "1, 2, 3, 4, 5, 6, 7, 8, 9, 10")]
    pub value: Option<attr_value::Value>,
}

/// The kinds of [`AttrValue`].
pub mod attr_value {
    use super::{NameAttrList, TensorProto, TensorShapeProto};

    /// The oneof `value` of `AttrValue`. The message kinds are boxed, so
    /// that an attr holding a type or an int (most attrs) takes 32 bytes,
    /// not the 328 of a `TensorProto` held inline.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Value {
        /// `list(...)`.
        #[prost(message, boxed, tag = "1")]
        List(Box<ListValue>),
        /// `string`.
        #[prost(bytes, tag = "2")]
        S(Vec<u8>),
        /// `int`.
        #[prost(int64, tag = "3")]
        I(i64),
        /// `float`.
        #[prost(float, tag = "4")]
        F(f32),
        /// `bool`.
        #[prost(bool, tag = "5")]
        B(bool),
        /// `type`, a `DataType` enum value.
        #[prost(int32, tag = "6")]
        Type(i32),
        /// `shape`.
        #[prost(message, boxed, tag = "7")]
        Shape(Box<TensorShapeProto>),
        /// `tensor`.
        #[prost(message, boxed, tag = "8")]
        Tensor(Box<TensorProto>),
        /// A placeholder inside a function body (not supported in graphs).
        #[prost(string, tag = "9")]
        Placeholder(String),
        /// `func`.
        #[prost(message, boxed, tag = "10")]
        Func(Box<NameAttrList>),
    }

    /// The values of a `list(...)` attr (`AttrValue.ListValue`).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ListValue {
        /// `list(string)`.
        #[prost(bytes = "vec", repeated, tag = "2")]
        pub s: Vec<Vec<u8>>,
        /// `list(int)`.
        #[prost(int64, repeated, tag = "3")]
        pub i: Vec<i64>,
        /// `list(float)`.
        #[prost(float, repeated, tag = "4")]
        pub f: Vec<f32>,
        /// `list(bool)`.
        #[prost(bool, repeated, tag = "5")]
        pub b: Vec<bool>,
        /// `list(type)`, `DataType` enum values.
        #[prost(int32, repeated, tag = "6")]
        pub r#type: Vec<i32>,
        /// `list(shape)`.
        #[prost(message, repeated, tag = "7")]
        pub shape: Vec<TensorShapeProto>,
        /// `list(tensor)`.
        #[prost(message, repeated, tag = "8")]
        pub tensor: Vec<TensorProto>,
        /// `list(func)`.
        #[prost(message, repeated, tag = "9")]
        pub func: Vec<NameAttrList>,
    }
}

/// A function reference with attrs (`tensorflow.NameAttrList`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct NameAttrList {
    /// The function's (or op's) name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// Its attrs.
    #[prost(btree_map = "string, message", tag = "2")]
    pub attr: BTreeMap<String, AttrValue>,
}

/// A tensor (`tensorflow.TensorProto`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorProto {
    /// The element type, a `DataType` enum value.
    #[prost(int32, tag = "1")]
    pub dtype: i32,
    /// The shape.
    #[prost(message, optional, tag = "2")]
    pub tensor_shape: Option<TensorShapeProto>,
    /// Version 0: a typed field with fewer values repeats its last.
    #[prost(int32, tag = "3")]
    pub version_number: i32,
    /// Every element's little-endian bytes.
    #[prost(bytes = "vec", tag = "4")]
    pub tensor_content: Vec<u8>,
    /// `half` and `bfloat16`, as 16-bit patterns.
    #[prost(int32, repeated, tag = "13")]
    pub half_val: Vec<i32>,
    /// `float`.
    #[prost(float, repeated, tag = "5")]
    pub float_val: Vec<f32>,
    /// `double`.
    #[prost(double, repeated, tag = "6")]
    pub double_val: Vec<f64>,
    /// `int32`, `int16`, `int8`, `uint8`, `uint16` and the quantized types.
    #[prost(int32, repeated, tag = "7")]
    pub int_val: Vec<i32>,
    /// `string`.
    #[prost(bytes = "vec", repeated, tag = "8")]
    pub string_val: Vec<Vec<u8>>,
    /// `complex64`, as (real, imaginary) pairs.
    #[prost(float, repeated, tag = "9")]
    pub scomplex_val: Vec<f32>,
    /// `int64`.
    #[prost(int64, repeated, tag = "10")]
    pub int64_val: Vec<i64>,
    /// `bool`.
    #[prost(bool, repeated, tag = "11")]
    pub bool_val: Vec<bool>,
    /// `complex128`, as (real, imaginary) pairs.
    #[prost(double, repeated, tag = "12")]
    pub dcomplex_val: Vec<f64>,
    /// `uint32`.
    #[prost(uint32, repeated, tag = "16")]
    pub uint32_val: Vec<u32>,
    /// `uint64`.
    #[prost(uint64, repeated, tag = "17")]
    pub uint64_val: Vec<u64>,
}

/// A shape, possibly partly known (`tensorflow.TensorShapeProto`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorShapeProto {
    /// The dimensions, outermost first.
    #[prost(message, repeated, tag = "2")]
    pub dim: Vec<tensor_shape_proto::Dim>,
    /// Whether the rank is unknown (then `dim` is empty).
    #[prost(bool, tag = "3")]
    pub unknown_rank: bool,
}

/// The dimension of [`TensorShapeProto`].
pub mod tensor_shape_proto {
    /// One dimension (`TensorShapeProto.Dim`).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Dim {
        /// The size, -1 when unknown.
        #[prost(int64, tag = "1")]
        pub size: i64,
        /// An optional name.
        #[prost(string, tag = "2")]
        pub name: String,
    }
}

/// Versions of serialized data (`tensorflow.VersionDef`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct VersionDef {
    /// The version of the code that produced the data.
    #[prost(int32, tag = "1")]
    pub producer: i32,
    /// Consumers below this version must not read the data.
    #[prost(int32, tag = "2")]
    pub min_consumer: i32,
    /// Consumer versions that must not read the data.
    #[prost(int32, repeated, tag = "3")]
    pub bad_consumers: Vec<i32>,
}
