//! Optimizers: [`Sgd`], [`Momentum`] and [`Adam`], which apply gradients
//! to variables through TensorFlow's training ops
//! (`op_kernels::training`), eagerly and in graphs, with one code path.
//!
//! An optimizer is generic over the values it works with: `Sgd<Tensor>`
//! applies gradients now (on the eager runtime), `Sgd<Output>` adds the
//! update to a graph (on an [`op_graph::GraphBuilder`]). Both run the same
//! code against an [`OptimizerBuilder`]: the builder gradient functions
//! use (an executor that makes constants and knows its values' dtypes and
//! shapes), plus how a variable is made and initialized and how ops are
//! ordered.
//!
//! ```
//! use op_autodiff::optimizers::{Adam, Optimizer};
//! use op_core::{Runtime, Tensor};
//! use op_kernels::variable::Variable;
//! # op_kernels::link();
//!
//! let w = Variable::new(Tensor::from_vec([2], vec![1.0f32, -1.0])?)?;
//! let mut adam = Adam::new(); // Keras' defaults: learning rate 0.001
//! let grad = Tensor::from_vec([2], vec![0.5f32, -0.5])?;
//! adam.apply_gradients(Runtime::global(), &[(grad, w.handle().clone())])?;
//! // Adam's first step moves each element by about the learning rate.
//! let w = w.read()?;
//! assert!((w.as_slice::<f32>()?[0] - 0.999).abs() < 1e-6);
//! assert!((w.as_slice::<f32>()?[1] + 0.999).abs() < 1e-6);
//! # Ok::<(), op_core::Error>(())
//! ```
//!
//! # State: slots and the step count
//!
//! Like Keras' optimizers, each counts its steps in an int64 variable,
//! [`iterations`](Optimizer::iterations), and keeps per-variable state in
//! *slot* variables of the variable's dtype and shape, zero at first:
//! `momentum` for [`Momentum`] (and [`Sgd`] with momentum), `m` and `v`
//! for [`Adam`]. They are made the first time a variable's gradient is
//! applied:
//!
//! - **eagerly**, as anonymous variables (owned by the optimizer, freed
//!   with it), assigned zeros at once;
//! - **in a graph**, as `VarHandleOp` nodes with a unique `shared_name`
//!   (their node's name, `Adam/w/m`, so that a saved model saves and
//!   restores them) and an `AssignVariableOp` initializer each, which
//!   must run once before the first step, as TensorFlow 1's
//!   `variables_initializer(opt.variables())`:
//!   [`initializers`](Optimizer::initializers) lists them. A slot has the
//!   shape of its variable: eagerly its value's, in a graph the `shape`
//!   of its `VarHandleOp`. A slot of a variable whose shape the graph
//!   does not know (not fully given there) is initialized from the
//!   variable's value (`ZerosLike(ReadVariableOp(var))`): run the
//!   variables' own initializers first.
//!
//! [`variables`](Optimizer::variables) lists every variable an optimizer
//! made (the step count first).
//!
//! # One step
//!
//! [`apply_gradients`](Optimizer::apply_gradients) takes `(gradient,
//! variable handle)` pairs. For each variable it runs the training op
//! with the hyperparameters in the variable's dtype (`float`, `double`,
//! `half` or `bfloat16`), then adds 1 to the step count once every update
//! is done. Adam's `beta1_power` and `beta2_power` are `beta^t` with `t`
//! the step count plus one, computed as Keras does (`Pow` of the
//! hyperparameter and the cast step), so a restored step count resumes
//! the schedule. In a graph the call returns the step's node, a `NoOp`
//! named `<Optimizer>/step` after every update: run it as a target once
//! per step. Hyperparameters are read when the step is built: changing a
//! field later changes the next eager step, but not a graph already built.
//!
//! An optimizer used in a graph belongs to that graph (its variables are
//! nodes of it).

use std::collections::HashMap;

use op_core::error::quoted;
use op_core::gradient::GradientBuilder;
use op_core::shape_inference::PartialShape;
use op_core::symbolic::{NodeId, Output};
use op_core::{
    AttrValue, Code, DType, Error, Executor, Op, OpCall, ResourceHandle, Result, Runtime,
    ShapeValue, Tensor, bf16, f16,
};
use op_graph::{GraphBuilder, NewNode};
use op_kernels::training::{
    ResourceApplyAdam, ResourceApplyGradientDescent, ResourceApplyMomentum,
};
use op_kernels::variable::{AssignVariableOp, ReadVariableOp, Var, VarHandleOp};

// ---- The seam: what differs between the eager and the graph mode ----

/// Which variable a handle reaches, to find its slots again: the
/// resource's device, container and name for an eager handle, the
/// handle's graph output in a graph. `name` is for naming slots and for
/// messages.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct VariableId {
    key: Key,
    name: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    Resource {
        device: String,
        container: String,
        name: String,
    },
    Output(Output),
}

impl VariableId {
    /// The variable an eager handle reaches.
    pub fn of_resource(handle: &ResourceHandle) -> VariableId {
        VariableId {
            key: Key::Resource {
                device: handle.device.to_string(),
                container: handle.container.clone(),
                name: handle.name.clone(),
            },
            name: handle.name.clone(),
        }
    }

    /// The variable whose handle is graph output `handle`, of a node named
    /// `name`.
    pub fn of_output(handle: Output, name: impl Into<String>) -> VariableId {
        VariableId {
            key: Key::Output(handle),
            name: name.into(),
        }
    }

    /// The variable's name: the resource's, or the handle node's.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// A variable an [`OptimizerBuilder`] made: its handle, and in a graph the
/// node that initializes it (eagerly it is initialized already).
#[derive(Clone, Debug)]
pub struct NewVariable<V> {
    /// The variable's handle.
    pub handle: V,
    /// The `AssignVariableOp` node to run once before the variable is
    /// used; `None` eagerly.
    pub initializer: Option<NodeId>,
}

/// What an optimizer builds its updates with: a
/// [`GradientBuilder`] (an executor that also makes constants and knows
/// its values' dtypes and shapes: the eager [`Runtime`], or a
/// [`GraphBuilder`]) and what else differs between the two modes:
/// variables and the order of ops without outputs.
pub trait OptimizerBuilder: GradientBuilder {
    /// What names an op without outputs: `()` eagerly (it has run), its
    /// node in a graph (to run as a target, or to order other ops after).
    type Op: Clone;

    /// The variable that `handle` reaches; `InvalidArgument` if it is not a
    /// variable's handle.
    fn variable_id(&self, handle: &Self::Value) -> Result<VariableId>;

    /// The shape of the variable that `handle` reaches, as far as known:
    /// eagerly its value's (`FailedPrecondition` if it has none); in a
    /// graph the `shape` attr of the `VarHandleOp` that made the handle
    /// (unknown for a handle from another op).
    fn variable_shape(&self, handle: &Self::Value) -> Result<PartialShape>;

    /// A new variable of `dtype` and `shape`, named after `name` (in a
    /// graph: a unique node name under the current scope, also its
    /// `shared_name`), whose value starts as `initial`: assigned now
    /// eagerly, by the returned initializer node in a graph.
    fn new_variable(
        &self,
        name: &str,
        dtype: DType,
        shape: &PartialShape,
        initial: Self::Value,
    ) -> Result<NewVariable<Self::Value>>;

    /// Runs (or adds) `call`, an op without outputs.
    fn run_op(&self, call: OpCall<'_, Self::Value>) -> Result<Self::Op>;

    /// Calls `build`, whose ops must run after `ops` (eagerly they already
    /// have; in a graph they get control inputs on them).
    fn after<R>(&self, ops: &[Self::Op], build: impl FnOnce() -> Result<R>) -> Result<R>;

    /// Calls `build` in name scope `name` (in a graph; eagerly there are
    /// no names).
    fn in_scope<R>(&self, name: &str, build: impl FnOnce() -> Result<R>) -> Result<R>;
}

/// `shape` as a `shape` attr's value (`-1` for an unknown dimension).
fn shape_value(shape: &PartialShape) -> ShapeValue {
    match &shape.0 {
        None => ShapeValue::unknown_rank(),
        Some(dims) => {
            let sizes: Vec<i64> = dims
                .iter()
                .map(|d| d.map_or(-1, |n| i64::try_from(n).unwrap_or(-1)))
                .collect();
            ShapeValue::from_sizes(&sizes)
        }
    }
}

/// The eager mode: ops run at once; variables are anonymous (freed with
/// their last handle).
impl OptimizerBuilder for Runtime {
    type Op = ();

    fn variable_id(&self, handle: &Tensor) -> Result<VariableId> {
        if handle.dtype() != DType::Resource || handle.rank() != 0 {
            return Err(Error::invalid_argument(format!(
                "expected a variable's handle (a scalar resource tensor), found a {} tensor of shape {}",
                handle.dtype(),
                handle.shape()
            )));
        }
        Ok(VariableId::of_resource(
            &handle.scalar_value::<ResourceHandle>()?,
        ))
    }

    fn variable_shape(&self, handle: &Tensor) -> Result<PartialShape> {
        let resource = handle.scalar_value::<ResourceHandle>()?;
        let uninitialized = || {
            Error::failed_precondition(format!(
                "variable {} is uninitialized: assign it a value before applying gradients to it",
                quoted(&resource.name)
            ))
        };
        // A named variable exists from its first assign.
        let var = match self.resource_manager().resource::<Var>(&resource) {
            Err(e) if e.code() == Code::NotFound => return Err(uninitialized()),
            other => other?,
        };
        let value = var.value().ok_or_else(uninitialized)?;
        Ok(PartialShape::known(value.dims()))
    }

    fn new_variable(
        &self,
        _name: &str,
        dtype: DType,
        shape: &PartialShape,
        initial: Tensor,
    ) -> Result<NewVariable<Tensor>> {
        let [handle] = self.execute_array(
            OpCall::new(VarHandleOp::NAME)
                .attr("dtype", dtype)
                .attr("shape", shape_value(shape)),
        )?;
        self.run_op(
            OpCall::new(AssignVariableOp::NAME)
                .input(&handle)
                .input(initial),
        )?;
        Ok(NewVariable {
            handle,
            initializer: None,
        })
    }

    fn run_op(&self, call: OpCall<'_, Tensor>) -> Result<()> {
        self.execute(call).map(drop)
    }

    fn after<R>(&self, _ops: &[()], build: impl FnOnce() -> Result<R>) -> Result<R> {
        build()
    }

    fn in_scope<R>(&self, _name: &str, build: impl FnOnce() -> Result<R>) -> Result<R> {
        build()
    }
}

/// The graph mode: ops become nodes; variables are named
/// (`shared_name` = node name) with an initializer node each.
impl OptimizerBuilder for GraphBuilder {
    type Op = NodeId;

    fn variable_id(&self, handle: &Output) -> Result<VariableId> {
        let graph = self.graph();
        let dtype = graph.output_dtype(*handle)?;
        let name = graph.tensor_name(*handle).to_string();
        if dtype != DType::Resource {
            return Err(Error::invalid_argument(format!(
                "expected a variable's handle (a resource output), found {}, a {dtype} output",
                quoted(&name)
            )));
        }
        Ok(VariableId::of_output(*handle, name))
    }

    fn variable_shape(&self, handle: &Output) -> Result<PartialShape> {
        let graph = self.graph();
        let node = graph.node(handle.node())?;
        if node.op() != VarHandleOp::NAME {
            return Ok(PartialShape::unknown());
        }
        match node.attr("shape") {
            Some(AttrValue::Shape(shape)) if !shape.unknown_rank => Ok(PartialShape(Some(
                shape
                    .dims
                    .iter()
                    .map(|d| usize::try_from(d.size).ok())
                    .collect(),
            ))),
            _ => Ok(PartialShape::unknown()),
        }
    }

    fn new_variable(
        &self,
        name: &str,
        dtype: DType,
        shape: &PartialShape,
        initial: Output,
    ) -> Result<NewVariable<Output>> {
        // The exact names: the node's is also the variable's shared name,
        // and the builder's scopes (a control scope above all) must not
        // apply to a variable or its initializer.
        let name = self.unique_name(name);
        let handle = self.graph_mut().add(
            NewNode::new(VarHandleOp::NAME)
                .name(name.clone())
                .attr("shared_name", name.as_str())
                .attr("dtype", dtype)
                .attr("shape", shape_value(shape)),
        )?;
        let handle = handle.output(0);
        let assign = self.graph_mut().unique_name(&format!("{name}/Assign"));
        let initializer = self.graph_mut().add(
            NewNode::new(AssignVariableOp::NAME)
                .name(assign)
                .input(handle)
                .input(initial)
                .attr("dtype", dtype),
        )?;
        Ok(NewVariable {
            handle,
            initializer: Some(initializer),
        })
    }

    fn run_op(&self, call: OpCall<'_, Output>) -> Result<NodeId> {
        let op = call.op().to_owned();
        self.execute(call)?;
        self.last_node()
            .ok_or_else(|| Error::internal(format!("adding a {op} node left the graph empty")))
    }

    fn after<R>(&self, ops: &[NodeId], build: impl FnOnce() -> Result<R>) -> Result<R> {
        let _scope = self.control_dependencies(ops);
        build()
    }

    fn in_scope<R>(&self, name: &str, build: impl FnOnce() -> Result<R>) -> Result<R> {
        let _scope = self.name_scope(name);
        build()
    }
}

// ---- Optimizers ----

/// What every optimizer offers: applying gradients, and its state.
pub trait Optimizer<V> {
    /// Applies each gradient to its variable (pairs of `(gradient,
    /// variable handle)`, each variable once) and counts one step: eagerly
    /// at once, in a graph as nodes; returns the step's op (`()`
    /// eagerly, the `NoOp` to run in a graph).
    ///
    /// `InvalidArgument` for no pairs, a handle that is not a variable's,
    /// a variable given twice, or a gradient whose dtype is not `float`,
    /// `double`, `half` or `bfloat16`; the training op's errors (a
    /// gradient of another shape or dtype than the variable's, an
    /// uninitialized variable) eagerly when it runs, in a graph when the
    /// step does.
    fn apply_gradients<E>(&mut self, executor: &E, grads_and_vars: &[(V, V)]) -> Result<E::Op>
    where
        E: OptimizerBuilder<Value = V>;

    /// The step count's variable (int64, 0 before the first step), once
    /// the first step has been built.
    fn iterations(&self) -> Option<&V>;

    /// Every variable the optimizer made: the step count, then the slots.
    fn variables(&self) -> &[V];

    /// In a graph, the initializer of every variable the optimizer made,
    /// to run once before the first step; empty eagerly.
    fn initializers(&self) -> &[NodeId];
}

/// The variables an optimizer made and where to find them.
#[derive(Debug)]
struct State<V> {
    iterations: Option<V>,
    /// A variable's slots, by variable and slot name.
    slots: HashMap<(Key, &'static str), V>,
    variables: Vec<V>,
    initializers: Vec<NodeId>,
}

impl<V> Default for State<V> {
    fn default() -> Self {
        State {
            iterations: None,
            slots: HashMap::new(),
            variables: Vec::new(),
            initializers: Vec::new(),
        }
    }
}

impl<V: Clone> State<V> {
    /// Remembers a new variable and its initializer.
    fn keep(&mut self, made: NewVariable<V>) -> V {
        self.variables.push(made.handle.clone());
        self.initializers.extend(made.initializer);
        made.handle
    }
}

/// One variable's part of a step: its gradient, handle and slots.
struct Update<V> {
    grad: V,
    var: V,
    dtype: DType,
    slots: Vec<V>,
}

/// [`Optimizer`]'s accessors of an optimizer's `state` field.
macro_rules! state_accessors {
    () => {
        fn iterations(&self) -> Option<&V> {
            self.state.iterations.as_ref()
        }

        fn variables(&self) -> &[V] {
            &self.state.variables
        }

        fn initializers(&self) -> &[NodeId] {
            &self.state.initializers
        }
    };
}

/// The dtypes the training ops update.
fn is_updatable(dtype: DType) -> bool {
    matches!(dtype, DType::F32 | DType::F64 | DType::F16 | DType::BF16)
}

/// `x` as a scalar of `dtype` (one of [`is_updatable`]'s), rounded to
/// nearest as Keras' cast of a hyperparameter is.
fn scalar_of(dtype: DType, x: f64) -> Result<Tensor> {
    Ok(match dtype {
        DType::F32 => Tensor::scalar(x as f32),
        DType::F64 => Tensor::scalar(x),
        DType::F16 => Tensor::scalar(f16::from_f64(x)),
        DType::BF16 => Tensor::scalar(bf16::from_f64(x)),
        other => {
            return Err(Error::invalid_argument(format!(
                "no scalar of dtype {other} for a hyperparameter"
            )));
        }
    })
}

/// The initial value of a slot of `var` (`dtype`, of shape `shape` as far
/// as known): zeros, made by `Fill` when the shape is known, else like
/// the variable's value (`ZerosLike(ReadVariableOp(var))`).
fn zeros<E: OptimizerBuilder>(
    executor: &E,
    var: &E::Value,
    dtype: DType,
    shape: &PartialShape,
) -> Result<E::Value>
where
    E::Value: Clone,
{
    let known: Option<Vec<i64>> = shape.0.as_ref().and_then(|dims| {
        dims.iter()
            .map(|d| d.and_then(|n| i64::try_from(n).ok()))
            .collect()
    });
    let call = match known {
        Some(dims) => OpCall::with_values("Fill")
            .input(executor.constant(Tensor::from_vec([dims.len()], dims)?)?)
            .input(executor.constant(Tensor::zeros(dtype, [])?)?),
        None => {
            let [value] = executor.execute_array(
                OpCall::with_values(ReadVariableOp::NAME)
                    .input(var.clone())
                    .attr("dtype", dtype),
            )?;
            OpCall::with_values("ZerosLike").input(value)
        }
    };
    let [zeros] = executor.execute_array(call)?;
    Ok(zeros)
}

/// The step count of `iterations` plus one (int64): the number of the
/// step being built.
fn next_count<E>(executor: &E, iterations: &E::Value) -> Result<E::Value>
where
    E: OptimizerBuilder,
    E::Value: Clone,
{
    let [count] = executor.execute_array(
        OpCall::with_values(ReadVariableOp::NAME)
            .input(iterations.clone())
            .attr("dtype", DType::I64),
    )?;
    let [next] = executor.execute_array(
        OpCall::with_values("AddV2")
            .input(count)
            .input(executor.constant(Tensor::scalar(1i64))?),
    )?;
    Ok(next)
}

/// One step of an optimizer named `name` with slots `slot_names`: checks
/// the pairs, makes the step count and the slots it lacks, runs `update`
/// for each variable with `scalars(dtype, step)` made once per dtype
/// (`step`, the step count plus one as int64, when `needs_step`), then
/// counts the step.
#[allow(clippy::too_many_arguments)]
fn step<E, S>(
    state: &mut State<E::Value>,
    name: &str,
    slot_names: &[&'static str],
    needs_step: bool,
    executor: &E,
    grads_and_vars: &[(E::Value, E::Value)],
    mut scalars: impl FnMut(DType, Option<&E::Value>) -> Result<S>,
    mut update: impl FnMut(&Update<E::Value>, &S) -> Result<E::Op>,
) -> Result<E::Op>
where
    E: OptimizerBuilder,
    E::Value: Clone,
{
    if grads_and_vars.is_empty() {
        return Err(Error::invalid_argument(format!(
            "{name}: no (gradient, variable) pairs to apply"
        )));
    }
    let in_name = |e: Error| e.with_context(format!("{name}.apply_gradients"));
    let ops = executor
        .in_scope(name, || {
            // Check every pair before changing anything.
            let mut seen = Vec::with_capacity(grads_and_vars.len());
            for (grad, var) in grads_and_vars {
                let id = executor.variable_id(var)?;
                let dtype = executor.dtype(grad)?;
                if !is_updatable(dtype) {
                    return Err(Error::invalid_argument(format!(
                        "the gradient of variable {} has dtype {dtype}: the optimizer updates float, double, half and bfloat16 variables",
                        quoted(id.name())
                    )));
                }
                if seen.iter().any(|(other, _): &(VariableId, _)| other.key == id.key) {
                    return Err(Error::invalid_argument(format!(
                        "variable {} has two gradients: give each variable once",
                        quoted(id.name())
                    )));
                }
                seen.push((id, dtype));
            }

            let iterations = match &state.iterations {
                Some(iterations) => iterations.clone(),
                None => {
                    let zero = executor.constant(Tensor::scalar(0i64))?;
                    let made = executor.new_variable(
                        "iterations",
                        DType::I64,
                        &PartialShape::known(&[]),
                        zero,
                    )?;
                    let iterations = state.keep(made);
                    state.iterations = Some(iterations.clone());
                    iterations
                }
            };

            let mut updates = Vec::with_capacity(grads_and_vars.len());
            for ((grad, var), (id, dtype)) in grads_and_vars.iter().zip(seen) {
                let mut slots = Vec::with_capacity(slot_names.len());
                let mut shape = None;
                for &slot in slot_names {
                    let key = (id.key.clone(), slot);
                    let handle = match state.slots.get(&key) {
                        Some(handle) => handle.clone(),
                        None => {
                            let shape = match &shape {
                                Some(shape) => shape,
                                None => shape.insert(executor.variable_shape(var)?),
                            };
                            let initial = zeros(executor, var, dtype, shape)?;
                            let made = executor.new_variable(
                                &format!("{}/{slot}", id.name()),
                                dtype,
                                shape,
                                initial,
                            )?;
                            let handle = state.keep(made);
                            state.slots.insert(key, handle.clone());
                            handle
                        }
                    };
                    slots.push(handle);
                }
                updates.push(Update {
                    grad: grad.clone(),
                    var: var.clone(),
                    dtype,
                    slots,
                });
            }

            let step = if needs_step {
                Some(next_count(executor, &iterations)?)
            } else {
                None
            };
            let mut by_dtype: Vec<(DType, S)> = Vec::new();
            let mut ops = Vec::with_capacity(updates.len());
            for u in &updates {
                let index = match by_dtype.iter().position(|(d, _)| *d == u.dtype) {
                    Some(index) => index,
                    None => {
                        by_dtype.push((u.dtype, scalars(u.dtype, step.as_ref())?));
                        by_dtype.len() - 1
                    }
                };
                ops.push(update(u, &by_dtype[index].1)?);
            }

            // Count the step once every update is done (and has read the
            // count).
            let counted = executor.after(&ops, || {
                let next = next_count(executor, &iterations)?;
                executor.run_op(
                    OpCall::with_values(AssignVariableOp::NAME)
                        .input(iterations.clone())
                        .input(next),
                )
            })?;
            executor.after(&[counted], || {
                executor.run_op(OpCall::with_values("NoOp").node_name("step"))
            })
        })
        .map_err(in_name)?;
    Ok(ops)
}

/// Keras' stochastic gradient descent (`keras.optimizers.SGD`): `var -=
/// learning_rate * grad` (`ResourceApplyGradientDescent`), or with
/// `momentum > 0` the momentum scheme of [`Momentum`]
/// (`ResourceApplyMomentum`, a `momentum` slot per variable).
///
/// `Sgd<Tensor>` applies gradients eagerly, `Sgd<Output>` in a graph (see
/// the [module docs](self)).
#[derive(Debug)]
pub struct Sgd<V = Tensor> {
    /// The learning rate; Keras' default 0.01.
    pub learning_rate: f64,
    /// The momentum, at least 0; Keras' default 0 (plain gradient
    /// descent).
    pub momentum: f64,
    /// Whether to use Nesterov momentum (with `momentum > 0`); default
    /// false.
    pub nesterov: bool,
    state: State<V>,
}

impl<V> Default for Sgd<V> {
    fn default() -> Self {
        Sgd::with_learning_rate(0.01)
    }
}

impl<V> Sgd<V> {
    /// Keras' defaults: learning rate 0.01, no momentum.
    pub fn new() -> Self {
        Sgd::default()
    }

    /// Keras' defaults with learning rate `learning_rate`.
    pub fn with_learning_rate(learning_rate: f64) -> Self {
        Sgd {
            learning_rate,
            momentum: 0.0,
            nesterov: false,
            state: State::default(),
        }
    }
}

/// `learning_rate` (and `momentum`) must be finite, and `momentum` at least 0.
fn check_hyperparameters(name: &str, values: &[(&str, f64)]) -> Result<()> {
    for &(what, x) in values {
        if !x.is_finite() || (what != "learning_rate" && x < 0.0) {
            return Err(Error::invalid_argument(format!(
                "{name}: {what} is {x}, but must be finite{}",
                if what == "learning_rate" {
                    ""
                } else {
                    " and at least 0"
                }
            )));
        }
    }
    Ok(())
}

/// The momentum step shared by [`Sgd`] (with momentum) and [`Momentum`],
/// after checking the hyperparameters.
fn momentum_step<E>(
    state: &mut State<E::Value>,
    name: &str,
    (learning_rate, momentum, nesterov): (f64, f64, bool),
    executor: &E,
    grads_and_vars: &[(E::Value, E::Value)],
) -> Result<E::Op>
where
    E: OptimizerBuilder,
    E::Value: Clone,
{
    check_hyperparameters(
        name,
        &[("learning_rate", learning_rate), ("momentum", momentum)],
    )?;
    step(
        state,
        name,
        &["momentum"],
        false,
        executor,
        grads_and_vars,
        |dtype, _| {
            Ok([
                executor.constant(scalar_of(dtype, learning_rate)?)?,
                executor.constant(scalar_of(dtype, momentum)?)?,
            ])
        },
        |u, [lr, momentum]| {
            executor.run_op(
                OpCall::with_values(ResourceApplyMomentum::NAME)
                    .input(u.var.clone())
                    .input(u.slots[0].clone())
                    .input(lr.clone())
                    .input(u.grad.clone())
                    .input(momentum.clone())
                    .attr("use_nesterov", nesterov),
            )
        },
    )
}

impl<V: Clone> Optimizer<V> for Sgd<V> {
    fn apply_gradients<E>(&mut self, executor: &E, grads_and_vars: &[(V, V)]) -> Result<E::Op>
    where
        E: OptimizerBuilder<Value = V>,
    {
        if self.momentum != 0.0 {
            let hyper = (self.learning_rate, self.momentum, self.nesterov);
            return momentum_step(&mut self.state, "SGD", hyper, executor, grads_and_vars);
        }
        check_hyperparameters("SGD", &[("learning_rate", self.learning_rate)])?;
        let learning_rate = self.learning_rate;
        step(
            &mut self.state,
            "SGD",
            &[],
            false,
            executor,
            grads_and_vars,
            |dtype, _| executor.constant(scalar_of(dtype, learning_rate)?),
            |u, lr| {
                executor.run_op(
                    OpCall::with_values(ResourceApplyGradientDescent::NAME)
                        .input(u.var.clone())
                        .input(lr.clone())
                        .input(u.grad.clone()),
                )
            },
        )
    }

    state_accessors!();
}

/// TensorFlow 1's momentum optimizer (`tf.compat.v1.train.MomentumOptimizer`):
/// `accum = momentum * accum + grad; var -= learning_rate * accum`, or
/// with Nesterov momentum `var -= learning_rate * (grad + momentum *
/// accum)` (`ResourceApplyMomentum`, a `momentum` slot per variable).
/// Keras' `SGD(momentum=..)` computes the same ([`Sgd`] with momentum).
#[derive(Debug)]
pub struct Momentum<V = Tensor> {
    /// The learning rate.
    pub learning_rate: f64,
    /// The momentum, at least 0.
    pub momentum: f64,
    /// Whether to use Nesterov momentum; default false.
    pub nesterov: bool,
    state: State<V>,
}

impl<V> Momentum<V> {
    /// A momentum optimizer with these hyperparameters, without Nesterov
    /// momentum.
    pub fn new(learning_rate: f64, momentum: f64) -> Self {
        Momentum {
            learning_rate,
            momentum,
            nesterov: false,
            state: State::default(),
        }
    }
}

impl<V: Clone> Optimizer<V> for Momentum<V> {
    fn apply_gradients<E>(&mut self, executor: &E, grads_and_vars: &[(V, V)]) -> Result<E::Op>
    where
        E: OptimizerBuilder<Value = V>,
    {
        let hyper = (self.learning_rate, self.momentum, self.nesterov);
        momentum_step(&mut self.state, "Momentum", hyper, executor, grads_and_vars)
    }

    state_accessors!();
}

/// Keras' Adam (`keras.optimizers.Adam`, without amsgrad): with `t` the
/// step number from 1, `m = beta_1 * m + (1 - beta_1) * grad`, `v =
/// beta_2 * v + (1 - beta_2) * grad^2`, `var -= learning_rate * sqrt(1 -
/// beta_2^t) / (1 - beta_1^t) * m / (sqrt(v) + epsilon)`
/// (`ResourceApplyAdam`, slots `m` and `v` per variable).
#[derive(Debug)]
pub struct Adam<V = Tensor> {
    /// The learning rate; Keras' default 0.001.
    pub learning_rate: f64,
    /// The first moment's decay; default 0.9.
    pub beta_1: f64,
    /// The second moment's decay; default 0.999.
    pub beta_2: f64,
    /// The term that keeps the division finite; Keras' default 1e-7.
    pub epsilon: f64,
    state: State<V>,
}

impl<V> Default for Adam<V> {
    fn default() -> Self {
        Adam::with_learning_rate(0.001)
    }
}

impl<V> Adam<V> {
    /// Keras' defaults: learning rate 0.001, beta_1 0.9, beta_2 0.999,
    /// epsilon 1e-7.
    pub fn new() -> Self {
        Adam::default()
    }

    /// Keras' defaults with learning rate `learning_rate`.
    pub fn with_learning_rate(learning_rate: f64) -> Self {
        Adam {
            learning_rate,
            beta_1: 0.9,
            beta_2: 0.999,
            epsilon: 1e-7,
            state: State::default(),
        }
    }
}

impl<V: Clone> Optimizer<V> for Adam<V> {
    fn apply_gradients<E>(&mut self, executor: &E, grads_and_vars: &[(V, V)]) -> Result<E::Op>
    where
        E: OptimizerBuilder<Value = V>,
    {
        let Adam {
            learning_rate,
            beta_1,
            beta_2,
            epsilon,
            ..
        } = *self;
        check_hyperparameters(
            "Adam",
            &[
                ("learning_rate", learning_rate),
                ("beta_1", beta_1),
                ("beta_2", beta_2),
                ("epsilon", epsilon),
            ],
        )?;
        step(
            &mut self.state,
            "Adam",
            &["m", "v"],
            true,
            executor,
            grads_and_vars,
            |dtype, step| {
                let step = step.ok_or_else(|| Error::internal("Adam's step count is missing"))?;
                let [t] = executor.execute_array(
                    OpCall::with_values("Cast")
                        .input(step.clone())
                        .attr("DstT", dtype),
                )?;
                let power = |beta: f64| -> Result<E::Value> {
                    let [power] = executor.execute_array(
                        OpCall::with_values("Pow")
                            .input(executor.constant(scalar_of(dtype, beta)?)?)
                            .input(t.clone()),
                    )?;
                    Ok(power)
                };
                let constant = |x: f64| executor.constant(scalar_of(dtype, x)?);
                Ok([
                    power(beta_1)?,
                    power(beta_2)?,
                    constant(learning_rate)?,
                    constant(beta_1)?,
                    constant(beta_2)?,
                    constant(epsilon)?,
                ])
            },
            |u, scalars| {
                let mut call = OpCall::with_values(ResourceApplyAdam::NAME)
                    .input(u.var.clone())
                    .input(u.slots[0].clone())
                    .input(u.slots[1].clone());
                for scalar in scalars {
                    call = call.input(scalar.clone());
                }
                executor.run_op(call.input(u.grad.clone()))
            },
        )
    }

    state_accessors!();
}
