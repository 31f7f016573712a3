//! Random graphs against a naive reference: each node evaluated eagerly,
//! one call at a time, with the same typed wrappers. Whatever the graph's
//! shape (values read by several nodes, fetched and read, chains that work
//! in place, nodes with two outputs), the plan's moves, clones and frees
//! must give the eager values, on one thread and on two.

use std::sync::Arc;

use op_core::{DType, Tensor};
use op_graph::{Graph, GraphBuilder, Output, Session};
use op_kernels::example::Example;
use op_kernels::identity::{Identity, IdentityN};
use op_kernels::multiplex::MultiplexDense;
use proptest::prelude::*;

mod common;
use common::TestCopyDouble;

/// One node: an op kind and two picks among the values made before.
type NodeSpec = (u8, usize, usize);

/// The values a node of `kind` makes from `a` and `b`, on any executor's
/// values, by the wrappers `run` gives.
fn apply<V: Clone>(
    kind: u8,
    a: V,
    b: V,
    cond: V,
    unary: impl Fn(u8, V) -> V,
    pair: impl Fn(V, V) -> Vec<V>,
    multiplex: impl Fn(V, V, V) -> V,
) -> Vec<V> {
    match kind {
        0..=2 => vec![unary(kind, a)],
        3 => pair(a, b),
        _ => vec![multiplex(cond, a, b)],
    }
}

fn graph(specs: &[NodeSpec]) -> (Graph, Output, Vec<Output>) {
    let b = GraphBuilder::new();
    let x = b.placeholder("x", DType::F32, "[3]").unwrap();
    let c = b
        .constant(Tensor::from_vec([3], vec![0.5f32, -1.0, 2.0]).unwrap())
        .unwrap();
    let cond = b
        .constant(Tensor::from_vec([3], vec![true, false, true]).unwrap())
        .unwrap();
    let mut values = vec![x, c];
    for &(kind, i, j) in specs {
        let (a, bb) = (values[i % values.len()], values[j % values.len()]);
        let made = apply(
            kind,
            a,
            bb,
            cond,
            |kind, a| match kind {
                0 => Example::call_with(a).run_on(&b).unwrap(),
                1 => TestCopyDouble::call_with(a).run_on(&b).unwrap(),
                _ => Identity::call_with(a).run_on(&b).unwrap(),
            },
            |a, c| IdentityN::call_with([a, c]).run_on(&b).unwrap(),
            |cond, a, c| MultiplexDense::call_with(cond, a, c).run_on(&b).unwrap(),
        );
        values.extend(made);
    }
    (b.into_graph(), x, values)
}

fn eager(specs: &[NodeSpec], x: &Tensor) -> Vec<Tensor> {
    let c = Tensor::from_vec([3], vec![0.5f32, -1.0, 2.0]).unwrap();
    let cond = Tensor::from_vec([3], vec![true, false, true]).unwrap();
    let mut values = vec![x.clone(), c];
    for &(kind, i, j) in specs {
        let (a, b) = (
            values[i % values.len()].clone(),
            values[j % values.len()].clone(),
        );
        let made = apply(
            kind,
            a,
            b,
            cond.clone(),
            |kind, a| match kind {
                0 => Example::call(a).run().unwrap(),
                1 => TestCopyDouble::call(a).run().unwrap(),
                _ => Identity::call(a).run().unwrap(),
            },
            |a, b| IdentityN::call([a, b]).run().unwrap(),
            |cond, a, b| MultiplexDense::call(cond, a, b).run().unwrap(),
        );
        values.extend(made);
    }
    values
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_graphs_give_the_eager_values_on_one_thread_and_on_two(
        specs in prop::collection::vec((0u8..5, any::<usize>(), any::<usize>()), 1..24),
        picks in prop::collection::vec(any::<usize>(), 1..6),
        x in prop::collection::vec(-4.0f32..4.0, 3),
    ) {
        common::link();
        let x = Tensor::from_vec([3], x).unwrap();
        let expected = eager(&specs, &x);
        let (graph, input, outputs) = graph(&specs);
        let graph = Arc::new(graph);
        for threads in [1, 2] {
            let session = Session::builder(graph.clone()).inter_op_threads(threads).build().unwrap();
            let mut plan = session.plan().feed(input);
            for pick in &picks {
                plan = plan.fetch(outputs[pick % outputs.len()]);
            }
            let plan = plan.build().unwrap();
            for _ in 0..3 {
                // Handed over: kernels may work in its buffer.
                let got = plan.run([x.as_slice::<f32>().unwrap().to_vec()].map(|v| Tensor::from_vec([3], v).unwrap())).unwrap();
                for (value, pick) in got.iter().zip(&picks) {
                    prop_assert_eq!(value, &expected[pick % outputs.len()]);
                }
            }
        }
    }
}
