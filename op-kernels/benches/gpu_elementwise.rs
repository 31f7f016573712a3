//! GPU elementwise kernels through the runtime, on 1e8 float32 (bytes
//! read plus written per second), against a device-to-device copy of the
//! same bytes (the bound a memory-bound kernel aims at: `Example` should
//! reach 0.95x of it), and the cost of one small op (target: 5 µs or
//! less).
//!
//! Every variant queues [`OPS`] operations back to back, as a program
//! does (no synchronize between them), and synchronizes once at the end
//! of each iteration, so the figures are throughput, not latency:
//!
//! - `copy_dtod`: `cuMemcpyDtoDAsync` of 1e8 floats into a preallocated
//!   buffer.
//! - `example`: `Example` prepared for `float` on `Runtime::gpu(0)`, on an
//!   input already on the GPU that the benchmark keeps (so each call
//!   takes a new output from the caching allocator, unzeroed).
//! - `add_v2`: `AddV2` of two such inputs (reads two, writes one: its
//!   byte count is 3 * 4e8).
//! - `add_v2_one_element`: `AddV2` of two one-element tensors, 1000 per
//!   iteration: the runtime's and the launch's overhead per op.
//!
//! Without a GPU it prints why and measures nothing. Run with:
//!
//! ```text
//! cargo bench -p op-kernels --bench gpu_elementwise
//! ```

use std::sync::{Arc, OnceLock};

use divan::Bencher;
use divan::counter::{BytesCount, ItemsCount};
use op_core::{DType, Device, PreparedOp, Runtime, Tensor};
use op_kernels::gpu::cuda::{CudaBuffer, GpuDevice, cudarc};

/// Elements per large tensor.
const N: usize = 100_000_000;

/// Large operations queued per iteration before the synchronize.
const OPS: usize = 10;

/// Small operations queued per iteration.
const SMALL_OPS: usize = 1000;

struct Setup {
    gpu: Arc<GpuDevice>,
    runtime: Runtime,
    /// Two inputs of N floats on the GPU.
    x: Tensor,
    y: Tensor,
    /// Two one-element inputs on the GPU.
    one: Tensor,
    /// Raw buffers for the copy.
    from: CudaBuffer,
    to: CudaBuffer,
}

fn setup() -> Option<&'static Setup> {
    static SETUP: OnceLock<Option<Setup>> = OnceLock::new();
    SETUP
        .get_or_init(|| {
            let gpu = GpuDevice::get(0).ok()?;
            let runtime = Runtime::gpu(0).ok()?.strict_placement(true);
            let host = Tensor::from_vec([N], (0..N).map(|i| (i % 1024) as f32).collect()).ok()?;
            let x = host.to_device(Device::gpu(0)).ok()?;
            let y = host.to_device(Device::gpu(0)).ok()?;
            drop(host);
            let one = Tensor::from_vec([1], vec![1.5f32])
                .ok()?
                .to_device(Device::gpu(0))
                .ok()?;
            let from = gpu.allocate(N * 4, true).ok()?;
            let to = gpu.allocate(N * 4, true).ok()?;
            gpu.synchronize().ok()?;
            Some(Setup {
                gpu,
                runtime,
                x,
                y,
                one,
                from,
                to,
            })
        })
        .as_ref()
}

fn prepared(setup: &Setup, op: &str, inputs: usize) -> Arc<PreparedOp> {
    let types = vec![DType::F32.into(); inputs];
    setup
        .runtime
        .prepare(op, &types, &[])
        .expect("the op has a GPU kernel for float")
}

fn main() {
    op_kernels::link();
    if let Err(e) = GpuDevice::get(0) {
        println!("skipped: {}", e.message());
        return;
    }
    divan::main();
}

#[divan::bench(sample_count = 20)]
fn copy_dtod(bencher: Bencher) {
    let Some(s) = setup() else { return };
    bencher.counter(BytesCount::new(OPS * 2 * N * 4)).bench(|| {
        for _ in 0..OPS {
            // SAFETY: both buffers hold N floats on this GPU; the copy is
            // queued on its stream.
            unsafe {
                cudarc::driver::result::memcpy_dtod_async(
                    s.to.raw_ptr(),
                    s.from.raw_ptr(),
                    N * 4,
                    s.gpu.stream().cu_stream(),
                )
            }
            .unwrap();
        }
        s.gpu.synchronize().unwrap();
    });
}

#[divan::bench(sample_count = 20)]
fn example(bencher: Bencher) {
    let Some(s) = setup() else { return };
    let op = prepared(s, "Example", 1);
    bencher.counter(BytesCount::new(OPS * 2 * N * 4)).bench(|| {
        for _ in 0..OPS {
            drop(op.run(vec![s.x.clone()]).unwrap());
        }
        s.gpu.synchronize().unwrap();
    });
}

#[divan::bench(sample_count = 20)]
fn add_v2(bencher: Bencher) {
    let Some(s) = setup() else { return };
    let op = prepared(s, "AddV2", 2);
    bencher.counter(BytesCount::new(OPS * 3 * N * 4)).bench(|| {
        for _ in 0..OPS {
            drop(op.run(vec![s.x.clone(), s.y.clone()]).unwrap());
        }
        s.gpu.synchronize().unwrap();
    });
}

#[divan::bench(sample_count = 20)]
fn add_v2_one_element(bencher: Bencher) {
    let Some(s) = setup() else { return };
    let op = prepared(s, "AddV2", 2);
    bencher.counter(ItemsCount::new(SMALL_OPS)).bench(|| {
        for _ in 0..SMALL_OPS {
            drop(op.run(vec![s.one.clone(), s.one.clone()]).unwrap());
        }
        s.gpu.synchronize().unwrap();
    });
}
