//! Symbolic gradients: TensorFlow's `tf.gradients`, which adds the backward
//! pass to a graph as more nodes.
//!
//! [`gradients`] (and [`Gradients`], its form with options) takes ys and
//! xs, outputs of a graph being built, and returns, for each x, the output
//! of a new node holding `d(sum of ys)/dx`. It follows TensorFlow's
//! `gradients_util._GradientsHelper`:
//!
//! - only the nodes *between* the xs and the ys take part: those reached
//!   from an x's node and reaching a y's node, along edges whose dtype
//!   carries gradients ([`is_trainable`]: floats, complex numbers,
//!   resources; an integer edge cuts the path);
//! - they are visited in reverse topological order (the reverse of the
//!   graph's node order), so that a node's gradient function runs once,
//!   after every gradient flowing into its outputs is known;
//! - the gradients flowing into one output from several consumers are
//!   summed with one `AddN` (none when there is one), and a node with
//!   several outputs gets one incoming gradient per output, `None` for an
//!   output nothing differentiable used;
//! - a node whose op is marked not differentiable (`StopGradient` once
//!   marked, `not_differentiable!`), or one of the
//!   [`stop_gradients`](Gradients::stop_gradients), passes nothing on;
//! - an x that no gradient reaches gets `None`, or zeros
//!   ([`Unconnected::Zeros`], `ZerosLike(x)`).
//!
//! The gradient of each y starts as `grad_ys` or, by default, ones of its
//! shape: `OnesLike(y)` (TensorFlow's `Fill(Shape(y), 1)`, in one node).
//! Every new node goes in the name scope `gradients/` (`gradients_1/` for a
//! second call), a node's gradient in `gradients/<node>_grad/`, as in
//! TensorFlow (`gradients/Sin_grad/Cos`).
//!
//! A node on a path whose op has no registered gradient is an error that
//! names the op, the node, a path from an x to a y through it, and the two
//! fixes; an error inside a gradient function, a wrong number of
//! gradients, or a gradient of another dtype or shape than its input, is an
//! error naming the node.
//!
//! ```standalone_crate
//! use op_core::gradient::{Gradient, Value};
//! use op_core::{DType, Result, Tensor};
//! use op_autodiff::symbolic::gradients;
//! use op_graph::{GraphBuilder, Session};
//! use op_kernels::math::Mul;
//! # op_kernels::link();
//!
//! /// `x * x`: an op with a gradient (its kernel is left out here).
//! #[op_core::register_op(attrs("T: {float, double}"), inputs("x: T"), outputs("y: T"))]
//! pub struct DocSquare;
//!
//! #[op_core::kernel(op = DocSquare, types(f32))]
//! fn doc_square(ctx: &mut op_core::KernelContext<'_>) -> Result<()> {
//!     ctx.unary(0, 0, 1, |x: &f32| x * x)
//! }
//!
//! /// d(x²) = 2x dx
//! #[op_core::gradient(op = DocSquare)]
//! fn doc_square_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
//!     let two_x = Mul::call_with(g.constant(Tensor::scalar(2.0f32))?, g.input(0)).run_on(g)?;
//!     Ok([Some(Mul::call_with(g.grad(0)?, two_x).run_on(g)?)])
//! }
//!
//! let b = GraphBuilder::new();
//! let x = b.placeholder("x", DType::F32, [3])?;
//! let y = DocSquare::call_with(x).run_on(&b)?;
//! let dx = gradients(&b, &[y], &[x])?[0].expect("y depends on x");
//! assert_eq!(b.graph().tensor_name(dx).to_string(), "gradients/DocSquare_grad/Mul_1");
//!
//! let session = Session::new(b.into_graph())?;
//! let x_value = Tensor::from_vec([3], vec![1.0f32, -2.0, 0.5])?;
//! let out = session.runner().feed(x, x_value).fetch(dx).run()?;
//! assert_eq!(out[0].as_slice::<f32>()?, [2.0, -4.0, 1.0]);
//! # Ok::<(), op_core::Error>(())
//! ```

use std::collections::VecDeque;
use std::fmt::Write as _;

use op_core::error::quoted;
use op_core::gradient::{Gradient, is_trainable};
use op_core::shape_inference::PartialShape;
use op_core::{DType, Error, OpCall, Result, ResultExt};
use op_graph::{Graph, GraphBuilder, Node, Output};
use rustc_hash::{FxHashMap, FxHashSet};

/// What an x that no gradient reaches gets (TensorFlow's
/// `UnconnectedGradients`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Unconnected {
    /// `None` (TensorFlow's `NONE`, the default).
    #[default]
    None,
    /// Zeros of the x's shape and dtype (TensorFlow's `ZERO`):
    /// `ZerosLike(x)`, or for a variable's handle zeros of the variable's
    /// value.
    Zeros,
}

/// The gradients of the sum of `ys` with respect to each of `xs`, added to
/// the graph that `builder` builds: TensorFlow's `tf.gradients(ys, xs)`
/// (see the [module docs](self)). `None` for an x that no y depends on
/// through differentiable ops.
///
/// [`Gradients`] takes the options: `grad_ys`, zeros for unconnected xs,
/// stop gradients, the name scope.
pub fn gradients(
    builder: &GraphBuilder,
    ys: &[Output],
    xs: &[Output],
) -> Result<Vec<Option<Output>>> {
    Gradients::new(ys, xs).build(builder)
}

/// A request for symbolic gradients with options, as
/// `tf.gradients(ys, xs, grad_ys, name, stop_gradients,
/// unconnected_gradients)` takes them.
///
/// ```standalone_crate
/// use op_core::{DType, Tensor};
/// use op_autodiff::symbolic::{Gradients, Unconnected};
/// use op_graph::GraphBuilder;
/// # op_kernels::link();
///
/// let b = GraphBuilder::new();
/// let x = b.placeholder("x", DType::F32, [2])?;
/// let unused = b.placeholder("unused", DType::F32, [2])?;
/// let grads = Gradients::new(&[x], &[x, unused])
///     .grad_ys([Some(b.constant(Tensor::from_vec([2], vec![3.0f32, 4.0])?)?)])
///     .unconnected(Unconnected::Zeros)
///     .build(&b)?;
/// // d(x)/dx is grad_ys itself; `unused` gets ZerosLike(unused).
/// assert_eq!(b.graph().tensor_name(grads[0].unwrap()).to_string(), "Const");
/// assert_eq!(b.graph().tensor_name(grads[1].unwrap()).to_string(), "gradients/ZerosLike");
/// # Ok::<(), op_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Gradients {
    ys: Vec<Output>,
    xs: Vec<Output>,
    grad_ys: Option<Vec<Option<Output>>>,
    unconnected: Unconnected,
    stop: Vec<Output>,
    name: String,
}

impl Gradients {
    /// The gradients of the sum of `ys` with respect to each of `xs`.
    pub fn new(ys: &[Output], xs: &[Output]) -> Gradients {
        Gradients {
            ys: ys.to_vec(),
            xs: xs.to_vec(),
            grad_ys: None,
            unconnected: Unconnected::None,
            stop: Vec::new(),
            name: "gradients".to_owned(),
        }
    }

    /// The gradients the ys start with, one per y (`None`: ones of the y's
    /// shape), of the y's dtype and shape: computes the vector-Jacobian
    /// product `sum(grad_y * dy/dx)`.
    pub fn grad_ys(mut self, grad_ys: impl IntoIterator<Item = Option<Output>>) -> Gradients {
        self.grad_ys = Some(grad_ys.into_iter().collect());
        self
    }

    /// What an x that no gradient reaches gets (default
    /// [`Unconnected::None`]).
    pub fn unconnected(mut self, unconnected: Unconnected) -> Gradients {
        self.unconnected = unconnected;
        self
    }

    /// Outputs held constant: no gradient flows back through their nodes,
    /// as if each were a `StopGradient` (TensorFlow's `stop_gradients`).
    pub fn stop_gradients(mut self, stop: &[Output]) -> Gradients {
        self.stop.extend_from_slice(stop);
        self
    }

    /// The name scope of the new nodes (default `gradients`, made unique).
    pub fn name(mut self, name: &str) -> Gradients {
        name.clone_into(&mut self.name);
        self
    }

    /// Adds the gradient nodes to `builder`'s graph; returns one gradient
    /// per x, in order (the same output for an x given twice).
    ///
    /// Errors (`InvalidArgument` unless said): a y, x, grad_y or stop
    /// output not of this graph; as many grad_ys as ys; a grad_y of
    /// another dtype or shape than its y; a y whose default gradient is
    /// not defined (complex: give grad_ys; not a number); `NotFound` for
    /// an op on a path without a gradient; a gradient function's own
    /// error, or a result of the wrong count, dtype or shape, naming the
    /// node; `Unimplemented` for zeros of a resource x that is not a
    /// `VarHandleOp`'s.
    pub fn build(&self, builder: &GraphBuilder) -> Result<Vec<Option<Output>>> {
        let plan = self.plan(&builder.graph())?;
        let _scope = builder.name_scope(&self.name);
        let mut state = Backward {
            builder,
            grads: FxHashMap::default(),
        };
        self.seed(&plan, &mut state)?;
        for &index in plan.order.iter().rev() {
            state.node_gradient(&plan, index)?;
        }
        let mut done: FxHashMap<Output, Option<Output>> = FxHashMap::default();
        let mut result = Vec::with_capacity(self.xs.len());
        for (&x, &dtype) in self.xs.iter().zip(&plan.x_dtypes) {
            if let Some(grad) = done.get(&x) {
                result.push(*grad);
                continue;
            }
            let mut grad = if is_trainable(dtype) {
                state.aggregate(x)?
            } else {
                None
            };
            if grad.is_none() && self.unconnected == Unconnected::Zeros {
                grad = Some(zeros_like(builder, x, dtype)?);
            }
            done.insert(x, grad);
            result.push(grad);
        }
        Ok(result)
    }

    /// Checks the request against `graph` and finds the nodes between the
    /// xs and the ys.
    fn plan(&self, graph: &Graph) -> Result<Plan> {
        let check = |what: &str, outputs: &[Output]| -> Result<Vec<DType>> {
            outputs
                .iter()
                .enumerate()
                .map(|(i, o)| {
                    graph
                        .output_dtype(*o)
                        .with_context(|| format!("in {what}[{i}] of gradients"))
                })
                .collect()
        };
        let y_dtypes = check("ys", &self.ys)?;
        let x_dtypes = check("xs", &self.xs)?;
        check("stop_gradients", &self.stop)?;
        if let Some(grad_ys) = &self.grad_ys {
            if grad_ys.len() != self.ys.len() {
                return Err(Error::invalid_argument(format!(
                    "gradients: {} grad_ys given for {} ys; give one per y (None for ones)",
                    grad_ys.len(),
                    self.ys.len()
                )));
            }
            for (i, (grad_y, &y)) in grad_ys.iter().zip(&self.ys).enumerate() {
                if let Some(grad_y) = grad_y {
                    check_grad_y(graph, i, y, *grad_y)?;
                }
            }
        }

        let nodes = graph.nodes();
        // The data edges that carry gradients, both ways: consumers[n]
        // are the nodes reading an output of node n.
        let mut consumers: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
        for node in nodes {
            for input in node.inputs() {
                if carries_gradients(graph, *input) {
                    consumers[input.node().index()].push(node.id().index());
                }
            }
        }
        // Reached from an x's node (TensorFlow's `_MarkReachedOps`).
        let mut reached = vec![false; nodes.len()];
        let mut queue: VecDeque<usize> = self.xs.iter().map(|x| x.node().index()).collect();
        while let Some(n) = queue.pop_front() {
            if !std::mem::replace(&mut reached[n], true) {
                queue.extend(&consumers[n]);
            }
        }
        // Of those, the ones reaching a y's node.
        let mut between = vec![false; nodes.len()];
        let mut queue: VecDeque<usize> = self.ys.iter().map(|y| y.node().index()).collect();
        while let Some(n) = queue.pop_front() {
            if reached[n] && !std::mem::replace(&mut between[n], true) {
                queue.extend(
                    nodes[n]
                        .inputs()
                        .iter()
                        .filter(|i| carries_gradients(graph, **i))
                        .map(|i| i.node().index()),
                );
            }
        }
        let order = (0..nodes.len()).filter(|&n| between[n]).collect();
        Ok(Plan {
            y_dtypes,
            x_dtypes,
            x_nodes: self.xs.iter().map(|x| x.node().index()).collect(),
            y_nodes: self.ys.iter().map(|y| y.node().index()).collect(),
            stop_nodes: self.stop.iter().map(|s| s.node().index()).collect(),
            consumers,
            reached,
            between,
            order,
        })
    }

    /// The gradient each y starts with: its grad_y, or `OnesLike(y)`
    /// (named `grad_ys_<i>`). ys that carry no gradients, or that no x
    /// reaches, start nothing.
    fn seed(&self, plan: &Plan, state: &mut Backward<'_>) -> Result<()> {
        for (i, (&y, &dtype)) in self.ys.iter().zip(&plan.y_dtypes).enumerate() {
            let given = self.grad_ys.as_ref().and_then(|g| g[i]);
            if !is_trainable(dtype) || !plan.between[y.node().index()] {
                continue;
            }
            let grad_y = match given {
                Some(grad_y) => grad_y,
                None => {
                    if dtype.is_complex() {
                        return Err(Error::invalid_argument(format!(
                            "gradients: ys[{i}] ({}) is complex: give its grad_ys, since the gradient of a complex value has no default",
                            describe(&state.builder.graph(), y)
                        )));
                    }
                    if dtype == DType::Resource {
                        return Err(Error::invalid_argument(format!(
                            "gradients: ys[{i}] ({}) is a resource: give its grad_ys, a gradient of the resource's value",
                            describe(&state.builder.graph(), y)
                        )));
                    }
                    let name = format!("grad_ys_{i}");
                    single(
                        OpCall::with_values("OnesLike")
                            .input(y)
                            .node_name(&name)
                            .run_on(state.builder),
                    )?
                }
            };
            state.grads.entry(y).or_default().push(grad_y);
        }
        Ok(())
    }
}

/// What [`Gradients::plan`] finds: the dtypes of the request and the nodes
/// between the xs and the ys (indices in the graph's node order).
struct Plan {
    y_dtypes: Vec<DType>,
    x_dtypes: Vec<DType>,
    x_nodes: FxHashSet<usize>,
    y_nodes: FxHashSet<usize>,
    stop_nodes: FxHashSet<usize>,
    /// The readers of each node's outputs, along edges carrying gradients.
    consumers: Vec<Vec<usize>>,
    /// Reached from an x's node.
    reached: Vec<bool>,
    /// Reached from an x's node and reaching a y's node.
    between: Vec<bool>,
    /// The nodes between, in topological order.
    order: Vec<usize>,
}

/// The backward pass under way: the gradients flowing into each output so
/// far.
struct Backward<'b> {
    builder: &'b GraphBuilder,
    /// Every gradient flowing into an output, summed on first use.
    grads: FxHashMap<Output, Vec<Output>>,
}

impl Backward<'_> {
    /// The sum of the gradients flowing into `output` (one `AddN` when
    /// there are several, kept for later uses); `None` when none does.
    fn aggregate(&mut self, output: Output) -> Result<Option<Output>> {
        let Some(parts) = self.grads.get_mut(&output) else {
            return Ok(None);
        };
        if parts.len() > 1 {
            let sum = single(
                OpCall::with_values("AddN")
                    .input_list(parts.iter().copied())
                    .run_on(self.builder),
            )
            .with_context(|| {
                format!(
                    "while summing the gradients flowing into {}",
                    describe(&self.builder.graph(), output)
                )
            })?;
            *parts = vec![sum];
        }
        Ok(parts.first().copied())
    }

    /// Runs the gradient function of node `index` (if gradients flow into
    /// it and back out) and files the gradients of its inputs.
    fn node_gradient(&mut self, plan: &Plan, index: usize) -> Result<()> {
        let node: Node = self.builder.graph().nodes()[index].clone();
        let mut out_grads = Vec::with_capacity(node.outputs().len());
        for k in 0..node.outputs().len() {
            out_grads.push(self.aggregate(node.output(k))?);
        }
        // Nothing flows in; or nothing could flow out: an x's own node
        // (a placeholder, say) whose inputs come from no x.
        let feeds_back = node
            .inputs()
            .iter()
            .zip(node.instance().input_types())
            .any(|(i, dtype)| is_trainable(*dtype) && plan.between[i.node().index()]);
        if out_grads.iter().all(Option::is_none) || !feeds_back || plan.stop_nodes.contains(&index)
        {
            return Ok(());
        }
        let registry = self.builder.graph().registry().clone();
        let registration = registry
            .gradient(node.op())
            .with_context(|| format!("in the gradient of {}", node.instance()))?;
        let functions = match registration {
            None => return Err(missing_gradient(&self.builder.graph(), plan, &node)),
            Some(registration) => match registration.functions {
                None => return Ok(()),
                Some(functions) => functions,
            },
        };
        let inputs = node.inputs().to_vec();
        let outputs: Vec<Output> = (0..node.outputs().len()).map(|k| node.output(k)).collect();
        let in_grads = {
            let _scope = self.builder.name_scope(&format!("{}_grad", node.name()));
            let context = Gradient::new(
                self.builder,
                node.op_def(),
                node.instance(),
                &inputs,
                &outputs,
                &out_grads,
            )?;
            (functions.symbolic)(&context)
                .with_context(|| format!("in the gradient of {}", node.instance()))?
        };
        if in_grads.len() != inputs.len() {
            return Err(Error::invalid_argument(format!(
                "the gradient function of op {} returned {} gradient(s) for {}, which has {} input(s): return one per input (None where there is none)",
                node.op(),
                in_grads.len(),
                node.instance(),
                inputs.len()
            )));
        }
        for (i, (grad, input)) in in_grads.into_iter().zip(inputs).enumerate() {
            let Some(grad) = grad else { continue };
            let dtype = node.instance().input_types()[i];
            check_input_grad(&self.builder.graph(), &node, i, dtype, grad)?;
            if is_trainable(dtype) && plan.between[input.node().index()] {
                self.grads.entry(input).or_default().push(grad);
            }
        }
        Ok(())
    }
}

/// Whether the edge from `output` carries gradients (by its dtype).
fn carries_gradients(graph: &Graph, output: Output) -> bool {
    graph.output_dtype(output).is_ok_and(is_trainable)
}

/// The only output of a call.
fn single(outputs: Result<Vec<Output>>) -> Result<Output> {
    outputs?
        .into_iter()
        .next()
        .ok_or_else(|| Error::internal("an op of gradients returned no output"))
}

/// `'name:k' (float [2,?])`, for messages.
fn describe(graph: &Graph, output: Output) -> String {
    let name = quoted(&graph.tensor_name(output).to_string()).to_string();
    match (graph.output_dtype(output), graph.output_shape(output)) {
        (Ok(dtype), Ok(shape)) => format!("{name}, {dtype} {shape}"),
        _ => name,
    }
}

/// Whether two partial shapes may describe one tensor.
fn compatible(a: &PartialShape, b: &PartialShape) -> bool {
    match (&a.0, &b.0) {
        (Some(a), Some(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|(a, b)| a.is_none() || b.is_none() || a == b)
        }
        _ => true,
    }
}

/// A grad_y must have its y's dtype and a compatible shape (a resource y's
/// grad_y is its value's gradient: any dtype but resource).
fn check_grad_y(graph: &Graph, i: usize, y: Output, grad_y: Output) -> Result<()> {
    let dtype = graph
        .output_dtype(grad_y)
        .with_context(|| format!("in grad_ys[{i}] of gradients"))?;
    let y_dtype = graph.output_dtype(y)?;
    let fits = if y_dtype == DType::Resource {
        dtype != DType::Resource
    } else {
        dtype == y_dtype && compatible(graph.output_shape(grad_y)?, graph.output_shape(y)?)
    };
    if !fits {
        return Err(Error::invalid_argument(format!(
            "gradients: grad_ys[{i}] ({}) does not fit ys[{i}] ({}): it needs the y's dtype and shape",
            describe(graph, grad_y),
            describe(graph, y)
        )));
    }
    Ok(())
}

/// The gradient of input `i` of `node` must have the input's dtype and a
/// compatible shape (a resource input's is its value's gradient: any
/// dtype but resource, any shape).
fn check_input_grad(
    graph: &Graph,
    node: &Node,
    i: usize,
    dtype: DType,
    grad: Output,
) -> Result<()> {
    let grad_dtype = graph
        .output_dtype(grad)
        .with_context(|| format!("in the gradient of {}", node.instance()))?;
    let fits = if dtype == DType::Resource {
        grad_dtype != DType::Resource
    } else {
        grad_dtype == dtype
            && compatible(
                graph.output_shape(grad)?,
                graph.output_shape(node.inputs()[i])?,
            )
    };
    if !fits {
        return Err(Error::invalid_argument(format!(
            "the gradient function of op {} returned, for input {i} of {} ({}), a gradient that does not fit it: {}",
            node.op(),
            node.instance(),
            describe(graph, node.inputs()[i]),
            describe(graph, grad)
        )));
    }
    Ok(())
}

/// Zeros for an x that no gradient reaches: `ZerosLike(x)`, or for a
/// `VarHandleOp`'s handle `ZerosLike(ReadVariableOp(x))`.
fn zeros_like(builder: &GraphBuilder, x: Output, dtype: DType) -> Result<Output> {
    let value = if dtype == DType::Resource {
        let var_dtype = {
            let graph = builder.graph();
            let node = &graph.nodes()[x.node().index()];
            match (node.op(), node.attr("dtype")) {
                ("VarHandleOp", Some(op_core::AttrValue::Type(dtype))) => *dtype,
                _ => {
                    return Err(Error::unimplemented(format!(
                        "gradients: zeros for the unconnected x {} (made by op {}) are not defined: only a VarHandleOp's handle tells its value's dtype; ask for Unconnected::None",
                        describe(&graph, x),
                        node.op()
                    )));
                }
            }
        };
        single(
            OpCall::with_values("ReadVariableOp")
                .input(x)
                .attr("dtype", var_dtype)
                .run_on(builder),
        )?
    } else {
        x
    };
    single(
        OpCall::with_values("ZerosLike")
            .input(value)
            .run_on(builder),
    )
}

/// The error for `node` on a path from an x to a y whose op has no
/// gradient: the op, the node, such a path, and the two fixes.
fn missing_gradient(graph: &Graph, plan: &Plan, node: &Node) -> Error {
    let op = node.op();
    let path = path_through(graph, plan, node.id().index())
        .iter()
        .map(|&n| graph.nodes()[n].name())
        .collect::<Vec<_>>()
        .join(" -> ");
    let is_ident = op.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let op_arg = if is_ident {
        op.to_owned()
    } else {
        format!("{op:?}")
    };
    let mut message = format!(
        "no gradient is registered for op {op}, but node {} lies on a path from an x to a y: {path}.",
        quoted(node.name())
    );
    let _ = write!(
        message,
        " Register one with `#[gradient(op = {op_arg})]` on a gradient function, or, if no gradient should flow through it, mark the op `not_differentiable` (on its `#[register_op]`, or `op_core::not_differentiable!({op:?})`)"
    );
    Error::not_found(message)
}

/// The nodes of a path from an x's node through node `through` to a y's
/// node, along edges carrying gradients.
fn path_through(graph: &Graph, plan: &Plan, through: usize) -> Vec<usize> {
    // Back to an x's node, over reached nodes (each has a way back).
    let mut parent: FxHashMap<usize, usize> = FxHashMap::default();
    let mut queue = VecDeque::from([through]);
    let mut start = through;
    while let Some(n) = queue.pop_front() {
        if plan.x_nodes.contains(&n) {
            start = n;
            break;
        }
        for input in graph.nodes()[n].inputs() {
            let m = input.node().index();
            if plan.reached[m]
                && carries_gradients(graph, *input)
                && m != through
                && !parent.contains_key(&m)
            {
                parent.insert(m, n);
                queue.push_back(m);
            }
        }
    }
    let mut path = vec![start];
    while let Some(&next) = parent.get(path.last().expect("not empty")) {
        path.push(next);
    }
    // On to a y's node, over nodes between (each reaches a y).
    let mut child: FxHashMap<usize, usize> = FxHashMap::default();
    let mut queue = VecDeque::from([through]);
    let mut end = through;
    while let Some(n) = queue.pop_front() {
        if plan.y_nodes.contains(&n) {
            end = n;
            break;
        }
        for &m in &plan.consumers[n] {
            if plan.between[m] && m != through && !child.contains_key(&m) {
                child.insert(m, n);
                queue.push_back(m);
            }
        }
    }
    let mut tail = vec![end];
    while let Some(&previous) = child.get(tail.last().expect("not empty")) {
        tail.push(previous);
    }
    // `tail` runs from the y back to `through`, which `path` ends with.
    path.extend(tail.into_iter().rev().skip(1));
    path
}
