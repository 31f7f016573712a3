//! [`Tensor`]: a dynamically typed n-dimensional array.

mod device;
mod proto;
pub(crate) mod storage;

use std::fmt;
use std::sync::Arc;

use ndarray::{ArcArray, Array, ArrayD, ArrayViewD, ArrayViewMutD, Dimension, IxDyn};
use op_spec::{DType, Device};

use crate::allocator::HostAllocator;
use crate::element::Element;
use crate::element::private::{ElementVisitor, visit};
use crate::error::{Code, Error, Result};
use crate::shape::TensorShape;
use storage::{HostData, Lent, SmallTag, Storage, small_bytes, small_bytes_mut};

/// A dynamically typed tensor of any rank: the values that ops consume and
/// produce.
///
/// A tensor is a dtype, a shape (held inline up to rank 4) and a
/// reference-counted buffer of elements in row-major order, as in
/// TensorFlow:
///
/// - Cloning a tensor is cheap: the clone shares the buffer.
/// - A `Vec` or ndarray array handed over is taken without copying
///   ([`from_vec`](Self::from_vec), [`from_array`](Self::from_array)), and
///   taken back the same way when the tensor alone holds it
///   ([`into_array`](Self::into_array)). Arrays in other than row-major
///   order are copied into it.
/// - Writing through [`view_mut`](Self::view_mut) or
///   [`as_slice_mut`](Self::as_slice_mut) is copy-on-write: if the buffer is
///   shared with another tensor, this tensor first gets its own copy, and the
///   other tensor is unchanged. [`is_unique`](Self::is_unique) tells whether
///   that copy would happen.
/// - Outputs that kernels allocate come from the runtime's
///   [`HostAllocator`], which reuses freed buffers.
///
/// Typed access checks the element type: asking a `float` tensor for `i32`
/// elements is an `InvalidArgument` error. Every constructor counts elements
/// by one rule ([`TensorShape::try_new`]): a shape whose count or byte size
/// does not fit in memory is an `InvalidArgument` error, never a panic.
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
pub struct Tensor {
    // `Clone` below copies these bitwise where it can: a field that owns
    // something must be counted there.
    dtype: DType,
    shape: TensorShape,
    storage: Storage,
}

impl Clone for Tensor {
    /// A tensor sharing this one's buffer (or holding a copy of its few
    /// bytes of elements, with their tag).
    #[inline]
    fn clone(&self) -> Tensor {
        if self.shape.is_inline() {
            match &self.storage {
                Storage::Host(data) => {
                    // SAFETY: `data` is a live `Arc`; the strong count taken
                    // here is the one the copy below holds.
                    unsafe { Arc::increment_strong_count(Arc::as_ptr(data)) };
                    // SAFETY: with the inline shape plain bytes and the
                    // buffer's count taken above, a bitwise copy is a clone.
                    // Copied whole because `derive(Clone)` copies field by
                    // field, with odd 7-byte moves (a small storage's length
                    // and tag, an inline shape's length): measured, an
                    // `AddV2` call on two 16-float tensors dispatched 4-5%
                    // faster (`cargo bench -p op-autodiff --bench tape`,
                    // `no_tape`, against the derived clone).
                    return unsafe { std::ptr::read(self) };
                }
                // SAFETY: as above, with nothing counted.
                Storage::Small { .. } => return unsafe { std::ptr::read(self) },
                Storage::Device(_) => {}
            }
        }
        Tensor {
            dtype: self.dtype,
            shape: self.shape.clone(),
            storage: self.storage.clone(),
        }
    }
}

/// What tells a tensor's value apart from other live tensors' values
/// ([`Tensor::identity`]): equal for tensors that hold one value (clones,
/// tensors sharing a buffer), different otherwise. A gradient tape's key.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct TensorIdentity(u64);

impl Tensor {
    /// A host tensor over `data`, which holds `shape`'s elements of `dtype`.
    #[inline]
    pub(crate) fn host(dtype: DType, shape: TensorShape, data: HostData) -> Tensor {
        Tensor {
            dtype,
            shape,
            storage: Storage::Host(Arc::new(data)),
        }
    }

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
        // ndarray's own invariant is ours: the nonzero lengths' product
        // fits in isize.
        let shape = TensorShape::new(array.shape());
        let len = array.len();
        let values = if array.is_standard_layout() {
            let (mut values, offset) = array.into_raw_vec_and_offset();
            // A sliced array starts inside its buffer; its elements are the
            // `len` from there on.
            values.drain(..offset.unwrap_or(0));
            values.truncate(len);
            values
        } else {
            array.iter().cloned().collect()
        };
        Tensor::host(T::DTYPE, shape, T::wrap_vec(values))
    }

    /// A tensor that shares `array`'s buffer, if the array is in standard
    /// layout; otherwise its elements are copied into standard layout.
    pub fn from_shared<T: Element, D: Dimension>(array: ArcArray<T, D>) -> Tensor {
        match array.into_dyn().try_into_owned_nocopy() {
            // Nobody else holds it: take the buffer over.
            Ok(owned) => Tensor::from_array(owned),
            Err(shared) if shared.as_slice().is_some() => {
                let shape = TensorShape::new(shared.shape());
                Tensor::host(T::DTYPE, shape, T::wrap_shared(shared))
            }
            Err(shared) => Tensor::from_array(shared.as_standard_layout().into_owned()),
        }
    }

    /// A tensor of `dtype` and shape `dims` over `bytes`, which it reads
    /// but does not own or copy: how another runtime (the lite
    /// interpreter's arena) lends a kernel its inputs for one call.
    ///
    /// The tensor is never unique ([`is_unique`](Self::is_unique) is
    /// false), so writing to it copies the elements first and no kernel
    /// reuses its buffer for an output.
    ///
    /// Returns an `InvalidArgument` error when `dtype` is not a plain type
    /// (`bool`, whose bytes need not be 0 or 1, `string` and `resource` are
    /// not), when `bytes` is not exactly the elements of `dims` or is not
    /// aligned for `dtype`.
    ///
    /// # Safety
    ///
    /// Whenever this tensor or a clone of it is used (its elements read,
    /// or a copy made), `bytes` must be valid and not being written (the
    /// borrow's lifetime is not tracked). Between uses the memory may
    /// change or go: the tensor holds a pointer, not a reference, and
    /// dropping it touches nothing; [`relend`](Self::relend) points it at
    /// memory again. So give it only to code that keeps no clone (a
    /// stateless kernel).
    ///
    /// ```
    /// use op_core::{DType, Tensor};
    /// let arena = [1.0f32, 2.0, 3.0, 4.0];
    /// // SAFETY: `x` is dropped before `arena`, which nobody writes meanwhile.
    /// let x = unsafe { Tensor::lend(DType::F32, &[2, 2], bytemuck::cast_slice(&arena)) }?;
    /// assert_eq!(x.as_slice::<f32>()?, [1.0, 2.0, 3.0, 4.0]);
    /// assert!(!x.is_unique());
    /// drop(x);
    /// # Ok::<(), op_core::Error>(())
    /// ```
    pub unsafe fn lend(dtype: DType, dims: &[usize], bytes: &[u8]) -> Result<Tensor> {
        let ptr = std::ptr::NonNull::from(bytes).cast::<u8>();
        // SAFETY: the caller's contract is `Lent::new`'s, read-only.
        unsafe { Tensor::lent(dtype, dims, ptr, bytes.len(), false) }
    }

    /// A tensor of `dtype` and shape `dims` over `bytes`, which it reads
    /// and writes but does not own: the buffer a kernel's output is placed
    /// in (see [`PreparedOp::run_placed`](crate::PreparedOp::run_placed)).
    /// A tensor that alone holds it writes in place.
    ///
    /// Returns the errors of [`lend`](Self::lend).
    ///
    /// # Safety
    ///
    /// [`lend`](Self::lend)'s contract, and while the tensor is used,
    /// `bytes` is read or written only through it.
    ///
    /// ```
    /// use op_core::{DType, Tensor};
    /// let mut arena = [0i32; 3];
    /// {
    ///     // SAFETY: `y` is dropped at the end of the block, and `arena` is
    ///     // used only through it until then.
    ///     let mut y = unsafe { Tensor::lend_mut(DType::I32, &[3], bytemuck::cast_slice_mut(&mut arena)) }?;
    ///     y.as_slice_mut::<i32>()?.copy_from_slice(&[7, 8, 9]);
    /// }
    /// assert_eq!(arena, [7, 8, 9]);
    /// # Ok::<(), op_core::Error>(())
    /// ```
    pub unsafe fn lend_mut(dtype: DType, dims: &[usize], bytes: &mut [u8]) -> Result<Tensor> {
        let len = bytes.len();
        let ptr = std::ptr::NonNull::from(bytes).cast::<u8>();
        // SAFETY: the caller's contract is `Lent::new`'s, for writing.
        unsafe { Tensor::lent(dtype, dims, ptr, len, true) }
    }

    /// A tensor of `dtype` and shape `dims` to be lent memory later
    /// ([`relend`](Self::relend), or [`relend_mut`](Self::relend_mut) when
    /// `writable`), which then allocates nothing: made where allocating is
    /// allowed (a lite kernel's prepare) for a caller whose memory exists
    /// only later (the arena, at invoke). Until then it holds no elements:
    /// reading them is an `Internal` error, never a read of memory.
    ///
    /// Returns the errors of [`lend`](Self::lend) for the dtype and shape.
    ///
    /// ```
    /// use op_core::{DType, Tensor};
    /// let mut x = Tensor::unbound_lent(DType::F32, &[2], false)?;
    /// assert!(x.as_slice::<f32>().is_err());
    /// let arena = [1.0f32, 2.0];
    /// // SAFETY: `x` is dropped before `arena`, which nobody writes.
    /// unsafe { x.relend(bytemuck::cast_slice(&arena)) }?;
    /// assert_eq!(x.as_slice::<f32>()?, [1.0, 2.0]);
    /// # Ok::<(), op_core::Error>(())
    /// ```
    pub fn unbound_lent(dtype: DType, dims: &[usize], writable: bool) -> Result<Tensor> {
        let (shape, size, align) = lent_layout(dtype, dims)?;
        let len = shape.num_elements().checked_mul(size).ok_or_else(|| {
            Error::invalid_argument(format!(
                "a {dtype} tensor of shape {shape} does not fit in memory"
            ))
        })?;
        if len == 0 {
            return Tensor::allocate(HostAllocator::global(), dtype, dims, true);
        }
        let align = u16::try_from(align).unwrap_or(u16::MAX);
        Ok(Tensor::host(
            dtype,
            shape,
            HostData::Lent(Lent::unbound(len, writable, align)),
        ))
    }

    /// Points this tensor at `bytes` instead, as [`lend`](Self::lend) would
    /// make it (same dtype and shape): in place, allocating nothing, when
    /// it is a tensor lent for reading that it alone holds with as many
    /// bytes; otherwise it becomes a new lent tensor. How a caller that
    /// lends the same buffers call after call (the lite interpreter's
    /// arena) keeps its tensors and gives each call pointers fresh from
    /// the memory's owner.
    ///
    /// Returns the errors of [`lend`](Self::lend).
    ///
    /// # Safety
    ///
    /// [`lend`](Self::lend)'s contract, for `bytes`. The memory the tensor
    /// held before is not touched.
    pub unsafe fn relend(&mut self, bytes: &[u8]) -> Result<()> {
        let ptr = std::ptr::NonNull::from(bytes).cast::<u8>();
        // SAFETY: the caller's contract.
        unsafe { self.relent(ptr, bytes.len(), false) }
    }

    /// [`relend`](Self::relend) for writing: points this tensor at `bytes`
    /// as [`lend_mut`](Self::lend_mut) would make it.
    ///
    /// Returns the errors of [`lend`](Self::lend).
    ///
    /// # Safety
    ///
    /// [`lend_mut`](Self::lend_mut)'s contract, for `bytes`.
    pub unsafe fn relend_mut(&mut self, bytes: &mut [u8]) -> Result<()> {
        let len = bytes.len();
        let ptr = std::ptr::NonNull::from(bytes).cast::<u8>();
        // SAFETY: the caller's contract.
        unsafe { self.relent(ptr, len, true) }
    }

    /// Copies `other`'s elements into this tensor's buffer (copy-on-write
    /// like [`as_slice_mut`](Self::as_slice_mut): into a buffer this tensor
    /// alone holds, such as lent memory, in place). How a caller that
    /// placed an output copies one a kernel made elsewhere.
    ///
    /// Returns an `InvalidArgument` error when the dtypes or shapes differ.
    ///
    /// ```
    /// use op_core::Tensor;
    /// let mut a = Tensor::from_vec([2], vec![0i64, 0])?;
    /// a.copy_from(&Tensor::from_vec([2], vec![3i64, 4])?)?;
    /// assert_eq!(a.as_slice::<i64>()?, [3, 4]);
    /// assert!(a.copy_from(&Tensor::from_vec([3], vec![1i64, 2, 3])?).is_err());
    /// # Ok::<(), op_core::Error>(())
    /// ```
    pub fn copy_from(&mut self, other: &Tensor) -> Result<()> {
        struct CopyFrom<'a>(&'a mut Tensor, &'a Tensor);
        impl ElementVisitor for CopyFrom<'_> {
            type Output = Result<()>;
            fn visit<T: Element>(self) -> Result<()> {
                self.0
                    .as_slice_mut::<T>()?
                    .clone_from_slice(self.1.as_slice::<T>()?);
                Ok(())
            }
        }
        if self.dtype != other.dtype || self.dims() != other.dims() {
            return Err(Error::invalid_argument(format!(
                "cannot copy a {} tensor of shape {} into a {} tensor of shape {}",
                other.dtype, other.shape, self.dtype, self.shape
            )));
        }
        let dtype = self.dtype;
        visit(dtype, CopyFrom(self, other))
            .unwrap_or_else(|| Err(Error::internal("a variant tensor exists")))
    }

    /// [`relend`](Self::relend) and [`relend_mut`](Self::relend_mut).
    ///
    /// # Safety
    ///
    /// `Lent::new`'s contract.
    unsafe fn relent(
        &mut self,
        ptr: std::ptr::NonNull<u8>,
        len: usize,
        writable: bool,
    ) -> Result<()> {
        if let Storage::Host(data) = &mut self.storage
            && let Some(HostData::Lent(lent)) = Arc::get_mut(data)
            // SAFETY: the caller's contract.
            && unsafe { lent.repoint(ptr, len, writable) }
        {
            return Ok(());
        }
        // SAFETY: the caller's contract.
        *self = unsafe { Tensor::lent(self.dtype, self.shape.dims(), ptr, len, writable) }?;
        Ok(())
    }

    /// [`lend`](Self::lend) and [`lend_mut`](Self::lend_mut), checked.
    ///
    /// # Safety
    ///
    /// `Lent::new`'s contract.
    unsafe fn lent(
        dtype: DType,
        dims: &[usize],
        ptr: std::ptr::NonNull<u8>,
        len: usize,
        writable: bool,
    ) -> Result<Tensor> {
        let (shape, size, align) = lent_layout(dtype, dims)?;
        let expected = shape.num_elements().checked_mul(size);
        if expected != Some(len) {
            return Err(Error::invalid_argument(format!(
                "lent memory of {len} bytes does not hold a {dtype} tensor of shape {shape} ({} bytes)",
                expected.map_or_else(|| "more".to_string(), |n| n.to_string())
            )));
        }
        if len == 0 {
            // No memory to lend (and an empty slice's address need not be
            // aligned): an empty tensor of its own, which allocates nothing.
            return Tensor::allocate(HostAllocator::global(), dtype, dims, true);
        }
        if !(ptr.as_ptr() as usize).is_multiple_of(align) {
            return Err(Error::invalid_argument(format!(
                "lent memory at {ptr:p} is not aligned for {dtype} ({align} bytes)"
            )));
        }
        // SAFETY: the caller's contract.
        let lent =
            unsafe { Lent::new(ptr, len, writable, u16::try_from(align).unwrap_or(u16::MAX)) };
        Ok(Tensor::host(dtype, shape, HostData::Lent(lent)))
    }

    /// Sets every byte of a plain tensor's elements, which it alone holds,
    /// to zero; `false` (and nothing written) when it is not such a tensor.
    pub(crate) fn zero_plain(&mut self) -> bool {
        match &mut self.storage {
            Storage::Small { len, tag, bits } => {
                *tag = SmallTag::NONE;
                small_bytes_mut(*len, bits).fill(0);
                true
            }
            Storage::Host(data) => match Arc::get_mut(data) {
                Some(HostData::Inline(inline)) => {
                    inline.bytes_mut().fill(0);
                    true
                }
                Some(HostData::Block(block)) => {
                    block.bytes_mut().fill(0);
                    true
                }
                Some(HostData::Lent(lent)) => lent.bytes_mut().map(|b| b.fill(0)).is_some(),
                _ => false,
            },
            Storage::Device(_) => false,
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
        let storage = match T::small(std::slice::from_ref(&value)) {
            Some(small) => small,
            None => {
                let data = match T::inline(std::slice::from_ref(&value)) {
                    Some(inline) => inline,
                    None => T::wrap_vec(vec![value]),
                };
                Storage::Host(Arc::new(data))
            }
        };
        Tensor {
            dtype: T::DTYPE,
            shape: TensorShape::scalar(),
            storage,
        }
    }

    /// A tensor of shape `shape` holding `data` in row-major order, without
    /// copying it.
    ///
    /// Returns an `InvalidArgument` error if `data` has not exactly as many
    /// elements as `shape`, or if `shape` has more elements than fit in
    /// memory.
    ///
    /// ```
    /// use op_core::Tensor;
    /// let err = Tensor::from_vec([2, 2], vec![1u8, 2, 3]).unwrap_err();
    /// assert_eq!(err.message(), "shape [2,2] has 4 elements but 3 values were given");
    /// assert!(Tensor::from_vec([usize::MAX, 2], vec![1u8]).is_err());
    /// ```
    pub fn from_vec<T: Element>(shape: impl AsRef<[usize]>, data: Vec<T>) -> Result<Tensor> {
        let shape = TensorShape::try_new(shape)?;
        let count = shape.num_elements();
        if count != data.len() {
            return Err(Error::invalid_argument(format!(
                "shape {shape} has {count} elements but {} values were given",
                data.len()
            )));
        }
        Ok(Tensor::host(T::DTYPE, shape, T::wrap_vec(data)))
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
    /// [`from_vec`](Self::from_vec) does (the shape is checked before any
    /// value is copied).
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
        let shape = TensorShape::try_new(shape)?;
        let values = values.into_iter().map(|s| s.as_ref().to_vec()).collect();
        Tensor::from_vec(shape, values)
    }

    /// A tensor of dtype `dtype` and shape `shape` filled with zeros: the
    /// element type's `Default` value (`false`, the empty string, the default
    /// resource handle), from the [global allocator](HostAllocator::global).
    ///
    /// Returns an `Unimplemented` error for `variant`, which has no element
    /// type; an `InvalidArgument` error for a shape whose element count or
    /// byte size does not fit in memory; a `ResourceExhausted` error past the
    /// allocator's size limit or when memory runs out.
    ///
    /// ```
    /// use op_core::{Code, DType, Tensor};
    /// let t = Tensor::zeros(DType::F16, [3]).unwrap();
    /// assert_eq!(t.dtype(), DType::F16);
    /// assert!(Tensor::zeros(DType::Variant, [3]).is_err());
    /// let err = Tensor::zeros(DType::F32, [1 << 40]).unwrap_err(); // 4 TiB
    /// assert_eq!(err.code(), Code::ResourceExhausted);
    /// let err = Tensor::zeros(DType::F32, [1 << 62]).unwrap_err(); // 2^64 bytes
    /// assert_eq!(err.code(), Code::InvalidArgument);
    /// let err = Tensor::zeros(DType::F32, [usize::MAX, 2]).unwrap_err();
    /// assert_eq!(err.code(), Code::InvalidArgument);
    /// ```
    pub fn zeros(dtype: DType, shape: impl AsRef<[usize]>) -> Result<Tensor> {
        Tensor::allocate(HostAllocator::global(), dtype, shape.as_ref(), true)
    }

    /// A tensor of `dtype` and shape `dims` from `alloc`: zeros if
    /// `zeroed`, else unspecified values (zeros or an earlier tensor's) for
    /// a caller that writes every element before reading any.
    pub(crate) fn allocate(
        alloc: &HostAllocator,
        dtype: DType,
        dims: &[usize],
        zeroed: bool,
    ) -> Result<Tensor> {
        struct Allocate<'a> {
            alloc: &'a HostAllocator,
            len: usize,
            zeroed: bool,
        }
        impl ElementVisitor for Allocate<'_> {
            type Output = Result<Storage>;
            fn visit<T: Element>(self) -> Result<Storage> {
                T::allocate(self.alloc, self.len, self.zeroed)
            }
        }
        let shape = TensorShape::try_new(dims)?;
        let len = shape.num_elements();
        let storage = visit(dtype, Allocate { alloc, len, zeroed })
            .ok_or_else(|| {
                Error::unimplemented(format!("tensors of dtype {dtype} are not supported"))
            })?
            .map_err(|e| allocation_failed(dtype, &shape, e))?;
        Ok(Tensor {
            dtype,
            shape,
            storage,
        })
    }

    /// A tensor of `T` and shape `shape` from `alloc`, for overwriting
    /// (see [`allocate`](Self::allocate)), after `fill` ran on its
    /// elements: how kernels' elementwise outputs are made. Small ones are
    /// filled before any reference count exists.
    pub(crate) fn allocate_filled<T: Element>(
        alloc: &HostAllocator,
        shape: &TensorShape,
        fill: impl FnOnce(&mut [T]),
    ) -> Result<Tensor> {
        let storage = T::allocate(alloc, shape.num_elements(), false)
            .map_err(|e| allocation_failed(T::DTYPE, shape, e))?;
        let mut tensor = Tensor {
            dtype: T::DTYPE,
            shape: shape.clone(),
            storage,
        };
        fill(tensor.as_slice_mut::<T>()?);
        Ok(tensor)
    }

    /// The element type.
    #[inline]
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The shape.
    pub fn shape(&self) -> TensorShape {
        self.shape.clone()
    }

    /// The shape, borrowed.
    #[inline]
    pub(crate) fn shape_ref(&self) -> &TensorShape {
        &self.shape
    }

    /// The dimension sizes, outermost first.
    #[inline]
    pub fn dims(&self) -> &[usize] {
        self.shape.dims()
    }

    /// The number of dimensions.
    #[inline]
    pub fn rank(&self) -> usize {
        self.shape.rank()
    }

    /// The number of elements.
    #[inline]
    pub fn num_elements(&self) -> usize {
        self.shape.num_elements()
    }

    /// The device whose memory holds the elements: [`Device::CPU`] for host
    /// memory.
    pub fn device(&self) -> Device {
        match &self.storage {
            Storage::Small { .. } | Storage::Host(_) => Device::CPU,
            Storage::Device(buffer) => buffer.device(),
        }
    }

    /// Whether this tensor is the only one using its buffer, so that writing
    /// to it will not copy, and a kernel may reuse it for an output
    /// ([`KernelContext::forward_input_or_allocate_output`](crate::KernelContext::forward_input_or_allocate_output)).
    #[inline]
    pub fn is_unique(&self) -> bool {
        match &self.storage {
            // A clone of a small tensor is a copy.
            Storage::Small { .. } => true,
            Storage::Host(data) => Arc::strong_count(data) == 1 && data.is_exclusive(),
            Storage::Device(buffer) => buffer.is_unique(),
        }
    }

    /// Whether the buffer is shared with another tensor (or array), so that
    /// writing to it will copy it first. The opposite of
    /// [`is_unique`](Self::is_unique).
    pub fn is_shared(&self) -> bool {
        !self.is_unique()
    }

    /// The address of the buffer holding the elements: one for every
    /// tensor sharing the buffer (clones, [`reshape`](Self::reshape)s,
    /// kernel outputs that forward an input), another for every other live
    /// buffer. `None` when the tensor holds its elements inside itself (up
    /// to 8 bytes of plain elements, e.g. [`scalar`](Self::scalar)s: their
    /// clones are copies, so there is no buffer to share). For a tensor in
    /// a device's memory, the address of the host-side handle its clones
    /// share (not a device pointer).
    ///
    /// An address names a buffer only while a tensor holds it: a freed
    /// buffer's address may come back. [`identity`](Self::identity) also
    /// tells small tensors apart.
    ///
    /// ```
    /// use op_core::Tensor;
    /// let a = Tensor::from_vec([2, 2], vec![1.0f32; 4])?;
    /// assert!(a.buffer_address().is_some());
    /// assert_eq!(a.buffer_address(), a.clone().buffer_address());
    /// assert_eq!(a.buffer_address(), a.reshape([4])?.buffer_address());
    /// let mut b = a.clone();
    /// b.make_distinct()?;
    /// assert_ne!(a.buffer_address(), b.buffer_address());
    /// assert_eq!(Tensor::scalar(1.0f32).buffer_address(), None);
    /// # Ok::<(), op_core::Error>(())
    /// ```
    #[inline]
    pub fn buffer_address(&self) -> Option<usize> {
        match &self.storage {
            Storage::Host(data) => Some(Arc::as_ptr(data) as usize),
            Storage::Device(buffer) => Some(buffer.address()),
            Storage::Small { .. } => None,
        }
    }

    /// What tells this tensor's value apart from every other live
    /// tensor's: the same for clones of the tensor (and for tensors sharing
    /// its buffer: [`reshape`](Self::reshape)s, kernel outputs that forward
    /// an input), different for every other. A gradient tape knows the
    /// values it recorded by it.
    ///
    /// A tensor in a buffer is known by the buffer's
    /// [`address`](Self::buffer_address); a small one (8 bytes or less,
    /// held inside the tensor) only once [`make_distinct`](Self::make_distinct)
    /// gave it a tag, and writing to its elements takes the tag away again.
    /// `None` for an untagged small tensor.
    ///
    /// An identity names a value only while a tensor holds it: a freed
    /// buffer's address may come back (a tape keeps the tensors it knows
    /// alive).
    ///
    /// ```
    /// use op_core::Tensor;
    /// let a = Tensor::from_vec([2, 2], vec![1.0f32; 4])?;
    /// assert!(a.identity().is_some());
    /// assert_eq!(a.identity(), a.clone().identity());
    /// assert_eq!(a.identity(), a.reshape([4])?.identity());
    ///
    /// let mut s = Tensor::scalar(1.0f32);
    /// assert_eq!(s.identity(), None);
    /// s.make_distinct()?;
    /// assert!(s.identity().is_some());
    /// assert_eq!(s.identity(), s.clone().identity());
    /// # Ok::<(), op_core::Error>(())
    /// ```
    #[inline]
    pub fn identity(&self) -> Option<TensorIdentity> {
        match &self.storage {
            // An `Arc`'s address is a multiple of its alignment (8), so
            // even; a tag is made odd: the two never meet.
            Storage::Host(data) => Some(TensorIdentity(Arc::as_ptr(data) as usize as u64)),
            Storage::Small { tag, .. } => match tag.get() {
                0 => None,
                tag => Some(TensorIdentity(tag << 1 | 1)),
            },
            Storage::Device(buffer) => Some(TensorIdentity(buffer.address() as u64)),
        }
    }

    /// Gives this tensor an [`identity`](Self::identity) that no other
    /// live tensor has, keeping its value: nothing to do for a tensor alone
    /// in its buffer; a small tensor (8 bytes or less) gets a fresh tag,
    /// which allocates nothing; a tensor sharing its buffer (with a clone,
    /// a reshape, an array) is moved to a copy of its own (inside the
    /// tensor, with a fresh tag, when 8 bytes or less). How
    /// a gradient tape tells a value from the one it was computed from
    /// (`Identity(x)` shares `x`'s buffer) and knows a scalar by something.
    ///
    /// A shared tensor in a device's memory is copied on the device.
    /// Returns a `ResourceExhausted` error if the copy finds no memory
    /// (and the backend's error for a device tensor); the tensor is left as
    /// it was.
    ///
    /// ```
    /// use op_core::Tensor;
    /// let a = Tensor::from_vec([3], vec![1.0f32, 2.0, 3.0])?;
    /// let mut b = a.clone();
    /// b.make_distinct()?;
    /// assert_eq!(a, b);
    /// assert_ne!(a.identity(), b.identity());
    ///
    /// let mut s = Tensor::scalar(2.5f64);
    /// s.make_distinct()?;
    /// let mut t = s.clone();
    /// t.make_distinct()?;
    /// assert_eq!(s, t);
    /// assert_ne!(s.identity(), t.identity());
    /// # Ok::<(), op_core::Error>(())
    /// ```
    pub fn make_distinct(&mut self) -> Result<()> {
        match &mut self.storage {
            Storage::Small { tag, .. } => *tag = SmallTag::fresh(),
            Storage::Host(data) if Arc::strong_count(data) == 1 && data.is_exclusive() => {}
            Storage::Host(_) => {
                *self = self.unshared_copy(HostAllocator::global())?;
                // A copy of 8 bytes or less is held inside the tensor.
                if let Storage::Small { tag, .. } = &mut self.storage {
                    *tag = SmallTag::fresh();
                }
            }
            Storage::Device(buffer) if buffer.is_unique() => {}
            Storage::Device(_) => *self = self.device_copy()?,
        }
        Ok(())
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
    pub fn reshape(&self, shape: impl AsRef<[usize]>) -> Result<Tensor> {
        let shape = TensorShape::try_new(shape)?;
        if shape.num_elements() != self.num_elements() {
            return Err(Error::invalid_argument(format!(
                "cannot reshape a tensor of shape {} ({} elements) to shape {shape} ({} elements)",
                self.shape,
                self.num_elements(),
                shape.num_elements()
            )));
        }
        Ok(Tensor {
            dtype: self.dtype,
            shape,
            storage: self.storage.clone(),
        })
    }

    /// A read-only view of the elements, without copying.
    ///
    /// Returns an `InvalidArgument` error if `T` is not the element type,
    /// and a `FailedPrecondition` error if the tensor is not in host memory.
    pub fn view<T: Element>(&self) -> Result<ArrayViewD<'_, T>> {
        let values = self.as_slice::<T>()?;
        ArrayViewD::from_shape(IxDyn(self.shape.dims()), values).map_err(|e| self.broken(e))
    }

    /// A mutable view of the elements.
    ///
    /// Copy-on-write: if the buffer is shared (see
    /// [`is_unique`](Self::is_unique)), it is copied first so that other
    /// tensors sharing it do not change.
    ///
    /// Returns an `InvalidArgument` error if `T` is not the element type,
    /// a `FailedPrecondition` error if the tensor is not in host memory, and
    /// a `ResourceExhausted` error if the copy finds no memory.
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
        let dims = IxDyn(self.shape.dims());
        let values = self.as_slice_mut::<T>()?;
        ArrayViewMutD::from_shape(dims, values)
            .map_err(|e| Error::internal(format!("viewing a tensor's elements: {e}")))
    }

    /// The elements' bytes in row-major order, without copying: how another
    /// runtime (TensorFlow, through its C API) takes a plain tensor's
    /// elements without naming their type.
    ///
    /// Returns an `InvalidArgument` error for a `string`, `resource` or
    /// `variant` tensor (their elements are Rust values, not bytes another
    /// runtime can read), and a `FailedPrecondition` error if the tensor is
    /// not in host memory.
    ///
    /// ```
    /// use op_core::Tensor;
    /// let x = Tensor::from_vec([2], vec![1i32, 256])?;
    /// assert_eq!(x.plain_bytes()?, [1, 0, 0, 0, 0, 1, 0, 0]);
    /// assert!(Tensor::string(b"a".to_vec()).plain_bytes().is_err());
    /// # Ok::<(), op_core::Error>(())
    /// ```
    pub fn plain_bytes(&self) -> Result<&[u8]> {
        struct Bytes<'a>(&'a Tensor);
        impl<'a> ElementVisitor for Bytes<'a> {
            type Output = Result<&'a [u8]>;
            fn visit<T: Element>(self) -> Result<&'a [u8]> {
                let values = self.0.as_slice::<T>()?;
                // SAFETY: the caller checked that `T` is a plain type
                // (numbers, `bool`, halves, complexes): no padding, no
                // pointers, every byte initialized; the bytes borrow the
                // same elements for the same lifetime.
                Ok(unsafe {
                    std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), size_of_val(values))
                })
            }
        }
        if matches!(self.dtype, DType::String | DType::Resource | DType::Variant) {
            return Err(Error::invalid_argument(format!(
                "a {} tensor has no plain bytes",
                self.dtype
            )));
        }
        visit(self.dtype, Bytes(self))
            .unwrap_or_else(|| Err(Error::internal("a variant tensor exists")))
    }

    /// The elements in row-major order, without copying.
    ///
    /// Returns an `InvalidArgument` error if `T` is not the element type,
    /// and a `FailedPrecondition` error if the tensor is not in host memory.
    #[inline]
    pub fn as_slice<T: Element>(&self) -> Result<&[T]> {
        self.check_dtype::<T>()?;
        let values = match &self.storage {
            Storage::Small { len, bits, .. } => T::in_raw(small_bytes(*len, bits)),
            Storage::Host(data) => T::host(data),
            Storage::Device(buffer) => return Err(not_on_host(buffer.device())),
        };
        values
            .filter(|values| values.len() == self.num_elements())
            .ok_or_else(|| self.broken("the buffer does not hold the tensor's elements"))
    }

    /// The elements in row-major order, mutably; copy-on-write like
    /// [`view_mut`](Self::view_mut).
    ///
    /// Returns the errors of [`view_mut`](Self::view_mut).
    #[inline]
    pub fn as_slice_mut<T: Element>(&mut self) -> Result<&mut [T]> {
        self.check_dtype::<T>()?;
        let shared = match &mut self.storage {
            Storage::Host(data) => !Arc::get_mut(data).is_some_and(|d| d.is_exclusive()),
            Storage::Small { .. } => false,
            Storage::Device(buffer) => return Err(not_on_host(buffer.device())),
        };
        if shared {
            // Copy on write, from the global allocator.
            self.storage = copy_values(self.as_slice::<T>()?, HostAllocator::global())
                .map_err(|e| allocation_failed(self.dtype, &self.shape, e))?;
        }
        let len = self.num_elements();
        match values_mut::<T>(&mut self.storage) {
            Some(values) if values.len() == len => Ok(values),
            _ => Err(Error::internal(
                "tensor storage does not hold the tensor's elements",
            )),
        }
    }

    /// The elements as an owned array: without copying if the tensor alone
    /// holds a buffer it was given as a `Vec` or array, else a copy.
    ///
    /// Returns an `InvalidArgument` error if `T` is not the element type (the
    /// tensor is dropped then; check [`dtype`](Self::dtype) first to keep it),
    /// and a `FailedPrecondition` error if the tensor is not in host memory.
    pub fn into_array<T: Element>(self) -> Result<ArrayD<T>> {
        self.check_dtype::<T>()?;
        let dims = IxDyn(self.shape.dims());
        let values = match self.storage {
            Storage::Small { len, bits, .. } => T::in_raw(small_bytes(len, &bits))
                .ok_or_else(|| Error::internal("a small tensor does not hold its dtype"))?
                .to_vec(),
            Storage::Host(data) => match Arc::try_unwrap(data) {
                Ok(data) => match T::into_vec(data) {
                    Ok(values) => values,
                    Err(data) => {
                        if let Some(array) = T::shared(&data).cloned() {
                            drop(data);
                            // Unique now unless its owner kept a clone.
                            let array = array.into_owned();
                            return array.into_shape_with_order(dims).map_err(reshape_failed);
                        }
                        Self::host_values::<T>(&data)?.to_vec()
                    }
                },
                Err(shared) => Self::host_values::<T>(&shared)?.to_vec(),
            },
            Storage::Device(buffer) => return Err(not_on_host(buffer.device())),
        };
        ArrayD::from_shape_vec(dims, values).map_err(reshape_failed)
    }

    /// The elements as a shared array, without copying when the buffer is
    /// a `Vec` this tensor alone holds or an array it shares.
    ///
    /// Returns the errors of [`into_array`](Self::into_array).
    pub fn into_shared<T: Element>(self) -> Result<ArcArray<T, IxDyn>> {
        self.check_dtype::<T>()?;
        if let Storage::Host(data) = &self.storage
            && let Some(array) = T::shared(data)
        {
            let array = array.clone();
            return array
                .into_shape_with_order(IxDyn(self.shape.dims()))
                .map_err(reshape_failed);
        }
        self.into_array::<T>().map(Array::into_shared)
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
        let values = self.as_slice::<T>()?;
        match values.first() {
            Some(value) if self.rank() == 0 => Ok(value.clone()),
            _ => Err(Error::invalid_argument(format!(
                "expected a scalar tensor but got shape {}",
                self.shape
            ))),
        }
    }

    #[inline]
    /// A copy of this tensor in a buffer of its own, from `alloc` when the
    /// elements are plain.
    pub(crate) fn unshared_copy(&self, alloc: &HostAllocator) -> Result<Tensor> {
        struct Copy<'a>(&'a Tensor, &'a HostAllocator);
        impl ElementVisitor for Copy<'_> {
            type Output = Result<Storage>;
            fn visit<T: Element>(self) -> Result<Storage> {
                copy_values(self.0.as_slice::<T>()?, self.1)
            }
        }
        let storage = visit(self.dtype, Copy(self, alloc))
            .ok_or_else(|| Error::internal("a variant tensor exists"))?
            .map_err(|e| allocation_failed(self.dtype, &self.shape, e))?;
        Ok(Tensor {
            dtype: self.dtype,
            shape: self.shape.clone(),
            storage,
        })
    }

    fn check_dtype<T: Element>(&self) -> Result<()> {
        if self.dtype == T::DTYPE {
            Ok(())
        } else {
            Err(dtype_mismatch::<T>(self.dtype))
        }
    }

    fn host_values<T: Element>(data: &HostData) -> Result<&[T]> {
        T::host(data).ok_or_else(|| Error::internal("tensor storage does not hold its dtype"))
    }

    /// A broken invariant: the tensor's buffer and shape disagree.
    #[cold]
    fn broken(&self, detail: impl fmt::Display) -> Error {
        Error::internal(format!(
            "tensor of dtype {} and shape {}: {detail}",
            self.dtype, self.shape
        ))
    }
}

/// The elements of `storage`, which its tensor alone holds, for writing;
/// `None` if it does not hold `T` or is shared.
#[inline]
/// The shape of a lent tensor, its element size and alignment; an error
/// for a dtype that is not plain.
fn lent_layout(dtype: DType, dims: &[usize]) -> Result<(TensorShape, usize, usize)> {
    /// Whether elements of the type live in raw bytes, and their alignment.
    struct Layout;
    impl ElementVisitor for Layout {
        type Output = (bool, usize);
        fn visit<T: Element>(self) -> (bool, usize) {
            (T::POD, align_of::<T>())
        }
    }
    let shape = TensorShape::try_new(dims)?;
    let (plain, align) = visit(dtype, Layout).unwrap_or((false, 1));
    let size = dtype.size_of().filter(|_| plain).ok_or_else(|| {
        Error::invalid_argument(format!(
            "a tensor over lent memory must be of a plain type, not {dtype}"
        ))
    })?;
    Ok((shape, size, align))
}

fn values_mut<T: Element>(storage: &mut Storage) -> Option<&mut [T]> {
    match storage {
        Storage::Small { len, tag, bits } => {
            // Written, the elements are no longer the value the tag named
            // (as a written shared buffer is copied first).
            *tag = SmallTag::NONE;
            T::in_raw_mut(small_bytes_mut(*len, bits))
        }
        Storage::Host(data) => Arc::get_mut(data).and_then(T::host_mut),
        Storage::Device(_) => None,
    }
}

/// A copy of `values`: inside the tensor or inline when small, else from
/// `alloc` (plain types) or in a `Vec`.
fn copy_values<T: Element>(values: &[T], alloc: &HostAllocator) -> Result<Storage> {
    if let Some(small) = T::small(values) {
        return Ok(small);
    }
    if let Some(inline) = T::inline(values) {
        return Ok(Storage::Host(Arc::new(inline)));
    }
    if !T::POD {
        return Ok(Storage::Host(Arc::new(T::wrap_vec(values.to_vec()))));
    }
    let mut storage = T::allocate(alloc, values.len(), false)?;
    values_mut::<T>(&mut storage)
        .ok_or_else(|| Error::internal("a fresh buffer does not hold its dtype"))?
        .clone_from_slice(values);
    Ok(storage)
}

/// `e`, from allocating a tensor of `dtype` and `shape`, saying so.
#[cold]
pub(crate) fn allocation_failed(dtype: DType, shape: &TensorShape, e: Error) -> Error {
    Error::new(
        e.code(),
        format!(
            "allocating a {dtype} tensor of shape {shape}: {}",
            e.message()
        ),
    )
}

fn dtype_mismatch<T: Element>(actual: DType) -> Error {
    Error::invalid_argument(format!(
        "tensor has dtype {actual} but {} was requested",
        T::DTYPE
    ))
}

fn not_on_host(device: Device) -> Error {
    Error::new(
        Code::FailedPrecondition,
        format!(
            "the tensor is in the memory of device {device}, not the host's: copy it to the host first"
        ),
    )
}

fn reshape_failed(e: ndarray::ShapeError) -> Error {
    Error::internal(format!("building an array of the tensor's shape: {e}"))
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

impl PartialEq for Tensor {
    /// Tensors are equal when they have the same dtype, shape and elements
    /// (compared with the elements' `PartialEq`: a `NaN` is not equal to
    /// itself). Tensors outside host memory are never equal.
    fn eq(&self, other: &Tensor) -> bool {
        struct Equal<'a>(&'a Tensor, &'a Tensor);
        impl ElementVisitor for Equal<'_> {
            type Output = bool;
            fn visit<T: Element>(self) -> bool {
                match (self.0.as_slice::<T>(), self.1.as_slice::<T>()) {
                    (Ok(a), Ok(b)) => a == b,
                    _ => false,
                }
            }
        }
        self.dtype == other.dtype
            && self.shape == other.shape
            && visit(self.dtype, Equal(self, other)).unwrap_or(false)
    }
}

impl fmt::Debug for Tensor {
    /// Writes the dtype, the shape and the first 16 elements in row-major
    /// order: `Tensor { dtype: int32, shape: [2,2], values: [1, 2, 3, 4] }`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Values<'a, 'f, 'g>(&'a Tensor, &'f mut fmt::Formatter<'g>);
        impl ElementVisitor for Values<'_, '_, '_> {
            type Output = fmt::Result;
            fn visit<T: Element>(self) -> fmt::Result {
                const LIMIT: usize = 16;
                let Values(tensor, f) = self;
                let Ok(values) = tensor.as_slice::<T>() else {
                    return write!(f, "(on device {})", tensor.device());
                };
                f.write_str("[")?;
                for (i, value) in values.iter().take(LIMIT).enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    value.fmt_element(f)?;
                }
                if values.len() > LIMIT {
                    f.write_str(", ...")?;
                }
                f.write_str("]")
            }
        }
        write!(
            f,
            "Tensor {{ dtype: {}, shape: {}, values: ",
            self.dtype, self.shape
        )?;
        visit(self.dtype, Values(self, f)).unwrap_or(Ok(()))?;
        f.write_str(" }")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::DeviceMemory;

    /// Device memory with no device behind it: host accessors must refuse
    /// it without asking it for anything.
    struct StandIn;

    impl DeviceMemory for StandIn {
        fn device(&self) -> Device {
            Device::gpu(0)
        }
        fn byte_len(&self) -> usize {
            8
        }
        fn copy_to_host(&self, _: &mut [u8]) -> Result<()> {
            Err(Error::unavailable("a stand-in has no device"))
        }
    }

    /// A tensor whose storage stands in for GPU memory.
    fn on_gpu() -> Tensor {
        Tensor::from_device_memory(DType::F32, &[2], Box::new(StandIn)).unwrap()
    }

    /// `Clone` copies bytes for an inline shape and counts the buffer: a
    /// clone shares a buffer and outlives its original, keeps a small
    /// tensor's tag, and deep-copies a shape of rank above 4.
    #[test]
    fn clones_share_buffers_and_keep_tags_for_every_kind_of_tensor() {
        let host = Tensor::from_vec([2, 3], vec![1.0f32; 6]).unwrap();
        let shared = host.clone();
        assert_eq!(shared.identity(), host.identity());
        assert!(!host.is_unique());
        drop(host);
        assert!(shared.is_unique());
        assert_eq!(shared.as_slice::<f32>().unwrap(), [1.0; 6]);

        let mut small = Tensor::from_vec([2], vec![7i32, 8]).unwrap();
        small.make_distinct().unwrap();
        let copy = small.clone();
        assert_eq!(copy.identity(), small.identity());
        assert!(copy.identity().is_some());
        assert_eq!(copy.as_slice::<i32>().unwrap(), [7, 8]);

        let deep = Tensor::from_vec([1, 1, 2, 1, 2], vec![0u8, 1, 2, 3]).unwrap();
        let deep_copy = deep.clone();
        drop(deep);
        assert_eq!(deep_copy.dims(), [1, 1, 2, 1, 2]);
        assert_eq!(deep_copy.as_slice::<u8>().unwrap(), [0, 1, 2, 3]);

        let device = on_gpu();
        assert_eq!(device.clone().device(), Device::gpu(0));
        assert_eq!(device.clone().dims(), [2]);
    }

    #[test]
    fn host_accessors_refuse_device_memory_with_an_error() {
        let mut t = on_gpu();
        assert_eq!(t.device(), Device::gpu(0));
        assert!(!t.is_on_host());
        assert!(t.is_unique());
        assert!(t.device_memory_mut().is_some());
        let clone = t.clone();
        assert!(!t.is_unique());
        assert!(t.device_memory_mut().is_none());
        assert_eq!(t.buffer_address(), clone.buffer_address());
        assert_eq!(t.identity(), clone.identity());
        assert!(t.identity().is_some());
        assert_ne!(t.identity(), on_gpu().identity());
        drop(clone);
        let expected = "the tensor is in the memory of device /job:localhost/replica:0/task:0/device:GPU:0, not the host's: copy it to the host first";
        for err in [
            t.as_slice::<f32>().unwrap_err(),
            t.view::<f32>().unwrap_err(),
            t.scalar_value::<f32>().unwrap_err(),
            t.as_slice_mut::<f32>().unwrap_err(),
            t.view_mut::<f32>().unwrap_err(),
            t.clone().into_array::<f32>().unwrap_err(),
            t.clone().into_shared::<f32>().unwrap_err(),
        ] {
            assert_eq!(err.code(), Code::FailedPrecondition);
            assert_eq!(err.message(), expected);
        }
        // What needs no elements still works.
        assert_eq!(t.reshape([1, 2]).unwrap().dims(), [1, 2]);
        assert_ne!(t, t.clone());
        assert_eq!(
            format!("{t:?}"),
            "Tensor { dtype: float, shape: [2], values: (on device /job:localhost/replica:0/task:0/device:GPU:0) }"
        );
    }
}
