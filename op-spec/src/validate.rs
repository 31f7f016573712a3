//! Checking attr values against their definitions, as TensorFlow's
//! `ValidateAttrValue` does: type, minimum, allowed values.

use std::fmt;

use crate::attr_value::{ListValue, ShapeError, ShapeValue};
use crate::{AttrDef, AttrValue, DType};

/// Why a value does not fit an attr.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AttrValueError {
    /// The value is of another type than the attr's.
    WrongType {
        /// The attr's name.
        attr: String,
        /// The attr's type (`int`, `list(type)`).
        expected: String,
        /// The value's type.
        found: String,
    },
    /// An int below the attr's minimum.
    BelowMinimum {
        /// The attr's name.
        attr: String,
        /// The value given.
        value: i64,
        /// The least value allowed.
        minimum: i64,
    },
    /// A list shorter than the attr's minimum length.
    TooShort {
        /// The attr's name.
        attr: String,
        /// The length given.
        length: usize,
        /// The least length allowed.
        minimum: i64,
    },
    /// A type or string not among the attr's allowed values.
    NotAllowed {
        /// The attr's name.
        attr: String,
        /// The offending value, summarized (`int64`, `"banana"`).
        value: String,
        /// The allowed values, summarized and comma separated.
        allowed: String,
    },
    /// A shape value that cannot be a shape (a dimension below -1, too many
    /// dimensions, an unknown rank with dimensions).
    BadShape {
        /// The attr's name.
        attr: String,
        /// For a `list(shape)` attr, the position of the bad shape.
        list_index: Option<usize>,
        /// What is wrong with it.
        error: ShapeError,
    },
    /// A tensor value that cannot be a tensor.
    BadTensor {
        /// The attr's name.
        attr: String,
        /// What is wrong with it.
        reason: String,
    },
}

impl fmt::Display for AttrValueError {
    /// Messages follow TensorFlow's wording, so that they read familiar.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AttrValueError::WrongType {
                attr,
                expected,
                found,
            } => {
                write!(
                    f,
                    "AttrValue had value with type '{found}' when '{expected}' expected for attr '{attr}'"
                )
            }
            AttrValueError::BelowMinimum {
                attr,
                value,
                minimum,
            } => {
                write!(
                    f,
                    "Value for attr '{attr}' of {value} must be at least minimum {minimum}"
                )
            }
            AttrValueError::TooShort {
                attr,
                length,
                minimum,
            } => {
                write!(
                    f,
                    "Length for attr '{attr}' of {length} must be at least minimum {minimum}"
                )
            }
            AttrValueError::NotAllowed {
                attr,
                value,
                allowed,
            } => {
                write!(
                    f,
                    "Value for attr '{attr}' of {value} is not in the list of allowed values: {allowed}"
                )
            }
            AttrValueError::BadShape {
                attr,
                list_index: None,
                error,
            } => {
                write!(f, "Value for attr '{attr}' is not a valid shape: {error}")
            }
            AttrValueError::BadShape {
                attr,
                list_index: Some(i),
                error,
            } => {
                write!(
                    f,
                    "Value {i} of attr '{attr}' is not a valid shape: {error}"
                )
            }
            AttrValueError::BadTensor { attr, reason } => {
                write!(f, "Value for attr '{attr}' is not a valid tensor: {reason}")
            }
        }
    }
}

impl std::error::Error for AttrValueError {}

fn join<T>(items: &[T], f: impl Fn(&T) -> String) -> String {
    items.iter().map(f).collect::<Vec<_>>().join(", ")
}

fn quote(s: &[u8]) -> String {
    format!("\"{}\"", crate::pbtxt::c_escape(s))
}

/// A caller's string value, as [`quote`] writes it, cut after
/// [`QUOTE_LIMIT`](crate::quote::QUOTE_LIMIT) bytes: an error must not
/// echo a huge value.
fn quote_value(s: &[u8]) -> String {
    use crate::quote::QUOTE_LIMIT;
    if s.len() <= QUOTE_LIMIT {
        return quote(s);
    }
    format!(
        "\"{}…\" ({} bytes)",
        crate::pbtxt::c_escape(&s[..QUOTE_LIMIT]),
        s.len()
    )
}

/// Checks that `value` may be the value of `attr`: its type, its minimum, its
/// allowed values, and that its shapes are shapes ([`ShapeValue::validate`]).
///
/// ```
/// use op_spec::{validate::validate_attr_value, AttrValue, DType, OpDefBuilder};
/// let op = OpDefBuilder::new("Op").attr("T: {float, int32}").build().unwrap();
/// let t = op.attr("T").unwrap();
/// assert!(validate_attr_value(&AttrValue::Type(DType::F32), t).is_ok());
/// let err = validate_attr_value(&AttrValue::Type(DType::I64), t).unwrap_err();
/// assert_eq!(err.to_string(), "Value for attr 'T' of int64 is not in the list of allowed values: float, int32");
/// ```
pub fn validate_attr_value(value: &AttrValue, attr: &AttrDef) -> Result<(), AttrValueError> {
    if !value.has_type(attr.ty) {
        return Err(AttrValueError::WrongType {
            attr: attr.name.clone(),
            expected: attr.ty.to_string(),
            found: value.attr_type().to_string(),
        });
    }
    if let Some(minimum) = attr.minimum {
        match value {
            AttrValue::Int(i) if *i < minimum => {
                return Err(AttrValueError::BelowMinimum {
                    attr: attr.name.clone(),
                    value: *i,
                    minimum,
                });
            }
            AttrValue::List(list) if (list.len() as i128) < i128::from(minimum) => {
                return Err(AttrValueError::TooShort {
                    attr: attr.name.clone(),
                    length: list.len(),
                    minimum,
                });
            }
            _ => {}
        }
    }
    if let Some(allowed) = &attr.allowed_values {
        let not_allowed = |value: String| AttrValueError::NotAllowed {
            attr: attr.name.clone(),
            value,
            allowed: match allowed {
                ListValue::Type(t) => join(t, DType::to_string),
                ListValue::String(s) => join(s, |s| quote(s)),
                other => AttrValue::List(other.clone()).to_string(),
            },
        };
        match (value, allowed) {
            (AttrValue::Type(t), ListValue::Type(ok)) if !ok.contains(t) => {
                return Err(not_allowed(t.to_string()));
            }
            (AttrValue::List(ListValue::Type(ts)), ListValue::Type(ok)) => {
                if let Some(t) = ts.iter().find(|t| !ok.contains(t)) {
                    return Err(not_allowed(t.to_string()));
                }
            }
            (AttrValue::String(s), ListValue::String(ok)) if !ok.contains(s) => {
                return Err(not_allowed(quote_value(s)));
            }
            (AttrValue::List(ListValue::String(ss)), ListValue::String(ok)) => {
                if let Some(s) = ss.iter().find(|s| !ok.contains(s)) {
                    return Err(not_allowed(quote_value(s)));
                }
            }
            _ => {}
        }
    }
    let shapes: &[ShapeValue] = match value {
        AttrValue::Shape(s) => std::slice::from_ref(s),
        AttrValue::List(ListValue::Shape(ss)) => ss,
        _ => &[],
    };
    for (i, shape) in shapes.iter().enumerate() {
        if let Err(error) = shape.validate() {
            return Err(AttrValueError::BadShape {
                attr: attr.name.clone(),
                list_index: matches!(value, AttrValue::List(_)).then_some(i),
                error,
            });
        }
    }
    let tensors: &[crate::TensorValue] = match value {
        AttrValue::Tensor(t) => std::slice::from_ref(&**t),
        AttrValue::List(ListValue::Tensor(ts)) => ts,
        _ => &[],
    };
    for t in tensors {
        if t.dtype.is_none() {
            return Err(AttrValueError::BadTensor {
                attr: attr.name.clone(),
                reason: "it has no dtype (write e.g. { dtype: DT_INT32 int_val: 5 })".into(),
            });
        }
    }
    Ok(())
}
