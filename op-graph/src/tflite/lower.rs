//! The walk from the requested outputs to a [`Model`]: which nodes are
//! needed, variables frozen, tensors and constants laid out, one operator
//! per op node (through the table in `builtins.rs`).

use std::collections::HashMap;

use op_core::error::quoted;
use op_core::shape_inference::PartialShape;
use op_core::{AttrValue, DType, Error, Result, Tensor, bf16, f16};
use op_lite::Model;
use op_lite::model::{
    Buffer, BuiltinOperator, BuiltinOptions, Operator, OperatorCode, Signature, Subgraph,
    TensorInfo, encode_strings, tflite_type,
};

use super::freeze::freeze;
use super::{ExportOptions, Source, builtins};
use crate::graph::{Graph, Node, Output};
use crate::session::OutputRef;

/// The schema version of the files written.
const SCHEMA_VERSION: u32 = 3;

/// The signature key the converter writes for a concrete function.
const SIGNATURE_KEY: &str = "serving_default";

pub(super) fn export(
    source: Source<'_>,
    outputs: &[OutputRef],
    options: &ExportOptions,
) -> Result<Model> {
    let outputs = outputs
        .iter()
        .map(|r| resolve(source.graph(), r))
        .collect::<Result<Vec<Output>>>()?;
    if outputs.is_empty() {
        return Err(Error::invalid_argument(
            "no outputs were requested: a model needs at least one",
        ));
    }
    // A misspelt op would silently keep nothing custom.
    for op in &options.keep_custom {
        source.graph().registry().op(op).map_err(|e| {
            e.with_context(format!("ExportOptions::keep_custom names {}", quoted(op)))
        })?;
    }
    let (graph, outputs) = freeze(source, &outputs)?;
    let mut lowering = Lowering::new(&graph, &outputs, options);
    for node in graph.nodes() {
        lowering.node(node).map_err(|e| {
            e.with_context(format!("node {} (op {})", quoted(node.name()), node.op()))
        })?;
    }
    lowering.finish(&outputs)
}

fn resolve(graph: &Graph, output: &OutputRef) -> Result<Output> {
    match output {
        OutputRef::Name(name) => graph
            .find_output(name)
            .map_err(|e| e.with_context(format!("output {}", quoted(name)))),
        OutputRef::Output(o) => graph.check_output(*o).map(|()| *o).map_err(|e| {
            e.with_context(format!(
                "output {}",
                quoted(&graph.tensor_name(*o).to_string())
            ))
        }),
    }
}

/// A model being built: the one subgraph's tensors and operators, the
/// operator codes and buffers, and where each graph output went.
pub(super) struct Lowering<'g> {
    graph: &'g Graph,
    options: &'g ExportOptions,
    subgraph: Subgraph,
    operator_codes: Vec<OperatorCode>,
    buffers: Vec<Buffer>,
    /// The tensor of each graph output exported so far.
    tensors: HashMap<Output, usize>,
    /// The value of each output that is a constant (`Const`, a frozen
    /// variable read), made a tensor only when an operator reads it.
    constants: HashMap<Output, Tensor>,
    /// The int32 copies of constant index inputs (see
    /// [`Lowering::index_input`]).
    index_tensors: HashMap<Output, usize>,
    /// Outputs that are another output under a second name (`Identity`, or
    /// an activation fused into the op before it).
    aliases: HashMap<Output, Output>,
    /// How many inputs of nodes (and outputs of the model) read each
    /// output: an op may take in the next one only if that is its sole
    /// reader.
    readers: HashMap<Output, usize>,
    /// The operator that writes each tensor.
    producers: HashMap<usize, usize>,
}

impl<'g> Lowering<'g> {
    fn new(graph: &'g Graph, outputs: &[Output], options: &'g ExportOptions) -> Self {
        let mut readers = HashMap::new();
        for &output in graph.nodes().iter().flat_map(|n| n.inputs()).chain(outputs) {
            *readers.entry(output).or_insert(0) += 1;
        }
        Lowering {
            graph,
            options,
            subgraph: Subgraph {
                name: "main".into(),
                ..Subgraph::default()
            },
            operator_codes: Vec::new(),
            // Buffer 0 is empty by convention: tensors without data name it.
            buffers: vec![Buffer::default()],
            tensors: HashMap::new(),
            constants: HashMap::new(),
            index_tensors: HashMap::new(),
            aliases: HashMap::new(),
            readers,
            producers: HashMap::new(),
        }
    }

    fn node(&mut self, node: &Node) -> Result<()> {
        match node.op() {
            "Placeholder" => {
                let tensor = self.output_tensor(node, 0)?;
                self.subgraph.inputs.push(tensor);
            }
            "Const" => {
                let value = match node.attr("value") {
                    Some(AttrValue::Tensor(value)) => Tensor::from_tensor_value(value)?,
                    _ => return Err(Error::internal("a Const node without a tensor value")),
                };
                self.constants.insert(node.output(0), value);
            }
            // A `PlaceholderWithDefault` passes its default: a model has no
            // optional inputs.
            "Identity" | "StopGradient" | "IdentityN" | "PlaceholderWithDefault" => {
                // Kept one link at a time (not resolved here), so that a
                // fusion sees every output on the way and how often each
                // is read.
                for (k, &input) in node.inputs().iter().enumerate() {
                    self.aliases.insert(node.output(k), input);
                }
            }
            _ => builtins::lower(self, node)?,
        }
        Ok(())
    }

    fn finish(mut self, outputs: &[Output]) -> Result<Model> {
        let mut signature = Signature {
            key: SIGNATURE_KEY.into(),
            subgraph: 0,
            ..Signature::default()
        };
        for &t in &self.subgraph.inputs {
            signature
                .inputs
                .push((self.subgraph.tensors[t].name.clone(), t));
        }
        for &output in outputs {
            let tensor = self.input_tensor(output).map_err(|e| {
                e.with_context(format!(
                    "output {}",
                    quoted(&self.graph.tensor_name(output).to_string())
                ))
            })?;
            self.subgraph.outputs.push(tensor);
            signature
                .outputs
                .push((self.graph.tensor_name(output).to_string(), tensor));
        }
        let model = Model {
            version: SCHEMA_VERSION,
            description: self.options.description.clone(),
            operator_codes: self.operator_codes,
            subgraphs: vec![self.subgraph],
            buffers: self.buffers,
            signatures: vec![signature],
        };
        model.validate()?;
        Ok(model)
    }

    /// Whether bias additions and activations are to be fused into the ops
    /// before them.
    pub(super) fn fuses(&self) -> bool {
        self.options.fuse
    }

    /// The operator that writes `output` and its tensor, when `output` is
    /// read by one node alone (and is not a model output), so that the
    /// operator may take in that node. An output that stands for another
    /// (an `Identity`, an op fused already) qualifies when every output on
    /// the way is read once.
    pub(super) fn sole_producer(&self, output: Output) -> Option<(usize, usize)> {
        let mut output = output;
        loop {
            if self.readers.get(&output) != Some(&1) {
                return None;
            }
            match self.aliases.get(&output) {
                Some(&next) => output = next,
                None => break,
            }
        }
        let tensor = *self.tensors.get(&output)?;
        Some((*self.producers.get(&tensor)?, tensor))
    }

    /// Operator `index`, and its builtin code.
    pub(super) fn operator_mut(&mut self, index: usize) -> (BuiltinOperator, &mut Operator) {
        let operator = &mut self.subgraph.operators[index];
        (self.operator_codes[operator.opcode_index].builtin, operator)
    }

    /// The shape of `output` if the graph knows all of it.
    pub(super) fn known_shape(&self, output: Output) -> Result<Option<Vec<usize>>> {
        let shape = self.graph.output_shape(output)?;
        Ok(shape
            .0
            .as_ref()
            .and_then(|dims| dims.iter().copied().collect::<Option<Vec<usize>>>()))
    }

    /// The shape of tensor `t`.
    pub(super) fn tensor_shape(&self, t: usize) -> &[usize] {
        &self.subgraph.tensors[t].shape
    }

    /// Makes `node`'s output 0 the tensor of `into` (an output that an
    /// operator now computes with `node` fused in), renamed after `node`
    /// as the converter names fused tensors.
    pub(super) fn fuse_into(&mut self, node: &Node, into: Output, tensor: usize) {
        self.aliases.insert(node.output(0), into);
        self.subgraph.tensors[tensor].name = self.graph.tensor_name(node.output(0)).to_string();
    }

    /// Whether `op` is to stay a custom op though it has a builtin.
    pub(super) fn keeps_custom(&self, op: &str) -> bool {
        self.options.keep_custom.iter().any(|k| k == op)
    }

    /// `output`, or the output it is another name for.
    fn resolve(&self, output: Output) -> Output {
        let mut output = output;
        while let Some(&next) = self.aliases.get(&output) {
            output = next;
        }
        output
    }

    /// The value of `output` if it is a constant.
    pub(super) fn constant(&self, output: Output) -> Option<&Tensor> {
        self.constants.get(&self.resolve(output))
    }

    /// The value of input `i` of `node`, which the builtin needs as a
    /// constant (`what` says what it is, for the error).
    pub(super) fn constant_input(&self, node: &Node, i: usize, what: &str) -> Result<&Tensor> {
        let input = node.inputs()[i];
        self.constant(input).ok_or_else(|| {
            Error::unimplemented(format!(
                "its {what} (input {i}, {}) is computed at run time; TensorFlow Lite needs it \
                 as a constant",
                quoted(&self.graph.tensor_name(input).to_string())
            ))
        })
    }

    /// The tensor holding `output`: exported by an earlier node, or a
    /// constant, made a tensor now.
    pub(super) fn input_tensor(&mut self, output: Output) -> Result<usize> {
        let output = self.resolve(output);
        if let Some(&t) = self.tensors.get(&output) {
            return Ok(t);
        }
        let Some(value) = self.constants.get(&output) else {
            return Err(Error::internal(format!(
                "{} is read before it is exported",
                quoted(&self.graph.tensor_name(output).to_string())
            )));
        };
        let name = self.graph.tensor_name(output).to_string();
        let t = self.add_constant(name, value.clone())?;
        self.tensors.insert(output, t);
        Ok(t)
    }

    /// The tensor of input `i` of `node`, which TensorFlow Lite reads as
    /// indices (a shape, a permutation, axes, paddings): an int64 constant
    /// is written as int32, the only index type some builtins take
    /// (`RESHAPE`, `MEAN`, `TRANSPOSE`).
    pub(super) fn index_input(&mut self, node: &Node, i: usize) -> Result<usize> {
        let input = self.resolve(node.inputs()[i]);
        match self.constants.get(&input) {
            Some(value) if value.dtype() == DType::I64 => {
                if let Some(&t) = self.index_tensors.get(&input) {
                    return Ok(t);
                }
                let values = value
                    .as_slice::<i64>()?
                    .iter()
                    .map(|&v| i32::try_from(v))
                    .collect::<std::result::Result<Vec<i32>, _>>()
                    .map_err(|_| {
                        Error::invalid_argument(format!(
                            "input {i} holds an index beyond int32, which TensorFlow Lite reads it as"
                        ))
                    })?;
                let value = Tensor::from_vec(value.dims(), values)?;
                let name = format!("{}/int32", self.graph.tensor_name(input));
                let t = self.add_constant(name, value)?;
                self.index_tensors.insert(input, t);
                Ok(t)
            }
            _ => self.input_tensor(input),
        }
    }

    /// The tensors of every input of `node`.
    pub(super) fn input_tensors(&mut self, node: &Node) -> Result<Vec<Option<usize>>> {
        node.inputs()
            .iter()
            .map(|&o| self.input_tensor(o).map(Some))
            .collect()
    }

    /// A new tensor for output `k` of `node`, with its dtype and inferred
    /// shape.
    pub(super) fn output_tensor(&mut self, node: &Node, k: usize) -> Result<usize> {
        let output = node.output(k);
        let dtype = self.graph.output_dtype(output)?;
        let (shape, shape_signature) = dims(self.graph.output_shape(output)?).map_err(|e| {
            let e = match unknown_rank_cause(self.graph, output) {
                Some(cause) => Error::new(e.code(), format!("{}: {cause}", e.message())),
                None => e,
            };
            e.with_context(format!(
                "output {}",
                quoted(&self.graph.tensor_name(output).to_string())
            ))
        })?;
        let name = self.graph.tensor_name(output).to_string();
        let t = self.add_tensor(name, dtype, shape, shape_signature, 0)?;
        self.tensors.insert(output, t);
        Ok(t)
    }

    /// New tensors for every output of `node`.
    pub(super) fn output_tensors(&mut self, node: &Node) -> Result<Vec<usize>> {
        (0..node.outputs().len())
            .map(|k| self.output_tensor(node, k))
            .collect()
    }

    /// A constant tensor named `name` holding `value`, in a buffer of its
    /// own.
    pub(super) fn add_constant(&mut self, name: String, value: Tensor) -> Result<usize> {
        let data = tensor_bytes(&value)
            .map_err(|e| e.with_context(format!("constant {}", quoted(&name))))?;
        self.buffers.push(Buffer { data });
        let buffer = self.buffers.len() - 1;
        self.add_tensor(name, value.dtype(), value.dims().to_vec(), None, buffer)
    }

    fn add_tensor(
        &mut self,
        name: String,
        dtype: DType,
        shape: Vec<usize>,
        shape_signature: Option<Vec<i32>>,
        buffer: usize,
    ) -> Result<usize> {
        // TensorFlow Lite has RESOURCE and VARIANT codes, but nothing this
        // framework makes of one means anything in another process.
        if tflite_type(dtype).is_none() || matches!(dtype, DType::Resource | DType::Variant) {
            return Err(Error::unimplemented(format!(
                "tensor {} is {dtype}, which a TensorFlow Lite model cannot hold",
                quoted(&name)
            )));
        }
        self.subgraph.tensors.push(TensorInfo {
            name,
            dtype,
            shape,
            shape_signature,
            buffer,
            quantization: None,
            is_variable: false,
        });
        Ok(self.subgraph.tensors.len() - 1)
    }

    /// Appends an operator running `code` (a builtin, or a custom op's
    /// name with [`BuiltinOperator::CUSTOM`]).
    pub(super) fn add_operator(
        &mut self,
        code: OperatorCode,
        inputs: Vec<Option<usize>>,
        outputs: Vec<usize>,
        builtin_options: BuiltinOptions,
        custom_options: Vec<u8>,
    ) {
        let opcode_index = match self.operator_codes.iter().position(|c| *c == code) {
            Some(index) => index,
            None => {
                self.operator_codes.push(code);
                self.operator_codes.len() - 1
            }
        };
        for &t in &outputs {
            self.producers.insert(t, self.subgraph.operators.len());
        }
        self.subgraph.operators.push(Operator {
            opcode_index,
            inputs,
            outputs,
            intermediates: Vec::new(),
            builtin_options,
            custom_options,
        });
    }

    /// `node` as a custom op of its own name: its inputs and outputs as
    /// they are, its attrs in the custom options.
    pub(super) fn custom(&mut self, node: &Node) -> Result<()> {
        let inputs = self.input_tensors(node)?;
        let outputs = self.output_tensors(node)?;
        let custom_options = custom_options(node)?;
        let code = OperatorCode {
            builtin: BuiltinOperator::CUSTOM,
            custom_name: Some(node.op().to_owned()),
            version: 1,
        };
        self.add_operator(code, inputs, outputs, BuiltinOptions::None, custom_options);
        Ok(())
    }
}

/// The custom options of `node` as a custom op: its attrs, as a flexbuffer
/// map (op-lite's attrs codec).
fn custom_options(node: &Node) -> Result<Vec<u8>> {
    if node.attrs().is_empty() {
        // What the converter writes for a custom op without attrs: nothing.
        return Ok(Vec::new());
    }
    op_lite::attrs::encode_attrs(node.attrs())
}

/// Why `output`'s rank is unknown, found by walking up from it to the first
/// node whose inputs all have known ranks but whose output does not: a
/// placeholder without a shape, an op without a shape function, or a shape
/// function that gives an unknown rank. `None` if nothing upstream says.
fn unknown_rank_cause(graph: &Graph, output: Output) -> Option<String> {
    let has_unknown_rank = |o: Output| graph.output_shape(o).is_ok_and(|s| s.0.is_none());
    let mut node = graph.node(output.node()).ok()?;
    // Each step goes to an input, which comes before its node: the walk ends.
    while let Some(&input) = node.inputs().iter().find(|&&i| has_unknown_rank(i)) {
        node = graph.node(input.node()).ok()?;
    }
    let (name, op) = (quoted(node.name()), quoted(node.op()));
    if node.op() == "Placeholder" {
        return Some(format!(
            "it comes from placeholder {name}, which has no shape: give the placeholder a shape"
        ));
    }
    let entry = graph.registry().op(node.op()).ok()?;
    Some(match entry.shape_fn() {
        None => format!(
            "it comes from node {name}, whose op {op} has no shape function, so its outputs' \
             shapes are unknown: give the op one (`shape_fn = ...` on `#[register_op]`, \
             `shape = ...` on `#[op]`)"
        ),
        Some(_) => format!(
            "it comes from node {name}, whose op {op}'s shape function gives an unknown rank \
             for these inputs"
        ),
    })
}

/// A shape as a `.tflite` file holds it: the dims, an unknown dim as 1, and
/// when any is unknown the signature with -1 there (as the converter writes
/// a dynamic batch).
fn dims(shape: &PartialShape) -> Result<(Vec<usize>, Option<Vec<i32>>)> {
    let Some(dims) = &shape.0 else {
        return Err(Error::unimplemented(
            "its rank is unknown; a TensorFlow Lite tensor has a known rank",
        ));
    };
    let shape = dims.iter().map(|d| d.unwrap_or(1)).collect();
    if dims.iter().all(Option::is_some) {
        return Ok((shape, None));
    }
    let signature = dims
        .iter()
        .map(|d| match d {
            None => Ok(-1),
            Some(d) => i32::try_from(*d).map_err(|_| {
                Error::unimplemented(format!("dimension {d} is beyond what a .tflite file holds"))
            }),
        })
        .collect::<Result<Vec<i32>>>()?;
    Ok((shape, Some(signature)))
}

/// A tensor's elements as a TensorFlow Lite buffer holds them:
/// little-endian, row-major; strings in TensorFlow Lite's string encoding.
fn tensor_bytes(tensor: &Tensor) -> Result<Vec<u8>> {
    macro_rules! le_bytes {
        ($($dtype:ident => $ty:ty),* $(,)?) => {
            match tensor.dtype() {
                $(DType::$dtype => Ok(tensor
                    .as_slice::<$ty>()?
                    .iter()
                    .flat_map(|v| v.to_le_bytes())
                    .collect()),)*
                DType::Bool => Ok(tensor.as_slice::<bool>()?.iter().map(|&b| u8::from(b)).collect()),
                DType::String => {
                    let items = tensor.as_slice::<Vec<u8>>()?;
                    encode_strings(items).ok_or_else(|| {
                        Error::invalid_argument("the strings are too long for a .tflite buffer")
                    })
                }
                other => Err(Error::unimplemented(format!(
                    "{other} constants cannot be written to a .tflite file"
                ))),
            }
        };
    }
    le_bytes! {
        F32 => f32, F64 => f64, F16 => f16, BF16 => bf16,
        I8 => i8, I16 => i16, I32 => i32, I64 => i64,
        U8 => u8, U16 => u16, U32 => u32, U64 => u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_are_written_little_endian_and_strings_in_tflite_string_encoding() {
        let bytes = |t: Tensor| tensor_bytes(&t).unwrap();
        assert_eq!(
            bytes(Tensor::from_vec([2], vec![1.0f32, -2.0]).unwrap()),
            [0, 0, 128, 63, 0, 0, 0, 192]
        );
        assert_eq!(bytes(Tensor::scalar(-2i64)), (-2i64).to_le_bytes());
        assert_eq!(bytes(Tensor::scalar(f16::from_f32(1.0))), [0, 60]);
        assert_eq!(
            bytes(Tensor::from_vec([3], vec![true, false, true]).unwrap()),
            [1, 0, 1]
        );
        assert_eq!(
            bytes(Tensor::from_vec([0], Vec::<u16>::new()).unwrap()),
            [] as [u8; 0]
        );
        let strings = Tensor::strings([2], [&b"ab"[..], b""]).unwrap();
        assert_eq!(bytes(strings), encode_strings(&[&b"ab"[..], b""]).unwrap());
        let error = tensor_bytes(&Tensor::scalar(op_core::Complex::new(1.0f32, 0.0))).unwrap_err();
        assert!(
            error
                .message()
                .contains("complex64 constants cannot be written"),
            "{error}"
        );
    }

    #[test]
    fn unknown_dims_are_1_in_the_shape_and_minus_1_in_the_signature() {
        let known = PartialShape::known(&[2, 3]);
        assert_eq!(dims(&known).unwrap(), (vec![2, 3], None));
        let batch = PartialShape(Some(vec![None, Some(4)]));
        assert_eq!(dims(&batch).unwrap(), (vec![1, 4], Some(vec![-1, 4])));
        let error = dims(&PartialShape::unknown()).unwrap_err();
        assert!(error.message().contains("rank is unknown"), "{error}");
    }
}
