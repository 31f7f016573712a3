//! Checking a registered gradient against central differences, for the
//! gradient tests: run an op eagerly, call its registered eager gradient
//! function on the run (as a tape would), and compare each float input's
//! gradient with the numeric derivative of a weighted sum of the outputs.
//!
//! The loss is `L = Σ_o Σ_i w_o[i] * y_o[i]` over the op's outputs, with
//! fixed pseudo-random weights `w` (so the incoming gradients are `w`);
//! the gradient of input element `x[j]` is compared with `(L(x[j] + eps) -
//! L(x[j] - eps)) / 2 eps`, computed in `f64` from the outputs however the
//! op computes.
//!
//! The same function's symbolic instantiation (on graph [`Output`]s) runs
//! too, on [`Evaluating`]: a builder that gives out outputs of a graph and
//! evaluates each node as it is added, and that knows no shapes (as a
//! graph of unknown shapes), so that a gradient leaning on static shapes
//! fails. Its gradients must be the eager ones, exactly.

use std::cell::RefCell;
use std::sync::Arc;

use op_core::gradient::{Gradient, GradientBuilder, GradientFunctions};
use op_core::shape_inference::PartialShape;
use op_core::symbolic::{GraphId, NodeId, Output};
use op_core::{
    AttrValue, DType, Executor, InputTypes, OpCall, OpDef, PreparedOp, Registry, Result, Runtime,
    Tensor,
};

/// One input arg of the op under test.
#[derive(Clone, Debug)]
pub enum Arg {
    /// A float tensor that receives a gradient: its shape and values, in
    /// `f64` (made `float` or `double` by the check's dtype).
    Float(Vec<usize>, Vec<f64>),
    /// A list of such tensors (`N * T`).
    Floats(Vec<(Vec<usize>, Vec<f64>)>),
    /// A tensor passed as it is, which receives no gradient (an index, a
    /// condition).
    Fixed(Tensor),
}

/// How closely the gradients must agree for a dtype, and the step of the
/// differences.
#[derive(Clone, Copy, Debug)]
pub struct Tolerance {
    /// The step: `x ± eps`.
    pub eps: f64,
    /// The allowed difference: `abs + rel * |theoretical|`.
    pub abs: f64,
    /// See `abs`.
    pub rel: f64,
}

/// The tolerance for `double` (eps 1e-6) and `float` (eps 1e-2, looser).
pub fn tolerance(dtype: DType) -> Tolerance {
    match dtype {
        DType::F64 => Tolerance {
            eps: 1e-6,
            abs: 1e-6,
            rel: 1e-6,
        },
        _ => Tolerance {
            eps: 1e-2,
            abs: 2e-3,
            rel: 2e-3,
        },
    }
}

/// `values` as a tensor of `dtype` (float or double).
pub fn float_tensor(dims: &[usize], values: &[f64], dtype: DType) -> Tensor {
    match dtype {
        DType::F32 => Tensor::from_vec(dims, values.iter().map(|&v| v as f32).collect()).unwrap(),
        DType::F64 => Tensor::from_vec(dims, values.to_vec()).unwrap(),
        other => panic!("no float tensors of {other}"),
    }
}

/// A float or double tensor's values as `f64`.
pub fn values_f64(t: &Tensor) -> Vec<f64> {
    match t.dtype() {
        DType::F32 => t
            .as_slice::<f32>()
            .unwrap()
            .iter()
            .map(|&v| f64::from(v))
            .collect(),
        DType::F64 => t.as_slice::<f64>().unwrap().to_vec(),
        other => panic!("no float values of {other}"),
    }
}

/// The flattened input tensors of `args` for `dtype`, and the input types
/// per arg.
pub fn inputs(args: &[Arg], dtype: DType) -> (Vec<Tensor>, Vec<InputTypes>) {
    let (mut tensors, mut types) = (Vec::new(), Vec::new());
    for arg in args {
        match arg {
            Arg::Float(dims, values) => {
                tensors.push(float_tensor(dims, values, dtype));
                types.push(InputTypes::Single(dtype));
            }
            Arg::Floats(list) => {
                for (dims, values) in list {
                    tensors.push(float_tensor(dims, values, dtype));
                }
                types.push(InputTypes::List(vec![dtype; list.len()]));
            }
            Arg::Fixed(t) => {
                tensors.push(t.clone());
                types.push(InputTypes::Single(t.dtype()));
            }
        }
    }
    (tensors, types)
}

/// Runs `op` eagerly on `inputs` (flattened) and returns its outputs.
pub fn run(
    op: &str,
    inputs: &[Tensor],
    types: &[InputTypes],
    attrs: &[(&str, AttrValue)],
) -> Result<Vec<Tensor>> {
    op_kernels::link();
    let prepared = Runtime::global().prepare(op, types, attrs)?;
    prepared.run(inputs.to_vec())
}

/// `op` prepared on the global runtime for `types` and `attrs`, with its
/// OpDef and its registered gradient function (a panic if it has none: the
/// op is not under test then).
fn prepare_with_gradient(
    op: &str,
    types: &[InputTypes],
    attrs: &[(&str, AttrValue)],
) -> Result<(Arc<PreparedOp>, Arc<OpDef>, GradientFunctions)> {
    op_kernels::link();
    let prepared = Runtime::global().prepare(op, types, attrs)?;
    let op_def: Arc<OpDef> = Registry::global().op(op)?.def().clone();
    let registration = Registry::global()
        .gradient(op)?
        .unwrap_or_else(|| panic!("{op} has no gradient registered"));
    let functions = registration
        .functions
        .unwrap_or_else(|| panic!("{op} is marked not differentiable"));
    Ok((prepared, op_def, functions))
}

/// The registered eager gradient of `op` for a run on `inputs` that
/// produced `outputs`, given `grads` (one per output): what a tape calls.
pub fn gradients(
    op: &str,
    inputs: &[Tensor],
    types: &[InputTypes],
    attrs: &[(&str, AttrValue)],
    outputs: &[Tensor],
    grads: &[Option<Tensor>],
) -> Result<Vec<Option<Tensor>>> {
    let (prepared, op_def, functions) = prepare_with_gradient(op, types, attrs)?;
    let (runtime, node) = (Runtime::global(), prepared.instance());
    let g = Gradient::new(runtime, &op_def, node, inputs, outputs, grads)?;
    let grads = (functions.eager)(&g)?;
    assert_eq!(
        grads.len(),
        inputs.len(),
        "{op}'s gradient returned {} gradients for {} inputs",
        grads.len(),
        inputs.len()
    );
    Ok(grads)
}

/// A symbolic builder for the tests: each op call becomes a node of a
/// graph (its outputs are [`Output`]s) and is evaluated at once on the
/// global runtime, so the values behind the outputs can be read back.
/// Shapes are unknown to it, as in a graph whose placeholders have none.
pub struct Evaluating {
    graph: GraphId,
    /// The outputs of each node, by node index.
    nodes: RefCell<Vec<Vec<Tensor>>>,
}

impl Evaluating {
    /// An empty graph.
    pub fn new() -> Self {
        Evaluating {
            graph: GraphId::unique(),
            nodes: RefCell::new(Vec::new()),
        }
    }

    /// A node whose outputs are `tensors` (a placeholder fed with them).
    pub fn add(&self, tensors: Vec<Tensor>) -> Vec<Output> {
        let mut nodes = self.nodes.borrow_mut();
        let node = NodeId::new(self.graph, nodes.len() as u32);
        let outputs = (0..tensors.len()).map(|i| node.output(i)).collect();
        nodes.push(tensors);
        outputs
    }

    /// The value behind `output`.
    pub fn value(&self, output: Output) -> Tensor {
        assert_eq!(output.graph(), self.graph, "an output of another graph");
        self.nodes.borrow()[output.node().index()][output.index()].clone()
    }

    /// `call` with its outputs' values in place of the outputs.
    fn evaluate(&self, call: &OpCall<'_, Output>) -> Result<Vec<Vec<Tensor>>> {
        let mut eager = OpCall::new(call.op());
        let mut inputs = call.inputs().iter().map(|&o| self.value(o));
        for group in call.input_groups() {
            eager = match group {
                None => eager.input(inputs.next().expect("an input per group")),
                Some(n) => eager.input_list(inputs.by_ref().take(n).collect::<Vec<_>>()),
            };
        }
        for (name, value) in call.attrs() {
            eager = eager.attr(name, value.clone());
        }
        eager.run_grouped()
    }
}

impl Executor for Evaluating {
    type Value = Output;

    fn execute(&self, call: OpCall<'_, Output>) -> Result<Vec<Output>> {
        Ok(self.execute_grouped(call)?.concat())
    }

    fn execute_grouped(&self, call: OpCall<'_, Output>) -> Result<Vec<Vec<Output>>> {
        let groups = self.evaluate(&call)?;
        let sizes: Vec<usize> = groups.iter().map(Vec::len).collect();
        let mut outputs = self.add(groups.concat()).into_iter();
        Ok(sizes
            .iter()
            .map(|&n| outputs.by_ref().take(n).collect())
            .collect())
    }
}

impl GradientBuilder for Evaluating {
    fn constant(&self, value: Tensor) -> Result<Output> {
        Ok(self.add(vec![value])[0])
    }

    fn dtype(&self, value: &Output) -> Result<DType> {
        Ok(self.value(*value).dtype())
    }

    fn shape(&self, _value: &Output) -> Result<PartialShape> {
        Ok(PartialShape::unknown())
    }
}

/// The registered symbolic gradient of `op` for a run on `inputs` that
/// produced `outputs`, given `grads`, built on [`Evaluating`] and read
/// back as tensors.
pub fn symbolic_gradients(
    op: &str,
    inputs: &[Tensor],
    types: &[InputTypes],
    attrs: &[(&str, AttrValue)],
    outputs: &[Tensor],
    grads: &[Option<Tensor>],
) -> Result<Vec<Option<Tensor>>> {
    let (prepared, op_def, functions) = prepare_with_gradient(op, types, attrs)?;
    let graph = Evaluating::new();
    let xs = graph.add(inputs.to_vec());
    let ys = graph.add(outputs.to_vec());
    let dys: Vec<Option<Output>> = grads
        .iter()
        .map(|g| g.as_ref().map(|g| graph.add(vec![g.clone()])[0]))
        .collect();
    let g = Gradient::new(&graph, &op_def, prepared.instance(), &xs, &ys, &dys)?;
    let dxs = (functions.symbolic)(&g)?;
    Ok(dxs
        .into_iter()
        .map(|dx| dx.map(|o| graph.value(o)))
        .collect())
}

/// The weights of output `o` (of `n` elements): fixed, pseudo-random, in
/// [-1, 1] and away from 0.
pub fn weights(o: usize, n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let t = ((i * 7 + o * 13) % 17) as f64 / 17.0;
            if t < 0.5 { t - 1.0 } else { t }
        })
        .collect()
}

/// The loss `Σ_o Σ_i w_o[i] * y_o[i]` of `outputs`.
fn loss(outputs: &[Tensor]) -> f64 {
    outputs
        .iter()
        .enumerate()
        .map(|(o, y)| {
            let values = values_f64(y);
            let w = weights(o, values.len());
            values.iter().zip(&w).map(|(v, w)| v * w).sum::<f64>()
        })
        .sum()
}

/// A mismatch between the theoretical and the numeric gradient.
#[derive(Debug)]
pub struct Mismatch(pub String);

/// Checks `op`'s registered gradient on `args` and `attrs` for `dtype`
/// (float or double) against central differences; `Err` describes the
/// first element that disagrees. Fixed args must get no gradient; an op
/// error is a mismatch too.
pub fn check(
    op: &str,
    args: &[Arg],
    attrs: &[(&str, AttrValue)],
    dtype: DType,
) -> std::result::Result<(), Mismatch> {
    let fail = |m: String| Mismatch(format!("{op} ({dtype}) on {args:?} {attrs:?}: {m}"));
    let (tensors, types) = inputs(args, dtype);
    let outputs = run(op, &tensors, &types, attrs).map_err(|e| fail(format!("{e}")))?;
    let grads: Vec<Option<Tensor>> = outputs
        .iter()
        .enumerate()
        .map(|(o, y)| {
            Some(float_tensor(
                y.dims(),
                &weights(o, y.num_elements()),
                y.dtype(),
            ))
        })
        .collect();
    let theoretical = gradients(op, &tensors, &types, attrs, &outputs, &grads)
        .map_err(|e| fail(format!("the gradient failed: {e}")))?;
    let symbolic = symbolic_gradients(op, &tensors, &types, attrs, &outputs, &grads)
        .map_err(|e| fail(format!("the symbolic gradient failed: {e}")))?;
    for (i, (eager, symbolic)) in theoretical.iter().zip(&symbolic).enumerate() {
        let same = match (eager, symbolic) {
            (Some(a), Some(b)) => {
                a.dims() == b.dims() && a.dtype() == b.dtype() && values_f64(a) == values_f64(b)
            }
            (None, None) => true,
            _ => false,
        };
        if !same {
            return Err(fail(format!(
                "input {i}: the symbolic gradient {symbolic:?} is not the eager one {eager:?}"
            )));
        }
    }
    let tol = tolerance(dtype);
    // Which flattened inputs are float args, and their values.
    let mut flat = 0;
    for arg in args {
        let members: Vec<(Vec<usize>, Vec<f64>)> = match arg {
            Arg::Float(dims, values) => vec![(dims.clone(), values.clone())],
            Arg::Floats(list) => list.clone(),
            Arg::Fixed(_) => {
                if theoretical[flat].is_some() {
                    return Err(fail(format!("input {flat} is fixed, yet has a gradient")));
                }
                flat += 1;
                continue;
            }
        };
        for (dims, values) in members {
            let Some(grad) = &theoretical[flat] else {
                return Err(fail(format!("input {flat} got no gradient")));
            };
            if grad.dims() != dims.as_slice() || grad.dtype() != dtype {
                return Err(fail(format!(
                    "input {flat}'s gradient is {} {:?}, expected {dtype} {dims:?}",
                    grad.dtype(),
                    grad.dims()
                )));
            }
            let grad = values_f64(grad);
            for j in 0..values.len() {
                let at = |delta: f64| {
                    let mut moved = tensors.clone();
                    let mut shifted = values.clone();
                    shifted[j] += delta;
                    moved[flat] = float_tensor(&dims, &shifted, dtype);
                    run(op, &moved, &types, attrs).map(|out| loss(&out))
                };
                let (up, down) = (at(tol.eps), at(-tol.eps));
                let (up, down) = (
                    up.map_err(|e| fail(format!("{e}")))?,
                    down.map_err(|e| fail(format!("{e}")))?,
                );
                let numeric = (up - down) / (2.0 * tol.eps);
                if (numeric - grad[j]).abs() > tol.abs + tol.rel * grad[j].abs() {
                    return Err(fail(format!(
                        "d/d input {flat}[{j}]: theoretical {}, numeric {numeric}",
                        grad[j]
                    )));
                }
            }
            flat += 1;
        }
    }
    Ok(())
}
