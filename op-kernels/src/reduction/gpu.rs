//! The GPU kernels of `Sum` (`float`, `double`, `int32`) and `Mean`
//! (`float`, `double`), each for both `Tidx` types, with the axes
//! (`reduction_indices`) in host memory: they are read on the host to plan
//! the passes, with the CPU kernels' [`ReductionPlan`] (one checking of the
//! axes, one merging of runs for every device).
//!
//! Each pass of the plan reads its input as `[outer, reduced, inner]` and
//! runs one kernel, `reduce_sum`, over `[outer, splits, inner]` outputs:
//! output `(o, s, i)` sums rows `s * chunk .. (s + 1) * chunk` of the
//! reduced axis. With `splits == 1` that is the pass itself; when there
//! are too few outputs to fill the GPU (a sum of everything), the pass
//! runs as two launches of the same kernel, the first into `splits`
//! partial sums per output, the second summing them
//! ([`split_reduced_axis`]). A contiguous reduced axis (`inner == 1`) is
//! summed by a block per output (coalesced reads, a warp-shuffle tree);
//! a strided one by a thread per output, adjacent threads reading
//! adjacent columns. `Mean` divides the last pass's sums by the count of
//! reduced elements, as the CPU's `MeanReducer` does (NaN for none).
//! Integer sums wrap, accumulated as unsigned.

use op_core::{Code, Element, Result, Tensor, kernel};
use op_cuda::cudarc::driver::LaunchConfig;
use op_cuda::launch::{BLOCK_SIZE, elementwise_config};
use op_cuda::{DevicePtr, GpuContext, GpuKernelSource};

use super::axes::{Pass, ReductionPlan, plan_reduction};
use super::ops::{Mean, Sum};

/// The CUDA C++ of the sums: one template, one entry per dtype.
pub static REDUCE: GpuKernelSource = GpuKernelSource {
    name: "reduce_sum",
    source: r#"
template <typename T> struct Acc { typedef T type; };
// Integer sums wrap (unsigned overflow is defined; signed is not).
template <> struct Acc<int> { typedef unsigned int type; };

// Sums x[o, s * chunk .. min((s + 1) * chunk, reduced), i] into
// y[o, s, i] for every output (o, s, i) of [outer, splits, inner],
// divided by `divisor` (a mean's count on its last pass, else 1: exact).
template <typename T>
__device__ void reduce_sum(const T* __restrict__ x, T* __restrict__ y,
                           unsigned long long outer, unsigned long long reduced,
                           unsigned long long inner, unsigned long long chunk,
                           unsigned long long splits, T divisor) {
    typedef typename Acc<T>::type A;
    const unsigned long long outputs = outer * splits * inner;
    if (inner == 1) {
        // A block per output: the threads stride along a contiguous run.
        __shared__ A warp_sums[32];
        for (unsigned long long out = blockIdx.x; out < outputs; out += gridDim.x) {
            const unsigned long long o = out / splits, s = out % splits;
            const unsigned long long start = s * chunk;
            const unsigned long long end = min(start + chunk, reduced);
            const T* row = x + o * reduced;
            A a0 = A(0), a1 = A(0), a2 = A(0), a3 = A(0);
            const unsigned long long step = blockDim.x;
            unsigned long long r = start + threadIdx.x;
            for (; r + 3 * step < end; r += 4 * step) {
                a0 += A(row[r]);
                a1 += A(row[r + step]);
                a2 += A(row[r + 2 * step]);
                a3 += A(row[r + 3 * step]);
            }
            for (; r < end; r += step) {
                a0 += A(row[r]);
            }
            A acc = (a0 + a1) + (a2 + a3);
            for (int offset = 16; offset > 0; offset /= 2) {
                acc += __shfl_down_sync(0xffffffffu, acc, offset);
            }
            const unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
            if (lane == 0) {
                warp_sums[warp] = acc;
            }
            __syncthreads();
            if (warp == 0) {
                const unsigned int warps = (blockDim.x + 31) / 32;
                acc = lane < warps ? warp_sums[lane] : A(0);
                for (int offset = 16; offset > 0; offset /= 2) {
                    acc += __shfl_down_sync(0xffffffffu, acc, offset);
                }
                if (lane == 0) {
                    const T sum = T(acc);
                    y[out] = sum / divisor;
                }
            }
            // warp_sums is reused by the next output.
            __syncthreads();
        }
        return;
    }
    // A thread per output: adjacent threads read adjacent columns.
    for (unsigned long long out = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
         out < outputs; out += (unsigned long long)blockDim.x * gridDim.x) {
        const unsigned long long i = out % inner;
        const unsigned long long os = out / inner;
        const unsigned long long o = os / splits, s = os % splits;
        const unsigned long long start = s * chunk;
        const unsigned long long end = min(start + chunk, reduced);
        const T* column = x + o * reduced * inner + i;
        A acc = A(0);
        for (unsigned long long r = start; r < end; ++r) {
            acc += A(column[r * inner]);
        }
        const T sum = T(acc);
        y[out] = sum / divisor;
    }
}

#define REDUCE_SUM(suffix, T) \
extern "C" __global__ void reduce_sum_##suffix( \
    const T* x, T* y, unsigned long long outer, unsigned long long reduced, \
    unsigned long long inner, unsigned long long chunk, unsigned long long splits, \
    T divisor) { \
    reduce_sum<T>(x, y, outer, reduced, inner, chunk, splits, divisor); \
}
REDUCE_SUM(f32, float)
REDUCE_SUM(f64, double)
REDUCE_SUM(i32, int)
"#,
    entries: &["reduce_sum_f32", "reduce_sum_f64", "reduce_sum_i32"],
};

op_core::inventory::submit! { op_cuda::kernel::RegisteredSource(&REDUCE) }

/// The element types the GPU sums: a number the kernel can divide by
/// its count (for `Mean`).
pub trait GpuSum: Element + Copy + op_cuda::cudarc::driver::DeviceRepr {
    /// `count` as `Self` (the divisor of a mean).
    fn from_count(count: usize) -> Self;
}

impl GpuSum for f32 {
    fn from_count(count: usize) -> f32 {
        count as f32
    }
}

impl GpuSum for f64 {
    fn from_count(count: usize) -> f64 {
        count as f64
    }
}

impl GpuSum for i32 {
    fn from_count(count: usize) -> i32 {
        count as i32
    }
}

/// Outputs past which a contiguous pass (`inner == 1`, a block per
/// output) fills the GPU without splitting its rows.
const BLOCK_OUTPUTS: usize = 2048;

/// Outputs past which a strided pass (a thread per output) fills the GPU
/// without splitting its columns.
const THREAD_OUTPUTS: usize = 1 << 16;

/// The least elements a block (contiguous) or a thread (strided) sums in
/// a split pass, so that a split is worth its second launch.
const BLOCK_CHUNK: usize = 4096;
const THREAD_CHUNK: usize = 64;

/// How many parts `pass`'s reduced axis is split into (1: not split):
/// enough that the first launch has [`BLOCK_OUTPUTS`] blocks or
/// [`THREAD_OUTPUTS`] threads of work, none smaller than a chunk.
///
/// A sum of 1e8 contiguous elements is 2048 partial sums of 48,829
/// elements each, then one sum of those.
pub(crate) fn split_reduced_axis(pass: Pass) -> usize {
    let (wanted, least_chunk) = if pass.inner == 1 {
        (BLOCK_OUTPUTS, BLOCK_CHUNK)
    } else {
        (THREAD_OUTPUTS, THREAD_CHUNK)
    };
    let outputs = pass.outputs().max(1);
    if outputs >= wanted || pass.reduced <= least_chunk {
        return 1;
    }
    wanted
        .div_ceil(outputs)
        .min(pass.reduced.div_ceil(least_chunk))
        .max(1)
}

/// Sums `input` over `plan` into `output` (both in GPU memory; `output`
/// holds the plan's output), dividing the last pass by `divisor` if given.
fn sum_on_gpu<T: GpuSum>(
    ctx: &mut GpuContext<'_, '_>,
    input: DevicePtr<T>,
    plan: &ReductionPlan,
    output: DevicePtr<T>,
    divisor: Option<T>,
) -> Result<()> {
    let function = ctx.function_for::<T>(&REDUCE, "reduce_sum")?;
    // Temporaries live until the end of the call, after the launches that
    // use them are queued (the stream orders their reuse).
    let mut temporaries: Vec<Tensor> = Vec::new();
    let mut source = input;
    let last = plan.passes.len() - 1;
    for (index, &pass) in plan.passes.iter().enumerate() {
        let target = if index == last {
            output
        } else {
            temporary(ctx, &mut temporaries, pass.outputs())?
        };
        let splits = split_reduced_axis(pass);
        let chunk = pass.reduced.div_ceil(splits).max(1);
        let finish = if index == last { divisor } else { None };
        if splits == 1 {
            launch(ctx, &function, source, target, pass, chunk, 1, finish)?;
        } else {
            let partial = temporary(ctx, &mut temporaries, pass.outputs() * splits)?;
            launch(ctx, &function, source, partial, pass, chunk, splits, None)?;
            let second = Pass {
                outer: pass.outer,
                reduced: splits,
                inner: pass.inner,
            };
            launch(ctx, &function, partial, target, second, splits, 1, finish)?;
        }
        source = target;
    }
    Ok(())
}

/// A temporary GPU buffer of `len` elements of `T`, kept in `keep`.
fn temporary<T: GpuSum>(
    ctx: &mut GpuContext<'_, '_>,
    keep: &mut Vec<Tensor>,
    len: usize,
) -> Result<DevicePtr<T>> {
    let tensor = ctx.allocate_temp(T::DTYPE, &[len])?;
    let memory = tensor
        .device_memory()
        .ok_or_else(|| ctx.error(Code::Internal, "a GPU kernel's temporary is on the host"))?;
    let ptr = op_cuda::backend::cuda_buffer(memory)?.ptr::<T>();
    keep.push(tensor);
    Ok(ptr)
}

/// One launch of `reduce_sum` over `pass` split in `splits` chunks of
/// `chunk` rows.
#[allow(clippy::too_many_arguments)]
fn launch<T: GpuSum>(
    ctx: &GpuContext<'_, '_>,
    function: &op_cuda::cudarc::driver::CudaFunction,
    x: DevicePtr<T>,
    y: DevicePtr<T>,
    pass: Pass,
    chunk: usize,
    splits: usize,
    divisor: Option<T>,
) -> Result<()> {
    let outputs = pass.outer * splits * pass.inner;
    let gpu = ctx.gpu();
    let config = if pass.inner == 1 {
        LaunchConfig {
            grid_dim: (
                u32::try_from(outputs)
                    .unwrap_or(u32::MAX)
                    .min(gpu.sm_count().max(1) * 32),
                1,
                1,
            ),
            block_dim: (BLOCK_SIZE, 1, 1),
            shared_mem_bytes: 0,
        }
    } else {
        elementwise_config(outputs, gpu.sm_count())
    };
    let divisor = divisor.unwrap_or(T::from_count(1));
    let args = (
        x,
        y,
        pass.outer as u64,
        pass.reduced as u64,
        pass.inner as u64,
        chunk as u64,
        splits as u64,
        divisor,
    );
    // SAFETY: reduce_sum_<T>(const T*, T*, u64 outer, u64 reduced, u64
    // inner, u64 chunk, u64 splits, T divisor) reads x below outer *
    // reduced * inner (the pass's input, which the previous pass or the
    // input tensor holds) and writes y below outer * splits * inner (a
    // buffer of that length); its grid-stride loops stay within those
    // bounds for any grid.
    unsafe { gpu.launch(function, config, &args) }.map_err(|e| ctx.error(e.code(), e.message()))
}

/// `Sum` or `Mean` (`mean`) of input 0 over the axes in input 1 (on the
/// host) into output 0, on the GPU.
fn reduce<T: GpuSum>(ctx: &mut GpuContext<'_, '_>, keep_dims: bool, mean: bool) -> Result<()> {
    let Some((_, plan)) = plan_reduction(ctx.kernel_context(), keep_dims)? else {
        return Ok(());
    };
    let x = ctx.input_ptr::<T>(0)?;
    let y = ctx.allocate_output_for_writing::<T>(0, &plan.output_dims)?;
    let divisor = mean.then(|| T::from_count(plan.reduced_count));
    sum_on_gpu(ctx, x, &plan, y, divisor)
}

#[kernel(op = Sum, device = "gpu", types(T = [f32, f64, i32]), host_memory("reduction_indices"))]
fn sum_gpu<T: GpuSum>(ctx: &mut GpuContext<'_, '_>, attrs: &Sum) -> Result<()> {
    reduce::<T>(ctx, attrs.keep_dims, false)
}

#[kernel(op = Mean, device = "gpu", types(T = [f32, f64]), host_memory("reduction_indices"))]
fn mean_gpu<T: GpuSum>(ctx: &mut GpuContext<'_, '_>, attrs: &Mean) -> Result<()> {
    reduce::<T>(ctx, attrs.keep_dims, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pass(outer: usize, reduced: usize, inner: usize) -> Pass {
        Pass {
            outer,
            reduced,
            inner,
        }
    }

    #[test]
    fn a_full_reduction_is_split_in_partial_sums() {
        assert_eq!(split_reduced_axis(pass(1, 100_000_000, 1)), 2048);
        assert_eq!(split_reduced_axis(pass(1, 100_000, 1)), 25);
        assert_eq!(split_reduced_axis(pass(1, 40_000, 16)), 625);
    }

    #[test]
    fn passes_with_enough_outputs_or_short_rows_are_not_split() {
        assert_eq!(split_reduced_axis(pass(4096, 1_000_000, 1)), 1);
        assert_eq!(split_reduced_axis(pass(1, 4096, 1)), 1);
        assert_eq!(split_reduced_axis(pass(256, 100_000, 256)), 1);
        assert_eq!(split_reduced_axis(pass(1, 64, 8)), 1);
        assert_eq!(split_reduced_axis(pass(1, 0, 1)), 1);
    }
}
