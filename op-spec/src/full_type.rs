//! Full types: TensorFlow's `FullTypeDef`, the type-inference annotation
//! an output may carry in its OpDef (`experimental_full_type`).
//!
//! A full type says more than an output's dtype: that `Shape`'s output is a
//! shape tensor (which TensorFlow places in host memory), that a variant
//! output is a `TensorList` of the element type `element_dtype`, that a
//! dataset yields tensors of `output_types`. TensorFlow writes it with
//! `SetTypeConstructor` (`full_type::Unary(TFT_SHAPE_TENSOR, "out_type")`
//! for `Shape`), which always annotates output 0; its `ops.pbtxt` carries
//! the result:
//!
//! ```text
//! output_arg {
//!   name: "output"
//!   type_attr: "out_type"
//!   experimental_full_type {
//!     type_id: TFT_SHAPE_TENSOR
//!     args {
//!       type_id: TFT_VAR
//!       s: "out_type"
//!     }
//!   }
//! }
//! ```
//!
//! Here a full type is written in the notation of TensorFlow's own
//! `full_type.proto`: the type's id, its args in brackets, and its attr (a
//! quoted string or an integer) in braces. `Shape`'s is
//! `TFT_SHAPE_TENSOR[TFT_VAR{'out_type'}]`; `TensorListReserve`'s is
//! `TFT_ARRAY[TFT_TENSOR[TFT_VAR{'element_dtype'}]]`. An op declares one
//! per output with a spec `"<output>: <full type>"`
//! ([`crate::OpDefBuilder::full_type`], `full_types(...)` in
//! `#[register_op]`), which is checked as TensorFlow specializes the type
//! for a node (`SpecializeType` in `full_type_util.cc`): a `TFT_VAR` names
//! a `type` or `list(type)` attr of the op and has no args, and a
//! `TFT_FOR_EACH` has three args, the last a `TFT_VAR`.
//!
//! ```
//! use op_spec::{FullType, FullTypeId, OpDefBuilder};
//!
//! let shape = OpDefBuilder::new("Shape")
//!     .attr("T: type")
//!     .attr("out_type: {int32, int64} = DT_INT32")
//!     .input("input: T")
//!     .output("output: out_type")
//!     .full_type("output: TFT_SHAPE_TENSOR[TFT_VAR{'out_type'}]")
//!     .build()
//!     .unwrap();
//! let full_type = shape.outputs[0].full_type.as_ref().unwrap();
//! assert_eq!(
//!     *full_type,
//!     FullType::new(FullTypeId::ShapeTensor).with_arg(FullType::var("out_type"))
//! );
//! assert_eq!(full_type.to_string(), "TFT_SHAPE_TENSOR[TFT_VAR{'out_type'}]");
//! ```
//!
//! Full types change no kernel choice and no graph's meaning, so
//! [`crate::compat`] lets them change, as TensorFlow's `OpDefCompatible`
//! does.

use std::fmt;
use std::ops::Range;
use std::str::FromStr;

use crate::attr_value::{AttrKind, AttrType};
use crate::quote::{capped, quoted};
use crate::spec::{AttrScope, Cursor, Problem, is_letter, is_word};

/// Declares [`FullTypeId`] and its names from one table.
macro_rules! full_type_ids {
    ($( $(#[$doc:meta])* $variant:ident = $value:literal, $name:literal; )*) => {
        /// The kind of a [`FullType`]: TensorFlow's `FullTypeId` enum.
        ///
        /// The discriminants are TensorFlow's enum values; the names are its
        /// enum names (`TFT_TENSOR`), as the text format and the full-type
        /// notation write them.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(i32)]
        pub enum FullTypeId {
            $( $(#[$doc])* $variant = $value, )*
        }

        impl FullTypeId {
            /// Every id, in the order of TensorFlow's `full_type.proto`.
            pub const ALL: &'static [FullTypeId] = &[$(FullTypeId::$variant),*];

            /// TensorFlow's enum name: `TFT_SHAPE_TENSOR`.
            pub const fn enum_name(self) -> &'static str {
                match self {
                    $(FullTypeId::$variant => $name,)*
                }
            }
        }
    };
}

full_type_ids! {
    /// No type: the default of an unset field.
    Unset = 0, "TFT_UNSET";
    /// A type variable, standing for the type of the attr its attr names
    /// (`TFT_VAR{'T'}`).
    Var = 1, "TFT_VAR";
    /// Any type.
    Any = 2, "TFT_ANY";
    /// A product of types: several values at once.
    Product = 3, "TFT_PRODUCT";
    /// A named field, the name in its attr.
    Named = 4, "TFT_NAMED";
    /// A template repeated for each type of a list attr:
    /// `TFT_FOR_EACH[container, template, TFT_VAR{'T'}]`.
    ForEach = 20, "TFT_FOR_EACH";
    /// A function: `TFT_CALLABLE[args, returns]`.
    Callable = 100, "TFT_CALLABLE";
    /// A tensor of the element type in its arg.
    Tensor = 1000, "TFT_TENSOR";
    /// A random-access list of the element type in its arg (a `TensorList`).
    Array = 1001, "TFT_ARRAY";
    /// A value that may hold one element of the type in its arg.
    Optional = 1002, "TFT_OPTIONAL";
    /// A compile-time constant, the value in its attr.
    Literal = 1003, "TFT_LITERAL";
    /// A value of its first arg's type encoded as its second's.
    Encoded = 1004, "TFT_ENCODED";
    /// A shape tensor: the shape of some tensor, kept in host memory.
    ShapeTensor = 1005, "TFT_SHAPE_TENSOR";
    /// The bool element type.
    Bool = 200, "TFT_BOOL";
    /// The uint8 element type.
    Uint8 = 201, "TFT_UINT8";
    /// The uint16 element type.
    Uint16 = 202, "TFT_UINT16";
    /// The uint32 element type.
    Uint32 = 203, "TFT_UINT32";
    /// The uint64 element type.
    Uint64 = 204, "TFT_UINT64";
    /// The int8 element type.
    Int8 = 205, "TFT_INT8";
    /// The int16 element type.
    Int16 = 206, "TFT_INT16";
    /// The int32 element type.
    Int32 = 207, "TFT_INT32";
    /// The int64 element type.
    Int64 = 208, "TFT_INT64";
    /// The half element type.
    Half = 209, "TFT_HALF";
    /// The float element type.
    Float = 210, "TFT_FLOAT";
    /// The double element type.
    Double = 211, "TFT_DOUBLE";
    /// The bfloat16 element type.
    Bfloat16 = 215, "TFT_BFLOAT16";
    /// The complex64 element type.
    Complex64 = 212, "TFT_COMPLEX64";
    /// The complex128 element type.
    Complex128 = 213, "TFT_COMPLEX128";
    /// The string element type.
    String = 214, "TFT_STRING";
    /// A `tf.data` dataset of the element type in its arg.
    Dataset = 10102, "TFT_DATASET";
    /// A ragged tensor of the element type in its arg.
    Ragged = 10103, "TFT_RAGGED";
    /// A `tf.data` iterator of the element type in its arg.
    Iterator = 10104, "TFT_ITERATOR";
    /// A mutex lock.
    MutexLock = 10202, "TFT_MUTEX_LOCK";
    /// A `DT_VARIANT` tensor of no known type.
    LegacyVariant = 10203, "TFT_LEGACY_VARIANT";
}

impl FullTypeId {
    /// TensorFlow's enum value.
    pub const fn value(self) -> i32 {
        self as i32
    }

    /// The id of TensorFlow's enum name (`TFT_TENSOR`).
    pub fn from_enum_name(name: &str) -> Option<FullTypeId> {
        FullTypeId::ALL
            .iter()
            .copied()
            .find(|id| id.enum_name() == name)
    }

    /// The id of TensorFlow's enum value (`1000`).
    pub fn from_value(value: i32) -> Option<FullTypeId> {
        FullTypeId::ALL
            .iter()
            .copied()
            .find(|id| id.value() == value)
    }

    /// The enum name closest to `word`, for "did you mean" hints; a word
    /// written without the prefix or in lower case (`shape_tensor`) finds
    /// its id too.
    pub fn closest_name(word: &str) -> Option<&'static str> {
        let upper = word.to_ascii_uppercase();
        let prefixed = if upper.starts_with("TFT_") {
            upper
        } else {
            format!("TFT_{upper}")
        };
        if let Some(id) = FullTypeId::from_enum_name(&prefixed) {
            return Some(id.enum_name());
        }
        crate::suggest::closest(&prefixed, FullTypeId::ALL.iter().map(|id| id.enum_name()))
    }
}

impl fmt::Display for FullTypeId {
    /// The enum name.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.enum_name())
    }
}

/// The literal a [`FullType`] may hold: TensorFlow's `FullTypeDef.attr`
/// oneof.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum FullTypeAttr {
    /// `s`: a type variable's attr name, a field's name.
    String(String),
    /// `i`: a literal's value.
    Int(i64),
}

/// A full type: TensorFlow's `FullTypeDef`, an id with its args and
/// optionally a literal.
///
/// `Display` and `FromStr` use the notation of TensorFlow's
/// `full_type.proto` (see the [module docs](self)): `TFT_TENSOR[TFT_INT32]`,
/// `TFT_VAR{'T'}`, `TFT_LITERAL[TFT_INT32]{1}`.
///
/// ```
/// use op_spec::{FullType, FullTypeId};
///
/// let list: FullType = "TFT_ARRAY[TFT_TENSOR[TFT_VAR{'element_dtype'}]]".parse().unwrap();
/// assert_eq!(list.type_id, FullTypeId::Array);
/// assert_eq!(list.args[0].args[0], FullType::var("element_dtype"));
/// assert_eq!(
///     list.to_string().parse::<FullType>().unwrap(),
///     list,
///     "the notation reads back"
/// );
///
/// let err = "TFT_SHAPE_TENSR[TFT_VAR{'T'}]".parse::<FullType>().unwrap_err();
/// assert_eq!(err.to_string(), "unknown full type 'TFT_SHAPE_TENSR' (did you mean 'TFT_SHAPE_TENSOR'?)");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FullType {
    /// What the type is.
    pub type_id: FullTypeId,
    /// Its parameters, in order.
    pub args: Vec<FullType>,
    /// Its literal, if any.
    pub attr: Option<FullTypeAttr>,
}

impl FullType {
    /// The type `type_id`, without args or literal.
    pub fn new(type_id: FullTypeId) -> FullType {
        FullType {
            type_id,
            args: Vec::new(),
            attr: None,
        }
    }

    /// The type variable of the attr `attr`: `TFT_VAR{'attr'}`.
    pub fn var(attr: impl Into<String>) -> FullType {
        FullType {
            attr: Some(FullTypeAttr::String(attr.into())),
            ..FullType::new(FullTypeId::Var)
        }
    }

    /// This type with `arg` added after its args.
    pub fn with_arg(mut self, arg: FullType) -> FullType {
        self.args.push(arg);
        self
    }
}

impl fmt::Display for FullType {
    /// The notation: `TFT_SHAPE_TENSOR[TFT_VAR{'out_type'}]`, which
    /// [`FullType::from_str`] reads back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.type_id.enum_name())?;
        if !self.args.is_empty() {
            f.write_str("[")?;
            for (i, arg) in self.args.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{arg}")?;
            }
            f.write_str("]")?;
        }
        match &self.attr {
            None => Ok(()),
            Some(FullTypeAttr::String(s)) => {
                write!(f, "{{'{}'}}", crate::pbtxt::c_escape(s.as_bytes()))
            }
            Some(FullTypeAttr::Int(i)) => write!(f, "{{{i}}}"),
        }
    }
}

/// Why a text is not a full type in the notation: where, and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FullTypeError {
    /// The byte range of the text the problem is at.
    pub span: Range<usize>,
    /// What is wrong.
    pub message: String,
    /// How to fix it, when there is something useful to say.
    pub help: Option<String>,
}

impl fmt::Display for FullTypeError {
    /// The message, and the help in parentheses.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let Some(help) = &self.help {
            write!(f, " ({help})")?;
        }
        Ok(())
    }
}

impl std::error::Error for FullTypeError {}

impl FromStr for FullType {
    type Err = FullTypeError;

    /// Reads the notation (spaces allowed between its parts). Only the
    /// syntax is checked: whether a `TFT_VAR` names an attr depends on the
    /// op, which [`crate::OpDefBuilder::full_type`] checks.
    fn from_str(text: &str) -> Result<FullType, FullTypeError> {
        let mut c = Cursor { s: text, pos: 0 };
        parse_notation(&mut c)
            .map(|(ty, _)| ty)
            .map_err(|p| FullTypeError {
                span: p.span,
                message: p.message,
                help: p.help,
            })
    }
}

// ---------------------------------------------------------------------------
// The notation, read with positions.

/// Where the parts of one node of a full type were written: `P` is a byte
/// range of a spec, or a byte offset of a text-format message.
#[derive(Clone, Debug)]
pub(crate) struct Places<P> {
    /// The id.
    pub id: P,
    /// The attr, when there is one.
    pub attr: Option<P>,
    /// Each arg's.
    pub args: Vec<Places<P>>,
}

/// Deeper nesting is rejected rather than risking the stack.
const MAX_DEPTH: usize = 64;

/// Reads a full type at the cursor, to the end of the text: the type and
/// where its parts are.
pub(crate) fn parse_notation(
    c: &mut Cursor<'_>,
) -> Result<(FullType, Places<Range<usize>>), Problem> {
    c.skip_space();
    let parsed = parse_type(c, 0)?;
    c.skip_space();
    if !c.at_end() {
        let rest = c.rest();
        let p = Problem::new(
            c.rest_span(),
            format!("unexpected {} after the full type", quoted(rest)),
        );
        return Err(if rest.starts_with('[') || rest.starts_with('{') {
            p.help("a full type is written ID[args]{attr}: the args in brackets first, then the attr in braces")
        } else {
            p.help("a full type is one id with its args, as in TFT_TENSOR[TFT_VAR{'T'}]; several go inside TFT_PRODUCT[..]")
        });
    }
    Ok(parsed)
}

fn parse_type(
    c: &mut Cursor<'_>,
    depth: usize,
) -> Result<(FullType, Places<Range<usize>>), Problem> {
    if depth > MAX_DEPTH {
        return Err(Problem::new(
            c.word_span(),
            format!("full types nest deeper than {MAX_DEPTH} levels"),
        ));
    }
    let Some(id_span) = c.eat_word(is_letter, is_word) else {
        let message = if c.at_end() {
            "missing full type".to_owned()
        } else {
            format!(
                "expected a full type id such as TFT_TENSOR, found {}",
                quoted(c.text(&c.word_span()))
            )
        };
        return Err(Problem::new(c.word_span(), message)
            .help("a full type is written as in TensorFlow's full_type.proto: TFT_SHAPE_TENSOR[TFT_VAR{'out_type'}]"));
    };
    let word = c.text(&id_span);
    let Some(type_id) = FullTypeId::from_enum_name(word) else {
        let mut p = Problem::new(
            id_span.clone(),
            format!("unknown full type {}", quoted(word)),
        );
        p = match FullTypeId::closest_name(word) {
            Some(near) => p.help(format!("did you mean '{near}'?")),
            None => p.help("full type ids are TensorFlow's FullTypeId names: TFT_TENSOR, TFT_SHAPE_TENSOR, TFT_VAR, TFT_ARRAY, TFT_PRODUCT, ..."),
        };
        return Err(p);
    };
    let mut ty = FullType::new(type_id);
    let mut places = Places {
        id: id_span,
        attr: None,
        args: Vec::new(),
    };
    c.skip_space();
    if c.eat("[") {
        c.skip_space();
        while !c.eat("]") {
            if matches!(c.peek(), Some(b'\'' | b'"')) {
                let end =
                    crate::text::lex_string(c.s, c.pos).map_or(c.word_span().end, |(_, end)| end);
                return Err(Problem::new(
                    c.pos..end,
                    "expected a full type in the brackets, found a string",
                )
                .help(format!(
                    "a type's attr is written in braces after its args: {}{{'..'}}",
                    type_id.enum_name()
                )));
            }
            let (arg, arg_places) = parse_type(c, depth + 1)?;
            ty.args.push(arg);
            places.args.push(arg_places);
            c.skip_space();
            if c.eat(",") {
                c.skip_space();
            } else if c.peek() != Some(b']') {
                let p = if c.at_end() {
                    Problem::new(c.rest_span(), "missing ']' to close the args")
                } else {
                    Problem::new(
                        c.word_span(),
                        format!(
                            "expected ',' or ']' after an arg, found {}",
                            quoted(c.text(&c.word_span()))
                        ),
                    )
                };
                return Err(p.help("args are written in brackets, separated by commas: TFT_FOR_EACH[TFT_PRODUCT, TFT_TENSOR[TFT_VAR{'T'}], TFT_VAR{'T'}]"));
            }
        }
        c.skip_space();
    }
    if c.eat("{") {
        c.skip_space();
        let start = c.pos;
        let attr = match c.peek() {
            Some(b'\'' | b'"') => {
                let (bytes, end) = crate::text::lex_string(c.s, c.pos)
                    .map_err(|e| Problem::new(e.pos..c.s.len().max(e.pos + 1), e.message))?;
                c.pos = end;
                let s = String::from_utf8(bytes).map_err(|_| {
                    Problem::new(start..end, "a full type's string attr must be UTF-8")
                })?;
                FullTypeAttr::String(s)
            }
            Some(b) if b == b'-' || b.is_ascii_digit() => {
                c.eat("-");
                while c.peek().is_some_and(|b| b.is_ascii_digit()) {
                    c.pos += 1;
                }
                let literal = &c.s[start..c.pos];
                let value = literal.parse::<i64>().map_err(|_| {
                    Problem::new(
                        start..c.pos.max(start + 1),
                        format!("{} is not an integer of 64 bits", quoted(literal)),
                    )
                })?;
                FullTypeAttr::Int(value)
            }
            Some(b) if is_word(b) => {
                let word = c.word_span();
                let name = c.text(&word);
                return Err(
                    Problem::new(word.clone(), format!("unquoted attr {}", quoted(name))).help(
                        format!(
                            "a string attr is quoted: {}{{'{}'}}",
                            type_id.enum_name(),
                            capped(name)
                        ),
                    ),
                );
            }
            _ => {
                return Err(Problem::new(c.word_span(), "expected a quoted string or an integer in the braces")
                    .help("a type's attr is a string, as in TFT_VAR{'T'}, or an integer, as in TFT_LITERAL[TFT_INT32]{1}"));
            }
        };
        places.attr = Some(start..c.pos);
        c.skip_space();
        if !c.eat("}") {
            return Err(
                Problem::new(c.rest_span(), "expected '}' to close the attr")
                    .help("a type holds one attr: TFT_VAR{'T'}"),
            );
        }
        ty.attr = Some(attr);
    }
    Ok((ty, places))
}

// ---------------------------------------------------------------------------
// The rules of a full type on an op.

/// A full type that TensorFlow could not specialize for a node of the op:
/// where (one of the [`Places`]), what, and how to fix it.
#[derive(Clone, Debug)]
pub(crate) struct Misuse<P> {
    pub at: P,
    pub message: String,
    pub help: Option<String>,
}

/// Checks `ty`, written at `places`, as TensorFlow's `SpecializeType`
/// substitutes it from a node's attrs (a variable naming one of
/// `scope.broken`, an attr whose spec failed, is no second mistake): each `TFT_VAR` has no args and names
/// a `type` or `list(type)` attr of the op; each `TFT_FOR_EACH` has three
/// args, the last a `TFT_VAR`. The first problem, in written order.
pub(crate) fn check_on_op<P: Clone>(
    ty: &FullType,
    places: &Places<P>,
    scope: &AttrScope<'_>,
) -> Result<(), Misuse<P>> {
    let misuse = |at: &P, message: String, help: Option<String>| Misuse {
        at: at.clone(),
        message,
        help,
    };
    match ty.type_id {
        FullTypeId::Var => {
            if let Some(arg) = places.args.first() {
                return Err(misuse(
                    &arg.id,
                    format!("TFT_VAR takes no args, but has {}", ty.args.len()),
                    Some(
                        "a type variable stands for the type of the attr it names: TFT_VAR{'T'}"
                            .into(),
                    ),
                ));
            }
            let name = match &ty.attr {
                Some(FullTypeAttr::String(name)) => name,
                Some(FullTypeAttr::Int(i)) => {
                    let at = places.attr.as_ref().unwrap_or(&places.id);
                    return Err(misuse(
                        at,
                        format!("TFT_VAR{{{i}}}: a type variable is named by a string"),
                        Some("name the attr it stands for: TFT_VAR{'T'}".into()),
                    ));
                }
                None => {
                    return Err(misuse(
                        &places.id,
                        "TFT_VAR without the name of an attr".into(),
                        Some("a type variable names the `type` or `list(type)` attr it stands for: TFT_VAR{'T'}".into()),
                    ));
                }
            };
            let at = places.attr.as_ref().unwrap_or(&places.id);
            match scope.attrs.iter().find(|a| a.name == *name) {
                None if scope.broken.contains(name) => {}
                None => {
                    let types = scope.attrs.iter().filter(|a| a.ty.kind == AttrKind::Type);
                    let help = match crate::suggest::closest(
                        name,
                        types.clone().map(|a| a.name.as_str()),
                    ) {
                        Some(near) => format!("did you mean '{near}'?"),
                        None => {
                            let names: Vec<String> =
                                types.map(|a| quoted(&a.name).to_string()).collect();
                            if names.is_empty() {
                                format!(
                                    "a type variable stands for a `type` or `list(type)` attr of the op: declare one with the spec \"{name}: type\""
                                )
                            } else {
                                format!(
                                    "a type variable stands for a `type` or `list(type)` attr of the op: {}",
                                    names.join(", ")
                                )
                            }
                        }
                    };
                    return Err(misuse(
                        at,
                        format!("TFT_VAR names no attr of the op: {}", quoted(name)),
                        Some(help),
                    ));
                }
                Some(attr)
                    if attr.ty != AttrType::scalar(AttrKind::Type)
                        && attr.ty != AttrType::list(AttrKind::Type) =>
                {
                    return Err(misuse(
                        at,
                        format!(
                            "TFT_VAR names attr {} of type {}, not a type",
                            quoted(name),
                            attr.ty
                        ),
                        Some("a type variable stands for a `type` or `list(type)` attr".into()),
                    ));
                }
                Some(_) => {}
            }
        }
        FullTypeId::ForEach => {
            if ty.args.len() != 3 {
                return Err(misuse(
                    &places.id,
                    format!("TFT_FOR_EACH takes 3 args, not {}", ty.args.len()),
                    Some("write TFT_FOR_EACH[<container>, <template>, TFT_VAR{'<list attr>'}], as in TFT_FOR_EACH[TFT_PRODUCT, TFT_TENSOR[TFT_VAR{'T'}], TFT_VAR{'T'}]".into()),
                ));
            }
            if ty.args[2].type_id != FullTypeId::Var {
                return Err(misuse(
                    &places.args[2].id,
                    format!(
                        "the last arg of TFT_FOR_EACH is the TFT_VAR it expands, not {}",
                        ty.args[2].type_id
                    ),
                    Some("name the attr whose types the template repeats for: TFT_VAR{'T'}".into()),
                ));
            }
        }
        _ => {}
    }
    for (arg, at) in ty.args.iter().zip(&places.args) {
        check_on_op(arg, at, scope)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ids_are_tensorflows() {
        assert_eq!(FullTypeId::ALL.len(), 34);
        for &id in FullTypeId::ALL {
            assert_eq!(FullTypeId::from_enum_name(id.enum_name()), Some(id));
            assert_eq!(FullTypeId::from_value(id.value()), Some(id));
        }
        assert_eq!(FullTypeId::ShapeTensor.value(), 1005);
        assert_eq!(FullTypeId::LegacyVariant.value(), 10203);
        assert_eq!(FullTypeId::from_value(5), None);
        assert_eq!(
            FullTypeId::closest_name("shape_tensor"),
            Some("TFT_SHAPE_TENSOR")
        );
        assert_eq!(FullTypeId::closest_name("TFT_TENSR"), Some("TFT_TENSOR"));
        assert_eq!(FullTypeId::closest_name("xyzzy"), None);
    }

    #[test]
    fn the_notation_reads_and_prints() {
        let cases = [
            (
                "TFT_SHAPE_TENSOR[TFT_VAR{'out_type'}]",
                "TFT_SHAPE_TENSOR[TFT_VAR{'out_type'}]",
            ),
            (
                " TFT_ARRAY [ TFT_TENSOR [ TFT_VAR { \"T\" } ] , ] ",
                "TFT_ARRAY[TFT_TENSOR[TFT_VAR{'T'}]]",
            ),
            ("TFT_ARRAY[]", "TFT_ARRAY"),
            ("TFT_LITERAL[TFT_INT32]{-12}", "TFT_LITERAL[TFT_INT32]{-12}"),
            (
                "TFT_NAMED[TFT_ANY]{'a\\'b\\n'}",
                "TFT_NAMED[TFT_ANY]{'a\\'b\\n'}",
            ),
            ("TFT_UNSET", "TFT_UNSET"),
        ];
        for (text, printed) in cases {
            let ty: FullType = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(ty.to_string(), printed, "{text}");
            assert_eq!(printed.parse::<FullType>().unwrap(), ty, "{printed}");
        }
        let named: FullType = "TFT_NAMED[TFT_ANY]{'a\\'b\\n'}".parse().unwrap();
        assert_eq!(named.attr, Some(FullTypeAttr::String("a'b\n".into())));
    }

    #[test]
    fn bad_notation_says_where_and_how_to_fix_it() {
        let err = |text: &str| text.parse::<FullType>().unwrap_err();
        let e = err("TFT_VAR['T']");
        assert_eq!(
            (e.span.clone(), e.message.as_str()),
            (
                8..11,
                "expected a full type in the brackets, found a string"
            )
        );
        assert_eq!(
            e.help.as_deref(),
            Some("a type's attr is written in braces after its args: TFT_VAR{'..'}")
        );
        let e = err("TFT_VAR{T}");
        assert_eq!(
            (e.span.clone(), e.message.as_str()),
            (8..9, "unquoted attr 'T'")
        );
        assert_eq!(
            e.help.as_deref(),
            Some("a string attr is quoted: TFT_VAR{'T'}")
        );
        let e = err("shape_tensor");
        assert_eq!(
            e.to_string(),
            "unknown full type 'shape_tensor' (did you mean 'TFT_SHAPE_TENSOR'?)"
        );
        assert_eq!(
            err("TFT_ARRAY[TFT_TENSOR").message,
            "missing ']' to close the args"
        );
        assert_eq!(
            err("TFT_ARRAY[TFT_TENSOR TFT_INT32]").message,
            "expected ',' or ']' after an arg, found 'TFT_INT32'"
        );
        assert_eq!(err("TFT_VAR{'T'").message, "expected '}' to close the attr");
        assert_eq!(
            err("TFT_VAR{'T'}[TFT_ANY]").message,
            "unexpected '[TFT_ANY]' after the full type"
        );
        assert_eq!(err("").message, "missing full type");
        assert_eq!(
            err("TFT_LITERAL{99999999999999999999}").message,
            "'99999999999999999999' is not an integer of 64 bits"
        );
        // A message quotes at most a bounded part of what it was given.
        let long = "x".repeat(1 << 16);
        for text in [
            format!("TFT_{long}"),
            format!("TFT_VAR{{{long}}}"),
            format!("TFT_ANY {long}"),
            format!("TFT_LITERAL{{9{}}}", "9".repeat(1 << 16)),
        ] {
            let e = err(&text);
            let shown = e.to_string();
            assert!(
                shown.len() < 1000,
                "{} bytes: {}",
                shown.len(),
                &shown[..200]
            );
        }
        let deep = format!("{}TFT_ANY{}", "TFT_ARRAY[".repeat(100), "]".repeat(100));
        assert!(err(&deep).message.contains("nest deeper"));
    }
}
