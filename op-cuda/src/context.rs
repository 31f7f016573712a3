//! [`GpuContext`]: a kernel call as a GPU kernel function sees it.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use cudarc::driver::CudaFunction;
use op_core::{Code, DeviceType, Element, FromKernelContext, KernelContext, Result, Tensor};

use crate::backend::cuda_buffer;
use crate::buffer::DevicePtr;
use crate::device::GpuDevice;
use crate::kernel::{GpuKernelSource, entry_name};
use crate::launch::KernelArgs;

/// The context of a kernel running on a GPU: the [`KernelContext`]
/// (shapes, attrs, outputs; through `Deref`), the [`GpuDevice`], and
/// typed device pointers for inputs and outputs.
///
/// `#[kernel(device = "gpu")]` functions take `ctx: &mut GpuContext<'_, '_>`,
/// made with [`FromKernelContext`]:
///
/// ```ignore
/// #[kernel(op = Scale, device = "gpu", types(f32))]
/// fn scale_gpu(ctx: &mut GpuContext<'_, '_>, attrs: &ScaleAttrs) -> Result<()> {
///     let n = ctx.input(0)?.num_elements();
///     let dims = ctx.input(0)?.dims().to_vec();
///     let x = ctx.input_ptr::<f32>(0)?;
///     let y = ctx.allocate_output_for_writing::<f32>(0, &dims)?;
///     let scale = ctx.function_for::<f32>(&SCALE, "scale")?;
///     // SAFETY: scale_f32(const float*, float*, float, unsigned long long)
///     // reads x and writes y for i < n; both hold n floats.
///     unsafe { ctx.launch_elementwise(&scale, n, &(x, y, attrs.factor, n as u64)) }
/// }
/// ```
pub struct GpuContext<'c, 'a> {
    ctx: &'c mut KernelContext<'a>,
    gpu: Arc<GpuDevice>,
}

impl<'c, 'a: 'c> FromKernelContext<'c, 'a> for GpuContext<'c, 'a> {
    fn from_kernel_context(ctx: &'c mut KernelContext<'a>) -> Result<Self> {
        let device = ctx.device();
        if device.kind() != DeviceType::Gpu {
            return Err(ctx.error(
                Code::FailedPrecondition,
                format_args!("a GPU kernel was called on device {device}"),
            ));
        }
        let gpu = GpuDevice::get(device.index() as usize)
            .map_err(|e| ctx.error(e.code(), e.message()))?;
        Ok(GpuContext { ctx, gpu })
    }
}

impl<'a> Deref for GpuContext<'_, 'a> {
    type Target = KernelContext<'a>;

    fn deref(&self) -> &KernelContext<'a> {
        self.ctx
    }
}

impl<'a> DerefMut for GpuContext<'_, 'a> {
    fn deref_mut(&mut self) -> &mut KernelContext<'a> {
        self.ctx
    }
}

impl<'a> GpuContext<'_, 'a> {
    /// The GPU the kernel runs on.
    pub fn gpu(&self) -> &Arc<GpuDevice> {
        &self.gpu
    }

    /// The underlying kernel context (also reached through `Deref`).
    pub fn kernel_context(&mut self) -> &mut KernelContext<'a> {
        self.ctx
    }

    /// The device address of input `index`, an array of `T` in this GPU's
    /// memory.
    ///
    /// Returns an `InvalidArgument` error, naming the op and node, if the
    /// input's dtype is not `T` or it is in host memory (a `host_memory`
    /// input: read it with [`host_input_slice`](Self::host_input_slice)).
    pub fn input_ptr<T: Element>(&self, index: usize) -> Result<DevicePtr<T>> {
        let input = self.ctx.input(index)?;
        device_ptr(input, "input", index).map_err(|m| self.ctx.error(Code::InvalidArgument, m))
    }

    /// The elements of input `index`, a host-memory input (a shape or an
    /// axis a `host_memory` registration keeps on the host).
    pub fn host_input_slice<T: Element>(&self, index: usize) -> Result<&[T]> {
        let input = self.ctx.input(index)?;
        if !input.is_on_host() {
            return Err(self.ctx.error(
                Code::InvalidArgument,
                format_args!("input {index} is in GPU memory, not on the host"),
            ));
        }
        input.as_slice::<T>()
    }

    /// Allocates output `index` of shape `dims` in GPU memory, zeroed, and
    /// returns its address.
    pub fn allocate_output<T: Element>(
        &mut self,
        index: usize,
        dims: &[usize],
    ) -> Result<DevicePtr<T>> {
        let ptr = device_ptr(self.ctx.allocate_output(index, dims)?, "output", index);
        ptr.map_err(|m| self.ctx.error(Code::InvalidArgument, m))
    }

    /// [`allocate_output`](Self::allocate_output) without the zeroing (no
    /// memset), for a kernel that writes every element.
    pub fn allocate_output_for_writing<T: Element>(
        &mut self,
        index: usize,
        dims: &[usize],
    ) -> Result<DevicePtr<T>> {
        let output = self.ctx.allocate_output_for_writing(index, dims)?;
        let ptr = device_ptr(output, "output", index);
        ptr.map_err(|m| self.ctx.error(Code::InvalidArgument, m))
    }

    /// Entry point `entry` of `kernel`, compiled for this GPU on first use.
    pub fn function(&self, kernel: &'static GpuKernelSource, entry: &str) -> Result<CudaFunction> {
        self.gpu
            .function(kernel, entry)
            .map_err(|e| self.ctx.error(e.code(), e.message()))
    }

    /// Entry point `<base>_<dtype of T>` of `kernel` (`scale_f32`).
    pub fn function_for<T: Element>(
        &self,
        kernel: &'static GpuKernelSource,
        base: &str,
    ) -> Result<CudaFunction> {
        self.function(kernel, &entry_name(base, T::DTYPE)?)
    }

    /// Launches a grid-stride kernel over `n` elements on the GPU's stream
    /// ([`GpuDevice::launch_elementwise`]); `n == 0` launches nothing.
    ///
    /// # Safety
    ///
    /// `args` match the kernel's parameters, and the kernel stays within
    /// the buffers for `n` elements.
    pub unsafe fn launch_elementwise(
        &self,
        function: &CudaFunction,
        n: usize,
        args: &impl KernelArgs,
    ) -> Result<()> {
        // SAFETY: forwarded from this function's contract.
        unsafe { self.gpu.launch_elementwise(function, n, args) }
            .map_err(|e| self.ctx.error(e.code(), e.message()))
    }
}

/// The address of `tensor` (`what` `index` of the call) as elements of
/// `T`, or why it has none: another dtype, or host memory.
fn device_ptr<T: Element>(
    tensor: &Tensor,
    what: &str,
    index: usize,
) -> std::result::Result<DevicePtr<T>, String> {
    if tensor.dtype() != T::DTYPE {
        return Err(format!(
            "{what} {index} is {}, but the GPU kernel uses it as {}",
            tensor.dtype(),
            T::DTYPE
        ));
    }
    let memory = tensor
        .device_memory()
        .ok_or_else(|| format!("{what} {index} is in host memory, not on the GPU"))?;
    cuda_buffer(memory)
        .map(|buffer| buffer.ptr())
        .map_err(|e| format!("{what} {index}: {}", e.message()))
}
