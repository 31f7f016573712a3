//! The bridge's per-node cost: `invoke` on a chain of 200 small additions
//! (`t[k+1] = t[k] + c`, 16 floats each), the ADD builtin
//! (`BuiltinOpResolver`) against the framework's `AddV2` run as a custom
//! op through `FrameworkOps` (inputs lent from the arena, the output made
//! in it by the framework kernel), in the same run.
//!
//! ```sh
//! cargo bench -p op-lite --bench bridge
//! ```
//!
//! divan prints both, per run of 200 nodes and as nodes per second.

#[path = "../tests/common/mod.rs"]
mod common;

use common::ModelBuilder;
use divan::Bencher;
use divan::counter::ItemsCount;
use op_lite::bridge::FrameworkOps;
use op_lite::builtins::BuiltinOpResolver;
use op_lite::model::BuiltinOperator;
use op_lite::{Interpreter, Model, OpResolver};

const NODES: usize = 200;
const LEN: usize = 16;

fn main() {
    op_kernels::link();
    divan::main();
}

/// The chain, each node the builtin ADD or the custom op `AddV2`.
fn chain(custom: bool) -> Model {
    let mut b = ModelBuilder::new();
    let x = b.f32("x", &[LEN]);
    let c = b.constant("c", &[LEN], &[1.0; LEN]);
    b.input(x);
    let mut previous = x;
    for k in 0..NODES {
        let t = b.f32(&format!("t{k}"), &[LEN]);
        if custom {
            b.custom("AddV2", &[previous, c], &[t]);
        } else {
            b.builtin(BuiltinOperator::ADD, 1, &[previous, c], &[t]);
        }
        previous = t;
    }
    b.output(previous);
    b.build()
}

fn run(bencher: Bencher, model: &Model, resolver: &dyn OpResolver) {
    let mut interpreter = Interpreter::new(model, resolver).unwrap();
    interpreter.allocate_tensors().unwrap();
    interpreter.set_input(0, &[0.5f32; LEN]).unwrap();
    interpreter.invoke().unwrap();
    assert_eq!(
        interpreter.output::<f32>(0).unwrap(),
        [0.5 + NODES as f32; LEN]
    );
    bencher
        .counter(ItemsCount::new(NODES))
        .bench_local(|| interpreter.invoke().unwrap());
}

#[divan::bench]
fn builtin_add(bencher: Bencher) {
    run(bencher, &chain(false), &BuiltinOpResolver::new());
}

#[divan::bench]
fn framework_add_v2(bencher: Bencher) {
    run(bencher, &chain(true), &FrameworkOps::new());
}
