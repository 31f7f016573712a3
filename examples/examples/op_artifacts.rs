//! A downstream crate generating the artifacts of its own ops (an
//! `ops.pbtxt`, a Markdown reference and a coverage matrix) with the
//! library function the workspace's `cargo xtask codegen` uses,
//! [`op_core::artifacts::Artifacts`]. A crate with ops calls the same from
//! its own xtask or binary; this one commits them in `examples/ops/`.
//!
//! ```sh
//! cargo run -p examples --example op_artifacts              # rewrites examples/ops/
//! cargo run -p examples --example op_artifacts -- --check   # fails if examples/ops/ is stale
//! cargo run -p examples --example op_artifacts -- DIR       # writes into DIR instead
//! ```
//!
//! Exit status: 0 when written or up to date, 1 when `--check` finds a
//! stale or missing file (each named on stderr), 2 when reading or writing
//! fails.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use op_core::Registry;
use op_core::artifacts::Artifacts;

/// The artifacts of this crate's ops in `registry`.
///
/// The registry of a program holds every linked crate's ops (here also
/// op-kernels', whose hash table ops share our `Examples>` namespace), so
/// the ops are chosen by where they are declared: this crate's sources,
/// `examples/src/` from the workspace root (for a crate that is its own
/// workspace, `src/`).
pub fn artifacts(registry: &Registry) -> Artifacts<'_> {
    Artifacts::new(registry)
        .declared_under("examples/src/")
        .title("examples ops")
        .generated_by("cargo run -p examples --example op_artifacts")
}

/// The committed folder: `examples/ops/`.
pub fn default_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("ops")
}

fn main() -> ExitCode {
    // Naming the crate links its ops into this program.
    examples::link();
    let mut check = false;
    let mut dir = default_dir();
    for arg in std::env::args().skip(1) {
        if arg == "--check" {
            check = true;
        } else {
            dir = arg.into();
        }
    }
    let artifacts = artifacts(Registry::global());
    let result = if check {
        artifacts.check(&dir).map(|stale| {
            for file in &stale {
                eprintln!("{file}");
            }
            stale.is_empty()
        })
    } else {
        artifacts.write(&dir).map(|written| {
            for path in written {
                println!("wrote {}", path.display());
            }
            true
        })
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("run `cargo run -p examples --example op_artifacts` and commit the result");
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("op_artifacts: {e}");
            ExitCode::from(2)
        }
    }
}
