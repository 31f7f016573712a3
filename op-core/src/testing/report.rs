//! What opcheck found: a [`Report`] of one [`OpReport`] per op, each with
//! its [`KernelReport`]s, [`Failure`]s, warnings and skip reason.

use std::collections::BTreeSet;
use std::fmt;

use op_spec::DType;

/// Which contract a [`Failure`] broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Check {
    /// The op's registrations conflict, so it cannot run at all.
    Registration,
    /// The input generator failed (a bug in the generator).
    Generator,
    /// The case ran another kernel than the one being checked (the
    /// generator drew types of another kernel).
    Kernel,
    /// A kernel, its constructor or the shape function panicked.
    Panic,
    /// An `Internal` error other than a panic (an output not set, say).
    Internal,
    /// An output's dtype is not the node's.
    Dtype,
    /// An output's shape disagrees with the shape function, or the kernel
    /// ran on inputs the shape function rejects.
    Shape,
    /// A second run gave other outputs.
    RunToRun,
    /// A run on several intra-op threads gave other outputs than on one.
    Threads,
    /// The registered gradient disagrees with the gradient checker.
    Gradient,
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Check::Registration => "registration",
            Check::Generator => "generator",
            Check::Kernel => "kernel selection",
            Check::Panic => "panic",
            Check::Internal => "internal error",
            Check::Dtype => "output dtype",
            Check::Shape => "shape function",
            Check::RunToRun => "run to run",
            Check::Threads => "1 vs N threads",
            Check::Gradient => "gradient",
        })
    }
}

/// One broken contract: the op, the kernel, the case and what was
/// expected.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Failure {
    /// The op.
    pub op: String,
    /// The kernel (`name (device='cpu'; T=float)`), empty when about the
    /// op as a whole.
    pub kernel: String,
    /// What broke.
    pub check: Check,
    /// The inputs (dtypes, shapes, small integer values), attrs, and how
    /// the case was derived (`wrong rank of input 0`), after shrinking.
    pub case: String,
    /// What was expected and what happened.
    pub message: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FAIL [{}] op {}", self.check, self.op)?;
        if !self.kernel.is_empty() {
            write!(f, ", kernel {}", self.kernel)?;
        }
        if !self.case.is_empty() {
            write!(f, "\n      inputs: {}", self.case)?;
        }
        write!(f, "\n      {}", self.message.replace('\n', "\n      "))
    }
}

/// What was checked on one kernel.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct KernelReport {
    /// The kernel's name and constraints.
    pub kernel: String,
    /// The dtypes of the inputs and outputs of the cases that ran.
    pub dtypes: BTreeSet<DType>,
    /// Cases drawn.
    pub cases: usize,
    /// Cases the kernel ran (the others it rejected with an error).
    pub ran: usize,
    /// Derived cases run to check that bad inputs give errors (wrong
    /// dtypes and ranks, empty and huge shapes, extreme values).
    pub error_cases: usize,
    /// Functions whose gradient was compared with the checker's.
    pub gradient_checks: usize,
    /// Why the kernel was not checked, if it was not.
    pub skipped: Option<String>,
    /// Whether a case failed (the op's report has the failure).
    pub failed: bool,
    /// The first error a drawn case got, for the warning when none ran.
    pub first_rejection: Option<String>,
}

/// What was checked on one op, and what failed.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct OpReport {
    /// The op.
    pub op: String,
    /// One per kernel.
    pub kernels: Vec<KernelReport>,
    /// Broken contracts (at most one per kernel: the first found, shrunk).
    pub failures: Vec<Failure>,
    /// Warnings: missing shape function, docs or gradient, kernels no case
    /// ran on.
    pub warnings: Vec<String>,
    /// Why the op was not checked, if it was not.
    pub skipped: Option<String>,
}

impl OpReport {
    /// Kernels on which at least one case ran or failed.
    pub fn kernels_checked(&self) -> usize {
        self.kernels
            .iter()
            .filter(|k| k.ran > 0 || k.failed)
            .count()
    }
}

impl fmt::Display for OpReport {
    /// `AddV2: 14 kernels, 14 dtypes, 112 cases (104 ran), 96 error cases,
    /// 6 gradient checks: ok`, then the failures, warnings and skips.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(reason) = &self.skipped {
            writeln!(f, "{}: skipped: {reason}", self.op)?;
        } else {
            let dtypes: BTreeSet<DType> = self
                .kernels
                .iter()
                .flat_map(|k| k.dtypes.iter().copied())
                .collect();
            let sum = |field: fn(&KernelReport) -> usize| -> usize {
                self.kernels.iter().map(field).sum()
            };
            write!(
                f,
                "{}: {} kernel(s) ({} checked), {} dtype(s), {} cases ({} ran), {} error cases, {} gradient checks",
                self.op,
                self.kernels.len(),
                self.kernels_checked(),
                dtypes.len(),
                sum(|k| k.cases),
                sum(|k| k.ran),
                sum(|k| k.error_cases),
                sum(|k| k.gradient_checks),
            )?;
            if self.failures.is_empty() {
                writeln!(f, ": ok")?;
            } else {
                writeln!(f, ": {} failure(s)", self.failures.len())?;
            }
        }
        for failure in &self.failures {
            writeln!(f, "  {failure}")?;
        }
        for kernel in &self.kernels {
            if let Some(reason) = &kernel.skipped {
                writeln!(f, "  skipped kernel {}: {reason}", kernel.kernel)?;
            }
        }
        for warning in &self.warnings {
            writeln!(f, "  warning: {warning}")?;
        }
        Ok(())
    }
}

/// What opcheck found on every op it checked.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Report {
    /// One per op, in the registry's order (by name).
    pub ops: Vec<OpReport>,
}

impl Report {
    /// Every failure.
    pub fn failures(&self) -> impl Iterator<Item = &Failure> {
        self.ops.iter().flat_map(|op| &op.failures)
    }

    /// Whether nothing failed (warnings and skips are not failures).
    pub fn passed(&self) -> bool {
        self.failures().next().is_none()
    }

    /// How many functions had their gradients compared, over every op.
    pub fn gradient_checks(&self) -> usize {
        self.ops
            .iter()
            .flat_map(|op| &op.kernels)
            .map(|k| k.gradient_checks)
            .sum()
    }

    /// How many warnings there are.
    pub fn warnings(&self) -> usize {
        self.ops.iter().map(|op| op.warnings.len()).sum()
    }

    /// `N ops, M kernels checked, F failures, W warnings`.
    pub fn summary(&self) -> String {
        format!(
            "{} ops, {} kernels checked, {} failures, {} warnings",
            self.ops.len(),
            self.ops
                .iter()
                .map(OpReport::kernels_checked)
                .sum::<usize>(),
            self.failures().count(),
            self.warnings()
        )
    }
}

impl fmt::Display for Report {
    /// Every op's report, the skipped ops, and the summary line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for op in &self.ops {
            write!(f, "{op}")?;
        }
        let skipped = self.ops.iter().filter(|op| op.skipped.is_some()).count();
        if skipped > 0 {
            writeln!(f, "{skipped} op(s) skipped (reasons above)")?;
        }
        writeln!(f, "{}", self.summary())
    }
}
