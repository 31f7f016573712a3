//! Dispatch overhead of running the `Example` op (doubles its input) on a
//! one-element `f32` tensor, against calling the kernel's computation
//! directly.
//!
//! Every variant produces the same output: a new one-element tensor
//! holding `2 * input`. The variants:
//!
//! - `direct`: the baseline, what the kernel does with no runtime:
//!   `Tensor::from_vec(input.dims(), times_two(input.as_slice::<f32>()?))`.
//! - `prepared`: `PreparedOp::run(vec![input.clone()])` on the op prepared
//!   once with `Runtime::global().prepare("Example", &[F32], &[])`: the
//!   cached-kernel path (input check, context, `catch_unwind`, output
//!   check, the input and output `Vec`s).
//! - `op_call`: the eager path, `OpCall::new("Example").input(&input).run()`,
//!   which finds the prepared op in the per-thread cache (a hit on every
//!   call after the first).
//! - `typed_wrapper`: the generated wrapper, `Example::call(&input).run()`
//!   (an `OpCall` underneath, its output placed in an array with
//!   `PreparedOp::run_into`: no `Vec` of outputs).
//!
//! The output is dropped inside the timed closure, so each figure is the
//! whole cost of one call. The machine is noisy: read the figures as ratios
//! against `direct` from the same run (the targets: `prepared` at most 80
//! ns, `op_call` 130 ns, `typed_wrapper` 140 ns, each at most 2x
//! `direct`).
//!
//! Run with:
//!
//! ```text
//! cargo bench -p op-kernels --bench dispatch
//! ```

use std::sync::{Arc, LazyLock};

use divan::{Bencher, black_box, black_box_drop};
use op_core::{DType, OpCall, PreparedOp, Runtime, Tensor};
use op_kernels::example::{Example, times_two};

fn main() {
    op_kernels::link();
    divan::main();
}

/// Samples per benchmark: more than divan's default 100, to steady the
/// medians on a noisy machine.
const SAMPLES: u32 = 1000;

/// Calls per sample: fixed, so every variant is timed alike and the
/// timer's own cost and precision are spread over many calls.
const SAMPLE_SIZE: u32 = 100;

/// The one-element input every variant doubles.
fn input() -> Tensor {
    Tensor::from_vec([1], vec![1.5f32]).expect("a one-element tensor")
}

/// The `Example` node for `float` inputs, prepared once.
static PREPARED: LazyLock<Arc<PreparedOp>> = LazyLock::new(|| {
    Runtime::global()
        .prepare("Example", &[DType::F32.into()], &[])
        .expect("Example is registered for float")
});

/// The baseline: the kernel's computation and output allocation, no runtime.
#[divan::bench(sample_count = SAMPLES, sample_size = SAMPLE_SIZE)]
fn direct(bencher: Bencher) {
    let input = input();
    bencher.bench_local(|| {
        let input = black_box(&input);
        let output = Tensor::from_vec(
            input.dims(),
            times_two(input.as_slice::<f32>().expect("float input")),
        )
        .expect("same shape");
        black_box_drop(output);
    });
}

/// The cached-kernel path: a prepared op, run on a fresh input `Vec`.
#[divan::bench(sample_count = SAMPLES, sample_size = SAMPLE_SIZE)]
fn prepared(bencher: Bencher) {
    let input = input();
    let prepared = &**PREPARED;
    bencher.bench_local(|| {
        let input = black_box(&input);
        let outputs = black_box(prepared)
            .run(vec![input.clone()])
            .expect("Example runs");
        black_box_drop(outputs);
    });
}

/// The eager path: an `OpCall` by name, a per-thread cache hit.
#[divan::bench(sample_count = SAMPLES, sample_size = SAMPLE_SIZE)]
fn op_call(bencher: Bencher) {
    let input = input();
    // The first call creates the kernel and fills this thread's cache.
    OpCall::new("Example")
        .input(&input)
        .run()
        .expect("Example runs");
    bencher.bench_local(|| {
        let input = black_box(&input);
        let outputs = OpCall::new(black_box("Example"))
            .input(input)
            .run()
            .expect("Example runs");
        black_box_drop(outputs);
    });
}

/// The typed wrapper `#[register_op]` generates (an `OpCall` underneath).
#[divan::bench(sample_count = SAMPLES, sample_size = SAMPLE_SIZE)]
fn typed_wrapper(bencher: Bencher) {
    let input = input();
    Example::call(&input).run().expect("Example runs");
    bencher.bench_local(|| {
        let input = black_box(&input);
        let output = Example::call(input).run().expect("Example runs");
        black_box_drop(output);
    });
}
