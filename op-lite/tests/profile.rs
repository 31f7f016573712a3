//! `Interpreter::invoke_profiled` and the `Profile` it fills: per-node
//! times, the summary by op type, the top nodes and benchmark_model's
//! tables.

mod common;

use std::time::{Duration, Instant};

use common::{ModelBuilder, resolver};
use op_core::{Code, Result};
use op_lite::interpreter::Profile;
use op_lite::kernel::{FnOp, InvokeContext, PrepareContext};
use op_lite::model::BuiltinOperator;
use op_lite::{Interpreter, MutableOpResolver, lite_ensure};
use proptest::prelude::*;

/// How long each `Spin` node busy-waits: long enough to dwarf the other
/// nodes, short enough for a quick test.
const SPIN: Duration = Duration::from_micros(500);

fn same_shape(ctx: &mut PrepareContext<'_>) -> Result<()> {
    let shape = ctx.input_shape(0)?;
    ctx.set_output_shape(0, shape)
}

/// Copies its input after waiting `SPIN` (without sleeping, so that the
/// time is the node's own); fails on a negative first element.
fn spin_invoke(ctx: &mut InvokeContext<'_>) -> Result<()> {
    let start = Instant::now();
    while start.elapsed() < SPIN {
        std::hint::spin_loop();
    }
    let x = ctx.input::<f32>(0)?;
    lite_ensure!(ctx, x[0] >= 0.0);
    ctx.output_mut::<f32>(0)?.copy_from_slice(x);
    Ok(())
}

fn spin_resolver() -> MutableOpResolver {
    let mut resolver = resolver();
    resolver.add_custom("Spin", FnOp::new(same_shape, spin_invoke));
    resolver
}

/// x -> ADD(c) -> Spin -> ADD(c) -> Spin -> Sin -> y.
fn spin_model() -> op_lite::Model {
    let mut b = ModelBuilder::new();
    let x = b.f32("x", &[4]);
    let c = b.constant("c", &[4], &[1.0; 4]);
    let [a1, s1, a2, s2, y] = ["a1", "s1", "a2", "s2", "y"].map(|n| b.f32(n, &[4]));
    b.builtin(BuiltinOperator::ADD, 1, &[x, c], &[a1]);
    b.custom("Spin", &[a1], &[s1]);
    b.builtin(BuiltinOperator::ADD, 1, &[s1, c], &[a2]);
    b.custom("Spin", &[a2], &[s2]);
    b.custom("Sin", &[s2], &[y]);
    b.input(x).output(y);
    b.build()
}

fn allocated(model: &op_lite::Model, resolver: &MutableOpResolver) -> Interpreter {
    let mut interpreter = Interpreter::new(model, resolver).unwrap();
    interpreter.allocate_tensors().unwrap();
    interpreter
}

#[test]
fn the_summary_by_op_counts_nodes_and_puts_the_slowest_op_first() {
    let mut interpreter = allocated(&spin_model(), &spin_resolver());
    interpreter.set_input(0, &[0.5f32; 4]).unwrap();
    let mut profile = Profile::new(&interpreter);
    assert_eq!((profile.runs(), profile.node_count()), (0, 5));
    for _ in 0..3 {
        interpreter.invoke_profiled(&mut profile).unwrap();
    }
    // The profiled invoke computes what the plain one does.
    let expected = (0.5f32 + 2.0).sin();
    assert_eq!(interpreter.output::<f32>(0).unwrap(), [expected; 4]);

    assert_eq!(profile.runs(), 3);
    let rows = profile.by_op();
    let summary: Vec<(&str, usize, u64)> = rows
        .iter()
        .map(|r| (r.op.as_str(), r.count, r.times_called))
        .collect();
    assert_eq!(summary[0], ("Spin", 2, 6));
    let mut rest = summary[1..].to_vec();
    rest.sort();
    assert_eq!(rest, [("ADD", 2, 6), ("Sin", 1, 3)]);
    // Two spins per run, each at least SPIN long.
    assert!(rows[0].average >= 2 * SPIN, "{rows:?}");
    assert!(rows[0].percent > 90.0, "{rows:?}");
    assert!(profile.average() >= rows[0].average);

    let sum: f64 = rows.iter().map(|r| r.percent).sum();
    assert!((sum - 100.0).abs() < 1e-9, "{sum}");
    assert!((rows.last().unwrap().cumulative_percent - 100.0).abs() < 1e-9);
    assert!(rows.windows(2).all(|w| w[0].average >= w[1].average));
    assert!(
        rows.windows(2)
            .all(|w| w[0].cumulative_percent <= w[1].cumulative_percent)
    );
}

#[test]
fn the_top_nodes_are_the_slowest_with_their_names_and_first_times() {
    let mut interpreter = allocated(&spin_model(), &spin_resolver());
    interpreter.set_input(0, &[0.5f32; 4]).unwrap();
    let mut profile = Profile::new(&interpreter);
    for _ in 0..2 {
        interpreter.invoke_profiled(&mut profile).unwrap();
    }
    let top = profile.top_nodes(2);
    let mut found: Vec<(usize, &str, &str)> = top
        .iter()
        .map(|n| (n.index, n.op.as_str(), n.name.as_str()))
        .collect();
    found.sort();
    assert_eq!(found, [(1, "Spin", "s1"), (3, "Spin", "s2")]);
    for node in &top {
        assert!(node.first >= SPIN && node.average >= SPIN, "{node:?}");
        assert_eq!(
            Some(node.average),
            profile.node_total(node.index).map(|t| t / 2)
        );
    }
    assert!(top[1].cumulative_percent > 90.0);
    let all = profile.top_nodes(100);
    assert_eq!(all.len(), 5, "at most every node");
    assert!((all[4].cumulative_percent - 100.0).abs() < 1e-9);
}

#[test]
fn a_failed_run_is_not_recorded_and_reset_forgets_every_run() {
    let mut interpreter = allocated(&spin_model(), &spin_resolver());
    let mut profile = Profile::new(&interpreter);
    interpreter.set_input(0, &[0.5f32; 4]).unwrap();
    interpreter.invoke_profiled(&mut profile).unwrap();
    let after_one = profile.node_total(1).unwrap();
    // -5 + 1 is negative at the first Spin: the run fails there.
    interpreter.set_input(0, &[-5.0f32; 4]).unwrap();
    let err = interpreter.invoke_profiled(&mut profile).unwrap_err();
    assert_eq!(err.context(), ["Node number 1 (Spin) failed to invoke."]);
    assert_eq!(profile.runs(), 1);
    assert_eq!(profile.node_total(1), Some(after_one));

    profile.reset();
    assert_eq!(profile.runs(), 0);
    assert_eq!(profile.average(), Duration::ZERO);
    assert!(profile.by_op().iter().all(|r| r.percent == 0.0));
}

#[test]
fn a_profile_of_another_model_or_an_unprepared_interpreter_is_an_error() {
    let mut interpreter = allocated(&spin_model(), &spin_resolver());
    let other = allocated(&common::add_chain(3, 4), &resolver());
    let mut wrong = Profile::new(&other);
    let err = interpreter.invoke_profiled(&mut wrong).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(
        err.message(),
        "the profile was made for a model of 3 nodes, not this interpreter's 5: make it with \
         Profile::new(&interpreter)"
    );
    let mut unprepared = Interpreter::new(&spin_model(), &spin_resolver()).unwrap();
    let mut profile = Profile::new(&unprepared);
    let err = unprepared.invoke_profiled(&mut profile).unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert_eq!(profile.runs(), 0);
}

#[test]
fn the_display_is_benchmark_model_s_two_tables() {
    let mut interpreter = allocated(&spin_model(), &spin_resolver());
    interpreter.set_input(0, &[0.5f32; 4]).unwrap();
    let mut profile = Profile::new(&interpreter);
    for _ in 0..4 {
        interpreter.invoke_profiled(&mut profile).unwrap();
    }
    let text = profile.to_string();
    let lines: Vec<&str> = text.lines().collect();
    let rule = "==============================";
    assert_eq!(lines[0], format!("{rule} Top by Computation Time {rule}"));
    assert!(lines[1].contains("[node type]") && lines[1].ends_with("[Name]"));
    // Two spins, then the others: 5 nodes, a blank line, the summary.
    assert!(lines[2].trim_start().starts_with("Spin\t"), "{text}");
    assert!(
        lines[2].ends_with("\ts1") || lines[2].ends_with("\ts2"),
        "{text}"
    );
    assert_eq!(lines[7], "");
    assert_eq!(lines[8], format!("{rule} Summary by node type {rule}"));
    let spin: Vec<&str> = lines[10].split('\t').map(str::trim).collect();
    assert_eq!(spin[0], "Spin");
    assert_eq!(spin[1], "2");
    assert_eq!(spin[5], "8", "times called: 2 nodes, 4 runs");
    assert!(spin[3].ends_with('%') && spin[4].ends_with('%'));
    assert!(
        text.ends_with(&format!(
            "Number of nodes executed: 5 in each of 4 runs; time per run in the nodes: {:.3} ms\n",
            profile.average().as_secs_f64() * 1e3
        )),
        "{text}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Whatever the mix of ops, the summary counts each op's nodes, its
    /// shares add up to 100% and the node times add up to the total.
    #[test]
    fn the_summary_counts_every_node_and_its_shares_add_up(
        ops in prop::collection::vec(0..3usize, 1..12),
        runs in 1..4u64,
    ) {
        let mut b = ModelBuilder::new();
        let x = b.f32("x", &[3]);
        let c = b.constant("c", &[3], &[0.25; 3]);
        b.input(x);
        let mut previous = x;
        for (k, &op) in ops.iter().enumerate() {
            let t = b.f32(&format!("t{k}"), &[3]);
            match op {
                0 => b.builtin(BuiltinOperator::ADD, 1, &[previous, c], &[t]),
                1 => b.builtin(BuiltinOperator::MUL, 1, &[previous, c], &[t]),
                _ => b.custom("Sin", &[previous], &[t]),
            };
            previous = t;
        }
        b.output(previous);
        let mut interpreter = allocated(&b.build(), &resolver());
        let mut profile = Profile::new(&interpreter);
        for _ in 0..runs {
            interpreter.invoke_profiled(&mut profile).unwrap();
        }
        let rows = profile.by_op();
        for (name, code) in [("ADD", 0), ("MUL", 1), ("Sin", 2)] {
            let count = ops.iter().filter(|&&o| o == code).count();
            let row = rows.iter().find(|r| r.op == name);
            prop_assert_eq!(row.map_or(0, |r| r.count), count);
            prop_assert_eq!(row.map_or(0, |r| r.times_called), count as u64 * runs);
        }
        let total: Duration = (0..ops.len()).map(|k| profile.node_total(k).unwrap()).sum();
        prop_assert_eq!(profile.average(), total / runs as u32);
        if !total.is_zero() {
            let sum: f64 = rows.iter().map(|r| r.percent).sum();
            prop_assert!((sum - 100.0).abs() < 1e-9);
        }
    }
}
