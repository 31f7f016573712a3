//! The conformance suite's cases: for every op of the crates given, and
//! each of its CPU kernels, cases drawn from the op's declaration as
//! opcheck does (the op's own input generator where it has one, the
//! generic one otherwise), each run on our runtime, written one JSON line
//! per case: the op, its input arg names, the attrs a caller passes (names
//! and types, in the op's order), its inputs and attrs, and our outputs
//! (or our error). `tools/python/conformance.py` runs the same cases in
//! TensorFlow, JAX and ONNX Runtime and compares. `cargo xtask conformance`
//! writes op-kernels' cases; a crate of ops writes its own with
//! [`write_cases`] (the examples crate: `cargo run -p examples --bin
//! conformance-cases`). (Feature `conformance`.)
//!
//! A line is `{"op", "kernel", "input_names", "attr_names",
//! "attr_types", "inputs": [tensor], "attrs": {name: value}, "outputs":
//! [tensor]}` (or `"error": message` instead of outputs), each tensor
//! `{"dtype", "shape", "values"}` (our `DataType` numbers; values flat,
//! row-major; a float that is not finite as `"nan"`, `"inf"`, `"-inf"`),
//! each attr as [`crate::request`] reads it. An op or case that cannot be
//! written says why: `{"op", "not_drawn": why}`.

use std::io::{self, BufWriter, Write};
use std::path::Path;

use op_core::registry::OpEntry;
use op_core::testing::{Case, Draw, Input, OpCheckPlan};
use op_core::{AttrValue, DType, DeviceType, ListValue, Registry, Runtime, Tensor};
use serde_json::{Value, json};

/// Which cases to draw.
#[derive(Clone, Debug)]
pub struct Options {
    /// Cases drawn per kernel.
    pub cases: u32,
    /// The seed cases are drawn from (the same seed draws the same cases).
    pub seed: u64,
    /// Only these ops (all, when empty).
    pub ops: Vec<String>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            cases: 3,
            seed: 0,
            ops: Vec::new(),
        }
    }
}

/// What [`write_cases`] wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Written {
    /// Ops.
    pub ops: usize,
    /// Cases written with our outputs or error.
    pub cases: usize,
    /// Lines saying why an op or case was not drawn.
    pub not_drawn: usize,
}

/// Writes the cases of the ops of `crates` (by module path: `op_kernels`)
/// in the global registry to `out`.
pub fn write_cases(out: &Path, crates: &[&str], options: &Options) -> io::Result<Written> {
    let mut file = BufWriter::new(std::fs::File::create(out)?);
    let mut entries: Vec<&OpEntry> = Registry::global()
        .ops()
        .filter(|op| {
            let module = op.registration().module_path;
            let krate = module.split("::").next().unwrap_or(module);
            crates.contains(&krate)
        })
        .filter(|op| options.ops.is_empty() || options.ops.contains(&op.def().name))
        .collect();
    entries.sort_by(|a, b| a.def().name.cmp(&b.def().name));
    let mut written = Written {
        ops: entries.len(),
        cases: 0,
        not_drawn: 0,
    };
    for entry in &entries {
        for line in op_cases(entry, options) {
            if line.get("not_drawn").is_some() {
                written.not_drawn += 1;
            } else {
                written.cases += 1;
            }
            writeln!(file, "{line}")?;
        }
    }
    file.flush()?;
    Ok(written)
}

/// The case lines of `entry`.
fn op_cases(entry: &OpEntry, options: &Options) -> Vec<Value> {
    let name = entry.def().name.as_str();
    let not_drawn = |why: String| json!({"op": name, "not_drawn": why});
    let generator = match op_core::testing::registrations(name)
        .first()
        .map(|r| r.plan)
    {
        Some(OpCheckPlan::Skip(why)) => return vec![not_drawn(format!("opcheck skips it: {why}"))],
        Some(OpCheckPlan::Generator(g)) => Some(g),
        _ => None,
    };
    let mut lines = Vec::new();
    for kernel in entry
        .kernels()
        .iter()
        .filter(|k| k.device == DeviceType::Cpu)
    {
        for c in 0..options.cases {
            let choices = choices(options.seed, name, kernel.name, c);
            let mut draw = Draw::new(entry, kernel, &choices);
            let case = match generator {
                Some(g) => g(&mut draw),
                None => draw.generic(),
            };
            lines.push(match case {
                Ok(case) => case_line(entry, kernel.name, &case)
                    .unwrap_or_else(|why| not_drawn(format!("kernel {}: {why}", kernel.name))),
                Err(e) => not_drawn(format!("kernel {}: {e}", kernel.name)),
            });
        }
    }
    if lines.is_empty() {
        lines.push(not_drawn("it has no CPU kernel".into()));
    }
    lines
}

/// The choices of case `c` of `kernel` of `op`: splitmix64 from the
/// seed and names, so that a seed draws the same cases on every machine.
fn choices(seed: u64, op: &str, kernel: &str, c: u32) -> Vec<u32> {
    let mut state = seed ^ u64::from(c).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    for b in op.bytes().chain(kernel.bytes()) {
        state = (state ^ u64::from(b)).wrapping_mul(0x100_0000_01B3);
    }
    (0..64)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 32) as u32
        })
        .collect()
}

/// A case's line, with our runtime's outputs or error.
fn case_line(entry: &OpEntry, kernel: &str, case: &Case) -> Result<Value, String> {
    let def = entry.def();
    let mut inputs = Vec::new();
    for input in case.inputs() {
        match input {
            Input::Tensor(t) => inputs.push(t.clone()),
            Input::List(_) => return Err("a list input, which no host's export takes".into()),
        }
    }
    let tensors: Vec<Value> = inputs.iter().map(tensor_json).collect::<Result<_, _>>()?;
    let inferred = crate::names::inferred_attrs(def);
    let mut attrs = serde_json::Map::new();
    for (name, value) in case.attrs() {
        if !inferred.contains(&name.as_str()) {
            attrs.insert(name.clone(), attr_json(value)?);
        }
    }
    let given: Vec<(&str, AttrValue)> = case
        .attrs()
        .iter()
        .map(|(n, v)| (n.as_str(), v.clone()))
        .collect();
    let passed: Vec<&op_core::AttrDef> = def
        .attrs
        .iter()
        .filter(|a| !inferred.contains(&a.name.as_str()))
        .collect();
    let mut line = json!({
        "op": def.name,
        "kernel": kernel,
        "input_names": def.inputs.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(),
        "attr_names": passed.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(),
        "attr_types": passed.iter().map(|a| a.ty.to_string()).collect::<Vec<_>>(),
        "inputs": tensors,
        "attrs": attrs,
    });
    match Runtime::global().run(&def.name, inputs, &given) {
        Ok(outputs) => {
            let outputs: Vec<Value> = outputs.iter().map(tensor_json).collect::<Result<_, _>>()?;
            line["outputs"] = json!(outputs);
        }
        Err(e) => line["error"] = json!(crate::status::message_of(&e)),
    }
    Ok(line)
}

/// `t` as `{"dtype", "shape", "values"}`, or why it cannot be written.
fn tensor_json(t: &Tensor) -> Result<Value, String> {
    let values: Vec<Value> = match t.dtype() {
        DType::F32 => each(t, |v: &f32| json!(finite(f64::from(*v))))?,
        DType::F64 => each(t, |v: &f64| json!(finite(*v)))?,
        DType::F16 => each(t, |v: &half::f16| json!(finite(v.to_f64())))?,
        DType::BF16 => each(t, |v: &half::bf16| json!(finite(v.to_f64())))?,
        DType::I8 => each(t, |v: &i8| json!(v))?,
        DType::I16 => each(t, |v: &i16| json!(v))?,
        DType::I32 => each(t, |v: &i32| json!(v))?,
        DType::I64 => each(t, |v: &i64| json!(v))?,
        DType::U8 => each(t, |v: &u8| json!(v))?,
        DType::U16 => each(t, |v: &u16| json!(v))?,
        DType::U32 => each(t, |v: &u32| json!(v))?,
        DType::U64 => each(t, |v: &u64| json!(v))?,
        DType::Bool => each(t, |v: &bool| json!(v))?,
        other => return Err(format!("a {other} tensor, which the suite does not write")),
    };
    Ok(json!({"dtype": t.dtype().enum_value(), "shape": t.dims(), "values": values}))
}

/// A float as JSON: a number, or the string `nan`, `inf` or `-inf`.
fn finite(v: f64) -> Value {
    if v.is_finite() {
        json!(v)
    } else if v.is_nan() {
        json!("nan")
    } else if v > 0.0 {
        json!("inf")
    } else {
        json!("-inf")
    }
}

fn each<T: op_core::Element>(t: &Tensor, f: impl Fn(&T) -> Value) -> Result<Vec<Value>, String> {
    Ok(t.as_slice::<T>()
        .map_err(|e| e.to_string())?
        .iter()
        .map(f)
        .collect())
}

/// An attr as `op_host::request` reads it, or why it cannot be written.
fn attr_json(value: &AttrValue) -> Result<Value, String> {
    Ok(match value {
        AttrValue::Int(i) => json!(i),
        AttrValue::Float(f) => finite(f64::from(*f)),
        AttrValue::Bool(b) => json!(b),
        AttrValue::String(s) => json!(String::from_utf8_lossy(s)),
        AttrValue::Type(t) => json!(t.enum_value()),
        AttrValue::List(ListValue::Int(v)) => json!(v),
        AttrValue::List(ListValue::Float(v)) => json!(v),
        AttrValue::List(ListValue::Bool(v)) => json!(v),
        AttrValue::List(ListValue::Type(v)) => {
            json!(v.iter().map(|t| t.enum_value()).collect::<Vec<_>>())
        }
        other => return Err(format!("an attr {other}, which the suite does not write")),
    })
}
