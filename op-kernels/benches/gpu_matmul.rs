//! The GPU kernels against what they are built on, in one run:
//!
//! - `MatMul` of two 4096x4096 float32 matrices through the runtime (an
//!   `OpCall` on `Runtime::gpu(0)`: dispatch, output allocation, cuBLAS)
//!   against `GpuDevice::gemm` called directly into a buffer made once.
//!   The goal: the runtime within 0.9x of cuBLAS.
//! - `Sum` of 1e8 float32 to a scalar through the runtime against a
//!   device-to-device copy of the same 1e8 floats (the bandwidth a
//!   memory-bound kernel aims at: the sum reads 400 MB, the copy reads
//!   and writes 400 MB each).
//!
//! Before divan's table, `main` prints the ratios from a few timed runs of
//! each. Without a GPU it prints why and measures nothing:
//! `cargo bench -p op-kernels --bench gpu_matmul`.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use divan::Bencher;
use divan::counter::BytesCount;
use op_core::{Device, OpCall, Runtime, Tensor};
use op_cuda::blas::GemmShape;
use op_cuda::{CudaBuffer, GpuDevice};

/// The matrices' side.
const SIDE: usize = 4096;
/// The elements summed.
const N: usize = 100_000_000;

struct Setup {
    gpu: Arc<GpuDevice>,
    runtime: Runtime,
    a: Tensor,
    b: Tensor,
    c: CudaBuffer,
    x: Tensor,
    axis: Tensor,
    copy: CudaBuffer,
}

/// GPU 0, its runtime, and the operands in GPU memory, made once.
fn setup() -> &'static Setup {
    static SETUP: OnceLock<Setup> = OnceLock::new();
    SETUP.get_or_init(|| {
        op_kernels::link();
        let gpu = GpuDevice::get(0).unwrap();
        let runtime = Runtime::gpu(0).unwrap().strict_placement(true);
        let matrix = |seed: f32| {
            let values = (0..SIDE * SIDE)
                .map(|i| ((i % 97) as f32 * 0.01 + seed).sin())
                .collect();
            Tensor::from_vec([SIDE, SIDE], values)
                .unwrap()
                .to_device(Device::gpu(0))
                .unwrap()
        };
        let x = Tensor::from_vec([N], vec![1.0f32; N])
            .unwrap()
            .to_device(Device::gpu(0))
            .unwrap();
        Setup {
            a: matrix(0.0),
            b: matrix(1.0),
            c: gpu.allocate(SIDE * SIDE * 4, false).unwrap(),
            copy: gpu.allocate(N * 4, false).unwrap(),
            x,
            axis: Tensor::from_vec([1], vec![0i32]).unwrap(),
            gpu,
            runtime,
        }
    })
}

fn matmul_runtime(s: &Setup) {
    let product = OpCall::new("MatMul")
        .input(&s.a)
        .input(&s.b)
        .run_on(&s.runtime)
        .unwrap();
    assert_eq!(product[0].device(), Device::gpu(0));
    s.gpu.synchronize().unwrap();
}

fn matmul_cublas(s: &Setup) {
    let ptr = |t: &Tensor| {
        op_cuda::backend::cuda_buffer(t.device_memory().unwrap())
            .unwrap()
            .ptr::<f32>()
    };
    let shape = GemmShape {
        m: SIDE,
        n: SIDE,
        k: SIDE,
        transpose_a: false,
        transpose_b: false,
    };
    // SAFETY: a and b hold SIDE x SIDE floats on this GPU, c as many, and
    // c overlaps neither.
    unsafe {
        s.gpu
            .gemm(shape, 1.0f32, ptr(&s.a), ptr(&s.b), 0.0, s.c.ptr::<f32>())
    }
    .unwrap();
    s.gpu.synchronize().unwrap();
}

fn sum_runtime(s: &Setup) {
    let sum = OpCall::new("Sum")
        .input(&s.x)
        .input(&s.axis)
        .run_on(&s.runtime)
        .unwrap();
    assert_eq!(sum[0].device(), Device::gpu(0));
    s.gpu.synchronize().unwrap();
}

fn copy_dtod(s: &Setup) {
    let x = op_cuda::backend::cuda_buffer(s.x.device_memory().unwrap()).unwrap();
    // SAFETY: both buffers hold N floats on this GPU; the copy is on its
    // stream.
    unsafe {
        op_cuda::cudarc::driver::result::memcpy_dtod_async(
            s.copy.raw_ptr(),
            x.raw_ptr(),
            N * 4,
            s.gpu.stream().cu_stream(),
        )
    }
    .unwrap();
    s.gpu.synchronize().unwrap();
}

/// The median of 11 timed runs of `f`, after 2 warm-ups, in seconds.
fn median(f: impl Fn()) -> f64 {
    f();
    f();
    let mut times: Vec<f64> = (0..11)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[5]
}

fn main() {
    if let Err(e) = GpuDevice::get(0) {
        println!("skipped: {}", e.message());
        return;
    }
    let s = setup();
    let (runtime, cublas) = (median(|| matmul_runtime(s)), median(|| matmul_cublas(s)));
    let flops = 2.0 * (SIDE as f64).powi(3);
    println!(
        "MatMul 4096x4096 f32: runtime {:.3} ms ({:.1} TFLOP/s), cuBLAS {:.3} ms ({:.1} TFLOP/s): runtime at {:.2}x of cuBLAS (goal: 0.9x or more)",
        runtime * 1e3,
        flops / runtime / 1e12,
        cublas * 1e3,
        flops / cublas / 1e12,
        cublas / runtime
    );
    let (sum, copy) = (median(|| sum_runtime(s)), median(|| copy_dtod(s)));
    let bytes = (N * 4) as f64;
    println!(
        "Sum of 1e8 f32: {:.3} ms ({:.0} GB/s read); dtod copy {:.3} ms ({:.0} GB/s read + written)",
        sum * 1e3,
        bytes / sum / 1e9,
        copy * 1e3,
        2.0 * bytes / copy / 1e9
    );
    divan::main();
}

#[divan::bench(sample_count = 20)]
fn matmul_4096_through_the_runtime(bencher: Bencher) {
    let s = setup();
    bencher.bench(|| matmul_runtime(s));
}

#[divan::bench(sample_count = 20)]
fn matmul_4096_cublas_directly(bencher: Bencher) {
    let s = setup();
    bencher.bench(|| matmul_cublas(s));
}

#[divan::bench(sample_count = 20)]
fn sum_1e8_through_the_runtime(bencher: Bencher) {
    let s = setup();
    bencher
        .counter(BytesCount::new(N * 4))
        .bench(|| sum_runtime(s));
}

#[divan::bench(sample_count = 20)]
fn copy_1e8_dtod(bencher: Bencher) {
    let s = setup();
    bencher
        .counter(BytesCount::new(2 * N * 4))
        .bench(|| copy_dtod(s));
}
