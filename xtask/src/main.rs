//! Developer commands: `cargo xtask <command>` (see `cargo xtask --help`).

use std::io;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Developer commands for the opkit workspace.
#[derive(Parser)]
#[command(
    name = "xtask",
    bin_name = "cargo xtask",
    about = "Developer commands for the opkit workspace",
    after_help = "Run 'cargo xtask help <COMMAND>' for the details of a command."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Turns op registrations (JSON lines on stdin) into a TensorFlow OpList
    /// (text format, on stdout).
    #[command(long_about = OPDEF_HELP)]
    Opdef,
    /// Writes docs/ops/ (ops.pbtxt, reference.md, coverage.md) from the
    /// registered ops; with --check, fails if the committed files are stale.
    Codegen(xtask::codegen::Args),
    /// Checks that the registered ops are backwards compatible with the golden
    /// compat/ops.golden.pbtxt (TensorFlow's rules); --bless rewrites it.
    Compat(xtask::compat::Args),
    /// Checks against a real TensorFlow (installed from PyPI into a venv).
    #[command(subcommand)]
    Tensorflow(Tensorflow),
    /// Runs the per-op contract tests on every registered op (or `--op NAME`)
    /// and prints what was checked, failures and warnings.
    Opcheck(xtask::opcheck::Args),
    /// Writes the conformance suite's cases: each op's drawn inputs and
    /// our runtime's outputs (tools/python/conformance.py runs them in
    /// each host).
    Conformance(xtask::conformance::Args),
    /// Writes a Rust function `resolver()` registering exactly the builtins
    /// that the given .tflite models use (selective registration), and
    /// `CUSTOM_OPS`, the custom ops the caller adds; --check compares.
    #[command(after_help = "\
Examples:
  cargo xtask lite-resolver model.tflite
  cargo xtask lite-resolver a.tflite b.tflite --out src/resolver.rs
  cargo xtask lite-resolver cnn.tflite --out src/resolver.rs --check")]
    LiteResolver(xtask::lite_resolver::Args),
    /// Builds a crate's op library (a cdylib with `op_tf::export!()`) and a
    /// Python package around it: `pip install DIR/<package>`, then
    /// `import <package>.tensorflow`.
    #[command(after_help = "\
Examples:
  cargo xtask package --crate opkit-ops --out target/python
  cargo xtask package --crate opkit-ops --list")]
    Package(op_tf::package::Args),
}

#[derive(Subcommand)]
enum Tensorflow {
    /// Make the venv and install tensorflow-cpu (tools/tensorflow/requirements.txt).
    Setup(Venv),
    /// Rewrite op-kernels/tests/data/tensorflow_ops.pbtxt from TensorFlow's registry.
    Opdefs(Venv),
    /// Rewrite the GraphDefs TensorFlow makes, in op-graph/tests/data/tensorflow/.
    Fixtures(Venv),
    /// Write GraphDefs with our writer and check that TensorFlow imports and
    /// runs them with our results; ends with 'N passed, N failed'.
    CheckExport(Venv),
    /// Rewrite op-graph/tests/data/tensorflow/import_verdicts/verdicts.txt:
    /// which of those GraphDefs TensorFlow's importer accepts.
    ImportVerdicts(Venv),
}

#[derive(clap::Args)]
struct Venv {
    /// The Python virtual environment holding TensorFlow (made if missing).
    #[arg(long, default_value = "target/tf-venv")]
    venv: std::path::PathBuf,
}

const OPDEF_HELP: &str = "\
Turns op registrations into a TensorFlow OpList.

Reads one op per line from stdin, as a JSON object with the spec strings of
TensorFlow's REGISTER_OP:

  {\"name\": \"ZeroOut\", \"inputs\": [\"to_zero: T\"], \"outputs\": [\"zeroed: T\"],
   \"attrs\": [\"T: {float, int32} = DT_INT32\"], \"stateful\": false}

Keys: name (required); inputs, outputs, attrs (arrays of spec strings);
doc (string, as TensorFlow's Doc()); stateful, commutative, aggregate,
allows_uninitialized_input, distributed_communication (booleans, default
false). Blank lines are skipped.

Prints the valid ops, in input order, as one OpList in text format (as in
TensorFlow's ops.pbtxt) on stdout. Reports each invalid op or malformed line
on stderr as one line, 'Name: problem; problem' (or 'line N: problem' when the
line has no readable name), and goes on with the next line.

Exit status: 0 if every op is valid, 1 if any line was reported, 2 if reading
stdin or writing the output failed.

Example:
  echo '{\"name\": \"Counter\", \"outputs\": [\"n: int64\"], \"stateful\": true}' | cargo xtask opdef";

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Opcheck(args) => xtask::opcheck::main(&args),
        Command::Conformance(args) => xtask::conformance::main(&args),
        Command::Tensorflow(command) => {
            // The workspace root: xtask's manifest is one level below it.
            let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .parent()
                .expect("xtask lives in the workspace");
            let (Tensorflow::Setup(venv)
            | Tensorflow::Opdefs(venv)
            | Tensorflow::Fixtures(venv)
            | Tensorflow::CheckExport(venv)
            | Tensorflow::ImportVerdicts(venv)) = &command;
            let venv = root.join(&venv.venv);
            use xtask::tensorflow;
            let result = match command {
                Tensorflow::Setup(_) => tensorflow::setup(root, &venv),
                Tensorflow::Opdefs(_) => tensorflow::opdefs(root, &venv),
                Tensorflow::Fixtures(_) => tensorflow::fixtures(root, &venv),
                Tensorflow::CheckExport(_) => tensorflow::check_export(root, &venv),
                Tensorflow::ImportVerdicts(_) => tensorflow::import_verdicts(root, &venv),
            };
            match result {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("cargo xtask tensorflow: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Codegen(args) => xtask::codegen::main(&args),
        Command::LiteResolver(args) => xtask::lite_resolver::main(&args),
        Command::Package(args) => {
            let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent();
            op_tf::package::main(root.expect("xtask lives in the workspace"), &args)
        }
        Command::Compat(args) => {
            let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent();
            xtask::compat::main(root.expect("xtask lives in the workspace"), &args)
        }
        Command::Opdef => {
            let stdin = io::stdin().lock();
            let mut stdout = io::stdout().lock();
            let mut stderr = io::stderr().lock();
            match xtask::opdef::run(stdin, &mut stdout, &mut stderr) {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::from(1),
                Err(e) => {
                    eprintln!("cargo xtask opdef: {e}");
                    ExitCode::from(2)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }
}
