//! Finding the CUDA libraries before touching them, and turning their
//! failures into [`op_core::Error`]s.
//!
//! cudarc loads libcuda, NVRTC and cuBLAS on first use and *panics* when a
//! library is missing (`CudaContext::new`, `compile_ptx`). Every path into
//! cudarc in this crate goes through [`require`] first, which probes with
//! the library's `is_culib_present` and answers an `Unavailable` error
//! naming the library; calls that could still panic (a symbol missing from
//! an old library, say) run inside [`guard`].

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;

use op_core::{Code, Error, Result};

/// A CUDA library this crate loads at run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Library {
    /// The driver, `libcuda.so` (installed with the GPU's kernel driver).
    Driver,
    /// The run-time compiler, `libnvrtc.so` (CUDA toolkit or the
    /// `nvidia-cuda-nvrtc-cu12` wheel).
    Nvrtc,
    /// cuBLAS, `libcublas.so` (CUDA toolkit or `nvidia-cublas-cu12`).
    Cublas,
}

impl Library {
    /// How messages name it: "CUDA driver", "NVRTC", "cuBLAS".
    pub fn name(self) -> &'static str {
        match self {
            Library::Driver => "CUDA driver",
            Library::Nvrtc => "NVRTC",
            Library::Cublas => "cuBLAS",
        }
    }

    /// The file it is loaded from (the first name cudarc tries).
    pub fn file_name(self) -> &'static str {
        match self {
            Library::Driver => "libcuda.so",
            Library::Nvrtc => "libnvrtc.so",
            Library::Cublas => "libcublas.so",
        }
    }

    fn probe(self) -> bool {
        let found = catch_unwind(|| {
            // SAFETY: `is_culib_present` only tries `dlopen` on the
            // candidate file names and closes what it opened; loading the
            // CUDA libraries runs no initialisers that depend on our state.
            unsafe {
                match self {
                    Library::Driver => cudarc::driver::sys::is_culib_present(),
                    Library::Nvrtc => cudarc::nvrtc::sys::is_culib_present(),
                    Library::Cublas => cudarc::cublas::sys::is_culib_present(),
                }
            }
        });
        found.unwrap_or(false)
    }
}

/// Whether `library` can be loaded on this machine (probed once per
/// process).
pub fn is_present(library: Library) -> bool {
    static FOUND: [OnceLock<bool>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    *FOUND[library as usize].get_or_init(|| library.probe())
}

/// `Ok` if `library` can be loaded, else an `Unavailable` error naming it:
/// "no CUDA driver: libcuda.so was not found".
pub fn require(library: Library) -> Result<()> {
    if is_present(library) {
        return Ok(());
    }
    let hint = match library {
        Library::Driver => "this machine has no NVIDIA GPU driver",
        Library::Nvrtc | Library::Cublas => {
            "install the CUDA toolkit or the NVIDIA wheel and put its lib folder on LD_LIBRARY_PATH"
        }
    };
    Err(Error::new(
        Code::Unavailable,
        format!(
            "no {}: {} was not found ({hint})",
            library.name(),
            library.file_name()
        ),
    ))
}

/// The driver, initialised (`cuInit`, once per process), or why it
/// cannot be used.
pub fn init() -> Result<()> {
    static INIT: OnceLock<Result<()>> = OnceLock::new();
    INIT.get_or_init(|| {
        require(Library::Driver)?;
        guard("initialising the CUDA driver", cudarc::driver::result::init)?
            .map_err(|e| driver_error("initialising the CUDA driver", e))
    })
    .clone()
}

/// The number of GPUs the driver sees, or why there is no driver.
///
/// ```
/// match op_cuda::device_count() {
///     Ok(n) => println!("{n} GPU(s)"),
///     Err(e) => assert_eq!(e.code(), op_core::Code::Unavailable),
/// }
/// ```
pub fn device_count() -> Result<usize> {
    init()?;
    let count = guard("counting GPUs", cudarc::driver::result::device::get_count)?
        .map_err(|e| driver_error("counting GPUs", e))?;
    Ok(usize::try_from(count).unwrap_or(0))
}

/// Runs `f`, turning a panic inside cudarc (a library or symbol it could
/// not load) into an `Unavailable` error that says what was being done.
pub fn guard<R>(what: &str, f: impl FnOnce() -> R) -> Result<R> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|panic| {
        let reason = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| panic.downcast_ref::<&str>().copied())
            .unwrap_or("a panic in cudarc");
        Error::new(Code::Unavailable, format!("{what}: {reason}"))
    })
}

/// A driver call's error: out of memory is `ResourceExhausted`, the rest
/// `Internal`, with the driver's name for the error.
#[cold]
pub fn driver_error(what: &str, e: cudarc::driver::DriverError) -> Error {
    use cudarc::driver::sys::CUresult;
    let code = match e.0 {
        CUresult::CUDA_ERROR_OUT_OF_MEMORY => Code::ResourceExhausted,
        CUresult::CUDA_ERROR_NO_DEVICE | CUresult::CUDA_ERROR_INVALID_DEVICE => Code::Unavailable,
        _ => Code::Internal,
    };
    Error::new(code, format!("{what}: {e}"))
}

/// A cuBLAS call's error.
#[cold]
pub fn cublas_error(what: &str, e: cudarc::cublas::result::CublasError) -> Error {
    Error::new(Code::Internal, format!("{what}: cuBLAS {e}"))
}
