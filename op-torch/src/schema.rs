//! An op's PyTorch schema, from its OpDef: what `torch.library` would
//! write by hand for it, and where each argument sits on the kernel's
//! stack.
//!
//! Inputs come first, as positional `Tensor`s; then the attrs a caller
//! passes, keyword-only (after `*`), with their defaults; a type attr
//! that an input sets is left out (the tensor's dtype gives it), and a
//! type attr that none sets is a `ScalarType`. One output is `Tensor`,
//! several a named tuple:
//!
//! ```
//! op_kernels::link();
//! let registry = op_core::Registry::global();
//! let schema = |op: &str| op_torch::schema::Schema::new(registry.op(op).unwrap()).unwrap().text;
//! assert_eq!(schema("ZeroOut"), "zero_out(Tensor to_zero) -> Tensor");
//! assert_eq!(
//!     schema("ZeroOutPreserveIndex"),
//!     "zero_out_preserve_index(Tensor to_zero, *, int preserve_index) -> Tensor"
//! );
//! assert_eq!(schema("Cast"), "cast(Tensor x, *, ScalarType DstT, bool Truncate=False) -> Tensor");
//! ```
//!
//! The gradient of an op with a `#[gradient]` is an op of its own,
//! `<name>_backward`, taking the forward inputs, outputs and output
//! gradients (and the same attrs) and returning a gradient per input
//! ([`Schema::gradient`]).

use op_core::registry::OpEntry;
use op_core::{AttrDef, AttrKind, AttrValue, ListValue};
use op_host::names::{inferred_attrs, python_arg, python_name};

/// What sits at one position of a kernel's stack, by its schema type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// `Tensor`: input `index` of the op's flattened inputs.
    Tensor,
    /// `int`.
    Int,
    /// `float` (a double on the stack).
    Float,
    /// `bool`.
    Bool,
    /// `str`.
    Str,
    /// `ScalarType`.
    ScalarType,
    /// `ScalarType?`: a type attr with a default, `None` for it.
    OptionalScalarType,
    /// `int[]`.
    IntList,
    /// `float[]`.
    FloatList,
    /// `bool[]`.
    BoolList,
    /// `str[]`.
    StrList,
}

/// An op's schema and its stack layout.
#[derive(Clone, Debug)]
pub struct Schema {
    /// The op's name in PyTorch (`zero_out`).
    pub name: String,
    /// The schema, as `aoti_torch_library_def` takes it.
    pub text: String,
    /// The stack's positions: the inputs, then the attrs (by name).
    pub slots: Vec<(Slot, Option<&'static str>)>,
    /// How many values the kernel returns.
    pub returns: usize,
}

/// Why an op has no schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unmapped {
    /// The attr.
    pub attr: String,
    /// Its type, and what about it has no PyTorch form (`float whose
    /// default inf has no schema literal`).
    pub why: String,
}

impl Schema {
    /// The schema of `op` (its args single tensors: lists are left out by
    /// the plan before this), or which attr has no PyTorch form.
    pub fn new(op: &'static OpEntry) -> Result<Schema, Unmapped> {
        let def = op.def();
        let name = python_name(&def.name);
        let mut args: Vec<String> = Vec::new();
        let mut slots = Vec::new();
        for input in &def.inputs {
            args.push(format!("Tensor {}", python_arg(&input.name)));
            slots.push((Slot::Tensor, None));
        }
        let (attrs, attr_slots) = attr_args(op)?;
        if !attrs.is_empty() {
            args.push("*".into());
            args.extend(attrs);
        }
        slots.extend(attr_slots);
        let names: Vec<String> = def.outputs.iter().map(|o| python_arg(&o.name)).collect();
        Ok(Schema {
            text: format!("{name}({}) -> {}", args.join(", "), returns(&names)),
            name,
            slots,
            returns: def.outputs.len(),
        })
    }

    /// The schema of `op`'s gradient, `<name>_backward`: the forward's
    /// inputs, its outputs (`<output>`) and their gradients
    /// (`<output>_grad`), the same attrs, and a gradient per input
    /// (`<input>_grad`).
    ///
    /// ```
    /// op_kernels::link();
    /// let op = op_core::Registry::global().op("ZeroOutPolymorphic").unwrap();
    /// let schema = op_torch::schema::Schema::gradient(op).unwrap();
    /// assert_eq!(
    ///     schema.text,
    ///     "zero_out_polymorphic_backward(Tensor to_zero, Tensor zeroed, Tensor zeroed_grad) -> Tensor"
    /// );
    /// ```
    pub fn gradient(op: &'static OpEntry) -> Result<Schema, Unmapped> {
        let def = op.def();
        let name = format!("{}_backward", python_name(&def.name));
        let inputs: Vec<String> = def.inputs.iter().map(|a| python_arg(&a.name)).collect();
        let outputs: Vec<String> = def.outputs.iter().map(|a| python_arg(&a.name)).collect();
        let tensors: Vec<String> = inputs
            .iter()
            .cloned()
            .chain(outputs.iter().cloned())
            .chain(outputs.iter().map(|o| format!("{o}_grad")))
            .collect();
        let mut args: Vec<String> = tensors.iter().map(|t| format!("Tensor {t}")).collect();
        let mut slots: Vec<(Slot, Option<&'static str>)> =
            tensors.iter().map(|_| (Slot::Tensor, None)).collect();
        let (attrs, attr_slots) = attr_args(op)?;
        if !attrs.is_empty() {
            args.push("*".into());
            args.extend(attrs);
        }
        slots.extend(attr_slots);
        let grads: Vec<String> = inputs.iter().map(|i| format!("{i}_grad")).collect();
        Ok(Schema {
            text: format!("{name}({}) -> {}", args.join(", "), returns(&grads)),
            name,
            slots,
            returns: def.inputs.len(),
        })
    }
}

/// `Tensor`, `(Tensor a, Tensor b)` or `()`.
fn returns(names: &[String]) -> String {
    match names {
        [_] => "Tensor".into(),
        _ => format!(
            "({})",
            names
                .iter()
                .map(|n| format!("Tensor {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The keyword-only args of `op`'s attrs, and their slots.
type AttrArgs = (Vec<String>, Vec<(Slot, Option<&'static str>)>);

fn attr_args(op: &'static OpEntry) -> Result<AttrArgs, Unmapped> {
    let def: &'static op_core::OpDef = op.def();
    let inferred = inferred_attrs(def);
    let mut args = Vec::new();
    let mut slots = Vec::new();
    for attr in def
        .attrs
        .iter()
        .filter(|a| !inferred.contains(&a.name.as_str()))
    {
        let (ty, slot) = attr_type(attr)?;
        let default = match &attr.default_value {
            None => String::new(),
            Some(_) if slot == Slot::OptionalScalarType => "=None".into(),
            Some(value) => format!("={}", default(attr, value)?),
        };
        args.push(format!("{ty} {}{default}", python_arg(&attr.name)));
        slots.push((slot, Some(attr.name.as_str())));
    }
    Ok((args, slots))
}

fn unmapped(attr: &AttrDef, why: impl Into<String>) -> Unmapped {
    Unmapped {
        attr: attr.name.clone(),
        why: why.into(),
    }
}

/// The schema type of `attr`, and its slot.
fn attr_type(attr: &AttrDef) -> Result<(&'static str, Slot), Unmapped> {
    Ok(match (attr.ty.kind, attr.ty.is_list) {
        (AttrKind::Int, false) => ("int", Slot::Int),
        (AttrKind::Float, false) => ("float", Slot::Float),
        (AttrKind::Bool, false) => ("bool", Slot::Bool),
        (AttrKind::String, false) => ("str", Slot::Str),
        (AttrKind::Type, false) if attr.default_value.is_some() => {
            ("ScalarType?", Slot::OptionalScalarType)
        }
        (AttrKind::Type, false) => ("ScalarType", Slot::ScalarType),
        (AttrKind::Int, true) => ("int[]", Slot::IntList),
        (AttrKind::Float, true) => ("float[]", Slot::FloatList),
        (AttrKind::Bool, true) => ("bool[]", Slot::BoolList),
        (AttrKind::String, true) => ("str[]", Slot::StrList),
        _ => return Err(unmapped(attr, attr.ty.to_string())),
    })
}

/// `value` as a schema default.
fn default(attr: &AttrDef, value: &AttrValue) -> Result<String, Unmapped> {
    let float = |f: f32| {
        if f.is_finite() {
            Ok(format!("{f:?}"))
        } else {
            Err(unmapped(
                attr,
                format!("{} whose default {f} has no schema literal", attr.ty),
            ))
        }
    };
    let string = |s: &[u8]| match std::str::from_utf8(s) {
        Ok(s) if !s.contains(['"', '\\', '\n']) => Ok(format!("\"{s}\"")),
        _ => Err(unmapped(
            attr,
            format!("{} whose default has no schema literal", attr.ty),
        )),
    };
    let bool = |b: bool| if b { "True" } else { "False" }.to_string();
    let list = |items: Vec<String>| format!("[{}]", items.join(", "));
    Ok(match value {
        AttrValue::Int(i) => i.to_string(),
        AttrValue::Float(f) => float(*f)?,
        AttrValue::Bool(b) => bool(*b),
        AttrValue::String(s) => string(s)?,
        AttrValue::List(ListValue::Int(v)) => list(v.iter().map(i64::to_string).collect()),
        AttrValue::List(ListValue::Float(v)) => {
            list(v.iter().map(|f| float(*f)).collect::<Result<_, _>>()?)
        }
        AttrValue::List(ListValue::Bool(v)) => list(v.iter().map(|b| bool(*b)).collect()),
        AttrValue::List(ListValue::String(v)) => {
            list(v.iter().map(|s| string(s)).collect::<Result<_, _>>()?)
        }
        other => {
            return Err(unmapped(
                attr,
                format!("{} whose default {other} has no schema literal", attr.ty),
            ));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(name: &str) -> &'static OpEntry {
        op_kernels::link();
        op_core::Registry::global().op(name).expect("a linked op")
    }

    #[test]
    fn a_type_attr_an_input_sets_is_left_out_of_the_schema() {
        let schema = Schema::new(op("ZeroOutPolymorphic")).unwrap();
        assert_eq!(
            schema.text,
            "zero_out_polymorphic(Tensor to_zero) -> Tensor"
        );
        assert_eq!(schema.slots, [(Slot::Tensor, None)]);
    }

    #[test]
    fn attrs_are_keyword_only_with_their_defaults_and_slots() {
        let schema = Schema::new(op("ZeroOutPreserveIndex")).unwrap();
        assert_eq!(
            schema.slots,
            [(Slot::Tensor, None), (Slot::Int, Some("preserve_index"))]
        );
        assert_eq!(schema.returns, 1);
    }

    #[test]
    fn every_linked_op_with_a_schema_names_each_arg_once() {
        op_kernels::link();
        for entry in op_core::Registry::global().ops() {
            let Ok(schema) = Schema::new(entry) else {
                continue;
            };
            let open = schema.text.find('(').unwrap();
            let close = schema.text.find(") ->").unwrap();
            let names: Vec<&str> = schema.text[open + 1..close]
                .split(", ")
                .filter(|a| *a != "*" && !a.is_empty())
                .map(|a| a.split([' ', '=']).nth(1).unwrap())
                .collect();
            let mut unique = names.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(names.len(), unique.len(), "{}", schema.text);
            assert_eq!(names.len(), schema.slots.len(), "{}", schema.text);
        }
    }
}
