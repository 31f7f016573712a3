//! A numeric check of one op's registered gradient: the gradient function
//! run eagerly on the op's inputs, outputs and a random incoming gradient,
//! against central differences of the op itself.
//!
//! For a random `w` of the output's shape, the loss `L(inputs) = Σ Re(conj(w)
//! · output)` (for real values `Σ w · output`) has the gradient the
//! registered function gives for incoming gradient `w`. Each input element
//! is moved by `±eps` (the real and the imaginary part of a complex one
//! separately) and `(L(+) - L(-)) / 2 eps` compared with the gradient's
//! element (its real, then imaginary part: TensorFlow's convention, under
//! which a holomorphic `f` gives `w · conj(f'(x))`).
//!
//! The differences are always taken in `double` (or `complex128`): the op
//! runs on the inputs converted, with every `float`, `half` and `bfloat16`
//! type attr made `double` too, so a `float` gradient is compared with an
//! accurate reference rather than with `float` differences.
//!
//! The gradient may be made to see partial shapes ([`Shapes`]), as a
//! graph's gradient does, to exercise the paths that compute broadcast
//! reductions when the gradient runs.

#![allow(dead_code)] // not every test crate uses every helper

use std::sync::Arc;

use op_core::gradient::{Gradient, GradientBuilder};
use op_core::shape_inference::PartialShape;
use op_core::{
    AttrValue, Complex128, DType, Error, Executor, OpCall, Registry, Result, Runtime, Tensor,
};

/// What the gradient function is told of the shapes of the values it
/// works with (the values themselves always have their shapes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shapes {
    /// The full shapes, as on a tape.
    Known,
    /// Nothing: unknown ranks.
    UnknownRank,
    /// The ranks, every size unknown.
    UnknownSizes,
    /// The ranks and sizes but the first, unknown.
    FirstUnknown,
}

impl Shapes {
    /// Every variant, for a strategy to choose from.
    pub const ALL: [Shapes; 4] = [
        Shapes::Known,
        Shapes::UnknownRank,
        Shapes::UnknownSizes,
        Shapes::FirstUnknown,
    ];

    fn hide(self, dims: &[usize]) -> PartialShape {
        match self {
            Shapes::Known => PartialShape::known(dims),
            Shapes::UnknownRank => PartialShape::unknown(),
            Shapes::UnknownSizes => PartialShape(Some(vec![None; dims.len()])),
            Shapes::FirstUnknown => {
                let mut shape = PartialShape::known(dims);
                if let Some(first) = shape.0.as_mut().and_then(|d| d.first_mut()) {
                    *first = None;
                }
                shape
            }
        }
    }
}

/// The global runtime as a gradient builder that reports shapes as
/// [`Shapes`] says.
struct Builder(Shapes);

impl Executor for Builder {
    type Value = Tensor;

    fn execute(&self, call: OpCall<'_>) -> Result<Vec<Tensor>> {
        Runtime::global().execute(call)
    }

    fn execute_grouped(&self, call: OpCall<'_>) -> Result<Vec<Vec<Tensor>>> {
        Runtime::global().execute_grouped(call)
    }
}

impl GradientBuilder for Builder {
    fn constant(&self, value: Tensor) -> Result<Tensor> {
        Ok(value)
    }

    fn dtype(&self, value: &Tensor) -> Result<DType> {
        Ok(value.dtype())
    }

    fn shape(&self, value: &Tensor) -> Result<PartialShape> {
        Ok(self.0.hide(value.dims()))
    }
}

/// One call of an op: its inputs (flattened) and explicit attrs.
#[derive(Clone, Debug)]
pub struct Case {
    /// The op's name.
    pub op: &'static str,
    /// The inputs, flattened.
    pub inputs: Vec<Tensor>,
    /// Attrs the inputs do not determine.
    pub attrs: Vec<(&'static str, AttrValue)>,
    /// Whether the inputs are one list arg (`AddN`).
    pub list: bool,
    /// Whether the incoming gradients of complex outputs are real (for an
    /// op whose complex output is real in value).
    pub real_incoming: bool,
}

impl Case {
    /// A call of `op` on `inputs`, one per input arg.
    pub fn new(op: &'static str, inputs: Vec<Tensor>) -> Case {
        Case {
            op,
            inputs,
            attrs: Vec::new(),
            list: false,
            real_incoming: false,
        }
    }

    /// This call with attr `name` set.
    pub fn attr(mut self, name: &'static str, value: impl Into<AttrValue>) -> Case {
        self.attrs.push((name, value.into()));
        self
    }

    /// This call with its inputs as one list arg.
    pub fn list(mut self) -> Case {
        self.list = true;
        self
    }

    /// This call checked with real incoming gradients (zero imaginary
    /// parts).
    pub fn real_incoming(mut self) -> Case {
        self.real_incoming = true;
        self
    }

    fn call(&self, inputs: Vec<Tensor>, attrs: &[(&'static str, AttrValue)]) -> OpCall<'static> {
        let mut call = OpCall::new(self.op);
        if self.list {
            call = call.input_list(inputs);
        } else {
            for input in inputs {
                call = call.input(input);
            }
        }
        for (name, value) in attrs {
            call = call.attr(name, value.clone());
        }
        call
    }

    /// The op's outputs.
    pub fn run(&self) -> Result<Vec<Tensor>> {
        self.call(self.inputs.clone(), &self.attrs).run()
    }

    /// The registered gradient of each input (flattened), for incoming
    /// gradients `grads` (one per output), with shapes seen as `shapes`
    /// says.
    pub fn gradients(
        &self,
        grads: &[Option<Tensor>],
        shapes: Shapes,
    ) -> Result<Vec<Option<Tensor>>> {
        let runtime = Runtime::global();
        let prepared = self
            .call(self.inputs.clone(), &self.attrs)
            .prepared(runtime)?;
        let outputs = prepared.run(self.inputs.clone())?;
        let op_def: Arc<_> = Registry::global().op(self.op)?.def().clone();
        let builder = Builder(shapes);
        let g = Gradient::new(
            &builder,
            &op_def,
            prepared.instance(),
            &self.inputs,
            &outputs,
            grads,
        )?;
        let registration = Registry::global()
            .gradient(self.op)?
            .ok_or_else(|| Error::not_found(format!("no gradient registered for {}", self.op)))?;
        let functions = registration
            .functions
            .ok_or_else(|| Error::invalid_argument(format!("{} is not differentiable", self.op)))?;
        (functions.eager)(&g)
    }

    /// The op run in `double`/`complex128` on `inputs` (already converted),
    /// its loss against `weights` (components, see [`components`]).
    fn loss(&self, inputs: Vec<Tensor>, weights: &[Vec<f64>]) -> f64 {
        let attrs: Vec<_> = self
            .attrs
            .iter()
            .map(|(name, value)| match value {
                AttrValue::Type(dtype) => (*name, AttrValue::Type(wide(*dtype))),
                other => (*name, other.clone()),
            })
            .collect();
        let outputs = self
            .call(inputs, &attrs)
            .run()
            .unwrap_or_else(|e| panic!("{} in double: {e}", self.op));
        outputs
            .iter()
            .zip(weights)
            .map(|(out, w)| {
                let values = components(out);
                values.iter().zip(w).map(|(o, w)| o * w).sum::<f64>()
            })
            .sum()
    }
}

/// The type differences are taken in: `double` for real floats,
/// `complex128` for complex numbers, others unchanged.
pub fn wide(dtype: DType) -> DType {
    match dtype {
        DType::F32 | DType::F16 | DType::BF16 => DType::F64,
        DType::Complex64 => DType::Complex128,
        other => other,
    }
}

/// Whether values of `dtype` are perturbed (and get gradients).
fn differentiable(dtype: DType) -> bool {
    dtype.is_float() || dtype.is_complex()
}

/// `t` cast to `dtype` (by the `Cast` op).
fn cast(t: &Tensor, dtype: DType) -> Tensor {
    OpCall::new("Cast")
        .input(t)
        .attr("DstT", dtype)
        .run()
        .unwrap_or_else(|e| panic!("{e}"))
        .remove(0)
}

/// A tensor's elements as `f64`s: one per real element, two (real,
/// imaginary) per complex one. Panics for other than float and complex
/// types.
pub fn components(t: &Tensor) -> Vec<f64> {
    assert!(differentiable(t.dtype()), "no components for {}", t.dtype());
    if t.dtype().is_complex() {
        let wide = cast(t, DType::Complex128);
        let values = wide.as_slice::<Complex128>().unwrap();
        values.iter().flat_map(|z| [z.re, z.im]).collect()
    } else {
        cast(t, DType::F64).as_slice::<f64>().unwrap().to_vec()
    }
}

/// A tensor of `dtype` (a float or complex type) and shape `dims` from its
/// components (see [`components`]), rounded to the type.
pub fn from_components(dtype: DType, dims: &[usize], values: &[f64]) -> Tensor {
    let wide = if dtype.is_complex() {
        let pairs = values.chunks(2).map(|c| Complex128::new(c[0], c[1]));
        Tensor::from_vec(dims, pairs.collect())
    } else {
        Tensor::from_vec(dims, values.to_vec())
    };
    cast(&wide.unwrap(), dtype)
}

/// `t` converted to [`wide`]'s type (exactly).
fn widen(t: &Tensor) -> Tensor {
    if differentiable(t.dtype()) {
        from_components(wide(t.dtype()), t.dims(), &components(t))
    } else {
        t.clone()
    }
}

/// `count` numbers in `[-1, 1)` from `seed` (a splitmix64 stream).
pub fn pseudo_random(seed: u64, count: usize) -> Vec<f64> {
    let mut state = seed;
    (0..count)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect()
}

/// Checks `case`'s registered gradient against central differences, for a
/// random incoming gradient from `seed`, with the gradient seeing shapes
/// as `shapes` says. Each gradient element must be within `tolerance *
/// (1 + |numeric|)` of the numeric one; inputs of other than float or
/// complex types must get none, the others one of their own dtype and
/// shape. Returns the incoming gradients and the gradients, for further
/// checks.
#[track_caller]
pub fn check(case: &Case, seed: u64, shapes: Shapes, tolerance: f64) -> Vec<Option<Tensor>> {
    let outputs = case.run().unwrap_or_else(|e| panic!("{}: {e}", case.op));
    // The incoming gradients, and their components in the wide type (the
    // weights of the loss).
    let mut weights = Vec::new();
    let grads: Vec<Option<Tensor>> = outputs
        .iter()
        .enumerate()
        .map(|(k, out)| {
            let count = components(out).len();
            let mut values = pseudo_random(seed ^ ((k as u64 + 1) << 32), count);
            if case.real_incoming && out.dtype().is_complex() {
                values
                    .iter_mut()
                    .skip(1)
                    .step_by(2)
                    .for_each(|im| *im = 0.0);
            }
            let w = from_components(out.dtype(), out.dims(), &values);
            weights.push(components(&w));
            Some(w)
        })
        .collect();
    let gradients = case
        .gradients(&grads, shapes)
        .unwrap_or_else(|e| panic!("the gradient of {}: {e}", case.op));
    assert_eq!(
        gradients.len(),
        case.inputs.len(),
        "{}: one gradient per input",
        case.op
    );
    let wide_inputs: Vec<Tensor> = case.inputs.iter().map(widen).collect();
    for (i, (input, gradient)) in case.inputs.iter().zip(&gradients).enumerate() {
        if !differentiable(input.dtype()) {
            assert!(
                gradient.is_none(),
                "{}: input {i} ({}) must get no gradient",
                case.op,
                input.dtype()
            );
            continue;
        }
        let gradient = gradient
            .as_ref()
            .unwrap_or_else(|| panic!("{}: input {i} got no gradient", case.op));
        assert_eq!(
            (gradient.dtype(), gradient.dims()),
            (input.dtype(), input.dims()),
            "{}: the gradient of input {i} has the input's dtype and shape",
            case.op
        );
        let theoretical = components(gradient);
        let point = components(&wide_inputs[i]);
        for (c, &at) in point.iter().enumerate() {
            let eps = 1e-6 * at.abs().max(1.0);
            let moved = |delta: f64| {
                let mut values = point.clone();
                values[c] = at + delta;
                let mut inputs = wide_inputs.clone();
                inputs[i] = from_components(wide(input.dtype()), input.dims(), &values);
                case.loss(inputs, &weights)
            };
            let numeric = (moved(eps) - moved(-eps)) / (2.0 * eps);
            let got = theoretical[c];
            assert!(
                (got - numeric).abs() <= tolerance * (1.0 + numeric.abs()),
                "{} ({shapes:?}): d loss / d input {i} component {c} is {got}, central differences give {numeric}\ninputs: {:?}",
                case.op,
                case.inputs
            );
        }
    }
    gradients
}
