//! The `opkit` command-line tool, as a library function over whatever ops
//! are linked into the program that calls it.
//!
//! - `opkit ops`: the registered ops and their kernels (device, dtypes).
//! - `opkit graph show MODEL.pb`: the nodes, their ops, inputs and
//!   inferred dtypes and shapes.
//! - `opkit graph run MODEL.pb --input x=x.npy --output y --output-dir out`:
//!   feeds placeholders from `.npy` files, writes each fetch to
//!   `out/<fetch, ':' replaced by '_'>.npy`.
//! - `opkit graph convert IN OUT`: rewrites a GraphDef, binary (`.pb`) or
//!   text (`.pbtxt`) by extension, after checking every node.
//! - `opkit lite run MODEL.tflite --input x=x.npy --output-dir out`: runs a
//!   TensorFlow Lite model in the lite runtime, writes each output to
//!   `out/<tensor name, sanitized>.npy` ([`crate::lite`]).
//! - `opkit lite ops MODEL.tflite`: the ops a model uses, and whether this
//!   build has their kernels.
//! - `opkit lite benchmark MODEL.tflite --runs 50`: timings and the op
//!   profile, as TensorFlow Lite's `benchmark_model` prints them.
//! - `opkit saved-model show DIR`, `opkit saved-model run DIR --input
//!   x=x.npy --output-dir out`: a saved model's signatures and variables,
//!   and a run of one signature, as TensorFlow's `saved_model_cli` does
//!   ([`crate::saved_model`]).
//!
//! Errors go to stderr, prefixed with the program's name (a downstream
//! crate's tool says its own name), with a non-zero exit status.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use op_core::{Error, Registry, Result};
use op_graph::{Session, graphdef};

use crate::{lite, npy, saved_model};

/// The tool's command line.
#[derive(Debug, Parser)]
#[command(
    name = "opkit",
    version,
    about = "Inspect and run the ops and graphs of opkit"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the registered ops and their kernels (device and dtypes).
    Ops {
        /// Only ops whose name contains this text (none is an error,
        /// with the closest name).
        filter: Option<String>,
    },
    /// Inspect, run and convert GraphDefs (`.pb`, or `.pbtxt` text).
    #[command(subcommand)]
    Graph(GraphCommand),
    /// Run, inspect and benchmark TensorFlow Lite models (`.tflite`) in the
    /// lite runtime.
    #[command(
        subcommand,
        after_help = "\
The kernels, in the order they are looked up: every TensorFlow Lite builtin
this build has, the seed's custom op Sin, the lite kernels linked into the
program with #[lite_kernel] (which override those), and, for a custom op
none of these has, the framework op of that name (any op with a shape
function, run through op_lite::bridge)."
    )]
    Lite(LiteCommand),
    /// Inspect and run saved models (directories written by
    /// `op_graph::saved_model::save`), as TensorFlow's saved_model_cli does.
    #[command(subcommand)]
    SavedModel(SavedModelCommand),
}

#[derive(Debug, Subcommand)]
enum SavedModelCommand {
    /// Print each signature's inputs and outputs, and the variables.
    #[command(after_help = "\
Example:
  opkit saved-model show model/

The model is loaded whole (graph, variables, signatures) and checked first:
a variable saved with another shape or dtype than its node declares is an
error here, as it is when the model is loaded by a program.")]
    Show {
        /// The saved model's directory.
        dir: PathBuf,
    },
    /// Run a signature on inputs from .npy files; write each output as a .npy file.
    #[command(after_help = "\
Examples:
  opkit saved-model run model/ --input x=x.npy --output-dir out
  opkit saved-model run model/ --signature predict --input x=x.npy --output y --output-dir out

Each output is written as DIR/<output key>.npy.")]
    Run {
        /// The saved model's directory.
        dir: PathBuf,
        /// The signature to run.
        #[arg(long, default_value = saved_model::DEFAULT_SIGNATURE, value_name = "NAME")]
        signature: String,
        /// `KEY=FILE.npy`: feed the signature's input `KEY` from the file.
        /// Every input needs one.
        #[arg(long = "input", value_name = "KEY=FILE.npy")]
        inputs: Vec<String>,
        /// An output key to write. Repeat for each; every output of the
        /// signature when none is given.
        #[arg(long = "output", value_name = "KEY")]
        outputs: Vec<String>,
        /// Where to write the outputs, one `.npy` file each. Created if
        /// missing.
        #[arg(long, value_name = "DIR")]
        output_dir: PathBuf,
    },
}

#[derive(Debug, Subcommand)]
enum LiteCommand {
    /// Run a model on inputs from .npy files; write each output as a .npy file.
    #[command(after_help = "\
Examples:
  opkit lite run sin.tflite --input x=x.npy --output-dir out
  opkit lite run cnn.tflite --input '#0=image.npy' --output-dir out

Each output is written as DIR/<tensor name>.npy, with characters other than
letters, digits, '.', '-' and '_' replaced by '_'
(StatefulPartitionedCall:0 -> StatefulPartitionedCall_0.npy).
An input of another shape than the model's is resized to the file's shape
before the tensors are allocated, as LiteRT's resize_tensor_input does (each
resize is printed); the model's kernels then check the new shapes. With
--strict, only the dimensions the shape signature leaves open (-1, as a
dynamic batch) may differ, and any other difference is refused.")]
    Run {
        /// The model (`.tflite`).
        model: PathBuf,
        /// `NAME=FILE.npy`: feed the input `NAME` (its tensor name, its
        /// signature name, or `#k` for the k-th input) from the file.
        /// Every input needs one.
        #[arg(long = "input", value_name = "NAME=FILE.npy")]
        inputs: Vec<String>,
        /// Where to write the outputs, one `.npy` file each. Created if
        /// missing.
        #[arg(long, value_name = "DIR")]
        output_dir: PathBuf,
        /// Refuse an input whose shape differs from the model's except in
        /// the dimensions its shape signature leaves open (-1), instead of
        /// resizing the input (LiteRT's `strict=True`).
        #[arg(long)]
        strict: bool,
    },
    /// List the ops a model uses: name, code, version, nodes, and whether this build has a kernel.
    #[command(after_help = "\
Example:
  opkit lite ops cnn.tflite")]
    Ops {
        /// The model (`.tflite`).
        model: PathBuf,
    },
    /// Time a model's invoke and print its op profile, as benchmark_model does.
    #[command(after_help = "\
Examples:
  opkit lite benchmark cnn.tflite
  opkit lite benchmark mlp.tflite --runs 1000 --warmup 10 --input features=x.npy
  opkit lite benchmark cnn.tflite --json

Prints the init, first-invoke and average-invoke times of plain invokes, then
the op profile of as many profiled invokes: the top nodes and the summary by
node type (count, average ms, share, cumulative share). Inputs not given are
filled with fixed pseudo-random values (floats in [-1, 1), integers zero).")]
    Benchmark {
        /// The model (`.tflite`).
        model: PathBuf,
        /// Timed invokes (and as many profiled ones for the op profile).
        #[arg(long, default_value_t = 50, value_name = "N")]
        runs: usize,
        /// Untimed invokes before them.
        #[arg(long, default_value_t = 1, value_name = "N")]
        warmup: usize,
        /// `NAME=FILE.npy`: feed an input from a file (as for `run`).
        #[arg(long = "input", value_name = "NAME=FILE.npy")]
        inputs: Vec<String>,
        /// Print one JSON object (times in microseconds, the summary by op)
        /// instead of the tables.
        #[arg(long)]
        json: bool,
        /// Refuse inputs of another shape than the model's (see `run`).
        #[arg(long)]
        strict: bool,
    },
}

#[derive(Debug, Subcommand)]
enum GraphCommand {
    /// Print each node: its op, inputs, and inferred output dtypes and shapes.
    Show {
        /// The GraphDef (`.pb` binary, `.pbtxt` text).
        model: PathBuf,
    },
    /// Run a GraphDef: feed placeholders from .npy files, write fetches as .npy files.
    Run {
        /// The GraphDef (`.pb` binary, `.pbtxt` text).
        model: PathBuf,
        /// `NAME=FILE.npy`: feed the placeholder (or any tensor) `NAME`
        /// (`node` or `node:k`) from the file. Repeat for each input.
        #[arg(long = "input", value_name = "NAME=FILE.npy")]
        inputs: Vec<String>,
        /// A tensor to fetch (`node` or `node:k`). Repeat for each output.
        #[arg(long = "output", value_name = "NAME", required = true)]
        outputs: Vec<String>,
        /// Where to write the outputs, one `.npy` file each, named after
        /// the fetch with ':' replaced by '_'. Created if missing.
        #[arg(long, value_name = "DIR")]
        output_dir: PathBuf,
        /// Threads for independent branches of the graph.
        #[arg(long, default_value_t = 1, value_name = "N")]
        inter_op_threads: usize,
    },
    /// Write a GraphDef as an ONNX model (`--onnx`): ops with an ONNX
    /// equivalent as that op, the others in a custom-op domain that our
    /// ONNX Runtime library (op-onnx) holds.
    Export {
        /// The GraphDef (`.pb` binary, `.pbtxt` text).
        model: PathBuf,
        /// Where to write the ONNX model.
        output: PathBuf,
        /// Write ONNX (the one format `export` writes; required, so that
        /// the command says what it makes).
        #[arg(long, required = true)]
        onnx: bool,
        /// A tensor the model outputs (`node` or `node:k`). Repeat for each.
        #[arg(long = "fetch", value_name = "NAME", required = true)]
        fetches: Vec<String>,
        /// The custom-op domain of our ops (the library's: its crate's
        /// name, `opkit_ops` for op-kernels').
        #[arg(long, default_value = "opkit_ops")]
        domain: String,
    },
    /// Rewrite a GraphDef (binary or text, by extension) after checking every node.
    Convert {
        /// The GraphDef to read.
        input: PathBuf,
        /// Where to write it: `.pbtxt` or `.txt` for text, binary otherwise.
        output: PathBuf,
    },
}

/// Runs the tool on the process's arguments and prints to stdout and
/// stderr; what a binary's `main` returns.
pub fn main() -> ExitCode {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    run(std::env::args_os(), &mut stdout.lock(), &mut stderr.lock())
}

/// Runs the tool on `args` (the program name first), writing its output to
/// `out` and its errors to `err`; returns the exit status (0 on success,
/// 1 on an error, 2 on a usage error).
pub fn run(
    args: impl IntoIterator<Item = impl Into<OsString> + Clone>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> ExitCode {
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let program = program_name(args.first());
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = if e.use_stderr() {
                write!(err, "{}", e.render())
            } else {
                write!(out, "{}", e.render())
            };
            return ExitCode::from(code);
        }
    };
    let result = match cli.command {
        Command::Ops { filter } => list_ops(Registry::global(), filter.as_deref(), out),
        Command::Graph(GraphCommand::Show { model }) => show(&model, out),
        Command::Graph(GraphCommand::Run {
            model,
            inputs,
            outputs,
            output_dir,
            inter_op_threads,
        }) => run_graph(
            &model,
            &inputs,
            &outputs,
            &output_dir,
            inter_op_threads,
            out,
        ),
        Command::Graph(GraphCommand::Convert { input, output }) => convert(&input, &output, out),
        Command::Graph(GraphCommand::Export {
            model,
            output,
            onnx: _,
            fetches,
            domain,
        }) => export_onnx(&model, &output, &fetches, &domain, out),
        Command::Lite(LiteCommand::Run {
            model,
            inputs,
            output_dir,
            strict,
        }) => lite::run(&model, &inputs, &output_dir, resize(strict), out),
        Command::Lite(LiteCommand::Ops { model }) => lite::ops(&model, out),
        Command::SavedModel(SavedModelCommand::Show { dir }) => saved_model::show(&dir, out),
        Command::SavedModel(SavedModelCommand::Run {
            dir,
            signature,
            inputs,
            outputs,
            output_dir,
        }) => {
            let options = saved_model::RunOptions {
                signature: &signature,
                inputs: &inputs,
                outputs: &outputs,
                output_dir: &output_dir,
            };
            saved_model::run(&dir, &options, out)
        }
        Command::Lite(LiteCommand::Benchmark {
            model,
            runs,
            warmup,
            inputs,
            json,
            strict,
        }) => {
            let options = lite::BenchmarkOptions {
                runs,
                warmup,
                inputs,
                json,
                resize: resize(strict),
            };
            lite::benchmark(&model, &options, out)
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(err, "{program}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The lite runtime's resize policy for `--strict`.
fn resize(strict: bool) -> lite::Resize {
    if strict {
        lite::Resize::Strict
    } else {
        lite::Resize::Any
    }
}

/// The name the program was run by (the file name of `argv[0]`), which
/// prefixes its errors: a downstream crate's tool is not `opkit`.
fn program_name(argv0: Option<&OsString>) -> String {
    argv0
        .map(Path::new)
        .and_then(Path::file_name)
        .map(|name| name.to_string_lossy().into_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "opkit".to_owned())
}

pub(crate) fn io_error(e: std::io::Error) -> op_core::Error {
    op_core::Error::new(op_core::Code::from_io_error(&e), e.to_string())
}

/// Splits an `--input` argument, `NAME=FILE.npy`, at its first `=`;
/// `example` (`--input x=x.npy`) shows the form in the error.
pub(crate) fn input_arg<'a>(arg: &'a str, example: &str) -> Result<(&'a str, &'a str)> {
    arg.split_once('=').ok_or_else(|| {
        Error::invalid_argument(format!(
            "--input {}: write NAME=FILE.npy, as in {example}",
            op_core::error::capped(arg)
        ))
    })
}

/// `opkit ops`: each op's signature, then one line per device with the
/// dtypes its kernels cover for each constrained type attr.
fn list_ops(registry: &Registry, filter: Option<&str>, out: &mut dyn Write) -> Result<()> {
    let mut ops: Vec<_> = registry
        .ops()
        .filter(|op| filter.is_none_or(|f| op.def().name.contains(f)))
        .collect();
    ops.sort_by(|a, b| a.def().name.cmp(&b.def().name));
    if let (Some(filter), true) = (filter, ops.is_empty()) {
        let hint = match registry.missing_op(filter) {
            op_core::registry::MissingOp::Unknown => String::new(),
            missing => format!(": {missing}"),
        };
        return Err(Error::not_found(format!(
            "no registered op's name contains {} ({} ops are registered){hint}",
            op_core::error::quoted(filter),
            registry.ops().count()
        )));
    }
    let mut kernels = 0;
    for op in &ops {
        let def = op.def();
        let inputs: Vec<String> = def.inputs.iter().map(|a| a.to_spec()).collect();
        let outputs: Vec<String> = def.outputs.iter().map(|a| a.to_spec()).collect();
        writeln!(
            out,
            "{}({}) -> ({})",
            def.name,
            inputs.join(", "),
            outputs.join(", ")
        )
        .map_err(io_error)?;
        if !def.attrs.is_empty() {
            let attrs: Vec<String> = def.attrs.iter().map(|a| a.to_spec()).collect();
            writeln!(out, "    attrs: {}", attrs.join(", ")).map_err(io_error)?;
        }
        // device -> attr -> dtypes, in registration order without repeats.
        let mut devices: BTreeMap<String, (usize, BTreeMap<&str, Vec<String>>)> = BTreeMap::new();
        for kernel in op.kernels() {
            let (count, attrs) = devices.entry(kernel.device.to_string()).or_default();
            *count += 1;
            for c in kernel.constraints {
                let dtypes = attrs.entry(c.attr).or_default();
                let name = c.dtype.to_string();
                if !dtypes.contains(&name) {
                    dtypes.push(name);
                }
            }
        }
        if devices.is_empty() {
            writeln!(out, "    no kernels").map_err(io_error)?;
        }
        for (device, (count, attrs)) in devices {
            let constraints: Vec<String> = attrs
                .iter()
                .map(|(attr, dtypes)| format!("{attr} in {{{}}}", dtypes.join(", ")))
                .collect();
            let plural = if count == 1 { "" } else { "s" };
            let detail = if constraints.is_empty() {
                String::new()
            } else {
                format!(": {}", constraints.join("; "))
            };
            writeln!(out, "    {device}, {count} kernel{plural}{detail}").map_err(io_error)?;
            kernels += count;
        }
    }
    writeln!(out, "{} ops, {kernels} kernels", ops.len()).map_err(io_error)?;
    Ok(())
}

/// `opkit graph show`: the graph's `Display` (one line per node), then a
/// summary.
fn show(model: &Path, out: &mut dyn Write) -> Result<()> {
    let graph = graphdef::read(model, Registry::global())?;
    write!(out, "{graph}").map_err(io_error)?;
    let placeholders: Vec<&str> = graph
        .nodes()
        .iter()
        .filter(|n| n.op() == "Placeholder")
        .map(|n| n.name())
        .collect();
    writeln!(
        out,
        "{} nodes; placeholders: {}",
        graph.len(),
        if placeholders.is_empty() {
            "none".to_owned()
        } else {
            placeholders.join(", ")
        }
    )
    .map_err(io_error)
}

/// `opkit graph run`.
fn run_graph(
    model: &Path,
    inputs: &[String],
    outputs: &[String],
    output_dir: &Path,
    inter_op_threads: usize,
    out: &mut dyn Write,
) -> Result<()> {
    let graph = graphdef::read(model, Registry::global())?;
    let session = Session::builder(graph)
        .inter_op_threads(inter_op_threads)
        .build()?;
    let mut runner = session.runner();
    for input in inputs {
        let (name, file) = input_arg(input, "--input x=x.npy")?;
        let value =
            npy::read(Path::new(file)).map_err(|e| e.with_context(format!("--input {input}")))?;
        runner = runner.feed(name, value);
    }
    for output in outputs {
        runner = runner.fetch(output.as_str());
    }
    let values = runner.run()?;
    std::fs::create_dir_all(output_dir).map_err(|e| {
        Error::new(
            op_core::Code::from_io_error(&e),
            format!("cannot create {}: {e}", output_dir.display()),
        )
    })?;
    for (fetch, value) in outputs.iter().zip(&values) {
        let path = output_dir.join(format!("{}.npy", fetch.replace(':', "_")));
        npy::write(&path, value)?;
        writeln!(
            out,
            "{fetch}: {} {} -> {}",
            value.dtype(),
            value.shape(),
            path.display()
        )
        .map_err(io_error)?;
    }
    Ok(())
}

/// `opkit graph convert`.
fn export_onnx(
    input: &Path,
    output: &Path,
    fetches: &[String],
    domain: &str,
    out: &mut dyn Write,
) -> Result<()> {
    let graph = graphdef::read(input, Registry::global())?;
    let fetches: Vec<&str> = fetches.iter().map(String::as_str).collect();
    op_graph::onnx::write(&graph, &fetches, domain, output)?;
    writeln!(
        out,
        "{} nodes: {} -> {} (ONNX opset {}, our other ops in domain {domain})",
        graph.len(),
        input.display(),
        output.display(),
        op_graph::onnx::OPSET
    )
    .map_err(io_error)
}

fn convert(input: &Path, output: &Path, out: &mut dyn Write) -> Result<()> {
    let graph = graphdef::read(input, Registry::global())?;
    graphdef::write(&graph, output)?;
    writeln!(
        out,
        "{} nodes: {} -> {}",
        graph.len(),
        input.display(),
        output.display()
    )
    .map_err(io_error)
}
