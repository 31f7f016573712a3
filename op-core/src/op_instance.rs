//! Op instances: an op with a name and every attr decided.
//!
//! An [`OpInstance`] is what TensorFlow's generated Python wrapper builds before it
//! adds an op to a graph: the op's attrs resolved from three sources, in
//! this order of authority:
//!
//! 1. **inferred from the inputs**: a `type` attr from the dtypes of the
//!    inputs typed by it (`x: T`), an `int` attr from the length of the list
//!    input it counts (`in: N * T`), a `list(type)` attr from the dtypes of
//!    the list it types;
//! 2. **given** by the caller;
//! 3. the attr's **default**.
//!
//! Every value is then checked against the op's constraints (allowed values,
//! minimums), and the output dtypes are computed. All errors are
//! `InvalidArgument` and name the op and the attr or input at fault.
//!
//! ```
//! use op_core::op_instance::OpInstanceBuilder;
//! use op_core::{AttrValue, DType, OpDefBuilder};
//!
//! let op = OpDefBuilder::new("SameListInputExample")
//!     .attr("N: int")
//!     .attr("T: type")
//!     .input("in: N * T")
//!     .output("out: T")
//!     .build()?;
//! let instance = OpInstanceBuilder::new(&op)
//!     .name("concat")
//!     .input_list(vec![DType::F32; 3])
//!     .build()?;
//! assert_eq!(instance.attr("N"), Some(&AttrValue::Int(3)));
//! assert_eq!(instance.attr("T"), Some(&AttrValue::Type(DType::F32)));
//! assert_eq!(instance.output_types(), &[DType::F32]);
//! assert_eq!(instance.to_string(), "op SameListInputExample (node 'concat')");
//!
//! let err = OpInstanceBuilder::new(&op).input_list(vec![DType::F32, DType::I32]).build().unwrap_err();
//! assert_eq!(
//!     err.message(),
//!     "op SameListInputExample: input 'in' has tensors of types float and int32, \
//!      but all tensors of a list typed by attr 'T' must have one type"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::ops::Range;

use op_spec::validate::{AttrValueError, validate_attr_value};
use op_spec::{ArgDef, ArgType, AttrDef, AttrKind, AttrType, AttrValue, DType, ListValue, OpDef};

use crate::error::{quoted, summarized};
use crate::{Error, Result};

/// The dtypes fed to one input arg: one tensor, or a list of tensors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputTypes {
    /// A single tensor of this dtype.
    Single(DType),
    /// A list of tensors of these dtypes (for `N * T` and `list(type)` args).
    List(Vec<DType>),
}

impl From<DType> for InputTypes {
    fn from(dtype: DType) -> Self {
        InputTypes::Single(dtype)
    }
}

impl From<Vec<DType>> for InputTypes {
    fn from(dtypes: Vec<DType>) -> Self {
        InputTypes::List(dtypes)
    }
}

/// An op instance: the op's name, the instance's own name (a graph node's
/// name; the op's name unless given), every attr's value, and the dtypes of
/// its inputs and outputs (flattened: a list arg contributes one entry per
/// tensor).
///
/// It is the one description of a node that kernel construction, the
/// kernel context, shape inference and prepared ops share; its `Display`
/// (`op ReadVariableOp (node 'read')`) is how every error names the node.
#[derive(Clone, Debug, PartialEq)]
pub struct OpInstance {
    op: String,
    name: String,
    attrs: Vec<(String, AttrValue)>,
    input_types: Vec<DType>,
    input_ranges: Vec<(String, Range<usize>)>,
    output_types: Vec<DType>,
    output_ranges: Vec<(String, Range<usize>)>,
}

impl OpInstance {
    /// The op's name.
    pub fn op(&self) -> &str {
        &self.op
    }

    /// The instance's name: a graph node's name, or what
    /// [`OpCall::node_name`](crate::OpCall::node_name) gave; the op's name
    /// unless given.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Flat input `index` as errors name it: `input 1 ('key')`, or
    /// `input 2 ('xs'[1])` for an element of a list arg; `input 9` past
    /// the args. `op` is the instance's op.
    ///
    /// ```
    /// use op_core::op_instance::OpInstanceBuilder;
    /// use op_core::{DType, OpDefBuilder};
    ///
    /// let def = OpDefBuilder::new("Pick")
    ///     .attr("N: int")
    ///     .input("key: int32")
    ///     .input("xs: N * float")
    ///     .build()?;
    /// let node = OpInstanceBuilder::new(&def)
    ///     .input(DType::I32)
    ///     .input_list(vec![DType::F32; 2])
    ///     .build()?;
    /// assert_eq!(node.describe_input(&def, 0), "input 0 ('key')");
    /// assert_eq!(node.describe_input(&def, 2), "input 2 ('xs'[1])");
    /// assert_eq!(node.describe_input(&def, 9), "input 9");
    /// # Ok::<(), op_core::Error>(())
    /// ```
    pub fn describe_input(&self, op: &OpDef, index: usize) -> String {
        match self
            .input_arg_of(index)
            .map(|(arg, at)| (&op.inputs[arg], at))
        {
            Some((arg, position)) if arg.is_list() => {
                format!("input {index} ('{}'[{position}])", arg.name)
            }
            Some((arg, _)) => format!("input {index} ('{}')", arg.name),
            None => format!("input {index}"),
        }
    }

    /// `op X (node 'n', <detail>)`: the instance's description (its
    /// `Display`) with one more detail inside the parentheses, such as
    /// the device a kernel runs on.
    pub fn describe_with<'a>(
        &'a self,
        detail: impl std::fmt::Display + 'a,
    ) -> impl std::fmt::Display + 'a {
        struct Described<'a, D>(&'a OpInstance, D);
        impl<D: std::fmt::Display> std::fmt::Display for Described<'_, D> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.write_description(f, Some(&self.1))
            }
        }
        Described(self, detail)
    }

    /// `op X (node 'n')`, or `op X (node 'n', <detail>)`.
    fn write_description(
        &self,
        f: &mut std::fmt::Formatter<'_>,
        detail: Option<&dyn std::fmt::Display>,
    ) -> std::fmt::Result {
        write!(f, "op {} (node {}", self.op, quoted(&self.name))?;
        match detail {
            Some(detail) => write!(f, ", {detail})"),
            None => f.write_str(")"),
        }
    }

    /// The same instance under another name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Every attr with its value, in the op's attr order.
    pub fn attrs(&self) -> &[(String, AttrValue)] {
        &self.attrs
    }

    /// The value of attr `name`.
    pub fn attr(&self, name: &str) -> Option<&AttrValue> {
        self.attrs.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// The value of attr `name` as a Rust value, as a kernel reads its attrs
    /// (TensorFlow's `GetAttr`).
    ///
    /// ```
    /// # use op_core::{op_instance::OpInstanceBuilder, DType, OpDefBuilder};
    /// let op = OpDefBuilder::new("Op").attr("preserve_index: int = 2").build()?;
    /// let node = OpInstanceBuilder::new(&op).build()?;
    /// let index: i64 = node.get_attr("preserve_index")?;
    /// assert_eq!(index, 2);
    /// assert!(node.get_attr::<f32>("preserve_index").is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn get_attr<T: FromAttrValue>(&self, name: &str) -> Result<T> {
        let value = self.attr(name).ok_or_else(|| {
            Error::invalid_argument(format!("op {}: no attr named {}", self.op, quoted(name)))
        })?;
        T::from_attr_value(value).ok_or_else(|| {
            Error::invalid_argument(format!(
                "op {}: attr '{name}' is {} ({}), which cannot be read as {}",
                self.op,
                value.attr_type(),
                summarized(value),
                T::DESCRIPTION
            ))
        })
    }

    /// The dtypes of all input tensors, flattened.
    pub fn input_types(&self) -> &[DType] {
        &self.input_types
    }

    /// The dtypes of all output tensors, flattened.
    pub fn output_types(&self) -> &[DType] {
        &self.output_types
    }

    /// The indices, in the flattened inputs, of the tensors of input arg `name`.
    pub fn input_range(&self, name: &str) -> Option<Range<usize>> {
        self.input_ranges
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, r)| r.clone())
    }

    /// The indices, in the flattened inputs, of the tensors of the op's
    /// `index`-th input arg.
    pub fn input_arg_range(&self, index: usize) -> Option<Range<usize>> {
        self.input_ranges.get(index).map(|(_, r)| r.clone())
    }

    /// The indices, in the flattened outputs, of the tensors of the op's
    /// `index`-th output arg.
    pub fn output_arg_range(&self, index: usize) -> Option<Range<usize>> {
        self.output_ranges.get(index).map(|(_, r)| r.clone())
    }

    /// The input arg that flattened input `index` belongs to, and its
    /// position within that arg (0 for a single-tensor arg).
    pub fn input_arg_of(&self, index: usize) -> Option<(usize, usize)> {
        arg_of(&self.input_ranges, index)
    }

    /// The output arg that flattened output `index` belongs to, and its
    /// position within that arg.
    pub fn output_arg_of(&self, index: usize) -> Option<(usize, usize)> {
        arg_of(&self.output_ranges, index)
    }

    /// The indices, in the flattened outputs, of the tensors of output arg `name`.
    pub fn output_range(&self, name: &str) -> Option<Range<usize>> {
        self.output_ranges
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, r)| r.clone())
    }
}

/// `op ReadVariableOp (node 'read')`: the op and the instance's name (quoted
/// and capped, as every message quotes what a caller gave).
impl std::fmt::Display for OpInstance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.write_description(f, None)
    }
}

fn arg_of(ranges: &[(String, Range<usize>)], index: usize) -> Option<(usize, usize)> {
    ranges
        .iter()
        .position(|(_, r)| r.contains(&index))
        .map(|arg| (arg, index - ranges[arg].1.start))
}

/// Builds a [`OpInstance`] of an op from its inputs' dtypes and explicit attrs.
#[derive(Clone, Debug)]
pub struct OpInstanceBuilder<'a> {
    op: &'a OpDef,
    name: Option<String>,
    inputs: Vec<InputTypes>,
    attrs: Vec<(String, AttrValue)>,
}

impl<'a> OpInstanceBuilder<'a> {
    /// Starts an instance of `op`.
    pub fn new(op: &'a OpDef) -> Self {
        OpInstanceBuilder {
            op,
            name: None,
            inputs: Vec::new(),
            attrs: Vec::new(),
        }
    }

    /// Names the instance (in errors, and a graph node's name); the op's
    /// name by default.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Adds the next input: one tensor of `dtype`.
    pub fn input(mut self, dtype: DType) -> Self {
        self.inputs.push(InputTypes::Single(dtype));
        self
    }

    /// Adds the next input: a list of tensors of these dtypes.
    pub fn input_list(mut self, dtypes: impl Into<Vec<DType>>) -> Self {
        self.inputs.push(InputTypes::List(dtypes.into()));
        self
    }

    /// Adds the next input, single or list.
    pub fn input_types(mut self, input: InputTypes) -> Self {
        self.inputs.push(input);
        self
    }

    /// Sets attr `name`. Attrs inferred from the inputs may be given too;
    /// they must then agree with the inputs.
    pub fn attr(mut self, name: impl Into<String>, value: impl Into<AttrValue>) -> Self {
        self.attrs.push((name.into(), value.into()));
        self
    }

    /// Resolves and checks every attr and computes the output dtypes.
    pub fn build(&self) -> Result<OpInstance> {
        let instance = Resolver {
            op: self.op,
            values: vec![None; self.op.attrs.len()],
            inferred_from: vec![None; self.op.attrs.len()],
        }
        .resolve(&self.inputs, &self.attrs)?;
        Ok(match &self.name {
            Some(name) => instance.with_name(name.clone()),
            None => instance,
        })
    }
}

/// The state of one [`OpInstanceBuilder::build`].
struct Resolver<'a> {
    op: &'a OpDef,
    /// The value of each attr of the op, by index, once known.
    values: Vec<Option<AttrValue>>,
    /// For inferred attrs, the input they were inferred from.
    inferred_from: Vec<Option<String>>,
}

impl Resolver<'_> {
    fn error(&self, message: impl std::fmt::Display) -> Error {
        Error::invalid_argument(format!("op {}: {message}", self.op.name))
    }

    fn attr_index(&self, name: &str) -> Result<usize> {
        self.op
            .attrs
            .iter()
            .position(|a| a.name == name)
            .ok_or_else(|| {
                // Only reachable with an OpDef built by hand: the builder validates references.
                self.error(format!(
                    "refers to attr '{name}', which the op does not declare"
                ))
            })
    }

    /// Records the value of an inferred attr, checking it against an earlier inference.
    fn infer(&mut self, attr: &str, value: AttrValue, arg: &ArgDef) -> Result<()> {
        let index = self.attr_index(attr)?;
        if let Some(previous) = &self.values[index] {
            if *previous != value {
                let source = self.inferred_from[index].clone().unwrap_or_default();
                return Err(self.error(format!(
                    "input '{}' has {}, which does not match {} of input '{source}' (both are set by attr '{attr}')",
                    arg.name,
                    describe_inferred(&value),
                    describe_inferred(previous),
                )));
            }
            return Ok(());
        }
        self.values[index] = Some(value);
        self.inferred_from[index] = Some(arg.name.clone());
        Ok(())
    }

    fn resolve(
        mut self,
        inputs: &[InputTypes],
        given: &[(String, AttrValue)],
    ) -> Result<OpInstance> {
        let op = self.op;
        if inputs.len() != op.inputs.len() {
            let names: Vec<&str> = op.inputs.iter().map(|a| a.name.as_str()).collect();
            return Err(self.error(format!(
                "expects {} input(s) ({}), got {}",
                op.inputs.len(),
                names.join(", "),
                inputs.len()
            )));
        }

        // 1. Infer attrs from the inputs.
        // Exact capacities: a graph holds one instance per node.
        let mut input_types = Vec::new();
        let mut input_ranges = Vec::with_capacity(op.inputs.len());
        for (arg, input) in op.inputs.iter().zip(inputs) {
            let start = input_types.len();
            match input {
                InputTypes::Single(dtype) => {
                    if arg.is_list() {
                        return Err(self.error(format!(
                            "input '{}' takes a list of tensors, but a single tensor was given",
                            arg.name
                        )));
                    }
                    self.infer_single(arg, *dtype)?;
                    input_types.push(*dtype);
                }
                InputTypes::List(dtypes) => {
                    if !arg.is_list() {
                        return Err(self.error(format!(
                            "input '{}' takes a single tensor, but a list of {} was given",
                            arg.name,
                            dtypes.len()
                        )));
                    }
                    self.infer_list(arg, dtypes)?;
                    input_types.extend_from_slice(dtypes);
                }
            }
            input_ranges.push((arg.name.clone(), start..input_types.len()));
        }

        // 2. Explicit attrs: unknown names are errors, inferred ones must agree.
        for (name, value) in given {
            let Some(index) = op.attrs.iter().position(|a| &a.name == name) else {
                let known: Vec<&str> = op.attrs.iter().map(|a| a.name.as_str()).collect();
                let hint = op_spec::suggest::closest(name, known.iter().copied())
                    .map(|n| format!(" (did you mean '{n}'?)"))
                    .unwrap_or_default();
                return Err(self.error(format!("has no attr named {}{hint}", quoted(name))));
            };
            let value = coerce(value, op.attrs[index].ty);
            match &self.values[index] {
                Some(inferred) if *inferred != value => {
                    let source = self.inferred_from[index].clone().unwrap_or_default();
                    return Err(self.error(format!(
                        "attr '{name}' was given as {}, but input '{source}' implies {inferred}",
                        summarized(&value)
                    )));
                }
                _ => self.values[index] = Some(value),
            }
        }

        // 3. Defaults, then every value against its constraints.
        let mut attrs = Vec::with_capacity(op.attrs.len());
        for (index, def) in op.attrs.iter().enumerate() {
            let value = match self.values[index].take() {
                Some(v) => v,
                None => match &def.default_value {
                    Some(d) => d.clone(),
                    None => return Err(self.missing_attr(def)),
                },
            };
            if let Err(e) = validate_attr_value(&value, def) {
                return Err(self.constraint_error(def, &e, self.inferred_from[index].as_deref()));
            }
            attrs.push((def.name.clone(), value));
        }

        // 4. Output dtypes from the resolved attrs.
        let lookup = |name: &str| attrs.iter().find(|(n, _)| n == name).map(|(_, v)| v);
        let mut output_types = Vec::new();
        let mut output_ranges = Vec::with_capacity(op.outputs.len());
        for arg in &op.outputs {
            let start = output_types.len();
            let types = arg_types(arg, &lookup).ok_or_else(|| {
                self.error(format!(
                    "cannot compute the types of output '{}' from its attrs",
                    arg.name
                ))
            })?;
            output_types.extend(types);
            output_ranges.push((arg.name.clone(), start..output_types.len()));
        }

        Ok(OpInstance {
            op: op.name.clone(),
            name: op.name.clone(),
            attrs,
            input_types,
            input_ranges,
            output_types,
            output_ranges,
        })
    }

    fn infer_single(&mut self, arg: &ArgDef, dtype: DType) -> Result<()> {
        match &arg.ty {
            ArgType::Fixed(expected) if *expected != dtype => Err(self.error(format!(
                "input '{}' must be {expected}, but a tensor of type {dtype} was given",
                arg.name
            ))),
            ArgType::Fixed(_) => Ok(()),
            ArgType::Attr(t) => self.infer(t, AttrValue::Type(dtype), arg),
            ArgType::ListAttr(_) => unreachable!("list args were rejected before"),
        }
    }

    fn infer_list(&mut self, arg: &ArgDef, dtypes: &[DType]) -> Result<()> {
        if let Some(n) = &arg.number_attr {
            self.infer(n, AttrValue::Int(dtypes.len() as i64), arg)?;
            match &arg.ty {
                ArgType::Fixed(expected) => {
                    if let Some(bad) = dtypes.iter().find(|d| *d != expected) {
                        return Err(self.error(format!(
                            "input '{}' is a list of {expected}, but it holds a tensor of type {bad}",
                            arg.name
                        )));
                    }
                }
                ArgType::Attr(t) => {
                    if let Some(&first) = dtypes.first() {
                        if let Some(bad) = dtypes.iter().find(|d| **d != first) {
                            return Err(self.error(format!(
                                "input '{}' has tensors of types {first} and {bad}, but all tensors of a list \
                                 typed by attr '{t}' must have one type",
                                arg.name
                            )));
                        }
                        self.infer(t, AttrValue::Type(first), arg)?;
                    }
                    // An empty list says nothing of T: it must be given or have a default.
                }
                ArgType::ListAttr(_) => {
                    return Err(self.error(format!(
                        "input '{}' has both a length attr and a list(type) attr",
                        arg.name
                    )));
                }
            }
            return Ok(());
        }
        match &arg.ty {
            ArgType::ListAttr(t) => {
                self.infer(t, AttrValue::List(ListValue::Type(dtypes.to_vec())), arg)
            }
            _ => unreachable!("single args were rejected before"),
        }
    }

    fn missing_attr(&self, def: &AttrDef) -> Error {
        let used_by = self.op.inputs.iter().find(|a| {
            a.number_attr.as_deref() == Some(&def.name) || a.type_attr() == Some(&def.name)
        });
        match used_by {
            Some(arg) => self.error(format!(
                "attr '{}' ({}) cannot be inferred from the empty list given for input '{}' and has no default: give it explicitly",
                def.name, def.ty, arg.name
            )),
            None => self.error(format!("attr '{}' ({}) is required: it has no default", def.name, def.ty)),
        }
    }

    fn constraint_error(
        &self,
        def: &AttrDef,
        e: &AttrValueError,
        inferred_from: Option<&str>,
    ) -> Error {
        match (e, inferred_from) {
            (AttrValueError::NotAllowed { value, allowed, .. }, Some(input)) => self.error(format!(
                "input '{input}' has type {value}, but attr '{}' allows only {allowed}",
                def.name
            )),
            (AttrValueError::TooShort { length, minimum, .. }, Some(input)) => self.error(format!(
                "input '{input}' has {length} tensor(s), but attr '{}' requires at least {minimum}",
                def.name
            )),
            (AttrValueError::BelowMinimum { value, minimum, .. }, Some(input)) => self.error(format!(
                "input '{input}' has {value} tensor(s), but attr '{}' requires at least {minimum}",
                def.name
            )),
            // A string value in `e` is already cut (op_spec's validation).
            _ => self.error(e),
        }
    }
}

/// The dtypes of the tensors of `arg`, given the node's attrs.
fn arg_types<'v>(
    arg: &ArgDef,
    attr: &impl Fn(&str) -> Option<&'v AttrValue>,
) -> Option<Vec<DType>> {
    let count = match &arg.number_attr {
        Some(n) => match attr(n)? {
            AttrValue::Int(n) => usize::try_from(*n).ok()?,
            _ => return None,
        },
        None => 1,
    };
    match &arg.ty {
        ArgType::Fixed(t) => Some(vec![*t; count]),
        ArgType::Attr(a) => match attr(a)? {
            AttrValue::Type(t) => Some(vec![*t; count]),
            _ => None,
        },
        ArgType::ListAttr(a) => match attr(a)? {
            AttrValue::List(ListValue::Type(ts)) => Some(ts.clone()),
            AttrValue::List(l) if l.is_empty() => Some(Vec::new()),
            _ => None,
        },
    }
}

/// Accepts what TensorFlow's wrappers accept: an int for a float attr, and an
/// empty list of any kind for any list attr.
fn coerce(value: &AttrValue, ty: AttrType) -> AttrValue {
    match (value, ty) {
        (
            AttrValue::Int(i),
            AttrType {
                kind: AttrKind::Float,
                is_list: false,
            },
        ) => AttrValue::Float(*i as f32),
        (
            AttrValue::List(ListValue::Int(v)),
            AttrType {
                kind: AttrKind::Float,
                is_list: true,
            },
        ) => AttrValue::List(ListValue::Float(v.iter().map(|&i| i as f32).collect())),
        (
            AttrValue::List(l),
            AttrType {
                kind,
                is_list: true,
            },
        ) if l.is_empty() => AttrValue::List(ListValue::empty(kind)),
        _ => value.clone(),
    }
}

fn describe_inferred(value: &AttrValue) -> String {
    match value {
        AttrValue::Type(t) => format!("type {t}"),
        AttrValue::Int(n) => format!("{n} tensor(s)"),
        other => format!("types {other}"),
    }
}

/// Rust values that an attr value can be read as (see [`OpInstance::get_attr`]).
pub trait FromAttrValue: Sized {
    /// How the type is described in errors (`an int`).
    const DESCRIPTION: &'static str;
    /// The value, if `value` holds one of this type.
    fn from_attr_value(value: &AttrValue) -> Option<Self>;
}

macro_rules! from_attr_value {
    ($($t:ty, $desc:literal, $pat:pat => $out:expr;)*) => {$(
        impl FromAttrValue for $t {
            const DESCRIPTION: &'static str = $desc;
            fn from_attr_value(value: &AttrValue) -> Option<Self> {
                match value {
                    $pat => $out,
                    _ => None,
                }
            }
        }
    )*};
}

from_attr_value! {
    i64, "an int", AttrValue::Int(i) => Some(*i);
    i32, "an int32", AttrValue::Int(i) => i32::try_from(*i).ok();
    usize, "a non-negative int", AttrValue::Int(i) => usize::try_from(*i).ok();
    f32, "a float", AttrValue::Float(f) => Some(*f);
    bool, "a bool", AttrValue::Bool(b) => Some(*b);
    DType, "a type", AttrValue::Type(t) => Some(*t);
    Vec<u8>, "a string", AttrValue::String(s) => Some(s.clone());
    String, "a UTF-8 string", AttrValue::String(s) => String::from_utf8(s.clone()).ok();
    op_spec::ShapeValue, "a shape", AttrValue::Shape(s) => Some(s.clone());
    op_spec::TensorValue, "a tensor", AttrValue::Tensor(t) => Some((**t).clone());
    Vec<i64>, "a list of ints", AttrValue::List(ListValue::Int(v)) => Some(v.clone());
    Vec<f32>, "a list of floats", AttrValue::List(ListValue::Float(v)) => Some(v.clone());
    Vec<bool>, "a list of bools", AttrValue::List(ListValue::Bool(v)) => Some(v.clone());
    Vec<DType>, "a list of types", AttrValue::List(ListValue::Type(v)) => Some(v.clone());
    Vec<Vec<u8>>, "a list of strings", AttrValue::List(ListValue::String(v)) => Some(v.clone());
    Vec<String>, "a list of UTF-8 strings", AttrValue::List(ListValue::String(v)) => v.iter().map(|s| String::from_utf8(s.clone()).ok()).collect();
    Vec<op_spec::ShapeValue>, "a list of shapes", AttrValue::List(ListValue::Shape(v)) => Some(v.clone());
}
