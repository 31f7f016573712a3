//! The generic input generator: a [`Case`] for any op, drawn from its
//! OpDef (input and attr types, the kernel's constraints) and guided by its
//! shape function.
//!
//! Attrs: a type attr the kernel constrains takes the kernel's type; any
//! other type attr one of its allowed types (or a common type when it
//! allows any); a list length (`N`) 1 to 3 above its minimum; a bool attr
//! either value; an int attr with a default its default or a small value;
//! a string attr with allowed values one of them. An attr the generic case
//! cannot draw (a tensor or function without a default) makes the op
//! unsupported: an `Unimplemented` error naming it.
//!
//! Shapes: a base shape is drawn (rank 0 to 3, dimensions 1 to 4, now and
//! then one of 0), and each input takes it, a broadcastable variant of it
//! (some dimensions 1, or a suffix), or a fresh shape. The shape function,
//! given the shapes and the values (every input is known, as a constant
//! would be), filters the draws: up to [`TRIES`] are made and the first it
//! accepts is the case. When it accepts none, the last draw is the case,
//! one the kernel should reject with an error.

use op_spec::{AttrKind, AttrValue, DType, ListValue, OpDef, ShapeValue};

use super::draw::{Case, Draw, Input};
use crate::op_instance::{InputTypes, OpInstanceBuilder};
use crate::shape_inference::{self, PartialShape};
use crate::tensor::Tensor;
use crate::{Error, Result};

/// Draws of shapes per case before settling for one the shape function
/// rejects.
const TRIES: usize = 16;

/// Types drawn for a type attr that allows any type: the common ones (a
/// generator drawing a type for such an attr may use them too).
pub const COMMON_TYPES: [DType; 9] = [
    DType::F32,
    DType::F64,
    DType::I32,
    DType::I64,
    DType::Bool,
    DType::String,
    DType::F16,
    DType::U8,
    DType::Complex64,
];

/// The generic case for `d`'s op and kernel (see the module docs).
pub(crate) fn generic_case(d: &mut Draw<'_>) -> Result<Case> {
    let entry = d.op()?;
    let def = entry.def();
    let attrs = draw_attrs(d, def)?;
    let arg_types = arg_types(def, &attrs)?;
    let explicit: Vec<(String, AttrValue)> = attrs
        .iter()
        .filter(|(name, _)| !def.is_inferred_attr(name))
        .cloned()
        .collect();

    let mut node = OpInstanceBuilder::new(def);
    for types in &arg_types {
        node = node.input_types(types.clone());
    }
    for (name, value) in &explicit {
        node = node.attr(name.clone(), value.clone());
    }
    // A node that does not build (attrs the op rejects) still makes a
    // case: running it must fail with an error.
    let node = node.build().ok();

    let mut case = None;
    for _ in 0..TRIES {
        let inputs = draw_inputs(d, &arg_types)?;
        let accepted = match (&node, entry.shape_fn()) {
            (Some(node), Some(shape_fn)) => {
                let flat: Vec<&Tensor> = inputs.iter().flat_map(|i| i.tensors()).collect();
                let shapes: Vec<PartialShape> =
                    flat.iter().map(|t| PartialShape::known(t.dims())).collect();
                let values: Vec<Option<&Tensor>> = flat.iter().map(|t| Some(*t)).collect();
                // A shape function that panics is reported when the case
                // runs; here it only rejects the draw.
                crate::unwind::catch_panic(|| {
                    shape_inference::infer(def, node, shape_fn, &shapes, &values)
                })
                .is_ok_and(|r| r.is_ok())
            }
            _ => true,
        };
        case = Some(inputs);
        if accepted {
            break;
        }
    }
    let mut result = Case::new();
    for input in case.unwrap_or_default() {
        result = match input {
            Input::Tensor(t) => result.input(t),
            Input::List(ts) => result.input_list(ts),
        };
    }
    for (name, value) in explicit {
        result.set_attr(name, value);
    }
    Ok(result)
}

/// A value for every attr of `def` (see the module docs).
fn draw_attrs(d: &mut Draw<'_>, def: &OpDef) -> Result<Vec<(String, AttrValue)>> {
    let number_attrs: Vec<&str> = def
        .inputs
        .iter()
        .chain(&def.outputs)
        .filter_map(|a| a.number_attr.as_deref())
        .collect();
    let mut values = Vec::new();
    for attr in &def.attrs {
        let unsupported = |what: &str| {
            Error::unimplemented(format!(
                "attr '{}' ({}) {what}: the generic case cannot draw it",
                attr.name, attr.ty
            ))
        };
        let minimum = attr.minimum.unwrap_or(0);
        let value = match (attr.ty.kind, attr.ty.is_list) {
            (AttrKind::Type, false) => {
                AttrValue::Type(draw_type(d, &attr.name, attr.allowed_types())?)
            }
            (AttrKind::Type, true) => {
                let low = usize::try_from(minimum.max(1)).unwrap_or(1);
                let len = d.size(low..=low + 2);
                let types = (0..len)
                    .map(|_| draw_type(d, &attr.name, attr.allowed_types()))
                    .collect::<Result<Vec<_>>>()?;
                AttrValue::List(ListValue::Type(types))
            }
            (AttrKind::Int, false) if number_attrs.contains(&attr.name.as_str()) => {
                let low = minimum.max(1);
                AttrValue::Int(d.int(low..=low + 2))
            }
            (AttrKind::Int, false) => match &attr.default_value {
                Some(default) if d.bool() => default.clone(),
                _ => AttrValue::Int(d.int(attr.minimum.unwrap_or(-2)..=3)),
            },
            (AttrKind::Bool, false) => AttrValue::Bool(d.bool()),
            (AttrKind::Float, false) => match &attr.default_value {
                Some(default) => default.clone(),
                None => AttrValue::Float(d.float(0.0, 1.0) as f32),
            },
            (AttrKind::String, false) => match (attr.allowed_strings(), &attr.default_value) {
                (Some(allowed), _) if !allowed.is_empty() => {
                    AttrValue::String(d.choose(allowed).cloned().unwrap_or_default())
                }
                (_, Some(default)) => default.clone(),
                _ => return Err(unsupported("has no default and no allowed values")),
            },
            (AttrKind::Shape, false) => match &attr.default_value {
                Some(default) => default.clone(),
                // An unknown rank fits every input; a known shape is a
                // constraint that the inputs may break.
                None if d.bool() => {
                    let dims = d.dims(0..=3, 1..=3);
                    let sizes: Vec<i64> = dims.iter().map(|&v| v as i64).collect();
                    AttrValue::Shape(ShapeValue::from_sizes(&sizes))
                }
                None => AttrValue::Shape(ShapeValue::unknown_rank()),
            },
            (_, _) => match &attr.default_value {
                Some(default) => default.clone(),
                None if attr.ty.is_list && minimum == 0 => {
                    AttrValue::List(ListValue::empty(attr.ty.kind))
                }
                None => return Err(unsupported("has no default")),
            },
        };
        values.push((attr.name.clone(), value));
    }
    Ok(values)
}

/// A type for type attr `attr`: the kernel's, else one of `allowed` (or
/// of the common types when any is allowed) that tensors can hold.
fn draw_type(d: &mut Draw<'_>, attr: &str, allowed: Option<&[DType]>) -> Result<DType> {
    if let Some(dtype) = d.kernel_dtype(attr) {
        return Ok(dtype);
    }
    let candidates: Vec<DType> = match allowed {
        Some(allowed) => allowed
            .iter()
            .copied()
            .filter(|t| *t != DType::Variant)
            .collect(),
        None => COMMON_TYPES.to_vec(),
    };
    d.choose(&candidates).copied().ok_or_else(|| {
        Error::unimplemented(format!(
            "type attr '{attr}' allows no type a tensor can hold"
        ))
    })
}

/// The dtypes of each input arg, given the attrs.
fn arg_types(def: &OpDef, attrs: &[(String, AttrValue)]) -> Result<Vec<InputTypes>> {
    let attr = |name: &str| attrs.iter().find(|(n, _)| n == name).map(|(_, v)| v);
    def.inputs
        .iter()
        .map(|arg| {
            let single = match &arg.ty {
                op_spec::ArgType::Fixed(t) => Some(*t),
                op_spec::ArgType::Attr(a) => match attr(a) {
                    Some(AttrValue::Type(t)) => Some(*t),
                    _ => None,
                },
                op_spec::ArgType::ListAttr(_) => None,
            };
            let types = match (&arg.ty, &arg.number_attr, single) {
                (op_spec::ArgType::ListAttr(a), _, _) => match attr(a) {
                    Some(AttrValue::List(ListValue::Type(ts))) => InputTypes::List(ts.clone()),
                    _ => InputTypes::List(Vec::new()),
                },
                (_, Some(n), Some(t)) => {
                    let n = match attr(n) {
                        Some(AttrValue::Int(n)) => usize::try_from(*n).unwrap_or(0),
                        _ => 0,
                    };
                    InputTypes::List(vec![t; n])
                }
                (_, None, Some(t)) => InputTypes::Single(t),
                (_, _, None) => {
                    return Err(Error::internal(format!(
                        "input '{}' has no type among the drawn attrs",
                        arg.name
                    )));
                }
            };
            let dtypes = match &types {
                InputTypes::Single(t) => std::slice::from_ref(t),
                InputTypes::List(ts) => ts.as_slice(),
            };
            if let Some(t) = dtypes
                .iter()
                .find(|t| matches!(t, DType::Resource | DType::Variant))
            {
                return Err(Error::unimplemented(format!(
                    "input '{}' is a {t}: the generic case cannot make one (register a generator that makes it with an op)",
                    arg.name
                )));
            }
            Ok(types)
        })
        .collect()
}

/// One draw of every input: shapes around a common base (see the module
/// docs), random values.
fn draw_inputs(d: &mut Draw<'_>, arg_types: &[InputTypes]) -> Result<Vec<Input>> {
    let rank = match d.below(20) {
        0..=1 => 0,
        2..=7 => 1,
        8..=14 => 2,
        _ => 3,
    };
    let mut base: Vec<usize> = (0..rank).map(|_| d.size(1..=4)).collect();
    if rank > 0 && d.chance(0.1) {
        let at = d.below(rank);
        base[at] = 0;
    }
    let shape = |d: &mut Draw<'_>| -> Vec<usize> {
        match d.below(20) {
            0..=9 => base.clone(),
            10..=12 => base
                .iter()
                .map(|&v| if d.chance(0.3) { 1 } else { v })
                .collect(),
            13..=15 => {
                let keep = d.size(0..=base.len());
                base[base.len() - keep..].to_vec()
            }
            _ => d.dims(0..=3, 1..=4),
        }
    };
    // Integer inputs beside others are mostly axes, sizes and shapes:
    // scalars and short vectors, as often as shapes like the data's.
    let dtypes = |types: &InputTypes| -> Vec<DType> {
        match types {
            InputTypes::Single(t) => vec![*t],
            InputTypes::List(ts) => ts.clone(),
        }
    };
    let all: Vec<DType> = arg_types.iter().flat_map(dtypes).collect();
    let mixed = all.iter().any(|t| t.is_integer()) && all.iter().any(|t| !t.is_integer());
    let draw_one = |d: &mut Draw<'_>, dtype: DType| -> Result<Tensor> {
        let dims = match d.below(10) {
            0..=2 if mixed && dtype.is_integer() => Vec::new(),
            3..=5 if mixed && dtype.is_integer() => vec![d.size(1..=rank.max(1) + 1)],
            _ => shape(d),
        };
        d.tensor(dtype, &dims)
    };
    let mut inputs = Vec::with_capacity(arg_types.len());
    for types in arg_types {
        inputs.push(match types {
            InputTypes::Single(t) => Input::Tensor(draw_one(d, *t)?),
            InputTypes::List(ts) => Input::List(
                ts.iter()
                    .map(|t| draw_one(d, *t))
                    .collect::<Result<Vec<_>>>()?,
            ),
        });
    }
    Ok(inputs)
}
