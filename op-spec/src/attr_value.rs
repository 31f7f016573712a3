//! Attr values and attr types: what an attr may hold, and what it holds.

use std::fmt;

use crate::DType;

/// The kind of value an attr holds, without the `list(...)` wrapper.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum AttrKind {
    /// `string`: a byte string, not required to be UTF-8.
    String,
    /// `int`: a signed 64-bit integer.
    Int,
    /// `float`: a 32-bit float.
    Float,
    /// `bool`.
    Bool,
    /// `type`: a [`DType`].
    Type,
    /// `shape`: a [`ShapeValue`], possibly partially known.
    Shape,
    /// `tensor`: a [`TensorValue`] constant.
    Tensor,
    /// `func`: a function reference ([`FuncValue`]).
    Func,
}

impl AttrKind {
    /// Every kind, in the order TensorFlow's parser tries them.
    pub const ALL: [AttrKind; 8] = [
        AttrKind::String,
        AttrKind::Int,
        AttrKind::Float,
        AttrKind::Bool,
        AttrKind::Type,
        AttrKind::Shape,
        AttrKind::Tensor,
        AttrKind::Func,
    ];

    /// The kind's name in specs and in `AttrDef.type` (`int`).
    pub fn name(self) -> &'static str {
        match self {
            AttrKind::String => "string",
            AttrKind::Int => "int",
            AttrKind::Float => "float",
            AttrKind::Bool => "bool",
            AttrKind::Type => "type",
            AttrKind::Shape => "shape",
            AttrKind::Tensor => "tensor",
            AttrKind::Func => "func",
        }
    }

    /// The field of TensorFlow's `AttrValue` (and `ListValue`) that holds this kind.
    pub fn field_name(self) -> &'static str {
        match self {
            AttrKind::String => "s",
            AttrKind::Int => "i",
            AttrKind::Float => "f",
            AttrKind::Bool => "b",
            AttrKind::Type => "type",
            AttrKind::Shape => "shape",
            AttrKind::Tensor => "tensor",
            AttrKind::Func => "func",
        }
    }
}

/// An attr's type: a kind, or a list of that kind (`list(int)`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct AttrType {
    /// The element kind.
    pub kind: AttrKind,
    /// Whether the attr holds a list of `kind`.
    pub is_list: bool,
}

impl AttrType {
    /// A single value of `kind`.
    pub const fn scalar(kind: AttrKind) -> AttrType {
        AttrType {
            kind,
            is_list: false,
        }
    }

    /// A list of `kind`.
    pub const fn list(kind: AttrKind) -> AttrType {
        AttrType {
            kind,
            is_list: true,
        }
    }

    /// Parses TensorFlow's `AttrDef.type` string (`int`, `list(type)`).
    pub fn from_type_string(s: &str) -> Option<AttrType> {
        let (inner, is_list) = match s.strip_prefix("list(").and_then(|r| r.strip_suffix(')')) {
            Some(inner) => (inner, true),
            None => (s, false),
        };
        let kind = AttrKind::ALL.into_iter().find(|k| k.name() == inner)?;
        Some(AttrType { kind, is_list })
    }
}

impl fmt::Display for AttrType {
    /// Writes TensorFlow's `AttrDef.type` string: `int`, `list(type)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_list {
            write!(f, "list({})", self.kind.name())
        } else {
            f.write_str(self.kind.name())
        }
    }
}

/// One dimension of a [`ShapeValue`]: TensorFlow's `TensorShapeProto.Dim`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct DimValue {
    /// The size; -1 means unknown.
    pub size: i64,
    /// An optional name for the dimension.
    pub name: String,
}

/// A shape as an attr value: TensorFlow's `TensorShapeProto`, which may be
/// partially known (a dim of -1) or of unknown rank.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct ShapeValue {
    /// The dimensions, outermost first.
    pub dims: Vec<DimValue>,
    /// Whether the rank is unknown (then `dims` is empty).
    pub unknown_rank: bool,
}

impl ShapeValue {
    /// A shape of known rank from sizes (-1 for an unknown dimension).
    pub fn from_sizes(sizes: &[i64]) -> ShapeValue {
        ShapeValue {
            dims: sizes
                .iter()
                .map(|&size| DimValue {
                    size,
                    name: String::new(),
                })
                .collect(),
            unknown_rank: false,
        }
    }

    /// A shape of unknown rank.
    pub fn unknown_rank() -> ShapeValue {
        ShapeValue {
            dims: Vec::new(),
            unknown_rank: true,
        }
    }

    /// Whether a tensor of shape `dims` has this shape: the rank is unknown,
    /// or it is `dims.len()` and every known dimension equals the size in
    /// `dims` (TensorFlow's `PartialTensorShape::IsCompatibleWith` on a
    /// fully defined shape).
    ///
    /// ```
    /// use op_spec::ShapeValue;
    /// assert!(ShapeValue::from_sizes(&[-1, 3]).is_compatible_with(&[5, 3]));
    /// assert!(!ShapeValue::from_sizes(&[4]).is_compatible_with(&[1]));
    /// assert!(!ShapeValue::from_sizes(&[4, 2]).is_compatible_with(&[8, 1]));
    /// assert!(ShapeValue::unknown_rank().is_compatible_with(&[8, 1]));
    /// ```
    pub fn is_compatible_with(&self, dims: &[usize]) -> bool {
        self.unknown_rank
            || (self.dims.len() == dims.len()
                && self
                    .dims
                    .iter()
                    .zip(dims)
                    .all(|(d, &size)| d.size == -1 || u64::try_from(d.size) == Ok(size as u64)))
    }

    /// The most dimensions a shape may have: TensorFlow's
    /// `TensorShape::MaxDimensions()` (255 encodes an unknown rank there).
    pub const MAX_DIMS: usize = 254;

    /// Checks that this is a shape at all, by the rules of TensorFlow's
    /// `PartialTensorShape::IsValidShape`, in its order: an unknown rank has
    /// no dimensions, there are at most [`ShapeValue::MAX_DIMS`] of them, and
    /// each is -1 (unknown) or at least 0.
    ///
    /// ```
    /// use op_spec::ShapeValue;
    /// assert!(ShapeValue::from_sizes(&[-1, 0, 3]).validate().is_ok());
    /// let err = ShapeValue::from_sizes(&[2, -5]).validate().unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "dimension 1 of [2,-5] is -5, but a dimension must be -1 (unknown) or at least 0"
    /// );
    /// ```
    pub fn validate(&self) -> Result<(), ShapeError> {
        if self.unknown_rank && !self.dims.is_empty() {
            return Err(ShapeError::UnknownRankWithDims {
                shape: self.to_string(),
                rank: self.dims.len(),
            });
        }
        if self.dims.len() > Self::MAX_DIMS {
            return Err(ShapeError::TooManyDims {
                rank: self.dims.len(),
            });
        }
        if let Some((index, dim)) = self.dims.iter().enumerate().find(|(_, d)| d.size < -1) {
            return Err(ShapeError::DimBelowMinusOne {
                shape: self.to_string(),
                index,
                size: dim.size,
            });
        }
        Ok(())
    }
}

/// Why a [`ShapeValue`] is not a shape (see [`ShapeValue::validate`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShapeError {
    /// The rank is unknown, yet dimensions are given.
    UnknownRankWithDims {
        /// The shape, summarized (`<unknown>[2]`).
        shape: String,
        /// How many dimensions are given.
        rank: usize,
    },
    /// More than [`ShapeValue::MAX_DIMS`] dimensions.
    TooManyDims {
        /// How many dimensions are given.
        rank: usize,
    },
    /// A dimension below -1, the one negative size that means something.
    DimBelowMinusOne {
        /// The shape, summarized (`[2,-5]`).
        shape: String,
        /// The position of the first such dimension, outermost first.
        index: usize,
        /// Its size.
        size: i64,
    },
}

impl fmt::Display for ShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShapeError::UnknownRankWithDims { shape, rank } => write!(
                f,
                "{shape} has an unknown rank but {rank} dimension(s): a shape of unknown rank must have none"
            ),
            ShapeError::TooManyDims { rank } => write!(
                f,
                "it has {rank} dimensions, but a shape has at most {}",
                ShapeValue::MAX_DIMS
            ),
            ShapeError::DimBelowMinusOne { shape, index, size } => write!(
                f,
                "dimension {index} of {shape} is {size}, but a dimension must be -1 (unknown) or at least 0"
            ),
        }
    }
}

impl std::error::Error for ShapeError {}

impl fmt::Display for ShapeValue {
    /// Writes the shape as TensorFlow summarizes it: `[2,?,3]`, `<unknown>`.
    /// Sizes that are not shapes show as written (`[-5]`, `<unknown>[2]`), so
    /// that errors about them can name them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.unknown_rank {
            f.write_str("<unknown>")?;
            if self.dims.is_empty() {
                return Ok(());
            }
        }
        f.write_str("[")?;
        // Capped for messages: a shape in a file may have any rank.
        for (i, d) in self.dims.iter().take(crate::quote::DIMS_LIMIT).enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            if d.size == -1 {
                f.write_str("?")?;
            } else {
                write!(f, "{}", d.size)?;
            }
        }
        if self.dims.len() > crate::quote::DIMS_LIMIT {
            write!(f, ",... (rank {})", self.dims.len())?;
        }
        f.write_str("]")
    }
}

/// A tensor constant as an attr value: TensorFlow's `TensorProto`, with its
/// value fields as they were written (the runtime turns it into a tensor).
///
/// `Debug` shows `string_val` as strings (see [`AttrValue`]'s).
#[derive(Clone, PartialEq, Default)]
pub struct TensorValue {
    /// The element type. `None` only while parsing; a validated value has one.
    pub dtype: Option<DType>,
    /// The shape, when given (`None` prints no `tensor_shape` field).
    pub shape: Option<ShapeValue>,
    /// `version_number`.
    pub version_number: i32,
    /// `tensor_content`: the raw little-endian bytes of all elements.
    pub tensor_content: Vec<u8>,
    /// `half_val` (also bfloat16): the 16-bit patterns, widened to i32.
    pub half_val: Vec<i32>,
    /// `float_val`.
    pub float_val: Vec<f32>,
    /// `double_val`.
    pub double_val: Vec<f64>,
    /// `int_val`: int32, int16, int8, uint16, uint8 and qint types.
    pub int_val: Vec<i32>,
    /// `string_val`.
    pub string_val: Vec<Vec<u8>>,
    /// `scomplex_val`: complex64 as (real, imag) pairs.
    pub scomplex_val: Vec<f32>,
    /// `int64_val`.
    pub int64_val: Vec<i64>,
    /// `bool_val`.
    pub bool_val: Vec<bool>,
    /// `dcomplex_val`: complex128 as (real, imag) pairs.
    pub dcomplex_val: Vec<f64>,
    /// `uint32_val`.
    pub uint32_val: Vec<u32>,
    /// `uint64_val`.
    pub uint64_val: Vec<u64>,
}

/// A function reference: TensorFlow's `NameAttrList`, reduced to its name
/// (attrs of function references are not supported).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct FuncValue {
    /// The function's name.
    pub name: String,
}

/// The values of a list attr, all of one kind.
///
/// `Debug` shows byte strings as strings (see [`AttrValue`]'s).
#[derive(Clone, PartialEq)]
pub enum ListValue {
    /// `list(string)`.
    String(Vec<Vec<u8>>),
    /// `list(int)`.
    Int(Vec<i64>),
    /// `list(float)`.
    Float(Vec<f32>),
    /// `list(bool)`.
    Bool(Vec<bool>),
    /// `list(type)`.
    Type(Vec<DType>),
    /// `list(shape)`.
    Shape(Vec<ShapeValue>),
    /// `list(tensor)`.
    Tensor(Vec<TensorValue>),
    /// `list(func)`.
    Func(Vec<FuncValue>),
}

impl ListValue {
    /// An empty list of `kind`.
    pub fn empty(kind: AttrKind) -> ListValue {
        match kind {
            AttrKind::String => ListValue::String(Vec::new()),
            AttrKind::Int => ListValue::Int(Vec::new()),
            AttrKind::Float => ListValue::Float(Vec::new()),
            AttrKind::Bool => ListValue::Bool(Vec::new()),
            AttrKind::Type => ListValue::Type(Vec::new()),
            AttrKind::Shape => ListValue::Shape(Vec::new()),
            AttrKind::Tensor => ListValue::Tensor(Vec::new()),
            AttrKind::Func => ListValue::Func(Vec::new()),
        }
    }

    /// The kind of the elements.
    pub fn kind(&self) -> AttrKind {
        match self {
            ListValue::String(_) => AttrKind::String,
            ListValue::Int(_) => AttrKind::Int,
            ListValue::Float(_) => AttrKind::Float,
            ListValue::Bool(_) => AttrKind::Bool,
            ListValue::Type(_) => AttrKind::Type,
            ListValue::Shape(_) => AttrKind::Shape,
            ListValue::Tensor(_) => AttrKind::Tensor,
            ListValue::Func(_) => AttrKind::Func,
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        match self {
            ListValue::String(v) => v.len(),
            ListValue::Int(v) => v.len(),
            ListValue::Float(v) => v.len(),
            ListValue::Bool(v) => v.len(),
            ListValue::Type(v) => v.len(),
            ListValue::Shape(v) => v.len(),
            ListValue::Tensor(v) => v.len(),
            ListValue::Func(v) => v.len(),
        }
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The value of an attr: TensorFlow's `AttrValue`.
///
/// ```
/// use op_spec::{AttrValue, DType};
/// let v = AttrValue::from(DType::I32);
/// assert_eq!(v.to_string(), "int32");
/// assert_eq!(AttrValue::from(vec![2i64, 3]).to_string(), "[2, 3]");
/// ```
///
/// `Debug` is the derived form, except that a byte string shows as a
/// string: Rust's quoted `str` when it is UTF-8, else a byte string literal
/// (`b"\xff"`). Two different values never print alike.
///
/// ```
/// use op_spec::AttrValue;
/// assert_eq!(format!("{:?}", AttrValue::from("apple")), r#"String("apple")"#);
/// assert_eq!(format!("{:?}", AttrValue::String(vec![b'a', 0xff])), r#"String(b"a\xff")"#);
/// assert_eq!(format!("{:?}", AttrValue::from(vec!["a", "b"])), r#"List(String(["a", "b"]))"#);
/// ```
#[derive(Clone, PartialEq)]
pub enum AttrValue {
    /// A byte string.
    String(Vec<u8>),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f32),
    /// A bool.
    Bool(bool),
    /// A data type.
    Type(DType),
    /// A shape.
    Shape(ShapeValue),
    /// A tensor constant (boxed: it is much larger than the other variants).
    Tensor(Box<TensorValue>),
    /// A function reference.
    Func(FuncValue),
    /// A list of values of one kind.
    List(ListValue),
}

impl AttrValue {
    /// The type of this value (`int`, `list(type)`).
    pub fn attr_type(&self) -> AttrType {
        match self {
            AttrValue::String(_) => AttrType::scalar(AttrKind::String),
            AttrValue::Int(_) => AttrType::scalar(AttrKind::Int),
            AttrValue::Float(_) => AttrType::scalar(AttrKind::Float),
            AttrValue::Bool(_) => AttrType::scalar(AttrKind::Bool),
            AttrValue::Type(_) => AttrType::scalar(AttrKind::Type),
            AttrValue::Shape(_) => AttrType::scalar(AttrKind::Shape),
            AttrValue::Tensor(_) => AttrType::scalar(AttrKind::Tensor),
            AttrValue::Func(_) => AttrType::scalar(AttrKind::Func),
            AttrValue::List(l) => AttrType::list(l.kind()),
        }
    }

    /// Whether this value can be held by an attr of type `ty`. An empty list
    /// fits every list type, as in TensorFlow.
    pub fn has_type(&self, ty: AttrType) -> bool {
        match self {
            AttrValue::List(l) if l.is_empty() => ty.is_list,
            _ => self.attr_type() == ty,
        }
    }
}

macro_rules! attr_value_from {
    ($($t:ty => $variant:ident $(($conv:expr))?),* $(,)?) => {$(
        impl From<$t> for AttrValue {
            fn from(v: $t) -> AttrValue {
                AttrValue::$variant($($conv)?(v))
            }
        }
    )*};
}

attr_value_from! {
    i64 => Int,
    f32 => Float,
    bool => Bool,
    DType => Type,
    ShapeValue => Shape,
    TensorValue => Tensor((Box::new)),
    Vec<u8> => String,
    &str => String((|s: &str| s.as_bytes().to_vec())),
    String => String((String::into_bytes)),
    ListValue => List,
    Vec<i64> => List((ListValue::Int)),
    Vec<f32> => List((ListValue::Float)),
    Vec<bool> => List((ListValue::Bool)),
    Vec<DType> => List((ListValue::Type)),
    Vec<ShapeValue> => List((ListValue::Shape)),
}

impl From<Vec<String>> for AttrValue {
    fn from(v: Vec<String>) -> AttrValue {
        AttrValue::List(ListValue::String(
            v.into_iter().map(String::into_bytes).collect(),
        ))
    }
}

impl From<Vec<&str>> for AttrValue {
    fn from(v: Vec<&str>) -> AttrValue {
        AttrValue::List(ListValue::String(
            v.into_iter().map(|s| s.as_bytes().to_vec()).collect(),
        ))
    }
}

/// Byte strings in `Debug` output: a `str`'s `Debug` when they are UTF-8
/// (`"apple"`), else a byte string literal (`b"a\xff"`), instead of the
/// derived list of numbers. Distinct bytes print distinctly: tests compare
/// values by their `Debug` text.
struct DebugBytes<'a>(&'a [u8]);

impl fmt::Debug for DebugBytes<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match std::str::from_utf8(self.0) {
            Ok(s) => fmt::Debug::fmt(s, f),
            Err(_) => write!(f, "b\"{}\"", self.0.escape_ascii()),
        }
    }
}

/// A list of byte strings in `Debug` output, each as [`DebugBytes`].
struct DebugByteList<'a>(&'a [Vec<u8>]);

impl fmt::Debug for DebugByteList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|s| DebugBytes(s)))
            .finish()
    }
}

impl fmt::Debug for AttrValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AttrValue::String(s) => f.debug_tuple("String").field(&DebugBytes(s)).finish(),
            AttrValue::Int(v) => f.debug_tuple("Int").field(v).finish(),
            AttrValue::Float(v) => f.debug_tuple("Float").field(v).finish(),
            AttrValue::Bool(v) => f.debug_tuple("Bool").field(v).finish(),
            AttrValue::Type(v) => f.debug_tuple("Type").field(v).finish(),
            AttrValue::Shape(v) => f.debug_tuple("Shape").field(v).finish(),
            AttrValue::Tensor(v) => f.debug_tuple("Tensor").field(v).finish(),
            AttrValue::Func(v) => f.debug_tuple("Func").field(v).finish(),
            AttrValue::List(v) => f.debug_tuple("List").field(v).finish(),
        }
    }
}

impl fmt::Debug for ListValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ListValue::String(v) => f.debug_tuple("String").field(&DebugByteList(v)).finish(),
            ListValue::Int(v) => f.debug_tuple("Int").field(v).finish(),
            ListValue::Float(v) => f.debug_tuple("Float").field(v).finish(),
            ListValue::Bool(v) => f.debug_tuple("Bool").field(v).finish(),
            ListValue::Type(v) => f.debug_tuple("Type").field(v).finish(),
            ListValue::Shape(v) => f.debug_tuple("Shape").field(v).finish(),
            ListValue::Tensor(v) => f.debug_tuple("Tensor").field(v).finish(),
            ListValue::Func(v) => f.debug_tuple("Func").field(v).finish(),
        }
    }
}

impl fmt::Debug for TensorValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Destructured, so that a field added later must be added here.
        let TensorValue {
            dtype,
            shape,
            version_number,
            tensor_content,
            half_val,
            float_val,
            double_val,
            int_val,
            string_val,
            scomplex_val,
            int64_val,
            bool_val,
            dcomplex_val,
            uint32_val,
            uint64_val,
        } = self;
        f.debug_struct("TensorValue")
            .field("dtype", dtype)
            .field("shape", shape)
            .field("version_number", version_number)
            // Raw element bytes, not text: numbers say more.
            .field("tensor_content", tensor_content)
            .field("half_val", half_val)
            .field("float_val", float_val)
            .field("double_val", double_val)
            .field("int_val", int_val)
            .field("string_val", &DebugByteList(string_val))
            .field("scomplex_val", scomplex_val)
            .field("int64_val", int64_val)
            .field("bool_val", bool_val)
            .field("dcomplex_val", dcomplex_val)
            .field("uint32_val", uint32_val)
            .field("uint64_val", uint64_val)
            .finish()
    }
}

/// Writes bytes as a quoted string, escaping what is not printable ASCII.
pub(crate) fn write_quoted(f: &mut impl fmt::Write, bytes: &[u8], quote: char) -> fmt::Result {
    f.write_char(quote)?;
    f.write_str(&crate::pbtxt::c_escape(bytes))?;
    f.write_char(quote)
}

/// Writes `[a, b, c]`, each item by `write_item`.
fn write_list<T>(
    f: &mut fmt::Formatter<'_>,
    items: &[T],
    write_item: impl Fn(&mut fmt::Formatter<'_>, &T) -> fmt::Result,
) -> fmt::Result {
    f.write_str("[")?;
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write_item(f, item)?;
    }
    f.write_str("]")
}

fn write_tensor_summary(f: &mut fmt::Formatter<'_>, t: &TensorValue) -> fmt::Result {
    match t.dtype {
        Some(dt) => write!(f, "<tensor {dt}>"),
        None => f.write_str("<tensor>"),
    }
}

impl fmt::Display for AttrValue {
    /// Summarizes the value in the style of TensorFlow's `SummarizeAttrValue`:
    /// `"foo"`, `3`, `1.5`, `true`, `int32`, `[2,?]`, `[1, 2]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AttrValue::String(s) => write_quoted(f, s, '"'),
            AttrValue::Int(i) => write!(f, "{i}"),
            AttrValue::Float(x) => f.write_str(&crate::pbtxt::format_float(*x)),
            AttrValue::Bool(b) => write!(f, "{b}"),
            AttrValue::Type(t) => write!(f, "{t}"),
            AttrValue::Shape(s) => write!(f, "{s}"),
            AttrValue::Tensor(t) => write_tensor_summary(f, t),
            AttrValue::Func(func) => write!(f, "{}[]", func.name),
            AttrValue::List(list) => match list {
                ListValue::String(v) => write_list(f, v, |f, s| write_quoted(f, s, '"')),
                ListValue::Int(v) => write_list(f, v, |f, i| write!(f, "{i}")),
                ListValue::Float(v) => {
                    write_list(f, v, |f, x| f.write_str(&crate::pbtxt::format_float(*x)))
                }
                ListValue::Bool(v) => write_list(f, v, |f, b| write!(f, "{b}")),
                ListValue::Type(v) => write_list(f, v, |f, t| write!(f, "{t}")),
                ListValue::Shape(v) => write_list(f, v, |f, s| write!(f, "{s}")),
                ListValue::Tensor(v) => write_list(f, v, write_tensor_summary),
                ListValue::Func(v) => write_list(f, v, |f, func| write!(f, "{}[]", func.name)),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attr_type_strings_round_trip() {
        for kind in AttrKind::ALL {
            for ty in [AttrType::scalar(kind), AttrType::list(kind)] {
                assert_eq!(AttrType::from_type_string(&ty.to_string()), Some(ty));
            }
        }
        assert_eq!(AttrType::from_type_string("list(list(int))"), None);
        assert_eq!(AttrType::from_type_string("integer"), None);
    }

    #[test]
    fn empty_lists_fit_any_list_type() {
        let empty = AttrValue::List(ListValue::empty(AttrKind::Int));
        assert!(empty.has_type(AttrType::list(AttrKind::Type)));
        assert!(!empty.has_type(AttrType::scalar(AttrKind::Int)));
        assert!(AttrValue::Int(1).has_type(AttrType::scalar(AttrKind::Int)));
        assert!(!AttrValue::Int(1).has_type(AttrType::scalar(AttrKind::Float)));
    }

    #[test]
    fn display_summaries() {
        assert_eq!(AttrValue::from("a\"b").to_string(), "\"a\\\"b\"");
        assert_eq!(AttrValue::Float(1.0).to_string(), "1");
        assert_eq!(
            AttrValue::from(vec![DType::F32, DType::I32]).to_string(),
            "[float, int32]"
        );
        assert_eq!(
            AttrValue::Shape(ShapeValue::from_sizes(&[2, -1])).to_string(),
            "[2,?]"
        );
        assert_eq!(
            AttrValue::Shape(ShapeValue::unknown_rank()).to_string(),
            "<unknown>"
        );
        // Sizes that are not shapes show as written, as TensorFlow's
        // DebugString of a TensorShapeProto shows them.
        assert_eq!(ShapeValue::from_sizes(&[-5, 1]).to_string(), "[-5,1]");
        let mut unknown = ShapeValue::from_sizes(&[2, -1]);
        unknown.unknown_rank = true;
        assert_eq!(unknown.to_string(), "<unknown>[2,?]");
    }

    #[test]
    fn shapes_are_checked_as_tensorflow_checks_them() {
        for ok in [
            ShapeValue::from_sizes(&[]),
            ShapeValue::from_sizes(&[-1, 0, i64::MAX]),
            ShapeValue::unknown_rank(),
            ShapeValue::from_sizes(&[1; ShapeValue::MAX_DIMS]),
        ] {
            assert_eq!(ok.validate(), Ok(()), "{ok}");
        }
        assert_eq!(
            ShapeValue::from_sizes(&[-5, i64::MIN]).validate(),
            Err(ShapeError::DimBelowMinusOne {
                shape: "[-5,-9223372036854775808]".into(),
                index: 0,
                size: -5,
            })
        );
        assert_eq!(
            ShapeValue::from_sizes(&[3, -2]).validate(),
            Err(ShapeError::DimBelowMinusOne {
                shape: "[3,-2]".into(),
                index: 1,
                size: -2,
            })
        );
        assert_eq!(
            ShapeValue::from_sizes(&[1; ShapeValue::MAX_DIMS + 1]).validate(),
            Err(ShapeError::TooManyDims { rank: 255 })
        );
        // TensorFlow's order: the rank before the sizes.
        let mut long_and_bad = vec![1; 300];
        long_and_bad[0] = -7;
        assert_eq!(
            ShapeValue::from_sizes(&long_and_bad).validate(),
            Err(ShapeError::TooManyDims { rank: 300 })
        );
        let mut unknown = ShapeValue::from_sizes(&[4]);
        unknown.unknown_rank = true;
        assert_eq!(
            unknown.validate(),
            Err(ShapeError::UnknownRankWithDims {
                shape: "<unknown>[4]".into(),
                rank: 1,
            })
        );
    }
}
