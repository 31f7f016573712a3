//! Launching kernels on a device's stream: the grid for n elements, and
//! the arguments.
//!
//! Elementwise kernels use a grid-stride loop (each thread handles
//! elements `i`, `i + blockDim.x * gridDim.x`, ...), so the grid need not
//! cover n: it is capped at [`BLOCKS_PER_SM`] blocks per multiprocessor,
//! enough to fill the GPU, and a launch over 1e8 elements costs the same
//! to set up as one over 1e6.

use cudarc::driver::{CudaFunction, DeviceRepr, LaunchArgs, LaunchConfig, PushKernelArg};
use op_core::Result;

use crate::device::GpuDevice;
use crate::driver::driver_error;

/// Threads per block for elementwise kernels.
pub const BLOCK_SIZE: u32 = 256;

/// The most blocks per multiprocessor an elementwise launch uses.
pub const BLOCKS_PER_SM: u32 = 32;

/// The number of blocks of [`BLOCK_SIZE`] threads for `n` elements on a
/// GPU with `sm_count` multiprocessors: enough to cover `n`, at most
/// `sm_count * BLOCKS_PER_SM`, at least 1 (0 for `n == 0`: nothing to
/// launch).
///
/// ```
/// use op_cuda::launch::grid_size;
/// assert_eq!(grid_size(0, 132), 0);
/// assert_eq!(grid_size(1, 132), 1);
/// assert_eq!(grid_size(257, 132), 2);
/// assert_eq!(grid_size(100_000_000, 132), 132 * 32);
/// ```
pub fn grid_size(n: usize, sm_count: u32) -> u32 {
    let blocks = n.div_ceil(BLOCK_SIZE as usize);
    let cap = sm_count.max(1).saturating_mul(BLOCKS_PER_SM);
    u32::try_from(blocks).unwrap_or(u32::MAX).min(cap)
}

/// The launch configuration for `n` elements (grid-stride), no shared
/// memory.
pub fn elementwise_config(n: usize, sm_count: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (grid_size(n, sm_count), 1, 1),
        block_dim: (BLOCK_SIZE, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// A kernel's arguments: a tuple of values a kernel takes by value
/// ([`DevicePtr`](crate::DevicePtr)s, numbers), pushed in order. The
/// driver copies them at launch, so the tuple may be a temporary.
pub trait KernelArgs {
    /// Pushes the arguments onto `launch`.
    fn push<'a>(&'a self, launch: &mut LaunchArgs<'a>);
}

macro_rules! kernel_args {
    ($($name:ident . $index:tt),+) => {
        impl<$($name: DeviceRepr),+> KernelArgs for ($($name,)+) {
            #[inline]
            fn push<'a>(&'a self, launch: &mut LaunchArgs<'a>) {
                $(launch.arg(&self.$index);)+
            }
        }
    };
}

kernel_args!(A.0);
kernel_args!(A.0, B.1);
kernel_args!(A.0, B.1, C.2);
kernel_args!(A.0, B.1, C.2, D.3);
kernel_args!(A.0, B.1, C.2, D.3, E.4);
kernel_args!(A.0, B.1, C.2, D.3, E.4, F.5);
kernel_args!(A.0, B.1, C.2, D.3, E.4, F.5, G.6);
kernel_args!(A.0, B.1, C.2, D.3, E.4, F.5, G.6, H.7);

impl GpuDevice {
    /// Launches `function` with `config` and `args` on the device's stream
    /// (queued: returns before the kernel runs).
    ///
    /// # Safety
    ///
    /// `args` must match the kernel's parameters in number, order and
    /// type, and the memory the kernel touches through them must be live
    /// device memory of this device, large enough for every access the
    /// kernel makes with `config`.
    pub unsafe fn launch(
        &self,
        function: &CudaFunction,
        config: LaunchConfig,
        args: &impl KernelArgs,
    ) -> Result<()> {
        if config.grid_dim.0 == 0 || config.grid_dim.1 == 0 || config.grid_dim.2 == 0 {
            return Ok(());
        }
        let mut launch = self.stream().launch_builder(function);
        args.push(&mut launch);
        // SAFETY: the caller vouches for the arguments (this function's
        // contract); the launch is queued on the device's stream.
        unsafe { launch.launch(config) }
            .map(drop)
            .map_err(|e| driver_error("launching a GPU kernel", e))
    }

    /// Launches `function`, a grid-stride kernel over `n` elements, with
    /// [`elementwise_config`]; `n == 0` launches nothing.
    ///
    /// # Safety
    ///
    /// As for [`launch`](Self::launch): `args` match the kernel's
    /// parameters, and the kernel stays within the buffers for `n`
    /// elements.
    pub unsafe fn launch_elementwise(
        &self,
        function: &CudaFunction,
        n: usize,
        args: &impl KernelArgs,
    ) -> Result<()> {
        let config = elementwise_config(n, self.sm_count());
        // SAFETY: forwarded from this function's contract.
        unsafe { self.launch(function, config, args) }
    }
}
