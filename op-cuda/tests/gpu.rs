//! What needs a GPU: without one, each test shows as `ignored (needs a
//! GPU; ...)` (see `op_cuda::testing::harness`).

mod common;

use op_core::{Device, Element, Tensor};
use op_cuda::blas::GemmShape;
use op_cuda::{CudaBuffer, DevicePtr};

use common::TWICE;
use op_cuda::testing::gpu;

fn round_trip<T: Element + Copy>(values: Vec<T>) {
    let host = Tensor::from_vec([values.len()], values.clone()).unwrap();
    let on_gpu = host.to_device(Device::gpu(0)).unwrap();
    assert!(!on_gpu.is_on_host());
    assert_eq!(on_gpu.device(), Device::gpu(0));
    let back = on_gpu.to_host().unwrap();
    assert_eq!(
        back.as_slice::<T>().unwrap(),
        values.as_slice(),
        "{:?}",
        T::DTYPE
    );
}

fn every_plain_dtype_goes_to_the_gpu_and_back() {
    round_trip((0..1000).map(|i| i as f32 * 0.5).collect());
    round_trip((0..1000).map(|i| i as f64 * -0.25).collect());
    round_trip(
        (0..1000)
            .map(|i| op_core::f16::from_f32(i as f32))
            .collect(),
    );
    round_trip(
        (0..1000)
            .map(|i| op_core::bf16::from_f32(i as f32))
            .collect(),
    );
    round_trip((0..1000).map(|i| i as i8).collect());
    round_trip((0..1000).map(|i| i as i16).collect());
    round_trip((0..1000i32).map(|i| i - 500).collect());
    round_trip((0..1000).map(|i| i as i64 * 1_000_000_007).collect());
    round_trip((0..1000).map(|i| i as u8).collect());
    round_trip((0..1000).map(|i| i as u16).collect());
    round_trip((0..1000).map(|i| i as u32).collect());
    round_trip((0..1000).map(|i| i as u64).collect());
    round_trip(Vec::<f32>::new());
}

fn steady_state_allocations_come_from_the_cache() {
    let gpu = gpu();
    // Warm up: one block of each size.
    for bytes in [4, 1000, 1 << 20, 3 << 20] {
        drop(gpu.allocate(bytes, false).unwrap());
    }
    let before = gpu.allocator_stats();
    for _ in 0..100 {
        for bytes in [4, 1000, 1 << 20, 3 << 20] {
            let buffer = gpu.allocate(bytes, true).unwrap();
            drop(buffer);
        }
    }
    let after = gpu.allocator_stats();
    assert_eq!(
        after.driver_allocs, before.driver_allocs,
        "{before:?} -> {after:?}"
    );
    assert!(after.hits >= before.hits + 400, "{before:?} -> {after:?}");

    gpu.empty_cache().unwrap();
    assert_eq!(gpu.allocator_stats().bytes_cached, 0);
}

fn zeroed_allocations_are_zero() {
    let gpu = gpu();
    // Dirty a block, return it, and take it back zeroed.
    let dirty = CudaBuffer::from_host(&gpu, &[0xAB; 4096]).unwrap();
    drop(dirty);
    let zeroed = gpu.allocate(4096, true).unwrap();
    let mut host = vec![1u8; 4096];
    op_core::device::DeviceMemory::copy_to_host(&zeroed, &mut host).unwrap();
    assert!(host.iter().all(|&b| b == 0));
}

fn a_launched_kernel_doubles() {
    let gpu = gpu();
    for n in [0usize, 1, 1000, 1 << 20] {
        let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let input = CudaBuffer::from_host(&gpu, f32_bytes(&x)).unwrap();
        let output = gpu.allocate(n * 4, false).unwrap();
        let twice = gpu.function(&TWICE, "twice_f32").unwrap();
        let (xp, yp): (DevicePtr<f32>, DevicePtr<f32>) = (input.ptr(), output.ptr());
        // SAFETY: twice_f32(const float*, float*, unsigned long long) reads
        // and writes n floats, which both buffers hold.
        unsafe { gpu.launch_elementwise(&twice, n, &(xp, yp, n as u64)) }.unwrap();
        let mut y = vec![0u8; n * 4];
        op_core::device::DeviceMemory::copy_to_host(&output, &mut y).unwrap();
        let y: Vec<f32> = y
            .chunks_exact(4)
            .map(|c| f32::from_ne_bytes(c.try_into().unwrap()))
            .collect();
        assert!(y.iter().zip(&x).all(|(y, x)| *y == 2.0 * x), "n = {n}");
    }
}

/// A host runtime's stream and memory (a second stream of our context, as
/// TensorFlow's compute stream is of the same primary context): its input
/// written on its stream, lent to our kernel, the result copied into its
/// buffer, and read after its stream, never ours, is synchronized.
fn a_kernel_runs_between_a_foreign_streams_work_on_its_memory() {
    use op_cuda::foreign::{ForeignStream, copy_into};
    let gpu = gpu();
    let host_stream = gpu.context().new_stream().unwrap();
    // SAFETY: the stream lives to the end of the test.
    let foreign = unsafe { ForeignStream::from_raw(host_stream.cu_stream()) }.unwrap();
    assert_eq!(foreign.device_ordinal().unwrap(), gpu.ordinal());
    let n = 1 << 20;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    // The host's memory, written on its stream only.
    let host_input = host_stream.clone_htod(&x).unwrap();
    let mut host_output = host_stream.alloc_zeros::<f32>(n).unwrap();
    let (input_ptr, _) = cudarc::driver::DevicePtr::device_ptr(&host_input, &host_stream);
    let (output_ptr, _) =
        cudarc::driver::DevicePtrMut::device_ptr_mut(&mut host_output, &host_stream);
    let before = gpu.allocator_stats();
    foreign.enter(&gpu).unwrap();
    {
        // SAFETY: the host's buffer of n floats, ordered by enter/leave.
        let lent = unsafe { CudaBuffer::borrowed(&gpu, input_ptr, n * 4) };
        let ours = gpu.allocate(n * 4, false).unwrap();
        let twice = gpu.function(&TWICE, "twice_f32").unwrap();
        let (xp, yp): (DevicePtr<f32>, DevicePtr<f32>) = (lent.ptr(), ours.ptr());
        // SAFETY: twice_f32 reads and writes n floats, which both hold.
        unsafe { gpu.launch_elementwise(&twice, n, &(xp, yp, n as u64)) }.unwrap();
        // SAFETY: the host's output holds n floats, untouched until leave.
        unsafe { copy_into(&ours, output_ptr, n * 4) }.unwrap();
        foreign.leave(&gpu).unwrap();
    }
    // The lent buffer went back to nobody: only our own block was cached.
    let after = gpu.allocator_stats();
    assert_eq!(
        after.bytes_in_use, before.bytes_in_use,
        "{before:?} -> {after:?}"
    );
    let y = host_stream.clone_dtoh(&host_output).unwrap();
    host_stream.synchronize().unwrap();
    assert!(y.iter().zip(&x).all(|(y, x)| *y == 2.0 * x));
}

fn gemm_matches_the_cpu() {
    let gpu = gpu();
    let (m, n, k) = (37, 23, 51);
    for (transpose_a, transpose_b) in [(false, false), (true, false), (false, true), (true, true)] {
        let a: Vec<f64> = (0..m * k).map(|i| ((i * 7) % 11) as f64 - 5.0).collect();
        let b: Vec<f64> = (0..k * n).map(|i| ((i * 5) % 13) as f64 - 6.0).collect();
        let at = |i: usize, p: usize| {
            if transpose_a {
                a[p * m + i]
            } else {
                a[i * k + p]
            }
        };
        let bt = |p: usize, j: usize| {
            if transpose_b {
                b[j * k + p]
            } else {
                b[p * n + j]
            }
        };
        let expected: Vec<f64> = (0..m * n)
            .map(|ij| (0..k).map(|p| at(ij / n, p) * bt(p, ij % n)).sum())
            .collect();

        let da = CudaBuffer::from_host(&gpu, f64_bytes(&a)).unwrap();
        let db = CudaBuffer::from_host(&gpu, f64_bytes(&b)).unwrap();
        let dc = gpu.allocate(m * n * 8, true).unwrap();
        let shape = GemmShape {
            m,
            n,
            k,
            transpose_a,
            transpose_b,
        };
        // SAFETY: the buffers hold A, B and C of `shape`, dense, on this GPU.
        unsafe { gpu.gemm(shape, 1.0, da.ptr(), db.ptr(), 0.0, dc.ptr()) }.unwrap();
        let mut c = vec![0u8; m * n * 8];
        op_core::device::DeviceMemory::copy_to_host(&dc, &mut c).unwrap();
        let c: Vec<f64> = c
            .chunks_exact(8)
            .map(|c| f64::from_ne_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(
            c, expected,
            "transpose_a {transpose_a}, transpose_b {transpose_b}"
        );

        // f32 through the same mapping.
        let a32: Vec<f32> = a.iter().map(|&v| v as f32).collect();
        let b32: Vec<f32> = b.iter().map(|&v| v as f32).collect();
        let da = CudaBuffer::from_host(&gpu, f32_bytes(&a32)).unwrap();
        let db = CudaBuffer::from_host(&gpu, f32_bytes(&b32)).unwrap();
        let dc = gpu.allocate(m * n * 4, true).unwrap();
        // SAFETY: as above, in f32.
        unsafe { gpu.gemm(shape, 1.0f32, da.ptr(), db.ptr(), 0.0, dc.ptr()) }.unwrap();
        let mut c = vec![0u8; m * n * 4];
        op_core::device::DeviceMemory::copy_to_host(&dc, &mut c).unwrap();
        let c: Vec<f32> = c
            .chunks_exact(4)
            .map(|c| f32::from_ne_bytes(c.try_into().unwrap()))
            .collect();
        assert!(c.iter().zip(&expected).all(|(c, e)| *c as f64 == *e));
    }
}

fn f32_bytes(values: &[f32]) -> &[u8] {
    // SAFETY: f32 has no padding and any byte is a valid u8; the length
    // covers exactly the slice.
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast(), std::mem::size_of_val(values)) }
}

fn f64_bytes(values: &[f64]) -> &[u8] {
    // SAFETY: as for `f32_bytes`.
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast(), std::mem::size_of_val(values)) }
}

op_cuda::test_main! {
    every_plain_dtype_goes_to_the_gpu_and_back: Gpu,
    steady_state_allocations_come_from_the_cache: Gpu,
    zeroed_allocations_are_zero: Gpu,
    a_launched_kernel_doubles: Gpu,
    a_kernel_runs_between_a_foreign_streams_work_on_its_memory: Gpu,
    gemm_matches_the_cpu: Gpu,
}
