//! For tests of GPU code, in this crate and in kernel crates: GPU 0 for a
//! test that needs it, a check that every registered kernel source
//! compiles, and (`harness`, with the `harness` feature) a test harness
//! that shows a test this machine cannot run as `ignored`, with the reason.
//!
//! A test that needs a GPU is declared so in its file's `test_main!`, and
//! takes the GPU with [`gpu`]:
//!
//! ```no_run
//! // tests/on_a_gpu.rs, a `[[test]]` with `harness = false`:
//! fn the_gpu_has_multiprocessors() {
//!     assert!(op_cuda::testing::gpu().sm_count() > 0);
//! }
//!
//! op_cuda::test_main! {
//!     the_gpu_has_multiprocessors: Gpu,
//! }
//! ```
//!
//! Without a GPU, `cargo test` prints `test the_gpu_has_multiprocessors
//! ... ignored (needs a GPU; no CUDA driver: ...)` and counts it in the
//! summary's `N ignored`, rather than passing a test that did not run.

#[cfg(feature = "harness")]
pub mod harness;

use std::fmt;
use std::sync::Arc;

use crate::GpuDevice;
use crate::kernel::{compile, registered_sources};

/// GPU 0, for a test declared `Gpu` in `test_main!`, which the harness
/// runs only where GPU 0 can be used.
///
/// # Panics
///
/// Where there is no GPU, with the reason: a test that calls this without
/// being declared `Gpu` fails where it should have been ignored.
pub fn gpu() -> Arc<GpuDevice> {
    GpuDevice::get(0).unwrap_or_else(|e| {
        panic!(
            "this test needs a GPU ({}): declare it `Gpu` in `op_cuda::test_main!`",
            e.message()
        )
    })
}

/// What [`compile_registered_sources`] did: how many of the registered
/// kernel sources compiled, and why each other one did not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompiledSources {
    /// The compute capability compiled for (`None`: NVRTC's default).
    pub arch: Option<(u32, u32)>,
    /// Sources that compiled to PTX defining every entry point they list.
    pub compiled: usize,
    /// One message for each source that did not: NVRTC's log, or the entry
    /// points its PTX lacks.
    pub failures: Vec<String>,
}

impl CompiledSources {
    /// Every source registered: compiled or failed.
    pub fn total(&self) -> usize {
        self.compiled + self.failures.len()
    }
}

/// `NVRTC compiled 7 of 7 GPU kernel sources for sm_90`: the line
/// `.ci/run` reads (and fails on if the two numbers differ).
impl fmt::Display for CompiledSources {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "NVRTC compiled {} of {} GPU kernel sources for ",
            self.compiled,
            self.total()
        )?;
        match self.arch {
            Some((major, minor)) => write!(f, "sm_{major}{minor}"),
            None => f.write_str("NVRTC's default architecture"),
        }
    }
}

/// Compiles every kernel source registered in this program
/// ([`RegisteredSource`](crate::kernel::RegisteredSource)) with NVRTC for compute capability `arch`,
/// checking that each defines the entry points it lists; each source is
/// counted as compiled only after a real compilation. Needs NVRTC, not a
/// GPU.
pub fn compile_registered_sources(arch: Option<(u32, u32)>) -> CompiledSources {
    let mut report = CompiledSources {
        arch,
        compiled: 0,
        failures: Vec::new(),
    };
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
                    report.compiled += 1;
                } else {
                    report.failures.push(format!(
                        "GPU kernel '{}' lists entry points its PTX lacks: {missing:?}",
                        source.name
                    ));
                }
            }
            Err(e) => report.failures.push(e.to_string()),
        }
    }
    report
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
    use super::CompiledSources;

    #[test]
    fn the_ci_line_counts_every_source() {
        let report = CompiledSources {
            arch: Some((9, 0)),
            compiled: 56,
            failures: vec!["GPU kernel 'x': an error".into()],
        };
        assert_eq!(
            report.to_string(),
            "NVRTC compiled 56 of 57 GPU kernel sources for sm_90"
        );
    }
}
