//! [`Node`]: what a graph holds of one node, all of it checked when the
//! node was added.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use op_core::shape_inference::PartialShape;
use op_core::{AttrValue, DType, OpDef, OpInstance, Tensor};

use super::{NodeId, Output};

/// The dtype and inferred shape of one output of a node.
#[derive(Clone, Debug, PartialEq)]
pub struct OutputInfo {
    /// The output's dtype.
    pub dtype: DType,
    /// Its shape as the op's shape function inferred it (unknown where
    /// the op has none).
    pub shape: PartialShape,
}

/// A node of a [`Graph`](super::Graph): a name unique in the graph, an op
/// with every attr decided, data inputs, control inputs, a requested
/// device, and its outputs' dtypes and shapes.
#[derive(Clone)]
pub struct Node {
    pub(super) id: NodeId,
    pub(super) op: Arc<OpDef>,
    /// Its name is the node's name.
    pub(super) instance: OpInstance,
    /// Flattened: a list arg contributes one per tensor
    /// ([`OpInstance::input_arg_range`] tells the args apart).
    pub(super) inputs: Vec<Output>,
    pub(super) control_inputs: Vec<NodeId>,
    pub(super) device: String,
    /// Attrs the op does not declare, kept as given: those whose names
    /// start with `_` (TensorFlow's internal attrs, `_class`,
    /// `_output_shapes`...), and in a graph read from a GraphDef any other.
    pub(super) internal_attrs: Vec<(String, AttrValue)>,
    pub(super) outputs: Vec<OutputInfo>,
    /// A `Const` node's value, when small enough to keep for shape
    /// functions (see [`Node::constant_value`]); boxed, as few nodes have
    /// one.
    pub(super) value: Option<Box<Tensor>>,
}

impl fmt::Debug for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Node")
            .field("name", &self.name())
            .field("op", &self.op())
            .field("attrs", &self.attrs())
            .field("inputs", &self.inputs)
            .field("control_inputs", &self.control_inputs)
            .field("device", &self.device)
            .field("outputs", &self.outputs)
            .finish_non_exhaustive()
    }
}

impl Node {
    /// The node's id.
    pub fn id(&self) -> NodeId {
        self.id
    }

    /// The node's name, unique in its graph.
    pub fn name(&self) -> &str {
        self.instance.name()
    }

    /// The op's name.
    pub fn op(&self) -> &str {
        &self.op.name
    }

    /// The op's definition.
    pub fn op_def(&self) -> &Arc<OpDef> {
        &self.op
    }

    /// The op instance: every attr decided (inferred, given or defaulted),
    /// the input and output dtypes, named as the node.
    pub fn instance(&self) -> &OpInstance {
        &self.instance
    }

    /// Every attr the op declares, with its value, in the op's order.
    pub fn attrs(&self) -> &[(String, AttrValue)] {
        self.instance.attrs()
    }

    /// The value of attr `name` (declared or internal).
    pub fn attr(&self, name: &str) -> Option<&AttrValue> {
        self.instance.attr(name).or_else(|| {
            self.internal_attrs
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v)
        })
    }

    /// The attrs the op does not declare, kept as given so that a graph
    /// read from a file writes them back: those whose names start with `_`
    /// (TensorFlow's internal attrs), and, in a graph read from a
    /// GraphDef, any other (TensorFlow's importer keeps an attr the op
    /// does not have, as a newer producer may write, and ignores it).
    pub fn internal_attrs(&self) -> &[(String, AttrValue)] {
        &self.internal_attrs
    }

    /// The data inputs, flattened: a list arg contributes one per tensor.
    pub fn inputs(&self) -> &[Output] {
        &self.inputs
    }

    /// The positions in [`inputs`](Self::inputs) of the op's input arg
    /// `arg` (by index in the op's definition).
    pub fn input_arg_range(&self, arg: usize) -> Option<Range<usize>> {
        self.instance.input_arg_range(arg)
    }

    /// The nodes that must run before this one, though it reads none of
    /// their outputs.
    pub fn control_inputs(&self) -> &[NodeId] {
        &self.control_inputs
    }

    /// The device the node asked for, as written (`/device:CPU:0`); empty
    /// if none.
    pub fn device(&self) -> &str {
        &self.device
    }

    /// The outputs' dtypes and inferred shapes, flattened.
    pub fn outputs(&self) -> &[OutputInfo] {
        &self.outputs
    }

    /// Output `index`; see [`outputs`](Self::outputs) for how many there are.
    pub fn output(&self, index: usize) -> Output {
        self.id.output(index)
    }

    /// The dtype of output `index`, if the node has it.
    pub fn output_dtype(&self, index: usize) -> Option<DType> {
        self.outputs.get(index).map(|o| o.dtype)
    }

    /// The inferred shape of output `index`, if the node has it.
    pub fn output_shape(&self, index: usize) -> Option<&PartialShape> {
        self.outputs.get(index).map(|o| &o.shape)
    }

    /// Whether the op is stateful: its runs are never merged or skipped
    /// (each run of a graph that needs it runs it exactly once).
    pub fn is_stateful(&self) -> bool {
        self.op.is_stateful
    }

    /// The value of a `Const` node, when it has at most
    /// [`KEPT_CONSTANT_ELEMENTS`](crate::KEPT_CONSTANT_ELEMENTS) elements:
    /// what shape functions of the nodes that read it see
    /// (`InferenceContext::input_tensor`). Larger constants (weights) are
    /// checked when added but not kept twice; shape functions never need
    /// their values.
    pub fn constant_value(&self) -> Option<&Tensor> {
        self.value.as_deref()
    }
}
