//! GraphDefs in protobuf text format (`.pbtxt`), for people: read with
//! op-spec's text reader (the one that reads attr defaults in op specs),
//! written as TensorFlow's `text_format` writes them.
//!
//! Reading goes text → generic tree → [`proto::GraphDef`], so that text
//! and binary files reach the importer as the same messages. Fields that
//! a graph does not use (a GraphDef's `library` and `debug_info`, a
//! NodeDef's `experimental_debug_info` and `experimental_type`) are
//! skipped, as the binary reader skips them; any other unknown field is an
//! error at its position.

use std::fmt::Write;

use op_core::op_spec::pbtxt::{c_escape, format_double, format_float};
use op_core::op_spec::text::{TextError, TextField, TextNode, parse_message};
use op_core::{Error, Result};

use super::convert::{shape_to_proto, tensor_to_proto};
use super::proto::{self, attr_value::Value};

/// Fields that TensorFlow writes and a graph does not need, skipped as the
/// binary reader skips unknown fields.
const SKIPPED: [&str; 4] = [
    "library",
    "debug_info",
    "experimental_debug_info",
    "experimental_type",
];

/// Reads a GraphDef from its text format.
///
/// Returns an `InvalidArgument` error with the line and column of the
/// first problem.
pub fn parse(text: &str) -> Result<proto::GraphDef> {
    let at = |e: TextError| {
        let line = text[..e.pos.min(text.len())].matches('\n').count() + 1;
        let column = e.pos
            - text[..e.pos.min(text.len())]
                .rfind('\n')
                .map_or(0, |i| i + 1)
            + 1;
        Error::invalid_argument(format!(
            "GraphDef text, line {line}, column {column}: {}",
            e.message
        ))
    };
    let message = parse_message(text).map_err(at)?;
    graph_def(message.root()).map_err(at)
}

type TextResult<T> = std::result::Result<T, TextError>;

fn unknown(field: &TextField<'_>, message: &str) -> TextError {
    TextError {
        pos: field.pos,
        message: format!("{message} has no field '{}'", field.name),
    }
}

fn graph_def(node: TextNode<'_>) -> TextResult<proto::GraphDef> {
    let mut graph = proto::GraphDef::default();
    for f in node.fields("GraphDef")? {
        match f.name {
            "node" => graph.node.push(node_def(f.value)?),
            "versions" => graph.versions = Some(version_def(f.value)?),
            "version" => graph.version = f.value.to_i32()?,
            name if SKIPPED.contains(&name) => {}
            _ => return Err(unknown(&f, "GraphDef")),
        }
    }
    Ok(graph)
}

fn string(node: TextNode<'_>) -> TextResult<String> {
    String::from_utf8(node.to_bytes()?).map_err(|_| TextError {
        pos: node.pos(),
        message: "expected UTF-8 text".into(),
    })
}

fn node_def(node: TextNode<'_>) -> TextResult<proto::NodeDef> {
    let mut def = proto::NodeDef::default();
    for f in node.fields("NodeDef")? {
        match f.name {
            "name" => def.name = string(f.value)?,
            "op" => def.op = string(f.value)?,
            "input" => def.input.push(string(f.value)?),
            "device" => def.device = string(f.value)?,
            "attr" => {
                let (key, value) = attr_entry(f.value)?;
                def.attr.insert(key, value);
            }
            name if SKIPPED.contains(&name) => {}
            _ => return Err(unknown(&f, "NodeDef")),
        }
    }
    Ok(def)
}

fn attr_entry(node: TextNode<'_>) -> TextResult<(String, proto::AttrValue)> {
    let (mut key, mut value) = (String::new(), proto::AttrValue::default());
    for f in node.fields("attr entry")? {
        match f.name {
            "key" => key = string(f.value)?,
            "value" => value = attr_value(f.value)?,
            _ => return Err(unknown(&f, "an attr entry")),
        }
    }
    Ok((key, value))
}

fn attr_value(node: TextNode<'_>) -> TextResult<proto::AttrValue> {
    let mut value = None;
    for f in node.fields("AttrValue")? {
        value = Some(match f.name {
            "s" => Value::S(f.value.to_bytes()?),
            "i" => Value::I(f.value.to_i64()?),
            "f" => Value::F(f.value.to_f32()?),
            "b" => Value::B(f.value.to_bool()?),
            "type" => Value::Type(f.value.to_dtype()?.enum_value()),
            "shape" => Value::Shape(Box::new(shape_to_proto(&f.value.to_shape()?))),
            "tensor" => Value::Tensor(Box::new(tensor_to_proto(&f.value.to_tensor()?))),
            "func" => Value::Func(Box::new(name_attr_list(f.value)?)),
            "placeholder" => Value::Placeholder(string(f.value)?),
            "list" => Value::List(Box::new(list_value(f.value)?)),
            _ => return Err(unknown(&f, "AttrValue")),
        });
    }
    Ok(proto::AttrValue { value })
}

fn list_value(node: TextNode<'_>) -> TextResult<proto::attr_value::ListValue> {
    let mut list = proto::attr_value::ListValue::default();
    for f in node.fields("ListValue")? {
        let v = f.value;
        match f.name {
            "s" => list.s.push(v.to_bytes()?),
            "i" => list.i.push(v.to_i64()?),
            "f" => list.f.push(v.to_f32()?),
            "b" => list.b.push(v.to_bool()?),
            "type" => list.r#type.push(v.to_dtype()?.enum_value()),
            "shape" => list.shape.push(shape_to_proto(&v.to_shape()?)),
            "tensor" => list.tensor.push(tensor_to_proto(&v.to_tensor()?)),
            "func" => list.func.push(name_attr_list(v)?),
            _ => return Err(unknown(&f, "ListValue")),
        }
    }
    Ok(list)
}

fn name_attr_list(node: TextNode<'_>) -> TextResult<proto::NameAttrList> {
    let mut func = proto::NameAttrList::default();
    for f in node.fields("NameAttrList")? {
        match f.name {
            "name" => func.name = string(f.value)?,
            "attr" => {
                let (key, value) = attr_entry(f.value)?;
                func.attr.insert(key, value);
            }
            _ => return Err(unknown(&f, "NameAttrList")),
        }
    }
    Ok(func)
}

fn version_def(node: TextNode<'_>) -> TextResult<proto::VersionDef> {
    let mut versions = proto::VersionDef::default();
    for f in node.fields("VersionDef")? {
        match f.name {
            "producer" => versions.producer = f.value.to_i32()?,
            "min_consumer" => versions.min_consumer = f.value.to_i32()?,
            "bad_consumers" => versions.bad_consumers.push(f.value.to_i32()?),
            _ => return Err(unknown(&f, "VersionDef")),
        }
    }
    Ok(versions)
}

/// Writes a GraphDef in TensorFlow's multi-line text format (fields in
/// field-number order within a message, as `text_format` prints them;
/// proto3 fields at their default values left out).
pub fn write(graph: &proto::GraphDef) -> String {
    let mut w = Writer::default();
    for node in &graph.node {
        w.message("node", |w| write_node(w, node));
    }
    if graph.version != 0 {
        w.field("version", graph.version);
    }
    if let Some(versions) = &graph.versions {
        w.message("versions", |w| {
            w.nonzero("producer", versions.producer);
            w.nonzero("min_consumer", versions.min_consumer);
            for v in &versions.bad_consumers {
                w.field("bad_consumers", v);
            }
        });
    }
    w.out
}

#[derive(Default)]
struct Writer {
    out: String,
    depth: usize,
}

impl Writer {
    fn field(&mut self, name: &str, value: impl std::fmt::Display) {
        let _ = writeln!(
            self.out,
            "{:indent$}{name}: {value}",
            "",
            indent = 2 * self.depth
        );
    }

    fn nonzero(&mut self, name: &str, value: i32) {
        if value != 0 {
            self.field(name, value);
        }
    }

    fn bytes(&mut self, name: &str, bytes: &[u8]) {
        self.field(name, format_args!("\"{}\"", c_escape(bytes)));
    }

    fn string(&mut self, name: &str, s: &str) {
        if !s.is_empty() {
            self.bytes(name, s.as_bytes());
        }
    }

    fn dtype(&mut self, name: &str, value: i32) {
        match op_core::DType::from_enum_value(value) {
            Some(dtype) => self.field(name, dtype.enum_name()),
            None => self.field(name, value),
        }
    }

    fn message(&mut self, name: &str, body: impl FnOnce(&mut Self)) {
        let _ = writeln!(self.out, "{:indent$}{name} {{", "", indent = 2 * self.depth);
        self.depth += 1;
        body(self);
        self.depth -= 1;
        let _ = writeln!(self.out, "{:indent$}}}", "", indent = 2 * self.depth);
    }
}

fn write_node(w: &mut Writer, node: &proto::NodeDef) {
    w.string("name", &node.name);
    w.string("op", &node.op);
    for input in &node.input {
        w.bytes("input", input.as_bytes());
    }
    w.string("device", &node.device);
    for (key, value) in &node.attr {
        w.message("attr", |w| {
            w.bytes("key", key.as_bytes());
            w.message("value", |w| write_attr_value(w, value));
        });
    }
}

fn write_attr_value(w: &mut Writer, value: &proto::AttrValue) {
    let Some(value) = &value.value else { return };
    match value {
        Value::List(list) => w.message("list", |w| {
            for s in &list.s {
                w.bytes("s", s);
            }
            for i in &list.i {
                w.field("i", i);
            }
            for f in &list.f {
                w.field("f", format_float(*f));
            }
            for b in &list.b {
                w.field("b", b);
            }
            for t in &list.r#type {
                w.dtype("type", *t);
            }
            for s in &list.shape {
                w.message("shape", |w| write_shape(w, s));
            }
            for t in &list.tensor {
                w.message("tensor", |w| write_tensor(w, t));
            }
            for f in &list.func {
                w.message("func", |w| write_func(w, f));
            }
        }),
        Value::S(s) => w.bytes("s", s),
        Value::I(i) => w.field("i", i),
        Value::F(f) => w.field("f", format_float(*f)),
        Value::B(b) => w.field("b", b),
        Value::Type(t) => w.dtype("type", *t),
        Value::Shape(s) => w.message("shape", |w| write_shape(w, s)),
        Value::Tensor(t) => w.message("tensor", |w| write_tensor(w, t)),
        Value::Placeholder(p) => w.bytes("placeholder", p.as_bytes()),
        Value::Func(f) => w.message("func", |w| write_func(w, f)),
    }
}

fn write_func(w: &mut Writer, func: &proto::NameAttrList) {
    w.string("name", &func.name);
    for (key, value) in &func.attr {
        w.message("attr", |w| {
            w.bytes("key", key.as_bytes());
            w.message("value", |w| write_attr_value(w, value));
        });
    }
}

fn write_shape(w: &mut Writer, shape: &proto::TensorShapeProto) {
    for dim in &shape.dim {
        w.message("dim", |w| {
            if dim.size != 0 {
                w.field("size", dim.size);
            }
            w.string("name", &dim.name);
        });
    }
    if shape.unknown_rank {
        w.field("unknown_rank", true);
    }
}

fn write_tensor(w: &mut Writer, t: &proto::TensorProto) {
    w.dtype("dtype", t.dtype);
    if let Some(shape) = &t.tensor_shape {
        w.message("tensor_shape", |w| write_shape(w, shape));
    }
    w.nonzero("version_number", t.version_number);
    if !t.tensor_content.is_empty() {
        w.bytes("tensor_content", &t.tensor_content);
    }
    for v in &t.float_val {
        w.field("float_val", format_float(*v));
    }
    for v in &t.double_val {
        w.field("double_val", format_double(*v));
    }
    for v in &t.int_val {
        w.field("int_val", v);
    }
    for v in &t.string_val {
        w.bytes("string_val", v);
    }
    for v in &t.scomplex_val {
        w.field("scomplex_val", format_float(*v));
    }
    for v in &t.int64_val {
        w.field("int64_val", v);
    }
    for v in &t.bool_val {
        w.field("bool_val", v);
    }
    for v in &t.dcomplex_val {
        w.field("dcomplex_val", format_double(*v));
    }
    for v in &t.half_val {
        w.field("half_val", v);
    }
    for v in &t.uint32_val {
        w.field("uint32_val", v);
    }
    for v in &t.uint64_val {
        w.field("uint64_val", v);
    }
}
