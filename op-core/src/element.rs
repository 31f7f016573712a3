//! [`Element`]: the Rust types that tensors hold, one for each [`DType`].
//!
//! | dtype | element type |
//! |---|---|
//! | `float`, `double` | `f32`, `f64` |
//! | `half`, `bfloat16` | [`half::f16`], [`half::bf16`] |
//! | `int8` ... `int64`, `uint8` ... `uint64` | `i8` ... `i64`, `u8` ... `u64` |
//! | `bool` | `bool` |
//! | `complex64`, `complex128` | [`Complex64`], [`Complex128`] |
//! | `string` | `Vec<u8>`: bytes, not required to be UTF-8 |
//! | `qint8`, `quint8`, `qint16`, `quint16`, `qint32` | [`QInt8`], [`QUInt8`], [`QInt16`], [`QUInt16`], [`QInt32`] |
//! | `resource` | [`ResourceHandle`] |
//! | `variant` | none: variant tensors are not supported |

use std::fmt;

use half::{bf16, f16};
use num_complex::Complex;
use op_spec::DType;

use crate::resource_handle::ResourceHandle;

/// The element type of `complex64` tensors: two `f32`.
pub type Complex64 = Complex<f32>;

/// The element type of `complex128` tensors: two `f64`.
pub type Complex128 = Complex<f64>;

/// Defines the quantized integer newtypes.
macro_rules! quantized {
    ($($name:ident($inner:ty) = $spec:literal),* $(,)?) => {
        $(
            #[doc = concat!(
                "A quantized `", stringify!($inner), "`: the element type of `", $spec,
                "` tensors.\n\nThe value is the raw quantized integer; the scale and ",
                "zero point travel separately, as in TensorFlow."
            )]
            #[repr(transparent)]
            #[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
            pub struct $name(pub $inner);

            impl From<$inner> for $name {
                fn from(value: $inner) -> $name {
                    $name(value)
                }
            }
        )*
    };
}

quantized! {
    QInt8(i8) = "qint8",
    QUInt8(u8) = "quint8",
    QInt16(i16) = "qint16",
    QUInt16(u16) = "quint16",
    QInt32(i32) = "qint32",
}

/// A Rust type that is the element type of one [`DType`].
///
/// The trait is sealed: it is implemented for exactly the types in the
/// [module docs](self), and a tensor of dtype `T::DTYPE` holds elements of
/// type `T`. `Default::default()` is the zero that
/// [`Tensor::zeros`](crate::Tensor::zeros) fills with (the empty string for
/// `string`, the default handle for `resource`).
///
/// ```
/// use op_core::{DType, Element, QInt8};
/// assert_eq!(f32::DTYPE, DType::F32);
/// assert_eq!(<Vec<u8>>::DTYPE, DType::String);
/// assert_eq!(QInt8::DTYPE, DType::QInt8);
/// ```
pub trait Element:
    private::Sealed + Clone + Default + fmt::Debug + PartialEq + Send + Sync + 'static
{
    /// The dtype of tensors holding this type.
    const DTYPE: DType;
}

/// The type-erased storage of tensors, private to the crate.
pub(crate) mod private {
    use std::fmt;

    use ndarray::{ArcArray, IxDyn, ShapeError};
    use op_spec::DType;

    /// Wraps and unwraps the typed arrays of [`Storage`]; implemented by the
    /// element types.
    pub trait Sealed: Sized {
        /// `array` as storage.
        fn wrap(array: ArcArray<Self, IxDyn>) -> Storage;
        /// The array, if `storage` holds this type.
        fn get(storage: &Storage) -> Option<&ArcArray<Self, IxDyn>>;
        /// The array, if `storage` holds this type.
        fn get_mut(storage: &mut Storage) -> Option<&mut ArcArray<Self, IxDyn>>;
        /// The array if `storage` holds this type, else `storage` back.
        fn take(storage: Storage) -> Result<ArcArray<Self, IxDyn>, Storage>;
        /// Formats one element for `Tensor`'s `Debug`.
        fn fmt_element(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
    }

    /// Formats a string element as a byte string literal.
    fn fmt_bytes(bytes: &[u8], f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{}\"", bytes.escape_ascii())
    }

    /// Formats the first `limit` elements of `array`, in row-major order.
    fn fmt_elements<T: Sealed>(
        array: &ArcArray<T, IxDyn>,
        limit: usize,
        f: &mut fmt::Formatter<'_>,
    ) -> fmt::Result {
        f.write_str("[")?;
        for (i, element) in array.iter().take(limit).enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            element.fmt_element(f)?;
        }
        if array.len() > limit {
            f.write_str(", ...")?;
        }
        f.write_str("]")
    }

    /// The formatter of an element: `Debug` unless the entry names one.
    macro_rules! fmt_or_debug {
        () => {
            fmt::Debug::fmt
        };
        ($fmt:path) => {
            $fmt
        };
    }

    /// Defines [`Storage`] and the [`Element`](super::Element) impls from one
    /// list of `DType variant: element type`.
    macro_rules! elements {
        ($($variant:ident: $ty:ty $(=> $fmt:path)?),* $(,)?) => {
            /// A tensor's buffer: a shared, reference-counted array of one
            /// element type, one variant per dtype (named as in `DType`).
            #[derive(Clone, PartialEq)]
            pub enum Storage {
                $(
                    #[doc = concat!("`", stringify!($ty), "` elements.")]
                    $variant(ArcArray<$ty, IxDyn>),
                )*
            }

            impl Storage {
                /// The dtype of the elements.
                pub fn dtype(&self) -> DType {
                    match self {
                        $(Storage::$variant(_) => DType::$variant,)*
                    }
                }

                /// The dimension sizes.
                pub fn dims(&self) -> &[usize] {
                    match self {
                        $(Storage::$variant(a) => a.shape(),)*
                    }
                }

                /// Whether no other storage shares the buffer.
                pub fn is_unique(&self) -> bool {
                    match self {
                        $(Storage::$variant(a) => a.is_unique(),)*
                    }
                }

                /// Storage of `dtype` and shape `dims` filled with the
                /// element type's default value; `None` for `variant`.
                pub fn default(dtype: DType, dims: &[usize]) -> Option<Storage> {
                    match dtype {
                        $(DType::$variant => Some(Storage::$variant(ArcArray::default(IxDyn(dims)))),)*
                        DType::Variant => None,
                    }
                }

                /// The same buffer with shape `dims`; requires standard layout
                /// and the same element count.
                pub fn reshape(&self, dims: &[usize]) -> Result<Storage, ShapeError> {
                    match self {
                        $(Storage::$variant(a) => a
                            .clone()
                            .into_shape_with_order(IxDyn(dims))
                            .map(Storage::$variant),)*
                    }
                }

                /// Formats the first `limit` elements.
                pub fn fmt_elements(&self, limit: usize, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    match self {
                        $(Storage::$variant(a) => fmt_elements(a, limit, f),)*
                    }
                }
            }

            $(
                impl Sealed for $ty {
                    fn wrap(array: ArcArray<Self, IxDyn>) -> Storage {
                        Storage::$variant(array)
                    }

                    fn get(storage: &Storage) -> Option<&ArcArray<Self, IxDyn>> {
                        match storage {
                            Storage::$variant(a) => Some(a),
                            _ => None,
                        }
                    }

                    fn get_mut(storage: &mut Storage) -> Option<&mut ArcArray<Self, IxDyn>> {
                        match storage {
                            Storage::$variant(a) => Some(a),
                            _ => None,
                        }
                    }

                    fn take(storage: Storage) -> Result<ArcArray<Self, IxDyn>, Storage> {
                        match storage {
                            Storage::$variant(a) => Ok(a),
                            other => Err(other),
                        }
                    }

                    fn fmt_element(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        fmt_or_debug!($($fmt)?)(self, f)
                    }
                }

                impl super::Element for $ty {
                    const DTYPE: DType = DType::$variant;
                }
            )*
        };
    }

    use super::{
        Complex64, Complex128, QInt8, QInt16, QInt32, QUInt8, QUInt16, ResourceHandle, bf16, f16,
    };

    elements! {
        F32: f32,
        F64: f64,
        I32: i32,
        U8: u8,
        I16: i16,
        I8: i8,
        String: Vec<u8> => fmt_bytes,
        Complex64: Complex64,
        I64: i64,
        Bool: bool,
        QInt8: QInt8,
        QUInt8: QUInt8,
        QInt32: QInt32,
        BF16: bf16,
        QInt16: QInt16,
        QUInt16: QUInt16,
        U16: u16,
        Complex128: Complex128,
        F16: f16,
        Resource: ResourceHandle,
        U32: u32,
        U64: u64,
    }
}
