//! A call of one of our ops described as JSON, for a host whose bridge
//! passes it as text (JAX passes it as the custom call's one attribute,
//! and asks for output shapes with it at trace time): which op, its
//! inputs' dtypes and shapes, and its attrs as plain JSON values, each
//! read by the kind its op declares.
//!
//! ```json
//! {"op": "ZeroOutPreserveIndex", "inputs": [{"dtype": 3, "shape": [4]}], "attrs": {"preserve_index": 2}}
//! ```
//!
//! Dtypes are our `DataType` numbers; a `type` attr is one too, and may be
//! left out where an input sets it. An integer input may carry its
//! `"values"` (flat), for a shape function that reads them (the shape
//! input of `Fill`). `"fixed_shapes": true` makes an
//! output shape that the request alone does not fix an error.
//! `"gradient": true` asks for the op's
//! gradient instead ([`crate::gradient`]): its inputs are then the forward
//! inputs, outputs and output gradients.
//!
//! ```
//! op_kernels::link();
//! let answer = op_host::request::infer_json(
//!     r#"{"op": "ZeroOut", "inputs": [{"dtype": 3, "shape": [2, 3]}], "attrs": {}}"#);
//! assert_eq!(answer, r#"{"outputs":[{"dtype":3,"shape":[2,3]}]}"#);
//! let answer = op_host::request::infer_json(
//!     r#"{"op": "ZeroOutPreserveIndex", "inputs": [{"dtype": 3, "shape": [4]}], "attrs": {"preserve_index": 1.5}}"#);
//! assert!(answer.contains("preserve_index"), "{answer}");
//! ```

use op_core::registry::OpEntry;
use op_core::shape_inference::PartialShape;
use op_core::{
    AttrDef, AttrKind, AttrValue, DType, Error, InputTypes, ListValue, Registry, Result,
};
use serde_json::{Value, json};
use std::ffi::{CStr, CString, c_char};

/// A call, read.
pub struct Request {
    /// The op.
    pub entry: &'static OpEntry,
    /// Its attrs: those given, and the type attrs its inputs set.
    pub attrs: Vec<(&'static str, AttrValue)>,
    /// Each input's dtype.
    pub inputs: Vec<DType>,
    /// Each input's shape, where given (unknown otherwise).
    pub shapes: Vec<PartialShape>,
    /// Each input's values, where given (`"values"`: a flat list), for a
    /// shape function that reads them (a shape input of `Fill`).
    pub values: Vec<Option<op_core::Tensor>>,
    /// Whether the call is of the op's gradient.
    pub gradient: bool,
    /// Whether every output shape must be known from the request alone
    /// (`"fixed_shapes": true`): a host that allocates outputs before the
    /// kernel runs (JAX, at trace time) needs them.
    pub fixed_shapes: bool,
}

impl Request {
    /// The request in `text`, or an error naming the op and what is
    /// wrong.
    pub fn parse(text: &str) -> Result<Request> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| Error::invalid_argument(format!("a call request is not JSON: {e}")))?;
        let name = value["op"]
            .as_str()
            .ok_or_else(|| Error::invalid_argument("a call request names no op"))?;
        let entry = Registry::global().op(name)?;
        let def: &'static op_core::OpDef = entry.def();
        let gradient = value["gradient"].as_bool().unwrap_or(false);
        let fixed_shapes = value["fixed_shapes"].as_bool().unwrap_or(false);
        let mut inputs = Vec::new();
        let mut shapes = Vec::new();
        let mut values = Vec::new();
        for (i, input) in value["inputs"].as_array().into_iter().flatten().enumerate() {
            let dtype = input["dtype"]
                .as_i64()
                .and_then(|n| DType::from_enum_value(n as i32))
                .ok_or_else(|| {
                    Error::invalid_argument(format!("op {name}: input {i} has no dtype we know"))
                })?;
            inputs.push(dtype);
            values.push(match &input["values"] {
                Value::Array(items) => Some(int_values(name, i, dtype, input, items)?),
                _ => None,
            });
            shapes.push(match input["shape"].as_array() {
                Some(dims) => PartialShape(Some(
                    dims.iter()
                        .map(|d| d.as_u64().map(|d| d as usize))
                        .collect(),
                )),
                None => PartialShape::unknown(),
            });
        }
        let given = value["attrs"].as_object();
        let mut attrs = Vec::with_capacity(def.attrs.len());
        for attr in &def.attrs {
            match given.and_then(|g| g.get(&attr.name)) {
                Some(value) => attrs.push((attr.name.as_str(), attr_value(name, attr, value)?)),
                None if attr.ty.kind == AttrKind::Type && !attr.ty.is_list => {
                    // Set by an input of that type, when one is given.
                    let input = def
                        .inputs
                        .iter()
                        .position(|a| a.type_attr() == Some(&attr.name));
                    if let Some(dtype) = input.and_then(|k| inputs.get(k)) {
                        attrs.push((attr.name.as_str(), AttrValue::Type(*dtype)));
                    }
                }
                None => {}
            }
        }
        if let Some(given) = given {
            for key in given.keys() {
                if !def.attrs.iter().any(|a| &a.name == key) {
                    return Err(Error::invalid_argument(format!(
                        "op {name} has no attr '{key}'"
                    )));
                }
            }
        }
        Ok(Request {
            entry,
            attrs,
            inputs,
            shapes,
            values,
            gradient,
            fixed_shapes,
        })
    }

    /// The input dtypes as our runtime groups them (one per arg, each a
    /// single tensor: the hosts that use requests take no list args).
    pub fn input_types(&self) -> Vec<InputTypes> {
        self.inputs.iter().map(|d| InputTypes::Single(*d)).collect()
    }
}

/// Input `i`'s given values, as a tensor of its dtype and shape: integers
/// only (what shape functions read).
fn int_values(
    op: &str,
    i: usize,
    dtype: DType,
    input: &Value,
    items: &[Value],
) -> Result<op_core::Tensor> {
    let bad = || {
        Error::invalid_argument(format!(
            "op {op}: input {i}'s values are not {dtype} integers of its shape"
        ))
    };
    let dims: Vec<usize> = input["shape"]
        .as_array()
        .ok_or_else(bad)?
        .iter()
        .map(|d| d.as_u64().map(|d| d as usize).ok_or_else(bad))
        .collect::<Result<_>>()?;
    let ints: Vec<i64> = items
        .iter()
        .map(|v| v.as_i64().ok_or_else(bad))
        .collect::<Result<_>>()?;
    match dtype {
        DType::I32 => {
            op_core::Tensor::from_vec(dims, ints.iter().map(|&v| v as i32).collect::<Vec<_>>())
        }
        DType::I64 => op_core::Tensor::from_vec(dims, ints),
        _ => Err(bad()),
    }
}

/// `value` as attr `attr` of op `op`, read by the attr's kind.
fn attr_value(op: &str, attr: &AttrDef, value: &Value) -> Result<AttrValue> {
    let wrong = || {
        Error::invalid_argument(format!(
            "op {op}: attr '{}' is {value}, not a {}",
            attr.name, attr.ty
        ))
    };
    let float = |v: &Value| v.as_f64().map(|f| f as f32);
    let bytes = |v: &Value| v.as_str().map(|s| s.as_bytes().to_vec());
    let dtype = |v: &Value| DType::from_enum_value(i32::try_from(v.as_i64()?).ok()?);
    let read = if attr.ty.is_list {
        let items = value.as_array().ok_or_else(wrong)?;
        fn each<T>(items: &[Value], f: impl Fn(&Value) -> Option<T>) -> Option<Vec<T>> {
            items.iter().map(f).collect()
        }
        match attr.ty.kind {
            AttrKind::Int => each(items, Value::as_i64).map(ListValue::Int),
            AttrKind::Float => each(items, float).map(ListValue::Float),
            AttrKind::Bool => each(items, Value::as_bool).map(ListValue::Bool),
            AttrKind::String => each(items, bytes).map(ListValue::String),
            AttrKind::Type => each(items, dtype).map(ListValue::Type),
            _ => None,
        }
        .map(AttrValue::List)
    } else {
        match attr.ty.kind {
            AttrKind::Int => value.as_i64().map(AttrValue::Int),
            AttrKind::Float => float(value).map(AttrValue::Float),
            AttrKind::Bool => value.as_bool().map(AttrValue::Bool),
            AttrKind::String => bytes(value).map(AttrValue::String),
            AttrKind::Type => dtype(value).map(AttrValue::Type),
            _ => None,
        }
    };
    read.ok_or_else(wrong)
}

/// The outputs of the call `text` describes, as JSON: `{"outputs":
/// [{"dtype", "shape"}]}` (a dim our shape function does not know is
/// null, an unknown rank a null shape), or `{"error": message}`. The
/// kernel is also made (and dropped), so that what our runtime refuses
/// when it makes one (an attr value out of range) is refused here.
pub fn infer_json(text: &str) -> String {
    let answer = op_core::contain_panic("the shape function", || infer(text));
    match answer {
        Ok(outputs) => json!({ "outputs": outputs }).to_string(),
        Err(error) => json!({ "error": crate::status::message_of(&error) }).to_string(),
    }
}

/// [`infer_json`] for a C string, as a C string the caller frees with
/// [`free_c`]: what a host's generated Python calls through `ctypes` at
/// trace time (`op_jax_infer`, `op_torch_infer`).
///
/// # Safety
///
/// `request` is a C string.
pub unsafe fn infer_c(request: *const c_char) -> *mut c_char {
    // SAFETY: the caller's contract.
    let text = unsafe { CStr::from_ptr(request) }.to_string_lossy();
    CString::new(infer_json(&text))
        .unwrap_or_default()
        .into_raw()
}

/// Frees what [`infer_c`] returned.
///
/// # Safety
///
/// `text` came from [`infer_c`], not yet freed (or is null).
pub unsafe fn free_c(text: *mut c_char) {
    if !text.is_null() {
        // SAFETY: the caller's contract: a CString's raw pointer.
        drop(unsafe { CString::from_raw(text) });
    }
}

fn infer(text: &str) -> Result<Vec<Value>> {
    let request = Request::parse(text)?;
    let def = request.entry.def();
    if request.gradient {
        // One gradient per forward input, of its dtype and shape.
        let n = def.inputs.len();
        return Ok(request
            .inputs
            .iter()
            .zip(&request.shapes)
            .take(n)
            .map(|(dtype, shape)| json!({"dtype": dtype.enum_value(), "shape": shape_json(shape)}))
            .collect());
    }
    let values: Vec<Option<&op_core::Tensor>> = request.values.iter().map(Option::as_ref).collect();
    let outputs = crate::shape::infer(
        request.entry,
        &request.input_types(),
        &request.attrs,
        &request.shapes,
        &values,
    )?;
    crate::kernel::HostKernel::new(
        op_core::Runtime::global(),
        &def.name,
        &request.input_types(),
        &request.attrs,
        &def.name,
    )?;
    if request.fixed_shapes {
        for output in &outputs {
            output.dims()?;
        }
    }
    Ok(outputs
        .iter()
        .map(|o| json!({"dtype": o.dtype.enum_value(), "shape": shape_json(&o.shape)}))
        .collect())
}

fn shape_json(shape: &PartialShape) -> Value {
    match &shape.0 {
        None => Value::Null,
        Some(dims) => json!(dims),
    }
}
