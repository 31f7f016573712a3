//! What a runtime's kernels share on its device: the device's name, its
//! memory, its threads and its resources.

use std::sync::Arc;

use op_spec::Device;

use crate::allocator::HostAllocator;
use crate::resource::ResourceMgr;
use crate::threads::ThreadPool;

/// One device of a runtime, as its kernels see it (TensorFlow's
/// `DeviceBase`: `attributes().name()`, `GetAllocator`,
/// `tensorflow_cpu_worker_threads`, `resource_manager`). Shared by the
/// runtime and every op it prepared, so that a call passes one reference.
#[derive(Clone, Debug)]
pub(crate) struct DeviceState {
    pub(crate) device: Device,
    pub(crate) allocator: HostAllocator,
    pub(crate) threads: Arc<ThreadPool>,
    pub(crate) resources: Arc<ResourceMgr>,
}

impl DeviceState {
    /// The host CPU with the shared allocator and thread pool and a resource
    /// manager of its own.
    pub(crate) fn cpu() -> DeviceState {
        DeviceState {
            device: Device::CPU,
            allocator: HostAllocator::global().clone(),
            threads: ThreadPool::global().clone(),
            resources: Arc::new(ResourceMgr::new()),
        }
    }
}
