//! Bandwidth of the `Example` op (doubles its input) on large `f32`
//! tensors, against a copy of the same bytes into a preallocated buffer.
//!
//! Every variant reads `n` floats and writes `n` floats; the byte counter
//! counts both (`2 * 4 * n`), so divan's `bytes/s` columns compare directly.
//! Outputs are dropped inside the timed closure, so freeing counts too.
//!
//! - `copy`: the baseline, `dst.copy_from_slice(src)` into a buffer
//!   allocated (and touched) once: memory traffic alone, no allocation, no
//!   arithmetic, one thread.
//! - `fresh_output::<threads>`: `PreparedOp::run(vec![input.clone()])` on
//!   `Example` prepared once for `float` on a runtime with its own pool of 1
//!   or 2 intra-op threads. The input is shared (the benchmark keeps it), so
//!   the kernel cannot reuse it and takes a new output from the runtime's
//!   allocator on every call; after the first call that is the buffer the
//!   previous output gave back, with its pages already mapped.
//! - `forwarded::<threads>`: the input is moved into the call
//!   (`run(vec![tensor])`), so the kernel doubles it in place and the output
//!   is the same buffer, moved into the next call. (The values double on
//!   every call and reach infinity; the speed does not change.)
//!
//! The machine is noisy: read each figure as a ratio of `copy`'s bandwidth
//! from the same run (the target is at least 0.9x for `fresh_output`).
//!
//! Run with:
//!
//! ```text
//! cargo bench -p op-kernels --bench example_bandwidth
//! ```

use std::sync::Arc;

use divan::counter::BytesCount;
use divan::{Bencher, black_box, black_box_drop};
use op_core::threads::ThreadPool;
use op_core::{DType, PreparedOp, Runtime, Tensor};

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

/// `Example` for `float`, prepared on a runtime with `threads` intra-op
/// threads of its own.
fn prepared(threads: usize) -> Arc<PreparedOp> {
    let pool = ThreadPool::new(threads).expect("a thread pool");
    Runtime::new()
        .with_threads(Arc::new(pool))
        .prepare("Example", &[DType::F32.into()], &[])
        .expect("Example is registered for float")
}

/// The baseline: copy the input into a preallocated output.
#[divan::bench(args = SIZES, sample_count = SAMPLES)]
fn copy(bencher: Bencher, n: usize) {
    let input = input(n);
    let src = input.as_slice::<f32>().expect("float input");
    let mut dst = vec![0.0f32; n];
    bencher.counter(bytes(n)).bench_local(|| {
        dst.copy_from_slice(black_box(src));
        black_box(&mut dst);
    });
}

/// `Example` with a shared input: a new output every call.
#[divan::bench(args = SIZES, consts = [1, 2], sample_count = SAMPLES)]
fn fresh_output<const THREADS: usize>(bencher: Bencher, n: usize) {
    let input = input(n);
    let prepared = prepared(THREADS);
    let outputs = prepared.run(vec![input.clone()]).expect("Example runs");
    assert_eq!(outputs[0].as_slice::<f32>().unwrap()[3], 3.0);
    bencher.counter(bytes(n)).bench_local(|| {
        let input = black_box(&input);
        let outputs = prepared.run(vec![input.clone()]).expect("Example runs");
        black_box_drop(outputs);
    });
}

/// `Example` with a moved-in input: doubled in place.
#[divan::bench(args = SIZES, consts = [1, 2], sample_count = SAMPLES)]
fn forwarded<const THREADS: usize>(bencher: Bencher, n: usize) {
    let prepared = prepared(THREADS);
    let mut tensor = Some(input(n));
    let ptr = tensor.as_ref().unwrap().as_slice::<f32>().unwrap().as_ptr();
    bencher.counter(bytes(n)).bench_local(|| {
        let input = tensor.take().expect("the last output");
        let mut outputs = prepared.run(vec![input]).expect("Example runs");
        tensor = outputs.pop();
    });
    let output = tensor.expect("the last output");
    assert_eq!(
        output.as_slice::<f32>().unwrap().as_ptr(),
        ptr,
        "the input was forwarded"
    );
}
