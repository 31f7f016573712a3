//! The opcheck runner: [`OpCheck`] draws cases per kernel with proptest,
//! runs each through the checks of the [module docs](super), derives the
//! error cases, compares gradients, and shrinks the first failure of each
//! kernel before reporting it.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use op_spec::{ArgType, DType, DeviceType};
use proptest::collection::vec;
use proptest::prelude::any;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};
use rustc_hash::FxHasher;

use super::draw::{CHOICES, Case, Draw, describe_tensor};
use super::report::{Check, Failure, KernelReport, OpReport, Report};
use super::{Generator, GradientChecker, OpCheckPlan, registrations};
use crate::allocator::{AllocatorConfig, HostAllocator};
use crate::element::private::{ElementVisitor, visit};
use crate::registry::{KernelRegistration, OpEntry, Registry};
use crate::runtime::{PreparedOp, Runtime};
use crate::shape_inference::{self, PartialShape};
use crate::tensor::Tensor;
use crate::threads::ThreadPool;
use crate::unwind::catch_panic;
use crate::{Code, Element, Error, Result};

/// Cases per kernel unless [`OpCheck::cases`] says otherwise.
pub const DEFAULT_CASES: u32 = 8;

/// The first accepted cases of a kernel from which error cases are derived.
const MUTATED_CASES: usize = 2;

/// Gradient comparisons per kernel, at most.
const GRADIENT_CASES: usize = 3;

/// A gradient is compared only where the perturbed inputs and each output
/// have at most this many elements (the checker runs the op twice per
/// input element and differentiates once per output element).
const GRADIENT_MAX_ELEMENTS: usize = 32;

/// The largest buffer the check's runtimes hand out: huge shapes get a
/// `ResourceExhausted` error quickly instead of filling the machine.
const MAX_TENSOR_BYTES: usize = 256 << 20;

/// Per-op contract tests: which ops, how many cases, and the gradient
/// checker (see the [module docs](super)).
///
/// ```no_run
/// use op_core::testing::opcheck;
///
/// let report = opcheck("MyOp").cases(16).run();
/// assert!(report.passed(), "{report}");
/// ```
#[derive(Clone)]
pub struct OpCheck {
    /// `None`: every registered op.
    ops: Option<Vec<String>>,
    cases: u32,
    seed: u64,
    threads: usize,
    generator: Option<Generator>,
    gradient_checker: Option<Arc<dyn GradientChecker>>,
    registry: Arc<Registry>,
}

impl std::fmt::Debug for OpCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpCheck")
            .field("ops", &self.ops)
            .field("cases", &self.cases)
            .field("seed", &self.seed)
            .field("threads", &self.threads)
            .field("gradient_checker", &self.gradient_checker.is_some())
            .finish_non_exhaustive()
    }
}

/// The contract tests of op `op` (see the [module docs](super)).
pub fn opcheck(op: &str) -> OpCheck {
    OpCheck {
        ops: Some(vec![op.to_owned()]),
        ..opcheck_all()
    }
}

/// The contract tests of every op in the registry.
pub fn opcheck_all() -> OpCheck {
    OpCheck {
        ops: None,
        cases: DEFAULT_CASES,
        seed: 0,
        threads: 4,
        generator: None,
        gradient_checker: None,
        registry: Registry::global().clone(),
    }
}

impl OpCheck {
    /// Checks these ops instead.
    pub fn ops<S: Into<String>>(mut self, ops: impl IntoIterator<Item = S>) -> Self {
        self.ops = Some(ops.into_iter().map(Into::into).collect());
        self
    }

    /// Draws `cases` cases per kernel (default 8).
    pub fn cases(mut self, cases: u32) -> Self {
        self.cases = cases;
        self
    }

    /// Draws from this seed instead of 0: other cases, as reproducible.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Compares one thread with `threads` (default 4, at least 2).
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(2);
        self
    }

    /// Draws the cases of the op with `generator` instead of its registered
    /// generator or the generic one.
    pub fn generator(mut self, generator: Generator) -> Self {
        self.generator = Some(generator);
        self
    }

    /// Compares registered gradients with `checker`'s Jacobians (see
    /// [`GradientChecker`]); without one, gradients are not checked.
    pub fn gradient_checker(mut self, checker: impl GradientChecker + 'static) -> Self {
        self.gradient_checker = Some(Arc::new(checker));
        self
    }

    /// Takes ops and kernels from `registry` instead of the global one.
    pub fn registry(mut self, registry: Arc<Registry>) -> Self {
        self.registry = registry;
        self
    }

    /// Runs the checks and reports what was checked and what failed.
    pub fn run(&self) -> Report {
        let env = match Env::new(&self.registry, self.threads) {
            Ok(env) => env,
            Err(e) => {
                return Report {
                    ops: vec![OpReport {
                        op: "(opcheck)".to_owned(),
                        failures: vec![failure(
                            "(opcheck)",
                            "",
                            Check::Internal,
                            "",
                            e.to_string(),
                        )],
                        ..OpReport::default()
                    }],
                };
            }
        };
        let names: Vec<String> = match &self.ops {
            Some(ops) => ops.clone(),
            None => self.registry.ops().map(|e| e.def().name.clone()).collect(),
        };
        let ops = names.iter().map(|name| self.check_op(&env, name)).collect();
        Report { ops }
    }

    /// Runs the checks; panics with the report if anything failed, and
    /// returns it otherwise. For tests.
    #[track_caller]
    pub fn assert_passes(&self) -> Report {
        let report = self.run();
        assert!(report.passed(), "opcheck failed:\n{report}");
        report
    }

    fn check_op(&self, env: &Env, name: &str) -> OpReport {
        let mut report = OpReport {
            op: name.to_owned(),
            ..OpReport::default()
        };
        let entry = match self.registry.op(name) {
            Ok(entry) => entry,
            Err(e) => {
                report
                    .failures
                    .push(failure(name, "", Check::Registration, "", e.to_string()));
                return report;
            }
        };
        self.warn(entry, &mut report);
        let plan = match self.generator {
            Some(generator) => Some(OpCheckPlan::Generator(generator)),
            None => match registrations(name).as_slice() {
                [] => None,
                [one] => Some(one.plan),
                [first, second, ..] => {
                    report.failures.push(failure(
                        name,
                        "",
                        Check::Registration,
                        "",
                        format!(
                            "two opcheck registrations: at {}:{} and at {}:{}; remove one",
                            first.file, first.line, second.file, second.line
                        ),
                    ));
                    return report;
                }
            },
        };
        if let Some(OpCheckPlan::Skip(reason)) = plan {
            report.skipped = Some(reason.to_owned());
            return report;
        }
        let generator = match plan {
            Some(OpCheckPlan::Generator(g)) => Some(g),
            _ => None,
        };
        let gradient_dtypes = self.gradient_dtypes(entry);
        for kernel in entry.kernels() {
            let checker = KernelCheck {
                op: self,
                env,
                entry,
                kernel,
                generator,
                gradients: gradient_dtypes
                    .as_ref()
                    .is_some_and(|dtypes| kernel_has_gradient_dtype(kernel, dtypes)),
            };
            let (kernel_report, failure) = checker.run();
            report.kernels.push(kernel_report);
            report.failures.extend(failure);
        }
        self.conclude(&mut report);
        report
    }

    /// Warnings about the op's declaration (see the module docs).
    fn warn(&self, entry: &OpEntry, report: &mut OpReport) {
        let def = entry.def();
        if entry.shape_fn().is_none() {
            report.warnings.push(
                "no shape function: graphs do not know its outputs' shapes, and opcheck cannot check its kernels' shapes".to_owned(),
            );
        }
        let args: Vec<&str> = def
            .inputs
            .iter()
            .chain(&def.outputs)
            .filter(|a| a.description.trim().is_empty())
            .map(|a| a.name.as_str())
            .collect();
        let attrs: Vec<&str> = def
            .attrs
            .iter()
            .filter(|a| a.description.trim().is_empty() && !def.is_inferred_attr(&a.name))
            .map(|a| a.name.as_str())
            .collect();
        let mut undocumented = Vec::new();
        if !args.is_empty() {
            undocumented.push(format!("arg(s) {}", args.join(", ")));
        }
        if !attrs.is_empty() {
            undocumented.push(format!("attr(s) {}", attrs.join(", ")));
        }
        if !undocumented.is_empty() {
            report
                .warnings
                .push(format!("no docs for {}", undocumented.join(" and ")));
        }
        match self.registry.gradient(&def.name) {
            Ok(Some(_)) => {}
            Ok(None) if is_float_op(def) => report.warnings.push(
                "a float op with neither a gradient (#[gradient]) nor a not_differentiable mark"
                    .to_owned(),
            ),
            Ok(None) => {}
            Err(e) => report.failures.push(failure(
                &def.name,
                "",
                Check::Registration,
                "",
                e.to_string(),
            )),
        }
    }

    /// The dtypes whose kernels get their gradients compared: float64,
    /// or float32 when no kernel is for float64; `None` when there is no
    /// checker or no registered gradient.
    fn gradient_dtypes(&self, entry: &OpEntry) -> Option<Vec<DType>> {
        self.gradient_checker.as_ref()?;
        let registration = self.registry.gradient(&entry.def().name).ok()??;
        registration.functions.as_ref()?;
        let has = |dtype: DType| {
            entry
                .kernels()
                .iter()
                .any(|k| k.constraints.iter().any(|c| c.dtype == dtype))
        };
        Some(if has(DType::F64) {
            vec![DType::F64]
        } else {
            vec![DType::F32]
        })
    }

    /// Folds kernel skips and unexercised kernels into the op's report.
    fn conclude(&self, report: &mut OpReport) {
        let kernels = report.kernels.len();
        let skipped: Vec<&str> = report
            .kernels
            .iter()
            .filter_map(|k| k.skipped.as_deref())
            .collect();
        if kernels > 0 && skipped.len() == kernels && skipped.iter().all(|s| *s == skipped[0]) {
            report.skipped = Some(skipped[0].to_owned());
            for k in &mut report.kernels {
                k.skipped = None;
            }
        }
        if kernels == 0 {
            report.skipped = Some("the op has no kernels".to_owned());
        }
        let idle: Vec<&KernelReport> = report
            .kernels
            .iter()
            .filter(|k| k.ran == 0 && !k.failed && k.skipped.is_none())
            .collect();
        if !idle.is_empty() && report.skipped.is_none() {
            let names: Vec<&str> = idle.iter().take(3).map(|k| k.kernel.as_str()).collect();
            let more = if idle.len() > 3 { ", ..." } else { "" };
            let first = idle
                .iter()
                .find_map(|k| k.first_rejection.as_deref())
                .unwrap_or("(no case was drawn)");
            report.warnings.push(format!(
                "no drawn case ran on {} of {} kernel(s) ({}{more}): every case was rejected, the first with: {first}; register a generator or a skip (op_core::testing::OpCheckRegistration)",
                idle.len(),
                kernels,
                names.join(", ")
            ));
        }
    }
}

/// Whether `def` may take and give float or complex values: only then can
/// a gradient flow through it (an op with no such input, a leaf or a
/// conversion from strings, ends every path; one with no such output
/// starts none).
fn is_float_op(def: &op_spec::OpDef) -> bool {
    let may_be_float = |args: &[op_spec::ArgDef]| {
        args.iter().any(|arg| match &arg.ty {
            ArgType::Fixed(t) => t.is_float() || t.is_complex(),
            ArgType::Attr(a) | ArgType::ListAttr(a) => def.attr(a).is_some_and(|attr| {
                attr.allowed_types()
                    .is_none_or(|ts| ts.iter().any(|t| t.is_float() || t.is_complex()))
            }),
        })
    };
    may_be_float(&def.inputs) && may_be_float(&def.outputs)
}

/// Whether `kernel` is one whose gradient is compared: it is for one of
/// `dtypes`, or for any type (no constraints).
fn kernel_has_gradient_dtype(kernel: &KernelRegistration, dtypes: &[DType]) -> bool {
    kernel.constraints.is_empty() || kernel.constraints.iter().any(|c| dtypes.contains(&c.dtype))
}

fn failure(op: &str, kernel: &str, check: Check, case: &str, message: String) -> Failure {
    Failure {
        op: op.to_owned(),
        kernel: kernel.to_owned(),
        check,
        case: case.to_owned(),
        message,
    }
}

/// The two runtimes every case runs on: one thread, and several with work
/// split even when tiny. Shape checks are off: opcheck makes its own, to
/// report them with the case.
struct Env {
    one: Runtime,
    many: Runtime,
}

impl Env {
    fn new(registry: &Arc<Registry>, threads: usize) -> Result<Env> {
        let allocator =
            || HostAllocator::new(AllocatorConfig::default().max_tensor_bytes(MAX_TENSOR_BYTES));
        let one = Runtime::with_registry(registry.clone())
            .with_threads(Arc::new(ThreadPool::single()))
            .with_allocator(allocator())
            .check_shapes(false);
        let many = Runtime::with_registry(registry.clone())
            .with_threads(Arc::new(
                ThreadPool::new(threads)?.with_min_cost_per_shard(1),
            ))
            .with_allocator(allocator())
            .check_shapes(false);
        Ok(Env { one, many })
    }
}

/// Why a case did not pass.
enum CaseError {
    /// A broken contract.
    Fail(Box<Failure>),
    /// The generic case cannot draw this op: the kernel is skipped.
    Skip(String),
}

/// What one case of a kernel did.
#[derive(Default)]
struct Outcome {
    /// The base case's outputs, when the kernel ran it.
    outputs: Option<Vec<Tensor>>,
    /// The error the kernel (or node) rejected it with.
    rejection: Option<String>,
    dtypes: Vec<DType>,
    error_cases: usize,
    gradient_checks: usize,
}

/// What to do beyond the base case.
#[derive(Clone, Copy)]
struct Flags {
    mutate: bool,
    gradients: bool,
}

/// The check of one kernel.
struct KernelCheck<'a> {
    op: &'a OpCheck,
    env: &'a Env,
    entry: &'a OpEntry,
    kernel: &'static KernelRegistration,
    generator: Option<Generator>,
    /// Whether this kernel's gradients are compared.
    gradients: bool,
}

impl KernelCheck<'_> {
    fn name(&self) -> String {
        format!("{} ({})", self.kernel.name, self.kernel.describe())
    }

    fn op_name(&self) -> &str {
        &self.entry.def().name
    }

    fn fail(&self, check: Check, case: &Case, label: &str, message: String) -> CaseError {
        let mut what = case.describe();
        if !label.is_empty() {
            what = format!("{what} ({label})");
        }
        CaseError::Fail(Box::new(failure(
            self.op_name(),
            &self.name(),
            check,
            &what,
            message,
        )))
    }

    fn run(&self) -> (KernelReport, Option<Failure>) {
        let mut report = KernelReport {
            kernel: self.name(),
            ..KernelReport::default()
        };
        if self.kernel.device != DeviceType::Cpu {
            report.skipped = Some(format!(
                "a kernel for device '{}': opcheck runs CPU kernels",
                self.kernel.device
            ));
            return (report, None);
        }
        let config = Config {
            cases: self.op.cases,
            failure_persistence: None,
            // Enough to shrink every choice (32 halvings each): proptest
            // complains on stderr when it stops early.
            max_shrink_iters: 4096,
            max_shrink_time: 60_000,
            ..Config::default()
        };
        let mut runner = TestRunner::new_with_rng(config, self.rng());
        let strategy = vec(any::<u32>(), CHOICES);
        for _ in 0..self.op.cases {
            let tree = match strategy.new_tree(&mut runner) {
                Ok(tree) => tree,
                Err(reason) => {
                    let f = failure(
                        self.op_name(),
                        &self.name(),
                        Check::Internal,
                        "",
                        reason.to_string(),
                    );
                    return (report, Some(f));
                }
            };
            let flags = Flags {
                mutate: report.ran < MUTATED_CASES,
                gradients: self.gradients && report.gradient_checks < GRADIENT_CASES,
            };
            match self.check_choices(&tree.current(), flags) {
                Ok(outcome) => {
                    report.cases += 1;
                    if outcome.outputs.is_some() {
                        report.ran += 1;
                        report.dtypes.extend(outcome.dtypes);
                    } else if report.first_rejection.is_none() {
                        report.first_rejection = outcome.rejection;
                    }
                    report.error_cases += outcome.error_cases;
                    report.gradient_checks += outcome.gradient_checks;
                }
                Err(CaseError::Skip(reason)) => {
                    report.skipped = Some(reason);
                    return (report, None);
                }
                Err(CaseError::Fail(first)) => {
                    report.cases += 1;
                    report.failed = true;
                    let failure = self.shrink(&mut runner, tree, flags).unwrap_or(*first);
                    return (report, Some(failure));
                }
            }
        }
        (report, None)
    }

    /// The smallest failing case proptest finds from `tree`'s, checked
    /// again for its report; `None` when it no longer fails.
    fn shrink(
        &self,
        runner: &mut TestRunner,
        tree: impl ValueTree<Value = Vec<u32>>,
        flags: Flags,
    ) -> Option<Failure> {
        let result = runner.run_one(tree, |choices| match self.check_choices(&choices, flags) {
            Err(CaseError::Fail(f)) => Err(TestCaseError::fail(f.to_string())),
            _ => Ok(()),
        });
        let Err(TestError::Fail(_, minimal)) = result else {
            return None;
        };
        match self.check_choices(&minimal, flags) {
            Err(CaseError::Fail(f)) => Some(*f),
            _ => None,
        }
    }

    /// A seed of its own for every op and kernel, from the check's seed.
    fn rng(&self) -> TestRng {
        let mut h = FxHasher::default();
        self.op.seed.hash(&mut h);
        self.op_name().hash(&mut h);
        self.kernel.name.hash(&mut h);
        self.kernel.describe().hash(&mut h);
        let mut state = h.finish();
        let mut seed = [0u8; 32];
        for chunk in seed.chunks_mut(8) {
            // splitmix64: spreads one hash over the 32 bytes ChaCha takes.
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            chunk.copy_from_slice(&(z ^ (z >> 31)).to_le_bytes());
        }
        TestRng::from_seed(RngAlgorithm::ChaCha, &seed)
    }

    /// Draws the case of `choices`, runs it, and, per `flags`, its error
    /// cases and gradient comparisons.
    fn check_choices(
        &self,
        choices: &[u32],
        flags: Flags,
    ) -> std::result::Result<Outcome, CaseError> {
        let mut d = Draw::new(self.entry, self.kernel, choices);
        let drawn = match self.generator {
            None => d.generic(),
            Some(generator) => match catch_panic(|| generator(&mut d)) {
                Ok(result) => result,
                Err(message) => Err(Error::internal(format!(
                    "the generator panicked: {message}"
                ))),
            },
        };
        let case = match drawn {
            Ok(case) => case,
            Err(e) if self.generator.is_none() && e.code() == Code::Unimplemented => {
                return Err(CaseError::Skip(e.message().to_owned()));
            }
            Err(e) => {
                return Err(self.fail(
                    Check::Generator,
                    &Case::new(),
                    "",
                    format!("the input generator failed: {e}"),
                ));
            }
        };
        let mut outcome = self.run_case(&case, "", true)?;
        let Some(outputs) = &outcome.outputs else {
            return Ok(outcome);
        };
        if flags.mutate {
            for (label, mutated) in self.mutations(&case) {
                self.run_case(&mutated, &label, false)?;
                outcome.error_cases += 1;
            }
        }
        if flags.gradients {
            outcome.gradient_checks = self.check_gradients(&case, outputs)?;
        }
        Ok(outcome)
    }

    /// Runs `case` (derived as `label` says) through the checks of the
    /// module docs. `base`: the case was drawn for this kernel, so it must
    /// run it.
    fn run_case(
        &self,
        case: &Case,
        label: &str,
        base: bool,
    ) -> std::result::Result<Outcome, CaseError> {
        let def = self.entry.def();
        let types = case.input_types();
        let attrs = case.attr_refs();
        let rejected = |e: &Error| Outcome {
            rejection: Some(e.to_string()),
            ..Outcome::default()
        };
        let internal = |e: Error| {
            let check = if e.message().contains("panicked") {
                Check::Panic
            } else {
                Check::Internal
            };
            self.fail(check, case, label, e.to_string())
        };
        let node = match self.entry.instance(&types, &attrs) {
            Ok(node) => node,
            Err(e) if e.code() == Code::Internal => return Err(internal(e)),
            Err(e) => return Ok(rejected(&e)),
        };
        let flat = case.flat_inputs();
        let shapes: Vec<PartialShape> =
            flat.iter().map(|t| PartialShape::known(t.dims())).collect();
        let values: Vec<Option<&Tensor>> = flat.iter().map(Some).collect();
        let mut inferred = Vec::new();
        if let Some(shape_fn) = self.entry.shape_fn() {
            for (values, how) in [
                (&values[..], "with the input values known"),
                (&[][..], "from the input shapes alone"),
            ] {
                match shape_inference::infer(def, &node, shape_fn, &shapes, values) {
                    Err(e) if e.code() == Code::Internal => return Err(internal(e)),
                    result => inferred.push((result, how)),
                }
            }
        }
        let prepared = match self.env.one.prepare(&def.name, &types, &attrs) {
            Ok(prepared) => prepared,
            Err(e) if e.code() == Code::Internal => return Err(internal(e)),
            Err(e) => return Ok(rejected(&e)),
        };
        if base && !std::ptr::eq(prepared.kernel(), self.kernel) {
            return Err(self.fail(
                Check::Kernel,
                case,
                label,
                format!(
                    "the case ran kernel {} ({}), not the one being checked: draw the kernel's types (Draw::kernel_dtype)",
                    prepared.kernel().name,
                    prepared.kernel().describe()
                ),
            ));
        }
        let outputs = match prepared.run(flat.clone()) {
            Ok(outputs) => outputs,
            Err(e) if e.code() == Code::Internal => return Err(internal(e)),
            Err(e) => return Ok(rejected(&e)),
        };
        for (result, how) in &inferred {
            match result {
                Err(e) => {
                    return Err(self.fail(
                        Check::Shape,
                        case,
                        label,
                        format!(
                            "the kernel ran, but the shape function ({how}) rejects these inputs: {e}"
                        ),
                    ));
                }
                Ok(expected) => {
                    for (i, (output, shape)) in outputs.iter().zip(expected).enumerate() {
                        if !shape.is_compatible_with(output.dims()) {
                            return Err(self.fail(
                                Check::Shape,
                                case,
                                label,
                                format!(
                                    "output {i} ({}) has shape {}, but the shape function infers {shape} ({how})",
                                    output_name(&prepared, i),
                                    output.shape()
                                ),
                            ));
                        }
                    }
                }
            }
        }
        for (i, (output, expected)) in outputs.iter().zip(node.output_types()).enumerate() {
            if output.dtype() != *expected {
                return Err(self.fail(
                    Check::Dtype,
                    case,
                    label,
                    format!(
                        "output {i} ({}) is {}, but the node's output {i} is {expected}",
                        output_name(&prepared, i),
                        output.dtype()
                    ),
                ));
            }
        }
        if !def.is_stateful {
            self.rerun(case, label, &prepared, &flat, &outputs)?;
            self.on_threads(case, label, &flat, &outputs)?;
        }
        let mut dtypes: Vec<DType> = flat.iter().map(Tensor::dtype).collect();
        dtypes.extend(outputs.iter().map(Tensor::dtype));
        Ok(Outcome {
            outputs: Some(outputs),
            dtypes,
            ..Outcome::default()
        })
    }

    /// A second run, on copies of the inputs that the kernel may reuse in
    /// place, must give `first`.
    fn rerun(
        &self,
        case: &Case,
        label: &str,
        prepared: &PreparedOp,
        flat: &[Tensor],
        first: &[Tensor],
    ) -> std::result::Result<(), CaseError> {
        let mut copies = flat.to_vec();
        for t in &mut copies {
            if let Err(e) = t.make_distinct() {
                return Err(self.fail(Check::Internal, case, label, e.to_string()));
            }
        }
        match prepared.run(copies) {
            Ok(second) => compare(first, &second).map_err(|difference| {
                self.fail(
                    Check::RunToRun,
                    case,
                    label,
                    format!(
                        "a second run (on inputs it may reuse) gave other outputs: {difference}"
                    ),
                )
            }),
            Err(e) => Err(self.fail(
                Check::RunToRun,
                case,
                label,
                format!("the first run succeeded, a second (on inputs it may reuse) failed: {e}"),
            )),
        }
    }

    /// A run on several threads must give `first`, the one-thread outputs.
    fn on_threads(
        &self,
        case: &Case,
        label: &str,
        flat: &[Tensor],
        first: &[Tensor],
    ) -> std::result::Result<(), CaseError> {
        let threads = self.env.many.threads().num_threads();
        let run = self
            .env
            .many
            .prepare(
                &self.entry.def().name,
                &case.input_types(),
                &case.attr_refs(),
            )
            .and_then(|p| p.run(flat.to_vec()));
        match run {
            Ok(outputs) => compare(first, &outputs).map_err(|difference| {
                self.fail(
                    Check::Threads,
                    case,
                    label,
                    format!("{threads} threads gave other outputs than 1: {difference}"),
                )
            }),
            Err(e) => Err(self.fail(
                Check::Threads,
                case,
                label,
                format!("the run on 1 thread succeeded, on {threads} it failed: {e}"),
            )),
        }
    }

    /// The error cases derived from an accepted `case` (see the module
    /// docs), each with what was changed.
    fn mutations(&self, case: &Case) -> Vec<(String, Case)> {
        let def = self.entry.def();
        let mut cases = Vec::new();
        let mut all_empty = case.clone();
        for (arg, input) in case.inputs().iter().enumerate() {
            for (pos, t) in input.tensors().iter().enumerate() {
                let name = match (def.inputs.get(arg), input.tensors().len() > 1) {
                    (Some(a), false) => format!("'{}'", a.name),
                    (Some(a), true) => format!("'{}'[{pos}]", a.name),
                    (None, _) => format!("{arg}"),
                };
                let dims = t.dims().to_vec();
                let mut derived = |what: String, tensor: Option<Tensor>| {
                    if let Some(tensor) = tensor {
                        let mut mutated = case.clone();
                        mutated.inputs_mut()[arg].tensors_mut()[pos] = tensor;
                        cases.push((format!("{what} {name}"), mutated));
                    }
                };
                let wrong = wrong_dtype(def, arg, t.dtype());
                derived(format!("{wrong} for"), Tensor::zeros(wrong, &dims).ok());
                let mut more = dims.clone();
                more.push(2);
                derived(
                    "a rank more for".to_owned(),
                    Tensor::zeros(t.dtype(), &more).ok(),
                );
                if let Some((_, less)) = dims.split_last() {
                    derived(
                        "a rank less for".to_owned(),
                        Tensor::zeros(t.dtype(), less).ok(),
                    );
                }
                let empty: Vec<usize> = match dims.split_first() {
                    Some((_, rest)) => std::iter::once(0).chain(rest.iter().copied()).collect(),
                    None => vec![0],
                };
                derived("an empty".to_owned(), Tensor::zeros(t.dtype(), &empty).ok());
                let huge: Vec<usize> = match dims.len() {
                    0 | 1 => vec![0, 1 << 40],
                    r => {
                        let mut huge = dims.clone();
                        huge[0] = 0;
                        huge[r - 1] = 1 << 40;
                        huge
                    }
                };
                derived(
                    "a zero-sized shape with a huge dimension for".to_owned(),
                    Tensor::zeros(t.dtype(), &huge).ok(),
                );
                for (what, max) in [("the largest", true), ("the smallest", false)] {
                    derived(format!("{what} values of its type for"), extremes(t, max));
                }
                derived(
                    "NaN, infinities and zeros for".to_owned(),
                    special_floats(t),
                );
                if !dims.is_empty() {
                    all_empty.inputs_mut()[arg].tensors_mut()[pos] =
                        Tensor::zeros(t.dtype(), &empty).unwrap_or_else(|_| t.clone());
                }
            }
        }
        if case.flat_inputs().len() > 1 {
            cases.push(("every input empty".to_owned(), all_empty));
        }
        cases
    }

    /// Compares the registered gradient of every float output with the
    /// checker's, on the case's float inputs; the number compared.
    fn check_gradients(
        &self,
        case: &Case,
        outputs: &[Tensor],
    ) -> std::result::Result<usize, CaseError> {
        let Some(checker) = &self.op.gradient_checker else {
            return Ok(0);
        };
        let is_real = |t: &Tensor| matches!(t.dtype(), DType::F32 | DType::F64);
        let flat = case.flat_inputs();
        let positions: Vec<usize> = (0..flat.len()).filter(|&i| is_real(&flat[i])).collect();
        let input_elements: usize = positions.iter().map(|&i| flat[i].num_elements()).sum();
        if positions.is_empty() || input_elements > GRADIENT_MAX_ELEMENTS {
            return Ok(0);
        }
        let prepared = match self.env.one.prepare(
            &self.entry.def().name,
            &case.input_types(),
            &case.attr_refs(),
        ) {
            Ok(prepared) => prepared,
            Err(e) => return Err(self.fail(Check::Gradient, case, "", e.to_string())),
        };
        let xs: Vec<Tensor> = positions.iter().map(|&i| flat[i].clone()).collect();
        let mut compared = 0;
        for (k, output) in outputs.iter().enumerate() {
            // Where an output is NaN or infinite the case is outside the
            // function's domain (a logarithm of a negative number), where
            // the two Jacobians need not agree.
            if !is_real(output)
                || output.num_elements() > GRADIENT_MAX_ELEMENTS
                || !all_finite(output)
            {
                continue;
            }
            let f = |xs: &[Tensor]| -> Result<Tensor> {
                let mut inputs = flat.clone();
                for (&p, x) in positions.iter().zip(xs) {
                    inputs[p] = x.clone();
                }
                let mut outputs = prepared.run(inputs)?;
                Ok(outputs.swap_remove(k))
            };
            let name = output_name(&prepared, k);
            let comparison = checker.compare(&f, &xs).map_err(|e| {
                self.fail(
                    Check::Gradient,
                    case,
                    "",
                    format!("output {k} ({name}): the gradient checker failed: {e}"),
                )
            })?;
            let double = output.dtype() == DType::F64 && xs.iter().all(|x| x.dtype() == DType::F64);
            let tolerance = if double { 1e-5 } else { 2e-2 };
            if comparison.max_error.is_nan() || comparison.max_error > tolerance {
                return Err(self.fail(
                    Check::Gradient,
                    case,
                    "",
                    format!(
                        "output {k} ({name}): the registered gradient's Jacobian and the numeric one differ by {:e} (relative), more than {tolerance:e}: {}",
                        comparison.max_error, comparison.detail
                    ),
                ));
            }
            compared += 1;
        }
        Ok(compared)
    }
}

/// Whether every element of a real float tensor is finite.
fn all_finite(t: &Tensor) -> bool {
    match t.dtype() {
        DType::F32 => t
            .as_slice::<f32>()
            .is_ok_and(|v| v.iter().all(|x| x.is_finite())),
        DType::F64 => t
            .as_slice::<f64>()
            .is_ok_and(|v| v.iter().all(|x| x.is_finite())),
        _ => false,
    }
}

/// `'z'`: output `index`'s arg name, quoted.
fn output_name(prepared: &PreparedOp, index: usize) -> String {
    prepared
        .instance()
        .output_arg_of(index)
        .and_then(|(arg, _)| prepared.op_def().outputs.get(arg))
        .map(|a| format!("'{}'", a.name))
        .unwrap_or_default()
}

/// A dtype input `arg` should not take: one its type constraint does not
/// allow if there is one, else another than `current`.
fn wrong_dtype(def: &op_spec::OpDef, arg: usize, current: DType) -> DType {
    const CANDIDATES: [DType; 5] = [
        DType::String,
        DType::Bool,
        DType::Complex128,
        DType::F64,
        DType::I32,
    ];
    let allowed: Option<Vec<DType>> = def.inputs.get(arg).and_then(|a| match &a.ty {
        ArgType::Fixed(t) => Some(vec![*t]),
        ArgType::Attr(name) | ArgType::ListAttr(name) => def
            .attr(name)
            .and_then(|attr| attr.allowed_types())
            .map(<[DType]>::to_vec),
    });
    CANDIDATES
        .iter()
        .copied()
        .find(|t| *t != current && allowed.as_ref().is_none_or(|a| !a.contains(t)))
        .or_else(|| CANDIDATES.iter().copied().find(|t| *t != current))
        .unwrap_or(DType::String)
}

/// `t` with every element its type's largest (or smallest) value, for
/// integer tensors.
fn extremes(t: &Tensor, max: bool) -> Option<Tensor> {
    macro_rules! fill {
        ($ty:ty) => {{
            let value = if max { <$ty>::MAX } else { <$ty>::MIN };
            Tensor::from_vec(t.dims(), vec![value; t.num_elements()]).ok()
        }};
    }
    match t.dtype() {
        DType::I8 => fill!(i8),
        DType::I16 => fill!(i16),
        DType::I32 => fill!(i32),
        DType::I64 => fill!(i64),
        DType::U8 if max => fill!(u8),
        DType::U16 if max => fill!(u16),
        DType::U32 if max => fill!(u32),
        DType::U64 if max => fill!(u64),
        _ => None,
    }
}

/// `t` with NaN, infinities, zeros of both signs and a huge value in turn,
/// for real float tensors.
fn special_floats(t: &Tensor) -> Option<Tensor> {
    const VALUES: [f64; 6] = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0, 1e30];
    let values = (0..t.num_elements()).map(|i| VALUES[i % VALUES.len()]);
    match t.dtype() {
        DType::F32 => Tensor::from_vec(t.dims(), values.map(|v| v as f32).collect()).ok(),
        DType::F64 => Tensor::from_vec(t.dims(), values.collect()).ok(),
        DType::F16 => Tensor::from_vec(t.dims(), values.map(crate::f16::from_f64).collect()).ok(),
        DType::BF16 => Tensor::from_vec(t.dims(), values.map(crate::bf16::from_f64).collect()).ok(),
        _ => None,
    }
}

/// `Ok` when `a` and `b` hold the same tensors (NaNs equal to NaNs), else
/// where they first differ.
fn compare(a: &[Tensor], b: &[Tensor]) -> std::result::Result<(), String> {
    if a.len() != b.len() {
        return Err(format!("{} outputs, then {}", a.len(), b.len()));
    }
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        if x.dtype() != y.dtype() || x.dims() != y.dims() {
            return Err(format!(
                "output {i} is {}, then {}",
                describe_tensor(x),
                describe_tensor(y)
            ));
        }
        if let Some(Some(difference)) = visit(x.dtype(), FirstDifference(x, y)) {
            return Err(format!("output {i} ({}): {difference}", describe_tensor(x)));
        }
    }
    Ok(())
}

/// Where two tensors of one dtype first differ (NaN equals NaN).
struct FirstDifference<'a>(&'a Tensor, &'a Tensor);

impl ElementVisitor for FirstDifference<'_> {
    type Output = Option<String>;
    fn visit<T: Element>(self) -> Option<String> {
        let (Ok(a), Ok(b)) = (self.0.as_slice::<T>(), self.1.as_slice::<T>()) else {
            return Some("the outputs cannot be read on the host".to_owned());
        };
        // `x != x` only for NaN.
        #[allow(clippy::eq_op)]
        let same = |x: &T, y: &T| x == y || (x != x && y != y);
        a.iter()
            .zip(b)
            .position(|(x, y)| !same(x, y))
            .map(|at| format!("element {at} is {:?}, then {:?}", a[at], b[at]))
    }
}
