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
            #[derive(bytemuck::Pod, bytemuck::Zeroable)]
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

/// How tensors hold their elements on the host, per element type; private
/// to the crate.
pub(crate) mod private {
    use std::fmt;
    use std::sync::Arc;

    use ndarray::{ArcArray, IxDyn};
    use op_spec::DType;

    use super::{
        Complex64, Complex128, QInt8, QInt16, QInt32, QUInt8, QUInt16, ResourceHandle, bf16, f16,
    };
    use crate::allocator::HostAllocator;
    use crate::tensor::storage::{HostData, Inline, Storage};
    use crate::{Error, Result};

    /// Gets an element type's values in and out of [`HostData`];
    /// implemented by the element types.
    pub trait Sealed: Sized {
        /// Whether every bit pattern of the type's size is a value and it
        /// needs no drop (`bytemuck::Pod`): such elements live in raw
        /// blocks of an allocator; the others (`bool`, `string`,
        /// `resource`) only in `Vec`s.
        const POD: bool;

        /// The elements, if `data` holds this type.
        fn host(data: &HostData) -> Option<&[Self]>;

        /// The elements, for writing, if `data` holds this type.
        fn host_mut(data: &mut HostData) -> Option<&mut [Self]>;

        /// `bytes` (aligned for any element type) as elements: for plain
        /// types, which may live in raw bytes; `None` for the others.
        fn in_raw(bytes: &[u8]) -> Option<&[Self]>;

        /// `bytes` as elements, for writing (plain types).
        fn in_raw_mut(bytes: &mut [u8]) -> Option<&mut [Self]>;

        /// The elements' bytes (plain types; `None` for the others): what
        /// a copy to a device's memory sends.
        fn as_raw(values: &[Self]) -> Option<&[u8]>;

        /// `values` copied inside a tensor when plain and at most
        /// [`SMALL_BYTES`](crate::tensor::storage::SMALL_BYTES); `None`
        /// otherwise.
        fn small(values: &[Self]) -> Option<Storage>;

        /// `values` as host data, without copying them.
        fn wrap_vec(values: Vec<Self>) -> HostData;

        /// The `Vec` that `data` holds, if it holds one of this type.
        fn into_vec(data: HostData) -> std::result::Result<Vec<Self>, HostData>;

        /// `array` (standard layout) as host data, kept alive as it is.
        fn wrap_shared(array: ArcArray<Self, IxDyn>) -> HostData;

        /// The array that `data` holds, if it holds one of this type.
        fn shared(data: &HostData) -> Option<&ArcArray<Self, IxDyn>>;

        /// `values` copied into the tensor's own allocation when small
        /// enough and plain; `None` otherwise.
        fn inline(values: &[Self]) -> Option<HostData>;

        /// `len` elements: inside the tensor when plain and small, else
        /// from `alloc`; zeros (the `Default` value) if `zeroed`, else
        /// zeros or what an earlier tensor wrote, for a caller that writes
        /// every element before reading any (only plain types ever hold an
        /// earlier tensor's values: the others always start at `Default`).
        fn allocate(alloc: &HostAllocator, len: usize, zeroed: bool) -> Result<Storage>;

        /// Formats one element for `Tensor`'s `Debug`.
        fn fmt_element(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
    }

    /// Formats a string element as a byte string literal.
    fn fmt_bytes(bytes: &[u8], f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{}\"", bytes.escape_ascii())
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

    /// The raw bytes of an inline or block buffer.
    fn raw_bytes(data: &HostData) -> Option<&[u8]> {
        match data {
            HostData::Inline(inline) => Some(inline.bytes()),
            HostData::Block(block) => Some(block.bytes()),
            HostData::Lent(lent) => Some(lent.bytes()),
            _ => None,
        }
    }

    fn raw_bytes_mut(data: &mut HostData) -> Option<&mut [u8]> {
        match data {
            HostData::Inline(inline) => Some(inline.bytes_mut()),
            HostData::Block(block) => Some(block.bytes_mut()),
            HostData::Lent(lent) => lent.bytes_mut(),
            _ => None,
        }
    }

    /// The byte size of `len` elements of `T`, or `InvalidArgument`.
    pub(crate) fn byte_size<T>(len: usize) -> Result<usize> {
        len.checked_mul(size_of::<T>())
            .filter(|&n| n <= isize::MAX as usize)
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "{len} elements of {} bytes each are more bytes than fit in memory",
                    size_of::<T>()
                ))
            })
    }

    /// `len` plain elements: inside the tensor, or inline in its
    /// reference count's allocation, when small; else a block of `alloc`.
    fn allocate_pod<T: bytemuck::Pod>(
        alloc: &HostAllocator,
        len: usize,
        zeroed: bool,
    ) -> Result<Storage> {
        let size = byte_size::<T>(len)?;
        alloc.check_size(size)?;
        if let Some(small) = Storage::small_zeroed(size) {
            return Ok(small);
        }
        let data = match Inline::zeroed(size) {
            Some(inline) => HostData::Inline(inline),
            None if zeroed => HostData::Block(alloc.allocate_zeroed(size)?),
            None => HostData::Block(alloc.allocate_for_overwrite(size)?),
        };
        Ok(Storage::Host(Arc::new(data)))
    }

    /// `len` default elements in a `Vec`, allocated fallibly and within
    /// `alloc`'s size limit.
    fn allocate_vec<T: Clone + Default>(alloc: &HostAllocator, len: usize) -> Result<Vec<T>> {
        alloc.check_size(byte_size::<T>(len)?)?;
        let mut values = Vec::new();
        values.try_reserve_exact(len).map_err(|e| {
            Error::resource_exhausted(format!(
                "allocating {len} elements of {} bytes each: {e}",
                size_of::<T>()
            ))
        })?;
        values.resize(len, T::default());
        Ok(values)
    }

    /// The parts of [`Sealed`] that differ between plain and other types:
    /// plain ones may also live in raw bytes (inline or a block).
    macro_rules! storage_impl {
        (pod $ty:ty) => {
            const POD: bool = true;

            #[inline]
            fn in_raw(bytes: &[u8]) -> Option<&[Self]> {
                bytemuck::try_cast_slice(bytes).ok()
            }

            #[inline]
            fn in_raw_mut(bytes: &mut [u8]) -> Option<&mut [Self]> {
                bytemuck::try_cast_slice_mut(bytes).ok()
            }

            #[inline]
            fn as_raw(values: &[Self]) -> Option<&[u8]> {
                Some(bytemuck::cast_slice(values))
            }

            #[inline]
            fn small(values: &[Self]) -> Option<Storage> {
                Storage::small_copy(bytemuck::cast_slice(values))
            }

            fn inline(values: &[Self]) -> Option<HostData> {
                let bytes: &[u8] = bytemuck::cast_slice(values);
                Inline::copy_of(bytes).map(HostData::Inline)
            }

            fn allocate(alloc: &HostAllocator, len: usize, zeroed: bool) -> Result<Storage> {
                allocate_pod::<$ty>(alloc, len, zeroed)
            }
        };
        (other $ty:ty) => {
            const POD: bool = false;

            fn in_raw(_: &[u8]) -> Option<&[Self]> {
                None
            }

            fn in_raw_mut(_: &mut [u8]) -> Option<&mut [Self]> {
                None
            }

            fn as_raw(_: &[Self]) -> Option<&[u8]> {
                None
            }

            fn small(_: &[Self]) -> Option<Storage> {
                None
            }

            fn inline(_: &[Self]) -> Option<HostData> {
                None
            }

            fn allocate(alloc: &HostAllocator, len: usize, _zeroed: bool) -> Result<Storage> {
                let values = allocate_vec::<$ty>(alloc, len)?;
                Ok(Storage::Host(Arc::new(Self::wrap_vec(values))))
            }
        };
    }

    /// Defines [`VecData`], [`SharedArray`], the [`Element`](super::Element)
    /// impls and [`visit`] from one list of `kind DType-variant: element
    /// type`, where `kind` is `pod` or `other`.
    macro_rules! elements {
        ($($kind:ident $variant:ident: $ty:ty $(=> $fmt:path)?),* $(,)?) => {
            /// A `Vec` handed to a tensor, one variant per dtype (named as
            /// in `DType`): the tensor owns it as it is, without a copy.
            pub enum VecData {
                $(
                    #[doc = concat!("`", stringify!($ty), "` elements.")]
                    $variant(Vec<$ty>),
                )*
            }

            /// An ndarray array shared with code outside the tensor
            /// (`Tensor::from_shared`), one variant per dtype.
            pub enum SharedArray {
                $(
                    #[doc = concat!("`", stringify!($ty), "` elements.")]
                    $variant(ArcArray<$ty, IxDyn>),
                )*
            }

            impl SharedArray {
                /// Whether no other array shares the buffer.
                pub fn is_unique(&self) -> bool {
                    match self {
                        $(SharedArray::$variant(a) => a.is_unique(),)*
                    }
                }
            }

            /// Calls `visitor` with the element type of `dtype`; `None` for
            /// `variant`, which has none.
            pub fn visit<V: ElementVisitor>(dtype: DType, visitor: V) -> Option<V::Output> {
                match dtype {
                    $(DType::$variant => Some(visitor.visit::<$ty>()),)*
                    DType::Variant => None,
                }
            }

            $(
                impl Sealed for $ty {
                    storage_impl!($kind $ty);

                    fn host(data: &HostData) -> Option<&[Self]> {
                        match data {
                            HostData::Vec(VecData::$variant(v)) => Some(v),
                            HostData::Shared(s) => match &**s {
                                SharedArray::$variant(a) => a.as_slice(),
                                _ => None,
                            },
                            _ => raw_bytes(data).and_then(Self::in_raw),
                        }
                    }

                    fn host_mut(data: &mut HostData) -> Option<&mut [Self]> {
                        match data {
                            HostData::Vec(VecData::$variant(v)) => Some(v),
                            HostData::Shared(s) => match &mut **s {
                                SharedArray::$variant(a) => a.as_slice_mut(),
                                _ => None,
                            },
                            _ => raw_bytes_mut(data).and_then(Self::in_raw_mut),
                        }
                    }

                    fn wrap_vec(values: Vec<Self>) -> HostData {
                        HostData::Vec(VecData::$variant(values))
                    }

                    fn into_vec(data: HostData) -> std::result::Result<Vec<Self>, HostData> {
                        match data {
                            HostData::Vec(VecData::$variant(v)) => Ok(v),
                            other => Err(other),
                        }
                    }

                    fn wrap_shared(array: ArcArray<Self, IxDyn>) -> HostData {
                        HostData::Shared(Box::new(SharedArray::$variant(array)))
                    }

                    fn shared(data: &HostData) -> Option<&ArcArray<Self, IxDyn>> {
                        match data {
                            HostData::Shared(s) => match &**s {
                                SharedArray::$variant(a) => Some(a),
                                _ => None,
                            },
                            _ => None,
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

    /// Code generic over the element type, run for a dtype known only at
    /// run time (see [`visit`]).
    pub trait ElementVisitor {
        /// What the visit returns.
        type Output;
        /// Runs with `T`, the element type of the dtype.
        fn visit<T: super::Element>(self) -> Self::Output;
    }

    elements! {
        pod F32: f32,
        pod F64: f64,
        pod I32: i32,
        pod U8: u8,
        pod I16: i16,
        pod I8: i8,
        other String: Vec<u8> => fmt_bytes,
        pod Complex64: Complex64,
        pod I64: i64,
        other Bool: bool,
        pod QInt8: QInt8,
        pod QUInt8: QUInt8,
        pod QInt32: QInt32,
        pod BF16: bf16,
        pod QInt16: QInt16,
        pod QUInt16: QUInt16,
        pod U16: u16,
        pod Complex128: Complex128,
        pod F16: f16,
        other Resource: ResourceHandle,
        pod U32: u32,
        pod U64: u64,
    }
}
