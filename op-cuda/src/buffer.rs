//! Device memory as tensors hold it ([`CudaBuffer`]) and as kernels take
//! it ([`DevicePtr`]).

use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::DeviceRepr;
use cudarc::driver::sys::CUdeviceptr;
use op_core::device::DeviceMemory;
use op_core::{Code, Device, Error, Result};

use crate::device::GpuDevice;
use crate::driver::driver_error;

/// A block of one GPU's memory from its caching allocator: the
/// [`DeviceMemory`] of a tensor on a GPU. Dropping it returns the block
/// to the cache (no driver call, no synchronization).
#[derive(Debug)]
pub struct CudaBuffer {
    device: Arc<GpuDevice>,
    ptr: CUdeviceptr,
    /// The block's size class (what goes back to the free list).
    class: usize,
    /// The bytes the tensor uses (at most `class`).
    len: usize,
    /// Whether the block is the allocator's (returned on drop), or memory
    /// another runtime lent ([`CudaBuffer::borrowed`]).
    owned: bool,
}

impl CudaBuffer {
    pub(crate) fn from_block(
        device: Arc<GpuDevice>,
        ptr: CUdeviceptr,
        class: usize,
        len: usize,
    ) -> CudaBuffer {
        CudaBuffer {
            device,
            ptr,
            class,
            len,
            owned: true,
        }
    }

    /// Memory this crate did not allocate ([`CudaBuffer::borrowed`]).
    pub(crate) fn lent(device: Arc<GpuDevice>, ptr: CUdeviceptr, len: usize) -> CudaBuffer {
        CudaBuffer {
            device,
            ptr,
            class: 0,
            len,
            owned: false,
        }
    }

    /// The device holding the memory.
    pub fn gpu(&self) -> &Arc<GpuDevice> {
        &self.device
    }

    /// The raw device address, for kernel arguments and driver calls.
    pub fn raw_ptr(&self) -> CUdeviceptr {
        self.ptr
    }

    /// The address typed as elements of `T` (no check: the caller knows
    /// what the buffer holds; [`GpuContext`](crate::GpuContext) checks the
    /// tensor's dtype).
    pub fn ptr<T>(&self) -> DevicePtr<T> {
        DevicePtr::from_raw(self.ptr)
    }

    /// A copy of `host` in a new buffer on `device`, copied on the
    /// device's stream. Returns once the copy is done, so `host` may be
    /// reused (correct first: pinned staging would let it return early).
    pub fn from_host(device: &Arc<GpuDevice>, host: &[u8]) -> Result<CudaBuffer> {
        let buffer = device.allocate(host.len(), false)?;
        if !host.is_empty() {
            // SAFETY: the buffer holds `host.len()` bytes; the copy is
            // queued on the device's stream after every earlier user of
            // the block, and the synchronize below keeps `host` borrowed
            // until the copy has read it.
            unsafe {
                cudarc::driver::result::memcpy_htod_async(
                    buffer.ptr,
                    host,
                    device.stream().cu_stream(),
                )
            }
            .map_err(|e| driver_error("copying to the GPU", e))?;
            device.synchronize()?;
        }
        Ok(buffer)
    }

    /// A copy of this buffer in a new buffer on its device, queued on the
    /// stream (no wait).
    pub fn try_clone(&self) -> Result<CudaBuffer> {
        let copy = self.device.allocate(self.len, false)?;
        // SAFETY: the new block holds `len` bytes on this device, used by
        // nothing before the copy, which is ordered on the stream first.
        unsafe { self.copy_to(copy.ptr) }?;
        Ok(copy)
    }

    /// Copies the buffer's bytes to `destination`, queued on the device's
    /// stream after the work that wrote them (no wait).
    ///
    /// # Safety
    ///
    /// `destination` holds `len` bytes on the same device, which nothing
    /// reads or writes out of the stream's order until the copy is done.
    pub(crate) unsafe fn copy_to(&self, destination: CUdeviceptr) -> Result<()> {
        if self.len == 0 {
            return Ok(());
        }
        self.device.bind()?;
        // SAFETY: both hold `len` bytes on this device (the caller's
        // contract and the buffer's), ordered on its stream.
        unsafe {
            cudarc::driver::result::memcpy_dtod_async(
                destination,
                self.ptr,
                self.len,
                self.device.stream().cu_stream(),
            )
        }
        .map_err(|e| driver_error("copying on the GPU", e))
    }
}

impl DeviceMemory for CudaBuffer {
    fn device(&self) -> Device {
        Device::gpu(u32::try_from(self.device.ordinal()).unwrap_or(u32::MAX))
    }

    fn byte_len(&self) -> usize {
        self.len
    }

    fn copy_to_host(&self, host: &mut [u8]) -> Result<()> {
        if host.len() != self.len {
            return Err(Error::new(
                Code::InvalidArgument,
                format!(
                    "copying {} bytes of GPU memory into a host buffer of {}",
                    self.len,
                    host.len()
                ),
            ));
        }
        if self.len == 0 {
            return Ok(());
        }
        self.device.bind()?;
        // SAFETY: `host` and the block both hold `len` bytes; the copy is
        // queued after the kernels that write the block, and the
        // synchronize below keeps `host` borrowed until it is written.
        unsafe {
            cudarc::driver::result::memcpy_dtoh_async(
                host,
                self.ptr,
                self.device.stream().cu_stream(),
            )
        }
        .map_err(|e| driver_error("copying from the GPU", e))?;
        self.device.synchronize()
    }
}

impl Drop for CudaBuffer {
    fn drop(&mut self) {
        if self.owned {
            self.device.release(self.ptr, self.class);
        }
    }
}

/// A device address of elements of `T`, as a kernel takes it: passed to
/// a launch it is the kernel's `T*` parameter. Copy, and valid only while
/// the buffer it came from lives (the tensor in the kernel's context).
#[repr(transparent)]
pub struct DevicePtr<T> {
    raw: CUdeviceptr,
    _element: PhantomData<fn() -> T>,
}

impl<T> DevicePtr<T> {
    /// The address `raw`, as elements of `T`.
    pub fn from_raw(raw: CUdeviceptr) -> DevicePtr<T> {
        DevicePtr {
            raw,
            _element: PhantomData,
        }
    }

    /// The raw address.
    pub fn raw(self) -> CUdeviceptr {
        self.raw
    }

    /// Whether the address is a multiple of `bytes` (for vectorized
    /// loads: 16 for `float4`).
    pub fn is_aligned_to(self, bytes: u64) -> bool {
        self.raw.is_multiple_of(bytes)
    }
}

impl<T> Clone for DevicePtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for DevicePtr<T> {}

impl<T> std::fmt::Debug for DevicePtr<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "DevicePtr<{}>({:#x})",
            std::any::type_name::<T>(),
            self.raw
        )
    }
}

// SAFETY: `DevicePtr` is `repr(transparent)` over a `CUdeviceptr` (a
// 64-bit address), which is how a kernel's pointer parameter is passed.
unsafe impl<T> DeviceRepr for DevicePtr<T> {}
