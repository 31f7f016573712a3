//! Builds the shim (`shim/shim.cc`) into a shared library of its own, when
//! `OPKIT_TF_PYTHON` names a Python that has TensorFlow.
//!
//! TensorFlow's C API cannot make or read resource handles, so ops with
//! `resource` args need these few C++ functions, compiled against one
//! TensorFlow release's headers and C++ ABI (`tf.sysconfig`); the shim also
//! spares plain tensors the C API's per-tensor wrappers. Ops without
//! resources need none of it: with `OPKIT_TF_PYTHON` unset the shim is
//! skipped, the export leaves resource ops out and says why, and plain
//! tensors take the C API.
//!
//! The shim is a shared library, not objects linked into the op library,
//! so that the op library itself never links TensorFlow: it loads without
//! TensorFlow (for its manifest), and the shim, which does link it, is
//! loaded only once TensorFlow is in the process.
//!
//! What the build found reaches the code as two variables:
//! `OP_TF_SHIM_PATH` (the shim, or empty) and `OP_TF_SHIM_BUILD` (what it
//! was built against, or why it was skipped), which the load report and
//! `cargo xtask package` print.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The shim's file name, beside the op library in a package.
const SHIM_FILE: &str = "libop_tf_shim.so";

/// What the Python that `OPKIT_TF_PYTHON` names says of its TensorFlow:
/// version, library dir and compile flags, one per line.
const QUERY: &str = "import tensorflow as tf\n\
print(tf.__version__)\n\
print(tf.sysconfig.get_lib())\n\
print('\\n'.join(tf.sysconfig.get_compile_flags()))\n";

fn main() {
    println!("cargo:rerun-if-changed=shim/shim.cc");
    println!("cargo:rerun-if-env-changed=OPKIT_TF_PYTHON");
    println!("cargo:rerun-if-env-changed=CXX");
    let (path, build) = match env::var_os("OPKIT_TF_PYTHON") {
        None => (
            String::new(),
            "skipped: OPKIT_TF_PYTHON is not set (cargo xtask package sets it to a Python \
             that has TensorFlow)"
                .to_owned(),
        ),
        Some(python) => match build_shim(Path::new(&python)) {
            Ok((path, build)) => (path.display().to_string(), build),
            // Asked for and impossible: the build stops and says why.
            Err(why) => {
                eprintln!("error: op-tf's shim: {why}");
                std::process::exit(1);
            }
        },
    };
    println!("cargo:rustc-env=OP_TF_SHIM_PATH={path}");
    println!("cargo:rustc-env=OP_TF_SHIM_BUILD={build}");
    println!("cargo:rustc-env=OP_TF_SHIM_FILE={SHIM_FILE}");
}

/// Compiles and links the shim against `python`'s TensorFlow; returns its
/// path and a line saying what it was built against.
fn build_shim(python: &Path) -> Result<(PathBuf, String), String> {
    // A build script runs in its package's folder, not where cargo was
    // started: a relative path would name another file than the user meant.
    if python.is_relative() && python.components().count() > 1 {
        return Err(format!(
            "OPKIT_TF_PYTHON={} is a relative path; give an absolute one, or a command name \
             found on PATH (cargo xtask package --python makes its path absolute)",
            python.display()
        ));
    }
    let out = Command::new(python)
        .args(["-c", QUERY])
        .output()
        .map_err(|e| format!("cannot run OPKIT_TF_PYTHON={}: {e}", python.display()))?;
    if !out.status.success() {
        return Err(format!(
            "OPKIT_TF_PYTHON={} could not import tensorflow: {}",
            python.display(),
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        ));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut lines = stdout.lines();
    let (Some(version), Some(lib_dir)) = (lines.next(), lines.next()) else {
        return Err(format!(
            "unexpected answer from {}: {stdout}",
            python.display()
        ));
    };
    // Headers as system headers: their warnings are TensorFlow's, not ours.
    let flags: Vec<String> = lines
        .map(|flag| match flag.strip_prefix("-I") {
            Some(dir) => format!("-isystem{dir}"),
            None => flag.to_owned(),
        })
        .collect();
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").ok_or("OUT_DIR is not set")?);
    let shim = out_dir.join(SHIM_FILE);
    // cc finds the C++ compiler (CXX, the target's defaults); it links a
    // shared library here, which cc's own archive step does not make.
    let compiler = cc::Build::new()
        .cpp(true)
        .cargo_metadata(false)
        .cargo_warnings(false)
        .get_compiler();
    let mut command = compiler.to_command();
    command
        .args(["-shared", "-fPIC", "-O2", "-Wall", "-Wextra"])
        .args(&flags)
        .arg(format!("-DOPKIT_TF_VERSION=\"{version}\""))
        .arg("shim/shim.cc")
        .arg("-o")
        .arg(&shim)
        .arg(format!("-L{lib_dir}"))
        .arg("-l:libtensorflow_framework.so.2")
        // A symbol this TensorFlow lacks fails the build, not the load.
        .arg("-Wl,--no-undefined");
    let result = command
        .output()
        .map_err(|e| format!("cannot run the C++ compiler {:?}: {e}", compiler.path()))?;
    let messages = String::from_utf8_lossy(&result.stderr);
    if !result.status.success() {
        return Err(format!("compiling shim/shim.cc failed:\n{messages}"));
    }
    for line in messages.lines() {
        println!("cargo:warning={line}");
    }
    let build = format!(
        "built against TensorFlow {version} ({lib_dir}, flags {}) with {}",
        flags.join(" "),
        compiler.path().display()
    );
    Ok((shim, build))
}
