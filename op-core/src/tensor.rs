//! [`Tensor`]: a dynamically typed n-dimensional array.

use std::fmt;

use ndarray::{ArcArray, Array, ArrayD, ArrayViewD, ArrayViewMutD, Dimension, IxDyn};
use op_spec::DType;

use crate::element::Element;
use crate::element::private::Storage;
use crate::error::{Error, Result};
use crate::shape::TensorShape;

/// A dynamically typed tensor of any rank: the values that ops consume and
/// produce.
///
/// A tensor holds an [`ndarray::ArcArray`] of one [`Element`] type, so:
///
/// - Cloning a tensor is cheap: the clone shares the buffer.
/// - The buffer is always in standard layout (row-major and contiguous), as in
///   TensorFlow, so [`as_slice`](Self::as_slice) always succeeds for the right
///   element type. [`from_array`](Self::from_array) copies arrays in any
///   other layout.
/// - Writing through [`view_mut`](Self::view_mut) or
///   [`as_slice_mut`](Self::as_slice_mut) is copy-on-write: if the buffer is
///   shared with another tensor, this tensor first gets its own copy, and the
///   other tensor is unchanged. [`is_unique`](Self::is_unique) tells whether
///   that copy would happen.
///
/// Typed access checks the element type: asking a `float` tensor for `i32`
/// elements is an `InvalidArgument` error.
///
/// ```
/// use op_core::{DType, Tensor};
/// let t = Tensor::from_vec([2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
/// assert_eq!(t.dtype(), DType::F32);
/// assert_eq!(t.dims(), [2, 3]);
/// assert_eq!(t.view::<f32>().unwrap()[[1, 0]], 4.0);
/// assert_eq!(
///     t.view::<i32>().unwrap_err().message(),
///     "tensor has dtype float but int32 was requested"
/// );
/// ```
#[derive(Clone, PartialEq)]
pub struct Tensor {
    storage: Storage,
}

impl Tensor {
    /// A tensor that takes over `array`'s buffer without copying it, if the
    /// array is in standard layout; otherwise its elements are copied into
    /// standard layout.
    ///
    /// ```
    /// use op_core::Tensor;
    /// use ndarray::array;
    /// let t = Tensor::from_array(array![[1i64, 2], [3, 4]]);
    /// assert_eq!(t.dims(), [2, 2]);
    /// ```
    pub fn from_array<T: Element, D: Dimension>(array: Array<T, D>) -> Tensor {
        Tensor::from_shared(array.into_shared())
    }

    /// A tensor that shares `array`'s buffer, if the array is in standard
    /// layout; otherwise its elements are copied into standard layout.
    pub fn from_shared<T: Element, D: Dimension>(array: ArcArray<T, D>) -> Tensor {
        let array = array.into_dyn();
        let array = if array.is_standard_layout() {
            array
        } else {
            array.as_standard_layout().into_owned().into_shared()
        };
        Tensor {
            storage: T::wrap(array),
        }
    }

    /// A scalar (rank 0) tensor holding `value`.
    ///
    /// ```
    /// use op_core::Tensor;
    /// let t = Tensor::scalar(true);
    /// assert_eq!(t.rank(), 0);
    /// assert_eq!(t.scalar_value::<bool>().unwrap(), true);
    /// ```
    pub fn scalar<T: Element>(value: T) -> Tensor {
        Tensor::from_array(ndarray::arr0(value))
    }

    /// A tensor of shape `shape` holding `data` in row-major order, without
    /// copying it.
    ///
    /// Returns an `InvalidArgument` error if `data` has not exactly as many
    /// elements as `shape`.
    ///
    /// ```
    /// use op_core::Tensor;
    /// let err = Tensor::from_vec([2, 2], vec![1u8, 2, 3]).unwrap_err();
    /// assert_eq!(err.message(), "shape [2,2] has 4 elements but 3 values were given");
    /// ```
    pub fn from_vec<T: Element>(shape: impl AsRef<[usize]>, data: Vec<T>) -> Result<Tensor> {
        // Kernels build their outputs here: no shape allocation, no layout
        // check (a Vec in row-major order is standard layout).
        let dims = shape.as_ref();
        let count = dims.iter().try_fold(1usize, |n, d| n.checked_mul(*d));
        if count != Some(data.len()) {
            let shape = TensorShape::new(dims);
            return Err(Error::invalid_argument(match count {
                Some(count) => format!(
                    "shape {shape} has {count} elements but {} values were given",
                    data.len()
                ),
                None => format!("shape {shape} has more elements than fit in memory"),
            }));
        }
        let array = ArrayD::from_shape_vec(IxDyn(dims), data).map_err(|e| {
            Error::internal(format!(
                "building a tensor of shape {}: {e}",
                TensorShape::new(dims)
            ))
        })?;
        Ok(Tensor {
            storage: T::wrap(array.into_shared()),
        })
    }

    /// A scalar `string` tensor holding the bytes of `value`.
    ///
    /// ```
    /// use op_core::{DType, Tensor};
    /// let t = Tensor::string("hello");
    /// assert_eq!(t.dtype(), DType::String);
    /// assert_eq!(t.scalar_value::<Vec<u8>>().unwrap(), b"hello");
    /// ```
    pub fn string(value: impl AsRef<[u8]>) -> Tensor {
        Tensor::scalar(value.as_ref().to_vec())
    }

    /// A `string` tensor of shape `shape` holding the bytes of `values`
    /// (`&str`, `String`, `&[u8]`, ...) in row-major order.
    ///
    /// Returns an `InvalidArgument` error if the counts differ, as
    /// [`from_vec`](Self::from_vec) does.
    ///
    /// ```
    /// use op_core::Tensor;
    /// let t = Tensor::strings([2], ["a", "bc"]).unwrap();
    /// assert_eq!(t.as_slice::<Vec<u8>>().unwrap(), [b"a".to_vec(), b"bc".to_vec()]);
    /// ```
    pub fn strings<S: AsRef<[u8]>>(
        shape: impl AsRef<[usize]>,
        values: impl IntoIterator<Item = S>,
    ) -> Result<Tensor> {
        let values = values.into_iter().map(|s| s.as_ref().to_vec()).collect();
        Tensor::from_vec(shape, values)
    }

    /// A tensor of dtype `dtype` and shape `shape` filled with zeros: the
    /// element type's `Default` value (`false`, the empty string, the default
    /// resource handle).
    ///
    /// Returns an `Unimplemented` error for `variant`, which has no element type.
    ///
    /// ```
    /// use op_core::{DType, Tensor};
    /// let t = Tensor::zeros(DType::F16, [3]).unwrap();
    /// assert_eq!(t.dtype(), DType::F16);
    /// assert!(Tensor::zeros(DType::Variant, [3]).is_err());
    /// ```
    pub fn zeros(dtype: DType, shape: impl Into<TensorShape>) -> Result<Tensor> {
        let shape = shape.into();
        match Storage::default(dtype, shape.dims()) {
            Some(storage) => Ok(Tensor { storage }),
            None => Err(Error::unimplemented(format!(
                "tensors of dtype {dtype} are not supported"
            ))),
        }
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.storage.dtype()
    }

    /// The shape.
    pub fn shape(&self) -> TensorShape {
        TensorShape::new(self.dims())
    }

    /// The dimension sizes, outermost first.
    pub fn dims(&self) -> &[usize] {
        self.storage.dims()
    }

    /// The number of dimensions.
    pub fn rank(&self) -> usize {
        self.dims().len()
    }

    /// The number of elements.
    pub fn num_elements(&self) -> usize {
        self.dims().iter().product()
    }

    /// Whether this tensor is the only one using its buffer, so that writing
    /// to it will not copy. A later issue uses this to forward an input's
    /// buffer to an output.
    pub fn is_unique(&self) -> bool {
        self.storage.is_unique()
    }

    /// Whether the buffer is shared with another tensor (or array), so that
    /// writing to it will copy it first. The opposite of
    /// [`is_unique`](Self::is_unique).
    pub fn is_shared(&self) -> bool {
        !self.is_unique()
    }

    /// A tensor of shape `shape` sharing this tensor's buffer, like
    /// TensorFlow's `Tensor::CopyFrom`.
    ///
    /// Returns an `InvalidArgument` error if the element counts differ.
    ///
    /// ```
    /// use op_core::Tensor;
    /// let t = Tensor::from_vec([2, 3], vec![0i32; 6]).unwrap();
    /// assert_eq!(t.reshape([3, 2]).unwrap().dims(), [3, 2]);
    /// assert!(t.reshape([4]).is_err());
    /// ```
    pub fn reshape(&self, shape: impl Into<TensorShape>) -> Result<Tensor> {
        let shape = shape.into();
        if shape.num_elements() != self.num_elements() {
            return Err(Error::invalid_argument(format!(
                "cannot reshape a tensor of shape {} ({} elements) to shape {shape} ({} elements)",
                self.shape(),
                self.num_elements(),
                shape.num_elements()
            )));
        }
        let storage = self
            .storage
            .reshape(shape.dims())
            .map_err(|e| Error::internal(format!("reshaping to {shape}: {e}")))?;
        Ok(Tensor { storage })
    }

    /// A read-only view of the elements, without copying.
    ///
    /// Returns an `InvalidArgument` error if `T` is not the element type.
    pub fn view<T: Element>(&self) -> Result<ArrayViewD<'_, T>> {
        Ok(self.array::<T>()?.view())
    }

    /// A mutable view of the elements.
    ///
    /// Copy-on-write: if the buffer is shared (see
    /// [`is_unique`](Self::is_unique)), it is copied first so that other
    /// tensors sharing it do not change.
    ///
    /// Returns an `InvalidArgument` error if `T` is not the element type.
    ///
    /// ```
    /// use op_core::Tensor;
    /// let a = Tensor::from_vec([2], vec![1.0f64, 2.0]).unwrap();
    /// let mut b = a.clone();
    /// b.view_mut::<f64>().unwrap()[[0]] = 5.0;
    /// assert_eq!(a.as_slice::<f64>().unwrap(), [1.0, 2.0]);
    /// assert_eq!(b.as_slice::<f64>().unwrap(), [5.0, 2.0]);
    /// ```
    pub fn view_mut<T: Element>(&mut self) -> Result<ArrayViewMutD<'_, T>> {
        Ok(self.array_mut::<T>()?.view_mut())
    }

    /// The elements in row-major order, without copying.
    ///
    /// Returns an `InvalidArgument` error if `T` is not the element type.
    pub fn as_slice<T: Element>(&self) -> Result<&[T]> {
        self.array::<T>()?
            .as_slice()
            .ok_or_else(not_standard_layout)
    }

    /// The elements in row-major order, mutably; copy-on-write like
    /// [`view_mut`](Self::view_mut).
    ///
    /// Returns an `InvalidArgument` error if `T` is not the element type.
    pub fn as_slice_mut<T: Element>(&mut self) -> Result<&mut [T]> {
        self.array_mut::<T>()?
            .as_slice_mut()
            .ok_or_else(not_standard_layout)
    }

    /// The elements as an owned array: without copying if the buffer is not
    /// shared, else a copy.
    ///
    /// Returns an `InvalidArgument` error if `T` is not the element type (the
    /// tensor is dropped then; check [`dtype`](Self::dtype) first to keep it).
    pub fn into_array<T: Element>(self) -> Result<ArrayD<T>> {
        let dtype = self.dtype();
        match T::take(self.storage) {
            Ok(array) => Ok(array.into_owned()),
            Err(_) => Err(dtype_mismatch::<T>(dtype)),
        }
    }

    /// The elements as a shared array, without copying.
    ///
    /// Returns an `InvalidArgument` error if `T` is not the element type.
    pub fn into_shared<T: Element>(self) -> Result<ArcArray<T, IxDyn>> {
        let dtype = self.dtype();
        T::take(self.storage).map_err(|_| dtype_mismatch::<T>(dtype))
    }

    /// The value of a scalar tensor.
    ///
    /// Returns an `InvalidArgument` error if the tensor is not a scalar (rank
    /// 0; as in TensorFlow, a one-element vector is not a scalar) or if `T` is
    /// not the element type.
    ///
    /// ```
    /// use op_core::Tensor;
    /// assert_eq!(Tensor::scalar(7u32).scalar_value::<u32>().unwrap(), 7);
    /// let err = Tensor::from_vec([1], vec![7u32]).unwrap().scalar_value::<u32>().unwrap_err();
    /// assert_eq!(err.message(), "expected a scalar tensor but got shape [1]");
    /// ```
    pub fn scalar_value<T: Element>(&self) -> Result<T> {
        let array = self.array::<T>()?;
        match array.first() {
            Some(value) if self.rank() == 0 => Ok(value.clone()),
            _ => Err(Error::invalid_argument(format!(
                "expected a scalar tensor but got shape {}",
                self.shape()
            ))),
        }
    }

    fn array<T: Element>(&self) -> Result<&ArcArray<T, IxDyn>> {
        T::get(&self.storage).ok_or_else(|| dtype_mismatch::<T>(self.dtype()))
    }

    fn array_mut<T: Element>(&mut self) -> Result<&mut ArcArray<T, IxDyn>> {
        let dtype = self.dtype();
        T::get_mut(&mut self.storage).ok_or_else(|| dtype_mismatch::<T>(dtype))
    }
}

fn dtype_mismatch<T: Element>(actual: DType) -> Error {
    Error::invalid_argument(format!(
        "tensor has dtype {actual} but {} was requested",
        T::DTYPE
    ))
}

fn not_standard_layout() -> Error {
    Error::internal("tensor buffer is not in standard layout")
}

impl From<&Tensor> for Tensor {
    /// A tensor sharing `tensor`'s buffer: lets APIs that take
    /// `impl Into<Tensor>` accept a borrowed tensor (shared) or an owned one
    /// (whose buffer a kernel may then reuse for its output).
    fn from(tensor: &Tensor) -> Tensor {
        tensor.clone()
    }
}

impl<T: Element, D: Dimension> From<Array<T, D>> for Tensor {
    /// See [`Tensor::from_array`].
    fn from(array: Array<T, D>) -> Tensor {
        Tensor::from_array(array)
    }
}

impl<T: Element, D: Dimension> From<ArcArray<T, D>> for Tensor {
    /// See [`Tensor::from_shared`].
    fn from(array: ArcArray<T, D>) -> Tensor {
        Tensor::from_shared(array)
    }
}

impl fmt::Debug for Tensor {
    /// Writes the dtype, the shape and the first 16 elements in row-major
    /// order: `Tensor { dtype: int32, shape: [2,2], values: [1, 2, 3, 4] }`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const LIMIT: usize = 16;
        write!(
            f,
            "Tensor {{ dtype: {}, shape: {}, values: ",
            self.dtype(),
            self.shape()
        )?;
        self.storage.fmt_elements(LIMIT, f)?;
        f.write_str(" }")
    }
}
