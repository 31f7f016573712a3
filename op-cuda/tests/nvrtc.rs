//! Kernel sources compile with NVRTC, which needs no GPU: these run
//! wherever NVRTC is found (`LD_LIBRARY_PATH` with `libnvrtc.so.12`), and
//! show as `ignored (needs NVRTC; ...)` elsewhere.

mod common;

use op_core::{Code, DType};
use op_cuda::GpuKernelSource;
use op_cuda::kernel::{compile, entry_name};

static BROKEN: GpuKernelSource = GpuKernelSource {
    name: "broken_example",
    source: r#"extern "C" __global__ void broken_f32(float* y) { y[0] = undeclared_name; }"#,
    entries: &["broken_f32"],
};

static TEMPLATED: GpuKernelSource = GpuKernelSource {
    name: "scale",
    source: r#"
template <typename T>
__device__ void scale(const T* x, T* y, T factor, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)blockDim.x * gridDim.x) {
        y[i] = x[i] * factor;
    }
}
extern "C" __global__ void scale_f32(const float* x, float* y, float f, unsigned long long n) { scale(x, y, f, n); }
extern "C" __global__ void scale_f64(const double* x, double* y, double f, unsigned long long n) { scale(x, y, f, n); }
"#,
    entries: &["scale_f32", "scale_f64"],
};

fn kernels_compile_to_ptx_with_their_entry_points() {
    for (kernel, arch) in [
        (&common::TWICE, Some((9, 0))),
        (&TEMPLATED, Some((8, 0))),
        (&TEMPLATED, None),
    ] {
        let started = std::time::Instant::now();
        let ptx = compile(kernel, arch).unwrap().to_src();
        println!(
            "compiled '{}' for {arch:?} in {:?}: {} bytes of PTX",
            kernel.name,
            started.elapsed(),
            ptx.len()
        );
        for entry in kernel.entries {
            assert!(
                ptx.contains(&format!(".entry {entry}(")),
                "{entry} missing from:\n{ptx}"
            );
        }
        if let Some((major, minor)) = arch {
            assert!(ptx.contains(&format!(".target sm_{major}{minor}")), "{ptx}");
        }
    }
}

fn a_compile_error_names_the_kernel_and_carries_the_log() {
    let e = compile(&BROKEN, Some((9, 0))).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().contains("'broken_example'"), "{e}");
    assert!(
        e.message().contains("undeclared_name"),
        "NVRTC's log is missing: {e}"
    );
    assert!(e.message().contains("broken_example.cu"), "{e}");
}

fn entry_names_carry_the_dtype() {
    assert_eq!(entry_name("scale", DType::F32).unwrap(), "scale_f32");
    assert_eq!(entry_name("scale", DType::BF16).unwrap(), "scale_bf16");
    let e = entry_name("scale", DType::String).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
}

fn without_nvrtc_compiling_is_unavailable() {
    let e = compile(&TEMPLATED, None).unwrap_err();
    assert_eq!(e.code(), Code::Unavailable);
    assert!(e.message().contains("no NVRTC"), "{e}");
}

op_cuda::test_main! {
    kernels_compile_to_ptx_with_their_entry_points: Nvrtc,
    a_compile_error_names_the_kernel_and_carries_the_log: Nvrtc,
    entry_names_carry_the_dtype,
    without_nvrtc_compiling_is_unavailable: NoNvrtc,
}
