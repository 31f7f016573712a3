//! `cargo xtask conformance --out CASES.jsonl`: the conformance suite's
//! cases for op-kernels' ops ([`op_host::conformance`], where the format
//! is described); `tools/python/conformance.py` runs them in each host.

use std::path::PathBuf;
use std::process::ExitCode;

use op_host::conformance::{Options, write_cases};

/// The command line of `cargo xtask conformance`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Where to write the cases (JSON lines).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Cases drawn per kernel.
    #[arg(long, default_value_t = 3)]
    pub cases: u32,
    /// Only this op (may be given several times).
    #[arg(long = "op", value_name = "NAME")]
    pub ops: Vec<String>,
    /// The seed cases are drawn from.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

/// Writes op-kernels' cases; prints how many.
pub fn main(args: &Args) -> ExitCode {
    op_kernels::link();
    let options = Options {
        cases: args.cases,
        seed: args.seed,
        ops: args.ops.clone(),
    };
    match write_cases(&args.out, &["op_kernels"], &options) {
        Ok(w) => {
            eprintln!(
                "wrote {}: {} cases of {} ops ({} ops or cases not drawn, each with why)",
                args.out.display(),
                w.cases,
                w.ops,
                w.not_drawn
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: writing {}: {e}", args.out.display());
            ExitCode::FAILURE
        }
    }
}
