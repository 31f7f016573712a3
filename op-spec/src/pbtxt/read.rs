//! Reading TensorFlow's text format for op definitions: an `OpList` as in
//! TensorFlow's `ops.pbtxt` (or one `OpDef`'s fields) into [`OpDef`]s, the
//! inverse of the writer in [`crate::pbtxt`].
//!
//! The text is parsed by the generic protobuf-text reader
//! ([`crate::text::parse_message`]) and then decoded against `OpDef`'s
//! schema here, field by field. Every op read is then checked as
//! TensorFlow's `ValidateOpDef` checks one (names, attr types, minimums,
//! allowed values, defaults that satisfy their attr, args whose types name
//! attrs of the right type), so that what comes back is an op that
//! [`crate::OpDefBuilder`] could have built. An error names the op and the
//! field, with the line and column of the text.
//!
//! One of `OpDef`'s fields has no place in op-spec's model and is read and
//! dropped: an empty `handle_data`. The others it cannot hold
//! (`control_output`, a non-empty `handle_data`, an `AttrValue`'s
//! `placeholder`) are errors, not silently lost. An arg's
//! `experimental_full_type` (TensorFlow's type-inference annotation, on
//! `Shape`'s output in its own `ops.pbtxt`) is read into
//! [`ArgDef::full_type`] and checked as the builder checks one: its type
//! variables name `type` or `list(type)` attrs of the op.

use std::collections::HashSet;
use std::fmt;

use crate::attr_value::{AttrKind, AttrType, ListValue};
use crate::full_type::{self, Places};
use crate::op_def::{ArgDef, ArgType, AttrDef, Deprecation};
use crate::spec::AttrScope;
use crate::text::{self, TextError, TextField, TextNode};
use crate::validate::validate_attr_value;
use crate::{AttrValue, DType, FullType, FullTypeAttr, FullTypeId, OpDef, is_valid_op_name};

/// Why a text could not be read as op definitions: where, in which op and
/// field, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpListError {
    /// The line of the text (from 1).
    pub line: usize,
    /// The column in that line, in characters (from 1).
    pub column: usize,
    /// The op the problem is in: its name, or `#N` (from 1) when it has
    /// none yet. `None` for a problem outside any op (a syntax error the
    /// text reader found, or a field of the `OpList` itself).
    pub op: Option<String>,
    /// The field the problem is in, from the op down: `attr 'T' >
    /// default_value`, `input_arg 'x'`, `name`. Empty for the op itself.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for OpListError {
    /// `line 12, column 5: op 'ZeroOut', attr 'T' > default_value: expected
    /// a quoted string`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}: ", self.line, self.column)?;
        if let Some(op) = &self.op {
            if op.starts_with('#') {
                write!(f, "op {op}")?;
            } else {
                write!(f, "op '{op}'")?;
            }
            if !self.field.is_empty() {
                write!(f, ", {}", self.field)?;
            }
            f.write_str(": ")?;
        } else if !self.field.is_empty() {
            write!(f, "{}: ", self.field)?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for OpListError {}

/// Reads an `OpList` in text format (as in TensorFlow's `ops.pbtxt`, and as
/// [`crate::pbtxt::op_list_to_string`] writes it) into its ops, in order.
///
/// ```
/// use op_spec::{pbtxt, OpDefBuilder};
/// let op = OpDefBuilder::new("ZeroOut")
///     .attr("T: {float, int32} = DT_INT32")
///     .input("to_zero: T")
///     .output("zeroed: T")
///     .build()
///     .unwrap();
/// let text = pbtxt::op_list_to_string([&op]);
/// assert_eq!(pbtxt::parse_op_list(&text).unwrap(), vec![op]);
///
/// let err = pbtxt::parse_op_list("op { name: 'A' attr { name: 'T' type: 'typ' } }").unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "line 1, column 39: op 'A', attr 'T' > type: unknown attr type 'typ' (did you mean 'type'?)"
/// );
/// ```
pub fn parse_op_list(text: &str) -> std::result::Result<Vec<OpDef>, OpListError> {
    let message = text::parse_message(text).map_err(|e| syntax_error(text, e))?;
    let reader = Reader { text };
    let mut ops = Vec::new();
    for field in reader.fields(message.root(), "OpList", &Place::default())? {
        match field.name {
            "op" => {
                let place = Place {
                    op: Some(format!("#{}", ops.len() + 1)),
                    field: String::new(),
                };
                ops.push(reader.op_def(field.value, field.pos, place)?);
            }
            _ => return Err(reader.unknown_field(&field, "OpList", &["op"], &Place::default())),
        }
    }
    Ok(ops)
}

/// Reads the fields of one `OpDef` in text format, without an enclosing
/// `op { }` (as [`crate::pbtxt::op_def_to_string`] writes them).
pub fn parse_op_def(text: &str) -> std::result::Result<OpDef, OpListError> {
    let message = text::parse_message(text).map_err(|e| syntax_error(text, e))?;
    let reader = Reader { text };
    let place = Place {
        op: Some("#1".to_owned()),
        field: String::new(),
    };
    reader.op_def(message.root(), 0, place)
}

/// The line and column (both from 1, the column in chars) of byte `pos`.
fn line_column(text: &str, pos: usize) -> (usize, usize) {
    let mut pos = pos.min(text.len());
    while !text.is_char_boundary(pos) {
        pos -= 1;
    }
    let before = &text[..pos];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

fn syntax_error(text: &str, e: TextError) -> OpListError {
    let (line, column) = line_column(text, e.pos);
    OpListError {
        line,
        column,
        op: None,
        field: String::new(),
        message: e.message,
    }
}

/// Where in the op list a value is: the op and the field path.
#[derive(Clone, Debug, Default)]
struct Place {
    op: Option<String>,
    field: String,
}

impl Place {
    /// The place of `field` inside this one.
    fn join(&self, field: impl fmt::Display) -> Place {
        let field = if self.field.is_empty() {
            field.to_string()
        } else {
            format!("{} > {field}", self.field)
        };
        Place {
            op: self.op.clone(),
            field,
        }
    }
}

type Result<T> = std::result::Result<T, OpListError>;

struct Reader<'t> {
    text: &'t str,
}

/// An arg as read: the arg, where its message starts, and where the parts
/// of its full type are.
struct ReadArg {
    def: ArgDef,
    pos: usize,
    full_type: Option<Places<usize>>,
}

/// The fields of a message, looked up by name ([`Reader::check_fields`]
/// has made sure that a singular one is given at most once).
struct Fields<'a> {
    fields: Vec<TextField<'a>>,
}

impl<'a> Fields<'a> {
    /// The value of the singular field `name`, if given.
    fn one(&self, name: &str) -> Option<TextField<'a>> {
        self.fields.iter().copied().find(|f| f.name == name)
    }

    /// Every value of the repeated field `name`, in order.
    fn all(&self, name: &str) -> impl Iterator<Item = TextField<'a>> + '_ {
        let name = name.to_owned();
        self.fields.iter().copied().filter(move |f| f.name == name)
    }
}

impl<'t> Reader<'t> {
    fn error(&self, pos: usize, place: &Place, message: impl Into<String>) -> OpListError {
        let (line, column) = line_column(self.text, pos);
        OpListError {
            line,
            column,
            op: place.op.clone(),
            field: place.field.clone(),
            message: message.into(),
        }
    }

    fn text_error(&self, e: TextError, place: &Place) -> OpListError {
        self.error(e.pos, place, e.message)
    }

    fn fields<'a>(
        &self,
        node: TextNode<'a>,
        what: &str,
        place: &Place,
    ) -> Result<Vec<TextField<'a>>> {
        node.fields(what).map_err(|e| self.text_error(e, place))
    }

    fn unknown_field(
        &self,
        field: &TextField<'_>,
        message: &str,
        known: &[&str],
        place: &Place,
    ) -> OpListError {
        let hint = crate::suggest::closest(field.name, known.iter().copied())
            .map(|s| format!(" (did you mean '{s}'?)"))
            .unwrap_or_default();
        self.error(
            field.pos,
            place,
            format!("{message} has no field '{}'{hint}", field.name),
        )
    }

    /// Reads the fields of `node` (a `what` message), rejecting a field
    /// not in `known` and a singular field (not in `repeated`) given twice.
    fn message<'a>(
        &self,
        node: TextNode<'a>,
        what: &str,
        known: &[&str],
        repeated: &[&str],
        place: &Place,
    ) -> Result<Fields<'a>> {
        let fields = self.fields(node, what, place)?;
        self.check_fields(&fields, what, known, repeated, place)?;
        Ok(Fields { fields })
    }

    /// Rejects a field of `fields` (of a `what` message) not in `known`,
    /// and a singular field (not in `repeated`) given twice.
    fn check_fields(
        &self,
        fields: &[TextField<'_>],
        what: &str,
        known: &[&str],
        repeated: &[&str],
        place: &Place,
    ) -> Result<()> {
        let mut seen = HashSet::new();
        for f in fields {
            if !known.contains(&f.name) {
                return Err(self.unknown_field(f, what, known, place));
            }
            if !repeated.contains(&f.name) && !seen.insert(f.name) {
                return Err(self.error(
                    f.pos,
                    &place.join(f.name),
                    format!("{what}.{} is given more than once", f.name),
                ));
            }
        }
        Ok(())
    }

    fn string(&self, field: TextField<'_>, place: &Place) -> Result<String> {
        let place = place.join(field.name);
        let bytes = field
            .value
            .to_bytes()
            .map_err(|e| self.text_error(e, &place))?;
        String::from_utf8(bytes)
            .map_err(|_| self.error(field.value.pos(), &place, "expected UTF-8 text"))
    }

    fn opt_string(&self, fields: &Fields<'_>, name: &str, place: &Place) -> Result<String> {
        fields
            .one(name)
            .map_or(Ok(String::new()), |f| self.string(f, place))
    }

    fn opt_bool(&self, fields: &Fields<'_>, name: &str, place: &Place) -> Result<bool> {
        match fields.one(name) {
            None => Ok(false),
            Some(f) => f
                .value
                .to_bool()
                .map_err(|e| self.text_error(e, &place.join(name))),
        }
    }

    /// The op in `node`, whose field starts at `pos`.
    fn op_def(&self, node: TextNode<'_>, pos: usize, mut place: Place) -> Result<OpDef> {
        const KNOWN: &[&str] = &[
            "name",
            "input_arg",
            "output_arg",
            "control_output",
            "attr",
            "deprecation",
            "summary",
            "description",
            "is_commutative",
            "is_aggregate",
            "is_stateful",
            "allows_uninitialized_input",
            "is_distributed_communication",
        ];
        const REPEATED: &[&str] = &["input_arg", "output_arg", "control_output", "attr"];
        let fields = Fields {
            fields: self.fields(node, "OpDef", &place)?,
        };
        // The name first, whatever its place in the text, so that every
        // later error names the op.
        let name = self.opt_string(&fields, "name", &place)?;
        let name_pos = fields.one("name").map_or(pos, |f| f.value.pos());
        if !name.is_empty() {
            place.op = Some(name.clone());
        }
        self.check_fields(&fields.fields, "OpDef", KNOWN, REPEATED, &place)?;
        if name.is_empty() {
            return Err(self.error(name_pos, &place.join("name"), "an op needs a name"));
        }
        if !name.starts_with('_') && !is_valid_op_name(&name) {
            return Err(self.error(
                name_pos,
                &place.join("name"),
                format!(
                    "invalid op name '{name}': op names are CamelCase, optionally namespaced as 'Namespace>Name'"
                ),
            ));
        }
        if let Some(f) = fields.one("control_output") {
            return Err(self.error(
                f.pos,
                &place.join("control_output"),
                "control outputs are not supported by op-spec's OpDef",
            ));
        }
        let mut attrs = Vec::new();
        for f in fields.all("attr") {
            attrs.push(self.attr_def(f, &place)?);
        }
        let mut inputs = Vec::new();
        for f in fields.all("input_arg") {
            inputs.push(self.arg_def(f, &place)?);
        }
        let mut outputs = Vec::new();
        for f in fields.all("output_arg") {
            outputs.push(self.arg_def(f, &place)?);
        }
        let deprecation = match fields.one("deprecation") {
            None => None,
            Some(f) => Some(self.deprecation(f, &place)?),
        };
        let op = OpDef {
            summary: self.opt_string(&fields, "summary", &place)?,
            description: self.opt_string(&fields, "description", &place)?,
            is_commutative: self.opt_bool(&fields, "is_commutative", &place)?,
            is_aggregate: self.opt_bool(&fields, "is_aggregate", &place)?,
            is_stateful: self.opt_bool(&fields, "is_stateful", &place)?,
            allows_uninitialized_input: self.opt_bool(
                &fields,
                "allows_uninitialized_input",
                &place,
            )?,
            is_distributed_communication: self.opt_bool(
                &fields,
                "is_distributed_communication",
                &place,
            )?,
            name,
            inputs: inputs.iter().map(|a| a.def.clone()).collect(),
            outputs: outputs.iter().map(|a| a.def.clone()).collect(),
            attrs: attrs.iter().map(|(a, _)| a.clone()).collect(),
            deprecation,
        };
        self.validate(&op, &attrs, &inputs, &outputs, &place)?;
        Ok(op)
    }

    fn deprecation(&self, field: TextField<'_>, place: &Place) -> Result<Deprecation> {
        let place = place.join("deprecation");
        let fields = self.message(
            field.value,
            "OpDeprecation",
            &["version", "explanation"],
            &[],
            &place,
        )?;
        let version = match fields.one("version") {
            None => 0,
            Some(f) => f
                .value
                .to_i32()
                .map_err(|e| self.text_error(e, &place.join("version")))?,
        };
        Ok(Deprecation {
            version,
            explanation: self.opt_string(&fields, "explanation", &place)?,
        })
    }

    /// An arg and where it was written (for the validation's errors).
    fn arg_def(&self, field: TextField<'_>, place: &Place) -> Result<ReadArg> {
        const KNOWN: &[&str] = &[
            "name",
            "description",
            "type",
            "type_attr",
            "number_attr",
            "type_list_attr",
            "handle_data",
            "is_ref",
            "experimental_full_type",
        ];
        let kind = field.name;
        let outer = place.join(kind);
        let fields = Fields {
            fields: self.fields(field.value, "ArgDef", &outer)?,
        };
        let name = self.opt_string(&fields, "name", &outer)?;
        let place = place.join(format_args!("{kind} '{name}'"));
        self.check_fields(&fields.fields, "ArgDef", KNOWN, &["handle_data"], &place)?;
        if name.is_empty() {
            return Err(self.error(field.pos, &place, "an arg needs a name"));
        }
        for f in fields.all("handle_data") {
            // An empty handle_data carries nothing; anything else would be lost.
            if !self.fields(f.value, "DtypeAndShape", &place)?.is_empty() {
                return Err(self.error(
                    f.pos,
                    &place.join("handle_data"),
                    "handle_data is not supported by op-spec's ArgDef",
                ));
            }
        }
        let fixed = match fields.one("type") {
            None => None,
            Some(f) => Some(
                f.value
                    .to_dtype()
                    .map_err(|e| self.text_error(e, &place.join("type")))?,
            ),
        };
        let type_attr = self.opt_string(&fields, "type_attr", &place)?;
        let number_attr = self.opt_string(&fields, "number_attr", &place)?;
        let type_list_attr = self.opt_string(&fields, "type_list_attr", &place)?;
        let set = [
            fixed.is_some(),
            !type_attr.is_empty(),
            !type_list_attr.is_empty(),
        ];
        let ty = match (fixed, set.iter().filter(|s| **s).count()) {
            (_, 0) => {
                return Err(self.error(
                    field.pos,
                    &place,
                    "missing type: one of type, type_attr, type_list_attr must be set",
                ));
            }
            (Some(t), 1) => ArgType::Fixed(t),
            (None, 1) if !type_attr.is_empty() => ArgType::Attr(type_attr),
            (None, 1) => ArgType::ListAttr(type_list_attr),
            _ => {
                return Err(self.error(
                    field.pos,
                    &place,
                    "exactly one of type, type_attr, type_list_attr must be set",
                ));
            }
        };
        if !number_attr.is_empty() && matches!(ty, ArgType::ListAttr(_)) {
            return Err(self.error(
                field.pos,
                &place,
                "can't have both number_attr and type_list_attr",
            ));
        }
        let (full_type, full_type_places) = match fields.one("experimental_full_type") {
            None => (None, None),
            Some(f) => {
                let (ty, places) =
                    self.full_type(f.value, f.pos, &place.join("experimental_full_type"))?;
                (Some(ty), Some(places))
            }
        };
        let def = ArgDef {
            name,
            description: self.opt_string(&fields, "description", &place)?,
            ty,
            number_attr: (!number_attr.is_empty()).then_some(number_attr),
            is_ref: self.opt_bool(&fields, "is_ref", &place)?,
            full_type,
        };
        Ok(ReadArg {
            def,
            pos: field.pos,
            full_type: full_type_places,
        })
    }

    /// A `FullTypeDef` message (in `node`, whose field starts at `pos`),
    /// and where its parts were written.
    fn full_type(
        &self,
        node: TextNode<'_>,
        pos: usize,
        place: &Place,
    ) -> Result<(FullType, Places<usize>)> {
        let fields = self.message(
            node,
            "FullTypeDef",
            &["type_id", "args", "s", "i"],
            &["args"],
            place,
        )?;
        let id_field = fields.one("type_id");
        let type_id = match id_field {
            None => FullTypeId::Unset,
            Some(f) => self.full_type_id(f.value, &place.join("type_id"))?,
        };
        let mut ty = FullType::new(type_id);
        let mut places = Places {
            id: id_field.map_or(pos, |f| f.value.pos()),
            attr: None,
            args: Vec::new(),
        };
        for f in fields.all("args") {
            let (arg, at) = self.full_type(f.value, f.pos, &place.join("args"))?;
            ty.args.push(arg);
            places.args.push(at);
        }
        match (fields.one("s"), fields.one("i")) {
            (Some(s), Some(i)) => {
                let second = if s.pos > i.pos { s } else { i };
                return Err(self.error(
                    second.pos,
                    &place.join(second.name),
                    "a FullTypeDef holds one attr, but 's' and 'i' are both set",
                ));
            }
            (Some(s), None) => {
                ty.attr = Some(FullTypeAttr::String(self.string(s, place)?));
                places.attr = Some(s.value.pos());
            }
            (None, Some(i)) => {
                let value = i
                    .value
                    .to_i64()
                    .map_err(|e| self.text_error(e, &place.join("i")))?;
                ty.attr = Some(FullTypeAttr::Int(value));
                places.attr = Some(i.value.pos());
            }
            (None, None) => {}
        }
        Ok((ty, places))
    }

    /// A `FullTypeId`, by name (`TFT_TENSOR`) or by number.
    fn full_type_id(&self, node: TextNode<'_>, place: &Place) -> Result<FullTypeId> {
        if let Ok(name) = node.to_enum_name() {
            return FullTypeId::from_enum_name(name).ok_or_else(|| {
                let hint = FullTypeId::closest_name(name)
                    .map(|s| format!(" (did you mean '{s}'?)"))
                    .unwrap_or_default();
                self.error(
                    node.pos(),
                    place,
                    format!("unknown FullTypeId {}{hint}", crate::quote::quoted(name)),
                )
            });
        }
        match node.to_i32() {
            Ok(value) => FullTypeId::from_value(value).ok_or_else(|| {
                self.error(
                    node.pos(),
                    place,
                    format!("{value} is not a FullTypeId value"),
                )
            }),
            Err(_) => Err(self.error(
                node.pos(),
                place,
                "expected a FullTypeId such as TFT_TENSOR",
            )),
        }
    }

    /// An attr and the position of its message (for the validation's errors).
    fn attr_def(&self, field: TextField<'_>, place: &Place) -> Result<(AttrDef, usize)> {
        const KNOWN: &[&str] = &[
            "name",
            "type",
            "default_value",
            "description",
            "has_minimum",
            "minimum",
            "allowed_values",
        ];
        let outer = place.join("attr");
        let fields = Fields {
            fields: self.fields(field.value, "AttrDef", &outer)?,
        };
        let name = self.opt_string(&fields, "name", &outer)?;
        let place = place.join(format_args!("attr '{name}'"));
        self.check_fields(&fields.fields, "AttrDef", KNOWN, &[], &place)?;
        if name.is_empty() {
            return Err(self.error(field.pos, &place, "an attr needs a name"));
        }
        let Some(type_field) = fields.one("type") else {
            return Err(self.error(field.pos, &place, "an attr needs a type"));
        };
        let type_text = self.string(type_field, &place)?;
        let Some(ty) = AttrType::from_type_string(&type_text) else {
            let inner = type_text
                .strip_prefix("list(")
                .and_then(|t| t.strip_suffix(')'))
                .unwrap_or(&type_text);
            let hint = crate::suggest::closest(inner, AttrKind::ALL.map(AttrKind::name))
                .map(|s| {
                    let s = if inner.len() < type_text.len() {
                        format!("list({s})")
                    } else {
                        s.to_owned()
                    };
                    format!(" (did you mean '{s}'?)")
                })
                .unwrap_or_default();
            return Err(self.error(
                type_field.value.pos(),
                &place.join("type"),
                format!("unknown attr type '{type_text}'{hint}"),
            ));
        };
        let has_minimum = self.opt_bool(&fields, "has_minimum", &place)?;
        let minimum_field = fields.one("minimum");
        let minimum = match minimum_field {
            None => 0,
            Some(f) => f
                .value
                .to_i64()
                .map_err(|e| self.text_error(e, &place.join("minimum")))?,
        };
        if !has_minimum && minimum != 0 {
            let pos = minimum_field.map_or(field.pos, |f| f.pos);
            return Err(self.error(
                pos,
                &place.join("minimum"),
                format!("minimum {minimum} without has_minimum: true"),
            ));
        }
        let allowed_values = match fields.one("allowed_values") {
            None => None,
            Some(f) => Some(self.allowed_values(f, ty, &place)?),
        };
        let default_value = match fields.one("default_value") {
            None => None,
            Some(f) => Some(self.attr_value(f, ty, &place.join("default_value"))?),
        };
        let attr = AttrDef {
            name,
            ty,
            default_value,
            description: self.opt_string(&fields, "description", &place)?,
            minimum: has_minimum.then_some(minimum),
            allowed_values,
        };
        Ok((attr, field.pos))
    }

    /// `allowed_values { list { ... } }`: only types (for `type` and
    /// `list(type)` attrs) and strings (for `string` and `list(string)`),
    /// the constraints TensorFlow can check.
    fn allowed_values(
        &self,
        field: TextField<'_>,
        ty: AttrType,
        place: &Place,
    ) -> Result<ListValue> {
        let place = place.join("allowed_values");
        if !matches!(ty.kind, AttrKind::Type | AttrKind::String) {
            return Err(self.error(
                field.pos,
                &place,
                format!("an attr of type '{ty}' cannot have allowed values (only type and string attrs can)"),
            ));
        }
        match self.attr_value(field, AttrType::list(ty.kind), &place)? {
            AttrValue::List(list) => Ok(list),
            _ => unreachable!("a list type decodes to a list"),
        }
    }

    /// An `AttrValue` message holding a value of type `ty`.
    fn attr_value(&self, field: TextField<'_>, ty: AttrType, place: &Place) -> Result<AttrValue> {
        const KNOWN: &[&str] = &[
            "s",
            "i",
            "f",
            "b",
            "type",
            "shape",
            "tensor",
            "list",
            "func",
            "placeholder",
        ];
        let fields = self.message(field.value, "AttrValue", KNOWN, &[], place)?;
        let mut set = fields.fields.iter();
        let Some(value) = set.next().copied() else {
            return Err(self.error(
                field.pos,
                place,
                format!("expected a value of type '{ty}', found an empty AttrValue"),
            ));
        };
        if let Some(second) = set.next() {
            return Err(self.error(
                second.pos,
                &place.join(second.name),
                format!(
                    "an AttrValue holds one value, but '{}' and '{}' are both set",
                    value.name, second.name
                ),
            ));
        }
        let expected = if ty.is_list {
            "list"
        } else {
            ty.kind.field_name()
        };
        if value.name != expected {
            let found = if value.name == "placeholder" {
                "a placeholder, which op-spec does not support".to_owned()
            } else {
                format!("'{}'", value.name)
            };
            return Err(self.error(
                value.pos,
                &place.join(value.name),
                format!("a value of type '{ty}' is written in '{expected}', found {found}"),
            ));
        }
        let place = place.join(value.name);
        let node = value.value;
        let err = |e: TextError| self.text_error(e, &place);
        if !ty.is_list {
            return Ok(match ty.kind {
                AttrKind::String => AttrValue::String(node.to_bytes().map_err(err)?),
                AttrKind::Int => AttrValue::Int(node.to_i64().map_err(err)?),
                AttrKind::Float => AttrValue::Float(node.to_f32().map_err(err)?),
                AttrKind::Bool => AttrValue::Bool(node.to_bool().map_err(err)?),
                AttrKind::Type => AttrValue::Type(node.to_dtype().map_err(err)?),
                AttrKind::Shape => AttrValue::Shape(node.to_shape().map_err(err)?),
                AttrKind::Tensor => AttrValue::Tensor(Box::new(node.to_tensor().map_err(err)?)),
                AttrKind::Func => AttrValue::Func(node.to_func().map_err(err)?),
            });
        }
        // A ListValue: every element in the field of the attr's kind.
        let field_name = ty.kind.field_name();
        let known = AttrKind::ALL.map(AttrKind::field_name);
        let items = self.fields(node, "ListValue", &place)?;
        for item in &items {
            if item.name != field_name {
                let what = if known.contains(&item.name) {
                    format!(
                        "a value of type '{ty}' holds only '{field_name}' elements, found '{}'",
                        item.name
                    )
                } else {
                    format!("ListValue has no field '{}'", item.name)
                };
                return Err(self.error(item.pos, &place.join(item.name), what));
            }
        }
        let place = place.join(field_name);
        let err = |e: TextError| self.text_error(e, &place);
        let nodes: Vec<TextNode<'_>> = items.iter().map(|f| f.value).collect();
        fn all<'n, T>(
            nodes: &[TextNode<'n>],
            decode: impl Fn(TextNode<'n>) -> std::result::Result<T, TextError>,
        ) -> std::result::Result<Vec<T>, TextError> {
            nodes.iter().map(|n| decode(*n)).collect()
        }
        let list = match ty.kind {
            AttrKind::String => all(&nodes, TextNode::to_bytes).map(ListValue::String),
            AttrKind::Int => all(&nodes, TextNode::to_i64).map(ListValue::Int),
            AttrKind::Float => all(&nodes, TextNode::to_f32).map(ListValue::Float),
            AttrKind::Bool => all(&nodes, TextNode::to_bool).map(ListValue::Bool),
            AttrKind::Type => all(&nodes, TextNode::to_dtype).map(ListValue::Type),
            AttrKind::Shape => all(&nodes, TextNode::to_shape).map(ListValue::Shape),
            AttrKind::Tensor => all(&nodes, TextNode::to_tensor).map(ListValue::Tensor),
            AttrKind::Func => all(&nodes, TextNode::to_func).map(ListValue::Func),
        };
        Ok(AttrValue::List(list.map_err(err)?))
    }

    /// TensorFlow's `ValidateOpDef`, on what the decoding above did not
    /// already guarantee.
    fn validate(
        &self,
        op: &OpDef,
        attrs: &[(AttrDef, usize)],
        inputs: &[ReadArg],
        outputs: &[ReadArg],
        place: &Place,
    ) -> Result<()> {
        let mut names = HashSet::new();
        for (attr, pos) in attrs {
            let place = place.join(format_args!("attr '{}'", attr.name));
            if !names.insert(attr.name.as_str()) {
                return Err(self.error(*pos, &place, format!("duplicate name '{}'", attr.name)));
            }
            if DType::from_spec_name(&attr.name).is_some() {
                return Err(self.error(
                    *pos,
                    &place,
                    format!(
                        "attr can't have name '{}' that matches a data type",
                        attr.name
                    ),
                ));
            }
            if let Some(min) = attr.minimum {
                if attr.ty != AttrType::scalar(AttrKind::Int) && !attr.ty.is_list {
                    return Err(self.error(
                        *pos,
                        &place.join("minimum"),
                        format!("an attr of type '{}' cannot have a minimum (only int and list attrs can)", attr.ty),
                    ));
                }
                if attr.ty.is_list && min < 0 {
                    return Err(self.error(
                        *pos,
                        &place.join("minimum"),
                        format!("a list attr must have a non-negative minimum, not {min}"),
                    ));
                }
            }
            if let Some(default) = &attr.default_value
                && let Err(e) = validate_attr_value(default, attr)
            {
                return Err(self.error(
                    *pos,
                    &place.join("default_value"),
                    format!("the default does not satisfy the attr: {e}"),
                ));
            }
        }
        for (kind, args) in [("input_arg", inputs), ("output_arg", outputs)] {
            for read in args {
                let (arg, pos) = (&read.def, &read.pos);
                let place = place.join(format_args!("{kind} '{}'", arg.name));
                if let (Some(ty), Some(places)) = (&arg.full_type, &read.full_type) {
                    let scope = AttrScope {
                        attrs: &op.attrs,
                        broken: &[],
                    };
                    if let Err(m) = full_type::check_on_op(ty, places, &scope) {
                        let message = match m.help {
                            Some(help) => format!("{} ({help})", m.message),
                            None => m.message,
                        };
                        return Err(self.error(
                            m.at,
                            &place.join("experimental_full_type"),
                            message,
                        ));
                    }
                }
                if !names.insert(arg.name.as_str()) {
                    return Err(self.error(*pos, &place, format!("duplicate name '{}'", arg.name)));
                }
                let uses = [
                    (
                        "number_attr",
                        arg.number_attr.as_deref(),
                        AttrType::scalar(AttrKind::Int),
                    ),
                    (
                        "type_attr",
                        arg.type_attr(),
                        AttrType::scalar(AttrKind::Type),
                    ),
                    (
                        "type_list_attr",
                        arg.type_list_attr(),
                        AttrType::list(AttrKind::Type),
                    ),
                ];
                for (field, used, want) in uses {
                    let Some(used) = used else { continue };
                    let place = place.join(field);
                    let Some(attr) = op.attr(used) else {
                        return Err(self.error(*pos, &place, format!("no attr named '{used}'")));
                    };
                    if attr.ty != want {
                        return Err(self.error(
                            *pos,
                            &place,
                            format!(
                                "attr '{used}' has type {}, but {field} needs {want}",
                                attr.ty
                            ),
                        ));
                    }
                    if field == "number_attr" && attr.minimum.is_none_or(|m| m < 0) {
                        return Err(self.error(
                            *pos,
                            &place,
                            format!("attr '{used}', used as a length, must have a minimum >= 0"),
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}
