//! One training step of seed 002's model (issue 14, section 6), eagerly
//! and as a graph, each against its own forward pass alone in the same
//! run:
//!
//! - `eager/forward`: the loss, computed eagerly with no tape;
//! - `eager/step`: forward on a tape, backward, Adam's update;
//! - `graph/forward`: the graph run fetching only the loss;
//! - `graph/step`: the graph run fetching the loss and running Adam's
//!   update (forward, the symbolic backward pass, the update).
//!
//! The tape's own recording cost per op is `op-autodiff`'s `tape`
//! benchmark.
//!
//! Run with:
//!
//! ```text
//! cargo bench -p examples --bench sin_training
//! ```

use divan::Bencher;
use examples::sin::{EagerTraining, GraphTraining};

fn main() {
    op_kernels::link();
    divan::main();
}

mod eager {
    use super::*;

    #[divan::bench]
    fn forward(bencher: Bencher) {
        let model = EagerTraining::new().unwrap();
        bencher.bench_local(|| model.forward().unwrap());
    }

    #[divan::bench]
    fn step(bencher: Bencher) {
        let mut model = EagerTraining::new().unwrap();
        bencher.bench_local(|| model.step().unwrap());
    }
}

mod graph {
    use super::*;

    #[divan::bench]
    fn forward(bencher: Bencher) {
        let model = GraphTraining::new().unwrap();
        bencher.bench_local(|| model.forward().unwrap());
    }

    #[divan::bench]
    fn step(bencher: Bencher) {
        let model = GraphTraining::new().unwrap();
        bencher.bench_local(|| model.step().unwrap());
    }
}
