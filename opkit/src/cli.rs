//! The `opkit` command-line tool, as a library function over whatever ops
//! are linked into the program that calls it.
//!
//! - `opkit ops`: the registered ops and their kernels (device, dtypes).
//!
//! Errors go to stderr, with a non-zero exit status.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use op_core::{Registry, Result};

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
        /// Only ops whose name contains this text.
        filter: Option<String>,
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
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(err, "opkit: {e}");
            ExitCode::FAILURE
        }
    }
}

fn io_error(e: std::io::Error) -> op_core::Error {
    op_core::Error::new(op_core::Code::from_io_error(&e), e.to_string())
}

/// `opkit ops`: each op's signature, then one line per device with the
/// dtypes its kernels cover for each constrained type attr.
fn list_ops(registry: &Registry, filter: Option<&str>, out: &mut dyn Write) -> Result<()> {
    let mut ops: Vec<_> = registry
        .ops()
        .filter(|op| filter.is_none_or(|f| op.def().name.contains(f)))
        .collect();
    ops.sort_by(|a, b| a.def().name.cmp(&b.def().name));
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
