//! Devices: what a runtime's kernels share on their device, and the seam
//! through which memory on a device other than the host (a GPU) reaches
//! the runtime.
//!
//! op-core knows no driver. A backend crate (`op-cuda` for NVIDIA GPUs)
//! implements [`DeviceBackend`] for a [`DeviceType`] and submits it with
//! [`DeviceBackendRegistration`], collected at link time like kernels; its
//! allocations are [`DeviceMemory`], which a [`Tensor`](crate::Tensor)
//! holds as its storage ([`Tensor::from_device_memory`](crate::Tensor::from_device_memory)).
//! The runtime uses the backend to allocate a device kernel's outputs and to
//! copy inputs between the host and the device when a node runs where its
//! inputs are not ([`Runtime`](crate::Runtime)'s placement).
//!
//! A backend that cannot open a device (no driver, no such GPU) says so
//! with an `Unavailable` error from [`DeviceBackend::open`]; nothing
//! panics.
//!
//! ```
//! use op_core::device::backend;
//! use op_core::DeviceType;
//!
//! // The host needs no backend; a GPU needs one linked in (op-cuda).
//! assert!(backend(DeviceType::Cpu).is_err());
//! ```

use std::any::Any;
use std::sync::Arc;

use op_spec::{Device, DeviceType};

use crate::allocator::HostAllocator;
use crate::resource::ResourceMgr;
use crate::threads::ThreadPool;
use crate::{Code, Error, Result};

/// One device of a runtime, as its kernels see it (TensorFlow's
/// `DeviceBase`: `attributes().name()`, `GetAllocator`,
/// `tensorflow_cpu_worker_threads`, `resource_manager`). Shared by the
/// runtime and every op it prepared, so that a call passes one reference.
#[derive(Clone)]
pub(crate) struct DeviceState {
    pub(crate) device: Device,
    /// The runtime's device, which holds its resources: `device` itself,
    /// but for the host state a device runtime's nodes fall back to
    /// (resources are shared across the fallback, so their handles name
    /// the one device whichever kernel made them).
    pub(crate) resource_device: Device,
    pub(crate) allocator: HostAllocator,
    pub(crate) threads: Arc<ThreadPool>,
    pub(crate) resources: Arc<ResourceMgr>,
    /// The backend of a device other than the host's (`None` for the host,
    /// and for a device whose backend is not linked: preparing a kernel
    /// there is an error).
    pub(crate) backend: Option<&'static dyn DeviceBackend>,
}

impl std::fmt::Debug for DeviceState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceState")
            .field("device", &self.device)
            .field("backend", &self.backend.map(|b| b.name()))
            .finish_non_exhaustive()
    }
}

impl DeviceState {
    /// The host CPU with the shared allocator and thread pool and a resource
    /// manager of its own.
    pub(crate) fn cpu() -> DeviceState {
        DeviceState {
            device: Device::CPU,
            resource_device: Device::CPU,
            allocator: HostAllocator::global().clone(),
            threads: ThreadPool::global().clone(),
            resources: Arc::new(ResourceMgr::new()),
            backend: None,
        }
    }

    /// The same state on the host: where a node whose device has no kernel
    /// for it falls back to (same threads, allocator and resources, so
    /// variables are shared across the fallback).
    pub(crate) fn host_fallback(&self) -> DeviceState {
        DeviceState {
            device: Device::CPU,
            backend: None,
            ..self.clone()
        }
    }

    /// The backend, for a device other than the host, or why there is none.
    pub(crate) fn device_backend(&self) -> Result<&'static dyn DeviceBackend> {
        match self.backend {
            Some(backend) => Ok(backend),
            None => Err(no_backend(self.device.kind())),
        }
    }
}

/// Memory a backend allocated on a device: what a tensor on that device
/// holds. The backend's own type is reached by downcasting
/// (`(memory as &dyn Any).downcast_ref::<CudaBuffer>()`).
///
/// Dropping it returns the memory to the backend (its caching allocator).
pub trait DeviceMemory: Any + Send + Sync {
    /// The device holding the memory.
    fn device(&self) -> Device;

    /// The size in bytes.
    fn byte_len(&self) -> usize;

    /// Copies all [`byte_len`](Self::byte_len) bytes to `host`, which has
    /// exactly that length, waiting for the device's pending work on the
    /// memory first.
    fn copy_to_host(&self, host: &mut [u8]) -> Result<()>;
}

/// A kind of device's driver, as the runtime uses it: opening a device,
/// allocating on it and copying to it. Implemented by backend crates
/// (op-cuda) and submitted with [`DeviceBackendRegistration`].
pub trait DeviceBackend: Send + Sync + 'static {
    /// The backend's name, for messages ("CUDA").
    fn name(&self) -> &'static str;

    /// The kind of device it drives.
    fn device_type(&self) -> DeviceType;

    /// Opens `device` (once; later calls are cheap), or says why it cannot
    /// be used: an `Unavailable` error for a missing driver or library, an
    /// `InvalidArgument` error for an index past the devices present.
    fn open(&self, device: Device) -> Result<()>;

    /// `bytes` bytes on `device`, zeroed if `zeroed` (otherwise their
    /// contents are unspecified, for a kernel that writes every byte).
    fn allocate(&self, device: Device, bytes: usize, zeroed: bool)
    -> Result<Box<dyn DeviceMemory>>;

    /// A copy of `host` on `device`.
    fn copy_from_host(&self, device: Device, host: &[u8]) -> Result<Box<dyn DeviceMemory>>;

    /// A copy of `memory` on its own device (copy-on-write of a shared
    /// device buffer).
    fn copy_on_device(&self, memory: &dyn DeviceMemory) -> Result<Box<dyn DeviceMemory>>;

    /// Waits until the work queued on `device` is done.
    fn synchronize(&self, device: Device) -> Result<()>;
}

/// A backend for a kind of device, collected at link time:
///
/// ```ignore
/// op_core::inventory::submit! {
///     op_core::device::DeviceBackendRegistration::new(&CUDA, file!(), line!())
/// }
/// ```
pub struct DeviceBackendRegistration {
    /// The backend.
    pub backend: &'static dyn DeviceBackend,
    /// Where it was registered, for the error about two backends.
    pub file: &'static str,
    /// The line of `file`.
    pub line: u32,
}

impl DeviceBackendRegistration {
    /// A registration of `backend`, made at `file:line`.
    pub const fn new(backend: &'static dyn DeviceBackend, file: &'static str, line: u32) -> Self {
        DeviceBackendRegistration {
            backend,
            file,
            line,
        }
    }
}

inventory::collect!(DeviceBackendRegistration);

/// The backend linked into this program for `device_type`.
///
/// Returns an `Unavailable` error naming the device type when none is
/// linked (the host needs none), and a `FailedPrecondition` error naming
/// both registrations when two are.
pub fn backend(device_type: DeviceType) -> Result<&'static dyn DeviceBackend> {
    let mut found = inventory::iter::<DeviceBackendRegistration>
        .into_iter()
        .filter(|r| r.backend.device_type() == device_type);
    match (found.next(), found.next()) {
        (Some(one), None) => Ok(one.backend),
        (Some(one), Some(two)) => Err(Error::failed_precondition(format!(
            "two backends are linked for device type '{device_type}': {} at {}:{} and {} at {}:{}",
            one.backend.name(),
            one.file,
            one.line,
            two.backend.name(),
            two.file,
            two.line
        ))),
        (None, _) => Err(no_backend(device_type)),
    }
}

/// Opens `device` through its backend: `Ok(None)` for the host, the
/// backend for another device, or why the device cannot be used.
pub fn open(device: Device) -> Result<Option<&'static dyn DeviceBackend>> {
    if device.kind() == DeviceType::Cpu {
        return Ok(None);
    }
    let backend = backend(device.kind())?;
    backend.open(device)?;
    Ok(Some(backend))
}

#[cold]
fn no_backend(device_type: DeviceType) -> Error {
    let hint = match device_type {
        DeviceType::Cpu => "the host needs no backend".to_owned(),
        DeviceType::Gpu => "link op-cuda (a dependency, named in the program: `use op_cuda as _;`), which drives NVIDIA GPUs through the CUDA driver".to_owned(),
    };
    Error::new(
        Code::Unavailable,
        format!("no backend for device type '{device_type}' is linked into this program: {hint}"),
    )
}

/// The memory a tensor on a device other than the host holds: a backend's
/// [`DeviceMemory`], shared by the tensor's clones. Public only so that the
/// tensor's storage can name it.
#[derive(Clone)]
pub struct DeviceBuffer(Arc<Box<dyn DeviceMemory>>);

impl DeviceBuffer {
    pub(crate) fn new(memory: Box<dyn DeviceMemory>) -> DeviceBuffer {
        DeviceBuffer(Arc::new(memory))
    }

    /// The device holding the memory.
    pub(crate) fn device(&self) -> Device {
        self.0.device()
    }

    pub(crate) fn memory(&self) -> &dyn DeviceMemory {
        &**self.0
    }

    /// The memory for writing, if no other tensor shares it.
    pub(crate) fn memory_mut(&mut self) -> Option<&mut dyn DeviceMemory> {
        Arc::get_mut(&mut self.0).map(|b| &mut **b)
    }

    pub(crate) fn is_unique(&self) -> bool {
        Arc::strong_count(&self.0) == 1
    }

    /// The address of the shared allocation: one per buffer, as a host
    /// buffer's.
    pub(crate) fn address(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }
}

impl std::fmt::Debug for DeviceBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("device", &self.device())
            .field("bytes", &self.0.byte_len())
            .finish()
    }
}
