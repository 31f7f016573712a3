//! Values between TensorFlow's proto messages and the op-spec model that
//! the rest of the framework uses: dtypes, shapes, tensors and attr values.
//!
//! Reading is strict where a wrong value would change a program's meaning
//! (an unknown dtype, a list attr holding two kinds, a shape with both dims
//! and an unknown rank) and returns an error saying what is wrong; the
//! caller adds the node and attr. Writing cannot fail.

use op_core::op_spec::{DimValue, FuncValue, ListValue};
use op_core::{AttrKind, AttrType, AttrValue, DType, Error, Result, ShapeValue, TensorValue};

use super::proto::{self, attr_value::Value};

/// The dtype with TensorFlow's `DataType` enum value `value`.
///
/// Reference types (`DT_FLOAT_REF`, value + 100) come from TensorFlow 1.x
/// variables, which this framework replaces by resource variables: they
/// are an error that says so.
pub fn dtype_from_proto(value: i32) -> Result<DType> {
    if let Some(dtype) = DType::from_enum_value(value) {
        return Ok(dtype);
    }
    if let Some(base) = value.checked_sub(100).and_then(DType::from_enum_value) {
        return Err(Error::unimplemented(format!(
            "reference dtype {}_REF (DataType {value}): graphs with TensorFlow 1.x reference \
             variables are not supported; freeze the graph or use resource variables",
            base.enum_name()
        )));
    }
    Err(Error::invalid_argument(format!("unknown DataType {value}")))
}

/// A shape from its proto.
pub fn shape_from_proto(shape: &proto::TensorShapeProto) -> Result<ShapeValue> {
    if shape.unknown_rank && !shape.dim.is_empty() {
        return Err(Error::invalid_argument(format!(
            "a shape with unknown_rank set has {} dims; an unknown rank has none",
            shape.dim.len()
        )));
    }
    if let Some(bad) = shape.dim.iter().find(|d| d.size < -1) {
        return Err(Error::invalid_argument(format!(
            "a shape has dimension size {}; sizes are -1 (unknown) or more",
            bad.size
        )));
    }
    Ok(ShapeValue {
        dims: shape
            .dim
            .iter()
            .map(|d| DimValue {
                size: d.size,
                name: d.name.clone(),
            })
            .collect(),
        unknown_rank: shape.unknown_rank,
    })
}

/// A shape's proto.
pub fn shape_to_proto(shape: &ShapeValue) -> proto::TensorShapeProto {
    proto::TensorShapeProto {
        dim: shape
            .dims
            .iter()
            .map(|d| proto::tensor_shape_proto::Dim {
                size: d.size,
                name: d.name.clone(),
            })
            .collect(),
        unknown_rank: shape.unknown_rank,
    }
}

/// A tensor value from its proto (the values are checked against the
/// shape when the tensor is made, by `Tensor::from_tensor_value`).
pub fn tensor_from_proto(tensor: &proto::TensorProto) -> Result<TensorValue> {
    Ok(TensorValue {
        dtype: Some(dtype_from_proto(tensor.dtype)?),
        shape: tensor
            .tensor_shape
            .as_ref()
            .map(shape_from_proto)
            .transpose()?,
        version_number: tensor.version_number,
        tensor_content: tensor.tensor_content.clone(),
        half_val: tensor.half_val.clone(),
        float_val: tensor.float_val.clone(),
        double_val: tensor.double_val.clone(),
        int_val: tensor.int_val.clone(),
        string_val: tensor.string_val.clone(),
        scomplex_val: tensor.scomplex_val.clone(),
        int64_val: tensor.int64_val.clone(),
        bool_val: tensor.bool_val.clone(),
        dcomplex_val: tensor.dcomplex_val.clone(),
        uint32_val: tensor.uint32_val.clone(),
        uint64_val: tensor.uint64_val.clone(),
    })
}

/// A tensor value's proto.
pub fn tensor_to_proto(tensor: &TensorValue) -> proto::TensorProto {
    proto::TensorProto {
        dtype: tensor.dtype.map_or(0, DType::enum_value),
        tensor_shape: tensor.shape.as_ref().map(shape_to_proto),
        version_number: tensor.version_number,
        tensor_content: tensor.tensor_content.clone(),
        half_val: tensor.half_val.clone(),
        float_val: tensor.float_val.clone(),
        double_val: tensor.double_val.clone(),
        int_val: tensor.int_val.clone(),
        string_val: tensor.string_val.clone(),
        scomplex_val: tensor.scomplex_val.clone(),
        int64_val: tensor.int64_val.clone(),
        bool_val: tensor.bool_val.clone(),
        dcomplex_val: tensor.dcomplex_val.clone(),
        uint32_val: tensor.uint32_val.clone(),
        uint64_val: tensor.uint64_val.clone(),
    }
}

fn func_from_proto(func: &proto::NameAttrList) -> Result<FuncValue> {
    if !func.attr.is_empty() {
        return Err(Error::unimplemented(format!(
            "function reference '{}' has attrs; attrs of function references are not supported",
            func.name
        )));
    }
    Ok(FuncValue {
        name: func.name.clone(),
    })
}

fn func_to_proto(func: &FuncValue) -> proto::NameAttrList {
    proto::NameAttrList {
        name: func.name.clone(),
        attr: Default::default(),
    }
}

/// An attr value from its proto. `expected` is the attr's declared type,
/// when the op declares it: an empty list says nothing of its kind, so it
/// takes the declared one (a list attr of an unknown kind that is empty
/// is read as `list(string)`).
///
/// Returns an error for an unset value, a placeholder (which only
/// function bodies have), a list holding values of two kinds, and values
/// that do not convert (an unknown dtype).
pub fn attr_from_proto(value: &proto::AttrValue, expected: Option<AttrType>) -> Result<AttrValue> {
    let Some(value) = &value.value else {
        return Err(Error::invalid_argument("the attr value is not set"));
    };
    Ok(match value {
        Value::S(s) => AttrValue::String(s.clone()),
        Value::I(i) => AttrValue::Int(*i),
        Value::F(f) => AttrValue::Float(*f),
        Value::B(b) => AttrValue::Bool(*b),
        Value::Type(t) => AttrValue::Type(dtype_from_proto(*t)?),
        Value::Shape(s) => AttrValue::Shape(shape_from_proto(s)?),
        Value::Tensor(t) => AttrValue::Tensor(Box::new(tensor_from_proto(t)?)),
        Value::Func(f) => AttrValue::Func(func_from_proto(f)?),
        Value::List(list) => AttrValue::List(list_from_proto(list, expected)?),
        Value::Placeholder(name) => {
            return Err(Error::unimplemented(format!(
                "the attr is a function placeholder ('{name}'), which only function bodies have"
            )));
        }
    })
}

fn list_from_proto(
    list: &proto::attr_value::ListValue,
    expected: Option<AttrType>,
) -> Result<ListValue> {
    let kinds: Vec<AttrKind> = [
        (AttrKind::String, list.s.len()),
        (AttrKind::Int, list.i.len()),
        (AttrKind::Float, list.f.len()),
        (AttrKind::Bool, list.b.len()),
        (AttrKind::Type, list.r#type.len()),
        (AttrKind::Shape, list.shape.len()),
        (AttrKind::Tensor, list.tensor.len()),
        (AttrKind::Func, list.func.len()),
    ]
    .into_iter()
    .filter(|&(_, len)| len > 0)
    .map(|(kind, _)| kind)
    .collect();
    let kind = match kinds.as_slice() {
        [] => expected.map_or(AttrKind::String, |t| t.kind),
        [kind] => *kind,
        several => {
            let names: Vec<&str> = several.iter().map(|k| k.name()).collect();
            return Err(Error::invalid_argument(format!(
                "the list holds values of several kinds ({}); a list holds one",
                names.join(", ")
            )));
        }
    };
    Ok(match kind {
        AttrKind::String => ListValue::String(list.s.clone()),
        AttrKind::Int => ListValue::Int(list.i.clone()),
        AttrKind::Float => ListValue::Float(list.f.clone()),
        AttrKind::Bool => ListValue::Bool(list.b.clone()),
        AttrKind::Type => ListValue::Type(
            list.r#type
                .iter()
                .map(|&t| dtype_from_proto(t))
                .collect::<Result<_>>()?,
        ),
        AttrKind::Shape => ListValue::Shape(
            list.shape
                .iter()
                .map(shape_from_proto)
                .collect::<Result<_>>()?,
        ),
        AttrKind::Tensor => ListValue::Tensor(
            list.tensor
                .iter()
                .map(tensor_from_proto)
                .collect::<Result<_>>()?,
        ),
        AttrKind::Func => ListValue::Func(
            list.func
                .iter()
                .map(func_from_proto)
                .collect::<Result<_>>()?,
        ),
    })
}

/// An attr value's proto.
pub fn attr_to_proto(value: &AttrValue) -> proto::AttrValue {
    let value = match value {
        AttrValue::String(s) => Value::S(s.clone()),
        AttrValue::Int(i) => Value::I(*i),
        AttrValue::Float(f) => Value::F(*f),
        AttrValue::Bool(b) => Value::B(*b),
        AttrValue::Type(t) => Value::Type(t.enum_value()),
        AttrValue::Shape(s) => Value::Shape(Box::new(shape_to_proto(s))),
        AttrValue::Tensor(t) => Value::Tensor(Box::new(tensor_to_proto(t))),
        AttrValue::Func(f) => Value::Func(Box::new(func_to_proto(f))),
        AttrValue::List(list) => {
            let mut out = proto::attr_value::ListValue::default();
            match list {
                ListValue::String(v) => out.s = v.clone(),
                ListValue::Int(v) => out.i = v.clone(),
                ListValue::Float(v) => out.f = v.clone(),
                ListValue::Bool(v) => out.b = v.clone(),
                ListValue::Type(v) => out.r#type = v.iter().map(|t| t.enum_value()).collect(),
                ListValue::Shape(v) => out.shape = v.iter().map(shape_to_proto).collect(),
                ListValue::Tensor(v) => out.tensor = v.iter().map(tensor_to_proto).collect(),
                ListValue::Func(v) => out.func = v.iter().map(func_to_proto).collect(),
            }
            Value::List(Box::new(out))
        }
    };
    proto::AttrValue { value: Some(value) }
}
