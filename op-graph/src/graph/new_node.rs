//! [`NewNode`]: a request to add a node by op name, and the checks that
//! [`Graph::add`] makes before the node joins the graph.

use op_core::error::{capped, listed, quoted, summarized};
use op_core::op_spec::{ArgDef, ArgType, AttrValue, ListValue};
use op_core::shape_inference::{self, PartialShape};
use op_core::{DType, Error, InputTypes, OpDef, Result, Tensor, TensorValue};

use super::names;
use super::node::{Node, OutputInfo};
use super::{Graph, NodeId, Output};

/// Const nodes whose values have at most this many elements keep them for
/// the shape functions of the nodes that read them
/// ([`Node::constant_value`]).
pub const KEPT_CONSTANT_ELEMENTS: usize = 1 << 12;

/// How a [`NewNode`]'s inputs are divided among the op's input args.
#[derive(Clone, Debug)]
enum Grouping {
    /// Per input arg: `None` for one value, `Some(n)` for a list of `n`.
    ByArg(Vec<Option<usize>>),
    /// Flat, as a `NodeDef` lists them: divided by the op's definition
    /// and the given attrs when the node is added.
    Flat,
}

/// A node to add to a [`Graph`]: an op by name, its inputs, control
/// inputs, attrs, and optionally an exact name and a device. What a graph
/// importer makes of each `NodeDef`.
///
/// [`Graph::add`] checks it all before the node joins the graph, and
/// returns a typed error naming the node otherwise:
///
/// - the op must be registered (`NotFound`, with the closest name);
/// - an explicit name must be a valid node name and not taken
///   (`InvalidArgument`); without one, the node is named after its op,
///   made unique (`Add`, `Add_1`, ...);
/// - every input and control input must be a node already in this graph
///   (an output of another graph is an `InvalidArgument` error, and a
///   graph built this way cannot hold a cycle), and an input's output
///   index must exist;
/// - the attrs are inferred from the inputs' dtypes, given, or defaulted,
///   and checked against the op's constraints as in an eager call; an
///   attr the op does not declare is an error unless its name starts with
///   `_` (TensorFlow's internal attrs, kept as given: see
///   [`Node::internal_attrs`]);
/// - the op's shape function runs on the inputs' inferred shapes, with the
///   values of `Const` inputs at hand; shapes it rejects are an
///   `InvalidArgument` error that names the node, each input (`x:0`) and
///   its shape.
///
/// Inputs are given per arg ([`input`](Self::input) for a single-tensor
/// arg, [`input_list`](Self::input_list) for a list arg, in the op's
/// order), or flat ([`inputs`](Self::inputs)), as a `NodeDef` lists them:
/// the graph then divides them among the args by the op's definition and
/// the given attrs (a list arg takes the length its `N` or `list(type)`
/// attr says, or, when that attr is not given and the op has one list
/// arg, what the single args leave).
///
/// ```standalone_crate
/// use op_core::{AttrValue, DType, Tensor};
/// use op_graph::{Graph, NewNode};
/// # op_kernels::link();
///
/// let mut graph = Graph::new();
/// let c = graph.add(
///     NewNode::new("Const")
///         .name("c")
///         .attr("value", Tensor::from_vec([2], vec![1i32, 2])?.to_tensor_value()?)
///         .attr("dtype", DType::I32)
///         .attr("_class", AttrValue::from(vec!["loc:@c"]))
///         .device("/device:CPU:0"),
/// )?;
/// let sum = graph.add(NewNode::new("IntListInputExample").inputs([c.output(0), c.output(0)]))?;
/// let node = graph.node(sum)?;
/// assert_eq!(node.attr("N"), Some(&AttrValue::Int(2)));
/// assert_eq!(graph.node(c)?.internal_attrs().len(), 1);
/// assert_eq!(graph.node(c)?.device(), "/device:CPU:0");
/// # Ok::<(), op_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct NewNode {
    op: String,
    name: Option<String>,
    inputs: Vec<Output>,
    grouping: Grouping,
    control_inputs: Vec<NodeId>,
    attrs: Vec<(String, AttrValue)>,
    /// Attrs the op does not declare, kept for export and ignored (see
    /// [`NewNode::kept_attr`]).
    kept: Vec<(String, AttrValue)>,
    device: String,
}

impl NewNode {
    /// A node of op `op`, with no inputs or attrs yet.
    pub fn new(op: impl Into<String>) -> NewNode {
        NewNode {
            op: op.into(),
            name: None,
            inputs: Vec::new(),
            grouping: Grouping::ByArg(Vec::new()),
            control_inputs: Vec::new(),
            attrs: Vec::new(),
            kept: Vec::new(),
            device: String::new(),
        }
    }

    /// Names the node exactly `name` (adding it fails if that name is
    /// taken or invalid). Without it, the node is named after its op, made
    /// unique.
    pub fn name(mut self, name: impl Into<String>) -> NewNode {
        self.name = Some(name.into());
        self
    }

    /// Adds the next input arg: one tensor.
    pub fn input(mut self, output: Output) -> NewNode {
        self.inputs.push(output);
        if let Grouping::ByArg(groups) = &mut self.grouping {
            groups.push(None);
        }
        self
    }

    /// Adds the next input arg: a list of tensors.
    pub fn input_list(mut self, outputs: impl IntoIterator<Item = Output>) -> NewNode {
        let before = self.inputs.len();
        self.inputs.extend(outputs);
        if let Grouping::ByArg(groups) = &mut self.grouping {
            groups.push(Some(self.inputs.len() - before));
        }
        self
    }

    /// Adds inputs without saying which arg each belongs to, as a
    /// `NodeDef` lists them: all of the node's inputs are then divided
    /// among the op's args when the node is added (see the
    /// [type docs](Self)).
    pub fn inputs(mut self, outputs: impl IntoIterator<Item = Output>) -> NewNode {
        self.inputs.extend(outputs);
        self.grouping = Grouping::Flat;
        self
    }

    /// Adds a control input: `node` runs before this node.
    pub fn control_input(mut self, node: NodeId) -> NewNode {
        if !self.control_inputs.contains(&node) {
            self.control_inputs.push(node);
        }
        self
    }

    /// Sets attr `name` (again: the last value wins).
    pub fn attr(mut self, name: impl Into<String>, value: impl Into<AttrValue>) -> NewNode {
        let (name, value) = (name.into(), value.into());
        match self.attrs.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = value,
            None => self.attrs.push((name, value)),
        }
        self
    }

    /// Keeps attr `name`, which the op does not declare, on the node for
    /// export ([`Node::internal_attrs`]), as TensorFlow's importer keeps
    /// an attr a newer producer wrote: the op never sees it. Only the
    /// GraphDef importer does this; an undeclared attr given to
    /// [`attr`](Self::attr) is an error.
    pub(crate) fn kept_attr(mut self, name: String, value: AttrValue) -> NewNode {
        self.kept.push((name, value));
        self
    }

    /// Requests a device, as TensorFlow writes it (`/device:CPU:0`, or
    /// `/cpu:0`); kept as given.
    pub fn device(mut self, device: impl Into<String>) -> NewNode {
        self.device = device.into();
        self
    }

    /// The op's name.
    pub fn op(&self) -> &str {
        &self.op
    }

    /// The exact name, if one was given.
    pub fn given_name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The requested device; empty if none.
    pub fn given_device(&self) -> &str {
        &self.device
    }
}

/// [`Graph::add`]: checks `new` and adds it.
pub(super) fn add(graph: &mut Graph, new: NewNode) -> Result<NodeId> {
    // The name first, so that every later error can name the node.
    let name = match &new.name {
        Some(name) => {
            names::check_node_name(name)?;
            let taken = graph.by_name.find(name, |i| graph.nodes[i as usize].name());
            if taken.is_some() {
                return Err(Error::invalid_argument(format!(
                    "the graph already has a node named {}",
                    quoted(name)
                )));
            }
            name.clone()
        }
        None => {
            // The op's name may not be a node name (`Examples>ZeroOut` is,
            // `_Retval` is not): the node then says so under a name that is.
            let name = graph.unique_name(&new.op);
            names::check_node_name(&name)?;
            name
        }
    };
    let node = check(graph, &new, name.clone()).map_err(|e| {
        e.with_context(format!(
            "while adding node {} (op {}) to the graph",
            quoted(&name),
            quoted(&new.op)
        ))
    })?;
    // Its name joins `names_in_use` when a unique name is next asked for.
    let id = node.id;
    graph.nodes.push(node);
    graph
        .by_name
        .insert(id.index() as u32, |i| graph.nodes[i as usize].name());
    Ok(id)
}

/// The node `new` makes in `graph` under `name`, every part checked.
fn check(graph: &Graph, new: &NewNode, name: String) -> Result<Node> {
    let entry = graph.registry.op(&new.op)?;
    let op = entry.def();
    let index = u32::try_from(graph.nodes.len())
        .map_err(|_| Error::resource_exhausted("a graph holds at most 2^32 nodes"))?;
    let id = NodeId::new(graph.id, index);

    for (i, input) in new.inputs.iter().enumerate() {
        graph
            .check_output(*input)
            .map_err(|e| Error::new(e.code(), format!("input {i}: {}", e.message())))?;
    }
    for control in &new.control_inputs {
        graph
            .check_node(*control)
            .map_err(|e| Error::new(e.code(), format!("control input: {}", e.message())))?;
    }

    // Attrs: the op's own go to the instance; undeclared `_` ones are kept
    // aside; anything else is the instance's error (with a suggestion).
    let (internal, declared): (Vec<_>, Vec<_>) = new
        .attrs
        .iter()
        .partition(|(n, _)| n.starts_with('_') && op.attr(n).is_none());
    let attrs: Vec<(&str, AttrValue)> = declared
        .iter()
        .map(|(n, v)| (n.as_str(), v.clone()))
        .collect();

    let groups = match &new.grouping {
        Grouping::ByArg(groups) => groups.clone(),
        Grouping::Flat => group_flat(op, &attrs, new.inputs.len())?,
    };
    let input_types = input_types(graph, &new.inputs, &groups);
    let instance = entry.instance(&input_types, &attrs)?.with_name(name);

    // Constant values: a Const node's own (checked now, kept if small),
    // and its inputs' for the shape function.
    let value = constant_value(op, &instance)?;
    let input_shapes: Vec<PartialShape> = new
        .inputs
        .iter()
        .map(|o| {
            graph.nodes[o.node().index()].outputs[o.index()]
                .shape
                .clone()
        })
        .collect();
    let input_values: Vec<Option<&Tensor>> = new
        .inputs
        .iter()
        .map(|o| match o.index() {
            0 => graph.nodes[o.node().index()].value.as_deref(),
            _ => None,
        })
        .collect();
    let shapes = match entry.shape_fn() {
        Some(shape_fn) => {
            shape_inference::infer(op, &instance, shape_fn, &input_shapes, &input_values).map_err(
                |e| {
                    let inputs = new.inputs.iter().zip(&input_shapes).map(|(o, s)| {
                        let name = graph.tensor_name(*o).to_string();
                        format!("{} {}", capped(&name), summarized(s))
                    });
                    e.with_context(format!("inputs: {}", listed(inputs, 8)))
                },
            )?
        }
        None => vec![PartialShape::unknown(); instance.output_types().len()],
    };
    let outputs = instance
        .output_types()
        .iter()
        .zip(shapes)
        .map(|(&dtype, shape)| OutputInfo { dtype, shape })
        .collect();

    Ok(Node {
        id,
        op: op.clone(),
        instance,
        inputs: new.inputs.clone(),
        control_inputs: new.control_inputs.clone(),
        device: new.device.clone(),
        internal_attrs: internal.into_iter().chain(&new.kept).cloned().collect(),
        outputs,
        value,
    })
}

/// The dtypes of `inputs`, by arg as `groups` divides them.
fn input_types(graph: &Graph, inputs: &[Output], groups: &[Option<usize>]) -> Vec<InputTypes> {
    let dtype = |o: &Output| graph.nodes[o.node().index()].outputs[o.index()].dtype;
    let mut next = 0;
    groups
        .iter()
        .map(|group| match group {
            None => {
                next += 1;
                // A count that disagrees with the op is the instance's
                // error (it counts args); past the end there is no dtype.
                InputTypes::Single(inputs.get(next - 1).map_or(DType::F32, dtype))
            }
            Some(n) => {
                let end = (next + n).min(inputs.len());
                let list = inputs[next.min(end)..end].iter().map(dtype).collect();
                next += n;
                InputTypes::List(list)
            }
        })
        .collect()
}

/// Divides `count` flat inputs among `op`'s input args, as TensorFlow's
/// importer does: a single arg takes one, a list arg the length its `N`
/// or `list(type)` attr gives; with that attr not given, the op's one list
/// arg takes what the others leave.
fn group_flat(op: &OpDef, attrs: &[(&str, AttrValue)], count: usize) -> Result<Vec<Option<usize>>> {
    let given = |name: &str| attrs.iter().find(|(n, _)| *n == name).map(|(_, v)| v);
    let length = |arg: &ArgDef| -> Option<usize> {
        if let Some(n) = &arg.number_attr {
            return match given(n)? {
                AttrValue::Int(n) => usize::try_from(*n).ok(),
                _ => None,
            };
        }
        match &arg.ty {
            ArgType::ListAttr(t) => match given(t)? {
                AttrValue::List(ListValue::Type(types)) => Some(types.len()),
                AttrValue::List(l) if l.is_empty() => Some(0),
                _ => None,
            },
            _ => None,
        }
    };
    let mut groups: Vec<Option<Option<usize>>> = op
        .inputs
        .iter()
        .map(|arg| match arg.is_list() {
            false => Some(None),
            true => length(arg).map(Some),
        })
        .collect();
    let unknown: Vec<usize> = (0..groups.len()).filter(|&i| groups[i].is_none()).collect();
    let known: usize = groups.iter().flatten().map(|g| g.unwrap_or(1)).sum();
    match unknown.as_slice() {
        [] => {}
        [i] => groups[*i] = Some(Some(count.saturating_sub(known))),
        several => {
            let names = several.iter().map(|&i| quoted(&op.inputs[i].name));
            return Err(Error::invalid_argument(format!(
                "op {}: cannot divide {count} input(s) among list args {}: give their length attrs",
                op.name,
                listed(names, 8)
            )));
        }
    }
    let groups: Vec<Option<usize>> = groups.into_iter().flatten().collect();
    let expected: usize = groups.iter().map(|g| g.unwrap_or(1)).sum();
    if expected != count {
        let names = op.inputs.iter().map(|a| a.name.as_str());
        return Err(Error::invalid_argument(format!(
            "op {} takes {expected} input tensor(s) ({}) with these attrs, but {count} were given",
            op.name,
            listed(names, 8)
        )));
    }
    Ok(groups)
}

/// For a `Const` node, its value as a tensor: checked against its `dtype`
/// now (so a bad constant is an error at construction), kept when small.
fn constant_value(op: &OpDef, instance: &op_core::OpInstance) -> Result<Option<Box<Tensor>>> {
    if op.name != "Const" {
        return Ok(None);
    }
    let value: TensorValue = instance.get_attr("value")?;
    let dtype: DType = instance.get_attr("dtype")?;
    let tensor = Tensor::from_tensor_value(&value)
        .map_err(|e| Error::new(e.code(), format!("attr 'value': {}", e.message())))?;
    if tensor.dtype() != dtype {
        return Err(Error::invalid_argument(format!(
            "Type mismatch between value ({}) and dtype ({dtype}): attr 'value' is {}",
            tensor.dtype(),
            summarized(&AttrValue::from(value))
        )));
    }
    Ok((tensor.num_elements() <= KEPT_CONSTANT_ELEMENTS).then(|| Box::new(tensor)))
}
