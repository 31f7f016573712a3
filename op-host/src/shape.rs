//! Our shape functions called from outside: a host that asks for output
//! shapes and dtypes before it runs a kernel (JAX at trace time, ONNX
//! Runtime's shape inference, TensorFlow at graph construction, a host
//! allocating outputs) gives input dtypes, shapes and attrs, and gets each
//! output's dtype and shape, as far as our function knows it.
//!
//! ```
//! op_kernels::link();
//! use op_core::shape_inference::PartialShape;
//! use op_core::DType;
//! let zero_out = op_core::Registry::global().op("ZeroOut")?;
//! let outputs = op_host::shape::infer(zero_out, &[DType::I32.into()], &[], &[PartialShape::known(&[2, 3])], &[])?;
//! assert_eq!(outputs[0].dtype, DType::I32);
//! assert_eq!(outputs[0].dims()?, [2, 3]);
//! # Ok::<(), op_core::Error>(())
//! ```

use op_core::registry::OpEntry;
use op_core::shape_inference::PartialShape;
use op_core::{AttrValue, DType, Error, InputTypes, Result, Tensor};

/// One output of a node, as shape inference gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputShape {
    /// The op's name, for errors.
    pub op: String,
    /// The output's name (`y`, or `y:1` for the second tensor of a list).
    pub name: String,
    /// Its dtype (always known from the attrs).
    pub dtype: DType,
    /// Its shape, as far as known.
    pub shape: PartialShape,
}

impl OutputShape {
    /// Every dim, or an error naming the op and output when one is not
    /// known: what a host that must fix output shapes before running (JAX)
    /// reports for an op whose output shape depends on input values.
    pub fn dims(&self) -> Result<Vec<usize>> {
        known_dims(&self.shape).ok_or_else(|| {
            Error::invalid_argument(format!(
                "op {}: the shape of output '{}' is {}, not known from the input shapes and \
                 attrs alone (it depends on input values, or the op has no shape function), \
                 and this host needs it before the kernel runs",
                self.op,
                self.name,
                describe(&self.shape)
            ))
        })
    }
}

/// `shape` as `[2,?]` (or `?` for an unknown rank).
fn describe(shape: &PartialShape) -> String {
    match &shape.0 {
        None => "?".into(),
        Some(dims) => {
            let dims: Vec<String> = dims
                .iter()
                .map(|d| d.map_or("?".to_string(), |d| d.to_string()))
                .collect();
            format!("[{}]", dims.join(","))
        }
    }
}

/// Every dim of `shape`, when all are known.
///
/// ```
/// use op_core::shape_inference::PartialShape;
/// assert_eq!(op_host::shape::known_dims(&PartialShape::known(&[2, 3])), Some(vec![2, 3]));
/// assert_eq!(op_host::shape::known_dims(&"[2,?]".parse()?), None);
/// assert_eq!(op_host::shape::known_dims(&PartialShape::unknown()), None);
/// # Ok::<(), op_core::Error>(())
/// ```
pub fn known_dims(shape: &PartialShape) -> Option<Vec<usize>> {
    shape.0.as_ref()?.iter().copied().collect()
}

/// The outputs of a node of `op` with inputs of these dtypes and shapes
/// (and, by input index, values where the host knows them) and these
/// attrs. An op without a shape function gives outputs of unknown shape;
/// a shape function's error (an input of the wrong rank) is returned, with
/// a panic in it contained.
pub fn infer(
    op: &OpEntry,
    input_types: &[InputTypes],
    attrs: &[(&str, AttrValue)],
    input_shapes: &[PartialShape],
    input_values: &[Option<&Tensor>],
) -> Result<Vec<OutputShape>> {
    let def = op.def();
    let node = op.instance(input_types, attrs)?;
    let shapes = match op.shape_fn() {
        Some(f) => {
            let mut values = input_values.to_vec();
            values.resize(input_shapes.len(), None);
            op_core::shape_inference::infer(def, &node, f, input_shapes, &values)?
        }
        None => vec![PartialShape::unknown(); node.output_types().len()],
    };
    let names = (0..node.output_types().len()).map(|j| output_name(def, &node, j));
    Ok(node
        .output_types()
        .iter()
        .zip(shapes)
        .zip(names)
        .map(|((&dtype, shape), name)| OutputShape {
            op: def.name.clone(),
            name,
            dtype,
            shape,
        })
        .collect())
}

/// The name of output tensor `j` of a node: its arg's, with `:i` for
/// the `i`th tensor of a list.
fn output_name(def: &op_core::OpDef, node: &op_core::OpInstance, j: usize) -> String {
    match node.output_arg_of(j) {
        Some((arg, i)) => {
            let arg_def = &def.outputs[arg];
            if arg_def.number_attr.is_none() && arg_def.type_list_attr().is_none() {
                arg_def.name.clone()
            } else {
                format!("{}:{i}", arg_def.name)
            }
        }
        None => format!("{j}"),
    }
}
