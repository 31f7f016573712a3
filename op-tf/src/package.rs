//! `cargo xtask package --crate NAME --out DIR`: builds a crate's op
//! library (a `cdylib` with `op_tf::export!()`) and a Python package
//! around it, which `pip install DIR/<package>` installs. (Feature
//! `package`.)
//!
//! This workspace's `cargo xtask package` calls [`main`]; a downstream
//! workspace gets the same command from an `xtask` crate of its own:
//!
//! ```toml
//! # xtask/Cargo.toml
//! [dependencies]
//! op-tf = { version = "0.1", features = ["package"] }
//! ```
//!
//! ```no_run
//! // xtask/src/main.rs
//! use clap::Parser;
//!
//! #[derive(Parser)]
//! enum Command {
//!     /// Builds an op library and its Python package.
//!     Package(op_tf::package::Args),
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     let Command::Package(args) = Command::parse();
//!     op_tf::package::main(std::path::Path::new("."), &args)
//! }
//! ```
//!
//! with `.cargo/config.toml` holding `[alias] xtask = "run -p xtask --"`.
//!
//! ```text
//! DIR/<package>/pyproject.toml
//! DIR/<package>/<package>/__init__.py
//! DIR/<package>/<package>/tensorflow.py    import <package>.tensorflow as ops
//! DIR/<package>/<package>/lib<package>.so
//! DIR/<package>/<package>/libop_tf_shim.so       the shim, when built
//! DIR/<package>/<package>/manifest.json    what the library exports (from the library)
//! DIR/<package>/<package>/*.py             the crate's own Python, from its python/ folder
//! ```
//!
//! The package is named after the crate's library (`opkit-ops` gives
//! `opkit_ops`). What goes in comes from the built library itself: its
//! `op_tf_manifest()` (loaded here without TensorFlow) lists the ops, their
//! docstrings and what was left out; `--list` prints that and writes
//! nothing.

use std::io::{self, BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

/// The arguments of `cargo xtask package`.
#[derive(clap::Args)]
pub struct Args {
    /// The crate (a `cdylib` with `op_tf::export!()`), e.g. `opkit-ops`.
    #[arg(long = "crate", value_name = "NAME")]
    krate: String,
    /// Where to write the package (made if missing).
    #[arg(long, value_name = "DIR", required_unless_present = "list")]
    out: Option<PathBuf>,
    /// Build without optimizations (faster to build; kernels run slower).
    #[arg(long)]
    dev: bool,
    /// Print what the library exports and leaves out; write nothing.
    #[arg(long)]
    list: bool,
    /// The Python whose TensorFlow the shim is built against
    /// (ops with `resource` args need it). Default: `OPKIT_TF_PYTHON`, else
    /// `python3` if it has TensorFlow; without one, resource ops are left
    /// out, and `--list` says so.
    #[arg(long, value_name = "PATH")]
    python: Option<PathBuf>,
}

/// The Python the shim is built against: `--python`, else
/// `OPKIT_TF_PYTHON`, else `python3` if it imports TensorFlow.
fn tensorflow_python(args: &Args) -> Option<PathBuf> {
    let given = args
        .python
        .clone()
        .or_else(|| std::env::var_os("OPKIT_TF_PYTHON").map(PathBuf::from));
    if let Some(python) = given {
        let here = std::env::current_dir().unwrap_or_default();
        return Some(absolute_python(&python, &here));
    }
    let has_tensorflow = Command::new("python3")
        .args(["-c", "import tensorflow"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    has_tensorflow.then(|| "python3".into())
}

const TENSORFLOW_PY: &str = include_str!("../python/package/tensorflow.py");
const INIT_PY: &str = include_str!("../python/package/__init__.py");
const HOST_PY: &str = include_str!("../python/package/_host.py");
const PYPROJECT: &str = include_str!("../python/package/pyproject.toml");
const ONNX_PY: &str = include_str!("../python/package/onnx.py");
const JAX_PY: &str = include_str!("../python/package/jax.py");
const TORCH_PY: &str = include_str!("../python/package/torch.py");
const LITERT_PY: &str = include_str!("../python/package/litert.py");

/// A host's submodule of the package: written when the library exports
/// to that host (it has the host's manifest function).
struct HostModule {
    /// The host, as the summary line names it.
    host: &'static str,
    /// The library's C function that returns the host's manifest.
    manifest: &'static str,
    /// The module's name (`onnx` writes `onnx.py` and `onnx_manifest.json`).
    module: &'static str,
    /// The module's source, with `PACKAGE` for the package's name.
    source: &'static str,
    /// The macro that exports to the host, for the summary line.
    export: &'static str,
}

const HOST_MODULES: &[HostModule] = &[
    HostModule {
        host: "ONNX Runtime",
        manifest: "op_onnx_manifest",
        module: "onnx",
        source: ONNX_PY,
        export: "op_onnx::export!()",
    },
    HostModule {
        host: "JAX",
        manifest: "op_jax_manifest",
        module: "jax",
        source: JAX_PY,
        export: "op_jax::export!()",
    },
    HostModule {
        host: "PyTorch",
        manifest: "op_torch_manifest",
        module: "torch",
        source: TORCH_PY,
        export: "op_torch::export!()",
    },
    HostModule {
        host: "LiteRT",
        manifest: "op_litert_manifest",
        module: "litert",
        source: LITERT_PY,
        export: "op_litert::export!()",
    },
];

/// Runs the command in the workspace at `root`; prints its errors as
/// `cargo xtask package: ...`.
pub fn main(root: &Path, args: &Args) -> ExitCode {
    match package(root, args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cargo xtask package: {e}");
            ExitCode::FAILURE
        }
    }
}

fn package(root: &Path, args: &Args) -> io::Result<()> {
    let python = tensorflow_python(args);
    let Built { library, crate_dir } = build(root, &args.krate, args.dev, python.as_deref())?;
    let manifest = read_manifest(&library)?;
    let shim_build = manifest["shim"]["build"].as_str().unwrap_or("?");
    eprintln!("shim: {shim_build}");
    let package = library
        .file_stem()
        .and_then(|s| s.to_str())
        .and_then(|s| s.strip_prefix("lib"))
        .ok_or_else(|| {
            io::Error::other(format!("{} is not named lib<name>.so", library.display()))
        })?
        .to_string();
    let ops = manifest["ops"].as_array().cloned().unwrap_or_default();
    let held_back = manifest["held_back"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let skipped = manifest["skipped"].as_array().cloned().unwrap_or_default();
    let kernels = manifest["kernels"].as_array().cloned().unwrap_or_default();
    let gpu_kernels = kernels.iter().filter(|k| k["device"] == "GPU").count();
    let skipped_kernels = manifest["skipped_kernels"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if args.list {
        let held_back_note =
            "held back: registered after the load, with the package's own wrapper; ";
        let listed =
            (ops.iter().map(|op| (op, ""))).chain(held_back.iter().map(|op| (op, held_back_note)));
        for (op, note) in listed {
            println!(
                "op {} -> {}.tensorflow.{} ({note}shapes: {})",
                op["name"].as_str().unwrap_or("?"),
                package,
                op["python_name"].as_str().unwrap_or("?"),
                op["shapes"].as_str().unwrap_or("?")
            );
        }
        for op in &skipped {
            println!(
                "skipped {}: {}",
                op["name"].as_str().unwrap_or("?"),
                op["why"].as_str().unwrap_or("?")
            );
        }
        for kernel in &skipped_kernels {
            println!(
                "skipped kernel {} {}: {}",
                kernel["op"].as_str().unwrap_or("?"),
                kernel["name"].as_str().unwrap_or("?"),
                kernel["why"].as_str().unwrap_or("?")
            );
        }
        println!(
            "{} ops ({} held back), {} kernels ({gpu_kernels} for the GPU) exported; {} ops and \
             {} kernels left out",
            ops.len() + held_back.len(),
            held_back.len(),
            kernels.len(),
            skipped.len(),
            skipped_kernels.len()
        );
        return Ok(());
    }
    let out = args
        .out
        .as_ref()
        .expect("clap requires --out without --list");
    let top = out.join(&package);
    let inner = top.join(&package);
    std::fs::create_dir_all(&inner)?;
    let library_name = library.file_name().expect("a file").to_owned();
    std::fs::copy(&library, inner.join(&library_name))?;
    let shim = inner.join(crate::shim::SHIM_FILE);
    match manifest["shim"]["path"].as_str() {
        // Beside the library, where its load looks first.
        Some(built) => std::fs::copy(built, &shim).map(drop)?,
        None if shim.exists() => std::fs::remove_file(&shim)?,
        None => {}
    }
    let mut manifest = manifest;
    manifest["library"] = serde_json::Value::String(library_name.to_string_lossy().into_owned());
    std::fs::write(
        inner.join("manifest.json"),
        serde_json::to_string_pretty(&manifest)?,
    )?;
    std::fs::write(
        inner.join("tensorflow.py"),
        TENSORFLOW_PY.replace("PACKAGE", &package),
    )?;
    std::fs::write(
        inner.join("__init__.py"),
        INIT_PY.replace("PACKAGE", &package),
    )?;
    std::fs::write(inner.join("_host.py"), HOST_PY)?;
    let pyproject = PYPROJECT
        .replace("DISTRIBUTION", &package.replace('_', "-"))
        .replace("VERSION", env!("CARGO_PKG_VERSION"))
        .replace("PACKAGE", &package);
    std::fs::write(top.join("pyproject.toml"), pyproject)?;
    let mut hosts = String::new();
    for host in HOST_MODULES {
        hosts += &write_host_module(
            host,
            &library,
            &inner,
            &package,
            &library_name.to_string_lossy(),
        )?;
    }
    let extras = copy_python_of_its_own(&crate_dir, &inner)?;
    eprintln!(
        "wrote {}: {} ops ({} held back), {} kernels ({gpu_kernels} for the GPU; {} ops and {} \
         kernels left out: `--list` says why){hosts}{}; install it with `pip install {}`",
        top.display(),
        ops.len() + held_back.len(),
        held_back.len(),
        kernels.len(),
        skipped.len(),
        skipped_kernels.len(),
        if extras.is_empty() {
            String::new()
        } else {
            format!("; the crate's own Python: {}", extras.join(", "))
        },
        top.display()
    );
    Ok(())
}

/// The `.py` files of the crate's `python/` folder, copied into the
/// package beside the generated modules (wrappers of the crate's own, such
/// as a `tf.saved_model.experimental.TrackableResource` class over its
/// resource ops); returns their names. A file named as a generated module
/// is refused.
fn copy_python_of_its_own(crate_dir: &Path, package: &Path) -> io::Result<Vec<String>> {
    let dir = crate_dir.join("python");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(Vec::new());
    };
    let mut names = Vec::new();
    for entry in entries {
        let path = entry?.path();
        if path.extension().is_none_or(|e| e != "py") || !path.is_file() {
            continue;
        }
        let name = path
            .file_name()
            .expect("a file")
            .to_string_lossy()
            .into_owned();
        if name == "__init__.py" || name == "tensorflow.py" {
            return Err(io::Error::other(format!(
                "{}: {name} is a module the package generates; give yours another name",
                path.display()
            )));
        }
        std::fs::copy(&path, package.join(&name))?;
        names.push(name);
    }
    names.sort();
    Ok(names)
}

/// `python` as the shim's build script must get it: a relative path made
/// absolute from `here` (the script runs in another folder), a bare command
/// name (found on `PATH`) or an absolute path as it is.
fn absolute_python(python: &Path, here: &Path) -> PathBuf {
    if python.is_relative() && python.components().count() > 1 {
        here.join(python)
    } else {
        python.to_owned()
    }
}

/// What `build` made.
struct Built {
    /// The `cdylib`.
    library: PathBuf,
    /// The folder of the crate's `Cargo.toml`.
    crate_dir: PathBuf,
}

/// Builds `krate` (its shim against `python`'s TensorFlow, if
/// any) and returns its `cdylib`.
fn build(root: &Path, krate: &str, dev: bool, python: Option<&Path>) -> io::Result<Built> {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    match python {
        Some(python) => command.env("OPKIT_TF_PYTHON", python),
        None => command.env_remove("OPKIT_TF_PYTHON"),
    };
    command.current_dir(root).args([
        "build",
        "-p",
        krate,
        "--message-format=json-render-diagnostics",
    ]);
    if !dev {
        command.arg("--release");
    }
    eprintln!("+ {command:?}");
    let mut child = command.stdout(Stdio::piped()).spawn()?;
    let mut built = None;
    for line in BufReader::new(child.stdout.take().expect("piped")).lines() {
        let message: serde_json::Value = match serde_json::from_str(&line?) {
            Ok(message) => message,
            Err(_) => continue,
        };
        let is_cdylib = message["reason"] == "compiler-artifact"
            && message["target"]["kind"]
                .as_array()
                .is_some_and(|kinds| kinds.iter().any(|k| k == "cdylib"));
        if is_cdylib {
            let library = message["filenames"].as_array().and_then(|files| {
                files
                    .iter()
                    .filter_map(|f| f.as_str())
                    .find(|f| f.ends_with(".so"))
            });
            let crate_dir = message["manifest_path"]
                .as_str()
                .and_then(|manifest| Path::new(manifest).parent());
            if let (Some(library), Some(crate_dir)) = (library, crate_dir) {
                built = Some(Built {
                    library: library.into(),
                    crate_dir: crate_dir.into(),
                });
            }
        }
    }
    let status = child.wait()?;
    if !status.success() {
        return Err(io::Error::other(format!(
            "building {krate} failed: {status}"
        )));
    }
    built.ok_or_else(|| {
        io::Error::other(format!(
            "crate {krate} builds no shared library: give it `[lib] crate-type = [\"cdylib\"]` \
             and `op_tf::export!();` in its lib.rs"
        ))
    })
}

/// `host`'s submodule, when the library exports to it: `<module>.py`
/// and `<module>_manifest.json`, or neither. Returns what to add to the
/// summary line.
fn write_host_module(
    host: &HostModule,
    library: &Path,
    inner: &Path,
    package: &str,
    library_name: &str,
) -> io::Result<String> {
    let py = inner.join(format!("{}.py", host.module));
    let json = inner.join(format!("{}_manifest.json", host.module));
    let Some(mut manifest) = read_named_manifest(library, host.manifest)? else {
        for stale in [py, json] {
            if stale.exists() {
                std::fs::remove_file(stale)?;
            }
        }
        return Ok(format!("; no {} ops (no `{}`)", host.host, host.export));
    };
    manifest["library"] = serde_json::Value::String(library_name.into());
    std::fs::write(&json, serde_json::to_string_pretty(&manifest)?)?;
    std::fs::write(&py, host.source.replace("PACKAGE", package))?;
    let domain = match manifest["domain"].as_str() {
        Some(domain) => format!(" in domain {domain}"),
        None => String::new(),
    };
    Ok(format!(
        "; {}: {} ops{domain} ({} left out)",
        host.host,
        manifest["ops"].as_array().map_or(0, Vec::len),
        manifest["skipped"].as_array().map_or(0, Vec::len),
    ))
}

/// The library's manifest, from its `op_tf_manifest()`.
fn read_manifest(library: &Path) -> io::Result<serde_json::Value> {
    read_named_manifest(library, "op_tf_manifest")?.ok_or_else(|| {
        io::Error::other(format!(
            "{} has no op_tf_manifest(): is `op_tf::export!();` in its lib.rs?",
            library.display()
        ))
    })
}

/// The JSON that the library's C function `symbol` returns, or `None`
/// when the library has no such function.
fn read_named_manifest(library: &Path, symbol: &str) -> io::Result<Option<serde_json::Value>> {
    // SAFETY: loading runs the library's constructors: op-core's and
    // `op_tf::export!`'s, which find no TensorFlow in this process and
    // only record that. The library stays loaded until the process ends.
    let lib = unsafe { libloading::Library::new(library) }
        .map_err(|e| io::Error::other(format!("loading {}: {e}", library.display())))?;
    // Kept loaded until the process ends (unloading a library whose
    // constructors ran is not worth its risk in a build tool).
    let lib: &'static libloading::Library = Box::leak(Box::new(lib));
    let name = format!("{symbol}\0");
    // SAFETY: each host's `export!` defines its manifest function with
    // this signature.
    let manifest: libloading::Symbol<'_, unsafe extern "C" fn() -> *const std::ffi::c_char> =
        match unsafe { lib.get(name.as_bytes()) } {
            Ok(function) => function,
            Err(_) => return Ok(None),
        };
    // SAFETY: it returns a C string the library keeps.
    let text = unsafe { std::ffi::CStr::from_ptr(manifest()) }
        .to_string_lossy()
        .into_owned();
    let value: serde_json::Value = serde_json::from_str(&text)?;
    if let Some(error) = value.get("error") {
        return Err(io::Error::other(format!("the library's manifest: {error}")));
    }
    Ok(Some(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_python_is_made_absolute_and_a_command_name_kept() {
        let here = Path::new("/work/repo");
        assert_eq!(
            absolute_python(Path::new("venv/bin/python"), here),
            Path::new("/work/repo/venv/bin/python")
        );
        assert_eq!(
            absolute_python(Path::new("python3"), here),
            Path::new("python3")
        );
        assert_eq!(
            absolute_python(Path::new("/usr/bin/python3"), here),
            Path::new("/usr/bin/python3")
        );
    }
}
