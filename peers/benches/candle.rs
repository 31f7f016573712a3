//! "Double every element of an `f32` tensor" (our `Example` op), done by
//! opkit and by candle (candle-core, CPU) in the same process, against two
//! plain-Rust baselines, at 1, 1e6 and 1e7 elements.
//!
//! Every variant reads `n` input `f32`s and writes `n` output `f32`s, so all
//! have the same byte counter, `2 * 4 * n` (bytes read plus bytes written),
//! and divan's `bytes/s` columns compare directly. Outputs are dropped inside
//! the timed closure: a variant that allocates its output also pays for
//! freeing it. Two groups run every variant: `one_element` (n = 1, a fixed
//! 100 calls per sample) and `bandwidth` (1e6 and 1e7); a variant
//! `ours::prepared` below is `ours_prepared` in both. The variants:
//!
//! - `ours::prepared`: `PreparedOp::run(vec![input.clone()])` on `Example`
//!   prepared once with `Runtime::global().prepare("Example", &[F32], &[])`:
//!   the cached-kernel path. The input is shared (the bench keeps its own
//!   reference), so the kernel cannot forward it and allocates its output.
//! - `ours::op_call`: the eager path,
//!   `OpCall::new("Example").input(&input).run()`, a per-thread cache hit on
//!   every call after the first; the input is shared, as above.
//! - `ours::prepared_moved`: `PreparedOp::run(vec![input])` where `input` is
//!   a fresh tensor per iteration (made by divan's `with_inputs`, untimed)
//!   moved into the call, so a kernel may forward its buffer to the output
//!   and double it in place (`Example` does, through `KernelContext::unary`).
//!   The inputs are made outside the timing but freed inside it (by the call,
//!   or with the output they became), so the allocator's returning and
//!   re-faulting of pages counts here and not in the shared-input variants.
//! - `candle::custom_op`: `tensor.apply_op1(Double)` on a candle CPU tensor,
//!   where `Double` is a `candle_core::CustomOp1` whose `cpu_fwd` matches
//!   `CpuStorage::F32` and returns a new `CpuStorage::F32` of the doubled
//!   values, as candle's own custom-op examples do: a user-defined op behind
//!   candle's dispatch, the peer of `ours::prepared`.
//! - `candle::mul_scalar`: candle's builtin `(&tensor * 2.0)`, which candle
//!   runs as `tensor.affine(2.0, 0.0)`: a second candle reference, with no
//!   custom op.
//! - `baseline::copy`: `dst.copy_from_slice(src)` into a preallocated (and
//!   already touched) buffer: the memory traffic alone, with no allocation and
//!   no arithmetic.
//! - `baseline::double_vec`: `times_two(src)`, doubling into a new `Vec`
//!   with no framework around it.
//!
//! The arithmetic is `x + x` everywhere but in `candle::mul_scalar`:
//! `op_kernels::example::times_two` (collected into a new `Vec`) in the
//! `Double` custom op and `double_vec`, and the same per-element function
//! (`Double::double`) in `Example`'s kernel, which writes into an output
//! from the runtime's allocator (or the input's own buffer) and splits large
//! inputs over the intra-op threads (two on this machine). So the gaps
//! between `double_vec`, `ours::*` and `candle::custom_op` are the
//! frameworks' own costs and choices: dispatch, tensor wrapping, where the
//! output's memory comes from, and threads.
//!
//! In `one_element` the figures are the per-call overhead; in `bandwidth`,
//! at 1e6 (4 MB) and 1e7 (40 MB), they are bandwidth plus the cost of a fresh output buffer (all but
//! `copy` and `ours::prepared_moved` make one). On Linux with glibc, 40 MB is
//! above malloc's largest mmap threshold (32 MiB), so at 1e7 every output
//! from the system allocator is a new mapping whose pages fault in on first
//! write and are unmapped on drop; ours come from the runtime's caching
//! allocator, which keeps the buffer the previous output gave back. Every
//! variant checks its output once before it is timed. The machine is noisy:
//! read the figures as ratios against each other from the same run
//! (ours/candle, ours/copy), not as absolutes.
//!
//! Run with (from the repository root):
//!
//! ```text
//! cd peers && cargo bench --bench candle
//! ```

use std::sync::{Arc, LazyLock};

use divan::counter::BytesCount;
use divan::{Bencher, black_box, black_box_drop};
use op_core::{DType, PreparedOp, Runtime};
use op_kernels::example::times_two;

fn main() {
    op_kernels::link();
    divan::main();
}

/// The element counts of the bandwidth variants: 1e6 and 1e7 (4 MB and
/// 40 MB).
const SIZES: [usize; 2] = [1_000_000, 10_000_000];

/// Samples per bandwidth benchmark: twice divan's default 100, to steady the
/// medians on a noisy machine.
const SAMPLES: u32 = 200;

/// One element: the per-call overhead of every variant, timed as
/// `op-kernels`' dispatch bench times it: a fixed 100 calls per sample and
/// 1000 samples. (Left to itself, divan's tuning sometimes gives the first
/// variant it times one call per sample, which measures the timer.)
mod one_element {
    use super::*;

    const SAMPLES: u32 = 1000;
    const CALLS: u32 = 100;

    #[divan::bench(sample_count = SAMPLES, sample_size = CALLS)]
    fn ours_prepared(bencher: Bencher) {
        ours::prepared(bencher, 1);
    }

    #[divan::bench(sample_count = SAMPLES, sample_size = CALLS)]
    fn ours_op_call(bencher: Bencher) {
        ours::op_call(bencher, 1);
    }

    #[divan::bench(sample_count = SAMPLES, sample_size = CALLS)]
    fn ours_prepared_moved(bencher: Bencher) {
        ours::prepared_moved(bencher, 1);
    }

    #[divan::bench(sample_count = SAMPLES, sample_size = CALLS)]
    fn candle_custom_op(bencher: Bencher) {
        candle::custom_op(bencher, 1);
    }

    #[divan::bench(sample_count = SAMPLES, sample_size = CALLS)]
    fn candle_mul_scalar(bencher: Bencher) {
        candle::mul_scalar(bencher, 1);
    }

    #[divan::bench(sample_count = SAMPLES, sample_size = CALLS)]
    fn baseline_double_vec(bencher: Bencher) {
        baseline::double_vec(bencher, 1);
    }
}

/// 1e6 and 1e7 elements: bandwidth, with divan's own calls per sample.
mod bandwidth {
    use super::*;

    #[divan::bench(args = SIZES, sample_count = SAMPLES)]
    fn ours_prepared(bencher: Bencher, n: usize) {
        ours::prepared(bencher, n);
    }

    #[divan::bench(args = SIZES, sample_count = SAMPLES)]
    fn ours_op_call(bencher: Bencher, n: usize) {
        ours::op_call(bencher, n);
    }

    #[divan::bench(args = SIZES, sample_count = SAMPLES)]
    fn ours_prepared_moved(bencher: Bencher, n: usize) {
        ours::prepared_moved(bencher, n);
    }

    #[divan::bench(args = SIZES, sample_count = SAMPLES)]
    fn candle_custom_op(bencher: Bencher, n: usize) {
        candle::custom_op(bencher, n);
    }

    #[divan::bench(args = SIZES, sample_count = SAMPLES)]
    fn candle_mul_scalar(bencher: Bencher, n: usize) {
        candle::mul_scalar(bencher, n);
    }

    #[divan::bench(args = SIZES, sample_count = SAMPLES)]
    fn baseline_copy(bencher: Bencher, n: usize) {
        baseline::copy(bencher, n);
    }

    #[divan::bench(args = SIZES, sample_count = SAMPLES)]
    fn baseline_double_vec(bencher: Bencher, n: usize) {
        baseline::double_vec(bencher, n);
    }
}

/// The input values for `n` elements (varied, so nothing is constant-folded).
fn values(n: usize) -> Vec<f32> {
    (0..n).map(|i| (i % 1024) as f32 * 0.5).collect()
}

/// Bytes read plus bytes written by one doubling of `n` `f32`s.
fn bytes(n: usize) -> BytesCount {
    BytesCount::new(2 * n * size_of::<f32>())
}

/// Checks, before a variant is timed, that it doubled the `n` input values.
#[track_caller]
fn check(output: &[f32], n: usize) {
    assert!(output == times_two(&values(n)), "not the doubled input");
}

/// opkit: the `Example` op.
mod ours {
    use super::*;
    use op_core::{OpCall, Tensor};

    /// The `Example` node for `float` inputs, prepared once.
    static PREPARED: LazyLock<Arc<PreparedOp>> = LazyLock::new(|| {
        Runtime::global()
            .prepare("Example", &[DType::F32.into()], &[])
            .expect("Example is registered for float")
    });

    fn input(values: Vec<f32>) -> Tensor {
        let n = values.len();
        Tensor::from_vec([n], values).expect("n values for n elements")
    }

    fn doubled(outputs: &[Tensor]) -> &[f32] {
        outputs[0].as_slice::<f32>().expect("a float output")
    }

    /// The cached-kernel path, with a shared input.
    pub(super) fn prepared(bencher: Bencher, n: usize) {
        let input = input(values(n));
        let prepared = &**PREPARED;
        check(doubled(&prepared.run(vec![input.clone()]).unwrap()), n);
        bencher.counter(bytes(n)).bench_local(|| {
            let input = black_box(&input);
            let outputs = black_box(prepared)
                .run(vec![input.clone()])
                .expect("Example runs");
            black_box_drop(outputs);
        });
    }

    /// The eager path, with a shared input.
    pub(super) fn op_call(bencher: Bencher, n: usize) {
        let input = input(values(n));
        // The first call creates the kernel and fills this thread's cache.
        let outputs = OpCall::new("Example").input(&input).run().unwrap();
        check(doubled(&outputs), n);
        bencher.counter(bytes(n)).bench_local(|| {
            let input = black_box(&input);
            let outputs = OpCall::new(black_box("Example"))
                .input(input)
                .run()
                .expect("Example runs");
            black_box_drop(outputs);
        });
    }

    /// The cached-kernel path, with each input moved in (forwardable).
    pub(super) fn prepared_moved(bencher: Bencher, n: usize) {
        let values = values(n);
        let prepared = &**PREPARED;
        check(
            doubled(&prepared.run(vec![input(values.clone())]).unwrap()),
            n,
        );
        bencher
            .counter(bytes(n))
            .with_inputs(|| input(values.clone()))
            .bench_local_values(|input| {
                let outputs = black_box(prepared).run(vec![input]).expect("Example runs");
                black_box_drop(outputs);
            });
    }
}

/// candle: a custom op and a builtin.
mod candle {
    use super::*;
    use candle_core::{CpuStorage, CustomOp1, Device, Layout, Shape, Tensor};

    /// Doubles an `f32` tensor: a user-defined candle op, written as candle's
    /// custom-op examples write them.
    struct Double;

    impl CustomOp1 for Double {
        fn name(&self) -> &'static str {
            "double"
        }

        fn cpu_fwd(
            &self,
            storage: &CpuStorage,
            layout: &Layout,
        ) -> candle_core::Result<(CpuStorage, Shape)> {
            let CpuStorage::F32(values) = storage else {
                candle_core::bail!("double: only f32 is implemented");
            };
            let Some((start, end)) = layout.contiguous_offsets() else {
                candle_core::bail!("double: the input must be contiguous");
            };
            let doubled = times_two(&values[start..end]);
            Ok((CpuStorage::F32(doubled), layout.shape().clone()))
        }
    }

    fn input(n: usize) -> Tensor {
        Tensor::from_vec(values(n), n, &Device::Cpu).expect("n values for n elements")
    }

    /// A user-defined op: `CustomOp1` through `apply_op1`.
    pub(super) fn custom_op(bencher: Bencher, n: usize) {
        let input = input(n);
        check(
            &input.apply_op1(Double).unwrap().to_vec1::<f32>().unwrap(),
            n,
        );
        bencher.counter(bytes(n)).bench_local(|| {
            let output = black_box(&input).apply_op1(Double).expect("Double runs");
            black_box_drop(output);
        });
    }

    /// The builtin: `&tensor * 2.0`, that is `tensor.affine(2.0, 0.0)`.
    pub(super) fn mul_scalar(bencher: Bencher, n: usize) {
        let input = input(n);
        check(&(&input * 2.0).unwrap().to_vec1::<f32>().unwrap(), n);
        bencher.counter(bytes(n)).bench_local(|| {
            let output = (black_box(&input) * 2.0).expect("affine runs");
            black_box_drop(output);
        });
    }
}

/// Plain Rust: no tensors, no framework.
mod baseline {
    use super::*;

    /// The memory traffic alone: copy into a buffer that already exists.
    pub(super) fn copy(bencher: Bencher, n: usize) {
        let src = values(n);
        // A clone, not `vec![0.0; n]`: its pages are already touched.
        let mut dst = src.clone();
        bencher.counter(bytes(n)).bench_local(|| {
            black_box(&mut dst).copy_from_slice(black_box(&src));
        });
    }

    /// The computation alone: double into a new `Vec`.
    pub(super) fn double_vec(bencher: Bencher, n: usize) {
        let src = values(n);
        check(&times_two(&src), n);
        bencher.counter(bytes(n)).bench_local(|| {
            black_box_drop(times_two(black_box(&src)));
        });
    }
}
