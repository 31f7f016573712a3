//! `cargo xtask lite-resolver MODEL.tflite... [--out FILE] [--check]`:
//! selective registration as code. Writes a Rust function
//! `pub fn resolver() -> MutableOpResolver` registering exactly the
//! builtins the models use (with this crate's builtin kernels, found by
//! code with `op_lite::builtins::builtin_kernel`), and a constant
//! `CUSTOM_OPS` naming the custom ops the caller must add.
//!
//! TensorFlow Lite does the same with its `generate_op_registrations` tool
//! and `--selective_registration`: a binary that links only the kernels its
//! models use. Here the unused kernels stay out of the resolver's tables
//! (and, with link-time dead-code elimination, out of the binary when
//! nothing else names them).
//!
//! With `--check`, writes nothing and fails when `FILE` differs from what
//! would be generated (CI keeps a committed resolver in step with its
//! models that way).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use op_lite::Model;
use op_lite::builtins::builtin_kernel;
use op_lite::model::BuiltinOperator;
use op_lite::resolver::ops_used;

/// The command's arguments.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The models (`.tflite`) whose ops the resolver registers.
    #[arg(required = true, value_name = "MODEL.tflite")]
    pub models: Vec<PathBuf>,
    /// Write the code to FILE (stdout without it).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// With --out: write nothing; fail (exit status 1) if FILE differs from
    /// what would be generated.
    #[arg(long, requires = "out")]
    pub check: bool,
}

/// What the models use: each builtin with the versions and node counts,
/// each custom op's name with its versions.
#[derive(Debug, Default)]
struct Used {
    builtins: BTreeMap<BuiltinOperator, Vec<(i32, usize)>>,
    customs: BTreeMap<String, Vec<(i32, usize)>>,
}

/// The Rust code of the resolver for `models` (each a name for the
/// header, such as the file's name, and the model).
///
/// Fails, naming the model, when an operator names an operator code the
/// model lacks, or a custom operator code has no name.
pub fn generate(models: &[(String, Model)]) -> Result<String, String> {
    let mut used = Used::default();
    for (name, model) in models {
        let ops = ops_used(&[model]).map_err(|e| format!("{name}: {}", e.message()))?;
        for op in ops {
            let entry = (op.code.version, op.nodes);
            if op.code.builtin == BuiltinOperator::CUSTOM {
                let custom = op.code.custom_name.ok_or_else(|| {
                    format!(
                        "{name}: node {} is a custom op without a name",
                        op.first_node
                    )
                })?;
                add(used.customs.entry(custom).or_default(), entry);
            } else {
                add(used.builtins.entry(op.code.builtin).or_default(), entry);
            }
        }
    }
    check_kernels(&used)?;
    Ok(code(models, &used))
}

/// Fails, naming each, when op-lite has no kernel for a builtin the models
/// use or its kernel does not serve the version they use: the generated
/// resolver would not run them.
fn check_kernels(used: &Used) -> Result<(), String> {
    let mut problems = Vec::new();
    for (code, uses) in &used.builtins {
        match builtin_kernel(*code) {
            None => problems.push(format!("op-lite has no builtin kernel for {code}")),
            Some(kernel) => {
                for (version, _) in uses {
                    if !kernel.versions().contains(*version) {
                        problems.push(format!(
                            "op-lite's {code} kernel serves {}, not version {version}",
                            kernel.versions()
                        ));
                    }
                }
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

/// Adds a (version, nodes) use, summing nodes of the same version.
fn add(uses: &mut Vec<(i32, usize)>, (version, nodes): (i32, usize)) {
    match uses.iter_mut().find(|(v, _)| *v == version) {
        Some((_, n)) => *n += nodes,
        None => uses.push((version, nodes)),
    }
    uses.sort();
}

/// `version 1, 2 nodes`; `versions 1 (1 node), 2 (3 nodes)`.
fn describe(uses: &[(i32, usize)]) -> String {
    let plural = |n: usize| if n == 1 { "node" } else { "nodes" };
    match uses {
        [(version, nodes)] => format!("version {version}, {nodes} {}", plural(*nodes)),
        _ => {
            let each: Vec<String> = uses
                .iter()
                .map(|(v, n)| format!("{v} ({n} {})", plural(*n)))
                .collect();
            format!("versions {}", each.join(", "))
        }
    }
}

fn code(models: &[(String, Model)], used: &Used) -> String {
    let names: Vec<&str> = models.iter().map(|(name, _)| name.as_str()).collect();
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = writeln!(
        out,
        "//! Generated by `cargo xtask lite-resolver {}`: do not edit.",
        names.join(" ")
    );
    let _ = writeln!(
        out,
        "//!\n//! Selective registration: the builtins that these models use, and\n\
         //! the names of their custom ops, which the caller registers."
    );
    out.push_str(
        "\nuse op_lite::MutableOpResolver;\nuse op_lite::builtins::builtin_kernel;\n\
         use op_lite::model::BuiltinOperator;\n\n",
    );
    let _ = writeln!(
        out,
        "/// A resolver with op-lite's kernel for each builtin that the models use\n\
         /// ({}), for every version the kernel serves. Add the\n\
         /// [`CUSTOM_OPS`] with `add_custom` before building an interpreter.",
        names.join(", ")
    );
    out.push_str("pub fn resolver() -> MutableOpResolver {\n");
    out.push_str("    let mut resolver = MutableOpResolver::new();\n");
    if !used.builtins.is_empty() {
        out.push_str("    let builtins = [\n");
        for (code, uses) in &used.builtins {
            let path = match code.name() {
                Some(name) => format!("BuiltinOperator::{name}"),
                None => format!("BuiltinOperator({})", code.0),
            };
            let _ = writeln!(out, "        // {}", describe(uses));
            let _ = writeln!(out, "        {path},");
        }
        out.push_str("    ];\n");
        out.push_str(
            "    for code in builtins {\n\
             \x20       // A code without a kernel stays unregistered: the interpreter then\n\
             \x20       // names it, in TensorFlow Lite's words, when it loads the model.\n\
             \x20       if let Some(kernel) = builtin_kernel(code) {\n\
             \x20           resolver.add_builtin_versions(code, kernel, kernel.versions());\n\
             \x20       }\n\
             \x20   }\n",
        );
    }
    out.push_str("    resolver\n}\n\n");
    out.push_str("/// The custom ops the models use, which the caller must add with\n");
    out.push_str("/// `MutableOpResolver::add_custom`.\n");
    if used.customs.is_empty() {
        out.push_str("pub const CUSTOM_OPS: &[&str] = &[];\n");
    } else {
        out.push_str("pub const CUSTOM_OPS: &[&str] = &[\n");
        for (name, uses) in &used.customs {
            let _ = writeln!(out, "    // {}", describe(uses));
            let _ = writeln!(out, "    {name:?},");
        }
        out.push_str("];\n");
    }
    out
}

/// Reads each model, named in the code's header by its file name.
fn read_models(paths: &[PathBuf]) -> Result<Vec<(String, Model)>, String> {
    paths
        .iter()
        .map(|path| {
            let model = Model::from_file(path).map_err(|e| e.to_string())?;
            let name = path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into(),
            );
            Ok((name, model))
        })
        .collect()
}

/// Generates the code for `args.models`; writes it to `args.out` or
/// stdout, or with `args.check` compares it. `Ok(false)`: the file is stale.
pub fn run(args: &Args, stdout: &mut dyn std::io::Write) -> Result<bool, String> {
    let code = generate(&read_models(&args.models)?)?;
    match (&args.out, args.check) {
        (None, _) => stdout
            .write_all(code.as_bytes())
            .map(|()| true)
            .map_err(|e| e.to_string()),
        (Some(file), false) => std::fs::write(file, code)
            .map(|()| true)
            .map_err(|e| format!("cannot write {}: {e}", file.display())),
        (Some(file), true) => Ok(is_current(file, &code)),
    }
}

fn is_current(file: &Path, code: &str) -> bool {
    std::fs::read_to_string(file).is_ok_and(|committed| committed == code)
}

/// The command: exit status 0, or 1 with the error (or the stale file)
/// on stderr.
pub fn main(args: &Args) -> ExitCode {
    match run(args, &mut std::io::stdout().lock()) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            let file = args.out.as_deref().unwrap_or(Path::new("-"));
            eprintln!(
                "cargo xtask lite-resolver: {} is stale or missing: run the command without --check",
                file.display()
            );
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("cargo xtask lite-resolver: {e}");
            ExitCode::FAILURE
        }
    }
}
