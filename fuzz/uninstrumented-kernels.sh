#!/bin/sh
# Cargo's rustc wrapper for the fuzz targets (.cargo/config.toml): builds
# op-kernels, the shipped kernels, without libFuzzer's coverage
# instrumentation, by ending its rustc command line with
# `-sanitizer-coverage-level=0` (LLVM takes an option's last value; cargo
# fuzz's RUSTFLAGS set 4). AddressSanitizer and the other crates' coverage
# stay.
#
# Why: graphdef_reader (and npy_reader, through opkit) link every kernel
# (`op_kernels::link()`, for the ops the importer checks nodes against) but
# run none of them. Instrumented, the kernels and the generic code
# instantiated for them in op-kernels (rayon's jobs, op-core's tensors)
# were 87% of graphdef_reader's code and most of its 955,623 coverage
# counters, which libFuzzer clears and scans after every input: two thirds
# of its time (README.md, "Speed"). What this leaves out of the coverage
# feedback: op-kernels' own shape functions; the importer, op-core's shape
# inference and the attr checks stay covered.
case " $* " in
    *" --crate-name op_kernels "*) exec "$@" -Cllvm-args=-sanitizer-coverage-level=0 ;;
    *) exec "$@" ;;
esac
