//! What the elementwise GPU kernels share: the [`Gpu`] device (seed 003's
//! `GPUDevice`), the CUDA C++ every elementwise source starts with
//! ([`cuda_prelude!`](crate::cuda_prelude)), and launching a map over
//! 16-byte packs.
//!
//! # The map
//!
//! An elementwise kernel is memory bound: what it costs is the bytes it
//! moves, so the CUDA side moves them in 16-byte accesses (`float4`,
//! `double2`, `int4`: a `Pack<T>` of `16 / sizeof(T)` elements) when both
//! buffers are 16-byte aligned (the caching allocator's blocks are, and a
//! forwarded input is its own block), in a grid-stride loop, and finishes
//! the last `n % pack` elements one by one. `map(f, x, y, n)` in the
//! prelude does this for any functor `f`; a kernel source defines its
//! functors (one `struct` per op, `T operator()(T) const`) and one
//! `extern "C"` entry point per op and dtype. The grid is sized for the
//! number of packs ([`launch_packed`]).

use std::marker::PhantomData;
use std::sync::Arc;

use op_core::{Code, Element, Error, Result, Tensor};
use op_cuda::cudarc::driver::CudaFunction;
use op_cuda::launch::KernelArgs;
use op_cuda::{DevicePtr, GpuContext, GpuDevice};

use crate::device::Device;

/// The CUDA C++ every elementwise kernel source starts with (a macro, so
/// that `concat!` can put it before a source's own text): `u64`, the
/// grid-stride indices, `Pack<T>`, and the templates
///
/// - `map(f, x, y, n)`: `y[i] = f(x[i])` for `i < n`, in packs when
///   aligned (`x == y` is allowed: each element is read, then written, by
///   one thread);
/// - `wrap_neg`, `wrap_add`, `wrap_sub`, `wrap_mul`: integer arithmetic
///   that wraps on overflow (in unsigned arithmetic: signed overflow is
///   undefined in C++), as the CPU kernels do; plain for floats.
#[macro_export]
#[doc(hidden)]
macro_rules! cuda_prelude {
    () => {
        r#"
typedef unsigned long long u64;
typedef long long i64;

__device__ __forceinline__ u64 thread_index() {
    return (u64)blockIdx.x * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ u64 thread_count() {
    return (u64)blockDim.x * gridDim.x;
}

// 16 bytes of elements, loaded and stored as one access.
template <typename T>
struct alignas(16) Pack {
    static constexpr int N = 16 / sizeof(T);
    T v[N];
};

__device__ __forceinline__ bool aligned16(const void* a, const void* b) {
    return (((u64)a | (u64)b) & 15) == 0;
}

// y[i] = f(x[i]) for i < n: 16-byte packs when both are aligned, then the
// elements past the last whole pack. x may be y.
template <typename T, typename F>
__device__ __forceinline__ void map(F f, const T* x, T* y, u64 n) {
    constexpr int N = Pack<T>::N;
    u64 done = 0;
    if (aligned16(x, y)) {
        const Pack<T>* xs = reinterpret_cast<const Pack<T>*>(x);
        Pack<T>* ys = reinterpret_cast<Pack<T>*>(y);
        const u64 packs = n / N;
        for (u64 i = thread_index(); i < packs; i += thread_count()) {
            Pack<T> p = xs[i];
#pragma unroll
            for (int k = 0; k < N; ++k) p.v[k] = f(p.v[k]);
            ys[i] = p;
        }
        done = packs * N;
    }
    for (u64 i = done + thread_index(); i < n; i += thread_count()) y[i] = f(x[i]);
}

// Wrapping integer arithmetic (through unsigned types); plain for floats.
__device__ __forceinline__ float wrap_neg(float x) { return -x; }
__device__ __forceinline__ double wrap_neg(double x) { return -x; }
__device__ __forceinline__ int wrap_neg(int x) { return (int)(0u - (unsigned)x); }
__device__ __forceinline__ i64 wrap_neg(i64 x) { return (i64)(0ull - (u64)x); }
#define WRAPPING_BINARY(name, op)                                                              \
    __device__ __forceinline__ float name(float a, float b) { return a op b; }                 \
    __device__ __forceinline__ double name(double a, double b) { return a op b; }              \
    __device__ __forceinline__ int name(int a, int b) { return (int)((unsigned)a op (unsigned)b); } \
    __device__ __forceinline__ i64 name(i64 a, i64 b) { return (i64)((u64)a op (u64)b); }
WRAPPING_BINARY(wrap_add, +)
WRAPPING_BINARY(wrap_sub, -)
WRAPPING_BINARY(wrap_mul, *)
#undef WRAPPING_BINARY
"#
    };
}

/// A GPU through op-cuda (TensorFlow's `Eigen::GpuDevice`): kernels run on
/// its stream, in the order they are queued.
#[derive(Debug, Clone, Copy)]
pub struct Gpu;

/// An elementwise functor's work on a GPU: the device, the input's and the
/// output's addresses (the same address when the input's buffer became
/// the output) and the element count. The addresses are valid while the
/// kernel call's tensors live (`'b`, the borrow of the context).
#[derive(Debug)]
pub struct GpuUnary<'b, T> {
    /// The GPU to launch on.
    pub gpu: Arc<GpuDevice>,
    /// The input's elements.
    pub input: DevicePtr<T>,
    /// The output's elements (`input` when in place).
    pub output: DevicePtr<T>,
    /// The number of elements of each.
    pub len: usize,
    _call: PhantomData<&'b mut ()>,
}

impl Device for Gpu {
    type Context<'c, 'a: 'c> = GpuContext<'c, 'a>;
    type Unary<'b, T: Element> = GpuUnary<'b, T>;

    fn unary_output<'b, T: Element>(
        ctx: &'b mut GpuContext<'_, '_>,
        input: usize,
        output: usize,
    ) -> Result<GpuUnary<'b, T>> {
        let gpu = ctx.gpu().clone();
        let candidate = ctx.input(input)?;
        let len = candidate.num_elements();
        let (input, output) =
            if candidate.is_unique() && candidate.dtype() == T::DTYPE && !candidate.is_on_host() {
                let forwarded = ctx.forward_input_to_output(input, output)?;
                let ptr =
                    tensor_ptr::<T>(forwarded).map_err(|e| ctx.error(e.code(), e.message()))?;
                (ptr, ptr)
            } else {
                let dims = candidate.dims().to_vec();
                let x = ctx.input_ptr::<T>(input)?;
                (x, ctx.allocate_output_for_writing::<T>(output, &dims)?)
            };
        Ok(GpuUnary {
            gpu,
            input,
            output,
            len,
            _call: PhantomData,
        })
    }

    fn node_error(ctx: &GpuContext<'_, '_>, e: Error) -> Error {
        ctx.error(e.code(), e.message())
    }
}

impl<T: Element> GpuUnary<'_, T> {
    /// Launches `function`, a map over 16-byte packs
    /// (`kernel(const T* x, T* y, u64 n)` calling the prelude's `map`),
    /// on input and output.
    ///
    /// # Safety
    ///
    /// `function` takes exactly `(const T*, T*, unsigned long long)` and
    /// touches elements `0..n` of each (what `map` does).
    pub unsafe fn map(&self, function: &CudaFunction) -> Result<()> {
        let args = (self.input, self.output, self.len as u64);
        // SAFETY: both addresses hold `len` elements of `T` in this
        // GPU's memory (the context's tensors, alive for `'b`); the
        // kernel's parameters and accesses are the caller's promise.
        unsafe { launch_packed::<T>(&self.gpu, function, self.len, &args) }
    }
}

/// The address of `tensor`, a tensor of `T`s in a GPU's memory.
///
/// Returns an `InvalidArgument` error for another dtype, a host tensor, or
/// memory another backend made.
pub fn tensor_ptr<T: Element>(tensor: &Tensor) -> Result<DevicePtr<T>> {
    if tensor.dtype() != T::DTYPE {
        return Err(Error::new(
            Code::InvalidArgument,
            format!(
                "a {} tensor, but the GPU kernel uses it as {}",
                tensor.dtype(),
                T::DTYPE
            ),
        ));
    }
    let memory = tensor.device_memory().ok_or_else(|| {
        Error::new(
            Code::InvalidArgument,
            "a tensor in host memory, not on the GPU",
        )
    })?;
    Ok(op_cuda::backend::cuda_buffer(memory)?.ptr())
}

/// Launches `function`, a grid-stride kernel over `n` elements of `T`
/// that handles them in 16-byte packs, with a grid sized for the packs
/// (`n / (16 / size_of::<T>())`, rounded up); `n == 0` launches nothing.
///
/// # Safety
///
/// As for [`GpuDevice::launch_elementwise`]: `args` match the kernel's
/// parameters, and the kernel stays within the buffers for `n` elements.
pub unsafe fn launch_packed<T>(
    gpu: &GpuDevice,
    function: &CudaFunction,
    n: usize,
    args: &impl KernelArgs,
) -> Result<()> {
    let per_pack = (16 / size_of::<T>()).max(1);
    // SAFETY: forwarded from this function's contract; the grid size only
    // changes how many threads stride over the elements.
    unsafe { gpu.launch_elementwise(function, n.div_ceil(per_pack), args) }
}

/// The element types the elementwise CUDA sources define entry points
/// for, with their names there (`twice_f32`).
pub trait CudaElement: Element + Copy {
    /// The dtype's suffix in entry points (`f32`).
    const SUFFIX: &'static str;

    /// The entry point `<base>_<suffix>` (`twice_f32`).
    fn entry(base: &str) -> String {
        format!("{base}_{}", Self::SUFFIX)
    }
}

macro_rules! cuda_elements {
    ($($t:ty => $suffix:literal),*) => {$(
        impl CudaElement for $t {
            const SUFFIX: &'static str = $suffix;
        }
    )*};
}

cuda_elements!(f32 => "f32", f64 => "f64", i32 => "i32", i64 => "i64");
