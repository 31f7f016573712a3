//! `cargo xtask tensorflow ...`: the checks against a real TensorFlow
//! (tensorflow-cpu from PyPI, in a virtual environment this command makes),
//! none of which the test suite needs: it runs on the files these commands
//! committed.
//!
//! - `setup`: makes the venv (`target/tf-venv` unless `--venv` says
//!   otherwise) and installs `tools/tensorflow/requirements.txt` into it.
//! - `opdefs`: rewrites `op-kernels/tests/data/tensorflow_ops.pbtxt`,
//!   TensorFlow's own OpDefs of the ops we register under its names.
//! - `fixtures`: rewrites the GraphDefs TensorFlow made, with its outputs,
//!   in `op-graph/tests/data/tensorflow/`.
//! - `check-export`: the other direction. Every fixture is read and
//!   written again by `opkit graph convert` (our importer and writer) and
//!   run by `opkit graph run` (our kernels); `examples/graph` writes its
//!   MLP built with the typed wrappers. TensorFlow then imports each
//!   GraphDef we wrote (`tf.compat.v1.import_graph_def`), runs it, and
//!   compares with our outputs (`tools/tensorflow/check_export.py`, which
//!   ends with `N passed, N failed`).
//! - `import-verdicts`: rewrites which of the small GraphDefs in
//!   `op-graph/tests/data/tensorflow/import_verdicts/` TensorFlow's
//!   importer accepts (`tools/tensorflow/import_verdicts.py`), which
//!   op-graph's `tests/graphdef_verdicts.rs` holds our importer to.

use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The venv's Python.
fn python(venv: &Path) -> PathBuf {
    venv.join("bin/python")
}

/// Runs `command`, echoing it; an error unless it exits with status 0.
fn run(command: &mut Command) -> io::Result<()> {
    eprintln!("+ {command:?}");
    let status = command.status()?;
    if status.success() {
        Ok(())
    } else {
        Err(io::Error::other(format!("{command:?} failed: {status}")))
    }
}

/// Makes the venv at `venv` with TensorFlow in it, unless it has a Python
/// that imports tensorflow already.
pub fn setup(root: &Path, venv: &Path) -> io::Result<()> {
    let ready = Command::new(python(venv))
        .args(["-c", "import tensorflow"])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if ready {
        eprintln!("TensorFlow is installed in {}", venv.display());
        return Ok(());
    }
    run(Command::new("python3").args(["-m", "venv"]).arg(venv))?;
    run(Command::new(python(venv))
        .args(["-m", "pip", "install", "--quiet", "-r"])
        .arg(root.join("tools/tensorflow/requirements.txt")))
}

/// Rewrites the committed copy of TensorFlow's OpDefs.
pub fn opdefs(root: &Path, venv: &Path) -> io::Result<()> {
    setup(root, venv)?;
    let out = std::fs::File::create(root.join("op-kernels/tests/data/tensorflow_ops.pbtxt"))?;
    run(Command::new(python(venv))
        .arg(root.join("tools/tensorflow/dump_opdefs.py"))
        .stdout(out))
}

/// Rewrites the GraphDef fixtures TensorFlow makes.
pub fn fixtures(root: &Path, venv: &Path) -> io::Result<()> {
    setup(root, venv)?;
    run(Command::new(python(venv)).arg(root.join("tools/tensorflow/make_fixtures.py")))
}

/// Rewrites TensorFlow's verdicts on the importer's test GraphDefs.
pub fn import_verdicts(root: &Path, venv: &Path) -> io::Result<()> {
    setup(root, venv)?;
    run(Command::new(python(venv)).arg(root.join("tools/tensorflow/import_verdicts.py")))
}

/// Writes, with our tools, a GraphDef for TensorFlow to check in `out`:
/// `graph.pb`, `feeds/`, `fetches.txt` and our outputs in `expected/`.
fn export_fixture(opkit: &Path, fixture: &Path, out: &Path) -> io::Result<()> {
    std::fs::create_dir_all(out.join("feeds"))?;
    run(Command::new(opkit)
        .args(["graph", "convert"])
        .arg(fixture.join("graph.pb"))
        .arg(out.join("graph.pb")))?;
    let fetches = std::fs::read_to_string(fixture.join("fetches.txt"))?;
    std::fs::write(out.join("fetches.txt"), &fetches)?;
    let mut command = Command::new(opkit);
    command.args(["graph", "run"]).arg(out.join("graph.pb"));
    for feed in std::fs::read_dir(fixture.join("feeds"))? {
        let feed = feed?.path();
        let copy = out.join("feeds").join(feed.file_name().unwrap_or_default());
        std::fs::copy(&feed, &copy)?;
        let name = feed.file_stem().unwrap_or_default().to_string_lossy();
        command
            .arg("--input")
            .arg(format!("{name}={}", copy.display()));
    }
    for fetch in fetches.lines() {
        command.args(["--output", fetch]);
    }
    command.arg("--output-dir").arg(out.join("expected"));
    run(&mut command)
}

/// Exports every fixture and the graph example with our writer, and has
/// TensorFlow import, run and compare them.
pub fn check_export(root: &Path, venv: &Path) -> io::Result<()> {
    setup(root, venv)?;
    run(Command::new("cargo").current_dir(root).args([
        "build",
        "--release",
        "-p",
        "opkit",
        "-p",
        "examples",
        "--example",
        "graph",
    ]))?;
    let target = root.join("target");
    let opkit = target.join("release/opkit");
    let out = target.join("tf-export");
    if out.exists() {
        std::fs::remove_dir_all(&out)?;
    }
    let mut dirs = Vec::new();
    let fixtures = root.join("op-graph/tests/data/tensorflow");
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&fixtures)?
        .map(|e| e.map(|e| e.path()))
        .collect::<io::Result<_>>()?;
    entries.sort();
    for fixture in entries.into_iter().filter(|p| p.join("graph.pb").exists()) {
        let dir = out.join(fixture.file_name().unwrap_or_default());
        export_fixture(&opkit, &fixture, &dir)?;
        dirs.push(dir);
    }
    let example = out.join("mlp_example");
    run(Command::new(target.join("release/examples/graph"))
        .arg("--export-dir")
        .arg(&example))?;
    dirs.push(example);
    run(Command::new(python(venv))
        .arg(root.join("tools/tensorflow/check_export.py"))
        .args(&dirs))
}
