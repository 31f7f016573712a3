//! Tensors to and from [`TensorValue`], TensorFlow's `TensorProto`: the
//! value of a `tensor` attr (a `Const` node's `value`), and the tensors of
//! GraphDefs and saved programs.
//!
//! A `TensorProto` holds its elements in one of two ways, and TensorFlow's
//! writers use both:
//!
//! - `tensor_content`: the raw little-endian bytes of every element (what
//!   TensorFlow's Python writes for arrays of numbers);
//! - a typed repeated field (`float_val`, `int_val`, `int64_val`, ...). It
//!   may hold fewer values than the shape has elements: the last value
//!   repeats to fill the shape, and no values at all means zeros (what
//!   TensorFlow writes for `tf.zeros` and for scalars).
//!
//! [`Tensor::from_tensor_value`] reads both, as `Tensor::FromProto` does;
//! [`Tensor::to_tensor_value`] writes a typed field for zero or one element
//! and strings, and `tensor_content` otherwise, as TensorFlow's Python
//! does. Errors are `InvalidArgument` and say which field disagrees with
//! the shape and how.

use op_spec::{DType, ShapeValue, TensorValue};

use super::Tensor;
use crate::element::{Complex64, Complex128, Element, QInt8, QInt16, QInt32, QUInt8, QUInt16};
use crate::error::{Error, Result};
use crate::shape::TensorShape;
use half::{bf16, f16};

impl Tensor {
    /// The tensor that `value` describes (TensorFlow's `Tensor::FromProto`).
    ///
    /// Returns an `InvalidArgument` error if the dtype is missing or has no
    /// tensors (`resource`, `variant`), the shape is not fully known, the
    /// `tensor_content` bytes do not match the shape, or a typed field holds
    /// more values than the shape has elements or values out of the dtype's
    /// range.
    ///
    /// ```
    /// use op_core::{DType, Tensor, TensorValue};
    /// use op_core::op_spec::ShapeValue;
    ///
    /// // `tf.fill([2, 2], 7)` as TensorFlow writes it: one value, repeated.
    /// let value = TensorValue {
    ///     dtype: Some(DType::I32),
    ///     shape: Some(ShapeValue::from_sizes(&[2, 2])),
    ///     int_val: vec![7],
    ///     ..TensorValue::default()
    /// };
    /// let t = Tensor::from_tensor_value(&value)?;
    /// assert_eq!(t.as_slice::<i32>()?, [7, 7, 7, 7]);
    /// assert_eq!(Tensor::from_tensor_value(&t.to_tensor_value()?)?, t);
    /// # Ok::<(), op_core::Error>(())
    /// ```
    pub fn from_tensor_value(value: &TensorValue) -> Result<Tensor> {
        let dtype = value
            .dtype
            .ok_or_else(|| Error::invalid_argument("the tensor proto has no dtype"))?;
        let shape = fully_known(value.shape.as_ref())?;
        decode(dtype, value, shape)
    }

    /// This tensor as a [`TensorValue`] (TensorFlow's `Tensor::AsProtoField`
    /// for at most one element and for strings, `AsProtoTensorContent`
    /// otherwise).
    ///
    /// Returns an `InvalidArgument` error for `resource` tensors (a handle
    /// has no meaning outside this process) and a `FailedPrecondition`
    /// error for tensors in device memory.
    pub fn to_tensor_value(&self) -> Result<TensorValue> {
        encode(self)
    }
}

fn no_tensors(dtype: DType) -> Error {
    Error::invalid_argument(format!(
        "a tensor proto of dtype {dtype} cannot be converted: {dtype} tensors have no portable value"
    ))
}

/// The shape of a tensor proto: every dimension known (a missing shape is a
/// scalar, as in TensorFlow).
fn fully_known(shape: Option<&ShapeValue>) -> Result<TensorShape> {
    let Some(shape) = shape else {
        return Ok(TensorShape::scalar());
    };
    if shape.unknown_rank {
        return Err(Error::invalid_argument(
            "the tensor proto's shape has an unknown rank; a tensor needs a fully known shape",
        ));
    }
    let dims = shape
        .dims
        .iter()
        .map(|d| usize::try_from(d.size))
        .collect::<std::result::Result<Vec<usize>, _>>()
        .map_err(|_| {
            Error::invalid_argument(format!(
                "the tensor proto's shape {shape} has an unknown or negative dimension; \
                 a tensor needs a fully known shape"
            ))
        })?;
    TensorShape::try_new(dims)
}

/// The element types a tensor proto can hold, with the typed field that
/// holds them and their little-endian encoding.
trait ProtoElement: Element + Copy {
    /// The typed field's values, converted (an error for a value out of
    /// range, naming the field).
    fn from_field(value: &TensorValue) -> Result<Vec<Self>>;
    /// Appends `values` to the typed field.
    fn to_field(values: &[Self], out: &mut TensorValue);
    /// The size of one element in `tensor_content`.
    const SIZE: usize;
    /// One element from its `SIZE` little-endian bytes.
    fn from_le(bytes: &[u8]) -> Self;
    /// Appends this element's little-endian bytes.
    fn put_le(self, out: &mut Vec<u8>);
}

/// Implements [`ProtoElement`] for types with `from_le_bytes`, whose typed
/// field holds `$field_ty` values convertible with `$from` (checked) and
/// `$to` (exact).
macro_rules! proto_element {
    ($($ty:ty: $field:ident, $size:literal, |$x:ident| $from:expr, |$y:ident| $to:expr;)*) => {$(
        impl ProtoElement for $ty {
            fn from_field(value: &TensorValue) -> Result<Vec<Self>> {
                value.$field.iter().map(|&$x| $from.ok_or_else(|| out_of_range(
                    stringify!($field), $x, <$ty as Element>::DTYPE,
                ))).collect()
            }
            fn to_field(values: &[Self], out: &mut TensorValue) {
                out.$field.extend(values.iter().map(|&$y| $to));
            }
            const SIZE: usize = $size;
            fn from_le(bytes: &[u8]) -> Self {
                let mut le = [0u8; $size];
                le.copy_from_slice(bytes);
                Self::from_le_bytes(le)
            }
            fn put_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}

proto_element! {
    f32: float_val, 4, |x| Some(x), |y| y;
    f64: double_val, 8, |x| Some(x), |y| y;
    i32: int_val, 4, |x| Some(x), |y| y;
    i16: int_val, 2, |x| i16::try_from(x).ok(), |y| i32::from(y);
    i8: int_val, 1, |x| i8::try_from(x).ok(), |y| i32::from(y);
    u8: int_val, 1, |x| u8::try_from(x).ok(), |y| i32::from(y);
    u16: int_val, 2, |x| u16::try_from(x).ok(), |y| i32::from(y);
    i64: int64_val, 8, |x| Some(x), |y| y;
    u32: uint32_val, 4, |x| Some(x), |y| y;
    u64: uint64_val, 8, |x| Some(x), |y| y;
    f16: half_val, 2, |x| u16::try_from(x).ok().map(f16::from_bits), |y| i32::from(y.to_bits());
    bf16: half_val, 2, |x| u16::try_from(x).ok().map(bf16::from_bits), |y| i32::from(y.to_bits());
}

/// Implements [`ProtoElement`] for the quantized newtypes through their
/// integers, which TensorFlow keeps in `int_val`.
macro_rules! proto_quantized {
    ($($ty:ident($inner:ty);)*) => {$(
        impl ProtoElement for $ty {
            fn from_field(value: &TensorValue) -> Result<Vec<Self>> {
                value.int_val.iter().map(|&x| <$inner>::try_from(x).map($ty).map_err(|_| {
                    out_of_range("int_val", x, <$ty as Element>::DTYPE)
                })).collect()
            }
            fn to_field(values: &[Self], out: &mut TensorValue) {
                out.int_val.extend(values.iter().map(|y| i32::from(y.0)));
            }
            const SIZE: usize = <$inner as ProtoElement>::SIZE;
            fn from_le(bytes: &[u8]) -> Self {
                $ty(<$inner as ProtoElement>::from_le(bytes))
            }
            fn put_le(self, out: &mut Vec<u8>) {
                self.0.put_le(out)
            }
        }
    )*};
}

proto_quantized! {
    QInt8(i8);
    QUInt8(u8);
    QInt16(i16);
    QUInt16(u16);
    QInt32(i32);
}

/// Implements [`ProtoElement`] for the complex types, whose typed fields
/// hold (real, imaginary) pairs.
macro_rules! proto_complex {
    ($($ty:ty: $part:ty, $field:ident;)*) => {$(
        impl ProtoElement for $ty {
            fn from_field(value: &TensorValue) -> Result<Vec<Self>> {
                let parts = &value.$field;
                if parts.len() % 2 != 0 {
                    return Err(Error::invalid_argument(format!(
                        "the tensor proto's {} holds {} numbers; complex values need (real, imaginary) pairs",
                        stringify!($field), parts.len()
                    )));
                }
                Ok(parts.chunks_exact(2).map(|p| <$ty>::new(p[0], p[1])).collect())
            }
            fn to_field(values: &[Self], out: &mut TensorValue) {
                out.$field.extend(values.iter().flat_map(|c| [c.re, c.im]));
            }
            const SIZE: usize = 2 * size_of::<$part>();
            fn from_le(bytes: &[u8]) -> Self {
                let half = size_of::<$part>();
                <$ty>::new(<$part>::from_le(&bytes[..half]), <$part>::from_le(&bytes[half..]))
            }
            fn put_le(self, out: &mut Vec<u8>) {
                self.re.put_le(out);
                self.im.put_le(out);
            }
        }
    )*};
}

proto_complex! {
    Complex64: f32, scomplex_val;
    Complex128: f64, dcomplex_val;
}

impl ProtoElement for bool {
    fn from_field(value: &TensorValue) -> Result<Vec<Self>> {
        Ok(value.bool_val.clone())
    }
    fn to_field(values: &[Self], out: &mut TensorValue) {
        out.bool_val.extend_from_slice(values);
    }
    const SIZE: usize = 1;
    fn from_le(bytes: &[u8]) -> Self {
        bytes[0] != 0
    }
    fn put_le(self, out: &mut Vec<u8>) {
        out.push(u8::from(self));
    }
}

fn out_of_range(field: &str, value: impl std::fmt::Display, dtype: DType) -> Error {
    Error::invalid_argument(format!(
        "the tensor proto's {field} holds {value}, which is out of range for {dtype}"
    ))
}

/// Calls `$f::<T>($args)` with `T` the element type of `$dtype`, for the
/// dtypes a proto holds as numbers; evaluates `$other` for the rest.
macro_rules! with_number_type {
    ($dtype:expr, $f:ident($($args:expr),*), $other:expr) => {
        match $dtype {
            DType::F32 => $f::<f32>($($args),*),
            DType::F64 => $f::<f64>($($args),*),
            DType::I32 => $f::<i32>($($args),*),
            DType::U8 => $f::<u8>($($args),*),
            DType::I16 => $f::<i16>($($args),*),
            DType::I8 => $f::<i8>($($args),*),
            DType::Complex64 => $f::<Complex64>($($args),*),
            DType::I64 => $f::<i64>($($args),*),
            DType::Bool => $f::<bool>($($args),*),
            DType::QInt8 => $f::<QInt8>($($args),*),
            DType::QUInt8 => $f::<QUInt8>($($args),*),
            DType::QInt32 => $f::<QInt32>($($args),*),
            DType::BF16 => $f::<bf16>($($args),*),
            DType::QInt16 => $f::<QInt16>($($args),*),
            DType::QUInt16 => $f::<QUInt16>($($args),*),
            DType::U16 => $f::<u16>($($args),*),
            DType::Complex128 => $f::<Complex128>($($args),*),
            DType::F16 => $f::<f16>($($args),*),
            DType::U32 => $f::<u32>($($args),*),
            DType::U64 => $f::<u64>($($args),*),
            DType::String | DType::Resource | DType::Variant => $other,
        }
    };
}

fn decode(dtype: DType, value: &TensorValue, shape: TensorShape) -> Result<Tensor> {
    with_number_type!(
        dtype,
        decode_numbers(value, &shape),
        match dtype {
            DType::String => {
                let values = fill_from_field(value.string_val.clone(), &shape, dtype)?;
                Tensor::from_vec(shape.dims(), values)
            }
            _ => Err(no_tensors(dtype)),
        }
    )
}

fn decode_numbers<T: ProtoElement>(value: &TensorValue, shape: &TensorShape) -> Result<Tensor> {
    let n = shape.num_elements();
    let values = if value.tensor_content.is_empty() {
        fill_from_field(T::from_field(value)?, shape, T::DTYPE)?
    } else {
        let bytes = &value.tensor_content;
        if Some(bytes.len()) != n.checked_mul(T::SIZE) {
            return Err(Error::invalid_argument(format!(
                "the tensor proto's tensor_content has {} bytes, but shape {shape} of {} needs {n} x {} bytes",
                bytes.len(),
                T::DTYPE,
                T::SIZE
            )));
        }
        bytes.chunks_exact(T::SIZE).map(T::from_le).collect()
    };
    Tensor::from_vec(shape.dims(), values)
}

/// A typed field's values stretched to the shape's element count: the last
/// value repeats, and no values means zeros (`T::default()`).
fn fill_from_field<T: Clone + Default>(
    mut values: Vec<T>,
    shape: &TensorShape,
    dtype: DType,
) -> Result<Vec<T>> {
    let n = shape.num_elements();
    if values.len() > n {
        return Err(Error::invalid_argument(format!(
            "the tensor proto holds {} values of {dtype}, more than shape {shape}'s {n} elements",
            values.len()
        )));
    }
    // A few bytes of proto can ask for a huge tensor (one value repeated
    // over a large shape): fail with an error rather than abort.
    values.try_reserve_exact(n - values.len()).map_err(|_| {
        Error::resource_exhausted(format!(
            "cannot allocate {n} elements of {dtype} for a tensor proto of shape {shape}"
        ))
    })?;
    let last = values.last().cloned().unwrap_or_default();
    values.resize(n, last);
    Ok(values)
}

fn encode(tensor: &Tensor) -> Result<TensorValue> {
    let dims: Vec<i64> = tensor.dims().iter().map(|&d| d as i64).collect();
    let mut out = TensorValue {
        dtype: Some(tensor.dtype()),
        shape: Some(ShapeValue::from_sizes(&dims)),
        ..TensorValue::default()
    };
    with_number_type!(
        tensor.dtype(),
        encode_numbers(tensor, &mut out),
        match tensor.dtype() {
            DType::String => {
                out.string_val = tensor.as_slice::<Vec<u8>>()?.to_vec();
                Ok(())
            }
            dtype => Err(no_tensors(dtype)),
        }
    )?;
    Ok(out)
}

fn encode_numbers<T: ProtoElement>(tensor: &Tensor, out: &mut TensorValue) -> Result<()> {
    let values = tensor.as_slice::<T>()?;
    if values.len() <= 1 {
        T::to_field(values, out);
    } else {
        let mut bytes = Vec::with_capacity(values.len() * T::SIZE);
        for &v in values {
            v.put_le(&mut bytes);
        }
        out.tensor_content = bytes;
    }
    Ok(())
}
