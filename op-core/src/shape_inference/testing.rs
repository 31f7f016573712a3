//! A compact notation for testing shape functions, like TensorFlow's
//! `INFER_OK` / `INFER_ERROR`: one line per case.
//!
//! Inputs are written `;`-separated (`"[10,20];?"`), one shape per input
//! tensor. The expected outputs use:
//!
//! - `in0`: output is input 0's shape itself;
//! - `[d0_1,3]`: dimension 0 is input 0's dimension 1 itself, dimension 1 is
//!   a new dimension of size 3 (`?` if unknown);
//! - `?`: a new shape of unknown rank.
//!
//! ```standalone_crate
//! use op_core::shape_inference::testing::ShapeTest;
//! # op_core::inventory::submit! { op_core::registry::OpRegistration::new("Transpose2", || op_core::OpDefBuilder::new("Transpose2").input("x: float").output("y: float").build(), file!(), line!()).with_shape_fn(|c| {
//! #         let x = c.with_rank(c.input(0)?, 2)?;
//! #         let (a, b) = (c.dim(x, 0)?, c.dim(x, 1)?);
//! #         let y = c.matrix(b, a);
//! #         c.set_output(0, y)
//! #     }) }
//! let t = ShapeTest::new("Transpose2");
//! t.ok("[2,3]", "[d0_1,d0_0]");
//! t.ok("?", "[?,?]");
//! t.error("[1,2,3]", "input 0 ('x') has shape [1,2,3], which must be rank 2 but is rank 3");
//! ```

use std::sync::Arc;

use op_spec::{ArgType, AttrValue, DType, ListValue, OpDef};

use super::{InferenceContext, PartialShape, ShapeFn};
use crate::op_instance::{InputTypes, OpInstanceBuilder};
use crate::registry::Registry;
use crate::tensor::Tensor;
use crate::{Error, Result};

/// The shape function of one op, with attrs, under test.
#[derive(Clone, Debug)]
pub struct ShapeTest {
    op: Arc<OpDef>,
    shape_fn: ShapeFn,
    attrs: Vec<(String, AttrValue)>,
    list_lengths: Option<Vec<usize>>,
    /// Constant input values, by input index.
    tensors: Vec<(usize, Tensor)>,
}

impl ShapeTest {
    /// The shape function of op `op` in the global registry. Panics (this
    /// is for tests) if the op is unknown or has no shape function.
    #[track_caller]
    pub fn new(op: &str) -> ShapeTest {
        ShapeTest::in_registry(Registry::global(), op)
    }

    /// The shape function of op `op` in `registry`.
    #[track_caller]
    pub fn in_registry(registry: &Registry, op: &str) -> ShapeTest {
        let entry = registry.op(op).unwrap_or_else(|e| panic!("{e}"));
        let shape_fn = entry
            .shape_fn()
            .unwrap_or_else(|| panic!("op {op} has no shape function"));
        ShapeTest::with_fn(entry.def().clone(), shape_fn)
    }

    /// `shape_fn` for `op`, without a registry.
    pub fn with_fn(op: Arc<OpDef>, shape_fn: ShapeFn) -> ShapeTest {
        ShapeTest {
            op,
            shape_fn,
            attrs: Vec::new(),
            list_lengths: None,
            tensors: Vec::new(),
        }
    }

    /// Sets attr `name` for the node (type attrs not given default to the
    /// attr's default, else its first allowed type, else float).
    pub fn attr(mut self, name: &str, value: impl Into<AttrValue>) -> Self {
        self.attrs.push((name.to_owned(), value.into()));
        self
    }

    /// The lengths of the op's list inputs, in order; only needed when it
    /// has more than one (with one, it takes the shapes left over).
    pub fn list_lengths(mut self, lengths: &[usize]) -> Self {
        self.list_lengths = Some(lengths.to_vec());
        self
    }

    /// Gives input `index` the constant value `tensor`, which the shape
    /// function reads with `input_tensor(index)` (as TensorFlow's tests
    /// pass `input_tensors`); the other inputs have no known value. The
    /// input's shape is still the one written in the notation.
    pub fn input_tensor(mut self, index: usize, tensor: Tensor) -> Self {
        self.tensors.push((index, tensor));
        self
    }

    fn default_type(&self, attr: &str) -> DType {
        if let Some((_, AttrValue::Type(t))) = self.attrs.iter().find(|(n, _)| n == attr) {
            return *t;
        }
        let Some(def) = self.op.attr(attr) else {
            return DType::F32;
        };
        match (&def.default_value, &def.allowed_values) {
            (Some(AttrValue::Type(t)), _) => *t,
            (_, Some(ListValue::Type(allowed))) if !allowed.is_empty() => allowed[0],
            _ => DType::F32,
        }
    }

    /// Runs the shape function on `inputs` and returns the outputs in the
    /// notation, or the error.
    pub fn run(&self, inputs: &str) -> Result<String> {
        let shapes: Vec<PartialShape> = if inputs.trim().is_empty() {
            Vec::new()
        } else {
            inputs.split(';').map(str::parse).collect::<Result<_>>()?
        };
        let list_args = self.op.inputs.iter().filter(|a| a.is_list()).count();
        let singles = self.op.inputs.len() - list_args;
        let lengths = match &self.list_lengths {
            Some(l) => l.clone(),
            None if list_args == 0 => Vec::new(),
            None if list_args == 1 => vec![shapes.len().saturating_sub(singles)],
            None => {
                return Err(Error::invalid_argument(
                    "the op has several list inputs: give their lengths with list_lengths(..)",
                ));
            }
        };
        let mut builder = OpInstanceBuilder::new(&self.op);
        let mut lengths = lengths.into_iter();
        for arg in &self.op.inputs {
            let dtype = match &arg.ty {
                ArgType::Fixed(t) => *t,
                ArgType::Attr(a) | ArgType::ListAttr(a) => self.default_type(a),
            };
            let input = if arg.is_list() {
                let n = lengths.next().unwrap_or(0);
                match (
                    &arg.ty,
                    self.attrs.iter().find(|(n, _)| Some(n) == arg_attr(arg)),
                ) {
                    (ArgType::ListAttr(_), Some((_, AttrValue::List(ListValue::Type(ts))))) => {
                        InputTypes::List(ts.clone())
                    }
                    _ => InputTypes::List(vec![dtype; n]),
                }
            } else {
                InputTypes::Single(dtype)
            };
            builder = builder.input_types(input);
        }
        for (name, value) in &self.attrs {
            builder = builder.attr(name.clone(), value.clone());
        }
        let node = builder.build()?;
        let mut tensors: Vec<Option<&Tensor>> = vec![None; shapes.len()];
        for (index, tensor) in &self.tensors {
            if let Some(slot) = tensors.get_mut(*index) {
                *slot = Some(tensor);
            }
        }
        let mut c = InferenceContext::new(&self.op, &node, &shapes, &tensors)?;
        // A panicking shape function is an error here too, as everywhere
        // else: `error(..)` can then assert what it says.
        super::run_contained(self.shape_fn, &mut c)?;
        Ok(notation(&c))
    }

    /// Asserts that `inputs` infer `expected` (`INFER_OK`).
    #[track_caller]
    pub fn ok(&self, inputs: &str, expected: &str) {
        match self.run(inputs) {
            Ok(got) => assert_eq!(
                got, expected,
                "op {} with inputs {inputs:?}: inferred {got:?}, expected {expected:?}",
                self.op.name
            ),
            Err(e) => panic!(
                "op {} with inputs {inputs:?}: expected {expected:?}, got the error {e}",
                self.op.name
            ),
        }
    }

    /// Asserts that `inputs` are rejected with an error containing
    /// `expected` (`INFER_ERROR`).
    #[track_caller]
    pub fn error(&self, inputs: &str, expected: &str) {
        match self.run(inputs) {
            Ok(got) => panic!(
                "op {} with inputs {inputs:?}: expected an error containing {expected:?}, inferred {got:?}",
                self.op.name
            ),
            Err(e) => assert!(
                e.message().contains(expected),
                "op {} with inputs {inputs:?}: expected an error containing {expected:?}, got {e}",
                self.op.name
            ),
        }
    }
}

fn arg_attr(arg: &op_spec::ArgDef) -> Option<&String> {
    match &arg.ty {
        ArgType::ListAttr(a) => Some(a),
        _ => None,
    }
}

/// The outputs of `c` in the test notation.
fn notation(c: &InferenceContext<'_>) -> String {
    let outputs: Vec<String> = (0..c.num_outputs())
        .map(|i| {
            let Some(s) = c.output(i) else {
                return "?".to_owned();
            };
            if let Some(j) = c.inputs.iter().position(|input| *input == s) {
                return format!("in{j}");
            }
            let Some(dims) = c.dims_of(s) else {
                return "?".to_owned();
            };
            let dims: Vec<String> = dims
                .iter()
                .map(|d| {
                    let from_input = c.inputs.iter().enumerate().find_map(|(j, input)| {
                        let k = c.dims_of(*input)?.iter().position(|x| x == d)?;
                        Some(format!("d{j}_{k}"))
                    });
                    from_input
                        .unwrap_or_else(|| c.value(*d).map_or("?".to_owned(), |v| v.to_string()))
                })
                .collect();
            format!("[{}]", dims.join(","))
        })
        .collect();
    outputs.join(";")
}
