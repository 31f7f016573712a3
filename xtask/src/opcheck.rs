//! `cargo xtask opcheck`: op-core's per-op contract tests
//! (`op_core::testing::opcheck`) over every op the workspace ships, with
//! op-autodiff's gradient checker; CI runs it.
//!
//! Prints one line per op (kernels, dtypes, cases, error cases, gradient
//! checks), its failures, skips and warnings, and the summary line
//! `N ops, M kernels checked, F failures, W warnings`; the exit status is
//! 1 when anything failed.

use std::io::{self, Write};
use std::process::ExitCode;
use std::time::Instant;

use op_core::testing::{Report, opcheck_all};

/// The command line of `cargo xtask opcheck`.
#[derive(clap::Args, Debug, Default)]
pub struct Args {
    /// Check only this op (may be given several times).
    #[arg(long = "op", value_name = "NAME")]
    pub ops: Vec<String>,
    /// Cases drawn per kernel.
    #[arg(long, default_value_t = 8)]
    pub cases: u32,
    /// The seed cases are drawn from (the same seed draws the same cases).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Print only the ops with failures, skips or warnings, and the summary.
    #[arg(long)]
    pub quiet: bool,
}

/// Runs the checks `args` asks for; the report.
pub fn check(args: &Args) -> Report {
    op_kernels::link();
    let mut check = opcheck_all()
        .cases(args.cases)
        .seed(args.seed)
        .gradient_checker(op_autodiff::checker::opcheck_gradients);
    if !args.ops.is_empty() {
        check = check.ops(args.ops.iter().cloned());
    }
    check.run()
}

/// Writes `report` (per `args.quiet`) to `out`.
pub fn write_report(report: &Report, args: &Args, out: &mut dyn Write) -> io::Result<()> {
    for op in &report.ops {
        let quiet_ok = op.failures.is_empty() && op.warnings.is_empty() && op.skipped.is_none();
        if !(args.quiet && quiet_ok) {
            write!(out, "{op}")?;
        }
    }
    writeln!(out, "{}", report.summary())
}

/// The command: checks, prints, and exits with 1 on failures.
pub fn main(args: &Args) -> ExitCode {
    let start = Instant::now();
    let report = check(args);
    let mut stdout = io::stdout().lock();
    let written = write_report(&report, args, &mut stdout)
        .and_then(|()| writeln!(stdout, "({:.1} s)", start.elapsed().as_secs_f64()));
    if let Err(e) = written {
        eprintln!("cargo xtask opcheck: {e}");
        return ExitCode::from(2);
    }
    if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_op_is_checked_and_summarized() {
        let args = Args {
            ops: vec!["Sin".to_owned()],
            cases: 2,
            ..Args::default()
        };
        let report = check(&args);
        let mut out = Vec::new();
        write_report(&report, &args, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        // Six CPU kernels are checked; GPU kernels (the default `gpu`
        // feature) are listed and skipped, since opcheck runs CPU kernels.
        let first = text.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("Sin: 6 kernel(s)")
                || first.starts_with("Sin: 8 kernel(s) (6 checked)"),
            "{text}"
        );
        let summary = text.lines().last().unwrap_or_default();
        assert!(
            summary.starts_with("1 ops, 6 kernels checked, 0 failures, "),
            "{text}"
        );
        assert!(summary.ends_with(" warnings"), "{text}");
    }

    #[test]
    fn an_unknown_op_is_a_failure_naming_the_closest() {
        let args = Args {
            ops: vec!["Sinn".to_owned()],
            cases: 1,
            ..Args::default()
        };
        let report = check(&args);
        assert!(!report.passed());
        assert!(
            report.to_string().contains("did you mean 'Sin'?"),
            "{report}"
        );
    }
}
