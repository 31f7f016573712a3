//! Parsing single `Attr`, `Input` and `Output` spec strings.
//!
//! The grammar and the order of the checks follow TensorFlow's
//! `op_def_builder.cc` (`FinalizeAttr`, `FinalizeInputOrOutput`) exactly, so
//! that a spec TensorFlow accepts is accepted here with the same meaning and a
//! spec it rejects is rejected. The messages are our own: each points at the
//! offending bytes and, where it can, says how to fix the spec.

use std::ops::Range;

use crate::attr_value::{AttrKind, AttrType, ListValue};
use crate::full_type::{FullType, Places};
use crate::op_def::{ArgDef, ArgType, AttrDef};
use crate::{DType, TypeClass};

/// A problem in one spec string: where, what, and how to fix it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Problem {
    pub span: Range<usize>,
    pub message: String,
    pub help: Option<String>,
}

impl Problem {
    pub(crate) fn new(span: Range<usize>, message: impl Into<String>) -> Problem {
        Problem {
            span,
            message: message.into(),
            help: None,
        }
    }

    pub(crate) fn help(mut self, help: impl Into<String>) -> Problem {
        self.help = Some(help.into());
        self
    }
}

type Result<T> = std::result::Result<T, Problem>;

/// TensorFlow's `isspace`.
pub(crate) fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// A position in a spec string, advanced by the `eat_*` methods.
pub(crate) struct Cursor<'a> {
    pub s: &'a str,
    pub pos: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn rest(&self) -> &'a str {
        &self.s[self.pos..]
    }

    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.s.len()
    }

    pub(crate) fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.pos).copied()
    }

    pub(crate) fn skip_space(&mut self) {
        while self.peek().is_some_and(is_space) {
            self.pos += 1;
        }
    }

    /// Consumes `lit` if the rest starts with it (no space skipped).
    pub(crate) fn eat(&mut self, lit: &str) -> bool {
        if self.rest().starts_with(lit) {
            self.pos += lit.len();
            return true;
        }
        false
    }

    /// Consumes one byte matching `first` then any matching `more`; returns the span.
    pub(crate) fn eat_word(
        &mut self,
        first: BytePredicate,
        more: BytePredicate,
    ) -> Option<Range<usize>> {
        let start = self.pos;
        if !self.peek().is_some_and(first) {
            return None;
        }
        self.pos += 1;
        while self.peek().is_some_and(more) {
            self.pos += 1;
        }
        Some(start..self.pos)
    }

    /// The span of the rest (at least one byte wide when the rest is empty,
    /// so that a caret can point past the end).
    pub(crate) fn rest_span(&self) -> Range<usize> {
        self.pos..self.s.len().max(self.pos + 1)
    }

    /// The span of the word at the cursor (up to space or punctuation); when
    /// no word starts there, the one char at the cursor, or one byte past the
    /// end at the end. Never splits a multi-byte char.
    pub(crate) fn word_span(&self) -> Range<usize> {
        let word = self.rest().bytes().take_while(|b| is_word(*b)).count();
        let len = if word > 0 {
            word
        } else {
            self.rest().chars().next().map_or(1, char::len_utf8)
        };
        self.pos..self.pos + len
    }

    /// The text of `span`, or "" for a span past the end.
    pub(crate) fn text(&self, span: &Range<usize>) -> &'a str {
        self.s.get(span.clone()).unwrap_or("")
    }

    /// Applies TensorFlow's "<prefix> AnySpace ( AnySpace" pattern all or nothing.
    fn eat_call_open(&mut self, keyword: &str) -> bool {
        let save = self.pos;
        if self.eat(keyword) {
            self.skip_space();
            if self.eat("(") {
                self.skip_space();
                return true;
            }
        }
        self.pos = save;
        false
    }
}

pub(crate) type BytePredicate = fn(u8) -> bool;

pub(crate) fn is_letter(b: u8) -> bool {
    b.is_ascii_alphabetic()
}

pub(crate) fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn is_lower(b: u8) -> bool {
    b.is_ascii_lowercase()
}

fn is_lower_word(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'
}

fn is_lower_or_digit(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

/// snake_case of a name, for suggestions.
fn snake_case(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Spans of the parts of an attr spec, for errors found after parsing.
#[derive(Clone, Debug, Default)]
pub(crate) struct AttrSpans {
    pub name: Range<usize>,
    pub default: Option<Range<usize>>,
    pub minimum: Option<Range<usize>>,
}

/// Spans of the parts of an arg spec.
#[derive(Clone, Debug, Default)]
pub(crate) struct ArgSpans {
    pub name: Range<usize>,
    pub number_attr: Option<Range<usize>>,
    pub ty: Range<usize>,
}

/// The `<name>:` at the start of a spec, with the rules for `kind` names.
fn parse_name(c: &mut Cursor<'_>, is_arg: bool) -> Result<Range<usize>> {
    let (first, more): (BytePredicate, BytePredicate) = if is_arg {
        (is_lower, is_lower_word)
    } else {
        (is_letter, is_word)
    };
    let what = if is_arg { "input and output" } else { "attr" };
    let rule = if is_arg {
        "input and output names are lower snake case: a lowercase letter, then lowercase letters, digits and underscores"
    } else {
        "attr names start with a letter and continue with letters, digits and underscores"
    };
    if c.peek().is_some_and(is_space) {
        return Err(
            Problem::new(c.pos..c.pos + 1, "unexpected space before the name")
                .help("a spec starts with its name: remove the leading space"),
        );
    }
    let save = c.pos;
    let Some(name) = c.eat_word(first, more) else {
        // Say what is wrong with the name rather than only that it is wrong.
        let word = c.word_span();
        let written = c.text(&word);
        if written.is_empty() || c.peek() == Some(b':') {
            return Err(
                Problem::new(word, format!("missing {what} name before ':'"))
                    .help(format!("write '<name>: <type>'; {rule}")),
            );
        }
        let mut p = Problem::new(word, format!("invalid {what} name '{written}'"));
        p = if is_arg
            && written
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphabetic())
        {
            p.help(format!("{rule}: try '{}'", snake_case(written)))
        } else {
            p.help(rule)
        };
        return Err(p);
    };
    c.skip_space();
    if !c.eat(":") {
        let found = c.rest_span();
        let spaced = c.pos > name.end;
        if spaced && c.peek().is_some_and(is_word) {
            // `x float`: a name, a space, then what reads as the type; the
            // colon between them is missing.
            return Err(Problem::new(
                found,
                format!("expected ':' after the name '{}'", &c.s[name.clone()]),
            )
            .help(format!(
                "a spec reads '<name>: <type>': write '{}: {}'",
                &c.s[name],
                c.rest().trim_end()
            )));
        }
        let mut p = if c.peek().is_some_and(is_word) && is_arg {
            Problem::new(
                save..c.word_span().end,
                format!("invalid {what} name '{}'", &c.s[save..c.word_span().end]),
            )
            .help(format!(
                "{rule}: try '{}'",
                snake_case(&c.s[save..c.word_span().end])
            ))
        } else {
            Problem::new(
                found,
                format!("expected ':' after the name '{}'", &c.s[name.clone()]),
            )
        };
        if p.help.is_none() {
            p = p.help("a spec reads '<name>: <type>'");
        }
        return Err(p);
    }
    c.skip_space();
    Ok(name)
}

/// A successfully parsed attr spec.
pub(crate) struct ParsedAttr {
    pub def: AttrDef,
    pub spans: AttrSpans,
}

/// The attr kinds in the order TensorFlow tries them as prefixes.
const KIND_KEYWORDS: [(&str, AttrKind); 8] = [
    ("string", AttrKind::String),
    ("int", AttrKind::Int),
    ("float", AttrKind::Float),
    ("bool", AttrKind::Bool),
    ("type", AttrKind::Type),
    ("shape", AttrKind::Shape),
    ("tensor", AttrKind::Tensor),
    ("func", AttrKind::Func),
];

const COMPOUND_KEYWORDS: [&str; 5] = [
    "numbertype",
    "numerictype",
    "quantizedtype",
    "realnumbertype",
    "realnumerictype",
];

/// Help for a word that is not an attr type.
fn attr_type_help(word: &str) -> String {
    if let Some(dt) = DType::from_spec_name(word) {
        return format!(
            "'{word}' is a tensor type, not an attr type: to restrict a `type` attr to it write '{{{}}}'",
            dt.spec_name()
        );
    }
    if let Some(dt) = word.strip_suffix("_ref").and_then(DType::from_spec_name) {
        return format!(
            "reference types cannot be attr values: to restrict a `type` attr to {0} write '{{{0}}}'",
            dt.spec_name()
        );
    }
    let candidates = KIND_KEYWORDS
        .iter()
        .map(|(k, _)| *k)
        .chain(COMPOUND_KEYWORDS);
    match crate::suggest::closest(word, candidates) {
        Some(near) => format!("did you mean '{near}'?"),
        None => "attr types are string, int, float, bool, type, shape, tensor, func, list(...), \
                 a set such as {int32, float} or {'a', 'b'}, numbertype, realnumbertype or quantizedtype"
            .to_owned(),
    }
}

/// Parses `<name>: <type-expr> [>= <min>] [= <default>]`, as `FinalizeAttr`.
pub(crate) fn parse_attr(spec: &str) -> Result<ParsedAttr> {
    let mut c = Cursor { s: spec, pos: 0 };
    let name_span = parse_name(&mut c, false)?;
    let name = spec[name_span.clone()].to_owned();

    let is_list = c.eat_call_open("list");
    if is_list && c.rest().starts_with("list") {
        let mut inner = Cursor {
            s: spec,
            pos: c.pos,
        };
        if inner.eat_call_open("list") {
            return Err(Problem::new(c.pos..inner.pos, "list(list(...)) is not an attr type")
                .help("an attr list holds values of one of the scalar kinds; nested lists are not supported"));
        }
    }

    let type_start = c.pos;
    let mut allowed: Option<ListValue> = None;
    let kind = if let Some(&(kw, kind)) = KIND_KEYWORDS
        .iter()
        .find(|(kw, _)| c.rest().starts_with(kw))
    {
        c.pos += kw.len();
        kind
    } else if let Some(kw) = COMPOUND_KEYWORDS
        .iter()
        .find(|kw| c.rest().starts_with(**kw))
    {
        c.pos += kw.len();
        let class = TypeClass::from_spec_name(kw).expect("compound keywords are type classes");
        allowed = Some(ListValue::Type(class.types().to_vec()));
        AttrKind::Type
    } else if c.eat("{") {
        c.skip_space();
        if matches!(c.peek(), Some(b'"' | b'\'')) {
            allowed = Some(ListValue::String(parse_string_set(&mut c)?));
            AttrKind::String
        } else {
            allowed = Some(ListValue::Type(parse_type_set(&mut c)?));
            AttrKind::Type
        }
    } else {
        let word = c.word_span();
        let shown = c.text(&word);
        let message = if c.at_end() {
            "missing attr type after ':'".to_owned()
        } else {
            format!("unknown attr type '{shown}'")
        };
        return Err(Problem::new(word, message).help(attr_type_help(shown)));
    };
    if c.peek().is_some_and(is_word) {
        // `int32`, `types`, `float_ref`: a keyword with more glued to it is one
        // unknown word, not a keyword followed by junk.
        let word = type_start..c.word_span().end;
        let shown = &spec[word.clone()];
        return Err(
            Problem::new(word, format!("unknown attr type '{shown}'")).help(attr_type_help(shown))
        );
    }
    let type_end = c.pos;
    c.skip_space();

    if is_list {
        if !c.eat(")") {
            return Err(Problem::new(c.rest_span(), "expected ')' to close 'list('"));
        }
        c.skip_space();
    }
    let ty = AttrType { kind, is_list };

    let mut minimum = None;
    let mut minimum_span = None;
    if (is_list || kind == AttrKind::Int) && c.eat(">=") {
        let start = c.pos;
        c.skip_space();
        let num_start = c.pos;
        c.eat("-");
        let digits = c.rest().bytes().take_while(u8::is_ascii_digit).count();
        c.pos += digits;
        let literal = &spec[num_start..c.pos];
        match (digits > 0).then(|| literal.parse::<i64>()) {
            Some(Ok(v)) => {
                minimum = Some(v);
                minimum_span = Some(num_start..c.pos);
            }
            _ => {
                let span = if digits > 0 {
                    num_start..c.pos
                } else {
                    start..Cursor {
                        s: spec,
                        pos: start,
                    }
                    .rest_span()
                    .end
                };
                return Err(
                    Problem::new(span, "expected an integer lower limit after '>='")
                        .help("write e.g. 'N: int >= 1' or 'T: list(type) >= 2'"),
                );
            }
        }
        c.skip_space();
    }

    let mut default_span = None;
    let mut default_value = None;
    if c.eat("=") {
        c.skip_space();
        let text_start = c.pos;
        match crate::text::parse_attr_value(kind, is_list, c.rest()) {
            Ok(v) => default_value = Some(v),
            Err(e) => {
                let at = text_start + e.pos.min(c.rest().len());
                // A negative number is one word with its sign: `-5`, not `-`.
                let signed = spec[at..].starts_with('-')
                    && spec[at + 1..].bytes().next().is_some_and(is_word);
                let word = at + usize::from(signed);
                let span = at..Cursor { s: spec, pos: word }.word_span().end.max(at + 1);
                return Err(
                    Problem::new(span, format!("invalid default value: {}", e.message))
                        .help(default_help(ty)),
                );
            }
        }
        default_span = Some(text_start..spec.len());
    } else if !c.at_end() {
        let rest = c.rest_span();
        let extra = c.rest();
        let mut p = Problem::new(rest, format!("unexpected '{extra}' after the attr type"));
        let written = &spec[type_start..c.pos.max(type_end)];
        let glued = format!(
            "{}{}",
            &spec[type_start..type_end],
            extra
                .split(|ch: char| !ch.is_ascii_alphanumeric() && ch != '_')
                .next()
                .unwrap_or("")
        );
        if extra.starts_with(">=") {
            p = p.help(format!(
                "only int and list attrs can have a minimum; '{}' is {ty}",
                written.trim_end()
            ));
        } else if let Some(dt) = DType::from_spec_name(&glued) {
            p = p.help(format!(
                "'{glued}' is a tensor type, not an attr type: to restrict a `type` attr to it write '{{{}}}'",
                dt.spec_name()
            ));
        } else {
            p = p.help(
                "after the type may come '>= <minimum>' (int and list attrs) and '= <default>'",
            );
        }
        return Err(p);
    }

    let def = AttrDef {
        name,
        ty,
        default_value,
        description: String::new(),
        minimum,
        allowed_values: allowed,
    };
    Ok(ParsedAttr {
        def,
        spans: AttrSpans {
            name: name_span,
            default: default_span,
            minimum: minimum_span,
        },
    })
}

fn default_help(ty: AttrType) -> String {
    let example = match ty.kind {
        AttrKind::String => "'foo'",
        AttrKind::Int => "0",
        AttrKind::Float => "1.0",
        AttrKind::Bool => "true",
        AttrKind::Type => "DT_INT32",
        AttrKind::Shape => "{ dim { size: 1 } dim { size: 2 } }",
        AttrKind::Tensor => "{ dtype: DT_INT32 int_val: 5 }",
        AttrKind::Func => "{ name: 'my_function' }",
    };
    if ty.is_list {
        format!("a {ty} default is written in brackets, e.g. [] or [{example}]")
    } else {
        let article = if ty.kind == AttrKind::Int { "an" } else { "a" };
        format!("{article} {ty} default is written as in TensorFlow, e.g. {example}")
    }
}

/// `'a', "b", }` after `{`: the strings of an enum-like string attr.
fn parse_string_set(c: &mut Cursor<'_>) -> Result<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    loop {
        if !matches!(c.peek(), Some(b'"' | b'\'')) {
            return Err(
                Problem::new(c.rest_span(), "expected a quoted string in the set")
                    .help("a string set is written {'apple', 'orange'}"),
            );
        }
        let (value, end) = crate::text::lex_string(c.s, c.pos)
            .map_err(|e| Problem::new(e.pos..c.s.len(), e.message))?;
        out.push(value);
        c.pos = end;
        if end_of_set_item(c, "string")? {
            return Ok(out);
        }
    }
}

/// `int32, float, numbertype }` after `{`: the types of a constrained type attr.
fn parse_type_set(c: &mut Cursor<'_>) -> Result<Vec<DType>> {
    let mut out = Vec::new();
    loop {
        let Some(word) = c.eat_word(is_lower_or_digit, is_lower_or_digit) else {
            let p = if c.peek() == Some(b'}') && out.is_empty() {
                Problem::new(c.pos..c.pos + 1, "empty type set")
                    .help("list the allowed types, e.g. {float, int32}")
            } else {
                let span = c.word_span();
                let shown = c.text(&span);
                let mut p = Problem::new(
                    span.clone(),
                    format!(
                        "expected a type name, found '{}'",
                        if shown.is_empty() { "the end" } else { shown }
                    ),
                );
                if let Some(dt) = DType::from_enum_name(shown) {
                    p = p.help(format!(
                        "types in a set are written by their spec names: '{}'",
                        dt.spec_name()
                    ));
                } else if c.at_end() {
                    p = Problem::new(span, "missing '}' to close the type set");
                }
                p
            };
            return Err(p);
        };
        let name = &c.s[word.clone()];
        if let Some(class) = TypeClass::from_spec_name(name) {
            out.extend_from_slice(class.types());
        } else if let Some(dt) = DType::from_spec_name(name) {
            out.push(dt);
        } else {
            let mut p = Problem::new(word, format!("unknown type '{name}'"));
            if let Some(near) = crate::dtype::closest_dtype_name(name) {
                p = p.help(format!("did you mean '{near}'?"));
            }
            return Err(p);
        }
        if end_of_set_item(c, "type")? {
            return Ok(out);
        }
    }
}

/// After an item of a `{...}` set: consumes `,` or `}` (a trailing `, }` is
/// allowed, as in TensorFlow) and says whether the set is closed.
fn end_of_set_item(c: &mut Cursor<'_>, what: &str) -> Result<bool> {
    c.skip_space();
    if c.eat(",") {
        c.skip_space();
        return Ok(c.eat("}"));
    }
    if c.eat("}") {
        return Ok(true);
    }
    if c.at_end() {
        return Err(Problem::new(
            c.rest_span(),
            format!("missing '}}' to close the {what} set"),
        ));
    }
    let p = Problem::new(
        c.rest_span(),
        format!("expected ',' or '}}' after a {what} in the set"),
    );
    Err(if c.rest().starts_with("_ref") {
        p.help("reference types cannot be attr values; write the base type")
    } else {
        p
    })
}

/// What an arg spec may refer to: the attrs of the op, including the names of
/// attrs whose own spec failed to parse (so that no second error is reported
/// for them).
pub(crate) struct AttrScope<'a> {
    pub attrs: &'a [AttrDef],
    pub broken: &'a [String],
}

/// A successfully parsed arg spec.
pub(crate) struct ParsedArg {
    pub def: ArgDef,
    pub spans: ArgSpans,
}

/// Parses `<name>: [Ref(] [<number> *] <type|attr> [)]`, as `FinalizeInputOrOutput`.
/// `Ok(None)` means the spec refers to an attr whose own spec is broken.
pub(crate) fn parse_arg(spec: &str, scope: &AttrScope<'_>) -> Result<Option<ParsedArg>> {
    let mut c = Cursor { s: spec, pos: 0 };
    let name_span = parse_name(&mut c, true)?;
    let is_ref = c.eat_call_open("Ref");

    let Some(first) = c.eat_word(is_letter, is_word) else {
        let msg = if c.at_end() {
            format!("missing type after '{}'", if is_ref { "Ref(" } else { ":" })
        } else {
            format!("expected a type or an attr name, found '{}'", c.rest())
        };
        return Err(Problem::new(c.word_span(), msg)
            .help("an input or output is written 'name: int32', 'name: T', 'name: N * T' or 'name: Ref(T)'"));
    };
    c.skip_space();
    let mut number_span = None;
    let mut type_span = first.clone();
    let save = c.pos;
    if c.eat("*") {
        c.skip_space();
        match c.eat_word(is_letter, is_word) {
            Some(second) => {
                number_span = Some(first);
                type_span = second;
                c.skip_space();
            }
            None => c.pos = save,
        }
    }
    let type_name = &spec[type_span.clone()];

    let ty = if let Some(dt) = DType::from_spec_name(type_name) {
        ArgType::Fixed(dt)
    } else if let Some(base) = type_name
        .strip_suffix("_ref")
        .and_then(DType::from_spec_name)
    {
        return Err(
            Problem::new(type_span, format!("illegal use of ref type '{type_name}'"))
                .help(format!("write 'Ref({})' instead", base.spec_name())),
        );
    } else if let Some(attr) = scope.attrs.iter().find(|a| a.name == type_name) {
        match attr.ty {
            AttrType {
                kind: AttrKind::Type,
                is_list: false,
            } => ArgType::Attr(type_name.to_owned()),
            AttrType {
                kind: AttrKind::Type,
                is_list: true,
            } => ArgType::ListAttr(type_name.to_owned()),
            other => {
                return Err(Problem::new(type_span, format!("attr '{type_name}' has type {other}, so it cannot be the type of an input or output"))
                    .help(format!("an arg's type comes from a `type` or `list(type)` attr; declare '{type_name}: type'")));
            }
        }
    } else if scope.broken.iter().any(|b| b == type_name) {
        return Ok(None);
    } else {
        let mut p = Problem::new(type_span, format!("unknown type or attr '{type_name}'"));
        let attr_names = scope.attrs.iter().map(|a| a.name.as_str());
        if let Some(near) = crate::suggest::closest(type_name, attr_names) {
            p = p.help(format!("did you mean the attr '{near}'?"));
        } else if let Some(near) = crate::dtype::closest_dtype_name(type_name) {
            p = p.help(format!("did you mean the type '{near}'?"));
        } else {
            p = p.help(format!("declare the attr with the spec \"{type_name}: type\", or use a tensor type such as float or int32"));
        }
        return Err(p);
    };

    if is_ref {
        if !c.eat(")") {
            return Err(Problem::new(c.rest_span(), "expected ')' to close 'Ref('"));
        }
        c.skip_space();
    }
    if !c.at_end() {
        let rest = c.rest();
        let mut p = Problem::new(c.rest_span(), format!("unexpected '{rest}' after the type"));
        if rest.starts_with('*') {
            p = p
                .help("a list input is written 'name: N * T', with an attr or type name after '*'");
        }
        return Err(p);
    }

    let def = ArgDef {
        name: spec[name_span.clone()].to_owned(),
        description: String::new(),
        ty,
        number_attr: number_span.as_ref().map(|s| spec[s.clone()].to_owned()),
        is_ref,
        full_type: None,
    };
    Ok(Some(ParsedArg {
        def,
        spans: ArgSpans {
            name: name_span,
            number_attr: number_span,
            ty: type_span,
        },
    }))
}

/// A parsed full-type spec: the output it annotates and its full type,
/// with where each was written.
pub(crate) struct ParsedFullType {
    pub output: String,
    pub name: Range<usize>,
    pub ty: FullType,
    pub places: Places<Range<usize>>,
}

/// Parses `<output>: <full type>`, the full type in the notation of
/// [`crate::full_type`]; which output it names, and what its type
/// variables name, the builder checks against the op.
pub(crate) fn parse_full_type(spec: &str) -> Result<ParsedFullType> {
    let mut c = Cursor { s: spec, pos: 0 };
    let name = parse_name(&mut c, true)?;
    let (ty, places) = crate::full_type::parse_notation(&mut c)?;
    Ok(ParsedFullType {
        output: spec[name.clone()].to_owned(),
        name,
        ty,
        places,
    })
}

/// The name at the start of an attr or arg spec, if one can be read even
/// though the spec is broken: used to avoid cascading errors.
/// A name followed by a space and a word (`T type`, the colon missing)
/// counts too: the spec's own error says so.
pub(crate) fn leading_name(spec: &str) -> Option<String> {
    let mut c = Cursor { s: spec, pos: 0 };
    let span = c.eat_word(is_letter, is_word)?;
    c.skip_space();
    let missing_colon = c.pos > span.end && c.peek().is_some_and(is_word);
    (c.eat(":") || missing_colon).then(|| spec[span].to_owned())
}
