//! Intra-op threads: how a compute-bound elementwise kernel scales from one
//! thread to two, and what splitting costs when there is nothing to split.
//!
//! - `sin_f64::<threads>`: an op defined here, `Bench>Sin` (`y = sin(x)` on
//!   `double`, through `KernelContext::unary` with a cost of 40 cycles per
//!   element), run on 1e7 elements by a runtime with its own pool of 1 or 2
//!   threads. The input is shared, so each call writes a new output (after
//!   the first call, the buffer the previous output gave back). The target:
//!   2 threads at least 1.7x as fast as 1.
//! - `one_element::direct`: the block function called on a one-element
//!   slice, without a pool; `one_element::shard_slice`: the same through
//!   `ThreadPool::shard_slice` of a 2-thread pool, which runs it inline.
//!   The difference is what the sharded path adds to a tiny call (the
//!   target: at most 5 ns).
//!
//! The machine has two cores shared with other work: read `sin_f64::<2>` as
//! a ratio of `sin_f64::<1>` from the same run.
//!
//! Run with:
//!
//! ```text
//! cargo bench -p op-kernels --bench threads
//! ```

use std::sync::Arc;

use divan::counter::ItemsCount;
use divan::{Bencher, black_box, black_box_drop};
use op_core::threads::ThreadPool;
use op_core::{DType, KernelContext, Result, Runtime, Tensor, kernel, register_op};

fn main() {
    op_kernels::link();
    divan::main();
}

/// `y = sin(x)`, elementwise, on `double`: a compute-bound kernel.
///
/// x: any shape.
/// y: `sin(x)`.
#[register_op(
    name = "Bench>Sin",
    inputs("x: double"),
    outputs("y: double"),
    shape = "unchanged"
)]
struct BenchSin;

/// A double-precision `sin` costs some tens of cycles.
const SIN_COST: usize = 40;

#[kernel(op = BenchSin)]
fn bench_sin(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.unary(0, 0, SIN_COST, |x: &f64| x.sin())
}

/// The element count of the compute-bound runs.
const N: usize = 10_000_000;

#[divan::bench(consts = [1, 2], sample_count = 30)]
fn sin_f64<const THREADS: usize>(bencher: Bencher) {
    let values = (0..N).map(|i| i as f64 * 1e-3).collect();
    let input = Tensor::from_vec([N], values).expect("N values");
    let pool = Arc::new(ThreadPool::new(THREADS).expect("a pool"));
    let prepared = Runtime::new()
        .with_threads(pool)
        .prepare("Bench>Sin", &[DType::F64.into()], &[])
        .expect("Bench>Sin is registered");
    let check = prepared.run(vec![input.clone()]).expect("runs");
    assert_eq!(check[0].as_slice::<f64>().unwrap()[1000], 1.0f64.sin());
    bencher.counter(ItemsCount::new(N)).bench_local(|| {
        let outputs = prepared.run(vec![input.clone()]).expect("runs");
        black_box_drop(outputs);
    });
}

/// The block function of both `one_element` variants.
fn sine_block(_offset: usize, block: &mut [f64]) {
    for v in block {
        *v = v.sin();
    }
}

mod one_element {
    use super::*;

    #[divan::bench(sample_count = 1000, sample_size = 1000)]
    fn direct(bencher: Bencher) {
        let mut value = [0.5f64];
        bencher.bench_local(|| sine_block(0, black_box(&mut value[..])));
    }

    #[divan::bench(sample_count = 1000, sample_size = 1000)]
    fn shard_slice(bencher: Bencher) {
        let pool = ThreadPool::new(2).expect("a pool");
        let mut value = [0.5f64];
        bencher.bench_local(|| {
            black_box(&pool).shard_slice(black_box(&mut value[..]), SIN_COST, sine_block)
        });
    }
}
