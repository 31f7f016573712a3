//! The GPU kernels of the training ops, `float` and `double`: the CPU
//! kernels' checks and locks (`update.rs`), then one CUDA kernel over the
//! variables' GPU buffers in place. A variable whose value is on the host
//! (a host kernel assigned it) moves to the GPU on its first update, and
//! a buffer a reader still shares is copied first
//! ([`VarGuard::device_memory_mut`]), as on the CPU.
//!
//! The scalars (`alpha`, `lr`, `momentum`, Adam's powers and decays) are
//! kept in host memory (`host_memory`), read on the host and passed to
//! the kernel by value, with what the CPU computes once per call computed
//! the same way ([`AdamParams::alpha`], `1 - beta1`, `1 - beta2`). The
//! CUDA formulas are `math.rs`'s term for term; NVRTC may fuse a multiply
//! and an add (`--fmad=true`, its default), so results can differ from
//! the CPU's in the last bit.

use op_core::{Code, KernelContext, Result, kernel};
use op_cuda::backend::cuda_buffer;
use op_cuda::cudarc::driver::DeviceRepr;
use op_cuda::{DevicePtr, GpuContext, GpuKernelSource};

use super::math::{AdamParams, Real};
use super::ops::{ResourceApplyAdam, ResourceApplyGradientDescent, ResourceApplyMomentum};
use super::update::{adam_params, check_shapes, describe, lock_all, uninitialized, variables};
use crate::variable::VarGuard;

/// The CUDA C++ of the three updates, one entry per op and dtype.
pub static TRAINING: GpuKernelSource = GpuKernelSource {
    name: "training",
    source: r#"
template <typename T>
__device__ void apply_gradient_descent(T* var, const T* delta, T alpha, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)blockDim.x * gridDim.x) {
        var[i] = var[i] - delta[i] * alpha;
    }
}

template <typename T>
__device__ void apply_momentum(T* var, T* accum, const T* grad, T lr, T momentum, int nesterov,
                               unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)blockDim.x * gridDim.x) {
        const T g = grad[i];
        const T a = accum[i] * momentum + g;
        accum[i] = a;
        var[i] = nesterov ? var[i] - (g * lr + a * momentum * lr) : var[i] - a * lr;
    }
}

// AdamScalars in Rust (repr(C)).
template <typename T>
struct AdamScalars {
    T beta1;
    T alpha;
    T one_minus_beta1;
    T one_minus_beta2;
    T epsilon;
};

template <typename T>
__device__ void apply_adam(T* var, T* m, T* v, const T* grad, AdamScalars<T> p, int nesterov,
                           unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)blockDim.x * gridDim.x) {
        const T g = grad[i];
        const T mi = m[i] + (g - m[i]) * p.one_minus_beta1;
        const T vi = v[i] + (g * g - v[i]) * p.one_minus_beta2;
        m[i] = mi;
        v[i] = vi;
        const T step = nesterov ? (g * p.one_minus_beta1 + p.beta1 * mi) * p.alpha : mi * p.alpha;
        var[i] = var[i] - step / (sqrt(vi) + p.epsilon);
    }
}

#define TRAINING_ENTRIES(suffix, T) \
extern "C" __global__ void apply_gradient_descent_##suffix( \
    T* var, const T* delta, T alpha, unsigned long long n) { \
    apply_gradient_descent<T>(var, delta, alpha, n); \
} \
extern "C" __global__ void apply_momentum_##suffix( \
    T* var, T* accum, const T* grad, T lr, T momentum, int nesterov, unsigned long long n) { \
    apply_momentum<T>(var, accum, grad, lr, momentum, nesterov, n); \
} \
extern "C" __global__ void apply_adam_##suffix( \
    T* var, T* m, T* v, const T* grad, AdamScalars<T> p, int nesterov, unsigned long long n) { \
    apply_adam<T>(var, m, v, grad, p, nesterov, n); \
}
TRAINING_ENTRIES(f32, float)
TRAINING_ENTRIES(f64, double)
"#,
    entries: &[
        "apply_gradient_descent_f32",
        "apply_momentum_f32",
        "apply_adam_f32",
        "apply_gradient_descent_f64",
        "apply_momentum_f64",
        "apply_adam_f64",
    ],
};

op_core::inventory::submit! { op_cuda::kernel::RegisteredSource(&TRAINING) }

/// The element types the GPU updates: `float` and `double`.
pub trait GpuReal: Real + DeviceRepr {}
impl GpuReal for f32 {}
impl GpuReal for f64 {}

/// Adam's per-call scalars as the CUDA kernel takes them (`AdamScalars<T>`,
/// by value).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct AdamScalars<T> {
    beta1: T,
    alpha: T,
    one_minus_beta1: T,
    one_minus_beta2: T,
    epsilon: T,
}

// SAFETY: `AdamScalars<T>` is `repr(C)` with five fields of `T` (f32 or
// f64, themselves `DeviceRepr`), the layout of the CUDA struct
// `AdamScalars<T>` of five `T`s, which the kernel takes by value.
unsafe impl<T: GpuReal> DeviceRepr for AdamScalars<T> {}

impl<T: Real> AdamScalars<T> {
    /// What `math::adam` computes once per call, computed the same way.
    fn new(p: &AdamParams<T>) -> AdamScalars<T> {
        AdamScalars {
            beta1: p.beta1,
            alpha: p.alpha(),
            one_minus_beta1: T::ONE - p.beta1,
            one_minus_beta2: T::ONE - p.beta2,
            epsilon: p.epsilon,
        }
    }
}

/// The GPU addresses of the locked variables of inputs `inputs`, each
/// moved to this GPU and unshared first, after the checks of
/// [`check_shapes`].
fn device_slots<T: GpuReal, const N: usize>(
    ctx: &KernelContext<'_>,
    guards: &mut [VarGuard<'_>; N],
    inputs: [usize; N],
    grad_index: usize,
) -> Result<[DevicePtr<T>; N]> {
    check_shapes(ctx, guards, inputs, grad_index)?;
    let device = ctx.device();
    let mut ptrs = [DevicePtr::from_raw(0); N];
    for ((guard, &index), ptr) in guards.iter_mut().zip(&inputs).zip(&mut ptrs) {
        let in_context = |e: op_core::Error| {
            ctx.error(
                e.code(),
                format_args!("{}: {}", describe(ctx, index), e.message()),
            )
        };
        let memory = guard
            .device_memory_mut(device)
            .map_err(in_context)?
            .ok_or_else(|| uninitialized(ctx, index, ""))?;
        *ptr = cuda_buffer(memory).map_err(in_context)?.ptr::<T>();
    }
    Ok(ptrs)
}

/// The number of elements of input `index` (the gradient), as the
/// kernels' `n`.
fn elements(ctx: &KernelContext<'_>, index: usize) -> Result<u64> {
    let n = ctx.input(index)?.num_elements();
    u64::try_from(n).map_err(|_| ctx.error(Code::InvalidArgument, "too many elements"))
}

#[kernel(
    op = ResourceApplyGradientDescent,
    device = "gpu",
    types(float, double),
    host_memory("alpha")
)]
fn resource_apply_gradient_descent_gpu<T: GpuReal>(ctx: &mut GpuContext<'_, '_>) -> Result<()> {
    let alpha: T = ctx.input_scalar(1)?;
    let delta = ctx.input_ptr::<T>(2)?;
    let n = elements(ctx, 2)?;
    let function = ctx.function_for::<T>(&TRAINING, "apply_gradient_descent")?;
    let vars = variables::<T, 1>(ctx, [0])?;
    let mut guards = lock_all(&vars)?;
    let [var] = device_slots::<T, 1>(ctx, &mut guards, [0], 2)?;
    // SAFETY: apply_gradient_descent_<T>(T* var, const T* delta, T alpha,
    // u64 n) reads and writes var and reads delta below n; both hold n
    // elements of T (check_shapes: the variable has the gradient's
    // shape), on this GPU, and stay alive (the variable's lock, the
    // context's input) until the launch is queued on the stream that
    // orders every later use.
    unsafe { ctx.launch_elementwise(&function, n as usize, &(var, delta, alpha, n)) }
}

#[kernel(
    op = ResourceApplyMomentum,
    device = "gpu",
    types(float, double),
    host_memory("lr", "momentum")
)]
fn resource_apply_momentum_gpu<T: GpuReal>(
    ctx: &mut GpuContext<'_, '_>,
    attrs: &ResourceApplyMomentum,
) -> Result<()> {
    let lr: T = ctx.input_scalar(2)?;
    let momentum: T = ctx.input_scalar(4)?;
    let grad = ctx.input_ptr::<T>(3)?;
    let n = elements(ctx, 3)?;
    let function = ctx.function_for::<T>(&TRAINING, "apply_momentum")?;
    let vars = variables::<T, 2>(ctx, [0, 1])?;
    let mut guards = lock_all(&vars)?;
    let [var, accum] = device_slots::<T, 2>(ctx, &mut guards, [0, 1], 3)?;
    let nesterov = i32::from(attrs.use_nesterov);
    // SAFETY: apply_momentum_<T>(T* var, T* accum, const T* grad, T lr,
    // T momentum, int nesterov, u64 n) touches the three buffers below n;
    // each holds n elements of T on this GPU (check_shapes), distinct
    // (variables: no variable twice), alive until the launch is queued.
    unsafe {
        ctx.launch_elementwise(
            &function,
            n as usize,
            &(var, accum, grad, lr, momentum, nesterov, n),
        )
    }
}

#[kernel(
    op = ResourceApplyAdam,
    device = "gpu",
    types(float, double),
    host_memory("beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon")
)]
fn resource_apply_adam_gpu<T: GpuReal>(
    ctx: &mut GpuContext<'_, '_>,
    attrs: &ResourceApplyAdam,
) -> Result<()> {
    let params = adam_params::<T>(ctx, attrs)?;
    let scalars = AdamScalars::new(&params);
    let grad = ctx.input_ptr::<T>(9)?;
    let n = elements(ctx, 9)?;
    let function = ctx.function_for::<T>(&TRAINING, "apply_adam")?;
    let vars = variables::<T, 3>(ctx, [0, 1, 2])?;
    let mut guards = lock_all(&vars)?;
    let [var, m, v] = device_slots::<T, 3>(ctx, &mut guards, [0, 1, 2], 9)?;
    let nesterov = i32::from(params.nesterov);
    // SAFETY: apply_adam_<T>(T* var, T* m, T* v, const T* grad,
    // AdamScalars<T> p, int nesterov, u64 n) touches the four buffers
    // below n; each holds n elements of T on this GPU (check_shapes),
    // the three variables distinct (variables), alive until the launch
    // is queued; AdamScalars<T> has the CUDA struct's layout.
    unsafe {
        ctx.launch_elementwise(
            &function,
            n as usize,
            &(var, m, v, grad, scalars, nesterov, n),
        )
    }
}
