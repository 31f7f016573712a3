//! CUDA C++ kernel sources, compiled with NVRTC once per process and
//! device.
//!
//! A kernel source is a `static` [`GpuKernelSource`]: the CUDA C++ text
//! and the `extern "C"` entry points it defines. One source serves every
//! dtype through a C++ template and one `extern "C"` wrapper per dtype,
//! named `<entry>_<dtype>` ([`entry_name`]: `scale_f32`, `scale_f64`), so
//! the source is ordinary CUDA (no text substitution) and the launcher
//! picks the entry from the tensor's dtype:
//!
//! ```
//! use op_cuda::GpuKernelSource;
//!
//! static SCALE: GpuKernelSource = GpuKernelSource {
//!     name: "scale",
//!     source: r#"
//! template <typename T>
//! __device__ void scale(const T* x, T* y, T factor, unsigned long long n) {
//!     for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
//!          i += (unsigned long long)blockDim.x * gridDim.x) {
//!         y[i] = x[i] * factor;
//!     }
//! }
//! extern "C" __global__ void scale_f32(const float* x, float* y, float f, unsigned long long n) { scale(x, y, f, n); }
//! extern "C" __global__ void scale_f64(const double* x, double* y, double f, unsigned long long n) { scale(x, y, f, n); }
//! "#,
//!     entries: &["scale_f32", "scale_f64"],
//! };
//! ```
//!
//! The first use on a device compiles the source for the device's
//! architecture (`--gpu-architecture=compute_XY`: PTX the driver finishes
//! for the exact GPU), loads the module and looks up every entry; a
//! compile error names the kernel and carries NVRTC's log.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use cudarc::driver::CudaFunction;
use cudarc::nvrtc::{CompileError, CompileOptions, Ptx};
use op_core::{Code, DType, Error, Result};

use crate::device::GpuDevice;
use crate::driver::{self, Library, driver_error, guard};

/// The CUDA C++ source of a set of kernels. Must be a `static` (its
/// address is its identity in the compile cache).
#[derive(Debug)]
pub struct GpuKernelSource {
    /// A name for messages ("scale").
    pub name: &'static str,
    /// The CUDA C++ text, compiled as is (no includes outside NVRTC's
    /// built-in headers).
    pub source: &'static str,
    /// The `extern "C" __global__` functions it defines, looked up when it
    /// is loaded (a missing one is an error then, not at launch).
    pub entries: &'static [&'static str],
}

/// A kernel source submitted for checking, so that a test can compile
/// every source a program links with NVRTC (which needs no GPU) and catch a
/// CUDA syntax error on a machine without one:
///
/// ```
/// # use op_cuda::GpuKernelSource;
/// # static SCALE: GpuKernelSource = GpuKernelSource { name: "scale", source: "", entries: &[] };
/// op_core::inventory::submit! { op_cuda::kernel::RegisteredSource(&SCALE) }
/// assert!(op_cuda::kernel::registered_sources().any(|s| s.name == "scale"));
/// ```
pub struct RegisteredSource(pub &'static GpuKernelSource);

op_core::inventory::collect!(RegisteredSource);

/// Every source submitted with [`RegisteredSource`] in this program.
pub fn registered_sources() -> impl Iterator<Item = &'static GpuKernelSource> {
    op_core::inventory::iter::<RegisteredSource>
        .into_iter()
        .map(|r| r.0)
}

/// The name of a dtype in entry points: `f32`, `f64`, `f16`, `bf16`,
/// `i8` ... `i64`, `u8` ... `u64`; `None` for dtypes GPU kernels do not
/// take (strings, complex, quantized, resources).
pub fn dtype_suffix(dtype: DType) -> Option<&'static str> {
    Some(match dtype {
        DType::F32 => "f32",
        DType::F64 => "f64",
        DType::F16 => "f16",
        DType::BF16 => "bf16",
        DType::I8 => "i8",
        DType::I16 => "i16",
        DType::I32 => "i32",
        DType::I64 => "i64",
        DType::U8 => "u8",
        DType::U16 => "u16",
        DType::U32 => "u32",
        DType::U64 => "u64",
        _ => return None,
    })
}

/// The entry point of `base` for `dtype`: `entry_name("scale", F32)` is
/// `"scale_f32"`.
pub fn entry_name(base: &str, dtype: DType) -> Result<String> {
    let suffix = dtype_suffix(dtype).ok_or_else(|| {
        Error::new(
            Code::InvalidArgument,
            format!("GPU kernel '{base}' has no entry point for dtype {dtype}"),
        )
    })?;
    Ok(format!("{base}_{suffix}"))
}

/// Compiles `kernel` to PTX with NVRTC, for compute capability `arch`
/// (`(9, 0)` for an H100) or NVRTC's default architecture. Needs NVRTC,
/// not a GPU.
///
/// Returns an `Unavailable` error without NVRTC and an `InvalidArgument`
/// error for a source that does not compile, with the kernel's name and
/// NVRTC's log.
pub fn compile(kernel: &GpuKernelSource, arch: Option<(u32, u32)>) -> Result<Ptx> {
    driver::require(Library::Nvrtc)?;
    let mut options = CompileOptions {
        name: Some(format!("{}.cu", kernel.name)),
        ..CompileOptions::default()
    };
    if let Some((major, minor)) = arch {
        options
            .options
            .push(format!("--gpu-architecture=compute_{major}{minor}"));
    }
    let what = format!("compiling GPU kernel '{}' with NVRTC", kernel.name);
    guard(&what, || {
        cudarc::nvrtc::compile_ptx_with_opts(kernel.source, options)
    })?
    .map_err(|e| compile_error(&what, e))
}

#[cold]
fn compile_error(what: &str, e: CompileError) -> Error {
    match e {
        CompileError::CompileError { log, options, .. } => Error::new(
            Code::InvalidArgument,
            format!(
                "{what} failed (options {options:?}):\n{}",
                log.to_string_lossy().trim_end()
            ),
        ),
        other => Error::new(Code::Internal, format!("{what}: {other:?}")),
    }
}

/// One source loaded on one device: its entry points.
#[derive(Debug)]
struct LoadedModule {
    functions: HashMap<&'static str, CudaFunction>,
}

/// A device's compiled kernels, keyed by their source's address.
#[derive(Debug, Default)]
pub(crate) struct CompiledKernels {
    modules: Mutex<HashMap<usize, Arc<LoadedModule>>>,
}

impl GpuDevice {
    /// Entry point `entry` of `kernel` on this device, compiling and
    /// loading the source on first use (once per process: later calls are
    /// a map lookup).
    ///
    /// Returns the errors of [`compile`], and an `InvalidArgument` error
    /// for an entry the source does not list.
    pub fn function(&self, kernel: &'static GpuKernelSource, entry: &str) -> Result<CudaFunction> {
        let module = self.module(kernel)?;
        module.functions.get(entry).cloned().ok_or_else(|| {
            Error::new(
                Code::InvalidArgument,
                format!(
                    "GPU kernel '{}' has no entry point '{entry}' (it has {:?})",
                    kernel.name, kernel.entries
                ),
            )
        })
    }

    fn module(&self, kernel: &'static GpuKernelSource) -> Result<Arc<LoadedModule>> {
        let key = std::ptr::from_ref(kernel) as usize;
        // The lock is held while compiling: two threads wanting the same
        // kernel compile it once, and compiling is rare (once per kernel).
        let mut modules = self
            .kernels
            .modules
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(module) = modules.get(&key) {
            return Ok(module.clone());
        }
        let ptx = compile(kernel, Some(self.compute_capability()))?;
        let what = format!(
            "loading GPU kernel '{}' on GPU {}",
            kernel.name,
            self.ordinal()
        );
        let loaded = self
            .context()
            .load_module(ptx)
            .map_err(|e| driver_error(&what, e))?;
        let functions = kernel
            .entries
            .iter()
            .map(|&entry| {
                loaded
                    .load_function(entry)
                    .map(|f| (entry, f))
                    .map_err(|e| driver_error(&format!("{what}: entry point '{entry}'"), e))
            })
            .collect::<Result<_>>()?;
        let module = Arc::new(LoadedModule { functions });
        modules.insert(key, module.clone());
        Ok(module)
    }
}
