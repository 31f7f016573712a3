//! GPU throughput on 1e8 float32 (bytes read plus written per second):
//! a device-to-device copy (the baseline a memory-bound kernel aims at),
//! a launched x2 kernel (float4 loads and stores), and a one-element
//! launch queued back to back (launch overhead, no synchronize per op).
//! Without a GPU it prints why and measures nothing.

use std::sync::{Arc, OnceLock};

use divan::Bencher;
use divan::counter::BytesCount;
use op_cuda::{CudaBuffer, GpuDevice};

const N: usize = 100_000_000;

use op_cuda::testing::TWICE;

/// GPU 0 and two buffers of N floats, made once.
fn setup() -> Option<&'static (Arc<GpuDevice>, CudaBuffer, CudaBuffer)> {
    static SETUP: OnceLock<Option<(Arc<GpuDevice>, CudaBuffer, CudaBuffer)>> = OnceLock::new();
    SETUP
        .get_or_init(|| {
            let gpu = GpuDevice::get(0).ok()?;
            let x = gpu.allocate(N * 4, true).ok()?;
            let y = gpu.allocate(N * 4, true).ok()?;
            Some((gpu, x, y))
        })
        .as_ref()
}

fn main() {
    if let Err(e) = GpuDevice::get(0) {
        println!("skipped: {}", e.message());
        return;
    }
    divan::main();
}

#[divan::bench(sample_count = 20)]
fn copy_dtod(bencher: Bencher) {
    let Some((gpu, x, y)) = setup() else { return };
    bencher.counter(BytesCount::new(2 * N * 4)).bench(|| {
        // SAFETY: both buffers hold N floats on this GPU; the copy is on
        // its stream.
        unsafe {
            cudarc::driver::result::memcpy_dtod_async(
                y.raw_ptr(),
                x.raw_ptr(),
                N * 4,
                gpu.stream().cu_stream(),
            )
        }
        .unwrap();
        gpu.synchronize().unwrap();
    });
}

#[divan::bench(sample_count = 20)]
fn twice_float4(bencher: Bencher) {
    let Some((gpu, x, y)) = setup() else { return };
    let f = gpu.function(&TWICE, "twice4_f32").unwrap();
    assert!(
        x.ptr::<f32>().is_aligned_to(16) && y.ptr::<f32>().is_aligned_to(16) && N.is_multiple_of(4)
    );
    let n4 = N / 4;
    bencher.counter(BytesCount::new(2 * N * 4)).bench(|| {
        // SAFETY: twice4_f32 reads and writes n4 float4s, which both
        // 16-byte aligned buffers hold.
        unsafe { gpu.launch_elementwise(&f, n4, &(x.ptr::<f32>(), y.ptr::<f32>(), n4 as u64)) }
            .unwrap();
        gpu.synchronize().unwrap();
    });
}

#[divan::bench(sample_count = 20)]
fn twice_scalar(bencher: Bencher) {
    let Some((gpu, x, y)) = setup() else { return };
    let f = gpu.function(&TWICE, "twice_f32").unwrap();
    bencher.counter(BytesCount::new(2 * N * 4)).bench(|| {
        // SAFETY: twice_f32 reads and writes N floats, which both buffers hold.
        unsafe { gpu.launch_elementwise(&f, N, &(x.ptr::<f32>(), y.ptr::<f32>(), N as u64)) }
            .unwrap();
        gpu.synchronize().unwrap();
    });
}

/// Launch overhead: 1000 one-element launches queued back to back, one
/// synchronize at the end (divan reports per launch).
#[divan::bench(sample_count = 20)]
fn one_element_pipelined(bencher: Bencher) {
    let Some((gpu, x, y)) = setup() else { return };
    let f = gpu.function(&TWICE, "twice_f32").unwrap();
    const LAUNCHES: usize = 1000;
    bencher
        .counter(divan::counter::ItemsCount::new(LAUNCHES))
        .bench(|| {
            for _ in 0..LAUNCHES {
                // SAFETY: one float read and written; both buffers hold N.
                unsafe { gpu.launch_elementwise(&f, 1, &(x.ptr::<f32>(), y.ptr::<f32>(), 1u64)) }
                    .unwrap();
            }
            gpu.synchronize().unwrap();
        });
}
