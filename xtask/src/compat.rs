//! `cargo xtask compat`: are the ops this workspace registers backwards
//! compatible with the ops of its last release?
//!
//! The last release's ops are committed as a golden `OpList` in TensorFlow's
//! text format, [`GOLDEN`], docs stripped (docs may change freely, and
//! `cargo xtask codegen` keeps the documented list). The command reads it
//! with [`op_spec::pbtxt::parse_op_list`], compares every op in it with the
//! registered op of the same name by TensorFlow's rules
//! ([`op_spec::compat::check_op_lists`]: an op removed or renamed, an attr
//! added without a default, a constraint narrowed, an input retyped, ...),
//! prints each violation, and fails if there is any. Ops registered since
//! are compatible additions; it names them, and the ops that changed
//! compatibly (a widened constraint, an added attr with a default, a new
//! full type), which TensorFlow's `op_compatibility_lib` counts as changed
//! ops and records as new versions at a release.
//!
//! `cargo xtask compat --bless` rewrites the golden from the registered ops:
//! for a release, to record the ops added since the last one, or to accept a
//! deliberate break.

use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use op_core::registry::Registry;
use op_spec::OpDef;
use op_spec::compat::{self, Violation};
use op_spec::pbtxt::{self, OpListError};

/// The golden op list, relative to the workspace root.
pub const GOLDEN: &str = "compat/ops.golden.pbtxt";

/// The lines the golden starts with, saying what it is.
const HEADER: &str = "\
# The ops this workspace registers, as of its last release (docs stripped):
# the baseline of `cargo xtask compat`, which fails when a registered op is
# no longer backwards compatible with its version here. Rewritten by
# `cargo xtask compat --bless`, only for a release (to record added ops) or
# to accept a deliberate break.
";

/// The command line of `cargo xtask compat`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Rewrite the golden from the registered ops instead of checking them
    /// (for a release, or to accept a deliberate incompatible change).
    #[arg(long)]
    pub bless: bool,
    /// The golden op list; a relative path is taken from the workspace root.
    #[arg(long, default_value = GOLDEN)]
    pub golden: PathBuf,
}

/// Why the check could not run.
#[derive(Debug)]
pub enum Error {
    /// The golden is missing or unreadable, or could not be written.
    Io(PathBuf, io::Error),
    /// The golden is not a valid op list.
    Golden(PathBuf, OpListError),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(path, e) if e.kind() == io::ErrorKind::NotFound => write!(
                f,
                "{}: not found; write it from the registered ops with `cargo xtask compat --bless`",
                path.display()
            ),
            Error::Io(path, e) => write!(f, "{}: {e}", path.display()),
            Error::Golden(path, e) => write!(f, "{}: {e}", path.display()),
        }
    }
}

impl std::error::Error for Error {}

/// What the registered ops are, against the golden.
#[derive(Debug)]
pub struct Report {
    /// Every incompatible change, in the golden's order.
    pub violations: Vec<Violation>,
    /// The ops registered now and not in the golden (compatible additions).
    pub added: Vec<String>,
    /// The ops of the golden registered now with another definition (docs
    /// aside) and no violation: compatible changes, in the golden's order.
    pub changed: Vec<String>,
    /// How many ops the golden holds.
    pub golden_ops: usize,
}

impl Report {
    /// Whether every op of the golden is still compatible.
    pub fn is_compatible(&self) -> bool {
        self.violations.is_empty()
    }
}

/// The ops the workspace registers (the shipped kernels linked), sorted by
/// name.
pub fn registered_ops() -> Vec<OpDef> {
    op_kernels::link();
    Registry::global()
        .ops()
        .map(|entry| OpDef::clone(entry.def()))
        .collect()
}

/// `op` without its docs (summary, description, every arg's and attr's),
/// keeping its deprecation's explanation, as TensorFlow's
/// `RemoveNonDeprecationDescriptionsFromOpDef`.
pub fn without_docs(op: &OpDef) -> OpDef {
    let mut op = op.clone();
    op.summary.clear();
    op.description.clear();
    for arg in op.inputs.iter_mut().chain(&mut op.outputs) {
        arg.description.clear();
    }
    for attr in &mut op.attrs {
        attr.description.clear();
    }
    op
}

/// The golden's text for `ops`: a header comment, then the ops sorted by
/// name, docs stripped, in TensorFlow's text format.
pub fn golden_text(ops: &[OpDef]) -> String {
    let mut ops: Vec<OpDef> = ops.iter().map(without_docs).collect();
    ops.sort_by(|a, b| a.name.cmp(&b.name));
    format!("{HEADER}{}", pbtxt::op_list_to_string(&ops))
}

/// Compares `current` with the golden's text.
pub fn compare(golden: &str, current: &[OpDef]) -> Result<Report, OpListError> {
    let old = pbtxt::parse_op_list(golden)?;
    let added = current
        .iter()
        .filter(|op| !old.iter().any(|o| o.name == op.name))
        .map(|op| op.name.clone())
        .collect();
    let violations = compat::check_op_lists(&old, current);
    // As TensorFlow compares the history's last version with the op: by
    // the text of the whole definition, docs stripped.
    let changed = old
        .iter()
        .filter(|o| !violations.iter().any(|v| v.op == o.name))
        .filter(|o| {
            current
                .iter()
                .find(|op| op.name == o.name)
                .is_some_and(|op| {
                    pbtxt::op_def_to_string(&without_docs(op)) != pbtxt::op_def_to_string(o)
                })
        })
        .map(|o| o.name.clone())
        .collect();
    Ok(Report {
        violations,
        added,
        changed,
        golden_ops: old.len(),
    })
}

/// Checks `current` against the golden at `golden` (or, with `bless`,
/// rewrites it), writing what it finds to `out`. Returns whether the ops
/// are compatible (always, after a bless).
pub fn run(
    golden: &Path,
    current: &[OpDef],
    bless: bool,
    out: &mut dyn Write,
) -> Result<bool, Error> {
    let io_error = |e| Error::Io(golden.to_owned(), e);
    let shown = golden.display();
    if bless {
        if let Some(dir) = golden.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io_error)?;
        }
        std::fs::write(golden, golden_text(current)).map_err(io_error)?;
        writeln!(out, "wrote {shown}: {} ops", current.len()).map_err(io_error)?;
        return Ok(true);
    }
    let text = std::fs::read_to_string(golden).map_err(io_error)?;
    let report = compare(&text, current).map_err(|e| Error::Golden(golden.to_owned(), e))?;
    let mut write = || -> io::Result<()> {
        for v in &report.violations {
            writeln!(out, "{v}\n")?;
        }
        if report.is_compatible() {
            write!(
                out,
                "compatible: the {} ops of {shown} are backwards compatible",
                report.golden_ops
            )?;
        } else {
            write!(
                out,
                "incompatible: {} violation(s) of backwards compatibility against {shown}. \
                 Keep the old behavior (or add a new op under a new name); if the break is \
                 deliberate, release it with `cargo xtask compat --bless`",
                report.violations.len()
            )?;
        }
        if !report.changed.is_empty() {
            write!(
                out,
                "\n{} op(s) changed compatibly since (`--bless` at the next release records them): {}",
                report.changed.len(),
                report.changed.join(", ")
            )?;
        }
        if report.added.is_empty() {
            writeln!(out)?;
        } else {
            writeln!(
                out,
                "\n{} op(s) added since (compatible; `--bless` at the next release records them): {}",
                report.added.len(),
                report.added.join(", ")
            )?;
        }
        Ok(())
    };
    write().map_err(io_error)?;
    Ok(report.is_compatible())
}

/// `cargo xtask compat`: the registered ops against the golden under the
/// workspace root `root`; the exit status is 0 when compatible, 1 when not,
/// 2 when the check could not run.
pub fn main(root: &Path, args: &Args) -> ExitCode {
    // From the root, so that a relative golden is found and shown from there.
    if let Err(e) = std::env::set_current_dir(root) {
        eprintln!("cargo xtask compat: {}: {e}", root.display());
        return ExitCode::from(2);
    }
    let mut stdout = io::stdout().lock();
    match run(&args.golden, &registered_ops(), args.bless, &mut stdout) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("cargo xtask compat: {e}");
            ExitCode::from(2)
        }
    }
}
