//! The resource behind a variable: [`Var`], a dtype and a value behind a
//! lock.

use std::fmt;
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use op_core::device::DeviceMemory;
use op_core::resource::Resource;
use op_core::{DType, Device, Error, ResourceHandle, Result, Tensor};

/// A variable: a dtype, and a value of that dtype once assigned
/// (TensorFlow's `Var`).
///
/// The value sits behind a reader-writer lock: [`value`](Self::value)
/// returns the current tensor (sharing its buffer), and
/// [`assign`](Self::assign) replaces it whole, so readers never see a
/// partly written value.
///
/// ```
/// use op_core::{DType, Tensor};
/// use op_core::resource::Resource;
/// use op_kernels::variable::Var;
///
/// let var = Var::new(DType::I64);
/// assert!(!var.is_initialized());
/// assert_eq!(var.debug_string(), "Var<int64, uninitialized>");
/// var.assign(Tensor::from_vec([10], vec![1i64; 10])?, false)?;
/// assert_eq!(var.debug_string(), "Var<int64, [10]>");
/// # Ok::<(), op_core::Error>(())
/// ```
pub struct Var {
    dtype: DType,
    value: RwLock<Option<Tensor>>,
}

impl Var {
    /// An uninitialized variable of `dtype`.
    pub fn new(dtype: DType) -> Var {
        Var {
            dtype,
            value: RwLock::new(None),
        }
    }

    /// A variable holding `value` (of `value`'s dtype).
    pub fn with_value(value: Tensor) -> Var {
        Var {
            dtype: value.dtype(),
            value: RwLock::new(Some(value)),
        }
    }

    // An assign replaces the value in one step, so a lock poisoned by a
    // panicking thread still guards a whole value: it is used as is.
    fn read_lock(&self) -> RwLockReadGuard<'_, Option<Tensor>> {
        self.value.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write_lock(&self) -> RwLockWriteGuard<'_, Option<Tensor>> {
        self.value.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// The dtype, fixed when the variable is made.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Whether a value has been assigned.
    pub fn is_initialized(&self) -> bool {
        self.read_lock().is_some()
    }

    /// The current value (sharing its buffer), or `None` before the first
    /// assign.
    pub fn value(&self) -> Option<Tensor> {
        self.read_lock().clone()
    }

    /// Replaces the value with `value`.
    ///
    /// `InvalidArgument`, and the variable unchanged, if `value`'s dtype is
    /// not the variable's, or if `validate_shape` is set, the variable has
    /// a value, and `value`'s shape is not that value's (TensorFlow's
    /// `AssignVariableOp` with `validate_shape=true`).
    pub fn assign(&self, value: Tensor, validate_shape: bool) -> Result<()> {
        if value.dtype() != self.dtype {
            return Err(Error::invalid_argument(format!(
                "cannot assign a value of dtype {} to a variable of dtype {}",
                value.dtype(),
                self.dtype
            )));
        }
        let mut slot = self.write_lock();
        if validate_shape
            && let Some(current) = &*slot
            && current.dims() != value.dims()
        {
            return Err(Error::invalid_argument(format!(
                "cannot assign a value of shape {} to a variable of shape {} (validate_shape=true)",
                value.shape(),
                current.shape()
            )));
        }
        let old = slot.replace(value);
        // The old value is freed (if this was its last user) outside the lock.
        drop(slot);
        drop(old);
        Ok(())
    }

    /// Takes the variable's lock for writing, to update its value in place
    /// (the training ops): the guard gives the elements mutably, copying
    /// them first if a reader still shares the buffer, and keeps the
    /// dtype and shape as they are. Readers and other writers wait until
    /// the guard drops.
    ///
    /// ```
    /// use op_core::{DType, Tensor};
    /// use op_kernels::variable::Var;
    ///
    /// let var = Var::with_value(Tensor::from_vec([2], vec![1.0f32, 2.0])?);
    /// let before = var.value().unwrap();
    /// if let Some(values) = var.lock().elements_mut::<f32>()? {
    ///     values[0] = 5.0;
    /// }
    /// assert_eq!(var.value().unwrap().as_slice::<f32>()?, [5.0, 2.0]);
    /// assert_eq!(before.as_slice::<f32>()?, [1.0, 2.0]); // copy-on-write
    /// assert!(Var::new(DType::F32).lock().elements_mut::<f32>()?.is_none());
    /// # Ok::<(), op_core::Error>(())
    /// ```
    pub fn lock(&self) -> VarGuard<'_> {
        VarGuard {
            slot: self.write_lock(),
        }
    }
}

/// A variable locked for writing ([`Var::lock`]): its value can be read and
/// its elements changed in place, never replaced, so the variable keeps its
/// dtype and shape.
pub struct VarGuard<'a> {
    slot: RwLockWriteGuard<'a, Option<Tensor>>,
}

impl VarGuard<'_> {
    /// The current value, or `None` before the first assign.
    pub fn value(&self) -> Option<&Tensor> {
        self.slot.as_ref()
    }

    /// The value's elements, mutably, or `None` before the first assign;
    /// copied first if another tensor shares the buffer (copy-on-write).
    /// The errors of [`Tensor::as_slice_mut`]: `InvalidArgument` if `T` is
    /// not the variable's element type.
    pub fn elements_mut<T: op_core::Element>(&mut self) -> Result<Option<&mut [T]>> {
        self.slot
            .as_mut()
            .map(Tensor::as_slice_mut::<T>)
            .transpose()
    }

    /// The value's memory on `device`, for a device kernel to update in
    /// place (the training ops' GPU kernels), or `None` before the first
    /// assign. A value elsewhere (one a host kernel assigned) moves to
    /// `device` first, for good; a buffer another tensor shares is copied
    /// first (copy-on-write, as [`elements_mut`](Self::elements_mut)
    /// does on the host). Returns the copy's error (`Unavailable` without
    /// the device's backend or driver, `InvalidArgument` for a dtype no
    /// device holds).
    pub fn device_memory_mut(&mut self, device: Device) -> Result<Option<&mut dyn DeviceMemory>> {
        let Some(value) = self.slot.as_mut() else {
            return Ok(None);
        };
        if value.device() != device {
            *value = value.to_device(device)?;
        }
        value.make_distinct()?;
        value.device_memory_mut().map(Some).ok_or_else(|| {
            Error::internal(format!(
                "a variable's value on {device} is not in its memory"
            ))
        })
    }
}

impl fmt::Debug for VarGuard<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.slot {
            Some(value) => write!(f, "VarGuard({})", value.shape()),
            None => f.write_str("VarGuard(uninitialized)"),
        }
    }
}

impl fmt::Debug for Var {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.debug_string())
    }
}

impl Resource for Var {
    /// `Var<int64, [10]>`: the dtype and the value's shape
    /// (`uninitialized` before the first assign), never the contents.
    fn debug_string(&self) -> String {
        match &*self.read_lock() {
            Some(value) => format!("Var<{}, {}>", self.dtype, value.shape()),
            None => format!("Var<{}, uninitialized>", self.dtype),
        }
    }

    /// The value's bytes (for `string`, each string's heap bytes too),
    /// whether or not other tensors share the buffer, plus the variable
    /// itself.
    fn memory_used(&self) -> usize {
        let slot = self.read_lock();
        size_of::<Self>() + slot.as_ref().map_or(0, tensor_bytes)
    }
}

/// The bytes a tensor's elements take (for `string`, each string's heap
/// bytes too), whether or not other tensors share its buffer: what a
/// resource holding tensors reports as its memory.
pub(crate) fn tensor_bytes(value: &Tensor) -> usize {
    match value.dtype().size_of() {
        Some(size) => value.num_elements() * size,
        None => match value.as_slice::<Vec<u8>>() {
            Ok(strings) => strings
                .iter()
                .map(|s| size_of::<Vec<u8>>() + s.capacity())
                .sum(),
            Err(_) => value.num_elements() * size_of::<ResourceHandle>(),
        },
    }
}
