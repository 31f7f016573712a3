//! For tests of GPU code, in this crate and in kernel crates: a GPU or a
//! printed reason to skip, NVRTC or a printed reason, and a check that
//! every registered kernel source compiles.
//!
//! A test that needs a GPU says so when it has none (`skipped: no CUDA
//! driver: ...`), so that a run without a GPU shows what it did not test
//! rather than passing silently:
//!
//! ```
//! // In a test: returns early, having printed why, on a machine without a GPU.
//! let Some(gpu) = op_cuda::testing::gpu_or_skip() else { return };
//! assert!(gpu.sm_count() > 0);
//! ```

use std::sync::Arc;

use crate::GpuDevice;
use crate::driver::{self, Library};
use crate::kernel::{compile, registered_sources};

/// GPU 0, or `None` after printing why the test is skipped.
///
/// The reason is printed once per test thread, so a property test that
/// asks in each of its cases prints one line, not one per case.
pub fn gpu_or_skip() -> Option<Arc<GpuDevice>> {
    match GpuDevice::get(0) {
        Ok(gpu) => Some(gpu),
        Err(e) => {
            say_skipped(e.message());
            None
        }
    }
}

/// Whether NVRTC can be loaded, printing why not (once per test thread,
/// as [`gpu_or_skip`] does).
pub fn nvrtc_or_skip() -> bool {
    match driver::require(Library::Nvrtc) {
        Ok(()) => true,
        Err(e) => {
            say_skipped(e.message());
            false
        }
    }
}

/// Prints `skipped: {reason}` unless this thread has printed it already,
/// and says whether it printed. libtest runs each test on its own thread,
/// so each test says it once.
fn say_skipped(reason: &str) -> bool {
    thread_local! {
        static SAID: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    SAID.with_borrow_mut(|said| {
        let new = !said.iter().any(|r| r == reason);
        if new {
            println!("skipped: {reason}");
            said.push(reason.to_owned());
        }
        new
    })
}

/// Compiles every kernel source registered in this program
/// ([`RegisteredSource`](crate::kernel::RegisteredSource)) with NVRTC for
/// compute capability `arch`, checking that each lists entry points its
/// PTX defines; returns how many compiled, or every failure in one
/// message. Needs NVRTC, not a GPU.
pub fn compile_registered_sources(arch: Option<(u32, u32)>) -> Result<usize, String> {
    let mut failures = Vec::new();
    let mut compiled = 0;
    for source in registered_sources() {
        match compile(source, arch) {
            Ok(ptx) => {
                let ptx = ptx.to_src();
                let missing: Vec<_> = source
                    .entries
                    .iter()
                    .filter(|entry| !ptx.contains(&format!(".entry {entry}(")))
                    .collect();
                if missing.is_empty() {
                    compiled += 1;
                } else {
                    failures.push(format!(
                        "GPU kernel '{}' lists entry points its PTX lacks: {missing:?}",
                        source.name
                    ));
                }
            }
            Err(e) => failures.push(e.to_string()),
        }
    }
    if failures.is_empty() {
        Ok(compiled)
    } else {
        Err(failures.join("\n\n"))
    }
}

/// A x2 kernel for tests and benchmarks of the GPU machinery itself:
/// scalar (`twice_f32`), and `float4` (`twice4_f32`) where the pointers are
/// 16-byte aligned.
pub static TWICE: crate::GpuKernelSource = crate::GpuKernelSource {
    name: "twice",
    source: r#"
extern "C" __global__ void twice_f32(const float* x, float* y, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)blockDim.x * gridDim.x) {
        y[i] = 2.0f * x[i];
    }
}
extern "C" __global__ void twice4_f32(const float4* x, float4* y, unsigned long long n4) {
    for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n4;
         i += (unsigned long long)blockDim.x * gridDim.x) {
        float4 v = x[i];
        y[i] = make_float4(2.0f * v.x, 2.0f * v.y, 2.0f * v.z, 2.0f * v.w);
    }
}
"#,
    entries: &["twice_f32", "twice4_f32"],
};

#[cfg(test)]
mod tests {
    use super::say_skipped;

    #[test]
    fn a_skip_reason_is_printed_once_per_test_thread() {
        assert!(say_skipped("no CUDA driver (test)"));
        assert!(!say_skipped("no CUDA driver (test)"));
        assert!(say_skipped("no NVRTC (test)"), "another reason is printed");
        let elsewhere = std::thread::spawn(|| say_skipped("no CUDA driver (test)"));
        assert!(
            elsewhere.join().unwrap(),
            "another test thread prints it again"
        );
    }
}
