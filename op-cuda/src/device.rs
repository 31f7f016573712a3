//! One GPU as this process uses it: its context, its one stream, its
//! caching allocator, its compiled kernels and its cuBLAS handle.
//!
//! A `GpuDevice` is made once per ordinal, the first time anything asks
//! for it, and lives for the rest of the process (as PyTorch's per-device
//! state does): tensors' buffers and compiled kernels refer to it, and
//! reopening a context would invalidate them.

use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use cudarc::cublas::CudaBlas;
use cudarc::driver::sys::CUdevice_attribute;
use cudarc::driver::{CudaContext, CudaStream};
use op_core::{Code, Error, Result};

use crate::allocator::{AllocatorStats, CachingAllocator};
use crate::buffer::CudaBuffer;
use crate::driver::{self, Library, driver_error, guard};
use crate::kernel::CompiledKernels;

/// One GPU: what its kernels launch on and allocate from. Shared
/// (`Arc`) by every buffer, kernel and runtime using the device.
pub struct GpuDevice {
    ordinal: usize,
    name: String,
    compute_capability: (u32, u32),
    sm_count: u32,
    context: Arc<CudaContext>,
    /// The one stream every kernel, copy and allocation of the device is
    /// queued on, so that work is ordered without events.
    stream: Arc<CudaStream>,
    allocator: CachingAllocator,
    pub(crate) kernels: CompiledKernels,
    blas: Mutex<Option<CudaBlas>>,
}

impl std::fmt::Debug for GpuDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuDevice")
            .field("ordinal", &self.ordinal)
            .field("name", &self.name)
            .field("compute_capability", &self.compute_capability)
            .field("sm_count", &self.sm_count)
            .finish_non_exhaustive()
    }
}

/// The most GPUs one process uses (a DGX has 8; ordinals past this are
/// refused).
const MAX_DEVICES: usize = 64;

/// The devices opened so far, by ordinal: read without a lock on every
/// kernel call ([`GpuContext`](crate::GpuContext) looks its device up).
static OPENED: [OnceLock<Arc<GpuDevice>>; MAX_DEVICES] = [const { OnceLock::new() }; MAX_DEVICES];

/// Held while a device is opened, so that it is opened once.
static OPENING: Mutex<()> = Mutex::new(());

impl GpuDevice {
    /// GPU `ordinal`, opened on first use.
    ///
    /// Returns an `Unavailable` error when there is no CUDA driver ("no
    /// CUDA driver: libcuda.so was not found"), and an `InvalidArgument`
    /// error when the machine has no GPU of that ordinal ("GPU 3 does not
    /// exist: this machine has 1"). A failed open is not remembered: a
    /// later call tries again.
    pub fn get(ordinal: usize) -> Result<Arc<GpuDevice>> {
        if let Some(device) = OPENED.get(ordinal).and_then(OnceLock::get) {
            return Ok(device.clone());
        }
        let _opening = OPENING.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(device) = OPENED.get(ordinal).and_then(OnceLock::get) {
            return Ok(device.clone());
        }
        let device = Arc::new(GpuDevice::open(ordinal)?);
        let slot = OPENED.get(ordinal).ok_or_else(|| {
            Error::new(
                Code::InvalidArgument,
                format!("GPU {ordinal}: op-cuda uses at most {MAX_DEVICES} GPUs"),
            )
        })?;
        Ok(slot.get_or_init(|| device).clone())
    }

    fn open(ordinal: usize) -> Result<GpuDevice> {
        let count = driver::device_count()?;
        if ordinal >= count {
            return Err(Error::new(
                Code::InvalidArgument,
                format!("GPU {ordinal} does not exist: this machine has {count}"),
            ));
        }
        let what = format!("opening GPU {ordinal}");
        let context =
            guard(&what, || CudaContext::new(ordinal))?.map_err(|e| driver_error(&what, e))?;
        let stream = context.new_stream().map_err(|e| driver_error(&what, e))?;
        let attribute = |a| {
            context
                .attribute(a)
                .map(|v| u32::try_from(v).unwrap_or(0))
                .map_err(|e| driver_error(&what, e))
        };
        let compute_capability = (
            attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        );
        let sm_count = attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
        let name = context.name().map_err(|e| driver_error(&what, e))?;
        let allocator = CachingAllocator::new(stream.cu_stream(), context.has_async_alloc());
        Ok(GpuDevice {
            ordinal,
            name,
            compute_capability,
            sm_count,
            context,
            stream,
            allocator,
            kernels: CompiledKernels::default(),
            blas: Mutex::new(None),
        })
    }

    /// The device's ordinal (`Device::gpu(ordinal)`).
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// The device's name ("NVIDIA H100 80GB HBM3").
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The compute capability, (major, minor): (9, 0) for an H100.
    pub fn compute_capability(&self) -> (u32, u32) {
        self.compute_capability
    }

    /// The number of streaming multiprocessors (132 on an H100 SXM).
    pub fn sm_count(&self) -> u32 {
        self.sm_count
    }

    /// The cudarc context, for what this crate does not wrap.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.context
    }

    /// The device's stream: everything this crate does on the device is
    /// queued here, in order. Work queued elsewhere must synchronize with
    /// it.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Makes the device's context current on this thread (cheap when it
    /// is): raw driver calls need it.
    pub fn bind(&self) -> Result<()> {
        self.context
            .bind_to_thread()
            .map_err(|e| driver_error("binding the CUDA context to this thread", e))
    }

    /// Waits until all work queued on the device's stream is done.
    pub fn synchronize(&self) -> Result<()> {
        self.stream
            .synchronize()
            .map_err(|e| driver_error(&format!("synchronizing GPU {}", self.ordinal), e))
    }

    /// `bytes` bytes of device memory from the caching allocator: zeroed
    /// (a memset queued on the stream) if `zeroed`, else unspecified.
    pub fn allocate(self: &Arc<Self>, bytes: usize, zeroed: bool) -> Result<CudaBuffer> {
        self.bind()?;
        let (ptr, class) = self.allocator.allocate(bytes)?;
        let buffer = CudaBuffer::from_block(self.clone(), ptr, class, bytes);
        if zeroed && bytes > 0 {
            // SAFETY: `ptr` is a live block of at least `bytes` bytes on
            // this device, owned by `buffer`; the memset is queued on the
            // stream, before any use of the buffer.
            unsafe {
                cudarc::driver::result::memset_d8_async(ptr, 0, bytes, self.stream.cu_stream())
            }
            .map_err(|e| driver_error("zeroing device memory", e))?;
        }
        Ok(buffer)
    }

    /// The allocator's counters.
    pub fn allocator_stats(&self) -> AllocatorStats {
        self.allocator.stats()
    }

    /// Sets the most bytes the allocator keeps cached.
    pub fn set_cache_limit(&self, bytes: usize) {
        self.allocator.set_cache_limit(bytes);
    }

    /// Gives the allocator's cached blocks back to the driver.
    pub fn empty_cache(&self) -> Result<()> {
        self.bind()?;
        self.allocator.empty_cache()
    }

    pub(crate) fn release(&self, ptr: cudarc::driver::sys::CUdeviceptr, class: usize) {
        // A drop on a thread where the context is not current: binding
        // can only fail for a lost device, whose memory is gone anyway.
        if self.bind().is_ok() {
            self.allocator.release(ptr, class);
        }
    }

    /// Runs `f` with the device's cuBLAS handle (created on first use, on
    /// the device's stream; calls are serialized, as a handle is not for
    /// concurrent use).
    ///
    /// Returns an `Unavailable` error when cuBLAS is not installed.
    pub fn with_cublas<R>(&self, f: impl FnOnce(&CudaBlas) -> Result<R>) -> Result<R> {
        let mut blas = self.blas.lock().unwrap_or_else(PoisonError::into_inner);
        if blas.is_none() {
            driver::require(Library::Cublas)?;
            self.bind()?;
            let handle = guard("creating a cuBLAS handle", || {
                CudaBlas::new(self.stream.clone())
            })?
            .map_err(|e| driver::cublas_error("creating a cuBLAS handle", e))?;
            *blas = Some(handle);
        }
        match blas.as_ref() {
            Some(handle) => f(handle),
            None => Err(Error::new(Code::Internal, "the cuBLAS handle vanished")),
        }
    }
}
