//! The runtime's GPU backend: op-core's [`DeviceBackend`] for
//! [`DeviceType::Gpu`], registered at link time.

use std::any::Any;
use std::sync::Arc;

use op_core::device::{DeviceBackend, DeviceMemory};
use op_core::{Code, Device, DeviceType, Error, Result};

use crate::buffer::CudaBuffer;
use crate::device::GpuDevice;

/// NVIDIA GPUs through the CUDA driver. Linking op-cuda registers it;
/// `Runtime::gpu(0)` and `Tensor::to_device(Device::gpu(0))` use it.
#[derive(Debug, Clone, Copy)]
pub struct CudaBackend;

/// The one backend value, as registered.
pub static CUDA: CudaBackend = CudaBackend;

op_core::inventory::submit! {
    op_core::device::DeviceBackendRegistration::new(&CUDA, file!(), line!())
}

/// The GPU behind `device`, or why there is none.
pub fn gpu_device(device: Device) -> Result<Arc<GpuDevice>> {
    if device.kind() != DeviceType::Gpu {
        return Err(Error::new(
            Code::InvalidArgument,
            format!("device {device} is not a GPU"),
        ));
    }
    GpuDevice::get(device.index() as usize)
}

/// `memory` as this backend's buffer, or an error if another backend made
/// it.
pub fn cuda_buffer(memory: &dyn DeviceMemory) -> Result<&CudaBuffer> {
    (memory as &dyn Any)
        .downcast_ref::<CudaBuffer>()
        .ok_or_else(|| {
            Error::new(
                Code::InvalidArgument,
                format!(
                    "memory on device {} was not allocated by op-cuda",
                    memory.device()
                ),
            )
        })
}

impl DeviceBackend for CudaBackend {
    fn name(&self) -> &'static str {
        "CUDA"
    }

    fn device_type(&self) -> DeviceType {
        DeviceType::Gpu
    }

    fn open(&self, device: Device) -> Result<()> {
        gpu_device(device).map(drop)
    }

    fn allocate(
        &self,
        device: Device,
        bytes: usize,
        zeroed: bool,
    ) -> Result<Box<dyn DeviceMemory>> {
        Ok(Box::new(gpu_device(device)?.allocate(bytes, zeroed)?))
    }

    fn copy_from_host(&self, device: Device, host: &[u8]) -> Result<Box<dyn DeviceMemory>> {
        Ok(Box::new(CudaBuffer::from_host(&gpu_device(device)?, host)?))
    }

    fn copy_on_device(&self, memory: &dyn DeviceMemory) -> Result<Box<dyn DeviceMemory>> {
        Ok(Box::new(cuda_buffer(memory)?.try_clone()?))
    }

    fn synchronize(&self, device: Device) -> Result<()> {
        gpu_device(device)?.synchronize()
    }
}
