//! What runs when PyTorch loads the library (`torch.ops.load_library`):
//! find PyTorch's stable ABI in the process, define every exported op's
//! schema in the library's namespace, give each op (and its gradient) a
//! kernel slot, and register the slots' trampolines as the ops' CPU
//! kernels. A report of what was done is kept for the Python side.

use std::ffi::{CString, c_char};
use std::fmt::Write as _;
use std::sync::OnceLock;

use op_core::{Error, Registry, Result};
use op_host::Crates;
use serde_json::json;

use crate::kernel::{Loaded, OPS, SLOTS, SlotOp, TRAMPOLINES};
use crate::plan::{HOST, TorchPlan};
use crate::schema::{Schema, Slot};
use crate::shim::{Host, TARGET, TARGET_VERSION, TorchLibraryHandle};

/// What the load did, as text: `ok` and a line per op, or `error:` and why.
static REPORT: OnceLock<CString> = OnceLock::new();

/// Registers the ops of `crates` in PyTorch namespace `namespace`: the
/// hook `export!` queues for the library's load. Never panics (a
/// constructor must not unwind); what went wrong is in the report. In a
/// process without PyTorch (the library loaded by TensorFlow, or by
/// `cargo xtask package`) it registers nothing and says so.
pub fn on_load(crates: Crates, namespace: &str) {
    let report =
        match op_core::contain_panic("registering with PyTorch", || register(crates, namespace)) {
            Ok(text) => format!("ok\n{text}"),
            Err(error) => format!("error: {error}"),
        };
    let _ = REPORT.set(CString::new(report.replace('\0', "\\0")).unwrap_or_default());
}

/// The load's report, as a C string: what `op_torch_load_report()`
/// returns.
pub fn report() -> *const c_char {
    REPORT.get().map(|r| r.as_ptr()).unwrap_or(
        c"error: the library's ops were not registered with PyTorch (not loaded yet)".as_ptr(),
    )
}

fn c_string(text: &str) -> Result<CString> {
    CString::new(text).map_err(|_| Error::invalid_argument(format!("{text:?} holds a NUL")))
}

fn register(crates: Crates, namespace: &str) -> Result<String> {
    let host = Host::load().map_err(|missing| {
        Error::failed_precondition(format!(
            "PyTorch's stable ABI is not in this process (no {}): load the library with \
             torch.ops.load_library after `import torch` (PyTorch {TARGET} or later)",
            missing.first().copied().unwrap_or("function")
        ))
    })?;
    let plan = TorchPlan::new(Registry::global(), crates);
    let mut ops: Vec<SlotOp> = Vec::new();
    for op in plan.exported() {
        let schemas =
            std::iter::once((&op.schema, false)).chain(op.gradient.iter().map(|g| (g, true)));
        for (schema, gradient) in schemas {
            ops.push(SlotOp {
                entry: op.entry,
                schema: schema.clone(),
                gradient,
                qualified: format!("{namespace}::{}", schema.name),
                tensor_names: crate::kernel::tensor_arg_names(schema),
            });
        }
    }
    if ops.len() > SLOTS {
        return Err(Error::resource_exhausted(format!(
            "the library exports {} PyTorch ops (forward and gradient), more than the {SLOTS} \
             kernel slots it has: split it, or export fewer crates (export!(crates = [...]))",
            ops.len()
        )));
    }
    let ns = c_string(namespace)?;
    let file = c_string(file!())?;
    let mut def_lib: TorchLibraryHandle = std::ptr::null_mut();
    // SAFETY: C strings PyTorch copies; the library is kept (never
    // deleted: the ops stay registered while the process lives).
    if unsafe {
        (host.torch.aoti_torch_library_init_def)(ns.as_ptr(), file.as_ptr(), line!(), &mut def_lib)
    } != 0
    {
        return Err(Error::already_exists(format!(
            "PyTorch refused namespace '{namespace}' (another library defines it already?)"
        )));
    }
    let kernels_for = |key: &std::ffi::CStr| {
        let mut library: TorchLibraryHandle = std::ptr::null_mut();
        // SAFETY: as above.
        let code = unsafe {
            (host.torch.aoti_torch_library_init_impl)(
                ns.as_ptr(),
                key.as_ptr(),
                file.as_ptr(),
                line!(),
                &mut library,
            )
        };
        if code != 0 {
            return Err(Error::internal(format!(
                "PyTorch refused {key:?} kernels for '{namespace}'"
            )));
        }
        Ok(library)
    };
    let cpu_lib = kernels_for(c"CPU")?;
    // PyTorch picks a kernel by its tensor arguments' device: an op
    // without any (NoOp) has its kernel for every device.
    let any_lib = kernels_for(c"CompositeExplicitAutograd")?;
    let mut text = String::new();
    for (slot, op) in ops.iter().enumerate() {
        let schema = c_string(&op.schema.text)?;
        let name = c_string(&op.schema.name)?;
        let takes_tensors = op
            .schema
            .slots
            .iter()
            .any(|(slot, _)| *slot == Slot::Tensor);
        let kernels = if takes_tensors { cpu_lib } else { any_lib };
        // SAFETY: live libraries, C strings PyTorch copies, a trampoline
        // that lives as long as the library.
        let ok = unsafe {
            (host.torch.aoti_torch_library_def)(def_lib, schema.as_ptr()) == 0
                && (host.torch.torch_library_impl)(
                    kernels,
                    name.as_ptr(),
                    TRAMPOLINES[slot],
                    TARGET_VERSION,
                ) == 0
        };
        let _ = if ok {
            writeln!(text, "op {}::{}", namespace, op.schema.text)
        } else {
            writeln!(
                text,
                "refused {}::{}: PyTorch did not take the schema",
                namespace, op.schema.text
            )
        };
    }
    for (op, why) in plan.skipped() {
        let _ = writeln!(text, "skipped {}: {}", op.def().name, why.describe(HOST));
    }
    let _ = OPS.set(Loaded { host, ops });
    Ok(text)
}

/// The manifest of `plan` in `namespace`: `{"host": "pytorch", "namespace",
/// "target": "2.10", "ops": [op], "skipped": [{"name", "why"}]}`, each op
/// as [`op_host::manifest::op_json`] writes it, with `"torch_name"`,
/// `"schema"` and `"backward"` (its gradient's schema name, or null).
pub fn manifest(plan: &TorchPlan, namespace: &str) -> String {
    let ops: Vec<_> = plan
        .exported()
        .map(|op| {
            let mut entry = op_host::manifest::op_json(op.entry);
            entry["torch_name"] = json!(op.schema.name);
            entry["schema"] = json!(op.schema.text);
            entry["backward"] = json!(op.gradient.as_ref().map(|g: &Schema| g.name.clone()));
            entry
        })
        .collect();
    let skipped: Vec<_> = plan
        .skipped()
        .map(|(op, why)| json!({"name": op.def().name, "why": why.describe(HOST)}))
        .collect();
    json!({
        "host": "pytorch",
        "namespace": namespace,
        "target": TARGET,
        "ops": ops,
        "skipped": skipped,
    })
    .to_string()
}

/// [`manifest`] of the ops of `crates`, as a C string the library keeps.
pub fn manifest_for(crates: Crates, namespace: &str) -> *const c_char {
    static MANIFEST: OnceLock<CString> = OnceLock::new();
    MANIFEST
        .get_or_init(|| {
            CString::new(manifest(
                &TorchPlan::new(Registry::global(), crates),
                namespace,
            ))
            .unwrap_or_default()
        })
        .as_ptr()
}
