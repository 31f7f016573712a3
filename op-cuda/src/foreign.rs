//! Our kernels inside another runtime's GPU work: a host (TensorFlow's
//! GPU device) owns the stream its ops are ordered on and the memory of
//! their inputs and outputs; our kernels run on our device's own stream
//! ([`GpuDevice::stream`]), over that memory.
//!
//! The two streams are joined with events, so that no ordering is lost
//! and no one waits on the host thread:
//!
//! 1. [`ForeignStream::enter`]: our stream waits for everything the host
//!    queued before the call (the writes of the inputs);
//! 2. our kernel runs on our stream, over the host's inputs lent as
//!    [`CudaBuffer::borrowed`] buffers, and its outputs are copied into
//!    the host's output buffers ([`copy_into`]), still on our stream;
//! 3. [`ForeignStream::leave`]: the host's stream waits for our stream, so
//!    that whatever the host queues next (a reader of the outputs, or a
//!    reuse of the inputs' memory once the host frees it) comes after.
//!
//! Our own buffers (the kernel's outputs before the copy) go back to our
//! cache, ordered on our stream after the copy, as every buffer of ours.

use cudarc::driver::sys::{self, CUdeviceptr, CUstream};

use op_core::{Code, Error, Result};

use crate::buffer::CudaBuffer;
use crate::device::GpuDevice;
use crate::driver::{self, driver_error};

/// A CUDA stream that another runtime owns (TensorFlow's compute stream
/// of one GPU), as raw as the host gives it.
#[derive(Clone, Copy, Debug)]
pub struct ForeignStream {
    raw: CUstream,
}

// SAFETY: a CUstream is a handle the driver lets any thread use; this type
// only queues event records and waits on it.
unsafe impl Send for ForeignStream {}
// SAFETY: as above.
unsafe impl Sync for ForeignStream {}

impl ForeignStream {
    /// The stream `raw`.
    ///
    /// # Safety
    ///
    /// `raw` is a live stream (not the legacy default stream, null), and
    /// stays live while this value is used.
    pub unsafe fn from_raw(raw: CUstream) -> Result<ForeignStream> {
        if raw.is_null() {
            return Err(Error::new(
                Code::FailedPrecondition,
                "the host gave no CUDA stream (null)",
            ));
        }
        Ok(ForeignStream { raw })
    }

    /// The raw stream.
    pub fn raw(self) -> CUstream {
        self.raw
    }

    /// The ordinal of the GPU the stream is on, from the stream's context
    /// (a host's device numbers may not be CUDA's).
    pub fn device_ordinal(self) -> Result<usize> {
        // The driver's entry points exist only where libcuda does: probed,
        // so that their absence is an error, not a panic.
        driver::init()?;
        let what = "finding the GPU of the host's stream";
        let mut context: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: a live stream (this type's contract); `context` receives
        // its context, which the stream keeps alive.
        unsafe { sys::cuStreamGetCtx(self.raw, &mut context) }
            .result()
            .map_err(|e| driver_error(what, e))?;
        // SAFETY: a live context, made current on this thread only until
        // the pop below, which restores what was current.
        unsafe { sys::cuCtxPushCurrent_v2(context) }
            .result()
            .map_err(|e| driver_error(what, e))?;
        let mut device: sys::CUdevice = 0;
        // SAFETY: `device` receives the current context's device.
        let got = unsafe { sys::cuCtxGetDevice(&mut device) }.result();
        let mut popped: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: pops the context pushed above.
        let _ = unsafe { sys::cuCtxPopCurrent_v2(&mut popped) };
        got.map_err(|e| driver_error(what, e))?;
        usize::try_from(device).map_err(|_| {
            Error::new(
                Code::Internal,
                format!("the host's stream is on CUDA device {device}"),
            )
        })
    }

    /// Orders `gpu`'s stream after everything queued on this one so far.
    pub fn enter(self, gpu: &GpuDevice) -> Result<()> {
        // SAFETY: both streams are live (this type's contract, and the
        // device's own).
        unsafe { wait_for(gpu, self.raw, gpu.stream().cu_stream()) }
            .map_err(|e| e.with_context("ordering our GPU work after the host's"))
    }

    /// Orders this stream after everything queued on `gpu`'s so far.
    pub fn leave(self, gpu: &GpuDevice) -> Result<()> {
        // SAFETY: as in `enter`.
        unsafe { wait_for(gpu, gpu.stream().cu_stream(), self.raw) }
            .map_err(|e| e.with_context("ordering the host's GPU work after ours"))
    }
}

/// Makes `waiter` wait for the work queued on `source` so far: an event
/// recorded on `source`, waited on by `waiter`, then destroyed (the driver
/// keeps it until the wait is done).
///
/// # Safety
///
/// Both streams are live streams of `gpu`'s device.
unsafe fn wait_for(gpu: &GpuDevice, source: CUstream, waiter: CUstream) -> Result<()> {
    use cudarc::driver::result::{event, stream};
    gpu.bind()?;
    let event = event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)
        .map_err(|e| driver_error("creating an event", e))?;
    // SAFETY: a new event and live streams (the caller's contract).
    let queued = unsafe { event::record(event, source) }
        .and_then(|()| unsafe {
            stream::wait_event(
                waiter,
                event,
                sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
            )
        })
        .map_err(|e| driver_error("joining two streams", e));
    // SAFETY: the event, destroyed once; a pending wait keeps what it needs.
    let _ = unsafe { event::destroy(event) };
    queued
}

impl CudaBuffer {
    /// `len` bytes of device memory at `ptr` that another runtime owns,
    /// lent as a buffer of ours: kernels read and write it as any buffer,
    /// and dropping it leaves the memory to its owner.
    ///
    /// # Safety
    ///
    /// `ptr` holds `len` bytes on `gpu`'s device, which stay allocated, and
    /// used by nothing else that is not ordered with our stream
    /// ([`ForeignStream`]), while this buffer (and any tensor over it)
    /// lives.
    pub unsafe fn borrowed(gpu: &std::sync::Arc<GpuDevice>, ptr: CUdeviceptr, len: usize) -> Self {
        CudaBuffer::lent(gpu.clone(), ptr, len)
    }
}

/// Copies `len` bytes of `source` to `destination`, queued on `source`'s
/// device's stream (no wait); `len` must be the buffer's size.
///
/// # Safety
///
/// `destination` holds `len` bytes on the same device, which nothing reads
/// or writes out of our stream's order until the copy is done.
pub unsafe fn copy_into(source: &CudaBuffer, destination: CUdeviceptr, len: usize) -> Result<()> {
    use op_core::device::DeviceMemory;
    if source.byte_len() != len {
        return Err(Error::new(
            Code::Internal,
            format!(
                "copying {} bytes of GPU memory into a buffer of {len}",
                source.byte_len()
            ),
        ));
    }
    // SAFETY: the caller's contract, for exactly the buffer's bytes.
    unsafe { source.copy_to(destination) }
        .map_err(|e| e.with_context("copying an output into the host's buffer"))
}
