//! Tensors in a device's memory: made from a backend's allocation, and
//! copied between the host and devices.

use op_spec::{DType, Device};

use super::storage::{Storage, small_bytes_mut};
use super::{Tensor, allocation_failed};
use crate::allocator::HostAllocator;
use crate::device::{self, DeviceBackend, DeviceBuffer, DeviceMemory};
use crate::element::Element;
use crate::element::private::{ElementVisitor, visit};
use crate::error::{Error, Result};
use crate::shape::TensorShape;

impl Tensor {
    /// A tensor of `dtype` and shape `dims` over `memory`, an allocation a
    /// device backend made: how a backend (op-cuda) hands the runtime a
    /// tensor on its device.
    ///
    /// Returns an `InvalidArgument` error if `dtype` is not a plain number
    /// type (bools, strings, resources and variants live on the host) or `memory`'s
    /// size is not the shape's byte size.
    pub fn from_device_memory(
        dtype: DType,
        dims: &[usize],
        memory: Box<dyn DeviceMemory>,
    ) -> Result<Tensor> {
        let shape = TensorShape::try_new(dims)?;
        let bytes = device_bytes(dtype, &shape)?;
        if memory.byte_len() != bytes {
            return Err(Error::invalid_argument(format!(
                "a {dtype} tensor of shape {shape} on device {} needs {bytes} bytes, but the memory holds {}",
                memory.device(),
                memory.byte_len()
            )));
        }
        Ok(Tensor {
            dtype,
            shape,
            storage: Storage::Device(DeviceBuffer::new(memory)),
        })
    }

    /// A tensor of `dtype` and shape `dims` in `device`'s memory from its
    /// `backend` (zeroed if `zeroed`).
    pub(crate) fn allocate_on_device(
        backend: &dyn DeviceBackend,
        device: Device,
        dtype: DType,
        dims: &[usize],
        zeroed: bool,
    ) -> Result<Tensor> {
        let shape = TensorShape::try_new(dims)?;
        let bytes = device_bytes(dtype, &shape)?;
        let memory = backend
            .allocate(device, bytes, zeroed)
            .map_err(|e| allocation_failed(dtype, &shape, e))?;
        Ok(Tensor {
            dtype,
            shape,
            storage: Storage::Device(DeviceBuffer::new(memory)),
        })
    }

    /// Whether the elements are in host memory (every tensor but those a
    /// device backend made).
    #[inline]
    pub fn is_on_host(&self) -> bool {
        !matches!(self.storage, Storage::Device(_))
    }

    /// The device memory holding the elements, for a backend's kernels
    /// (which downcast it to their own type); `None` on the host.
    pub fn device_memory(&self) -> Option<&dyn DeviceMemory> {
        match &self.storage {
            Storage::Device(buffer) => Some(buffer.memory()),
            _ => None,
        }
    }

    /// The device memory for writing, when no other tensor shares it;
    /// `None` on the host or when shared (a kernel then writes a new
    /// buffer).
    pub fn device_memory_mut(&mut self) -> Option<&mut dyn DeviceMemory> {
        match &mut self.storage {
            Storage::Device(buffer) => buffer.memory_mut(),
            _ => None,
        }
    }

    /// This tensor in `device`'s memory: itself (sharing its buffer) if it
    /// is there already, else a copy made through the device's backend
    /// (to a device, from a device to the host, or between devices through
    /// the host).
    ///
    /// Returns the backend's error when the device cannot be used (an
    /// `Unavailable` error for a missing driver or a backend not linked),
    /// and an `InvalidArgument` error for a tensor that cannot live on a
    /// device (bools, strings, resource handles, variants).
    ///
    /// ```
    /// use op_core::{Device, Tensor};
    /// let t = Tensor::from_vec([2], vec![1.0f32, 2.0])?;
    /// assert_eq!(t.to_device(Device::CPU)?.buffer_address(), t.buffer_address());
    /// // With no GPU backend linked, a GPU is unavailable (an error, not a panic).
    /// let err = t.to_device(Device::gpu(0)).unwrap_err();
    /// assert_eq!(err.code(), op_core::Code::Unavailable);
    /// # Ok::<(), op_core::Error>(())
    /// ```
    pub fn to_device(&self, device: Device) -> Result<Tensor> {
        if self.device() == device {
            return Ok(self.clone());
        }
        let on_host;
        let host = match &self.storage {
            Storage::Device(buffer) => {
                on_host = self.download(buffer.memory())?;
                if device == Device::CPU {
                    return Ok(on_host);
                }
                &on_host
            }
            _ => self,
        };
        let backend = device::open(device)?
            .ok_or_else(|| Error::internal("the host has no backend to copy with"))?;
        host.upload(backend, device)
    }

    /// This tensor in host memory: [`to_device`](Self::to_device) of the
    /// host.
    pub fn to_host(&self) -> Result<Tensor> {
        self.to_device(Device::CPU)
    }

    /// A copy of this host tensor on `device`, through `backend`.
    pub(crate) fn upload(&self, backend: &dyn DeviceBackend, device: Device) -> Result<Tensor> {
        struct Upload<'a>(&'a Tensor, &'a dyn DeviceBackend, Device);
        impl ElementVisitor for Upload<'_> {
            type Output = Result<Box<dyn DeviceMemory>>;
            fn visit<T: Element>(self) -> Result<Box<dyn DeviceMemory>> {
                let Upload(tensor, backend, device) = self;
                let bytes = T::as_raw(tensor.as_slice::<T>()?)
                    .ok_or_else(|| not_on_devices(tensor.dtype))?;
                backend.copy_from_host(device, bytes)
            }
        }
        device_bytes(self.dtype, &self.shape)?;
        let memory = visit(self.dtype, Upload(self, backend, device))
            .ok_or_else(|| not_on_devices(self.dtype))?
            .map_err(|e| {
                e.with_context(format!(
                    "copying a {} tensor of shape {} to device {device}",
                    self.dtype, self.shape
                ))
            })?;
        Tensor::from_device_memory(self.dtype, self.dims(), memory)
    }

    /// A host copy of this tensor's elements in `memory`.
    fn download(&self, memory: &dyn DeviceMemory) -> Result<Tensor> {
        let mut host = Tensor::allocate(HostAllocator::global(), self.dtype, self.dims(), false)?;
        let bytes = host
            .plain_bytes_mut()
            .ok_or_else(|| Error::internal("a fresh host tensor of a plain type has no bytes"))?;
        memory.copy_to_host(bytes).map_err(|e| {
            e.with_context(format!(
                "copying a {} tensor of shape {} from device {} to the host",
                self.dtype,
                self.shape,
                memory.device()
            ))
        })?;
        Ok(host)
    }

    /// A copy of this device tensor in a buffer of its own on its device
    /// (copy-on-write of a shared device buffer).
    pub(crate) fn device_copy(&self) -> Result<Tensor> {
        let Storage::Device(buffer) = &self.storage else {
            return Err(Error::internal("device_copy of a host tensor"));
        };
        let backend = device::backend(buffer.device().kind())?;
        let memory = backend.copy_on_device(buffer.memory())?;
        Tensor::from_device_memory(self.dtype, self.dims(), memory)
    }

    /// The bytes of a plain tensor in memory of its own (inside the
    /// tensor, inline, or an allocator's block), for writing.
    fn plain_bytes_mut(&mut self) -> Option<&mut [u8]> {
        use super::storage::HostData;
        match &mut self.storage {
            Storage::Small { len, bits, .. } => Some(small_bytes_mut(*len, bits)),
            Storage::Host(data) => match std::sync::Arc::get_mut(data)? {
                HostData::Inline(inline) => Some(inline.bytes_mut()),
                HostData::Block(block) => Some(block.bytes_mut()),
                _ => None,
            },
            Storage::Device(_) => None,
        }
    }
}

/// The byte size of a device tensor of `dtype` and `shape`, or why such a
/// tensor cannot live on a device.
fn device_bytes(dtype: DType, shape: &TensorShape) -> Result<usize> {
    struct Plain;
    impl ElementVisitor for Plain {
        type Output = bool;
        fn visit<T: Element>(self) -> bool {
            T::POD
        }
    }
    let size = dtype
        .size_of()
        .filter(|_| visit(dtype, Plain).unwrap_or(false))
        .ok_or_else(|| not_on_devices(dtype))?;
    shape.num_elements().checked_mul(size).ok_or_else(|| {
        Error::invalid_argument(format!(
            "a {dtype} tensor of shape {shape} does not fit in memory"
        ))
    })
}

#[cold]
fn not_on_devices(dtype: DType) -> Error {
    Error::invalid_argument(format!(
        "a {dtype} tensor cannot live in a device's memory: only plain numbers do (bools, strings, resource handles and variants stay on the host)"
    ))
}
