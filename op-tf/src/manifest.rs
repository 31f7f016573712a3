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
use op_core::{ArgDef, ArgType, OpDef};
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

/// What the Python side knows of an op: `{"name", "python_name", "doc",
/// "gradient", "not_differentiable", "shapes", "inputs", "outputs",
/// "attrs"}`; each input and output with its grouping (`number_attr` or
/// `type_list_attr` for a list), each input with its Python name and
/// fixed dtype (its `DataType` number, or null), and `attrs` those a
/// caller passes (no input gives them), each with its Python name.
fn op_entry(op: &OpEntry) -> serde_json::Value {
    let def = op.def();
    let arg = |a: &ArgDef| {
        json!({
            "name": a.name,
            "python_name": python_arg(&a.name),
            "number_attr": a.number_attr,
            "type_list_attr": a.type_list_attr(),
            "dtype": match &a.ty {
                ArgType::Fixed(dtype) => Some(dtype.enum_value()),
                _ => None,
            },
        })
    };
    let inferred = inferred_attrs(def);
    json!({
        "name": def.name,
        "python_name": python_name(&def.name),
        "doc": docstring(def),
        "gradient": crate::gradient::manifest_entry(op),
        "not_differentiable": crate::gradient::is_not_differentiable(op),
        "shapes": match ShapeSupport::of(op) {
            ShapeSupport::Ours => "ours".to_string(),
            ShapeSupport::Unknown(why) => format!("unknown, {why}"),
        },
        "inputs": def.inputs.iter().map(arg).collect::<Vec<_>>(),
        "outputs": def.outputs.iter().map(arg).collect::<Vec<_>>(),
        "attrs": def.attrs.iter()
            .filter(|a| !inferred.contains(&a.name.as_str()))
            .map(|a| json!({"name": a.name, "python_name": python_arg(&a.name)}))
            .collect::<Vec<_>>(),
    })
}

/// The Python name of an arg or attr: its own, or with `_` after a Python
/// keyword (`in` is `in_`), as TensorFlow's wrappers name them.
///
/// ```
/// assert_eq!(op_tf::manifest::python_arg("in"), "in_");
/// assert_eq!(op_tf::manifest::python_arg("values"), "values");
/// ```
pub fn python_arg(name: &str) -> String {
    if crate::PYTHON_KEYWORDS.contains(&name) {
        format!("{name}_")
    } else {
        name.to_owned()
    }
}

/// The name of TensorFlow's Python wrapper for op `name`: its generator's
/// rule (`GenerateLowerCaseOpName`): `>` becomes `_`, and `_` goes before
/// an upper-case letter that follows a lower-case one or precedes one.
///
/// ```
/// use op_tf::manifest::python_name;
/// assert_eq!(python_name("ZeroOut"), "zero_out");
/// assert_eq!(python_name("Examples>MultiplexDense"), "examples_multiplex_dense");
/// assert_eq!(python_name("MatMulV2"), "mat_mul_v2");
/// assert_eq!(python_name("CTCLoss"), "ctc_loss");
/// ```
pub fn python_name(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::with_capacity(name.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c == '>' {
            out.push('_');
            continue;
        }
        if c.is_ascii_uppercase() && i > 0 {
            let after_lower = chars[i - 1].is_ascii_lowercase();
            let before_lower = chars.get(i + 1).is_some_and(char::is_ascii_lowercase);
            if (after_lower || before_lower) && chars[i - 1] != '>' {
                out.push('_');
            }
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// The op's docs as a Python docstring, in the layout of TensorFlow's own
/// wrappers: summary, description, `Args:` (inputs, then attrs without a
/// value to infer), `Returns:`.
pub fn docstring(def: &OpDef) -> String {
    let mut doc = String::new();
    doc.push_str(if def.summary.is_empty() {
        &def.name
    } else {
        &def.summary
    });
    doc.push('\n');
    if !def.description.is_empty() {
        doc.push('\n');
        doc.push_str(&def.description);
        doc.push('\n');
    }
    let inferred = crate::manifest::inferred_attrs(def);
    let args: Vec<(String, &str)> = def
        .inputs
        .iter()
        .map(|a| {
            let name = python_arg(&a.name);
            (format!("{name}: A `Tensor`"), a.description.as_str())
        })
        .chain(
            def.attrs
                .iter()
                .filter(|a| !inferred.contains(&a.name.as_str()))
                .map(|a| {
                    let optional = if a.default_value.is_some() {
                        ", optional"
                    } else {
                        ""
                    };
                    (
                        format!("{}: `{}`{optional}", python_arg(&a.name), a.ty),
                        a.description.as_str(),
                    )
                }),
        )
        .collect();
    if !args.is_empty() {
        doc.push_str("\nArgs:\n");
        for (head, description) in args {
            push_item(&mut doc, &head, description);
        }
    }
    if !def.outputs.is_empty() {
        doc.push_str("\nReturns:\n");
        for output in &def.outputs {
            push_item(
                &mut doc,
                &format!("{}: A `Tensor`", output.name),
                &output.description,
            );
        }
    }
    doc
}

/// The attrs TensorFlow's wrapper infers from the inputs (their type
/// attrs, list lengths and `list(type)` attrs): a Python caller passes the
/// others.
pub(crate) fn inferred_attrs(def: &OpDef) -> Vec<&str> {
    def.inputs
        .iter()
        .flat_map(|a| [a.type_attr(), a.type_list_attr(), a.number_attr.as_deref()])
        .flatten()
        .collect()
}

fn push_item(doc: &mut String, head: &str, description: &str) {
    doc.push_str("  ");
    doc.push_str(head);
    if !description.is_empty() {
        doc.push_str(". ");
        doc.push_str(&description.replace('\n', "\n    "));
    } else {
        doc.push('.');
    }
    doc.push('\n');
}
