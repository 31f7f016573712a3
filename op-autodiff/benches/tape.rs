//! What a gradient tape costs an eager op: `AddV2` on two `f32` vectors
//! (of 1 and of 16 elements), run with no tape, with a tape active that
//! does not watch the inputs, and with a tape recording it (an input
//! watched), against the prepared op run directly in the same run.
//!
//! Each iteration is a "step" of `CALLS` (100) calls, every output dropped
//! at once; the figures are per step, so divide by 100 for one op. The
//! variants:
//!
//! - `prepared_run`: the baseline, `PreparedOp::run(vec![a, b])` on the op
//!   prepared once, no tape on the thread.
//! - `no_tape`: the typed wrapper `AddV2::call(&a, &b).run()`, no tape on
//!   the thread: what every eager op pays when gradients are not used (one
//!   thread-local read in `PreparedOp::run_into` on top of dispatch).
//! - `tape_unwatched`: the same calls while a tape is active whose values
//!   are not among the inputs (made and dropped each step): the seam asks
//!   the tape, which looks each input up and records nothing.
//! - `seam_only`: the same calls with a recorder that accepts every op
//!   and keeps nothing: what `PreparedOp::run_into` (op-core) spends on a
//!   recorded op before any tape code runs (it collects the recorders that
//!   accept the run and hands them its outputs).
//! - `tape_watched`: the same calls on a fresh tape each step with `a`
//!   watched: every call is recorded (the unknown input kept before the
//!   kernel runs, the output after, and entered in the tape's map; a
//!   1-element output lives inside its tensor and is given a tag as its
//!   identity, which allocates nothing).
//!
//! Read the figures as differences and ratios within one run: recording
//! costs `tape_watched - tape_unwatched` per op, of which
//! `seam_only - no_tape` is the seam's and `tape_watched - seam_only` the
//! tape's own; `no_tape / prepared_run` is dispatch's own cost.
//!
//! Run with:
//!
//! ```text
//! cargo bench -p op-autodiff --bench tape
//! ```

use std::rc::Rc;
use std::sync::{Arc, LazyLock};

use divan::{Bencher, black_box, black_box_drop};
use op_autodiff::GradientTape;
use op_core::gradient::recording::{self, Recorder};
use op_core::{DType, OpDef, OpInstance, PreparedOp, Runtime, Tensor};
use op_kernels::math::AddV2;

fn main() {
    op_kernels::link();
    divan::main();
}

/// Samples per benchmark, more than divan's default, to steady the
/// medians on a noisy machine.
const SAMPLES: u32 = 500;

/// Iterations per sample: fixed, so every variant is timed alike.
const SAMPLE_SIZE: u32 = 10;

/// Op calls per iteration: one "step" of a program, recorded on a fresh
/// tape in the tape variants (which also make and drop the tape: that
/// cost, spread over the calls, is part of the tape's). Divan reports the
/// time per iteration; divide by this for the time per op.
const CALLS: usize = 100;

/// The inputs' lengths: one element (an output of 4 bytes lives inside
/// its tensor; a recorded one gets a tag), and 16 (an output in a buffer
/// of its own, from the allocator's small-buffer cache, recorded as it is).
const LENS: &[usize] = &[1, 16];

/// An input of `len` elements (in a buffer: a watched tensor has one).
fn input(len: usize, value: f32) -> Tensor {
    Tensor::from_vec([len], vec![value; len]).expect("a vector")
}

/// `AddV2` for two `float` inputs, prepared once.
static PREPARED: LazyLock<Arc<PreparedOp>> = LazyLock::new(|| {
    Runtime::global()
        .prepare("AddV2", &[DType::F32.into(), DType::F32.into()], &[])
        .expect("AddV2 is registered for float")
});

/// `CALLS` typed-wrapper calls of `AddV2` on `a` and `b`.
fn calls(a: &Tensor, b: &Tensor) {
    for _ in 0..CALLS {
        let output = AddV2::call(black_box(a), black_box(b))
            .run()
            .expect("AddV2 runs");
        black_box_drop(output);
    }
}

/// The baseline: the prepared op run on a fresh input `Vec`, no tape.
#[divan::bench(sample_count = SAMPLES, sample_size = SAMPLE_SIZE, args = LENS)]
fn prepared_run(bencher: Bencher, len: usize) {
    let (a, b) = (input(len, 1.5), input(len, 2.0));
    let prepared = &**PREPARED;
    bencher.bench_local(|| {
        for _ in 0..CALLS {
            let outputs = black_box(prepared)
                .run(vec![black_box(&a).clone(), black_box(&b).clone()])
                .expect("AddV2 runs");
            black_box_drop(outputs);
        }
    });
}

/// The typed wrapper with no tape on the thread.
#[divan::bench(sample_count = SAMPLES, sample_size = SAMPLE_SIZE, args = LENS)]
fn no_tape(bencher: Bencher, len: usize) {
    let (a, b) = (input(len, 1.5), input(len, 2.0));
    calls(&a, &b);
    bencher.bench_local(|| calls(&a, &b));
}

/// The typed wrapper while a tape is active that watches neither input.
#[divan::bench(sample_count = SAMPLES, sample_size = SAMPLE_SIZE, args = LENS)]
fn tape_unwatched(bencher: Bencher, len: usize) {
    let (a, b) = (input(len, 1.5), input(len, 2.0));
    calls(&a, &b);
    bencher.bench_local(|| {
        let mut other = input(len, 0.0);
        let tape = GradientTape::new();
        tape.watch(&mut other);
        calls(&a, &b);
        assert_eq!(tape.recorded_ops(), 0);
    });
}

/// A recorder that accepts every op and keeps nothing: what the seam in
/// `PreparedOp::run_into` costs a recorded op before the tape does
/// anything (the recorders asked and collected, and told the outputs).
struct Accept;

impl Recorder for Accept {
    fn begin(&self, _: &Arc<OpDef>, _: &Arc<OpInstance>, _: &[Tensor]) -> bool {
        true
    }

    fn end(&self, _: Option<&mut [Option<Tensor>]>, _: bool) -> bool {
        false
    }
}

/// The typed wrapper with a recorder that records nothing (see [`Accept`]).
#[divan::bench(sample_count = SAMPLES, sample_size = SAMPLE_SIZE, args = LENS)]
fn seam_only(bencher: Bencher, len: usize) {
    let (a, b) = (input(len, 1.5), input(len, 2.0));
    calls(&a, &b);
    bencher.bench_local(|| {
        let _guard = recording::push(Rc::new(Accept));
        calls(&a, &b);
    });
}

/// The typed wrapper recorded: `a` is watched.
#[divan::bench(sample_count = SAMPLES, sample_size = SAMPLE_SIZE, args = LENS)]
fn tape_watched(bencher: Bencher, len: usize) {
    let (a, b) = (input(len, 1.5), input(len, 2.0));
    calls(&a, &b);
    bencher.bench_local(|| {
        let mut a = a.clone();
        let tape = GradientTape::new();
        tape.watch(&mut a);
        calls(&a, &b);
        assert_eq!(tape.recorded_ops(), CALLS);
    });
}
