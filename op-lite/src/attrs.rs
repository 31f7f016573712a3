//! A framework op's attrs as a custom op's options: the flexbuffer map that
//! TensorFlow's converter writes into `custom_options` for an op it keeps
//! custom (`allow_custom_ops=True`).
//!
//! The converter (`CreateFlexBuilderWithNodeAttrs` in TensorFlow's
//! `flatbuffer_export.cc`) writes one map entry per attr of the node, keyed
//! by the attr's name. Converting `tf.math.cumprod(x, axis=1,
//! exclusive=True, reverse=True)` with TensorFlow 2.21 gives the custom op
//! `Cumprod` with the options `{"T": 0, "Tidx": 2, "exclusive": true,
//! "reverse": true}` (`tests/data/make_bridge_models.py` makes that model):
//!
//! | attr | written as |
//! | --- | --- |
//! | `string` | a string (a blob when the bytes are not UTF-8) |
//! | `int` | an int |
//! | `float` | a 32-bit float |
//! | `bool` | a bool |
//! | `type` | an int: TensorFlow Lite's `TensorType` code (`float` is 0, `int32` is 2), not TensorFlow's `DataType` |
//! | `list(string)`, `list(int)`, `list(float)` | a vector of those |
//!
//! The converter drops the attrs it cannot write (shapes, tensors,
//! functions, lists of bools, types or shapes, empty lists) with a warning.
//! [`encode_attrs`] writes more, so that what it writes decodes to the same
//! attrs: a `list(bool)` as a vector of bools, a `list(type)` as a vector of
//! `TensorType` codes, a shape as a vector of its sizes (-1 for an unknown
//! size; dimension names are not kept) or null for an unknown rank, and
//! empty lists as empty vectors. Tensors and functions have no encoding.
//!
//! [`decode_attrs`] reads such a map back against the op's [`OpDef`], which
//! says each attr's type: an attr the map does not have is left out (the op
//! instance takes its default or infers it from the inputs), a key that is
//! not an attr of the op is an error (keys starting with `_`, TensorFlow's
//! internal attrs, are skipped), and every value is checked against the
//! attr's type, minimum and allowed values.
//!
//! ```
//! use op_core::{AttrValue, DType, OpDefBuilder};
//! use op_lite::attrs::{decode_attrs, encode_attrs};
//!
//! let op = OpDefBuilder::new("Cumprod")
//!     .input("x: T").input("axis: Tidx").output("out: T")
//!     .attr("exclusive: bool = false").attr("reverse: bool = false")
//!     .attr("T: numbertype").attr("Tidx: {int32, int64} = DT_INT32")
//!     .build()?;
//! let attrs = vec![
//!     ("exclusive".to_string(), AttrValue::Bool(true)),
//!     ("T".to_string(), AttrValue::Type(DType::F32)),
//! ];
//! let bytes = encode_attrs(&attrs)?;
//! // The two attrs in the op's order.
//! assert_eq!(decode_attrs(&op, &bytes)?, [attrs[0].clone(), attrs[1].clone()]);
//! # Ok::<(), op_core::Error>(())
//! ```

use op_core::error::quoted;
use op_core::op_spec::suggest::closest;
use op_core::op_spec::validate::validate_attr_value;
use op_core::{AttrDef, AttrKind, AttrValue, DType, Error, ListValue, OpDef, Result, ShapeValue};

use crate::kernel::{CustomOptions, OptionValue};
use crate::model::{dtype_from_tflite, tflite_type};

/// An op's attrs: `(name, value)` pairs, as an op instance holds them.
pub type Attrs = Vec<(String, AttrValue)>;

/// Encodes `attrs` as the flexbuffer map TensorFlow's converter writes into
/// a custom op's `custom_options` (see the [module docs](self) for the
/// encoding of each kind).
///
/// Fails (`Unimplemented`) on a `tensor` or `func` attr (or a non-empty
/// list of them), which have no encoding, and (`InvalidArgument`) on a
/// `type` that TensorFlow Lite has no `TensorType` for (the quantized
/// types), naming the attr.
pub fn encode_attrs(attrs: &[(String, AttrValue)]) -> Result<Vec<u8>> {
    let mut builder = flexbuffers::Builder::default();
    let mut map = builder.start_map();
    for (name, value) in attrs {
        encode_value(&mut map, name, value)?;
    }
    map.end_map();
    Ok(builder.view().to_vec())
}

fn type_code(name: &str, dtype: DType) -> Result<i64> {
    tflite_type(dtype).map(i64::from).ok_or_else(|| {
        Error::invalid_argument(format!(
            "attr {} is {dtype}, which TensorFlow Lite has no tensor type for",
            quoted(name)
        ))
    })
}

fn no_encoding(name: &str, kind: AttrKind) -> Error {
    Error::unimplemented(format!(
        "attr {} is a {} value, which custom options cannot hold (TensorFlow's converter drops it too)",
        quoted(name),
        kind.name()
    ))
}

fn encode_value(
    map: &mut flexbuffers::MapBuilder<'_>,
    name: &str,
    value: &AttrValue,
) -> Result<()> {
    match value {
        AttrValue::String(bytes) => match std::str::from_utf8(bytes) {
            Ok(text) => map.push(name, text),
            Err(_) => map.push(name, flexbuffers::Blob(&bytes[..])),
        },
        AttrValue::Int(v) => map.push(name, *v),
        AttrValue::Float(v) => map.push(name, *v),
        AttrValue::Bool(v) => map.push(name, *v),
        AttrValue::Type(dtype) => map.push(name, type_code(name, *dtype)?),
        AttrValue::Shape(shape) if shape.unknown_rank => map.push(name, ()),
        AttrValue::Shape(shape) => {
            let mut dims = map.start_vector(name);
            shape.dims.iter().for_each(|d| dims.push(d.size));
            dims.end_vector();
        }
        AttrValue::Tensor(_) => return Err(no_encoding(name, AttrKind::Tensor)),
        AttrValue::Func(_) => return Err(no_encoding(name, AttrKind::Func)),
        AttrValue::List(list) => {
            let mut vector = map.start_vector(name);
            match list {
                ListValue::String(items) => {
                    for bytes in items {
                        match std::str::from_utf8(bytes) {
                            Ok(text) => vector.push(text),
                            Err(_) => vector.push(flexbuffers::Blob(&bytes[..])),
                        }
                    }
                }
                ListValue::Int(items) => items.iter().for_each(|v| vector.push(*v)),
                ListValue::Float(items) => items.iter().for_each(|v| vector.push(*v)),
                ListValue::Bool(items) => items.iter().for_each(|v| vector.push(*v)),
                ListValue::Type(items) => {
                    for dtype in items {
                        vector.push(type_code(name, *dtype)?);
                    }
                }
                ListValue::Shape(items) => {
                    for shape in items {
                        if shape.unknown_rank {
                            vector.push(());
                        } else {
                            let mut dims = vector.start_vector();
                            shape.dims.iter().for_each(|d| dims.push(d.size));
                            dims.end_vector();
                        }
                    }
                }
                ListValue::Tensor(items) if !items.is_empty() => {
                    return Err(no_encoding(name, AttrKind::Tensor));
                }
                ListValue::Func(items) if !items.is_empty() => {
                    return Err(no_encoding(name, AttrKind::Func));
                }
                ListValue::Tensor(_) | ListValue::Func(_) => {}
            }
            vector.end_vector();
        }
    }
    Ok(())
}

/// Decodes `bytes`, a custom op's options, into the attrs of `op`, in the
/// order `op` declares them (see the [module docs](self)).
///
/// Fails (`InvalidArgument`) when the bytes are not a flexbuffer map, a key
/// is not an attr of `op` (naming the attrs and the closest one), or a
/// value does not read as its attr's type or breaks its minimum or allowed
/// values; every message names the op and the attr.
pub fn decode_attrs(op: &OpDef, bytes: &[u8]) -> Result<Attrs> {
    let options = CustomOptions::decode(bytes)
        .map_err(|e| Error::invalid_argument(format!("op {}: {}", op.name, e.message())))?;
    for key in options.names() {
        if !key.starts_with('_') && !op.attrs.iter().any(|a| a.name == key) {
            let mut message = format!(
                "op {}: custom option {} is not an attr of the op",
                op.name,
                quoted(key)
            );
            if op.attrs.is_empty() {
                message.push_str(" (it has no attrs)");
            } else {
                let names: Vec<String> = op
                    .attrs
                    .iter()
                    .map(|a| quoted(&a.name).to_string())
                    .collect();
                message.push_str(&format!(" (its attrs are {})", names.join(", ")));
                if let Some(near) = closest(key, op.attrs.iter().map(|a| a.name.as_str())) {
                    message.push_str(&format!("; did you mean {}?", quoted(near)));
                }
            }
            return Err(Error::invalid_argument(message));
        }
    }
    let mut attrs = Attrs::new();
    for attr in &op.attrs {
        let Some(option) = options.value(&attr.name) else {
            continue;
        };
        let value = decode_value(attr, option)
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "op {}: custom option {} is {option}, expected a value of attr type {}",
                    op.name,
                    quoted(&attr.name),
                    attr.ty
                ))
            })?
            .map_err(|e| Error::invalid_argument(format!("op {}: {}", op.name, e.message())))?;
        validate_attr_value(&value, attr)
            .map_err(|e| Error::invalid_argument(format!("op {}: {e}", op.name)))?;
        attrs.push((attr.name.clone(), value));
    }
    Ok(attrs)
}

/// `option` as a value of `attr`'s type: `None` when it is of another kind,
/// an error when it is of the right kind but names no dtype.
fn decode_value(attr: &AttrDef, option: &OptionValue) -> Option<Result<AttrValue>> {
    if attr.ty.is_list {
        let OptionValue::Vector(items) = option else {
            return None;
        };
        let list = match attr.ty.kind {
            AttrKind::String => ListValue::String(items.iter().map(bytes).collect::<Option<_>>()?),
            AttrKind::Int => ListValue::Int(items.iter().map(int).collect::<Option<_>>()?),
            AttrKind::Float => ListValue::Float(items.iter().map(float).collect::<Option<_>>()?),
            AttrKind::Bool => ListValue::Bool(items.iter().map(boolean).collect::<Option<_>>()?),
            AttrKind::Type => {
                let codes: Vec<i64> = items.iter().map(int).collect::<Option<_>>()?;
                match codes.iter().map(|c| dtype(attr, *c)).collect() {
                    Ok(types) => ListValue::Type(types),
                    Err(e) => return Some(Err(e)),
                }
            }
            AttrKind::Shape => ListValue::Shape(items.iter().map(shape).collect::<Option<_>>()?),
            AttrKind::Tensor | AttrKind::Func if items.is_empty() => ListValue::empty(attr.ty.kind),
            AttrKind::Tensor | AttrKind::Func => return None,
        };
        return Some(Ok(AttrValue::List(list)));
    }
    Some(Ok(match attr.ty.kind {
        AttrKind::String => AttrValue::String(bytes(option)?),
        AttrKind::Int => AttrValue::Int(int(option)?),
        AttrKind::Float => AttrValue::Float(float(option)?),
        AttrKind::Bool => AttrValue::Bool(boolean(option)?),
        AttrKind::Type => return Some(dtype(attr, int(option)?).map(AttrValue::Type)),
        AttrKind::Shape => AttrValue::Shape(shape(option)?),
        AttrKind::Tensor | AttrKind::Func => return None,
    }))
}

fn bytes(option: &OptionValue) -> Option<Vec<u8>> {
    match option {
        OptionValue::String(text) => Some(text.clone().into_bytes()),
        OptionValue::Blob(bytes) => Some(bytes.clone()),
        _ => None,
    }
}

fn int(option: &OptionValue) -> Option<i64> {
    match *option {
        OptionValue::Int(v) => Some(v),
        OptionValue::UInt(v) => i64::try_from(v).ok(),
        _ => None,
    }
}

fn float(option: &OptionValue) -> Option<f32> {
    crate::kernel::FromOption::from_option(option)
}

fn boolean(option: &OptionValue) -> Option<bool> {
    match *option {
        OptionValue::Bool(v) => Some(v),
        _ => None,
    }
}

fn shape(option: &OptionValue) -> Option<ShapeValue> {
    match option {
        OptionValue::Null => Some(ShapeValue::unknown_rank()),
        OptionValue::Vector(sizes) => Some(ShapeValue::from_sizes(
            &sizes.iter().map(int).collect::<Option<Vec<_>>>()?,
        )),
        _ => None,
    }
}

fn dtype(attr: &AttrDef, code: i64) -> Result<DType> {
    i8::try_from(code)
        .ok()
        .and_then(dtype_from_tflite)
        .ok_or_else(|| {
            Error::invalid_argument(format!(
                "custom option {} is {code}, which is not a TensorFlow Lite tensor type code",
                quoted(&attr.name)
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use op_core::OpDefBuilder;
    use proptest::prelude::*;

    /// What TensorFlow 2.21's converter wrote into the custom options of
    /// `tf.math.cumprod(x, axis=1, exclusive=True, reverse=True)` on a float
    /// `x`, converted with `allow_custom_ops=True` (the model is
    /// `tests/data/cumprod_custom.tflite`).
    const CONVERTER_CUMPROD: &str =
        "540054696478006578636c7573697665007265766572736500041a19150c0401040002010104046868082401";

    fn hex(text: &str) -> Vec<u8> {
        (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
            .collect()
    }

    fn cumprod() -> OpDef {
        OpDefBuilder::new("Cumprod")
            .input("x: T")
            .input("axis: Tidx")
            .output("out: T")
            .attr("exclusive: bool = false")
            .attr("reverse: bool = false")
            .attr("T: numbertype")
            .attr("Tidx: {int32, int64} = DT_INT32")
            .build()
            .unwrap()
    }

    fn attr(name: &str, value: AttrValue) -> (String, AttrValue) {
        (name.to_string(), value)
    }

    #[test]
    fn the_converter_s_options_decode_with_types_as_tensorflow_lite_codes() {
        let attrs = decode_attrs(&cumprod(), &hex(CONVERTER_CUMPROD)).unwrap();
        let expected = [
            attr("exclusive", AttrValue::Bool(true)),
            attr("reverse", AttrValue::Bool(true)),
            attr("T", AttrValue::Type(DType::F32)),
            attr("Tidx", AttrValue::Type(DType::I32)),
        ];
        assert_eq!(attrs, expected);
        // And encoding them gives the converter's bytes again.
        let mut sorted = expected.to_vec();
        sorted.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(encode_attrs(&sorted).unwrap(), hex(CONVERTER_CUMPROD));
    }

    #[test]
    fn missing_attrs_are_left_out_and_internal_keys_skipped() {
        let mut builder = flexbuffers::Builder::default();
        let mut map = builder.start_map();
        map.push("reverse", true);
        map.push("_class", "loc:@x");
        map.end_map();
        let attrs = decode_attrs(&cumprod(), builder.view()).unwrap();
        assert_eq!(attrs, [attr("reverse", AttrValue::Bool(true))]);
        assert!(decode_attrs(&cumprod(), &[]).unwrap().is_empty());
    }

    #[test]
    fn an_unknown_key_names_the_attrs_and_the_closest() {
        let bytes = encode_attrs(&[attr("revers", AttrValue::Bool(true))]).unwrap();
        let err = decode_attrs(&cumprod(), &bytes).unwrap_err();
        assert_eq!(err.code(), op_core::Code::InvalidArgument);
        assert_eq!(
            err.message(),
            "op Cumprod: custom option 'revers' is not an attr of the op (its attrs are 'exclusive', \
             'reverse', 'T', 'Tidx'); did you mean 'reverse'?"
        );
    }

    #[test]
    fn a_value_of_the_wrong_type_or_out_of_range_names_the_op_and_the_attr() {
        let bytes = encode_attrs(&[attr("exclusive", AttrValue::Int(3))]).unwrap();
        let err = decode_attrs(&cumprod(), &bytes).unwrap_err();
        assert_eq!(
            err.message(),
            "op Cumprod: custom option 'exclusive' is an int (3), expected a value of attr type bool"
        );
        let bytes = encode_attrs(&[attr("Tidx", AttrValue::Type(DType::F32))]).unwrap();
        let err = decode_attrs(&cumprod(), &bytes).unwrap_err();
        assert_eq!(
            err.message(),
            "op Cumprod: Value for attr 'Tidx' of float is not in the list of allowed values: int32, int64"
        );
        let bytes = encode_attrs(&[attr("T", AttrValue::Int(17))]).unwrap();
        let err = decode_attrs(&cumprod(), &bytes).unwrap_err();
        assert_eq!(
            err.message(),
            "op Cumprod: custom option 'T' is 17, which is not a TensorFlow Lite tensor type code"
        );
        let err = decode_attrs(&cumprod(), &[1, 2, 3]).unwrap_err();
        assert!(
            err.message()
                .starts_with("op Cumprod: custom options (3 bytes) are not a valid"),
            "{err}"
        );
    }

    #[test]
    fn tensors_functions_and_quantized_types_do_not_encode() {
        let err = encode_attrs(&[attr("f", AttrValue::Func(Default::default()))]).unwrap_err();
        assert_eq!(err.code(), op_core::Code::Unimplemented);
        assert_eq!(
            err.message(),
            "attr 'f' is a func value, which custom options cannot hold (TensorFlow's converter drops it too)"
        );
        let err = encode_attrs(&[attr("T", AttrValue::Type(DType::QInt8))]).unwrap_err();
        assert_eq!(
            err.message(),
            "attr 'T' is qint8, which TensorFlow Lite has no tensor type for"
        );
    }

    /// Every dtype TensorFlow Lite has a code for.
    fn lite_dtype() -> impl Strategy<Value = DType> {
        proptest::sample::select(
            op_core::op_spec::dtype::ALL_TYPES
                .iter()
                .copied()
                .filter(|t| tflite_type(*t).is_some())
                .collect::<Vec<_>>(),
        )
    }

    fn shape_value() -> impl Strategy<Value = ShapeValue> {
        prop_oneof![
            1 => Just(ShapeValue::unknown_rank()),
            4 => proptest::collection::vec(-1i64..100, 0..5).prop_map(|s| ShapeValue::from_sizes(&s)),
        ]
    }

    fn finite() -> impl Strategy<Value = f32> {
        any::<f32>().prop_filter("finite", |f| f.is_finite())
    }

    /// An attr value of every kind that has an encoding.
    fn value() -> impl Strategy<Value = AttrValue> {
        use proptest::collection::vec;
        let bytes = vec(any::<u8>(), 0..8);
        prop_oneof![
            prop_oneof![bytes.clone(), "[a-z ]{0,8}".prop_map(String::into_bytes)]
                .prop_map(AttrValue::String),
            any::<i64>().prop_map(AttrValue::Int),
            finite().prop_map(AttrValue::Float),
            any::<bool>().prop_map(AttrValue::Bool),
            lite_dtype().prop_map(AttrValue::Type),
            shape_value().prop_map(AttrValue::Shape),
            vec(bytes, 0..4).prop_map(|l| AttrValue::List(ListValue::String(l))),
            vec(any::<i64>(), 0..4).prop_map(|l| AttrValue::List(ListValue::Int(l))),
            vec(finite(), 0..4).prop_map(|l| AttrValue::List(ListValue::Float(l))),
            vec(any::<bool>(), 0..4).prop_map(|l| AttrValue::List(ListValue::Bool(l))),
            vec(lite_dtype(), 0..4).prop_map(|l| AttrValue::List(ListValue::Type(l))),
            vec(shape_value(), 0..4).prop_map(|l| AttrValue::List(ListValue::Shape(l))),
        ]
    }

    proptest! {
        /// Any attrs of the kinds that encode decode to themselves, in the
        /// op's order, against an op whose attrs have their types.
        #[test]
        fn attrs_round_trip(
            attrs in proptest::collection::btree_map("[A-Za-z][A-Za-z0-9_]{0,6}", value(), 0..8),
        ) {
            let op = OpDef {
                name: "Op".into(),
                attrs: attrs
                    .iter()
                    .map(|(name, v)| {
                        AttrDef::new(name.clone(), v.attr_type())
                    })
                    .collect(),
                ..OpDef::default()
            };
            let attrs: Attrs = attrs.into_iter().collect();
            let bytes = encode_attrs(&attrs).unwrap();
            prop_assert_eq!(decode_attrs(&op, &bytes).unwrap(), attrs);
        }
    }
}
