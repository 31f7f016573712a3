//! `cargo xtask codegen`: the generated op artifacts of every op the
//! workspace registers, in the committed folder [`DIR`].
//!
//! The files are those of [`op_core::artifacts`]: `ops.pbtxt` (the ops as
//! TensorFlow's `OpList` text), `reference.md` (the op reference) and
//! `coverage.md` (op x device x dtype: kernels and gradients). The ops are
//! those of the crates linked here, the shipped kernels of `op-kernels`;
//! the `examples` crate, a downstream crate, generates its own with the
//! same library function (`examples/examples/op_artifacts.rs`).
//!
//! `cargo xtask codegen --check` writes nothing: it fails, naming each
//! stale or missing file, when the committed files differ from what would
//! be generated now. CI runs it, so a change to an op (its docs, a kernel,
//! a gradient) lands with its regenerated files.

use std::io::{self, Write};
use std::path::Path;

use op_core::Registry;
use op_core::artifacts::Artifacts;

/// The folder, relative to the workspace root, the files are written to.
pub const DIR: &str = "docs/ops";

/// The command's arguments.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Write nothing; fail (exit status 1), naming each stale or missing
    /// file, if the committed files differ from what would be generated.
    #[arg(long)]
    pub check: bool,
}

/// The registry of every op the workspace registers: the crates that
/// register ops are linked here by calling their `link()`.
pub fn workspace_registry() -> &'static Registry {
    op_kernels::link();
    Registry::global()
}

/// The workspace's artifacts over `registry`, with source paths relative
/// to `root` (the workspace root).
pub fn artifacts<'r>(registry: &'r Registry, root: &Path) -> Artifacts<'r> {
    Artifacts::new(registry)
        .source_root(root)
        .title("opkit ops")
        .generated_by("cargo xtask codegen")
}

/// Writes the files of `registry`'s ops into `root/DIR`, or with `check`
/// compares them; reports on `out` (each stale or missing file, or what
/// was written). Returns `Ok(false)` when the registry has conflicts or,
/// with `check`, when a file is stale or missing; an error only when
/// reading or writing fails.
pub fn run(
    registry: &Registry,
    root: &Path,
    check: bool,
    out: &mut impl Write,
) -> io::Result<bool> {
    if let Err(e) = registry.check() {
        // The conflicting ops are left out of the registry: generating
        // without them would silently drop them from the committed files.
        writeln!(out, "the registry has conflicts; fix them first:\n{e}")?;
        return Ok(false);
    }
    let dir = root.join(DIR);
    let artifacts = artifacts(registry, root);
    let shown = |path: &Path| {
        path.strip_prefix(root)
            .unwrap_or(path)
            .display()
            .to_string()
    };
    if check {
        let stale = artifacts.check(&dir)?;
        for file in &stale {
            let what = match file.problem {
                op_core::artifacts::Staleness::Missing => "missing".to_owned(),
                op_core::artifacts::Staleness::Differs { line } => {
                    format!("stale (first difference at line {line})")
                }
            };
            writeln!(out, "{}: {what}", shown(&file.path))?;
        }
        if !stale.is_empty() {
            writeln!(
                out,
                "{} generated file(s) out of date: run `cargo xtask codegen` and commit the result",
                stale.len()
            )?;
        }
        return Ok(stale.is_empty());
    }
    let written = artifacts.write(&dir)?;
    for path in &written {
        writeln!(out, "wrote {}", shown(path))?;
    }
    writeln!(
        out,
        "{} op(s) in {DIR}/: {} file(s) rewritten, {} unchanged",
        artifacts.ops().len(),
        written.len(),
        artifacts.files().len() - written.len()
    )?;
    Ok(true)
}

/// `cargo xtask codegen [--check]` on the workspace: the exit status is 0
/// when the files were written or are up to date, 1 when they are stale
/// or the registry has conflicts, 2 when reading or writing failed.
pub fn main(args: &Args) -> std::process::ExitCode {
    // The workspace root: xtask's manifest is one level below it.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace");
    let mut stderr = io::stderr().lock();
    match run(workspace_registry(), root, args.check, &mut stderr) {
        Ok(true) => std::process::ExitCode::SUCCESS,
        Ok(false) => std::process::ExitCode::from(1),
        Err(e) => {
            let _ = writeln!(stderr, "cargo xtask codegen: {e}");
            std::process::ExitCode::from(2)
        }
    }
}
