//! What a gradient tape costs an eager op: `AddV2` on two one-element
//! `f32` tensors, run with no tape, with a tape active that does not watch
//! the inputs, and with a tape recording it (an input watched), against
//! the prepared op run directly in the same run.
//!
//! Every variant produces the same output, dropped inside the timed
//! closure. The variants:
//!
//! - `prepared_run`: the baseline, `PreparedOp::run(vec![a, b])` on the op
//!   prepared once, no tape on the thread.
//! - `no_tape`: the typed wrapper `AddV2::call(&a, &b).run()`, no tape on
//!   the thread: what every eager op pays when gradients are not used (one
//!   thread-local read in `PreparedOp::run_into` on top of dispatch).
//! - `tape_unwatched`: the same call while a tape is active whose values
//!   are not among the inputs: the seam asks the tape, which looks each
//!   input up and records nothing.
//! - `tape_watched`: the same call with `a` watched: the op is recorded
//!   (the inputs kept, the output given a buffer of its own, since a
//!   one-element output lives inside its tensor, and entered in the
//!   tape's map). The tape grows by one record per call over the run.
//!
//! Read the figures as differences and ratios within one run: the
//! recording cost per op is `tape_watched - tape_unwatched` (the target:
//! at most 100 ns), and `no_tape / prepared_run` is dispatch's own cost.
//!
//! Run with:
//!
//! ```text
//! cargo bench -p op-autodiff --bench tape
//! ```

use std::sync::{Arc, LazyLock};

use divan::{Bencher, black_box, black_box_drop};
use op_autodiff::GradientTape;
use op_core::{DType, PreparedOp, Runtime, Tensor};
use op_kernels::math::AddV2;

fn main() {
    op_kernels::link();
    divan::main();
}

/// Samples per benchmark, more than divan's default, to steady the
/// medians on a noisy machine.
const SAMPLES: u32 = 1000;

/// Calls per sample: fixed, so every variant is timed alike.
const SAMPLE_SIZE: u32 = 100;

/// A one-element input (in a buffer: a watched tensor has one).
fn input(value: f32) -> Tensor {
    Tensor::from_vec([1], vec![value]).expect("a one-element tensor")
}

/// `AddV2` for two `float` inputs, prepared once.
static PREPARED: LazyLock<Arc<PreparedOp>> = LazyLock::new(|| {
    Runtime::global()
        .prepare("AddV2", &[DType::F32.into(), DType::F32.into()], &[])
        .expect("AddV2 is registered for float")
});

/// The baseline: the prepared op run on a fresh input `Vec`, no tape.
#[divan::bench(sample_count = SAMPLES, sample_size = SAMPLE_SIZE)]
fn prepared_run(bencher: Bencher) {
    let (a, b) = (input(1.5), input(2.0));
    let prepared = &**PREPARED;
    bencher.bench_local(|| {
        let outputs = black_box(prepared)
            .run(vec![black_box(&a).clone(), black_box(&b).clone()])
            .expect("AddV2 runs");
        black_box_drop(outputs);
    });
}

/// The typed wrapper with no tape on the thread.
#[divan::bench(sample_count = SAMPLES, sample_size = SAMPLE_SIZE)]
fn no_tape(bencher: Bencher) {
    let (a, b) = (input(1.5), input(2.0));
    AddV2::call(&a, &b).run().expect("AddV2 runs");
    bencher.bench_local(|| {
        let output = AddV2::call(black_box(&a), black_box(&b))
            .run()
            .expect("AddV2 runs");
        black_box_drop(output);
    });
}

/// The typed wrapper while a tape is active that watches neither input.
#[divan::bench(sample_count = SAMPLES, sample_size = SAMPLE_SIZE)]
fn tape_unwatched(bencher: Bencher) {
    let (a, b) = (input(1.5), input(2.0));
    let mut other = input(0.0);
    let tape = GradientTape::new();
    tape.watch(&mut other);
    AddV2::call(&a, &b).run().expect("AddV2 runs");
    bencher.bench_local(|| {
        let output = AddV2::call(black_box(&a), black_box(&b))
            .run()
            .expect("AddV2 runs");
        black_box_drop(output);
    });
    assert_eq!(tape.recorded_ops(), 0);
}

/// The typed wrapper recorded: `a` is watched.
#[divan::bench(sample_count = SAMPLES, sample_size = SAMPLE_SIZE)]
fn tape_watched(bencher: Bencher) {
    let (mut a, b) = (input(1.5), input(2.0));
    let tape = GradientTape::new();
    tape.watch(&mut a);
    AddV2::call(&a, &b).run().expect("AddV2 runs");
    bencher.bench_local(|| {
        let output = AddV2::call(black_box(&a), black_box(&b))
            .run()
            .expect("AddV2 runs");
        black_box_drop(output);
    });
    assert!(tape.recorded_ops() > 1);
}
