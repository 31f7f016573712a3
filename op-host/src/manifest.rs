//! What a library holds, as JSON, in the part every host shares: each op
//! with its args, attrs, docs, kernels and whether it has a shape function
//! and a gradient. A host's manifest (TensorFlow's `op_tf_manifest()`,
//! ONNX Runtime's `op_onnx_manifest()`) is this for each op it exports,
//! plus what is that host's own (what it left out, and why); `cargo xtask
//! package` reads it from the built library, with no host's framework
//! installed, to write the Python package.
//!
//! ```
//! op_kernels::link();
//! let zero_out = op_core::Registry::global().op("ZeroOutPolymorphic")?;
//! let entry = op_host::manifest::op_json(zero_out);
//! assert_eq!(entry["python_name"], "zero_out_polymorphic");
//! assert_eq!(entry["inputs"][0]["type_attr"], "T");
//! assert_eq!(entry["differentiable"], true);
//! assert!(entry["kernels"].as_array().unwrap().iter().any(|k| k["device"] == "cpu"));
//! # Ok::<(), op_core::Error>(())
//! ```

use op_core::registry::OpEntry;
use op_core::{ArgDef, ArgType, DeviceType};
use serde_json::{Value, json};

use crate::names::{docstring, inferred_attrs, python_arg, python_name};

/// What every host's Python knows of `op`: `{"name", "python_name",
/// "doc", "stateful", "differentiable", "not_differentiable",
/// "has_shape_fn", "inputs", "outputs", "attrs", "kernels"}`.
///
/// Each input and output has its `name`, `python_name`, fixed `dtype` (its
/// `DataType` number, or null), `type_attr`, and grouping (`number_attr`
/// or `type_list_attr` for a list); `attrs` are those a caller passes (no
/// input gives them), each with its `name`, `python_name`, `type` (as the
/// spec writes it: `int`, `list(float)`...), `default` (as the spec writes
/// it, or null) and `spec` (its whole spec line); each kernel has
/// its `device` (`cpu`, `gpu`) and type `constraints` (`{"attr", "dtype"}`,
/// by `DataType` number).
pub fn op_json(op: &OpEntry) -> Value {
    let def = op.def();
    let arg = |a: &ArgDef| {
        json!({
            "name": a.name,
            "python_name": python_arg(&a.name),
            "type_attr": a.type_attr(),
            "number_attr": a.number_attr,
            "type_list_attr": a.type_list_attr(),
            "dtype": match &a.ty {
                ArgType::Fixed(dtype) => Some(dtype.enum_value()),
                _ => None,
            },
        })
    };
    let inferred = inferred_attrs(def);
    let kernels: Vec<Value> = op
        .kernels()
        .iter()
        .map(|k| {
            json!({
                "device": match k.device {
                    DeviceType::Cpu => "cpu",
                    DeviceType::Gpu => "gpu",
                },
                "constraints": k.constraints.iter()
                    .map(|c| json!({"attr": c.attr, "dtype": c.dtype.enum_value()}))
                    .collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "name": def.name,
        "python_name": python_name(&def.name),
        "doc": docstring(def),
        "stateful": def.is_stateful,
        "differentiable": crate::gradient::has_gradient(op),
        "not_differentiable": crate::gradient::is_not_differentiable(op),
        "has_shape_fn": op.shape_fn().is_some(),
        "inputs": def.inputs.iter().map(arg).collect::<Vec<_>>(),
        "outputs": def.outputs.iter().map(arg).collect::<Vec<_>>(),
        "attrs": def.attrs.iter()
            .filter(|a| !inferred.contains(&a.name.as_str()))
            .map(|a| {
                let spec = a.to_spec();
                json!({
                    "name": a.name,
                    "python_name": python_arg(&a.name),
                    "type": a.ty.to_string(),
                    "default": a.default_value.as_ref().map(|v| v.to_string()),
                    "spec": spec,
                })
            })
            .collect::<Vec<_>>(),
        "kernels": kernels,
    })
}
