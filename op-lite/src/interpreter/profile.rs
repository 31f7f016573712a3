//! Per-node timing of [`Interpreter::invoke_profiled`]: TensorFlow Lite's
//! op profiler, and the tables its `benchmark_model` prints from it.
//!
//! A [`Profile`] is sized for one interpreter before the first run (one
//! slot per node, the op names and output names copied then), so that a
//! profiled invoke, like a plain one, allocates nothing. It accumulates
//! over runs; [`Profile::by_op`] and [`Profile::top_nodes`] summarize, and
//! its `Display` prints both tables as `benchmark_model` does:
//!
//! ```text
//! ============================== Top by Computation Time ==============================
//!                      [node type]          [first]         [avg ms]             [%]          [cdf%]  [times called]  [Name]
//!                          CONV_2D            0.114            0.101         78.906%         78.906%              10  conv/Relu
//! ...
//! ============================== Summary by node type ==============================
//!                      [Node type]          [count]         [avg ms]          [avg %]          [cdf %]  [times called]
//!                          CONV_2D                1            0.101          78.906%          78.906%              10
//! ```
//!
//! (`benchmark_model` also has a `[mem KB]` column; this runtime plans all
//! memory before the first invoke, so there is nothing per node to show.)

use std::fmt;
use std::time::{Duration, Instant};

use op_core::{Error, Result};

use super::Interpreter;

/// The per-node times of an interpreter's profiled invokes, summed over
/// runs.
///
/// ```
/// # use op_lite::kernel::{FnOp, InvokeContext, PrepareContext};
/// # use op_lite::model::*;
/// # use op_lite::{Interpreter, MutableOpResolver};
/// # use op_core::DType;
/// # fn prepare(ctx: &mut PrepareContext<'_>) -> op_core::Result<()> {
/// #     let shape = ctx.input_shape(0)?;
/// #     ctx.set_output_shape(0, shape)
/// # }
/// # fn invoke(ctx: &mut InvokeContext<'_>) -> op_core::Result<()> {
/// #     let x = ctx.input::<f32>(0)?;
/// #     for (y, x) in ctx.output_mut::<f32>(0)?.iter_mut().zip(x) { *y = x.sin(); }
/// #     Ok(())
/// # }
/// # let tensor = |name: &str| TensorInfo {
/// #     name: name.into(), dtype: DType::F32, shape: vec![3], shape_signature: None,
/// #     buffer: 0, quantization: None, is_variable: false,
/// # };
/// # let model = Model {
/// #     operator_codes: vec![OperatorCode {
/// #         builtin: BuiltinOperator::CUSTOM, custom_name: Some("Sin".into()), version: 1,
/// #     }],
/// #     subgraphs: vec![Subgraph {
/// #         tensors: vec![tensor("x"), tensor("y")], inputs: vec![0], outputs: vec![1],
/// #         operators: vec![Operator {
/// #             opcode_index: 0, inputs: vec![Some(0)], outputs: vec![1], intermediates: vec![],
/// #             builtin_options: BuiltinOptions::None, custom_options: vec![],
/// #         }],
/// #         ..Subgraph::default()
/// #     }],
/// #     buffers: vec![Buffer::default()],
/// #     ..Model::default()
/// # };
/// use op_lite::interpreter::Profile;
///
/// // `model` runs one custom op, "Sin".
/// let mut resolver = MutableOpResolver::new();
/// resolver.add_custom("Sin", FnOp::new(prepare, invoke));
/// let mut interpreter = Interpreter::new(&model, &resolver)?;
/// interpreter.allocate_tensors()?;
/// let mut profile = Profile::new(&interpreter);
/// for _ in 0..10 {
///     interpreter.invoke_profiled(&mut profile)?;
/// }
/// assert_eq!(profile.runs(), 10);
/// let by_op = profile.by_op();
/// assert_eq!((by_op[0].op.as_str(), by_op[0].count), ("Sin", 1));
/// println!("{profile}"); // benchmark_model's two tables
/// # Ok::<(), op_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Profile {
    /// Each node's op name (`CONV_2D`, or a custom op's name).
    ops: Vec<String>,
    /// Each node's name as `benchmark_model` gives it: its first output
    /// tensor's name.
    names: Vec<String>,
    /// The times of the run in progress, added to `total` when it ends
    /// well (so that a failed run counts nowhere).
    current: Vec<Duration>,
    total: Vec<Duration>,
    /// The times of the first complete run.
    first: Vec<Duration>,
    runs: u64,
}

/// One op type's share of the runs: a row of `benchmark_model`'s "Summary
/// by node type".
#[derive(Clone, Debug, PartialEq)]
pub struct OpTime {
    /// The op's name: a builtin's (`CONV_2D`) or a custom op's.
    pub op: String,
    /// How many nodes of the model run it.
    pub count: usize,
    /// The time of all its nodes together, per run.
    pub average: Duration,
    /// Its share of the time of all nodes, in percent.
    pub percent: f64,
    /// The share of this op and every op before it in the list, in percent.
    pub cumulative_percent: f64,
    /// How many times its nodes ran: `count` times the runs.
    pub times_called: u64,
}

/// One node's share of the runs: a row of `benchmark_model`'s "Top by
/// Computation Time".
#[derive(Clone, Debug, PartialEq)]
pub struct NodeTime {
    /// The node's position in the model.
    pub index: usize,
    /// Its op's name.
    pub op: String,
    /// Its name: its first output tensor's.
    pub name: String,
    /// Its time in the first run.
    pub first: Duration,
    /// Its time per run.
    pub average: Duration,
    /// Its share of the time of all nodes, in percent.
    pub percent: f64,
    /// The share of this node and every node before it in the list, in
    /// percent.
    pub cumulative_percent: f64,
}

impl Profile {
    /// An empty profile for `interpreter`'s nodes (the only interpreter
    /// whose runs it can record: it must have as many nodes).
    pub fn new(interpreter: &Interpreter) -> Profile {
        let n = interpreter.nodes.len();
        let names = interpreter
            .nodes
            .iter()
            .map(|node| {
                node.outputs
                    .first()
                    .map(|&t| interpreter.tensors[t].name.clone())
                    .unwrap_or_default()
            })
            .collect();
        Profile {
            ops: interpreter.nodes.iter().map(|n| n.op.clone()).collect(),
            names,
            current: vec![Duration::ZERO; n],
            total: vec![Duration::ZERO; n],
            first: vec![Duration::ZERO; n],
            runs: 0,
        }
    }

    /// The number of complete runs recorded.
    pub fn runs(&self) -> u64 {
        self.runs
    }

    /// The number of nodes the profile is for.
    pub fn node_count(&self) -> usize {
        self.ops.len()
    }

    /// Node `k`'s total time over all runs.
    pub fn node_total(&self, k: usize) -> Option<Duration> {
        self.total.get(k).copied()
    }

    /// The time of all nodes together, per run (zero before any run).
    pub fn average(&self) -> Duration {
        self.per_run(self.total.iter().sum())
    }

    /// Forgets every run.
    pub fn reset(&mut self) {
        for times in [&mut self.current, &mut self.total, &mut self.first] {
            times.fill(Duration::ZERO);
        }
        self.runs = 0;
    }

    /// The time per op type, most time first: `benchmark_model`'s "Summary
    /// by node type". The percentages add up to 100 (when any time was
    /// measured).
    pub fn by_op(&self) -> Vec<OpTime> {
        let mut rows: Vec<OpTime> = Vec::new();
        for (op, total) in self.ops.iter().zip(&self.total) {
            match rows.iter_mut().find(|row| &row.op == op) {
                Some(row) => {
                    row.count += 1;
                    row.average += *total;
                }
                None => rows.push(OpTime {
                    op: op.clone(),
                    count: 1,
                    average: *total,
                    percent: 0.0,
                    cumulative_percent: 0.0,
                    times_called: 0,
                }),
            }
        }
        // Ties keep the model's order: a stable sort.
        rows.sort_by_key(|row| std::cmp::Reverse(row.average));
        let all = self.total.iter().sum();
        let mut cumulative = Duration::ZERO;
        for row in &mut rows {
            cumulative += row.average;
            row.percent = percent(row.average, all);
            row.cumulative_percent = percent(cumulative, all);
            row.average = self.per_run(row.average);
            row.times_called = row.count as u64 * self.runs;
        }
        rows
    }

    /// The `n` nodes that took the most time, most first:
    /// `benchmark_model`'s "Top by Computation Time".
    pub fn top_nodes(&self, n: usize) -> Vec<NodeTime> {
        let mut order: Vec<usize> = (0..self.total.len()).collect();
        order.sort_by_key(|&k| std::cmp::Reverse(self.total[k]));
        let all = self.total.iter().sum();
        let mut cumulative = Duration::ZERO;
        order
            .into_iter()
            .take(n)
            .map(|k| {
                cumulative += self.total[k];
                NodeTime {
                    index: k,
                    op: self.ops[k].clone(),
                    name: self.names[k].clone(),
                    first: self.first[k],
                    average: self.per_run(self.total[k]),
                    percent: percent(self.total[k], all),
                    cumulative_percent: percent(cumulative, all),
                }
            })
            .collect()
    }

    fn per_run(&self, total: Duration) -> Duration {
        match u32::try_from(self.runs) {
            Ok(0) => Duration::ZERO,
            Ok(runs) => total / runs,
            Err(_) => Duration::from_secs_f64(total.as_secs_f64() / self.runs as f64),
        }
    }

    /// Checks that the profile fits `nodes` nodes, before a run.
    pub(super) fn check_fits(&self, nodes: usize) -> Result<()> {
        if self.ops.len() == nodes {
            return Ok(());
        }
        Err(Error::invalid_argument(format!(
            "the profile was made for a model of {} nodes, not this interpreter's {nodes}: \
             make it with Profile::new(&interpreter)",
            self.ops.len()
        )))
    }

    /// Adds the run just finished to the totals.
    pub(super) fn commit(&mut self) {
        if self.runs == 0 {
            self.first.copy_from_slice(&self.current);
        }
        for (total, current) in self.total.iter_mut().zip(&self.current) {
            *total += *current;
        }
        self.runs += 1;
    }
}

fn percent(part: Duration, all: Duration) -> f64 {
    if all.is_zero() {
        0.0
    } else {
        100.0 * part.as_secs_f64() / all.as_secs_f64()
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

impl fmt::Display for Profile {
    /// `benchmark_model`'s "Top by Computation Time" (the top 10 nodes) and
    /// "Summary by node type" tables, then the node count and time per run.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rule = "==============================";
        writeln!(f, "{rule} Top by Computation Time {rule}")?;
        writeln!(
            f,
            "{:>24}\t{:>9}\t{:>9}\t{:>9}\t{:>9}\t{:>14}\t[Name]",
            "[node type]", "[first]", "[avg ms]", "[%]", "[cdf%]", "[times called]"
        )?;
        for node in self.top_nodes(10) {
            writeln!(
                f,
                "{:>24}\t{:>9.3}\t{:>9.3}\t{:>8.3}%\t{:>8.3}%\t{:>14}\t{}",
                node.op,
                ms(node.first),
                ms(node.average),
                node.percent,
                node.cumulative_percent,
                self.runs,
                node.name
            )?;
        }
        writeln!(f)?;
        writeln!(f, "{rule} Summary by node type {rule}")?;
        writeln!(
            f,
            "{:>24}\t{:>9}\t{:>9}\t{:>10}\t{:>10}\t{:>14}",
            "[Node type]", "[count]", "[avg ms]", "[avg %]", "[cdf %]", "[times called]"
        )?;
        for row in self.by_op() {
            writeln!(
                f,
                "{:>24}\t{:>9}\t{:>9.3}\t{:>9.3}%\t{:>9.3}%\t{:>14}",
                row.op,
                row.count,
                ms(row.average),
                row.percent,
                row.cumulative_percent,
                row.times_called
            )?;
        }
        writeln!(f)?;
        writeln!(
            f,
            "Number of nodes executed: {} in each of {} runs; time per run in the nodes: {:.3} ms",
            self.ops.len(),
            self.runs,
            ms(self.average())
        )
    }
}

/// What the invoke loop calls around each node. The plain invoke's probe
/// does nothing and compiles away; the profiled one times each node. One
/// generic loop, so both run the same code and the plain one pays nothing.
pub(super) trait Probe {
    /// Before node `k`'s invoke.
    fn start(&mut self, k: usize);
    /// After node `k`'s invoke returned.
    fn stop(&mut self, k: usize);
}

/// The plain invoke's probe.
pub(super) struct NoProbe;

impl Probe for NoProbe {
    #[inline(always)]
    fn start(&mut self, _k: usize) {}
    #[inline(always)]
    fn stop(&mut self, _k: usize) {}
}

/// The profiled invoke's probe: writes node `k`'s wall time to the
/// profile's current run.
pub(super) struct Timer<'p> {
    pub(super) profile: &'p mut Profile,
    pub(super) started: Instant,
}

impl Probe for Timer<'_> {
    #[inline(always)]
    fn start(&mut self, _k: usize) {
        self.started = Instant::now();
    }

    #[inline(always)]
    fn stop(&mut self, k: usize) {
        // `check_fits` made the index valid.
        if let Some(slot) = self.profile.current.get_mut(k) {
            *slot = self.started.elapsed();
        }
    }
}
