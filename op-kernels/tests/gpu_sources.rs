//! Every GPU kernel's CUDA C++ compiles with NVRTC (which needs no GPU:
//! `pip install nvidia-cuda-nvrtc-cu12` and its `lib` on
//! `LD_LIBRARY_PATH`; `.ci/run` does so), for the architectures of the
//! GPUs we target, so a CUDA mistake fails here rather than on the first
//! GPU that runs it.

//!
//! Without NVRTC it shows as `ignored (needs NVRTC; ...)`. With it, it
//! prints one line per architecture, `NVRTC compiled 7 of 7 GPU kernel
//! sources for sm_80`, counted from the compilations themselves; `.ci/run`
//! reads those lines and fails if NVRTC was installed and a line is
//! missing or counts fewer than all.

use op_cuda::testing::compile_registered_sources;

fn every_gpu_kernel_source_compiles_with_nvrtc() {
    op_kernels::link();
    // Ampere (A100), Hopper (H100, H200).
    for arch in [(8, 0), (9, 0)] {
        let report = compile_registered_sources(Some(arch));
        println!("{report}");
        assert!(report.total() > 0, "no GPU kernel source is registered");
        assert!(
            report.failures.is_empty(),
            "GPU kernel sources failed to compile:\n{}",
            report.failures.join("\n\n")
        );
    }
}

op_cuda::test_main! {
    every_gpu_kernel_source_compiles_with_nvrtc: Nvrtc,
}
