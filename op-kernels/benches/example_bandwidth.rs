//! Bandwidth of the `Example` op (doubles its input) on large `f32`
//! tensors, against a plain copy of the same bytes.
//!
//! Both variants read the input once and write a freshly allocated output
//! tensor of the same shape:
//!
//! - `copy`: the baseline, `Tensor::from_vec(input.dims(), slice.to_vec())`
//!   (allocate and copy; no runtime, no arithmetic).
//! - `example`: `PreparedOp::run(vec![input.clone()])` on `Example` prepared
//!   once for `float` (the cached-kernel path, which allocates the output
//!   and doubles into it).
//!
//! The byte counter counts input plus output bytes (`2 * 4 * n`) for both,
//! so divan's `bytes/s` columns compare directly. The output is dropped
//! inside the timed closure, so the allocation's page faults and its release
//! count for both alike. The machine is noisy: read `example` as a ratio of
//! `copy`'s bandwidth from the same run (the target is at least 0.9x).
//!
//! Run with:
//!
//! ```text
//! cargo bench -p op-kernels --bench example_bandwidth
//! ```

use divan::counter::BytesCount;
use divan::{Bencher, black_box, black_box_drop};
use op_core::{DType, Runtime, Tensor};

fn main() {
    op_kernels::link();
    divan::main();
}

/// The element counts measured: 1e6 and 1e7 `f32`s (4 MB and 40 MB).
const SIZES: [usize; 2] = [1_000_000, 10_000_000];

/// Samples per benchmark, enough for a steady median at these sizes.
const SAMPLES: u32 = 200;

/// An input of `n` elements (varied values, so nothing is constant-folded).
fn input(n: usize) -> Tensor {
    let values = (0..n).map(|i| (i % 1024) as f32 * 0.5).collect();
    Tensor::from_vec([n], values).expect("n values for n elements")
}

/// Bytes read plus bytes written by one call over `n` `f32`s.
fn bytes(n: usize) -> BytesCount {
    BytesCount::new(2 * n * size_of::<f32>())
}

/// The baseline: allocate an output tensor and copy the input into it.
#[divan::bench(args = SIZES, sample_count = SAMPLES)]
fn copy(bencher: Bencher, n: usize) {
    let input = input(n);
    bencher.counter(bytes(n)).bench_local(|| {
        let input = black_box(&input);
        let slice = input.as_slice::<f32>().expect("float input");
        let output = Tensor::from_vec(input.dims(), slice.to_vec()).expect("same shape");
        black_box_drop(output);
    });
}

/// `Example` through the prepared (cached-kernel) path.
#[divan::bench(args = SIZES, sample_count = SAMPLES)]
fn example(bencher: Bencher, n: usize) {
    let input = input(n);
    let prepared = Runtime::global()
        .prepare("Example", &[DType::F32.into()], &[])
        .expect("Example is registered for float");
    bencher.counter(bytes(n)).bench_local(|| {
        let input = black_box(&input);
        let outputs = prepared.run(vec![input.clone()]).expect("Example runs");
        black_box_drop(outputs);
    });
}
