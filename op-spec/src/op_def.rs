//! The op definition model: TensorFlow's `OpDef`, `OpDef.ArgDef` and `OpDef.AttrDef`.

use std::fmt;

use crate::DType;
use crate::attr_value::{AttrType, AttrValue, ListValue};
use crate::full_type::FullType;

/// Where an input's or output's element type comes from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ArgType {
    /// A fixed type written in the spec (`x: int32`).
    Fixed(DType),
    /// The value of a `type` attr (`x: T`).
    Attr(String),
    /// The values of a `list(type)` attr: the arg is a list of tensors with
    /// those types (`x: T` where `T: list(type)`).
    ListAttr(String),
}

/// An input or output of an op: TensorFlow's `OpDef.ArgDef`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ArgDef {
    /// The name, lower snake case.
    pub name: String,
    /// Documentation of this arg.
    pub description: String,
    /// The element type, or the attr it comes from.
    pub ty: ArgType,
    /// For `N * T`: the `int` attr holding the number of tensors.
    pub number_attr: Option<String>,
    /// Whether the arg is a reference (`Ref(T)`).
    pub is_ref: bool,
    /// TensorFlow's `experimental_full_type`: what the arg is beyond its
    /// dtype, for type inference and placement (`Shape`'s output is a
    /// `TFT_SHAPE_TENSOR`). Set on outputs by
    /// [`crate::OpDefBuilder::full_type`]; see [`crate::full_type`].
    pub full_type: Option<FullType>,
}

impl ArgDef {
    /// A single tensor of a fixed type.
    pub fn fixed(name: impl Into<String>, dtype: DType) -> ArgDef {
        ArgDef {
            name: name.into(),
            description: String::new(),
            ty: ArgType::Fixed(dtype),
            number_attr: None,
            is_ref: false,
            full_type: None,
        }
    }

    /// The `type` attr naming this arg's type, if any (`T` in `x: T` or `x: N * T`).
    pub fn type_attr(&self) -> Option<&str> {
        match &self.ty {
            ArgType::Attr(a) => Some(a),
            _ => None,
        }
    }

    /// The `list(type)` attr naming this arg's types, if any.
    pub fn type_list_attr(&self) -> Option<&str> {
        match &self.ty {
            ArgType::ListAttr(a) => Some(a),
            _ => None,
        }
    }

    /// The fixed type, if the spec wrote one.
    pub fn fixed_type(&self) -> Option<DType> {
        match self.ty {
            ArgType::Fixed(t) => Some(t),
            _ => None,
        }
    }

    /// Whether the arg is a list of tensors (`N * T` or a `list(type)` attr).
    pub fn is_list(&self) -> bool {
        self.number_attr.is_some() || matches!(self.ty, ArgType::ListAttr(_))
    }

    /// The arg written back as a spec string (`x: Ref(N * T)`), which parses
    /// to this arg again.
    pub fn to_spec(&self) -> String {
        let mut ty = String::new();
        if let Some(n) = &self.number_attr {
            ty.push_str(n);
            ty.push_str(" * ");
        }
        match &self.ty {
            ArgType::Fixed(t) => ty.push_str(t.spec_name()),
            ArgType::Attr(a) | ArgType::ListAttr(a) => ty.push_str(a),
        }
        if self.is_ref {
            format!("{}: Ref({ty})", self.name)
        } else {
            format!("{}: {ty}", self.name)
        }
    }
}

/// An attr of an op: TensorFlow's `OpDef.AttrDef`.
#[derive(Clone, Debug, PartialEq)]
pub struct AttrDef {
    /// The name.
    pub name: String,
    /// The type (`int`, `list(type)`).
    pub ty: AttrType,
    /// The default value, if the attr is optional.
    pub default_value: Option<AttrValue>,
    /// Documentation of this attr.
    pub description: String,
    /// For `int` attrs, the least value; for lists, the least length.
    pub minimum: Option<i64>,
    /// The values allowed: types for `type`/`list(type)` attrs, strings for
    /// `string`/`list(string)` attrs. Kept in spec order, duplicates included,
    /// as TensorFlow keeps them.
    pub allowed_values: Option<ListValue>,
}

impl AttrDef {
    /// An attr of type `ty` with no constraint and no default.
    pub fn new(name: impl Into<String>, ty: AttrType) -> AttrDef {
        AttrDef {
            name: name.into(),
            ty,
            default_value: None,
            description: String::new(),
            minimum: None,
            allowed_values: None,
        }
    }

    /// The allowed types, for a constrained `type` or `list(type)` attr.
    pub fn allowed_types(&self) -> Option<&[DType]> {
        match &self.allowed_values {
            Some(ListValue::Type(t)) => Some(t),
            _ => None,
        }
    }

    /// The allowed strings, for a constrained `string` or `list(string)` attr.
    pub fn allowed_strings(&self) -> Option<&[Vec<u8>]> {
        match &self.allowed_values {
            Some(ListValue::String(s)) => Some(s),
            _ => None,
        }
    }

    /// Whether `dtype` satisfies this attr's type constraint (any type does
    /// when there is none).
    pub fn allows_type(&self, dtype: DType) -> bool {
        self.allowed_types()
            .is_none_or(|allowed| allowed.contains(&dtype))
    }

    /// The attr written back as a spec string (`T: {float, int32} = DT_INT32`),
    /// which parses to this attr again.
    pub fn to_spec(&self) -> String {
        let kind = match &self.allowed_values {
            Some(ListValue::Type(types)) => {
                let names: Vec<&str> = types.iter().map(|t| t.spec_name()).collect();
                format!("{{{}}}", names.join(", "))
            }
            Some(ListValue::String(strings)) => {
                let quoted: Vec<String> = strings
                    .iter()
                    .map(|s| format!("'{}'", crate::pbtxt::c_escape(s)))
                    .collect();
                format!("{{{}}}", quoted.join(", "))
            }
            _ => self.ty.kind.name().to_owned(),
        };
        let mut spec = if self.ty.is_list {
            format!("{}: list({kind})", self.name)
        } else {
            format!("{}: {kind}", self.name)
        };
        if let Some(min) = self.minimum {
            spec.push_str(&format!(" >= {min}"));
        }
        if let Some(default) = &self.default_value {
            spec.push_str(" = ");
            spec.push_str(&crate::pbtxt::attr_value_text(default));
        }
        spec
    }
}

/// The deprecation of an op: TensorFlow's `OpDeprecation`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Deprecation {
    /// The first GraphDef version in which the op is no longer available.
    pub version: i32,
    /// What to use instead.
    pub explanation: String,
}

/// The definition of an op: its interface, independent of any kernel.
/// TensorFlow's `OpDef`.
///
/// Build one from spec strings with [`crate::OpDefBuilder`]. It prints
/// (`Display`) in TensorFlow's text format, as [`crate::pbtxt`] writes it:
/// `{}` on one line (protobuf's `ShortDebugString`, for logs and
/// messages), `{:#}` over indented lines, one field a line, as in
/// TensorFlow's `ops.pbtxt` (protobuf's `DebugString`: the op's fields
/// without an enclosing `op { }`, every line ending in a newline).
///
/// ```
/// use op_spec::OpDefBuilder;
///
/// let op = OpDefBuilder::new("ZeroOut")
///     .attr("T: {float, int32} = DT_INT32")
///     .input("to_zero: T")
///     .output("zeroed: T")
///     .build()
///     .unwrap();
/// assert_eq!(
///     op.to_string(),
///     "name: \"ZeroOut\" \
///      input_arg { name: \"to_zero\" type_attr: \"T\" } \
///      output_arg { name: \"zeroed\" type_attr: \"T\" } \
///      attr { name: \"T\" type: \"type\" default_value { type: DT_INT32 } \
///      allowed_values { list { type: DT_FLOAT type: DT_INT32 } } }"
/// );
/// assert_eq!(
///     format!("{op:#}"),
///     r#"name: "ZeroOut"
/// input_arg {
///   name: "to_zero"
///   type_attr: "T"
/// }
/// output_arg {
///   name: "zeroed"
///   type_attr: "T"
/// }
/// attr {
///   name: "T"
///   type: "type"
///   default_value {
///     type: DT_INT32
///   }
///   allowed_values {
///     list {
///       type: DT_FLOAT
///       type: DT_INT32
///     }
///   }
/// }
/// "#
/// );
/// ```
///
/// `Debug` shows every field, string attr values as strings (see
/// [`AttrValue`]).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct OpDef {
    /// The op's name, CamelCase, optionally namespaced (`Examples>SimpleHashTable`).
    pub name: String,
    /// The inputs, in order.
    pub inputs: Vec<ArgDef>,
    /// The outputs, in order.
    pub outputs: Vec<ArgDef>,
    /// The attrs, in spec order.
    pub attrs: Vec<AttrDef>,
    /// Set when the op is deprecated.
    pub deprecation: Option<Deprecation>,
    /// One-line summary: the docs' first paragraph, its lines joined by spaces.
    pub summary: String,
    /// The rest of the docs.
    pub description: String,
    /// `op(a, b) == op(b, a)` for its two inputs.
    pub is_commutative: bool,
    /// The op adds up its inputs (and so may be rewritten as an aggregation).
    pub is_aggregate: bool,
    /// The op has state or side effects: never deduplicated or cached.
    pub is_stateful: bool,
    /// The op may read uninitialized inputs (variable initializers).
    pub allows_uninitialized_input: bool,
    /// The op communicates across devices.
    pub is_distributed_communication: bool,
}

impl fmt::Display for OpDef {
    /// TensorFlow's text format: `{}` on one line, `{:#}` over indented
    /// lines (see [`OpDef`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if f.alternate() {
            f.write_str(&crate::pbtxt::op_def_to_string(self))
        } else {
            f.write_str(&crate::pbtxt::op_def_to_short_string(self))
        }
    }
}

impl OpDef {
    /// The attr named `name`.
    pub fn attr(&self, name: &str) -> Option<&AttrDef> {
        self.attrs.iter().find(|a| a.name == name)
    }

    /// The input named `name`.
    pub fn input(&self, name: &str) -> Option<&ArgDef> {
        self.inputs.iter().find(|a| a.name == name)
    }

    /// The output named `name`.
    pub fn output(&self, name: &str) -> Option<&ArgDef> {
        self.outputs.iter().find(|a| a.name == name)
    }

    /// Whether the attr `name` is set from the inputs when a node is built
    /// (it names an input's type or list length), so callers never give it.
    pub fn is_inferred_attr(&self, name: &str) -> bool {
        self.inputs.iter().any(|arg| {
            arg.number_attr.as_deref() == Some(name)
                || arg.type_attr() == Some(name)
                || arg.type_list_attr() == Some(name)
        })
    }
}
