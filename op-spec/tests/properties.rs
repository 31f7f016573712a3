//! Property tests of the spec parser.
//!
//! - Random valid ops, written as spec strings in varied but valid syntax
//!   (spacing, quoting, escapes, number bases, message brackets), with full
//!   types on some outputs, parse to the op that was generated; every attr
//!   and arg printed back with `to_spec()` (and every full type with its
//!   `Display`) parses to the same op again, with the same text format.
//! - Any list of valid ops, with docs, flags and deprecation, written in
//!   text format (`pbtxt::op_list_to_string`) reads back
//!   (`pbtxt::parse_op_list`) to the same ops.
//! - The compatibility checker (`compat`) finds every op compatible with
//!   itself, and names the rule when an attr is added without a default,
//!   loses an allowed type or gets a higher minimum.
//! - Arbitrary strings, and strings of spec-like tokens, never make the
//!   builder panic, and every error points inside its spec.

use op_spec::attr_value::{AttrKind, AttrType, DimValue, FuncValue, ListValue, ShapeValue};
use op_spec::dtype::ALL_TYPES;
use op_spec::{
    ArgDef, ArgType, AttrDef, AttrValue, DType, FullType, FullTypeAttr, FullTypeId, OpDef,
    OpDefBuilder, SpecError, SpecSource, TensorValue, TypeClass, pbtxt,
};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

// ---------------------------------------------------------------------------
// Writing values as spec text, independently of the crate's own printer.

/// Optional whitespace, chosen by `style`: none, a space, or a mix of blanks.
fn sp(style: u8) -> &'static str {
    match style % 4 {
        0 => "",
        1 => " ",
        2 => "  ",
        _ => " \t ",
    }
}

/// A quoted string literal for `bytes`, in one of several styles: raw UTF-8
/// or escapes, octal or hex escapes, single or double quotes, one literal or
/// two adjacent ones (which concatenate).
fn quote_bytes(bytes: &[u8], style: u8, may_split: bool) -> String {
    let q = if style & 1 == 0 { '\'' } else { '"' };
    let raw_utf8 = style & 2 != 0;
    let hex = style & 4 != 0;
    let split = may_split && style & 8 != 0 && !bytes.is_empty();
    let escape_byte = |out: &mut String, b: u8| match b {
        b'\\' => out.push_str("\\\\"),
        b'\n' => out.push_str("\\n"),
        b'\t' => out.push_str("\\t"),
        _ if b == q as u8 => {
            out.push('\\');
            out.push(q);
        }
        0x20..=0x7e => out.push(b as char),
        _ if hex => out.push_str(&format!("\\x{b:02x}")),
        _ => out.push_str(&format!("\\{b:03o}")),
    };
    let mut out = String::new();
    match std::str::from_utf8(bytes) {
        Ok(s) if raw_utf8 && !split => {
            out.push(q);
            for ch in s.chars() {
                if ch.is_ascii() {
                    escape_byte(&mut out, ch as u8);
                } else if ch.is_control() {
                    let mut buf = [0; 4];
                    for &b in ch.encode_utf8(&mut buf).as_bytes() {
                        escape_byte(&mut out, b);
                    }
                } else {
                    out.push(ch);
                }
            }
            out.push(q);
        }
        _ => {
            let mid = if split { bytes.len() / 2 } else { bytes.len() };
            out.push(q);
            for &b in &bytes[..mid] {
                escape_byte(&mut out, b);
            }
            out.push(q);
            if split {
                out.push_str(sp(style >> 4));
                out.push(q);
                for &b in &bytes[mid..] {
                    escape_byte(&mut out, b);
                }
                out.push(q);
            }
        }
    }
    out
}

fn int_text(v: i64, style: u8) -> String {
    let sign = if v < 0 { "-" } else { "" };
    let m = v.unsigned_abs();
    match style % 3 {
        0 => v.to_string(),
        1 => format!("{sign}0x{m:x}"),
        _ if m == 0 => "0".to_owned(),
        _ => format!("{sign}0{m:o}"),
    }
}

fn float_text(v: f32, style: u8) -> String {
    if v.is_nan() {
        return ["nan", "NaN", "-nan"][usize::from(style % 3)].to_owned();
    }
    if v.is_infinite() {
        let word = ["inf", "Infinity", "INF"][usize::from(style % 3)];
        return if v < 0.0 {
            format!("-{word}")
        } else {
            word.to_owned()
        };
    }
    let text = match style % 4 {
        0 => format!("{v}"),
        1 => format!("{v:e}"),
        2 => format!("{v:?}"),
        _ => pbtxt::format_float(v),
    };
    if style & 4 != 0 && text.contains(['.', 'e']) {
        text + "f"
    } else {
        text
    }
}

fn bool_text(v: bool, style: u8) -> &'static str {
    let options = if v {
        ["true", "True", "t", "1"]
    } else {
        ["false", "False", "f", "0"]
    };
    options[usize::from(style % 4)]
}

fn dtype_value_text(t: DType, style: u8) -> String {
    if style.is_multiple_of(4) {
        t.enum_value().to_string()
    } else {
        t.enum_name().to_owned()
    }
}

/// A message in braces or angle brackets.
fn message_text(fields: &[String], style: u8) -> String {
    let (open, close) = if style & 1 == 0 {
        ("{", "}")
    } else {
        ("<", ">")
    };
    let s = sp(style >> 1);
    if fields.is_empty() {
        return format!("{open}{s}{close}");
    }
    format!("{open} {} {close}", fields.join(" "))
}

fn shape_text(shape: &ShapeValue, style: u8) -> String {
    let dims: Vec<String> = shape
        .dims
        .iter()
        .map(|d| {
            let mut f = Vec::new();
            if d.size != 0 || style & 8 != 0 {
                f.push(format!("size: {}", int_text(d.size, style >> 4)));
            }
            if !d.name.is_empty() {
                f.push(format!(
                    "name: {}",
                    quote_bytes(d.name.as_bytes(), style, false)
                ));
            }
            message_text(&f, style >> 2)
        })
        .collect();
    let mut fields = Vec::new();
    if style & 16 != 0 && !dims.is_empty() {
        fields.push(format!("dim: [{}]", dims.join(", ")));
    } else {
        let colon = if style & 32 != 0 { ":" } else { "" };
        fields.extend(dims.into_iter().map(|d| format!("dim{colon} {d}")));
    }
    if shape.unknown_rank {
        fields.push(format!("unknown_rank: {}", bool_text(true, style)));
    }
    message_text(&fields, style)
}

fn tensor_text(t: &TensorValue, style: u8) -> String {
    let mut f = Vec::new();
    if let Some(dt) = t.dtype {
        f.push(format!("dtype: {}", dtype_value_text(dt, style)));
    }
    if let Some(shape) = &t.shape {
        f.push(format!("tensor_shape {}", shape_text(shape, style)));
    }
    if t.version_number != 0 {
        f.push(format!("version_number: {}", t.version_number));
    }
    if !t.tensor_content.is_empty() {
        f.push(format!(
            "tensor_content: {}",
            quote_bytes(&t.tensor_content, style, true)
        ));
    }
    let mut repeated = |name: &str, items: Vec<String>| {
        if items.is_empty() {
        } else if style & 2 != 0 {
            f.push(format!("{name}: [{}]", items.join(", ")));
        } else {
            f.extend(items.into_iter().map(|i| format!("{name}: {i}")));
        }
    };
    let ints = |v: &[i32]| v.iter().map(|&i| int_text(i.into(), style)).collect();
    repeated("half_val", ints(&t.half_val));
    repeated(
        "float_val",
        t.float_val.iter().map(|&x| float_text(x, style)).collect(),
    );
    repeated(
        "double_val",
        t.double_val
            .iter()
            .map(|&x| pbtxt::format_double(x))
            .collect(),
    );
    repeated("int_val", ints(&t.int_val));
    repeated(
        "string_val",
        t.string_val
            .iter()
            .map(|s| quote_bytes(s, style, true))
            .collect(),
    );
    repeated(
        "int64_val",
        t.int64_val.iter().map(|&i| int_text(i, style)).collect(),
    );
    repeated(
        "bool_val",
        t.bool_val
            .iter()
            .map(|&b| bool_text(b, style).to_owned())
            .collect(),
    );
    repeated(
        "uint64_val",
        t.uint64_val.iter().map(|&u| u.to_string()).collect(),
    );
    message_text(&f, style)
}

fn func_text(func: &FuncValue, style: u8) -> String {
    if func.name.is_empty() && style & 1 == 0 {
        return message_text(&[], style);
    }
    message_text(
        &[format!(
            "name: {}",
            quote_bytes(func.name.as_bytes(), style >> 1, true)
        )],
        style >> 1,
    )
}

/// `value` as the default of an attr spec, written in style `style`.
fn value_text(value: &AttrValue, style: u8) -> String {
    let s = sp(style >> 5);
    let list = |items: Vec<String>| format!("[{s}{}{s}]", items.join(&format!("{s},{s}")));
    match value {
        AttrValue::String(b) => quote_bytes(b, style, true),
        AttrValue::Int(i) => int_text(*i, style),
        AttrValue::Float(x) => float_text(*x, style),
        AttrValue::Bool(b) => bool_text(*b, style).to_owned(),
        AttrValue::Type(t) => dtype_value_text(*t, style),
        AttrValue::Shape(shape) => shape_text(shape, style),
        AttrValue::Tensor(t) => tensor_text(t, style),
        AttrValue::Func(f) => func_text(f, style),
        AttrValue::List(l) => match l {
            ListValue::String(v) => list(v.iter().map(|b| quote_bytes(b, style, true)).collect()),
            ListValue::Int(v) => list(v.iter().map(|&i| int_text(i, style)).collect()),
            ListValue::Float(v) => list(v.iter().map(|&x| float_text(x, style)).collect()),
            ListValue::Bool(v) => list(v.iter().map(|&b| bool_text(b, style).into()).collect()),
            ListValue::Type(v) => list(v.iter().map(|&t| dtype_value_text(t, style)).collect()),
            ListValue::Shape(v) => list(v.iter().map(|x| shape_text(x, style)).collect()),
            ListValue::Tensor(v) => list(v.iter().map(|x| tensor_text(x, style)).collect()),
            ListValue::Func(v) => list(v.iter().map(|x| func_text(x, style)).collect()),
        },
    }
}

// ---------------------------------------------------------------------------
// Random values.

fn bytes_value() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..8),
        r#"[a-z'"\\ #é中😀\t\n\x00\x7f]{0,8}"#.prop_map(String::into_bytes),
        Just(b"\\".to_vec()),
        Just(b"'\"".to_vec()),
        Just(vec![0xff, 0xfe, b'7']),
    ]
}

fn name_value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        "[a-zA-Z_][a-zA-Z0-9_]{0,6}",
        "[é中 x'\"]{1,4}"
    ]
}

fn int_value() -> impl Strategy<Value = i64> {
    prop_oneof![
        -5i64..5,
        any::<i64>(),
        Just(i64::MIN),
        Just(i64::MAX),
        Just(i64::from(i32::MAX) + 1),
    ]
}

fn float_value() -> impl Strategy<Value = f32> {
    prop_oneof![
        any::<f32>(),
        (-1000i32..1000).prop_map(|i| i as f32 / 8.0),
        Just(-0.0f32),
        Just(f32::INFINITY),
        Just(f32::NEG_INFINITY),
        Just(f32::NAN),
        Just(f32::MIN_POSITIVE),
        Just(f32::from_bits(1)),
        Just(f32::MAX),
        Just(0.1f32),
    ]
}

fn dtype_value() -> impl Strategy<Value = DType> {
    prop::sample::select(ALL_TYPES)
}

fn shape_value() -> impl Strategy<Value = ShapeValue> {
    let dim = (
        prop_oneof![Just(-1i64), 0i64..100, Just(i64::MAX)],
        prop_oneof![Just(String::new()), "[a-z]{1,3}", Just("é".to_owned())],
    )
        .prop_map(|(size, name)| DimValue { size, name });
    prop_oneof![
        Just(ShapeValue::unknown_rank()),
        prop::collection::vec(dim, 0..4).prop_map(|dims| ShapeValue {
            dims,
            unknown_rank: false
        }),
    ]
}

fn tensor_value() -> impl Strategy<Value = TensorValue> {
    (
        dtype_value(),
        prop::option::of(shape_value()),
        0i32..3,
        prop::collection::vec(any::<u8>(), 0..4),
        prop::collection::vec(any::<i32>(), 0..3),
        prop::collection::vec(float_value(), 0..3),
        prop::collection::vec(any::<f64>(), 0..2),
        prop::collection::vec(bytes_value(), 0..2),
        prop::collection::vec(int_value(), 0..3),
        prop::collection::vec(any::<bool>(), 0..3),
        prop::collection::vec(any::<u64>(), 0..2),
        prop::collection::vec(0i32..65536, 0..2),
    )
        .prop_map(
            |(
                dt,
                shape,
                version,
                content,
                ints,
                floats,
                doubles,
                strings,
                i64s,
                bools,
                u64s,
                halves,
            )| {
                TensorValue {
                    dtype: Some(dt),
                    shape,
                    version_number: version,
                    tensor_content: content,
                    half_val: halves,
                    float_val: floats,
                    double_val: doubles.into_iter().filter(|d| !d.is_nan()).collect(),
                    int_val: ints,
                    string_val: strings,
                    int64_val: i64s,
                    bool_val: bools,
                    uint64_val: u64s,
                    ..TensorValue::default()
                }
            },
        )
}

fn func_value() -> impl Strategy<Value = FuncValue> {
    name_value().prop_map(|name| FuncValue { name })
}

/// A scalar value of `kind`.
fn scalar_value(kind: AttrKind) -> BoxedStrategy<AttrValue> {
    match kind {
        AttrKind::String => bytes_value().prop_map(AttrValue::String).boxed(),
        AttrKind::Int => int_value().prop_map(AttrValue::Int).boxed(),
        AttrKind::Float => float_value().prop_map(AttrValue::Float).boxed(),
        AttrKind::Bool => any::<bool>().prop_map(AttrValue::Bool).boxed(),
        AttrKind::Type => dtype_value().prop_map(AttrValue::Type).boxed(),
        AttrKind::Shape => shape_value().prop_map(AttrValue::Shape).boxed(),
        AttrKind::Tensor => tensor_value()
            .prop_map(|t| AttrValue::Tensor(Box::new(t)))
            .boxed(),
        AttrKind::Func => func_value().prop_map(AttrValue::Func).boxed(),
    }
}

/// A list of `kind` with `len` elements.
fn list_value(kind: AttrKind, len: std::ops::Range<usize>) -> BoxedStrategy<ListValue> {
    use prop::collection::vec;
    match kind {
        AttrKind::String => vec(bytes_value(), len).prop_map(ListValue::String).boxed(),
        AttrKind::Int => vec(int_value(), len).prop_map(ListValue::Int).boxed(),
        AttrKind::Float => vec(float_value(), len).prop_map(ListValue::Float).boxed(),
        AttrKind::Bool => vec(any::<bool>(), len).prop_map(ListValue::Bool).boxed(),
        AttrKind::Type => vec(dtype_value(), len).prop_map(ListValue::Type).boxed(),
        AttrKind::Shape => vec(shape_value(), len).prop_map(ListValue::Shape).boxed(),
        AttrKind::Tensor => vec(tensor_value(), len.start..len.start + 2)
            .prop_map(ListValue::Tensor)
            .boxed(),
        AttrKind::Func => vec(func_value(), len).prop_map(ListValue::Func).boxed(),
    }
}

// ---------------------------------------------------------------------------
// Random attrs.

/// A generated attr: its definition as it should parse (before implicit
/// minimums) and the text of its type, to be completed into a spec.
#[derive(Clone, Debug)]
struct GenAttr {
    def: AttrDef,
    /// The type as written: `int`, `list({float, numbertype})`, ...
    type_text: String,
}

/// One entry of a type set as written, and the types it stands for.
fn type_set_item() -> impl Strategy<Value = (String, Vec<DType>)> {
    prop_oneof![
        4 => dtype_value().prop_map(|t| (t.spec_name().to_owned(), vec![t])),
        1 => prop::sample::select(&["float32", "float64", "float16"][..]).prop_map(|n| {
            (n.to_owned(), vec![DType::from_spec_name(n).unwrap()])
        }),
        1 => prop::sample::select(
            &["numbertype", "numerictype", "realnumbertype", "realnumerictype", "quantizedtype"][..]
        )
        .prop_map(|n| (n.to_owned(), TypeClass::from_spec_name(n).unwrap().types().to_vec())),
    ]
}

fn set_text(items: &[String], style: u8) -> String {
    let s = sp(style);
    let trailing = if style & 4 != 0 {
        format!("{s},")
    } else {
        String::new()
    };
    format!(
        "{{{s}{}{trailing}{s}}}",
        items.join(&format!("{s},{}", sp(style >> 3)))
    )
}

/// The type part of an attr: a kind, a type class, or a set; with the
/// allowed values it implies.
fn attr_kind_and_constraint() -> impl Strategy<Value = (AttrKind, String, Option<ListValue>)> {
    prop_oneof![
        6 => prop::sample::select(AttrKind::ALL.to_vec())
            .prop_map(|k| (k, k.name().to_owned(), None)),
        // More of the kinds that args refer to.
        3 => prop::sample::select(vec![AttrKind::Int, AttrKind::Type])
            .prop_map(|k| (k, k.name().to_owned(), None)),
        1 => prop::sample::select(
            &["numbertype", "numerictype", "realnumbertype", "realnumerictype", "quantizedtype"][..]
        )
        .prop_map(|n| {
            let types = TypeClass::from_spec_name(n).unwrap().types().to_vec();
            (AttrKind::Type, n.to_owned(), Some(ListValue::Type(types)))
        }),
        2 => (prop::collection::vec(type_set_item(), 1..5), any::<u8>()).prop_map(|(items, style)| {
            let text = set_text(&items.iter().map(|i| i.0.clone()).collect::<Vec<_>>(), style);
            let types = items.into_iter().flat_map(|i| i.1).collect();
            (AttrKind::Type, text, Some(ListValue::Type(types)))
        }),
        2 => (prop::collection::vec(bytes_value(), 1..4), any::<u8>()).prop_map(|(strings, style)| {
            let items: Vec<String> = strings.iter().map(|s| quote_bytes(s, style, false)).collect();
            (AttrKind::String, set_text(&items, style), Some(ListValue::String(strings)))
        }),
    ]
}

/// A default value for `kind` (a list when `is_list`) that satisfies the
/// allowed values and the minimum.
fn default_for(
    kind: AttrKind,
    is_list: bool,
    allowed: Option<ListValue>,
    minimum: Option<i64>,
) -> BoxedStrategy<AttrValue> {
    let min_len = minimum.unwrap_or(0).clamp(0, 4) as usize;
    match (allowed, is_list) {
        (Some(ListValue::Type(ok)), false) => {
            prop::sample::select(ok).prop_map(AttrValue::Type).boxed()
        }
        (Some(ListValue::Type(ok)), true) => {
            prop::collection::vec(prop::sample::select(ok), min_len..min_len + 3)
                .prop_map(|v| AttrValue::List(ListValue::Type(v)))
                .boxed()
        }
        (Some(ListValue::String(ok)), false) => {
            prop::sample::select(ok).prop_map(AttrValue::String).boxed()
        }
        (Some(ListValue::String(ok)), true) => {
            prop::collection::vec(prop::sample::select(ok), min_len..min_len + 3)
                .prop_map(|v| AttrValue::List(ListValue::String(v)))
                .boxed()
        }
        (_, true) => list_value(kind, min_len..min_len + 3)
            .prop_map(AttrValue::List)
            .boxed(),
        (_, false) if kind == AttrKind::Int => {
            let min = minimum.unwrap_or(i64::MIN);
            int_value()
                .prop_map(move |i| AttrValue::Int(i.max(min)))
                .boxed()
        }
        (_, false) => scalar_value(kind),
    }
}

fn gen_attr() -> impl Strategy<Value = GenAttr> {
    (
        attr_kind_and_constraint(),
        any::<bool>(),
        any::<u8>(),
        prop_oneof![
            Just(None),
            (-3i64..4).prop_map(Some),
            int_value().prop_map(Some)
        ],
        any::<bool>(),
    )
        .prop_flat_map(
            |((kind, kind_text, allowed), is_list, style, min, has_default)| {
                let minimum = match (is_list, kind) {
                    (true, _) => min.map(|m| m.clamp(0, 3)),
                    (false, AttrKind::Int) => min,
                    _ => None,
                };
                let type_text = if is_list {
                    let s = sp(style);
                    format!("list{}({s}{kind_text}{s})", sp(style >> 2))
                } else {
                    kind_text
                };
                let default = if has_default {
                    default_for(kind, is_list, allowed.clone(), minimum)
                        .prop_map(Some)
                        .boxed()
                } else {
                    Just(None).boxed()
                };
                default.prop_map(move |default_value| GenAttr {
                    def: AttrDef {
                        name: String::new(),
                        ty: AttrType { kind, is_list },
                        default_value,
                        description: String::new(),
                        minimum,
                        allowed_values: allowed.clone(),
                    },
                    type_text: type_text.clone(),
                })
            },
        )
}

/// The spec of a generated attr named `name`.
fn attr_spec(a: &GenAttr, name: &str, style: u8) -> String {
    let s = sp(style);
    let mut spec = format!(
        "{name}{s}:{}{}",
        sp(style >> 2).replace('\t', ""),
        a.type_text
    );
    if let Some(min) = a.def.minimum {
        spec.push_str(&format!("{s}>={}{min}", sp(style >> 4)));
    }
    if let Some(v) = &a.def.default_value {
        spec.push_str(&format!(
            "{s}={}{}",
            sp(style >> 6),
            value_text(v, style.rotate_left(3))
        ));
    }
    spec
}

// ---------------------------------------------------------------------------
// Random ops.

/// How an arg gets its type; resolved against the generated attrs.
#[derive(Clone, Debug)]
struct ArgChoice {
    variant: u8,
    pick: usize,
    number_pick: usize,
    fixed: &'static str,
    is_ref: bool,
    style: u8,
}

fn arg_choice() -> impl Strategy<Value = ArgChoice> {
    let fixed_names: Vec<&'static str> = ALL_TYPES
        .iter()
        .map(|t| t.spec_name())
        .chain(["float32", "float64", "float16"])
        .collect();
    (
        0u8..4,
        any::<usize>(),
        any::<usize>(),
        prop::sample::select(fixed_names),
        prop::bool::weighted(0.2),
        any::<u8>(),
    )
        .prop_map(
            |(variant, pick, number_pick, fixed, is_ref, style)| ArgChoice {
                variant,
                pick,
                number_pick,
                fixed,
                is_ref,
                style,
            },
        )
}

#[derive(Clone, Debug)]
struct GenOp {
    name: String,
    attrs: Vec<(String, GenAttr, u8)>,
    inputs: Vec<(String, ArgChoice)>,
    outputs: Vec<(String, ArgChoice)>,
    /// Full types, each on the output its pick chooses (the first one for
    /// an output that two pick).
    full_types: Vec<(usize, GenFullType)>,
    stateful: bool,
}

fn op_name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[A-Z][A-Za-z0-9_]{0,8}",
        "[A-Z][a-z]{0,4}>[A-Z][A-Za-z0-9_]{0,6}",
        "_[A-Za-z0-9_]{0,6}",
    ]
}

fn gen_op() -> impl Strategy<Value = GenOp> {
    (
        op_name(),
        prop::collection::vec(("[A-Za-z][A-Za-z0-9_]{0,3}", gen_attr(), any::<u8>()), 0..7),
        prop::collection::vec(("[a-z][a-z0-9_]{0,3}", arg_choice()), 0..4),
        prop::collection::vec(("[a-z][a-z0-9_]{0,3}", arg_choice()), 0..4),
        prop::collection::vec((any::<usize>(), gen_full_type()), 0..3),
        any::<bool>(),
    )
        .prop_map(
            |(name, attrs, inputs, outputs, full_types, stateful)| GenOp {
                name,
                // Suffixes keep names unique and away from dtype names.
                attrs: attrs
                    .into_iter()
                    .enumerate()
                    .map(|(i, (n, a, s))| (format!("{n}_a{i}"), a, s))
                    .collect(),
                inputs: inputs
                    .into_iter()
                    .enumerate()
                    .map(|(i, (n, c))| (format!("{n}_i{i}"), c))
                    .collect(),
                outputs: outputs
                    .into_iter()
                    .enumerate()
                    .map(|(i, (n, c))| (format!("{n}_o{i}"), c))
                    .collect(),
                full_types,
                stateful,
            },
        )
}

/// A full type before it meets an op: its id, args and attr as picked;
/// [`resolve_full_type`] makes it valid on the op's attrs.
#[derive(Clone, Debug)]
struct GenFullType {
    id: FullTypeId,
    args: Vec<GenFullType>,
    attr: Option<FullTypeAttr>,
    /// Which attr a `TFT_VAR` names.
    pick: usize,
    style: u8,
}

fn gen_full_type() -> impl Strategy<Value = GenFullType> {
    let leaf = (
        prop::sample::select(FullTypeId::ALL),
        prop::option::weighted(
            0.3,
            prop_oneof![
                any::<i64>().prop_map(FullTypeAttr::Int),
                "[a-zA-Z_'\"\\\\é\n]{0,6}".prop_map(FullTypeAttr::String),
            ],
        ),
        any::<usize>(),
        any::<u8>(),
    )
        .prop_map(|(id, attr, pick, style)| GenFullType {
            id,
            args: Vec::new(),
            attr,
            pick,
            style,
        });
    leaf.prop_recursive(4, 16, 3, |inner| {
        (
            prop::sample::select(FullTypeId::ALL),
            prop::collection::vec(inner, 0..4),
            any::<usize>(),
            any::<u8>(),
        )
            .prop_map(|(id, args, pick, style)| GenFullType {
                id,
                args,
                attr: None,
                pick,
                style,
            })
    })
}

/// The full type `g` becomes on an op with `attrs`, and its notation in
/// varied but valid syntax: a `TFT_VAR` names a type attr and takes no
/// args (a `TFT_ANY` where the op has no type attr), a `TFT_FOR_EACH`
/// has three args ending in one.
fn resolve_full_type(g: &GenFullType, attrs: &[AttrDef]) -> (FullType, String) {
    let type_attrs: Vec<&str> = attrs
        .iter()
        .filter(|a| a.ty.kind == AttrKind::Type)
        .map(|a| a.name.as_str())
        .collect();
    let var = |pick: usize| {
        type_attrs
            .get(pick % type_attrs.len().max(1))
            .map(|n| FullType::var(*n))
    };
    let mut ty = FullType {
        type_id: g.id,
        args: g
            .args
            .iter()
            .map(|a| resolve_full_type(a, attrs).0)
            .collect(),
        attr: g.attr.clone(),
    };
    match g.id {
        FullTypeId::Var => match var(g.pick) {
            Some(v) => ty = v,
            None => ty.type_id = FullTypeId::Any,
        },
        FullTypeId::ForEach => match var(g.pick) {
            Some(v) => {
                ty.args.resize(2, FullType::new(FullTypeId::Product));
                ty.args.push(v);
            }
            None => ty.type_id = FullTypeId::Product,
        },
        _ => {}
    }
    let text = full_type_text(&ty, g.style);
    (ty, text)
}

/// The notation of `ty`, written independently of its `Display`: spaces
/// around the parts, either quote, an empty `[]` for no args, a comma
/// after the last arg.
fn full_type_text(ty: &FullType, style: u8) -> String {
    let s = sp(style);
    let mut out = ty.type_id.enum_name().to_owned();
    if !ty.args.is_empty() || style & 0x10 != 0 {
        out.push_str(&format!("{s}[{s}"));
        let args: Vec<String> = ty
            .args
            .iter()
            .map(|a| full_type_text(a, style.rotate_left(1)))
            .collect();
        out.push_str(&args.join(&format!("{s},{}", sp(style >> 2))));
        if style & 0x20 != 0 && !ty.args.is_empty() {
            out.push(',');
        }
        out.push_str(&format!("{s}]"));
    }
    match &ty.attr {
        Some(FullTypeAttr::String(v)) => out.push_str(&format!(
            "{s}{{{s}{}{s}}}",
            quote_bytes(v.as_bytes(), style >> 3, false)
        )),
        Some(FullTypeAttr::Int(i)) => out.push_str(&format!("{s}{{{s}{i}{s}}}")),
        None => {}
    }
    out
}

/// Whether `a` may be the length of an `N * T` arg: its minimum (explicit,
/// or the implicit 1) must be >= 0 and its default must satisfy it.
fn usable_as_length(a: &AttrDef) -> bool {
    if a.ty != AttrType::scalar(AttrKind::Int) {
        return false;
    }
    let min = a.minimum.unwrap_or(1);
    min >= 0 && !matches!(a.default_value, Some(AttrValue::Int(d)) if d < min)
}

/// Whether `a` may be the type of a list arg (implicit minimum 1).
fn usable_as_type_list(a: &AttrDef) -> bool {
    a.ty == AttrType::list(AttrKind::Type)
        && (a.minimum.is_some()
            || !matches!(&a.default_value, Some(AttrValue::List(l)) if l.is_empty()))
}

/// The arg for `choice` and its spec.
fn resolve_arg(name: &str, c: &ArgChoice, attrs: &[AttrDef]) -> (ArgDef, String) {
    let pick = |pred: &dyn Fn(&AttrDef) -> bool, n: usize| {
        let found: Vec<&AttrDef> = attrs.iter().filter(|a| pred(a)).collect();
        (!found.is_empty()).then(|| found[n % found.len()].name.clone())
    };
    let fixed = || {
        (
            ArgType::Fixed(DType::from_spec_name(c.fixed).unwrap()),
            c.fixed.to_owned(),
        )
    };
    let type_attr = pick(&|a| a.ty == AttrType::scalar(AttrKind::Type), c.pick);
    let (ty, mut text, number) = match c.variant {
        1 => match type_attr {
            Some(t) => (ArgType::Attr(t.clone()), t, None),
            None => (fixed().0, fixed().1, None),
        },
        2 => match pick(&usable_as_type_list, c.pick) {
            Some(t) => (ArgType::ListAttr(t.clone()), t, None),
            None => (fixed().0, fixed().1, None),
        },
        3 => {
            let (ty, t) = match type_attr {
                Some(t) if c.style & 1 == 0 => (ArgType::Attr(t.clone()), t),
                _ => fixed(),
            };
            match pick(&usable_as_length, c.number_pick) {
                Some(n) => {
                    let s = sp(c.style >> 1);
                    let text = format!("{n}{s}*{}{t}", sp(c.style >> 3));
                    (ty, text, Some(n))
                }
                None => (ty, t, None),
            }
        }
        _ => (fixed().0, fixed().1, None),
    };
    if c.is_ref {
        let s = sp(c.style >> 5);
        text = format!("Ref{}({s}{text}{s})", sp(c.style >> 2));
    }
    let def = ArgDef {
        name: name.to_owned(),
        description: String::new(),
        ty,
        number_attr: number,
        is_ref: c.is_ref,
        full_type: None,
    };
    let s = sp(c.style >> 4);
    (def, format!("{name}{s}:{}{text}{s}", sp(c.style >> 6)))
}

/// The specs of a generated op and the op they should build.
fn specs_and_expected(g: &GenOp) -> (OpDefBuilder, OpDef) {
    let mut b = OpDefBuilder::new(&g.name);
    let mut attrs: Vec<AttrDef> = Vec::new();
    for (name, a, style) in &g.attrs {
        b = b.attr(attr_spec(a, name, *style));
        let mut def = a.def.clone();
        def.name = name.clone();
        attrs.push(def);
    }
    let mut inputs = Vec::new();
    for (name, c) in &g.inputs {
        let (def, spec) = resolve_arg(name, c, &attrs);
        b = b.input(spec);
        inputs.push(def);
    }
    let mut outputs: Vec<ArgDef> = Vec::new();
    for (name, c) in &g.outputs {
        let (def, spec) = resolve_arg(name, c, &attrs);
        b = b.output(spec);
        outputs.push(def);
    }
    if !outputs.is_empty() {
        for (pick, gen_type) in &g.full_types {
            let count = outputs.len();
            let output = &mut outputs[pick % count];
            if output.full_type.is_some() {
                continue;
            }
            let (ty, text) = resolve_full_type(gen_type, &attrs);
            let s = sp(gen_type.style >> 4);
            b = b.full_type(format!(
                "{}{s}:{}{text}",
                output.name,
                sp(gen_type.style >> 6)
            ));
            output.full_type = Some(ty);
        }
    }
    // TensorFlow's implicit minimums.
    for arg in inputs.iter().chain(&outputs) {
        for a in attrs.iter_mut() {
            let is_length = arg.number_attr.as_deref() == Some(&a.name);
            let is_types = arg.type_list_attr() == Some(&a.name);
            if (is_length || is_types) && a.minimum.is_none() {
                a.minimum = Some(1);
            }
        }
    }
    if g.stateful {
        b = b.set_is_stateful();
    }
    let is_stateful = g.stateful
        || inputs
            .iter()
            .chain(&outputs)
            .any(|a| a.ty == ArgType::Fixed(DType::Resource));
    let op = OpDef {
        name: g.name.clone(),
        inputs,
        outputs,
        attrs,
        is_stateful,
        ..OpDef::default()
    };
    (b, op)
}

// ---------------------------------------------------------------------------
// Comparing ops with floats in them: NaN != NaN, and -0.0 == 0.0.

/// Every float in the op's attr values, as bits (all NaNs alike: the text
/// format prints every NaN as `nan`).
fn float_bits(op: &OpDef) -> Vec<u64> {
    fn f32_bits(x: f32) -> u64 {
        if x.is_nan() {
            u64::MAX
        } else {
            x.to_bits().into()
        }
    }
    fn f64_bits(x: f64) -> u64 {
        if x.is_nan() {
            u64::MAX - 1
        } else {
            x.to_bits()
        }
    }
    fn tensor(t: &TensorValue, out: &mut Vec<u64>) {
        out.extend(t.float_val.iter().map(|&x| f32_bits(x)));
        out.extend(t.scomplex_val.iter().map(|&x| f32_bits(x)));
        out.extend(t.double_val.iter().map(|&x| f64_bits(x)));
        out.extend(t.dcomplex_val.iter().map(|&x| f64_bits(x)));
    }
    let mut out = Vec::new();
    for a in &op.attrs {
        match &a.default_value {
            Some(AttrValue::Float(x)) => out.push(f32_bits(*x)),
            Some(AttrValue::List(ListValue::Float(v))) => {
                out.extend(v.iter().map(|&x| f32_bits(x)))
            }
            Some(AttrValue::Tensor(t)) => tensor(t, &mut out),
            Some(AttrValue::List(ListValue::Tensor(v))) => {
                v.iter().for_each(|t| tensor(t, &mut out))
            }
            _ => {}
        }
        out.push(u64::from(u32::MAX) + 7); // a separator between attrs
    }
    out
}

/// Asserts that two ops are the same, floats compared bit for bit (NaNs alike).
fn assert_same_op(got: &OpDef, want: &OpDef, context: &str) -> Result<(), TestCaseError> {
    prop_assert_eq!(
        float_bits(got),
        float_bits(want),
        "floats differ: {}",
        context
    );
    // Debug prints -0.0 and 0.0 apart and every NaN as NaN, so with the
    // bits above it decides equality.
    prop_assert_eq!(format!("{got:#?}"), format!("{want:#?}"), "{}", context);
    Ok(())
}

fn rebuild_from_specs(op: &OpDef, stateful: bool) -> OpDefBuilder {
    let mut b = OpDefBuilder::new(&op.name);
    for a in &op.attrs {
        b = b.attr(a.to_spec());
    }
    for i in &op.inputs {
        b = b.input(i.to_spec());
    }
    for o in &op.outputs {
        b = b.output(o.to_spec());
    }
    for o in &op.outputs {
        if let Some(ty) = &o.full_type {
            b = b.full_type(format!("{}: {ty}", o.name));
        }
    }
    if stateful {
        b = b.set_is_stateful();
    }
    b
}

fn specs_of(b: &OpDefBuilder) -> String {
    format!("{b:#?}")
}

/// `cases` cases, without writing regression files into the source tree.
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config(400))]

    /// Valid ops parse to what was written, and print back to specs that
    /// parse to the same op with the same text format.
    #[test]
    fn valid_ops_parse_and_round_trip(g in gen_op()) {
        let (builder, want) = specs_and_expected(&g);
        let op = match builder.build() {
            Ok(op) => op,
            Err(e) => return Err(TestCaseError::fail(format!("{}\nshould build:\n{e}", specs_of(&builder)))),
        };
        assert_same_op(&op, &want, &specs_of(&builder))?;

        let again = rebuild_from_specs(&op, g.stateful);
        let rebuilt = match again.build() {
            Ok(op) => op,
            Err(e) => return Err(TestCaseError::fail(format!("{}\nprinted back, should build:\n{e}", specs_of(&again)))),
        };
        assert_same_op(&rebuilt, &op, &specs_of(&again))?;
        // Printing is a fixed point: the specs of the rebuilt op are the same text.
        for (a, b) in op.attrs.iter().zip(&rebuilt.attrs) {
            prop_assert_eq!(a.to_spec(), b.to_spec());
        }

        let text = pbtxt::op_list_to_string([&op]);
        prop_assert_eq!(&text, &pbtxt::op_list_to_string([&op]), "printing is deterministic");
        prop_assert_eq!(&text, &pbtxt::op_list_to_string([&rebuilt]));
        prop_assert_eq!(pbtxt::op_def_to_short_string(&op), pbtxt::op_def_to_short_string(&rebuilt));
        prop_assert_eq!(pbtxt::op_def_to_string(&op), pbtxt::op_def_to_string(&rebuilt));
    }
}

// ---------------------------------------------------------------------------
// The text format read back: `pbtxt::parse_op_list` inverts the writer.

/// What the builder does not set from specs: docs, flags, deprecation.
#[derive(Clone, Debug)]
struct Extras {
    summary: String,
    description: String,
    arg_docs: Vec<String>,
    attr_docs: Vec<String>,
    flags: [bool; 4],
    deprecation: Option<(i32, String)>,
}

fn doc_text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        "[a-z .]{1,12}",
        any::<String>(),
        r#"[a-z'"\\\n\té中😀\x00\x7f]{1,8}"#,
    ]
}

fn extras() -> impl Strategy<Value = Extras> {
    (
        doc_text(),
        doc_text(),
        prop::collection::vec(doc_text(), 8),
        prop::collection::vec(doc_text(), 8),
        any::<[bool; 4]>(),
        prop::option::of((any::<i32>(), doc_text())),
    )
        .prop_map(
            |(summary, description, arg_docs, attr_docs, flags, deprecation)| Extras {
                summary,
                description,
                arg_docs,
                attr_docs,
                flags,
                deprecation,
            },
        )
}

/// The op of `g` built, with `e`'s docs, flags and deprecation.
fn op_with_extras(g: &GenOp, e: &Extras) -> Result<OpDef, TestCaseError> {
    let (builder, _) = specs_and_expected(g);
    let mut op = builder.build().map_err(|err| {
        TestCaseError::fail(format!("{}\nshould build:\n{err}", specs_of(&builder)))
    })?;
    op.summary = e.summary.clone();
    op.description = e.description.clone();
    for (arg, doc) in op.inputs.iter_mut().chain(&mut op.outputs).zip(&e.arg_docs) {
        arg.description = doc.clone();
    }
    for (attr, doc) in op.attrs.iter_mut().zip(&e.attr_docs) {
        attr.description = doc.clone();
    }
    op.is_commutative = e.flags[0];
    op.is_aggregate = e.flags[1];
    op.allows_uninitialized_input = e.flags[2];
    op.is_distributed_communication = e.flags[3];
    op.deprecation = e
        .deprecation
        .clone()
        .map(|(version, explanation)| op_spec::Deprecation {
            version,
            explanation,
        });
    Ok(op)
}

proptest! {
    #![proptest_config(config(300))]

    /// Any list of valid ops, with any docs, flags and deprecation, written
    /// in text format reads back to the same ops, which write the same text.
    #[test]
    fn op_lists_read_back_what_was_written(ops in prop::collection::vec((gen_op(), extras()), 0..4)) {
        let ops: Vec<OpDef> = ops
            .iter()
            .map(|(g, e)| op_with_extras(g, e))
            .collect::<Result<_, _>>()?;
        let text = pbtxt::op_list_to_string(&ops);
        let read = match pbtxt::parse_op_list(&text) {
            Ok(read) => read,
            Err(e) => return Err(TestCaseError::fail(format!("{e}\nin:\n{text}"))),
        };
        prop_assert_eq!(read.len(), ops.len());
        for (got, want) in read.iter().zip(&ops) {
            assert_same_op(got, want, &text)?;
            // One op's fields alone read back too.
            let alone = pbtxt::parse_op_def(&pbtxt::op_def_to_string(want))
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            assert_same_op(&alone, want, &text)?;
        }
        prop_assert_eq!(pbtxt::op_list_to_string(&read), text);
        // And what was read is the same op to the compatibility checker.
        for (op, back) in ops.iter().zip(&read) {
            let violations = op_spec::compat::check(op, back);
            prop_assert!(violations.is_empty(), "{:?}", violations);
        }
    }

    /// On any valid op: adding an attr is compatible with a default and
    /// breaks exactly one rule without; dropping an allowed type or raising
    /// a minimum breaks its rule, on that attr.
    #[test]
    fn generated_ops_change_compatibly_or_name_the_rule(g in gen_op(), pick in any::<prop::sample::Index>()) {
        use op_spec::compat::{self, Rule, Subject};
        let (builder, _) = specs_and_expected(&g);
        let Ok(op) = builder.build() else {
            return Err(TestCaseError::fail(specs_of(&builder)));
        };
        prop_assert!(compat::check(&op, &op).is_empty());

        let mut added = op.clone();
        let mut fresh = AttrDef::new("zz_fresh", AttrType::scalar(AttrKind::Int));
        fresh.default_value = Some(AttrValue::Int(0));
        added.attrs.push(fresh);
        prop_assert!(compat::check(&op, &added).is_empty());
        added.attrs.last_mut().unwrap().default_value = None;
        let got: Vec<_> = compat::check(&op, &added).into_iter().map(|v| (v.rule, v.subject)).collect();
        prop_assert_eq!(got, vec![(Rule::AttrAddedWithoutDefault, Subject::Attr("zz_fresh".into()))]);

        if op.attrs.is_empty() {
            return Ok(());
        }
        let i = pick.index(op.attrs.len());
        let name = op.attrs[i].name.clone();
        let mut narrowed = op.clone();
        let attr = &mut narrowed.attrs[i];
        let expected = match (&mut attr.allowed_values, &mut attr.minimum) {
            (Some(ListValue::Type(types)), _) if !types.is_empty() => {
                let dropped = types[0];
                types.retain(|t| *t != dropped);
                Rule::AllowedValuesNarrowed
            }
            (_, Some(min)) if *min < i64::MAX => {
                *min += 1;
                Rule::MinimumRaised
            }
            (_, None) if attr.ty == AttrType::scalar(AttrKind::Int) || attr.ty.is_list => {
                attr.minimum = Some(i64::MIN);
                Rule::MinimumRaised
            }
            _ => return Ok(()),
        };
        let got = compat::check(&op, &narrowed);
        prop_assert!(
            got.iter().any(|v| v.rule == expected && v.subject == Subject::Attr(name.clone())),
            "{:?} on {} not in {:?}", expected, name, got
        );
        // Widening back is compatible.
        let back: Vec<_> = compat::check(&narrowed, &op).into_iter().filter(|v| v.subject == Subject::Attr(name.clone())).collect();
        prop_assert!(back.is_empty(), "{:?}", back);
    }
}

// ---------------------------------------------------------------------------
// Garbage never panics, and errors point inside their specs.

fn check_error(e: &SpecError, builder_specs: &Specs) -> Result<(), TestCaseError> {
    let spec = match e.source {
        SpecSource::Attr(i) => &builder_specs.attrs[i],
        SpecSource::Input(i) => &builder_specs.inputs[i],
        SpecSource::Output(i) => &builder_specs.outputs[i],
        SpecSource::FullType(i) => &builder_specs.full_types[i],
        SpecSource::OpName | SpecSource::Doc => "",
    };
    prop_assert_eq!(&e.spec, spec, "the error quotes its spec");
    let len = e.spec.len();
    let s = &e.span;
    let inside = s.start <= s.end && s.end <= len;
    let past_end = s.start == len && s.end == len + 1;
    prop_assert!(
        inside || past_end,
        "span {:?} outside {:?}: {}",
        s,
        e.spec,
        e.message
    );
    prop_assert!(
        e.spec.is_char_boundary(s.start),
        "span {:?} splits a char of {:?}",
        s,
        e.spec
    );
    prop_assert!(
        past_end || e.spec.is_char_boundary(s.end),
        "span {:?} splits a char of {:?}",
        s,
        e.spec
    );
    prop_assert!(!e.message.is_empty());
    prop_assert!(e.column() >= 1 && e.column() <= e.spec.chars().count() + 1);
    let shown = e.to_string();
    prop_assert!(shown.contains(&e.message));
    let one_line_parts = [&e.op, &e.spec, &e.message];
    if !matches!(e.source, SpecSource::OpName | SpecSource::Doc)
        && one_line_parts.iter().all(|p| !p.contains('\n'))
    {
        // The caret line has as many carets as the span has chars (at least one).
        let carets = shown.lines().nth(2).unwrap_or_default();
        prop_assert!(carets.trim_start().starts_with('^'), "{}", shown);
        prop_assert_eq!(
            carets.len() - 4 - carets.trim_start().len(),
            e.column() - 1,
            "{}",
            shown
        );
    }
    let line = e.one_line();
    prop_assert!(!line.contains('\n') || e.spec.contains('\n') || e.message.contains('\n'));
    Ok(())
}

#[derive(Debug)]
struct Specs {
    name: String,
    attrs: Vec<String>,
    inputs: Vec<String>,
    outputs: Vec<String>,
    full_types: Vec<String>,
}

fn build_checked(s: &Specs) -> Result<(), TestCaseError> {
    let mut b = OpDefBuilder::new(&s.name);
    for a in &s.attrs {
        b = b.attr(a.as_str());
    }
    for i in &s.inputs {
        b = b.input(i.as_str());
    }
    for o in &s.outputs {
        b = b.output(o.as_str());
    }
    for f in &s.full_types {
        b = b.full_type(f.as_str());
    }
    if let Err(errors) = b.build() {
        prop_assert!(!errors.errors().is_empty());
        let _ = errors.to_string();
        for e in errors.errors() {
            check_error(e, s)?;
        }
    }
    Ok(())
}

/// Tokens that spec strings are made of, and some that break them.
const TOKENS: &[&str] = &[
    "N",
    "T",
    "x",
    "in",
    "L",
    "Tout",
    "_",
    "a1",
    ":",
    " ",
    "  ",
    "\t",
    "int",
    "float",
    "string",
    "bool",
    "type",
    "shape",
    "tensor",
    "func",
    "list",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    "<",
    ">",
    ">=",
    "=",
    ",",
    "*",
    "-",
    ".",
    "'",
    "\"",
    "\\",
    "'a'",
    "\"b\"",
    "'\\x4",
    "'\\777'",
    "0",
    "1",
    "-1",
    "1.5",
    "1e",
    "0x",
    "99999999999999999999",
    "inf",
    "nan",
    "DT_FLOAT",
    "DT_INT32_REF",
    "int32",
    "float_ref",
    "numbertype",
    "Ref",
    "Ref(",
    "dim",
    "size",
    "name",
    "unknown_rank",
    "dtype",
    "int_val",
    "#",
    "\n",
    "é",
    "中",
    "😀",
    "\u{301}",
    "\0",
    "true",
    "TFT_VAR",
    "TFT_TENSOR",
    "TFT_FOR_EACH",
    "TFT_SHAPE_TENSOR",
    "TFT_VAR{'T'}",
    "TFT_VAR{'L'}",
    "TFT_VAR{'N'}",
    "y: ",
];

fn token_string() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(TOKENS), 0..12).prop_map(|t| t.concat())
}

fn spec_like() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => token_string(),
        2 => r#"[a-zA-Z0-9:{}\[\]()<>=,'"\\*\-. ]{0,24}"#,
        1 => any::<String>(),
    ]
}

fn garbage_specs() -> impl Strategy<Value = Specs> {
    (
        prop_oneof![spec_like(), op_name()],
        prop::collection::vec(spec_like(), 0..3),
        prop::collection::vec(spec_like(), 0..3),
        prop::collection::vec(spec_like(), 0..3),
        prop::collection::vec(spec_like(), 0..3),
    )
        .prop_map(|(name, mut attrs, inputs, mut outputs, full_types)| {
            // Give args something to refer to.
            attrs.extend([
                "N: int".to_owned(),
                "T: type".to_owned(),
                "L: list(type)".to_owned(),
            ]);
            // And full types something to annotate.
            outputs.push("y: T".to_owned());
            Specs {
                name,
                attrs,
                inputs,
                outputs,
                full_types,
            }
        })
}

proptest! {
    #![proptest_config(config(3000))]

    /// Nothing panics, and every error points inside its spec.
    #[test]
    fn garbage_never_panics(s in garbage_specs()) {
        build_checked(&s)?;
    }

    /// Valid specs with one byte changed, inserted or removed: the edits
    /// that users make by mistake.
    #[test]
    fn near_misses_never_panic(g in gen_op(), edits in prop::collection::vec((any::<usize>(), 0u8..3, prop::sample::select(TOKENS)), 1..3)) {
        let mut specs = Specs {
            name: g.name.clone(),
            attrs: g.attrs.iter().map(|(n, a, s)| attr_spec(a, n, *s)).collect(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            full_types: Vec::new(),
        };
        let attrs: Vec<AttrDef> = g.attrs.iter().map(|(n, a, _)| AttrDef { name: n.clone(), ..a.def.clone() }).collect();
        specs.inputs = g.inputs.iter().map(|(n, c)| resolve_arg(n, c, &attrs).1).collect();
        specs.outputs = g.outputs.iter().map(|(n, c)| resolve_arg(n, c, &attrs).1).collect();
        specs.full_types = g.full_types.iter().zip(&g.outputs).map(|((_, t), (n, _))| format!("{n}: {}", resolve_full_type(t, &attrs).1)).collect();
        for (at, op, token) in edits {
            let lists = [&mut specs.attrs, &mut specs.inputs, &mut specs.outputs, &mut specs.full_types];
            let all: usize = lists.iter().map(|l| l.len()).sum();
            if all == 0 {
                break;
            }
            let mut which = at % all;
            let mut lists = lists.into_iter();
            let target = loop {
                let list = lists.next().expect("which < all");
                if which < list.len() {
                    break &mut list[which];
                }
                which -= list.len();
            };
            let bounds: Vec<usize> = (0..=target.len()).filter(|&i| target.is_char_boundary(i)).collect();
            let pos = bounds[(at / 7) % bounds.len()];
            match op {
                0 => target.insert_str(pos, token),
                1 => {
                    if let Some(ch) = target[pos..].chars().next() {
                        target.replace_range(pos..pos + ch.len_utf8(), "");
                    }
                }
                _ => {
                    if let Some(ch) = target[pos..].chars().next() {
                        target.replace_range(pos..pos + ch.len_utf8(), token);
                    }
                }
            }
        }
        build_checked(&specs)?;
    }
}
