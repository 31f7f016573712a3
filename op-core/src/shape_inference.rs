//! Shape inference: what an op's shape function tells, before any kernel
//! runs, about the shapes of its outputs, and which input shapes it rejects
//! (TensorFlow's `InferenceContext`).
//!
//! Shapes may be partially known: unknown rank (`?`), known rank with
//! unknown dimensions (`[?,3]`), or fully known (`[2,3]`). A shape function
//! works on [`ShapeHandle`]s and [`DimensionHandle`]s, which keep their
//! identity: an output dimension that *is* an input's dimension (not just
//! equal to it) stays tied to it, which the test notation shows as `d0_1`.
//!
//! ```
//! use op_core::shape_inference::{InferenceContext, PartialShape};
//! use op_core::{DType, OpInstanceBuilder, OpDefBuilder};
//!
//! // MatMul's shape function, in part: [n,k] x [k,m] -> [n,m].
//! fn matmul(c: &mut InferenceContext<'_>) -> op_core::Result<()> {
//!     let a = c.with_rank(c.input(0)?, 2)?;
//!     let b = c.with_rank(c.input(1)?, 2)?;
//!     let (a_k, b_k) = (c.dim(a, 1)?, c.dim(b, 0)?);
//!     c.merge_dim(a_k, b_k)?;
//!     let (n, m) = (c.dim(a, 0)?, c.dim(b, 1)?);
//!     let out = c.matrix(n, m);
//!     c.set_output(0, out)
//! }
//!
//! let op = OpDefBuilder::new("MatMul").input("a: float").input("b: float").output("c: float").build()?;
//! let node = OpInstanceBuilder::new(&op).input(DType::F32).input(DType::F32).build()?;
//! let shapes = ["[2,?]".parse()?, "[3,4]".parse()?];
//! let out = op_core::shape_inference::infer(&op, &node, matmul, &shapes, &[])?;
//! assert_eq!(out, ["[2,4]".parse::<PartialShape>()?]);
//! # Ok::<(), op_core::Error>(())
//! ```

use std::fmt;
use std::str::FromStr;

use crate::op_instance::{FromAttrValue, OpInstance};
use crate::tensor::Tensor;
use crate::{Error, OpDef, Result};

pub mod library;
pub mod testing;

/// A shape function: reads the input shapes (and attrs, and constant
/// inputs) from the context and sets every output's shape, or returns an
/// error for input shapes the op rejects.
pub type ShapeFn = fn(&mut InferenceContext<'_>) -> Result<()>;

/// A partially known shape, as a value: `None` for unknown rank, otherwise
/// one entry per dimension, `None` where its size is unknown.
///
/// Written and parsed as `?` (unknown rank), `[]` (scalar), `[2,?,3]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct PartialShape(pub Option<Vec<Option<usize>>>);

impl PartialShape {
    /// The shape of unknown rank.
    pub fn unknown() -> Self {
        PartialShape(None)
    }

    /// A fully known shape.
    pub fn known(dims: &[usize]) -> Self {
        PartialShape(Some(dims.iter().map(|d| Some(*d)).collect()))
    }

    /// The rank, if known.
    pub fn rank(&self) -> Option<usize> {
        self.0.as_ref().map(Vec::len)
    }

    /// Whether a tensor of shape `dims` fits this shape.
    pub fn is_compatible_with(&self, dims: &[usize]) -> bool {
        match &self.0 {
            None => true,
            Some(own) => {
                own.len() == dims.len()
                    && own.iter().zip(dims).all(|(o, d)| o.is_none_or(|o| o == *d))
            }
        }
    }
}

impl fmt::Display for PartialShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            None => f.write_str("?"),
            Some(dims) => {
                f.write_str("[")?;
                // Capped as TensorShape's text is, for messages.
                for (i, d) in dims.iter().take(crate::error::DIMS_LIMIT).enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    match d {
                        Some(d) => write!(f, "{d}")?,
                        None => f.write_str("?")?,
                    }
                }
                if dims.len() > crate::error::DIMS_LIMIT {
                    write!(f, ",... (rank {})", dims.len())?;
                }
                f.write_str("]")
            }
        }
    }
}

impl FromStr for PartialShape {
    type Err = Error;

    /// Parses `?`, `[]`, `[2,?,3]` (spaces allowed).
    fn from_str(text: &str) -> Result<Self> {
        let text = text.trim();
        if text == "?" {
            return Ok(PartialShape(None));
        }
        let inner = text
            .strip_prefix('[')
            .and_then(|t| t.strip_suffix(']'))
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "cannot parse shape {text:?}: write ?, [] or [2,?,3]"
                ))
            })?;
        if inner.trim().is_empty() {
            return Ok(PartialShape(Some(Vec::new())));
        }
        inner
            .split(',')
            .map(|d| match d.trim() {
                "?" | "-1" => Ok(None),
                d => d.parse::<usize>().map(Some).map_err(|_| {
                    Error::invalid_argument(format!(
                        "cannot parse shape {text:?}: {d:?} is not a size or ?"
                    ))
                }),
            })
            .collect::<Result<Vec<_>>>()
            .map(|dims| PartialShape(Some(dims)))
    }
}

/// A dimension in an [`InferenceContext`]: known size or unknown, with an
/// identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DimensionHandle(u32);

/// A shape in an [`InferenceContext`]: unknown rank, or a list of
/// [`DimensionHandle`]s, with an identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ShapeHandle(u32);

/// A dimension given to the context's constructors: a handle, or a value.
#[derive(Clone, Copy, Debug)]
pub enum DimOrValue {
    /// An existing dimension.
    Dim(DimensionHandle),
    /// A new dimension of this size (`None`: unknown).
    Value(Option<usize>),
}

impl From<DimensionHandle> for DimOrValue {
    fn from(d: DimensionHandle) -> Self {
        DimOrValue::Dim(d)
    }
}

impl From<usize> for DimOrValue {
    fn from(v: usize) -> Self {
        DimOrValue::Value(Some(v))
    }
}

/// The shapes of one node's inputs and outputs while its shape function
/// runs (TensorFlow's `shape_inference::InferenceContext`).
///
/// Errors are `InvalidArgument` and name the op and node, and, for shapes
/// that came from an input, the input and its shape.
pub struct InferenceContext<'a> {
    op: &'a OpDef,
    node: &'a OpInstance,
    dims: Vec<Option<usize>>,
    shapes: Vec<Option<Vec<DimensionHandle>>>,
    inputs: Vec<ShapeHandle>,
    input_tensors: &'a [Option<&'a Tensor>],
    outputs: Vec<Option<ShapeHandle>>,
}

impl<'a> InferenceContext<'a> {
    /// A context for `node` of `op` with these input shapes (flattened, one
    /// per input tensor) and, where known, the values of constant inputs.
    pub fn new(
        op: &'a OpDef,
        node: &'a OpInstance,
        input_shapes: &[PartialShape],
        input_tensors: &'a [Option<&'a Tensor>],
    ) -> Result<Self> {
        let mut c = InferenceContext {
            op,
            node,
            dims: Vec::new(),
            shapes: Vec::new(),
            inputs: Vec::new(),
            input_tensors,
            outputs: vec![None; node.output_types().len()],
        };
        let expected = node.input_types().len();
        if input_shapes.len() != expected {
            return Err(c.error(format!(
                "shape inference got {} input shape(s) for {expected} input tensor(s)",
                input_shapes.len()
            )));
        }
        for shape in input_shapes {
            let handle = c.shape_from(shape);
            c.inputs.push(handle);
        }
        Ok(c)
    }

    /// An `InvalidArgument` error whose message starts with the op and
    /// node (`op Sum (node 'total'): message`), as every error of the
    /// context's own checks does: for a shape function's own checks.
    pub fn error(&self, message: impl fmt::Display) -> Error {
        Error::invalid_argument(format!("{}: {message}", self.node))
    }

    /// `input 0 ('to_zero') has shape [2,3]`, or `shape [2,3]` for a shape
    /// that is not an input's.
    fn describe(&self, s: ShapeHandle) -> String {
        match self.inputs.iter().position(|i| *i == s) {
            Some(i) => format!(
                "input {i}{} has shape {}",
                self.input_name(i),
                self.shape_string(s)
            ),
            None => format!("shape {}", self.shape_string(s)),
        }
    }

    fn input_name(&self, index: usize) -> String {
        let Some((arg, position)) = self.node.input_arg_of(index) else {
            return String::new();
        };
        let def = &self.op.inputs[arg];
        if def.is_list() {
            format!(" ('{}'[{position}])", def.name)
        } else {
            format!(" ('{}')", def.name)
        }
    }

    fn shape_from(&mut self, shape: &PartialShape) -> ShapeHandle {
        let dims = shape
            .0
            .as_ref()
            .map(|dims| dims.iter().map(|d| self.make_dim(*d)).collect());
        self.push_shape(dims)
    }

    fn push_shape(&mut self, dims: Option<Vec<DimensionHandle>>) -> ShapeHandle {
        self.shapes.push(dims);
        ShapeHandle((self.shapes.len() - 1) as u32)
    }

    /// The op's definition.
    pub fn op_def(&self) -> &'a OpDef {
        self.op
    }

    /// The number of input tensors.
    pub fn num_inputs(&self) -> usize {
        self.inputs.len()
    }

    /// The number of output tensors.
    pub fn num_outputs(&self) -> usize {
        self.outputs.len()
    }

    /// The shape of input tensor `index`.
    pub fn input(&self, index: usize) -> Result<ShapeHandle> {
        self.inputs.get(index).copied().ok_or_else(|| {
            self.error(format!(
                "asked for input {index}, but the op has {} input tensor(s)",
                self.inputs.len()
            ))
        })
    }

    /// The value of input `index` when it is a constant known during
    /// inference (for ops whose output shape depends on an input's value).
    pub fn input_tensor(&self, index: usize) -> Option<&'a Tensor> {
        self.input_tensors.get(index).copied().flatten()
    }

    /// The value of attr `name`.
    pub fn get_attr<T: FromAttrValue>(&self, name: &str) -> Result<T> {
        self.node.get_attr(name)
    }

    /// Sets the shape of output tensor `index`.
    pub fn set_output(&mut self, index: usize, shape: ShapeHandle) -> Result<()> {
        let count = self.outputs.len();
        match self.outputs.get_mut(index) {
            Some(slot) => {
                *slot = Some(shape);
                Ok(())
            }
            None => Err(self.error(format!(
                "set the shape of output {index}, but the op has {count} output tensor(s)"
            ))),
        }
    }

    /// The shape set for output `index`, if any.
    pub fn output(&self, index: usize) -> Option<ShapeHandle> {
        self.outputs.get(index).copied().flatten()
    }

    /// The rank of `s`, if known.
    pub fn rank(&self, s: ShapeHandle) -> Option<usize> {
        self.shapes[s.0 as usize].as_ref().map(Vec::len)
    }

    /// Whether every dimension of `s` is known.
    pub fn fully_defined(&self, s: ShapeHandle) -> bool {
        self.shapes[s.0 as usize]
            .as_ref()
            .is_some_and(|dims| dims.iter().all(|d| self.value(*d).is_some()))
    }

    /// Dimension `index` of `s` (negative counts from the end). For a
    /// shape of unknown rank, a new unknown dimension.
    pub fn dim(&mut self, s: ShapeHandle, index: i64) -> Result<DimensionHandle> {
        let Some(dims) = self.shapes[s.0 as usize].clone() else {
            return Ok(self.unknown_dim());
        };
        let rank = dims.len() as i64;
        let i = if index < 0 { index + rank } else { index };
        if !(0..rank).contains(&i) {
            return Err(self.error(format!(
                "{}, which has no dimension {index}",
                self.describe(s)
            )));
        }
        Ok(dims[i as usize])
    }

    /// The size of `d`, if known.
    pub fn value(&self, d: DimensionHandle) -> Option<usize> {
        self.dims[d.0 as usize]
    }

    /// A new dimension of size `value` (`None`: unknown).
    pub fn make_dim(&mut self, value: Option<usize>) -> DimensionHandle {
        self.dims.push(value);
        DimensionHandle((self.dims.len() - 1) as u32)
    }

    /// A new unknown dimension.
    pub fn unknown_dim(&mut self) -> DimensionHandle {
        self.make_dim(None)
    }

    fn resolve_dim(&mut self, d: DimOrValue) -> DimensionHandle {
        match d {
            DimOrValue::Dim(d) => d,
            DimOrValue::Value(v) => self.make_dim(v),
        }
    }

    /// A shape of these dimensions.
    pub fn make_shape(
        &mut self,
        dims: impl IntoIterator<Item = impl Into<DimOrValue>>,
    ) -> ShapeHandle {
        let dims = dims
            .into_iter()
            .map(|d| self.resolve_dim(d.into()))
            .collect();
        self.push_shape(Some(dims))
    }

    /// The shape of unknown rank.
    pub fn unknown_shape(&mut self) -> ShapeHandle {
        self.push_shape(None)
    }

    /// A shape of rank `rank` with every dimension unknown.
    pub fn unknown_shape_of_rank(&mut self, rank: usize) -> ShapeHandle {
        let dims = (0..rank).map(|_| self.unknown_dim()).collect();
        self.push_shape(Some(dims))
    }

    /// The scalar shape `[]`.
    pub fn scalar(&mut self) -> ShapeHandle {
        self.push_shape(Some(Vec::new()))
    }

    /// The vector shape `[d]`.
    pub fn vector(&mut self, d: impl Into<DimOrValue>) -> ShapeHandle {
        self.make_shape([d.into()])
    }

    /// The matrix shape `[rows, cols]`.
    pub fn matrix(
        &mut self,
        rows: impl Into<DimOrValue>,
        cols: impl Into<DimOrValue>,
    ) -> ShapeHandle {
        self.make_shape([rows.into(), cols.into()])
    }

    /// `s`, which must have rank `rank`; an unknown rank becomes `rank`
    /// unknown dimensions.
    pub fn with_rank(&mut self, s: ShapeHandle, rank: usize) -> Result<ShapeHandle> {
        match self.rank(s) {
            Some(r) if r == rank => Ok(s),
            Some(r) => Err(self.error(format!(
                "{}, which must be rank {rank} but is rank {r}",
                self.describe(s)
            ))),
            None => Ok(self.unknown_shape_of_rank(rank)),
        }
    }

    /// `s`, which must have rank at least `rank`.
    pub fn with_rank_at_least(&mut self, s: ShapeHandle, rank: usize) -> Result<ShapeHandle> {
        match self.rank(s) {
            Some(r) if r < rank => Err(self.error(format!(
                "{}, which must be at least rank {rank} but is rank {r}",
                self.describe(s)
            ))),
            _ => Ok(s),
        }
    }

    /// `s`, which must have rank at most `rank`.
    pub fn with_rank_at_most(&mut self, s: ShapeHandle, rank: usize) -> Result<ShapeHandle> {
        match self.rank(s) {
            Some(r) if r > rank => Err(self.error(format!(
                "{}, which must be at most rank {rank} but is rank {r}",
                self.describe(s)
            ))),
            _ => Ok(s),
        }
    }

    /// `d`, which must have size `value` (an unknown `d` becomes `value`).
    pub fn with_value(&mut self, d: DimensionHandle, value: usize) -> Result<DimensionHandle> {
        match self.value(d) {
            Some(v) if v == value => Ok(d),
            Some(v) => Err(self.error(format!("dimension must be {value} but is {v}"))),
            None => Ok(self.make_dim(Some(value))),
        }
    }

    /// The more specific of two dimensions that must agree: fails only when
    /// both are known and differ.
    pub fn merge_dim(&mut self, a: DimensionHandle, b: DimensionHandle) -> Result<DimensionHandle> {
        match (self.value(a), self.value(b)) {
            (_, None) => Ok(a),
            (None, Some(_)) => Ok(b),
            (Some(x), Some(y)) if x == y => Ok(a),
            (Some(x), Some(y)) => {
                let origins: Vec<String> =
                    [a, b].iter().filter_map(|d| self.dim_origin(*d)).collect();
                let origins = if origins.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", origins.join("; "))
                };
                Err(self.error(format!(
                    "dimensions must be equal, but are {x} and {y}{origins}"
                )))
            }
        }
    }

    /// `dimension 1 of input 0 ('a') with shape [2,3]`, for a dimension
    /// that is an input's.
    fn dim_origin(&self, d: DimensionHandle) -> Option<String> {
        self.inputs.iter().enumerate().find_map(|(i, s)| {
            let k = self.dims_of(*s)?.iter().position(|x| *x == d)?;
            Some(format!(
                "dimension {k} of input {i}{} with shape {}",
                self.input_name(i),
                self.shape_string(*s)
            ))
        })
    }

    /// The most specific shape compatible with both `a` and `b`: fails only
    /// on a real conflict (different ranks, or a known dimension that
    /// differs), and names both shapes. Returns `a` itself when it is already
    /// as specific as `b`, else `b` itself when that is as specific as `a`.
    pub fn merge(&mut self, a: ShapeHandle, b: ShapeHandle) -> Result<ShapeHandle> {
        let (Some(da), Some(db)) = (
            self.shapes[a.0 as usize].clone(),
            self.shapes[b.0 as usize].clone(),
        ) else {
            // As TensorFlow: `a` unless only `b` has a known rank.
            return Ok(if self.rank(b).is_some() && self.rank(a).is_none() {
                b
            } else {
                a
            });
        };
        if da.len() != db.len() {
            return Err(self.error(format!(
                "shapes must be equal rank, but {} and {}",
                self.describe(a),
                self.describe(b)
            )));
        }
        let mut merged = Vec::with_capacity(da.len());
        for (i, (x, y)) in da.iter().zip(&db).enumerate() {
            match self.merge_dim(*x, *y) {
                Ok(d) => merged.push(d),
                Err(_) => {
                    return Err(self.error(format!(
                        "dimension {i} in both shapes must be equal, but {} and {}",
                        self.describe(a),
                        self.describe(b)
                    )));
                }
            }
        }
        // The input that is already as specific as the merge, if any (`a`
        // first), as TensorFlow returns it.
        let same_values = |c: &Self, dims: &[DimensionHandle]| {
            merged
                .iter()
                .zip(dims)
                .all(|(m, d)| c.value(*m) == c.value(*d))
        };
        if same_values(self, &da) {
            Ok(a)
        } else if same_values(self, &db) {
            Ok(b)
        } else {
            Ok(self.push_shape(Some(merged)))
        }
    }

    /// `a + b`; unknown if either is. `a + 0` is `a` itself, `0 + b` is `b`.
    pub fn add(&mut self, a: DimensionHandle, b: impl Into<DimOrValue>) -> Result<DimensionHandle> {
        let b = self.resolve_dim(b.into());
        if self.value(b) == Some(0) {
            return Ok(a);
        }
        if self.value(a) == Some(0) {
            return Ok(b);
        }
        let sum = match (self.value(a), self.value(b)) {
            (Some(x), Some(y)) => Some(
                x.checked_add(y)
                    .ok_or_else(|| self.error("dimension overflow"))?,
            ),
            _ => None,
        };
        Ok(self.make_dim(sum))
    }

    /// `a - b`; unknown if either is; an error if negative.
    pub fn subtract(
        &mut self,
        a: DimensionHandle,
        b: impl Into<DimOrValue>,
    ) -> Result<DimensionHandle> {
        let b = self.resolve_dim(b.into());
        if self.value(b) == Some(0) {
            return Ok(a);
        }
        let difference = match (self.value(a), self.value(b)) {
            (Some(x), Some(y)) => Some(x.checked_sub(y).ok_or_else(|| {
                self.error(format!(
                    "negative dimension size from subtracting {y} from {x}"
                ))
            })?),
            _ => None,
        };
        Ok(self.make_dim(difference))
    }

    /// `a * b`; unknown if either is (unless one is 0, which is then the
    /// result). `a * 1` is `a`, `1 * b` is `b`.
    pub fn multiply(
        &mut self,
        a: DimensionHandle,
        b: impl Into<DimOrValue>,
    ) -> Result<DimensionHandle> {
        let b = self.resolve_dim(b.into());
        match (self.value(a), self.value(b)) {
            (_, Some(1)) => Ok(a),
            (Some(1), _) => Ok(b),
            (Some(0), _) => Ok(a),
            (_, Some(0)) => Ok(b),
            (Some(x), Some(y)) => {
                let product = x
                    .checked_mul(y)
                    .ok_or_else(|| self.error("dimension overflow"))?;
                Ok(self.make_dim(Some(product)))
            }
            _ => Ok(self.unknown_dim()),
        }
    }

    /// `a / b`; unknown if either is. With `evenly`, a remainder is an
    /// error. Dividing by 0 is an error.
    pub fn divide(
        &mut self,
        a: DimensionHandle,
        b: impl Into<DimOrValue>,
        evenly: bool,
    ) -> Result<DimensionHandle> {
        let b = self.resolve_dim(b.into());
        match (self.value(a), self.value(b)) {
            (_, Some(0)) => Err(self.error("division by zero in a dimension")),
            (_, Some(1)) => Ok(a),
            (Some(x), Some(y)) => {
                if evenly && x % y != 0 {
                    return Err(self.error(format!(
                        "dimension size {x} must be evenly divisible by {y}"
                    )));
                }
                Ok(self.make_dim(Some(x / y)))
            }
            _ => Ok(self.unknown_dim()),
        }
    }

    /// `a` followed by `b`; unknown rank if either is.
    pub fn concatenate(&mut self, a: ShapeHandle, b: ShapeHandle) -> ShapeHandle {
        match (
            self.shapes[a.0 as usize].clone(),
            self.shapes[b.0 as usize].clone(),
        ) {
            (Some(mut x), Some(y)) => {
                x.extend(y);
                self.push_shape(Some(x))
            }
            _ => self.unknown_shape(),
        }
    }

    /// Dimensions `start..end` of `s` (negative indices count from the end;
    /// `end` is clamped to the rank). Unknown rank gives unknown rank.
    pub fn subshape(
        &mut self,
        s: ShapeHandle,
        start: i64,
        end: Option<i64>,
    ) -> Result<ShapeHandle> {
        let Some(dims) = self.shapes[s.0 as usize].clone() else {
            return Ok(if start == 0 && end.is_none() {
                s
            } else {
                self.unknown_shape()
            });
        };
        let rank = dims.len() as i64;
        let fix = |i: i64| if i < 0 { i + rank } else { i.min(rank) };
        let (from, to) = (fix(start), fix(end.unwrap_or(rank)));
        if from < 0 || to < 0 || from > to {
            return Err(self.error(format!(
                "{}, for which subshape {start}..{} is out of range",
                self.describe(s),
                end.map_or(String::new(), |e| e.to_string())
            )));
        }
        if from == 0 && to == rank {
            return Ok(s);
        }
        Ok(self.push_shape(Some(dims[from as usize..to as usize].to_vec())))
    }

    /// `s` as text: `?`, `[]`, `[2,?]`.
    pub fn shape_string(&self, s: ShapeHandle) -> String {
        self.partial_shape(s).to_string()
    }

    /// The value of `s`.
    pub fn partial_shape(&self, s: ShapeHandle) -> PartialShape {
        PartialShape(
            self.shapes[s.0 as usize]
                .as_ref()
                .map(|dims| dims.iter().map(|d| self.value(*d)).collect()),
        )
    }

    /// The output shapes as values, with an unknown shape for any output
    /// the shape function did not set.
    pub fn output_shapes(&self) -> Vec<PartialShape> {
        self.outputs
            .iter()
            .map(|o| o.map_or(PartialShape::unknown(), |s| self.partial_shape(s)))
            .collect()
    }

    /// The dims of `s`, if its rank is known (for the test notation).
    fn dims_of(&self, s: ShapeHandle) -> Option<&[DimensionHandle]> {
        self.shapes[s.0 as usize].as_deref()
    }
}

/// Runs `shape_fn` for `node` of `op` on these input shapes (and constant
/// input values, by input index, where known) and returns the output shapes.
///
/// A shape function that panics gives an `Internal` error naming the op
/// and node; the panic goes no further.
pub fn infer(
    op: &OpDef,
    node: &OpInstance,
    shape_fn: ShapeFn,
    input_shapes: &[PartialShape],
    input_tensors: &[Option<&Tensor>],
) -> Result<Vec<PartialShape>> {
    let mut c = InferenceContext::new(op, node, input_shapes, input_tensors)?;
    run_contained(shape_fn, &mut c)?;
    Ok(c.output_shapes())
}

/// Runs `shape_fn` on `c`; a panic in it becomes an `Internal` error
/// naming the node (a bug in the op is an error for the caller, never a
/// panic in it).
pub(crate) fn run_contained(shape_fn: ShapeFn, c: &mut InferenceContext<'_>) -> Result<()> {
    let node = c.node;
    match crate::unwind::catch_panic(|| shape_fn(c)) {
        Ok(result) => result,
        Err(panic) => Err(Error::internal(format!(
            "{node}: the shape function panicked{panic}"
        ))),
    }
}
