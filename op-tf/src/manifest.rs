//! What a built library holds, as JSON, for the tools around it: `cargo
//! xtask package` reads it (through the library's `op_tf_manifest()`,
//! without TensorFlow) to write the Python package, whose wrappers get
//! their docstrings from it (TensorFlow's C op builder drops docs).
//!
//! ```
//! op_kernels::link();
//! let plan = op_tf::ExportPlan::new(op_core::Registry::global());
//! let manifest: serde_json::Value = serde_json::from_str(&op_tf::manifest::to_json(&plan)).unwrap();
//! let zero_out = manifest["ops"].as_array().unwrap().iter().find(|op| op["name"] == "ZeroOut").unwrap();
//! assert_eq!(zero_out["python_name"], "zero_out");
//! assert!(zero_out["doc"].as_str().unwrap().starts_with("Zeroes every element but the first."));
//! ```

use op_core::registry::OpEntry;
use serde_json::json;

use crate::plan::ExportPlan;
use crate::shape::ShapeSupport;

/// The manifest of `plan`: `{"ops": [op], "held_back": [op], "skipped":
/// [{"name", "why"}], "kernels": [kernel], "skipped_kernels": [{"op",
/// "name", "device", "why"}], "shim": {"path", "build"}}`, each `op` as
/// `op_entry` writes it, each kernel TensorFlow gets (of exported and
/// held-back ops) as `{"op", "name", "device", "constraints": [{"attr",
/// "dtype"}], "host_memory": [arg]}` (`device` as TensorFlow names it,
/// `dtype` its `DataType` number), the shim's path null when the build
/// skipped it (`build` says what it did).
pub fn to_json(plan: &ExportPlan<'_>) -> String {
    let ops: Vec<_> = plan.exported().map(op_entry).collect();
    let held_back: Vec<_> = plan.held_back().map(|(op, _)| op_entry(op)).collect();
    let skipped: Vec<_> = plan
        .skipped()
        .map(|(op, why)| json!({"name": op.def().name, "why": why.to_string()}))
        .collect();
    let kernels: Vec<_> = plan
        .kernels()
        .chain(plan.held_back_kernels())
        .map(|k| {
            json!({
                "op": k.op,
                "name": k.name,
                "device": k.device.tf_name(),
                "constraints": k.constraints.iter()
                    .map(|c| json!({"attr": c.attr, "dtype": c.dtype.enum_value()}))
                    .collect::<Vec<_>>(),
                "host_memory": k.host_memory,
            })
        })
        .collect();
    let skipped_kernels: Vec<_> = plan
        .skipped_kernels()
        .map(|(k, why)| json!({"op": k.op, "name": k.name, "device": k.device.tf_name(), "why": why.to_string()}))
        .collect();
    let shim = crate::shim::built_shim().map(|path| path.display().to_string());
    json!({
        "ops": ops,
        "held_back": held_back,
        "skipped": skipped,
        "kernels": kernels,
        "skipped_kernels": skipped_kernels,
        "shim": {"path": shim, "build": crate::shim::SHIM_BUILD},
    })
    .to_string()
}

/// What the Python side knows of an op: every host's entry
/// ([`op_host::manifest::op_json`]) and TensorFlow's own, `"gradient"`
/// (the gradient op and its wrapper, or null) and `"shapes"` (`ours`, or
/// `unknown, ` and why, [`ShapeSupport`]).
fn op_entry(op: &OpEntry) -> serde_json::Value {
    let mut entry = op_host::manifest::op_json(op);
    entry["gradient"] = crate::gradient::manifest_entry(op);
    entry["shapes"] = json!(match ShapeSupport::of(op) {
        ShapeSupport::Ours => "ours".to_string(),
        ShapeSupport::Unknown(why) => format!("unknown, {why}"),
    });
    entry
}

/// The names Python sees, as every host's module has them.
pub use op_host::names::{docstring, python_arg, python_name};
