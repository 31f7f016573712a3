//! Without a GPU, every way in is a typed error, never a panic. These run
//! everywhere; on a machine with a GPU they check the GPU's answers
//! instead.

mod common;

use op_core::{Code, Device, Runtime, Tensor};
use op_cuda::GpuDevice;
use op_cuda::driver::{self, Library};

// Named, so that the backend's registration is linked in.
use op_cuda as _;

fn no_driver() -> bool {
    !driver::is_present(Library::Driver)
}

#[test]
fn gpu_device_without_a_driver_is_unavailable() {
    match GpuDevice::get(0) {
        Ok(gpu) => println!("a GPU is present: {} (nothing to check here)", gpu.name()),
        Err(e) if no_driver() => {
            assert_eq!(e.code(), Code::Unavailable);
            assert!(
                e.message()
                    .contains("no CUDA driver: libcuda.so was not found"),
                "{e}"
            );
        }
        Err(e) => assert!(
            matches!(e.code(), Code::Unavailable | Code::InvalidArgument),
            "{e}"
        ),
    }
}

#[test]
fn device_count_without_a_driver_is_unavailable() {
    match op_cuda::device_count() {
        Ok(n) => println!("{n} GPU(s)"),
        Err(e) => {
            assert!(no_driver(), "a driver is present, yet: {e}");
            assert_eq!(e.code(), Code::Unavailable);
        }
    }
}

#[test]
fn a_gpu_past_the_last_is_an_error() {
    match op_cuda::device_count() {
        Ok(n) => {
            let e = GpuDevice::get(n).unwrap_err();
            assert_eq!(e.code(), Code::InvalidArgument);
            assert!(
                e.message()
                    .contains(&format!("GPU {n} does not exist: this machine has {n}")),
                "{e}"
            );
        }
        // No driver, so no count: asking for any GPU says why.
        Err(e) => {
            assert!(no_driver(), "a driver is present, yet: {e}");
            let past = GpuDevice::get(7).unwrap_err();
            assert_eq!(past.code(), Code::Unavailable, "{past}");
            assert_eq!(past.message(), e.message());
        }
    }
}

#[test]
fn runtime_gpu_names_the_driver() {
    match Runtime::gpu(0) {
        Ok(runtime) => println!("a GPU is present: running on {}", runtime.device()),
        Err(e) => {
            assert!(no_driver(), "a driver is present, yet: {e}");
            assert_eq!(e.code(), Code::Unavailable);
            // The backend is linked: the error is the driver's, not "no
            // backend linked".
            assert!(e.message().contains("CUDA driver"), "{e}");
            assert!(!e.message().contains("no backend"), "{e}");
        }
    }
}

#[test]
fn tensor_to_gpu_without_a_driver_is_unavailable() {
    let t = Tensor::from_vec([3], vec![1.0f32, 2.0, 3.0]).unwrap();
    match t.to_device(Device::gpu(0)) {
        Ok(on_gpu) => assert_eq!(
            on_gpu.to_host().unwrap().as_slice::<f32>().unwrap(),
            &[1.0, 2.0, 3.0]
        ),
        Err(e) => {
            assert!(no_driver(), "a driver is present, yet: {e}");
            assert_eq!(e.code(), Code::Unavailable);
            assert!(e.message().contains("libcuda.so"), "{e}");
        }
    }
}

#[test]
fn the_backend_is_registered_for_gpus() {
    let backend = op_core::device::backend(op_core::DeviceType::Gpu).unwrap();
    assert_eq!(backend.name(), "CUDA");
}

#[test]
fn a_foreign_stream_without_a_driver_or_stream_is_an_error() {
    use op_cuda::foreign::ForeignStream;
    // SAFETY: null is refused before any use.
    let null = unsafe { ForeignStream::from_raw(std::ptr::null_mut()) };
    let error = null.expect_err("a null stream");
    assert_eq!(error.code(), Code::FailedPrecondition);
    assert!(error.message().contains("no CUDA stream"), "{error}");
    if no_driver() {
        // A non-null handle is never dereferenced without a driver: the
        // driver's absence is found first.
        // SAFETY: never used as a stream (no driver).
        let stream = unsafe { ForeignStream::from_raw(std::ptr::dangling_mut()) }.unwrap();
        let error = stream.device_ordinal().expect_err("no driver");
        assert_eq!(error.code(), Code::Unavailable, "{error}");
    }
}
