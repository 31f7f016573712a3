//! Our GPU kernels (`#[kernel(device = "gpu")]`) on TensorFlow's GPU
//! device (the `gpu` feature): each is registered for `"GPU"` with its
//! type constraints and host-memory args, and runs through op-cuda.
//!
//! | TensorFlow | ours |
//! | --- | --- |
//! | create | the node prepared on a runtime of the kernel's GPU (the CUDA device of TensorFlow's stream for it: TensorFlow's GPU numbers may not be CUDA's) |
//! | compute | the inputs lent as GPU buffers of ours without a copy (host-memory args on the host), our kernel run on our device's stream, each output copied on that stream into a buffer TensorFlow allocates |
//!
//! TensorFlow's C API gives a stream only to pluggable devices
//! (`TF_GetStream` fails for TensorFlow's own GPU device), so the shim
//! reads the compute stream from the C++ context. Our work is ordered
//! between TensorFlow's with two events per call
//! ([`op_cuda::foreign::ForeignStream`]): our stream waits for what
//! TensorFlow queued before the call, TensorFlow's waits for our kernel
//! and copies. Nothing waits on the host thread, as in TensorFlow's own
//! GPU kernels.
//!
//! The copy of each output is the price of our kernels allocating their
//! outputs themselves (a device-to-device copy, not a host round trip).
//!
//! **Not yet run on a GPU**: no machine this was written on has one, and
//! the CPU wheel (`tensorflow-cpu`) has no GPU device, so only the
//! registration is tested (the kernels TensorFlow lists for each op).

use std::ffi::{c_int, c_void};
use std::sync::{Arc, Mutex, PoisonError};

use op_core::{DType, Device, Error, PreparedOp, Result, Runtime, Tensor};
use op_cuda::GpuDevice;
use op_cuda::backend::cuda_buffer;
use op_cuda::buffer::CudaBuffer;
use op_cuda::foreign::{ForeignStream, copy_into};
use smallvec::SmallVec;

use crate::api::{Api, TF_OpKernelConstruction, TF_OpKernelContext};
use crate::kernel::{self, KernelState};
use crate::shim;

/// One of our GPU kernels as a TensorFlow kernel: prepared for one GPU.
pub(crate) struct GpuKernel {
    prepared: Arc<PreparedOp>,
    gpu: Arc<GpuDevice>,
    /// Per input and output: whether TensorFlow keeps it in host memory
    /// (the registration's `host_memory` args).
    host_inputs: SmallVec<[bool; 8]>,
    host_outputs: SmallVec<[bool; 4]>,
}

/// The runtime of GPU `gpu`, made once per GPU and kept for the process
/// (a runtime owns the kernels it prepared, which TensorFlow's kernels
/// share): strict placement, so that a node never falls back to a host
/// kernel behind TensorFlow's back.
fn runtime(gpu: &GpuDevice) -> Result<&'static Runtime> {
    static RUNTIMES: Mutex<Vec<(usize, &'static Runtime)>> = Mutex::new(Vec::new());
    let mut runtimes = RUNTIMES.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, runtime)) = runtimes.iter().find(|(o, _)| *o == gpu.ordinal()) {
        return Ok(runtime);
    }
    let index = u32::try_from(gpu.ordinal())
        .map_err(|_| Error::internal(format!("GPU ordinal {}", gpu.ordinal())))?;
    let runtime = Runtime::new()
        .try_on_device(Device::gpu(index))?
        .strict_placement(true);
    let runtime: &'static Runtime = Box::leak(Box::new(runtime));
    runtimes.push((gpu.ordinal(), runtime));
    Ok(runtime)
}

/// `raw`, a stream the shim read, or why there is none.
///
/// # Safety
///
/// `raw` is null or a live stream for as long as the result is used.
unsafe fn foreign_stream(raw: Option<*mut c_void>) -> Result<ForeignStream> {
    let raw = raw.ok_or_else(|| {
        Error::failed_precondition(
            "GPU kernels need the shim, which did not load (see op_tf_load_report)",
        )
    })?;
    // SAFETY: the caller's contract.
    unsafe { ForeignStream::from_raw(raw.cast()) }
}

impl KernelState for GpuKernel {
    const WHAT: &'static str = "the GPU kernel";

    unsafe fn new(api: &Api, ctx: *mut TF_OpKernelConstruction) -> Result<GpuKernel> {
        // SAFETY: live construction: the stream is its device's, live as
        // long as the device.
        let stream = unsafe { foreign_stream(shim::construction_stream(ctx)) }?;
        let gpu = GpuDevice::get(stream.device_ordinal()?)?;
        // SAFETY: the caller's contract.
        let node = unsafe { kernel::read_node(api, ctx) }?;
        let prepared = node.prepare(runtime(&gpu)?)?;
        let instance = prepared.instance();
        let mut host_inputs: SmallVec<[bool; 8]> =
            smallvec::smallvec![false; instance.input_types().len()];
        let mut host_outputs: SmallVec<[bool; 4]> =
            smallvec::smallvec![false; instance.output_types().len()];
        for arg in prepared.kernel().host_memory {
            for i in instance.input_range(arg).unwrap_or_default() {
                host_inputs[i] = true;
            }
            for i in instance.output_range(arg).unwrap_or_default() {
                host_outputs[i] = true;
            }
        }
        Ok(GpuKernel {
            prepared,
            gpu,
            host_inputs,
            host_outputs,
        })
    }

    unsafe fn compute(&self, api: &Api, ctx: *mut TF_OpKernelContext) -> Result<()> {
        // SAFETY: live context: the stream outlives the call.
        let stream = unsafe { foreign_stream(shim::compute_stream(ctx)) }?;
        let mut inputs: SmallVec<[Tensor; 8]> = SmallVec::new();
        for (i, &on_host) in self.host_inputs.iter().enumerate() {
            // SAFETY: live context; `i` is one of the node's inputs.
            inputs.push(unsafe { self.input(api, ctx, i as c_int, on_host) }?);
        }
        // Held while the kernel runs: a lent input is then never the only
        // owner of its buffer, so no kernel writes TensorFlow's input in
        // place.
        let _shared = inputs.clone();
        stream.enter(&self.gpu)?;
        let mut outputs: SmallVec<[Option<Tensor>; 4]> =
            smallvec::smallvec![None; self.host_outputs.len()];
        let ran = (self.prepared.run_into(&mut inputs, &mut outputs))
            // SAFETY: live context.
            .and_then(|()| unsafe { self.set_outputs(api, ctx, &outputs) });
        // Whatever ran, TensorFlow's later work comes after it.
        let left = stream.leave(&self.gpu);
        ran.and(left)
    }
}

impl GpuKernel {
    /// Input `index`: TensorFlow's GPU buffer lent as ours, or for a
    /// host-memory input its host buffer.
    ///
    /// # Safety
    ///
    /// `ctx` is live and `index` one of its inputs; the tensor is used only
    /// during the call.
    unsafe fn input(
        &self,
        api: &Api,
        ctx: *mut TF_OpKernelContext,
        index: c_int,
        on_host: bool,
    ) -> Result<Tensor> {
        // SAFETY: the caller's contract.
        let parts = unsafe { kernel::input_parts(api, ctx, index) }?;
        if on_host {
            // SAFETY: as above.
            return unsafe { parts.host_tensor(index) };
        }
        let dtype = parts.dtype(index)?;
        let dims = parts.dims();
        // SAFETY: TensorFlow's GPU buffer of `bytes` bytes for this input,
        // live through the call, which no lent tensor outlives; nothing
        // writes it while our kernel runs (TensorFlow's later work waits for
        // ours).
        let memory = unsafe { CudaBuffer::borrowed(&self.gpu, parts.data as u64, parts.bytes) };
        Tensor::from_device_memory(dtype, &dims, Box::new(memory))
    }

    /// Copies each output into a buffer TensorFlow allocates for it: on
    /// our stream for a GPU output, at once for a host-memory one.
    ///
    /// # Safety
    ///
    /// `ctx` is live.
    unsafe fn set_outputs(
        &self,
        api: &Api,
        ctx: *mut TF_OpKernelContext,
        outputs: &[Option<Tensor>],
    ) -> Result<()> {
        for (j, (output, &on_host)) in outputs.iter().zip(&self.host_outputs).enumerate() {
            let output = output
                .as_ref()
                .ok_or_else(|| Error::internal("the kernel left an output unset"))?;
            let dims: SmallVec<[i64; 8]> = output.dims().iter().map(|&d| d as i64).collect();
            let len = output.num_elements() * output.dtype().size_of().unwrap_or(0);
            if on_host || matches!(output.dtype(), DType::String | DType::Bool) {
                let mut host = output.to_device(Device::CPU)?;
                host.make_distinct()?;
                // SAFETY: live context; `j` is one of its outputs.
                unsafe { kernel::set_output(api, ctx, j as c_int, host) }?;
                continue;
            }
            // SAFETY: live context; `j` is one of its outputs.
            let allocated = unsafe {
                kernel::allocate_output(api, ctx, j as c_int, output.dtype(), &dims, len)
            }?;
            let made = match output.device_memory() {
                Some(memory) => cuda_buffer(memory)?,
                None => {
                    return Err(Error::internal(format!(
                        "the GPU kernel made output {j} in host memory"
                    )));
                }
            };
            // SAFETY: TensorFlow's new GPU buffer of `len` bytes for output
            // `j`, which TensorFlow touches only after our stream's work
            // (`leave`, after this copy).
            unsafe { copy_into(made, allocated.data as u64, len) }?;
        }
        Ok(())
    }
}
