//! Every GPU kernel's CUDA C++ compiles with NVRTC (which needs no GPU:
//! `pip install nvidia-cuda-nvrtc-cu12` and its `lib` on
//! `LD_LIBRARY_PATH`; `.ci/run` does so), for the architectures of the
//! GPUs we target, so a CUDA mistake fails here rather than on the first
//! GPU that runs it.

#![cfg(feature = "gpu")]

use op_cuda::testing::{compile_registered_sources, nvrtc_or_skip};

#[test]
fn every_gpu_kernel_source_compiles_with_nvrtc() {
    op_kernels::link();
    if !nvrtc_or_skip() {
        return;
    }
    // Ampere (A100), Hopper (H100, H200).
    for arch in [(8, 0), (9, 0)] {
        match compile_registered_sources(Some(arch)) {
            Ok(count) => println!(
                "{count} GPU kernel sources compiled for sm_{}{}",
                arch.0, arch.1
            ),
            Err(failures) => panic!("GPU kernel sources failed to compile:\n{failures}"),
        }
    }
}
