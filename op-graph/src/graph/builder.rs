//! [`GraphBuilder`]: the executor whose values are graph outputs, so that
//! the typed wrappers `#[register_op]` generates add nodes instead of
//! running kernels (one wrapper, both modes), with TensorFlow's name
//! scopes, device scopes and control dependencies.

use std::cell::{Ref, RefCell, RefMut};

use op_core::error::quoted;
use op_core::shape_inference::PartialShape;
use op_core::{DType, Error, Executor, OpCall, Result, ShapeValue, Tensor};

use super::names::is_valid_scope_name;
use super::{Graph, NewNode, NodeId, Output};

/// Builds a [`Graph`] through the executor seam: a typed wrapper run on
/// the builder (`ZeroOut::call_with(x).run_on(&builder)`) adds a node and
/// returns its [`Output`]s, checked as [`Graph::add`] checks every node.
///
/// Node names follow TensorFlow: a node is named after its op, or the
/// name the call gave (`node_name`), under the current name scope
/// ([`name_scope`](Self::name_scope): `layer1/MatMul`), made unique
/// (`Add`, `Add_1`, ...). Nodes made inside a
/// [`device`](Self::device) scope request that device, and nodes made
/// inside a [`control_dependencies`](Self::control_dependencies) scope get
/// those control inputs.
///
/// ```standalone_crate
/// use op_core::{DType, Tensor};
/// use op_graph::GraphBuilder;
/// use op_kernels::example::Example;
/// # op_kernels::link();
///
/// let b = GraphBuilder::new();
/// let x = b.placeholder("x", DType::F32, "[?,3]")?;
/// let y = {
///     let _scope = b.name_scope("layer1");
///     Example::call_with(x).run_on(&b)?
/// };
/// let graph = b.into_graph();
/// assert_eq!(graph.tensor_name(y).to_string(), "layer1/Example");
/// assert_eq!(graph.output_shape(y)?.to_string(), "[?,3]");
/// # Ok::<(), op_core::Error>(())
/// ```
#[derive(Debug, Default)]
pub struct GraphBuilder {
    graph: RefCell<Graph>,
    scope: RefCell<Scope>,
}

/// The builder's current scopes.
#[derive(Clone, Debug, Default)]
struct Scope {
    /// The name scope: empty, or ending in `/`.
    prefix: String,
    /// The device nodes request.
    device: String,
    /// The control inputs nodes get.
    controls: Vec<NodeId>,
}

impl GraphBuilder {
    /// A builder of a new graph over the global registry.
    pub fn new() -> GraphBuilder {
        GraphBuilder::with_graph(Graph::new())
    }

    /// A builder that adds to `graph`.
    pub fn with_graph(graph: Graph) -> GraphBuilder {
        GraphBuilder {
            graph: RefCell::new(graph),
            scope: RefCell::default(),
        }
    }

    /// The graph so far.
    ///
    /// # Panics
    ///
    /// If called while [`graph_mut`](Self::graph_mut)'s borrow lives.
    pub fn graph(&self) -> Ref<'_, Graph> {
        self.graph.borrow()
    }

    /// The graph so far, to add nodes by name ([`Graph::add`]: no scope
    /// applies).
    ///
    /// # Panics
    ///
    /// If called while another borrow of the graph lives.
    pub fn graph_mut(&self) -> RefMut<'_, Graph> {
        self.graph.borrow_mut()
    }

    /// The graph built.
    pub fn into_graph(self) -> Graph {
        self.graph.into_inner()
    }

    /// Enters name scope `name` until the returned guard drops: nodes
    /// made meanwhile are named `name/...`. As in TensorFlow, the scope's
    /// name is made unique (a second `layer1` scope is `layer1_1`), scopes
    /// nest (`outer/inner/`), a name ending in `/` is taken as a whole
    /// scope as is, and the empty name goes back to the top.
    ///
    /// # Panics
    ///
    /// Never for bad names: an invalid scope name makes every node added
    /// in it fail with an error naming the scope.
    pub fn name_scope(&self, name: &str) -> NameScope<'_> {
        let mut scope = self.scope.borrow_mut();
        let previous = scope.prefix.clone();
        scope.prefix = if name.is_empty() {
            String::new()
        } else if name.ends_with('/') {
            name.to_owned()
        } else {
            let unique = self
                .graph
                .borrow_mut()
                .unique_name(&format!("{previous}{name}"));
            format!("{unique}/")
        };
        NameScope {
            builder: self,
            previous,
        }
    }

    /// The current name scope: empty, or ending in `/`.
    pub fn current_name_scope(&self) -> String {
        self.scope.borrow().prefix.clone()
    }

    /// Requests `device` (as TensorFlow writes it, `/device:CPU:0`) for
    /// every node made until the returned guard drops.
    pub fn device(&self, device: &str) -> DeviceScope<'_> {
        let previous = std::mem::replace(&mut self.scope.borrow_mut().device, device.to_owned());
        DeviceScope {
            builder: self,
            previous,
        }
    }

    /// Gives every node made until the returned guard drops control
    /// inputs on `nodes` (and on those of enclosing control scopes), so
    /// that they run first: TensorFlow's `control_dependencies`.
    pub fn control_dependencies(&self, nodes: &[NodeId]) -> ControlScope<'_> {
        let mut scope = self.scope.borrow_mut();
        let previous = scope.controls.clone();
        for node in nodes {
            if !scope.controls.contains(node) {
                scope.controls.push(*node);
            }
        }
        ControlScope {
            builder: self,
            previous,
        }
    }

    /// The node added last: how to reach a node whose op has no outputs
    /// (its typed wrapper returns `()`), to make it a target or a control
    /// input.
    pub fn last_node(&self) -> Option<NodeId> {
        self.graph.borrow().nodes().last().map(|n| n.id())
    }

    /// A name for a new node based on `base`, under the current name
    /// scope, unique in the graph.
    pub fn unique_name(&self, base: &str) -> String {
        let prefix = self.scope.borrow().prefix.clone();
        self.graph
            .borrow_mut()
            .unique_name(&format!("{prefix}{base}"))
    }

    /// Adds a `Placeholder` named `name` (under the current scope, made
    /// unique) of `dtype` and (possibly partial) `shape`: `"[?,3]"`, `[2,
    /// 3]`, a [`PartialShape`], or `"?"` for an unknown rank.
    pub fn placeholder(
        &self,
        name: &str,
        dtype: DType,
        shape: impl IntoPartialShape,
    ) -> Result<Output> {
        let shape = shape.into_partial_shape()?;
        self.add_scoped(
            NewNode::new("Placeholder")
                .attr("dtype", dtype)
                .attr("shape", shape_value(&shape)),
            name,
        )
    }

    /// Adds a `Const` node holding `value` (named `Const`, `Const_1`, ...
    /// under the current scope).
    pub fn constant(&self, value: impl Into<Tensor>) -> Result<Output> {
        let value: Tensor = value.into();
        self.add_scoped(
            NewNode::new("Const")
                .attr("value", value.to_tensor_value()?)
                .attr("dtype", value.dtype()),
            "Const",
        )
    }

    /// Adds `new` named `base` under the current scopes; returns its
    /// output 0.
    fn add_scoped(&self, new: NewNode, base: &str) -> Result<Output> {
        let id = self.add_in_scope(new, base)?;
        Ok(id.output(0))
    }

    /// Adds `new` with the current scopes: named `base` under the name
    /// scope (made unique), on the scope's device unless it names one, with
    /// the scope's control inputs.
    fn add_in_scope(&self, mut new: NewNode, base: &str) -> Result<NodeId> {
        let scope = self.scope.borrow().clone();
        if !is_valid_scope_name(&scope.prefix) {
            return Err(Error::invalid_argument(format!(
                "{} is not a valid name scope: use letters, digits and '_.-/>'",
                quoted(&scope.prefix)
            )));
        }
        let name = self.unique_name(base);
        new = new.name(name);
        if new.given_device().is_empty() {
            new = new.device(scope.device);
        }
        for control in scope.controls {
            new = new.control_input(control);
        }
        self.graph.borrow_mut().add(new)
    }

    /// The node for `call`, added.
    fn add_call(&self, call: OpCall<'_, Output>) -> Result<NodeId> {
        let base = call.given_node_name().unwrap_or(call.op()).to_owned();
        let mut new = NewNode::new(call.op());
        for (name, value) in call.attrs() {
            new = new.attr(*name, value.clone());
        }
        let groups: Vec<Option<usize>> = call.input_groups().collect();
        let mut inputs = call.into_inputs().into_iter();
        for group in groups {
            new = match group {
                None => match inputs.next() {
                    Some(input) => new.input(input),
                    None => break,
                },
                Some(n) => new.input_list(inputs.by_ref().take(n)),
            };
        }
        self.add_in_scope(new, &base)
    }
}

/// The graph builder's executor: each call adds a node and returns its
/// outputs.
impl Executor for GraphBuilder {
    type Value = Output;

    fn execute(&self, call: OpCall<'_, Output>) -> Result<Vec<Output>> {
        let id = self.add_call(call)?;
        let count = self.graph.borrow().nodes[id.index()].outputs().len();
        Ok((0..count).map(|k| id.output(k)).collect())
    }

    fn execute_grouped(&self, call: OpCall<'_, Output>) -> Result<Vec<Vec<Output>>> {
        let id = self.add_call(call)?;
        let graph = self.graph.borrow();
        let node = &graph.nodes[id.index()];
        Ok((0..node.op_def().outputs.len())
            .map(|arg| {
                node.instance()
                    .output_arg_range(arg)
                    .unwrap_or_default()
                    .map(|k| id.output(k))
                    .collect()
            })
            .collect())
    }
}

/// The symbolic builder of gradient functions (`op_autodiff::symbolic`):
/// the ops a gradient function runs become nodes of this graph, under
/// the current scopes.
impl op_core::gradient::GradientBuilder for GraphBuilder {
    fn constant(&self, value: Tensor) -> Result<Output> {
        GraphBuilder::constant(self, value)
    }

    fn dtype(&self, value: &Output) -> Result<DType> {
        self.graph.borrow().output_dtype(*value)
    }

    fn shape(&self, value: &Output) -> Result<PartialShape> {
        self.graph.borrow().output_shape(*value).cloned()
    }
}

/// A name scope of a [`GraphBuilder`]; the previous scope returns when it
/// drops.
#[must_use = "the scope ends when this guard drops"]
#[derive(Debug)]
pub struct NameScope<'a> {
    builder: &'a GraphBuilder,
    previous: String,
}

impl NameScope<'_> {
    /// The scope's full name, ending in `/` (empty at the top).
    pub fn name(&self) -> String {
        self.builder.current_name_scope()
    }
}

impl Drop for NameScope<'_> {
    fn drop(&mut self) {
        self.builder.scope.borrow_mut().prefix = std::mem::take(&mut self.previous);
    }
}

/// A device scope of a [`GraphBuilder`]; the previous device returns when
/// it drops.
#[must_use = "the scope ends when this guard drops"]
#[derive(Debug)]
pub struct DeviceScope<'a> {
    builder: &'a GraphBuilder,
    previous: String,
}

impl Drop for DeviceScope<'_> {
    fn drop(&mut self) {
        self.builder.scope.borrow_mut().device = std::mem::take(&mut self.previous);
    }
}

/// A control-dependencies scope of a [`GraphBuilder`]; the previous
/// control inputs return when it drops.
#[must_use = "the scope ends when this guard drops"]
#[derive(Debug)]
pub struct ControlScope<'a> {
    builder: &'a GraphBuilder,
    previous: Vec<NodeId>,
}

impl Drop for ControlScope<'_> {
    fn drop(&mut self) {
        self.builder.scope.borrow_mut().controls = std::mem::take(&mut self.previous);
    }
}

/// `shape` as a `shape` attr's value: `-1` for an unknown dimension.
pub(crate) fn shape_value(shape: &PartialShape) -> ShapeValue {
    match &shape.0 {
        None => ShapeValue::unknown_rank(),
        Some(dims) => {
            let sizes: Vec<i64> = dims
                .iter()
                .map(|d| d.map_or(-1, |d| i64::try_from(d).unwrap_or(i64::MAX)))
                .collect();
            ShapeValue::from_sizes(&sizes)
        }
    }
}

/// What a (possibly partial) shape can be given as: a [`PartialShape`],
/// its text (`"[?,3]"`, `"?"`), or known sizes (`[2, 3]`, `&[2, 3][..]`,
/// `vec![2, 3]`).
pub trait IntoPartialShape {
    /// The shape; an `InvalidArgument` error for text that is not one.
    fn into_partial_shape(self) -> Result<PartialShape>;
}

impl IntoPartialShape for PartialShape {
    fn into_partial_shape(self) -> Result<PartialShape> {
        Ok(self)
    }
}

impl IntoPartialShape for &PartialShape {
    fn into_partial_shape(self) -> Result<PartialShape> {
        Ok(self.clone())
    }
}

impl IntoPartialShape for &str {
    fn into_partial_shape(self) -> Result<PartialShape> {
        self.parse()
    }
}

impl IntoPartialShape for &[usize] {
    fn into_partial_shape(self) -> Result<PartialShape> {
        Ok(PartialShape::known(self))
    }
}

impl<const N: usize> IntoPartialShape for [usize; N] {
    fn into_partial_shape(self) -> Result<PartialShape> {
        Ok(PartialShape::known(&self))
    }
}

impl IntoPartialShape for Vec<usize> {
    fn into_partial_shape(self) -> Result<PartialShape> {
        Ok(PartialShape::known(&self))
    }
}
