//! The conformance suite's cases for this crate's own ops (as a crate of
//! ops outside op-kernels writes its own, with op-host's writer), beside
//! `cargo xtask conformance`'s for op-kernels':
//!
//! ```sh
//! cargo run -p examples --bin conformance-cases -- target/conformance/examples.jsonl
//! ```

use std::process::ExitCode;

fn main() -> ExitCode {
    examples::link();
    let Some(out) = std::env::args_os().nth(1) else {
        eprintln!("usage: conformance-cases OUT.jsonl");
        return ExitCode::from(2);
    };
    let out = std::path::PathBuf::from(out);
    let options = op_host::conformance::Options::default();
    match op_host::conformance::write_cases(&out, &["examples"], &options) {
        Ok(w) => {
            eprintln!(
                "wrote {}: {} cases of {} ops ({} ops or cases not drawn, each with why)",
                out.display(),
                w.cases,
                w.ops,
                w.not_drawn
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: writing {}: {e}", out.display());
            ExitCode::FAILURE
        }
    }
}
