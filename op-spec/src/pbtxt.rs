//! TensorFlow's text format for op definitions: an `OpList` as in TensorFlow's
//! `ops.pbtxt`, so that tools which read TensorFlow op registries read ours.
//!
//! [`parse_op_list`] and [`parse_op_def`] (in `pbtxt/read.rs`) read that text back.
//!
//! The output is what TensorFlow's C++ `TextFormat` prints for the same
//! `OpDef`: fields in field-number order, proto3 defaults omitted, oneof
//! members always printed, strings C-escaped, floats printed by the shortest
//! of `%.6g` / `%.9g` that round-trips.
//!
//! ```
//! use op_spec::{pbtxt, OpDefBuilder};
//! let op = OpDefBuilder::new("ZeroOut")
//!     .attr("T: {float, int32} = DT_INT32")
//!     .input("to_zero: T")
//!     .output("zeroed: T")
//!     .build()
//!     .unwrap();
//! let compact = pbtxt::op_def_to_short_string(&op);
//! assert!(compact.contains(r#"attr { name: "T" type: "type" default_value { type: DT_INT32 } allowed_values { list { type: DT_FLOAT type: DT_INT32 } } }"#));
//! ```

use std::fmt::Write as _;

use crate::attr_value::{ListValue, ShapeValue, TensorValue};
use crate::op_def::{ArgDef, ArgType, AttrDef};
use crate::{AttrValue, FullType, FullTypeAttr, FullTypeId, OpDef};

mod read;
pub use read::{OpListError, parse_op_def, parse_op_list};

/// Escapes bytes as C does, the way protobuf's `CEscape` writes strings:
/// `\n`, `\r`, `\t`, `\"`, `\'`, `\\`, and three-digit octal for every other
/// byte that is not printable ASCII.
pub fn c_escape(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        match b {
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            b'"' => out.push_str("\\\""),
            b'\'' => out.push_str("\\'"),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(b as char),
            _ => {
                let _ = write!(out, "\\{b:03o}");
            }
        }
    }
    out
}

/// `printf("%.{precision}g", value)` for a finite value.
fn format_g(value: f64, precision: usize) -> String {
    if value == 0.0 {
        return if value.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    let sci = format!("{:.*e}", precision - 1, value);
    let (mantissa, exponent) = sci.split_once('e').expect("{:e} always has an exponent");
    let exponent: i32 = exponent.parse().expect("{:e} exponent is an integer");
    let strip = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            s.to_owned()
        }
    };
    if exponent < -4 || exponent >= precision as i32 {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", strip(mantissa), exponent.abs())
    } else {
        let decimals = (precision as i32 - 1 - exponent).max(0) as usize;
        strip(&format!("{value:.decimals$}"))
    }
}

fn format_non_finite(value: f64) -> Option<&'static str> {
    if value.is_nan() {
        Some("nan")
    } else if value == f64::INFINITY {
        Some("inf")
    } else if value == f64::NEG_INFINITY {
        Some("-inf")
    } else {
        None
    }
}

/// Formats an f32 as protobuf's C++ text format does (`SimpleFtoa`): `1`,
/// `0.001`, `1e-05`, `-0`, `inf`, `nan`; always reads back to the same f32.
pub fn format_float(value: f32) -> String {
    if let Some(s) = format_non_finite(value.into()) {
        return s.to_owned();
    }
    let short = format_g(value.into(), 6);
    if short.parse::<f32>() == Ok(value) {
        short
    } else {
        format_g(value.into(), 9)
    }
}

/// Formats an f64 as protobuf's C++ text format does (`SimpleDtoa`).
pub fn format_double(value: f64) -> String {
    if let Some(s) = format_non_finite(value) {
        return s.to_owned();
    }
    let short = format_g(value, 15);
    if short.parse::<f64>() == Ok(value) {
        short
    } else {
        format_g(value, 17)
    }
}

/// Writes protobuf text, either over many indented lines (as `ops.pbtxt`) or
/// on one line (as `ShortDebugString`).
struct TextWriter {
    out: String,
    multiline: bool,
    depth: usize,
}

impl TextWriter {
    fn new(multiline: bool) -> Self {
        TextWriter {
            out: String::new(),
            multiline,
            depth: 0,
        }
    }

    fn start_line(&mut self) {
        if self.multiline {
            for _ in 0..self.depth {
                self.out.push_str("  ");
            }
        } else if !self.out.is_empty() && !self.out.ends_with(' ') {
            self.out.push(' ');
        }
    }

    fn end_line(&mut self) {
        if self.multiline {
            self.out.push('\n');
        }
    }

    fn field(&mut self, name: &str, value: impl std::fmt::Display) {
        self.start_line();
        let _ = write!(self.out, "{name}: {value}");
        self.end_line();
    }

    fn string(&mut self, name: &str, bytes: &[u8]) {
        self.field(name, format_args!("\"{}\"", c_escape(bytes)));
    }

    /// A proto3 string field: printed only when non-empty.
    fn opt_string(&mut self, name: &str, s: &str) {
        if !s.is_empty() {
            self.string(name, s.as_bytes());
        }
    }

    /// A proto3 bool field: printed only when true.
    fn opt_true(&mut self, name: &str, b: bool) {
        if b {
            self.field(name, "true");
        }
    }

    fn open(&mut self, name: &str) {
        self.start_line();
        self.out.push_str(name);
        self.out.push_str(" {");
        self.end_line();
        self.depth += 1;
    }

    fn close(&mut self) {
        self.depth -= 1;
        self.start_line();
        self.out.push('}');
        self.end_line();
    }

    fn message(&mut self, name: &str, body: impl FnOnce(&mut Self)) {
        self.open(name);
        body(self);
        self.close();
    }
}

fn write_shape(w: &mut TextWriter, shape: &ShapeValue) {
    for dim in &shape.dims {
        w.message("dim", |w| {
            if dim.size != 0 {
                w.field("size", dim.size);
            }
            w.opt_string("name", &dim.name);
        });
    }
    w.opt_true("unknown_rank", shape.unknown_rank);
}

fn write_tensor(w: &mut TextWriter, t: &TensorValue) {
    if let Some(dtype) = t.dtype {
        w.field("dtype", dtype.enum_name());
    }
    if let Some(shape) = &t.shape {
        w.message("tensor_shape", |w| write_shape(w, shape));
    }
    if t.version_number != 0 {
        w.field("version_number", t.version_number);
    }
    if !t.tensor_content.is_empty() {
        w.string("tensor_content", &t.tensor_content);
    }
    // Field numbers: float 5, double 6, int 7, string 8, scomplex 9, int64 10,
    // bool 11, dcomplex 12, half 13, uint32 16, uint64 17.
    t.float_val
        .iter()
        .for_each(|v| w.field("float_val", format_float(*v)));
    t.double_val
        .iter()
        .for_each(|v| w.field("double_val", format_double(*v)));
    t.int_val.iter().for_each(|v| w.field("int_val", v));
    t.string_val.iter().for_each(|v| w.string("string_val", v));
    t.scomplex_val
        .iter()
        .for_each(|v| w.field("scomplex_val", format_float(*v)));
    t.int64_val.iter().for_each(|v| w.field("int64_val", v));
    t.bool_val.iter().for_each(|v| w.field("bool_val", v));
    t.dcomplex_val
        .iter()
        .for_each(|v| w.field("dcomplex_val", format_double(*v)));
    t.half_val.iter().for_each(|v| w.field("half_val", v));
    t.uint32_val.iter().for_each(|v| w.field("uint32_val", v));
    t.uint64_val.iter().for_each(|v| w.field("uint64_val", v));
}

fn write_list(w: &mut TextWriter, list: &ListValue) {
    match list {
        ListValue::String(v) => v.iter().for_each(|s| w.string("s", s)),
        ListValue::Int(v) => v.iter().for_each(|i| w.field("i", i)),
        ListValue::Float(v) => v.iter().for_each(|f| w.field("f", format_float(*f))),
        ListValue::Bool(v) => v.iter().for_each(|b| w.field("b", b)),
        ListValue::Type(v) => v.iter().for_each(|t| w.field("type", t.enum_name())),
        ListValue::Shape(v) => v
            .iter()
            .for_each(|s| w.message("shape", |w| write_shape(w, s))),
        ListValue::Tensor(v) => v
            .iter()
            .for_each(|t| w.message("tensor", |w| write_tensor(w, t))),
        ListValue::Func(v) => v
            .iter()
            .for_each(|f| w.message("func", |w| w.opt_string("name", &f.name))),
    }
}

/// Writes the fields of an `AttrValue` (its oneof member).
fn write_attr_value(w: &mut TextWriter, value: &AttrValue) {
    match value {
        AttrValue::String(s) => w.string("s", s),
        AttrValue::Int(i) => w.field("i", i),
        AttrValue::Float(f) => w.field("f", format_float(*f)),
        AttrValue::Bool(b) => w.field("b", b),
        AttrValue::Type(t) => w.field("type", t.enum_name()),
        AttrValue::Shape(s) => w.message("shape", |w| write_shape(w, s)),
        AttrValue::Tensor(t) => w.message("tensor", |w| write_tensor(w, t)),
        AttrValue::Func(f) => w.message("func", |w| w.opt_string("name", &f.name)),
        AttrValue::List(l) => w.message("list", |w| write_list(w, l)),
    }
}

fn write_arg(w: &mut TextWriter, field: &str, arg: &ArgDef) {
    w.message(field, |w| {
        w.opt_string("name", &arg.name);
        w.opt_string("description", &arg.description);
        if let ArgType::Fixed(t) = arg.ty {
            w.field("type", t.enum_name());
        }
        if let ArgType::Attr(a) = &arg.ty {
            w.opt_string("type_attr", a);
        }
        if let Some(n) = &arg.number_attr {
            w.opt_string("number_attr", n);
        }
        if let ArgType::ListAttr(a) = &arg.ty {
            w.opt_string("type_list_attr", a);
        }
        w.opt_true("is_ref", arg.is_ref);
        if let Some(full_type) = &arg.full_type {
            w.message("experimental_full_type", |w| write_full_type(w, full_type));
        }
    });
}

/// Writes the fields of a `FullTypeDef`: a proto3 enum and a repeated
/// message, then the member of its oneof, printed whenever it is set.
fn write_full_type(w: &mut TextWriter, ty: &FullType) {
    if ty.type_id != FullTypeId::Unset {
        w.field("type_id", ty.type_id.enum_name());
    }
    for arg in &ty.args {
        w.message("args", |w| write_full_type(w, arg));
    }
    match &ty.attr {
        Some(FullTypeAttr::String(s)) => w.string("s", s.as_bytes()),
        Some(FullTypeAttr::Int(i)) => w.field("i", i),
        None => {}
    }
}

fn write_attr(w: &mut TextWriter, attr: &AttrDef) {
    w.message("attr", |w| {
        w.opt_string("name", &attr.name);
        w.opt_string("type", &attr.ty.to_string());
        if let Some(default) = &attr.default_value {
            w.message("default_value", |w| write_attr_value(w, default));
        }
        w.opt_string("description", &attr.description);
        if let Some(min) = attr.minimum {
            w.field("has_minimum", "true");
            if min != 0 {
                w.field("minimum", min);
            }
        }
        if let Some(allowed) = &attr.allowed_values {
            w.message("allowed_values", |w| {
                w.message("list", |w| write_list(w, allowed))
            });
        }
    });
}

fn write_op_def_fields(w: &mut TextWriter, op: &OpDef) {
    w.opt_string("name", &op.name);
    op.inputs.iter().for_each(|a| write_arg(w, "input_arg", a));
    op.outputs
        .iter()
        .for_each(|a| write_arg(w, "output_arg", a));
    op.attrs.iter().for_each(|a| write_attr(w, a));
    w.opt_string("summary", &op.summary);
    w.opt_string("description", &op.description);
    if let Some(dep) = &op.deprecation {
        w.message("deprecation", |w| {
            if dep.version != 0 {
                w.field("version", dep.version);
            }
            w.opt_string("explanation", &dep.explanation);
        });
    }
    w.opt_true("is_aggregate", op.is_aggregate);
    w.opt_true("is_stateful", op.is_stateful);
    w.opt_true("is_commutative", op.is_commutative);
    w.opt_true("allows_uninitialized_input", op.allows_uninitialized_input);
    w.opt_true(
        "is_distributed_communication",
        op.is_distributed_communication,
    );
}

/// An `OpList` holding `ops`, in TensorFlow's multi-line text format (as in
/// `ops.pbtxt`).
pub fn op_list_to_string<'a>(ops: impl IntoIterator<Item = &'a OpDef>) -> String {
    let mut w = TextWriter::new(true);
    for op in ops {
        w.message("op", |w| write_op_def_fields(w, op));
    }
    w.out
}

/// One `OpDef` in multi-line text format (its fields, without an enclosing `op { }`).
pub fn op_def_to_string(op: &OpDef) -> String {
    let mut w = TextWriter::new(true);
    write_op_def_fields(&mut w, op);
    w.out
}

/// One `OpDef` on one line, as protobuf's `ShortDebugString` prints it.
pub fn op_def_to_short_string(op: &OpDef) -> String {
    let mut w = TextWriter::new(false);
    write_op_def_fields(&mut w, op);
    w.out
}

/// An attr value written as the default of an attr spec (`'foo'`, `1`,
/// `DT_INT32`, `{ dim { size: 2 } }`, `[1, 2]`): the inverse of
/// [`crate::text::parse_attr_value`].
pub fn attr_value_text(value: &AttrValue) -> String {
    fn message(body: impl FnOnce(&mut TextWriter)) -> String {
        let mut w = TextWriter::new(false);
        body(&mut w);
        if w.out.is_empty() {
            "{ }".to_owned()
        } else {
            format!("{{ {} }}", w.out)
        }
    }
    fn quoted(s: &[u8]) -> String {
        format!("'{}'", c_escape(s))
    }
    fn items<T>(v: &[T], f: impl Fn(&T) -> String) -> String {
        format!("[{}]", v.iter().map(f).collect::<Vec<_>>().join(", "))
    }
    match value {
        AttrValue::String(s) => quoted(s),
        AttrValue::Int(i) => i.to_string(),
        AttrValue::Float(f) => format_float(*f),
        AttrValue::Bool(b) => b.to_string(),
        AttrValue::Type(t) => t.enum_name().to_owned(),
        AttrValue::Shape(s) => message(|w| write_shape(w, s)),
        AttrValue::Tensor(t) => message(|w| write_tensor(w, t)),
        AttrValue::Func(f) => message(|w| w.opt_string("name", &f.name)),
        AttrValue::List(list) => match list {
            ListValue::String(v) => items(v, |s| quoted(s)),
            ListValue::Int(v) => items(v, i64::to_string),
            ListValue::Float(v) => items(v, |f| format_float(*f)),
            ListValue::Bool(v) => items(v, bool::to_string),
            ListValue::Type(v) => items(v, |t| t.enum_name().to_owned()),
            ListValue::Shape(v) => items(v, |s| message(|w| write_shape(w, s))),
            ListValue::Tensor(v) => items(v, |t| message(|w| write_tensor(w, t))),
            ListValue::Func(v) => items(v, |f| message(|w| w.opt_string("name", &f.name))),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_like_protobuf_cpp() {
        let cases: &[(f32, &str)] = &[
            (1.0, "1"),
            (0.5, "0.5"),
            (1e-3, "0.001"),
            (1e-4, "0.0001"),
            (1e-5, "1e-05"),
            (0.1, "0.1"),
            (1e6, "1e+06"),
            (123456.0, "123456"),
            (1234567.0, "1234567"),
            (-0.0, "-0"),
            (f32::INFINITY, "inf"),
            (f32::NEG_INFINITY, "-inf"),
            (f32::NAN, "nan"),
            (3.4028235e38, "3.40282347e+38"),
            (16777217.0, "16777216"),
        ];
        for (value, text) in cases {
            assert_eq!(format_float(*value), *text, "{value:?}");
        }
        assert_eq!(format_double(0.1), "0.1");
        assert_eq!(format_double(1.0 / 3.0), "0.33333333333333331");
    }

    #[test]
    fn escapes_like_cescape() {
        assert_eq!(c_escape(b"a\"b'c\\\n\t\r"), "a\\\"b\\'c\\\\\\n\\t\\r");
        assert_eq!(c_escape(&[0, 0x7f, 0xff]), "\\000\\177\\377");
        assert_eq!(c_escape("é".as_bytes()), "\\303\\251");
    }
}
