//! Reading attr values written in protobuf text format, as TensorFlow reads
//! the default values of op specs (`= 'foo'`, `= [2, 3]`,
//! `= { dim { size: 1 } }`, `= { dtype: DT_INT32 int_val: 5 }`).
//!
//! [`parse_message`] reads a whole message the same way (a GraphDef's
//! `.pbtxt`), for readers in other crates to decode field by field.
//!
//! Parsing happens in two steps: the text becomes a generic tree of fields
//! (`TextValue`), then the tree is decoded against the message it should be
//! (`TensorShapeProto`, `TensorProto`, ...). Keeping the steps apart keeps the
//! grammar in one place and the schemas in another.

use crate::attr_value::{
    AttrKind, DimValue, FuncValue, ListValue, ShapeError, ShapeValue, TensorValue,
};
use crate::{AttrValue, DType};

/// Nesting deeper than this is rejected rather than risking the stack.
const MAX_DEPTH: usize = 64;

/// A problem in text-format input, at a byte offset of that input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextError {
    /// Byte offset into the text where the problem is.
    pub pos: usize,
    /// What is wrong.
    pub message: String,
}

type Result<T> = std::result::Result<T, TextError>;

fn err<T>(pos: usize, message: impl Into<String>) -> Result<T> {
    Err(TextError {
        pos,
        message: message.into(),
    })
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    /// A number literal as written (decimal, hex, octal or float).
    Number(String),
    Str(Vec<u8>),
    Sym(char),
    End,
}

struct Lexer<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Lexer<'a> {
    fn skip_space_and_comments(&mut self) {
        let bytes = self.text.as_bytes();
        while self.pos < bytes.len() {
            match bytes[self.pos] {
                b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c => self.pos += 1,
                b'#' => {
                    while self.pos < bytes.len() && bytes[self.pos] != b'\n' {
                        self.pos += 1;
                    }
                }
                _ => break,
            }
        }
    }

    /// The next token and the byte offset where it starts.
    fn next(&mut self) -> Result<(Tok, usize)> {
        self.skip_space_and_comments();
        let start = self.pos;
        let bytes = self.text.as_bytes();
        let Some(&c) = bytes.get(start) else {
            return Ok((Tok::End, start));
        };
        let take_while = |from: usize, pred: &dyn Fn(u8) -> bool| {
            let mut end = from;
            while end < bytes.len() && pred(bytes[end]) {
                end += 1;
            }
            end
        };
        let tok = if c.is_ascii_alphabetic() || c == b'_' {
            self.pos = take_while(start, &|b| b.is_ascii_alphanumeric() || b == b'_');
            Tok::Ident(self.text[start..self.pos].to_owned())
        } else if c.is_ascii_digit()
            || (c == b'.' && bytes.get(start + 1).is_some_and(u8::is_ascii_digit))
        {
            // Numbers run on through letters so that "1.0f", "0x1F" and "1e-3"
            // are one token; their validity is judged when decoded.
            let mut end = start;
            while end < bytes.len() {
                let b = bytes[end];
                let exponent_sign = (b == b'-' || b == b'+')
                    && end > start
                    && matches!(bytes[end - 1], b'e' | b'E')
                    && !self.text[start..end].starts_with("0x")
                    && !self.text[start..end].starts_with("0X");
                if b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || exponent_sign {
                    end += 1;
                } else {
                    break;
                }
            }
            self.pos = end;
            Tok::Number(self.text[start..end].to_owned())
        } else if c == b'"' || c == b'\'' {
            let (value, end) = lex_string(self.text, start)?;
            self.pos = end;
            Tok::Str(value)
        } else {
            // A symbol: one char, which may be multi-byte in a malformed input.
            let ch = self.text[start..].chars().next().unwrap_or('\0');
            self.pos = start + ch.len_utf8();
            Tok::Sym(ch)
        };
        Ok((tok, start))
    }
}

/// Reads a quoted string starting at `start` (on the quote); returns the
/// unescaped bytes and the offset after the closing quote.
pub(crate) fn lex_string(text: &str, start: usize) -> Result<(Vec<u8>, usize)> {
    let bytes = text.as_bytes();
    let quote = bytes[start];
    let mut i = start + 1;
    let mut out = Vec::new();
    loop {
        let Some(&b) = bytes.get(i) else {
            return err(start, "unterminated string");
        };
        match b {
            b'\n' => return err(start, "unterminated string (strings cannot span lines)"),
            b if b == quote => return Ok((out, i + 1)),
            b'\\' => {
                let (decoded, next) = unescape_one(text, i)?;
                out.extend_from_slice(&decoded);
                i = next;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
}

/// Decodes the C escape at `at` (on the backslash).
fn unescape_one(text: &str, at: usize) -> Result<(Vec<u8>, usize)> {
    let bytes = text.as_bytes();
    let Some(&e) = bytes.get(at + 1) else {
        return err(at, "string ends in a lone backslash");
    };
    let simple = match e {
        b'n' => Some(b'\n'),
        b't' => Some(b'\t'),
        b'r' => Some(b'\r'),
        b'a' => Some(0x07),
        b'b' => Some(0x08),
        b'f' => Some(0x0c),
        b'v' => Some(0x0b),
        b'\\' => Some(b'\\'),
        b'\'' => Some(b'\''),
        b'"' => Some(b'"'),
        b'?' => Some(b'?'),
        _ => None,
    };
    if let Some(b) = simple {
        return Ok((vec![b], at + 2));
    }
    if (b'0'..=b'7').contains(&e) {
        let mut value: u32 = 0;
        let mut i = at + 1;
        while i < at + 4 && i < bytes.len() && (b'0'..=b'7').contains(&bytes[i]) {
            value = value * 8 + u32::from(bytes[i] - b'0');
            i += 1;
        }
        return match u8::try_from(value) {
            Ok(b) => Ok((vec![b], i)),
            Err(_) => err(
                at,
                format!("octal escape '{}' is out of range", &text[at..i]),
            ),
        };
    }
    if e == b'x' || e == b'X' {
        let mut value: u32 = 0;
        let mut i = at + 2;
        while i < at + 4 && i < bytes.len() && bytes[i].is_ascii_hexdigit() {
            value = value * 16 + (bytes[i] as char).to_digit(16).unwrap_or(0);
            i += 1;
        }
        if i == at + 2 {
            return err(at, "'\\x' must be followed by hex digits");
        }
        return Ok((vec![value as u8], i));
    }
    let shown = text[at + 1..].chars().next().unwrap_or('?');
    err(at, format!("unknown escape sequence '\\{shown}'"))
}

/// One value in the generic tree.
#[derive(Clone, Debug)]
enum TextValue {
    /// A scalar token, with a leading minus sign when one was written.
    Scalar {
        tok: Tok,
        negative: bool,
        pos: usize,
    },
    /// A message: its fields in order (repeated fields appear repeatedly).
    Message { fields: Vec<Field>, pos: usize },
}

impl TextValue {
    fn pos(&self) -> usize {
        match self {
            TextValue::Scalar { pos, .. } | TextValue::Message { pos, .. } => *pos,
        }
    }
}

#[derive(Clone, Debug)]
struct Field {
    name: String,
    pos: usize,
    value: TextValue,
}

struct Parser<'a> {
    lexer: Lexer<'a>,
    peeked: Option<(Tok, usize)>,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Self {
        Parser {
            lexer: Lexer { text, pos: 0 },
            peeked: None,
        }
    }

    fn peek(&mut self) -> Result<&(Tok, usize)> {
        if self.peeked.is_none() {
            self.peeked = Some(self.lexer.next()?);
        }
        Ok(self.peeked.as_ref().expect("just filled"))
    }

    fn bump(&mut self) -> Result<(Tok, usize)> {
        self.peek()?;
        Ok(self.peeked.take().expect("just peeked"))
    }

    fn eat_sym(&mut self, c: char) -> Result<bool> {
        if self.peek()?.0 == Tok::Sym(c) {
            self.bump()?;
            return Ok(true);
        }
        Ok(false)
    }

    fn expect_end(&mut self) -> Result<()> {
        // Like protobuf, tolerate a trailing separator.
        if !self.eat_sym(',')? {
            self.eat_sym(';')?;
        }
        match self.bump()? {
            (Tok::End, _) => Ok(()),
            (tok, pos) => err(
                pos,
                format!("unexpected {} after the value", describe(&tok)),
            ),
        }
    }

    /// A single value: a scalar (with optional sign), adjacent strings, or a message.
    fn value(&mut self, depth: usize) -> Result<TextValue> {
        let (tok, pos) = self.bump()?;
        match tok {
            Tok::Sym(open @ ('{' | '<')) => self.message_body(Some(open), pos, depth + 1),
            Tok::Sym('-') => match self.bump()? {
                (tok @ (Tok::Number(_) | Tok::Ident(_)), _) => Ok(TextValue::Scalar {
                    tok,
                    negative: true,
                    pos,
                }),
                (tok, p) => err(
                    p,
                    format!("expected a number after '-', found {}", describe(&tok)),
                ),
            },
            Tok::Str(mut s) => {
                // Adjacent string literals concatenate, as in C.
                while let (Tok::Str(_), _) = self.peek()? {
                    if let (Tok::Str(more), _) = self.bump()? {
                        s.extend(more);
                    }
                }
                Ok(TextValue::Scalar {
                    tok: Tok::Str(s),
                    negative: false,
                    pos,
                })
            }
            tok @ (Tok::Number(_) | Tok::Ident(_)) => Ok(TextValue::Scalar {
                tok,
                negative: false,
                pos,
            }),
            tok => err(pos, format!("expected a value, found {}", describe(&tok))),
        }
    }

    /// `[v, v, ...]` (the '[' already read).
    fn list(&mut self, depth: usize) -> Result<Vec<TextValue>> {
        let mut items = Vec::new();
        if self.eat_sym(']')? {
            return Ok(items);
        }
        loop {
            items.push(self.value(depth)?);
            if self.eat_sym(',')? {
                continue;
            }
            match self.bump()? {
                (Tok::Sym(']'), _) => return Ok(items),
                (tok, pos) => {
                    return err(
                        pos,
                        format!("expected ',' or ']' in a list, found {}", describe(&tok)),
                    );
                }
            }
        }
    }

    /// The fields of a message up to its closing bracket (the opening one
    /// already read), or up to the end of the text for `open: None` (a
    /// message at the top level).
    fn message_body(&mut self, open: Option<char>, pos: usize, depth: usize) -> Result<TextValue> {
        if depth > MAX_DEPTH {
            return err(pos, format!("values nest deeper than {MAX_DEPTH} levels"));
        }
        let close = open.map(|open| if open == '{' { '}' } else { '>' });
        let mut fields = Vec::new();
        loop {
            let (tok, tpos) = self.bump()?;
            let name = match tok {
                Tok::Sym(c) if Some(c) == close => return Ok(TextValue::Message { fields, pos }),
                Tok::End if close.is_none() => return Ok(TextValue::Message { fields, pos }),
                Tok::Ident(name) => name,
                Tok::End => {
                    let close = close.unwrap_or('}');
                    return err(
                        pos,
                        format!("missing '{close}' to close the message opened here"),
                    );
                }
                tok => {
                    return err(
                        tpos,
                        format!("expected a field name, found {}", describe(&tok)),
                    );
                }
            };
            let colon = self.eat_sym(':')?;
            let is_list = self.peek()?.0 == Tok::Sym('[');
            let is_message = matches!(self.peek()?.0, Tok::Sym('{' | '<'));
            if !colon && !is_list && !is_message {
                let (tok, p) = self.bump()?;
                return err(
                    p,
                    format!(
                        "expected ':' after field '{name}', found {}",
                        describe(&tok)
                    ),
                );
            }
            if is_list {
                self.bump()?;
                for value in self.list(depth)? {
                    fields.push(Field {
                        name: name.clone(),
                        pos: tpos,
                        value,
                    });
                }
            } else {
                let value = self.value(depth)?;
                fields.push(Field {
                    name,
                    pos: tpos,
                    value,
                });
            }
            if !self.eat_sym(',')? {
                self.eat_sym(';')?;
            }
        }
    }
}

fn describe(tok: &Tok) -> String {
    match tok {
        Tok::Ident(s) => format!("'{s}'"),
        Tok::Number(s) => format!("'{s}'"),
        Tok::Str(_) => "a string".to_owned(),
        Tok::Sym(c) => format!("'{c}'"),
        Tok::End => "the end of the text".to_owned(),
    }
}

// ---------------------------------------------------------------------------
// Decoding scalars.

fn parse_unsigned(lit: &str) -> Option<u64> {
    if let Some(hex) = lit.strip_prefix("0x").or_else(|| lit.strip_prefix("0X")) {
        u64::from_str_radix(hex, 16).ok()
    } else if lit.len() > 1 && lit.starts_with('0') {
        u64::from_str_radix(&lit[1..], 8).ok()
    } else {
        lit.parse().ok()
    }
}

fn decode_int(node: &TextValue, min: i128, max: i128, what: &str) -> Result<i128> {
    let TextValue::Scalar {
        tok: Tok::Number(lit),
        negative,
        pos,
    } = node
    else {
        return err(node.pos(), format!("expected {what}"));
    };
    let Some(magnitude) = parse_unsigned(lit) else {
        return err(*pos, format!("expected {what}, found '{lit}'"));
    };
    let value = if *negative {
        -i128::from(magnitude)
    } else {
        i128::from(magnitude)
    };
    if value < min || value > max {
        let shown = if *negative {
            format!("-{lit}")
        } else {
            lit.clone()
        };
        return err(*pos, format!("{shown} is out of range for {what}"));
    }
    Ok(value)
}

fn decode_i64(node: &TextValue) -> Result<i64> {
    decode_int(node, i64::MIN.into(), i64::MAX.into(), "an int64").map(|v| v as i64)
}

fn decode_i32(node: &TextValue) -> Result<i32> {
    decode_int(node, i32::MIN.into(), i32::MAX.into(), "an int32").map(|v| v as i32)
}

fn decode_u32(node: &TextValue) -> Result<u32> {
    decode_int(node, 0, u32::MAX.into(), "a uint32").map(|v| v as u32)
}

fn decode_u64(node: &TextValue) -> Result<u64> {
    decode_int(node, 0, u64::MAX.into(), "a uint64").map(|v| v as u64)
}

fn decode_f64(node: &TextValue) -> Result<f64> {
    let TextValue::Scalar { tok, negative, pos } = node else {
        return err(node.pos(), "expected a number");
    };
    let magnitude = match tok {
        Tok::Ident(word) => match word.to_ascii_lowercase().as_str() {
            "inf" | "infinity" => f64::INFINITY,
            "nan" => f64::NAN,
            _ => return err(*pos, format!("expected a number, found '{word}'")),
        },
        Tok::Number(lit) => {
            let body = lit
                .strip_suffix(['f', 'F'])
                .filter(|b| !b.starts_with("0x") && !b.starts_with("0X"));
            let is_float_syntax = lit.contains(['.', 'e', 'E']) || body.is_some();
            if is_float_syntax {
                match body.unwrap_or(lit).parse::<f64>() {
                    Ok(v) => v,
                    Err(_) => return err(*pos, format!("'{lit}' is not a number")),
                }
            } else if lit.len() > 1 && lit.starts_with('0') {
                // Like protobuf's ConsumeUnsignedDecimalAsDouble: a float
                // written as an integer must be decimal.
                return err(*pos, format!("expected a decimal number, found '{lit}'"));
            } else {
                // An integer too big for uint64 is still a float, as in protobuf.
                match lit.parse::<u64>() {
                    Ok(v) => v as f64,
                    Err(_) => match lit.parse::<f64>() {
                        Ok(v) if lit.bytes().all(|b| b.is_ascii_digit()) => v,
                        _ => return err(*pos, format!("'{lit}' is not a number")),
                    },
                }
            }
        }
        _ => return err(*pos, "expected a number"),
    };
    Ok(if *negative { -magnitude } else { magnitude })
}

fn decode_f32(node: &TextValue) -> Result<f32> {
    decode_f64(node).map(|v| v as f32)
}

fn decode_bool(node: &TextValue) -> Result<bool> {
    if let TextValue::Scalar {
        tok,
        negative: false,
        pos,
    } = node
    {
        match tok {
            Tok::Ident(w) if matches!(w.as_str(), "true" | "True" | "t") => return Ok(true),
            Tok::Ident(w) if matches!(w.as_str(), "false" | "False" | "f") => return Ok(false),
            Tok::Number(n) if n == "1" => return Ok(true),
            Tok::Number(n) if n == "0" => return Ok(false),
            _ => return err(*pos, "expected true or false"),
        }
    }
    err(node.pos(), "expected true or false")
}

fn decode_bytes(node: &TextValue) -> Result<Vec<u8>> {
    match node {
        TextValue::Scalar {
            tok: Tok::Str(s),
            negative: false,
            ..
        } => Ok(s.clone()),
        _ => err(node.pos(), "expected a quoted string"),
    }
}

fn decode_dtype(node: &TextValue) -> Result<DType> {
    match node {
        TextValue::Scalar {
            tok: Tok::Ident(name),
            negative: false,
            pos,
        } => {
            if name == "DT_INVALID" {
                return err(*pos, "DT_INVALID is not a valid type");
            }
            if let Some(base) = name.strip_suffix("_REF").and_then(DType::from_enum_name) {
                return err(
                    *pos,
                    format!(
                        "reference type {name} is not allowed here; use {}",
                        base.enum_name()
                    ),
                );
            }
            DType::from_enum_name(name).ok_or_else(|| {
                let hint = DType::from_spec_name(name)
                    .map(|d| format!(" (types are written as enum names here: {})", d.enum_name()))
                    .unwrap_or_default();
                TextError {
                    pos: *pos,
                    message: format!("unknown type '{name}'{hint}"),
                }
            })
        }
        TextValue::Scalar {
            tok: Tok::Number(_),
            ..
        } => {
            let value = decode_i32(node)?;
            DType::from_enum_value(value).ok_or_else(|| TextError {
                pos: node.pos(),
                message: format!("{value} is not a DataType value"),
            })
        }
        _ => err(node.pos(), "expected a type such as DT_FLOAT"),
    }
}

// ---------------------------------------------------------------------------
// Decoding messages.

fn fields_of<'n>(node: &'n TextValue, what: &str) -> Result<&'n [Field]> {
    match node {
        TextValue::Message { fields, .. } => Ok(fields),
        TextValue::Scalar { pos, .. } => err(*pos, format!("expected a {what} message in {{ }}")),
    }
}

fn unknown_field<T>(field: &Field, message: &str, known: &[&str]) -> Result<T> {
    let hint = crate::suggest::closest(&field.name, known.iter().copied())
        .map(|s| format!(" (did you mean '{s}'?)"))
        .unwrap_or_default();
    err(
        field.pos,
        format!("{message} has no field '{}'{hint}", field.name),
    )
}

/// A dim, and where its size was written (the last `size`, as protobuf keeps
/// the last value of a field given twice).
fn decode_dim(node: &TextValue) -> Result<(DimValue, Option<usize>)> {
    let mut dim = DimValue::default();
    let mut size_pos = None;
    for f in fields_of(node, "Dim")? {
        match f.name.as_str() {
            "size" => {
                dim.size = decode_i64(&f.value)?;
                size_pos = Some(f.value.pos());
            }
            "name" => {
                dim.name = String::from_utf8(decode_bytes(&f.value)?).map_err(|_| TextError {
                    pos: f.pos,
                    message: "a dim name must be UTF-8".into(),
                })?
            }
            _ => return unknown_field(f, "TensorShapeProto.Dim", &["size", "name"]),
        }
    }
    Ok((dim, size_pos))
}

/// A shape, which must be a shape ([`ShapeValue::validate`]): an error points
/// at the size, the dim or the `unknown_rank` that makes it none.
fn decode_shape(node: &TextValue) -> Result<ShapeValue> {
    let mut shape = ShapeValue::default();
    // Per dim: where the dim and where its size were written.
    let mut dim_pos = Vec::new();
    let mut unknown_rank_pos = node.pos();
    for f in fields_of(node, "TensorShapeProto")? {
        match f.name.as_str() {
            "dim" => {
                let (dim, size_pos) = decode_dim(&f.value)?;
                shape.dims.push(dim);
                dim_pos.push((f.pos, size_pos.unwrap_or(f.pos)));
            }
            "unknown_rank" => {
                shape.unknown_rank = decode_bool(&f.value)?;
                unknown_rank_pos = f.pos;
            }
            _ => return unknown_field(f, "TensorShapeProto", &["dim", "unknown_rank"]),
        }
    }
    shape.validate().map_err(|e| TextError {
        pos: match &e {
            ShapeError::UnknownRankWithDims { .. } => unknown_rank_pos,
            ShapeError::TooManyDims { .. } => dim_pos[ShapeValue::MAX_DIMS].0,
            ShapeError::DimBelowMinusOne { index, .. } => dim_pos[*index].1,
        },
        message: e.to_string(),
    })?;
    Ok(shape)
}

const TENSOR_FIELDS: &[&str] = &[
    "dtype",
    "tensor_shape",
    "version_number",
    "tensor_content",
    "half_val",
    "float_val",
    "double_val",
    "int_val",
    "string_val",
    "scomplex_val",
    "int64_val",
    "bool_val",
    "dcomplex_val",
    "uint32_val",
    "uint64_val",
];

fn decode_tensor(node: &TextValue) -> Result<TensorValue> {
    let mut t = TensorValue::default();
    for f in fields_of(node, "TensorProto")? {
        let v = &f.value;
        match f.name.as_str() {
            "dtype" => t.dtype = Some(decode_dtype(v)?),
            "tensor_shape" => t.shape = Some(decode_shape(v)?),
            "version_number" => t.version_number = decode_i32(v)?,
            "tensor_content" => t.tensor_content.extend(decode_bytes(v)?),
            "half_val" => t.half_val.push(decode_i32(v)?),
            "float_val" => t.float_val.push(decode_f32(v)?),
            "double_val" => t.double_val.push(decode_f64(v)?),
            "int_val" => t.int_val.push(decode_i32(v)?),
            "string_val" => t.string_val.push(decode_bytes(v)?),
            "scomplex_val" => t.scomplex_val.push(decode_f32(v)?),
            "int64_val" => t.int64_val.push(decode_i64(v)?),
            "bool_val" => t.bool_val.push(decode_bool(v)?),
            "dcomplex_val" => t.dcomplex_val.push(decode_f64(v)?),
            "uint32_val" => t.uint32_val.push(decode_u32(v)?),
            "uint64_val" => t.uint64_val.push(decode_u64(v)?),
            "resource_handle_val" | "variant_val" => {
                return err(
                    f.pos,
                    format!("'{}' in a tensor attr value is not supported", f.name),
                );
            }
            _ => return unknown_field(f, "TensorProto", TENSOR_FIELDS),
        }
    }
    Ok(t)
}

fn decode_func(node: &TextValue) -> Result<FuncValue> {
    let mut func = FuncValue::default();
    for f in fields_of(node, "NameAttrList")? {
        match f.name.as_str() {
            "name" => {
                func.name = String::from_utf8(decode_bytes(&f.value)?).map_err(|_| TextError {
                    pos: f.pos,
                    message: "a function name must be UTF-8".into(),
                })?
            }
            "attr" => return err(f.pos, "attrs of function references are not supported"),
            _ => return unknown_field(f, "NameAttrList", &["name"]),
        }
    }
    Ok(func)
}

fn decode_scalar(kind: AttrKind, node: &TextValue) -> Result<AttrValue> {
    Ok(match kind {
        AttrKind::String => AttrValue::String(decode_bytes(node)?),
        AttrKind::Int => AttrValue::Int(decode_i64(node)?),
        AttrKind::Float => AttrValue::Float(decode_f32(node)?),
        AttrKind::Bool => AttrValue::Bool(decode_bool(node)?),
        AttrKind::Type => AttrValue::Type(decode_dtype(node)?),
        AttrKind::Shape => AttrValue::Shape(decode_shape(node)?),
        AttrKind::Tensor => AttrValue::Tensor(Box::new(decode_tensor(node)?)),
        AttrKind::Func => AttrValue::Func(decode_func(node)?),
    })
}

fn decode_list(kind: AttrKind, nodes: &[TextValue]) -> Result<ListValue> {
    fn all<T>(nodes: &[TextValue], f: impl Fn(&TextValue) -> Result<T>) -> Result<Vec<T>> {
        nodes.iter().map(f).collect()
    }
    Ok(match kind {
        AttrKind::String => ListValue::String(all(nodes, decode_bytes)?),
        AttrKind::Int => ListValue::Int(all(nodes, decode_i64)?),
        AttrKind::Float => ListValue::Float(all(nodes, decode_f32)?),
        AttrKind::Bool => ListValue::Bool(all(nodes, decode_bool)?),
        AttrKind::Type => ListValue::Type(all(nodes, decode_dtype)?),
        AttrKind::Shape => ListValue::Shape(all(nodes, decode_shape)?),
        AttrKind::Tensor => ListValue::Tensor(all(nodes, decode_tensor)?),
        AttrKind::Func => ListValue::Func(all(nodes, decode_func)?),
    })
}

/// Parses the text of an attr value of the given kind, as TensorFlow's
/// `ParseAttrValue` does for the default in `Attr("name: type = <text>")`.
///
/// Lists must be written in brackets (`[1, 2]`, `[]`); scalars are written as
/// the value of the matching `AttrValue` field (`'foo'`, `-1`, `1e-3`, `true`,
/// `DT_INT32`, `{ dim { size: 2 } }`).
pub fn parse_attr_value(kind: AttrKind, is_list: bool, text: &str) -> Result<AttrValue> {
    let mut p = Parser::new(text);
    let value = if is_list {
        match p.bump()? {
            (Tok::Sym('['), _) => {}
            (_, pos) => {
                return err(
                    pos,
                    "a list value must be written in brackets, like [1, 2] or []",
                );
            }
        }
        let items = p.list(0)?;
        AttrValue::List(decode_list(kind, &items)?)
    } else {
        if p.peek()?.0 == Tok::Sym('[') {
            let pos = p.peek()?.1;
            return err(
                pos,
                format!("a {} attr takes a single value, not a list", kind.name()),
            );
        }
        if let (Tok::End, pos) = p.peek()? {
            return err(*pos, "missing value after '='");
        }
        let node = p.value(0)?;
        decode_scalar(kind, &node)?
    };
    p.expect_end()?;
    Ok(value)
}

/// A message in protobuf text format, parsed into the generic tree: what a
/// reader of a message other than an attr value (a GraphDef's text)
/// decodes field by field with [`TextNode`]'s methods.
#[derive(Clone, Debug)]
pub struct TextMessage(TextValue);

impl TextMessage {
    /// The message, as a node of the tree.
    pub fn root(&self) -> TextNode<'_> {
        TextNode(&self.0)
    }
}

/// Parses `text`, the fields of one message at the top level (as
/// TensorFlow writes a `.pbtxt`), into the generic tree.
pub fn parse_message(text: &str) -> Result<TextMessage> {
    let mut p = Parser::new(text);
    Ok(TextMessage(p.message_body(None, 0, 0)?))
}

/// One field of a [`TextNode`] message: its name, where it was written,
/// and its value. A repeated field appears once per value.
#[derive(Clone, Copy, Debug)]
pub struct TextField<'a> {
    /// The field's name.
    pub name: &'a str,
    /// The byte offset of its name in the text.
    pub pos: usize,
    /// Its value.
    pub value: TextNode<'a>,
}

/// A value in a parsed text message: a scalar or a message, decoded on
/// demand as the type its field has. Each `to_*` method returns an error
/// at the value's position when the value is not of that type.
#[derive(Clone, Copy, Debug)]
pub struct TextNode<'a>(&'a TextValue);

impl<'a> TextNode<'a> {
    /// The byte offset of the value in the text.
    pub fn pos(self) -> usize {
        self.0.pos()
    }

    /// The fields of a message value; `what` names the message for the
    /// error when the value is a scalar.
    pub fn fields(self, what: &str) -> Result<Vec<TextField<'a>>> {
        Ok(fields_of(self.0, what)?
            .iter()
            .map(|f| TextField {
                name: &f.name,
                pos: f.pos,
                value: TextNode(&f.value),
            })
            .collect())
    }

    /// A string or bytes field (C escapes decoded).
    pub fn to_bytes(self) -> Result<Vec<u8>> {
        decode_bytes(self.0)
    }

    /// An `int64` field.
    pub fn to_i64(self) -> Result<i64> {
        decode_i64(self.0)
    }

    /// An `int32` field.
    pub fn to_i32(self) -> Result<i32> {
        decode_i32(self.0)
    }

    /// A `uint32` field.
    pub fn to_u32(self) -> Result<u32> {
        decode_u32(self.0)
    }

    /// A `uint64` field.
    pub fn to_u64(self) -> Result<u64> {
        decode_u64(self.0)
    }

    /// A `float` field.
    pub fn to_f32(self) -> Result<f32> {
        decode_f32(self.0)
    }

    /// A `double` field.
    pub fn to_f64(self) -> Result<f64> {
        decode_f64(self.0)
    }

    /// A `bool` field.
    pub fn to_bool(self) -> Result<bool> {
        decode_bool(self.0)
    }

    /// The name an enum field's value is written as (`TFT_TENSOR`), for an
    /// enum that the caller decodes; an error for a number or another
    /// value (a caller that takes enum values by number reads those with
    /// [`to_i32`](Self::to_i32)).
    pub fn to_enum_name(self) -> Result<&'a str> {
        match self.0 {
            TextValue::Scalar {
                tok: Tok::Ident(name),
                negative: false,
                ..
            } => Ok(name),
            other => err(other.pos(), "expected an enum value's name"),
        }
    }

    /// A `DataType` field (`DT_FLOAT`, or its enum value).
    pub fn to_dtype(self) -> Result<DType> {
        decode_dtype(self.0)
    }

    /// A `TensorShapeProto` message.
    pub fn to_shape(self) -> Result<ShapeValue> {
        decode_shape(self.0)
    }

    /// A `TensorProto` message.
    pub fn to_tensor(self) -> Result<TensorValue> {
        decode_tensor(self.0)
    }

    /// A `NameAttrList` message without attrs.
    pub fn to_func(self) -> Result<FuncValue> {
        decode_func(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scalar(kind: AttrKind, text: &str) -> Result<AttrValue> {
        parse_attr_value(kind, false, text)
    }

    #[test]
    fn a_top_level_message_is_read_field_by_field() {
        let text = "node { name: \"a/b\" attr { key: \"T\" value { type: DT_FLOAT } } }\n\
                    node { name: '0' }\nversions { producer: 2474 }";
        let message = parse_message(text).unwrap();
        let fields = message.root().fields("GraphDef").unwrap();
        let names: Vec<&str> = fields.iter().map(|f| f.name).collect();
        assert_eq!(names, ["node", "node", "versions"]);
        let node = fields[0].value.fields("NodeDef").unwrap();
        assert_eq!(node[0].value.to_bytes().unwrap(), b"a/b");
        let attr = node[1].value.fields("AttrMapEntry").unwrap();
        let value = attr[1].value.fields("AttrValue").unwrap();
        assert_eq!(value[0].value.to_dtype().unwrap(), DType::F32);
        let versions = fields[2].value.fields("VersionDef").unwrap();
        assert_eq!(versions[0].value.to_i32().unwrap(), 2474);
        let error = fields[0].value.to_i64().unwrap_err();
        assert_eq!(error.pos, 5);
        let error = parse_message("node { name: 'x' ").unwrap_err();
        assert_eq!(
            error.message,
            "missing '}' to close the message opened here"
        );
        assert_eq!(error.pos, 5);
    }

    #[test]
    fn scalars_as_tensorflow_writes_them() {
        assert_eq!(
            scalar(AttrKind::String, "'foo'"),
            Ok(AttrValue::from("foo"))
        );
        assert_eq!(
            scalar(AttrKind::String, "\"a\" 'b'"),
            Ok(AttrValue::from("ab"))
        );
        assert_eq!(
            scalar(AttrKind::String, r"'\'\\\n\t\x41\101'"),
            Ok(AttrValue::from("'\\\n\tAA"))
        );
        assert_eq!(scalar(AttrKind::Int, "-1"), Ok(AttrValue::Int(-1)));
        assert_eq!(scalar(AttrKind::Int, "0x10"), Ok(AttrValue::Int(16)));
        assert_eq!(scalar(AttrKind::Int, "010"), Ok(AttrValue::Int(8)));
        assert_eq!(
            scalar(AttrKind::Int, "-9223372036854775808"),
            Ok(AttrValue::Int(i64::MIN))
        );
        assert!(scalar(AttrKind::Int, "9223372036854775808").is_err());
        assert!(scalar(AttrKind::Int, "1.0").is_err());
        assert_eq!(scalar(AttrKind::Float, "1e-3"), Ok(AttrValue::Float(1e-3)));
        assert_eq!(scalar(AttrKind::Float, "1"), Ok(AttrValue::Float(1.0)));
        assert_eq!(scalar(AttrKind::Float, "2.5f"), Ok(AttrValue::Float(2.5)));
        assert_eq!(
            scalar(AttrKind::Float, "340282350000000000000000000000000000000"),
            Ok(AttrValue::Float(f32::MAX))
        );
        assert_eq!(
            scalar(
                AttrKind::Float,
                "1000000000000000000000000000000000000000000"
            ),
            Ok(AttrValue::Float(f32::INFINITY))
        );
        assert!(scalar(AttrKind::Float, "0x10").is_err());
        assert!(scalar(AttrKind::Float, "010").is_err());
        assert_eq!(scalar(AttrKind::Float, "0"), Ok(AttrValue::Float(0.0)));
        assert_eq!(
            scalar(AttrKind::Float, "-inf"),
            Ok(AttrValue::Float(f32::NEG_INFINITY))
        );
        match scalar(AttrKind::Float, "-0.0") {
            Ok(AttrValue::Float(x)) => assert!(x == 0.0 && x.is_sign_negative()),
            other => panic!("{other:?}"),
        }
        assert!(matches!(scalar(AttrKind::Float, "nan"), Ok(AttrValue::Float(x)) if x.is_nan()));
        assert_eq!(scalar(AttrKind::Bool, "true"), Ok(AttrValue::Bool(true)));
        assert_eq!(scalar(AttrKind::Bool, "False"), Ok(AttrValue::Bool(false)));
        assert_eq!(
            scalar(AttrKind::Type, "DT_INT32"),
            Ok(AttrValue::Type(DType::I32))
        );
        assert_eq!(scalar(AttrKind::Type, "1"), Ok(AttrValue::Type(DType::F32)));
        assert!(
            scalar(AttrKind::Type, "int32")
                .unwrap_err()
                .message
                .contains("DT_INT32")
        );
        assert!(scalar(AttrKind::Type, "DT_FLOAT_REF").is_err());
    }

    #[test]
    fn messages() {
        assert_eq!(
            scalar(AttrKind::Shape, "{ dim { size: 1 } dim { size: 2 } }"),
            Ok(AttrValue::Shape(ShapeValue::from_sizes(&[1, 2])))
        );
        assert_eq!(
            scalar(AttrKind::Shape, "{ unknown_rank: true }"),
            Ok(AttrValue::Shape(ShapeValue::unknown_rank()))
        );
        assert_eq!(
            scalar(AttrKind::Shape, "{}"),
            Ok(AttrValue::Shape(ShapeValue::default()))
        );
        assert_eq!(
            scalar(
                AttrKind::Shape,
                "< dim: [{size: -1}, {size: 3 name: 'x'}] >"
            )
            .unwrap()
            .to_string(),
            "[?,3]"
        );
        let t = scalar(AttrKind::Tensor, "{ dtype: DT_INT32 int_val: 5 }").unwrap();
        assert_eq!(
            t,
            AttrValue::from(TensorValue {
                dtype: Some(DType::I32),
                int_val: vec![5],
                ..Default::default()
            })
        );
        let e = scalar(AttrKind::Shape, "{ dims { size: 1 } }").unwrap_err();
        assert_eq!(
            e.message,
            "TensorShapeProto has no field 'dims' (did you mean 'dim'?)"
        );
        assert_eq!(e.pos, 2);
    }

    #[test]
    fn shapes_must_be_shapes() {
        // -1 (unknown) and 0 are sizes; below -1 is not, wherever it is written.
        assert_eq!(
            scalar(AttrKind::Shape, "{ dim { size: -1 } dim { size: 0 } }"),
            Ok(AttrValue::Shape(ShapeValue::from_sizes(&[-1, 0])))
        );
        let text = "{ dim { size: 2 } dim { size: -5 } }";
        let e = scalar(AttrKind::Shape, text).unwrap_err();
        assert_eq!(
            e.message,
            "dimension 1 of [2,-5] is -5, but a dimension must be -1 (unknown) or at least 0"
        );
        assert_eq!(&text[e.pos..], "-5 } }");
        let text = "[{ dim { size: 1 } }, { dim { size: -9223372036854775808 } }]";
        let e = parse_attr_value(AttrKind::Shape, true, text).unwrap_err();
        assert_eq!(&text[e.pos..], "-9223372036854775808 } }]");
        // Inside a tensor too.
        let text = "{ dtype: DT_INT32 tensor_shape { dim { size: -2 } } }";
        let e = scalar(AttrKind::Tensor, text).unwrap_err();
        assert_eq!(&text[e.pos..], "-2 } } }");

        // At most 254 dimensions: the error points at the 255th.
        let dims = |n: usize| "dim { size: 1 } ".repeat(n);
        let text = format!("{{ {}}}", dims(ShapeValue::MAX_DIMS));
        let AttrValue::Shape(s) = scalar(AttrKind::Shape, &text).unwrap() else {
            panic!("not a shape");
        };
        assert_eq!(s.dims.len(), 254);
        let text = format!("{{ {}}}", dims(ShapeValue::MAX_DIMS + 1));
        let e = scalar(AttrKind::Shape, &text).unwrap_err();
        assert_eq!(
            e.message,
            "it has 255 dimensions, but a shape has at most 254"
        );
        assert_eq!(e.pos, 2 + 254 * "dim { size: 1 } ".len());

        // An unknown rank has no dimensions.
        let text = "{ dim { size: 2 } unknown_rank: true }";
        let e = scalar(AttrKind::Shape, text).unwrap_err();
        assert_eq!(
            e.message,
            "<unknown>[2] has an unknown rank but 1 dimension(s): a shape of unknown rank must have none"
        );
        assert_eq!(&text[e.pos..], "unknown_rank: true }");
    }

    #[test]
    fn lists() {
        let list = |k, t| parse_attr_value(k, true, t);
        assert_eq!(
            list(AttrKind::Int, "[]"),
            Ok(AttrValue::List(ListValue::Int(vec![])))
        );
        assert_eq!(
            list(AttrKind::Int, "[2, 3, 5, 7]"),
            Ok(AttrValue::from(vec![2i64, 3, 5, 7]))
        );
        assert_eq!(
            list(AttrKind::Type, "[DT_INT32, DT_FLOAT]"),
            Ok(AttrValue::from(vec![DType::I32, DType::F32]))
        );
        assert_eq!(
            list(AttrKind::String, "['a', \"b\"]"),
            Ok(AttrValue::from(vec!["a", "b"]))
        );
        assert!(list(AttrKind::Int, "1").is_err());
        assert!(list(AttrKind::Int, "[1, 2").is_err());
        assert!(scalar(AttrKind::Int, "[1]").is_err());
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for text in [
            "",
            "'unterminated",
            "{",
            "{{{{",
            "-",
            "[,]",
            "0x",
            "'\\",
            "'\\777'",
            "1 2",
            "é",
            "{ dim: }",
        ] {
            for kind in AttrKind::ALL {
                let _ = parse_attr_value(kind, false, text);
                let _ = parse_attr_value(kind, true, text);
            }
        }
        let deep = "{ dim ".repeat(1000);
        assert!(
            scalar(AttrKind::Shape, &deep)
                .unwrap_err()
                .message
                .contains("nest deeper")
        );
    }
}
