//! Writing a [`Model`] as a `.tflite` file, the way TensorFlow's converter
//! writes one: identifier `TFL3`, schema version 3, both builtin code
//! fields (codes above 127 in `builtin_code`, with 127 in
//! `deprecated_builtin_code`), buffer data aligned to 16 bytes.
//!
//! A flatbuffer cannot pass 2 GiB. When the buffers would take the file past
//! that, they go after the flatbuffer, each at a 16-byte-aligned offset
//! named by its `offset` and `size` fields, as TensorFlow writes large
//! models; [`Model::from_bytes`] reads both layouts.

use flatbuffers::{FlatBufferBuilder, Push, PushAlignment, WIPOffset};
use op_core::{Error, Result};

use super::check::{operator_place, tensor_place};
use super::read::SCHEMA_VERSION;
use super::{Model, Operator, Subgraph, TensorInfo, options, tflite_type};
use crate::schema as fb;

/// The most a flatbuffer can hold (its offsets are 32-bit and signed).
const FLATBUFFER_LIMIT: usize = i32::MAX as usize;

/// The alignment of buffer data (`force_align: 16` in `schema.fbs`), inside
/// the flatbuffer and after it.
const DATA_ALIGNMENT: usize = 16;

impl Model {
    /// Writes the model as the bytes of a `.tflite` file that TensorFlow
    /// Lite (and [`Model::from_bytes`]) reads, after checking it with
    /// [`Model::validate`]. The file says schema version 3 whatever
    /// [`Model::version`] is; everything else reads back equal.
    ///
    /// ```
    /// use op_core::DType;
    /// use op_lite::Model;
    /// use op_lite::model::{Buffer, BuiltinOperator, BuiltinOptions, Operator, OperatorCode, Subgraph, TensorInfo};
    ///
    /// let tensor = |name: &str| TensorInfo {
    ///     name: name.into(),
    ///     dtype: DType::F32,
    ///     shape: vec![4],
    ///     shape_signature: None,
    ///     buffer: 0,
    ///     quantization: None,
    ///     is_variable: false,
    /// };
    /// let model = Model {
    ///     version: 3,
    ///     operator_codes: vec![OperatorCode { builtin: BuiltinOperator::GELU, custom_name: None, version: 1 }],
    ///     subgraphs: vec![Subgraph {
    ///         tensors: vec![tensor("x"), tensor("y")],
    ///         inputs: vec![0],
    ///         outputs: vec![1],
    ///         operators: vec![Operator {
    ///             opcode_index: 0,
    ///             inputs: vec![Some(0)],
    ///             outputs: vec![1],
    ///             intermediates: vec![],
    ///             builtin_options: BuiltinOptions::Gelu { approximate: true },
    ///             custom_options: vec![],
    ///         }],
    ///         ..Subgraph::default()
    ///     }],
    ///     buffers: vec![Buffer::default()],
    ///     ..Model::default()
    /// };
    /// let bytes = model.to_bytes()?;
    /// assert_eq!(&bytes[4..8], b"TFL3");
    /// assert_eq!(Model::from_bytes(&bytes)?, model);
    /// # Ok::<(), op_core::Error>(())
    /// ```
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        self.validate()?;
        let tables = size_bound(self, false);
        if tables > FLATBUFFER_LIMIT {
            return Err(Error::unimplemented(format!(
                "the model's tables alone may take {tables} bytes, more than the 2 GiB a flatbuffer can hold"
            )));
        }
        let placement = if size_bound(self, true) <= FLATBUFFER_LIMIT {
            Placement::Inside
        } else {
            Placement::After
        };
        write(self, placement)
    }
}

impl Model {
    /// Writes the model as [`Model::to_bytes`] does, but with every
    /// non-empty buffer after the flatbuffer (each at a 16-byte-aligned
    /// offset that its `offset` and `size` fields name), the layout that
    /// `to_bytes` and TensorFlow use for models past 2 GiB: for testing
    /// readers of large models on small ones.
    ///
    /// ```
    /// use op_lite::Model;
    ///
    /// let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/cnn.tflite"))?;
    /// let model = Model::from_bytes(&bytes)?;
    /// let after = model.to_bytes_with_buffers_after()?;
    /// assert_eq!(Model::from_bytes(&after)?, model);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to_bytes_with_buffers_after(&self) -> Result<Vec<u8>> {
        self.validate()?;
        write(self, Placement::After)
    }
}

/// Where buffer data goes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Placement {
    /// In the flatbuffer, each buffer's `data`.
    Inside,
    /// After the flatbuffer, named by each buffer's `offset` and `size`.
    After,
}

/// Writes a model that [`Model::validate`] passed (an index that does not
/// fit the file's integer is an error; others are written as they are, so
/// tests can make files with bad indices).
pub(super) fn write(model: &Model, placement: Placement) -> Result<Vec<u8>> {
    if placement == Placement::Inside {
        return build(model, None);
    }
    // The flatbuffer's size decides where the data goes, and the offsets
    // are in the flatbuffer: write it once with placeholders of the same
    // width to learn its size, then again with the real offsets.
    let placeholders = vec![u64::MAX; model.buffers.len()];
    let size = build(model, Some(&placeholders))?.len();
    let mut offsets = Vec::with_capacity(model.buffers.len());
    let mut end = size;
    for buffer in &model.buffers {
        let start = end.next_multiple_of(DATA_ALIGNMENT);
        offsets.push(start as u64);
        if !buffer.data.is_empty() {
            end = start.checked_add(buffer.data.len()).ok_or_else(|| {
                Error::unimplemented("the model's buffers take more bytes than fit in memory")
            })?;
        }
    }
    let mut file = build(model, Some(&offsets))?;
    if file.len() != size {
        return Err(Error::internal(format!(
            "the flatbuffer took {} bytes with its buffer offsets and {size} with placeholders",
            file.len()
        )));
    }
    file.resize(end, 0);
    for (buffer, &offset) in model.buffers.iter().zip(&offsets) {
        let start = offset as usize;
        file[start..start + buffer.data.len()].copy_from_slice(&buffer.data);
    }
    Ok(file)
}

/// The flatbuffer; with `offsets`, non-empty buffers name their data there
/// instead of holding it.
fn build(model: &Model, offsets: Option<&[u64]>) -> Result<Vec<u8>> {
    let mut fbb =
        FlatBufferBuilder::with_capacity(size_bound(model, offsets.is_none()).min(1 << 20));
    let buffers: Vec<_> = model
        .buffers
        .iter()
        .enumerate()
        .map(|(b, buffer)| {
            let mut args = fb::BufferArgs::default();
            if !buffer.data.is_empty() {
                match offsets {
                    Some(offsets) => {
                        args.offset = offsets[b];
                        args.size = buffer.data.len() as u64;
                    }
                    None => args.data = Some(aligned_data(&mut fbb, &buffer.data)),
                }
            }
            fb::Buffer::create(&mut fbb, &args)
        })
        .collect();
    let buffers = fbb.create_vector(&buffers);

    let mut codes = Vec::with_capacity(model.operator_codes.len());
    for code in &model.operator_codes {
        let custom_code = code
            .custom_name
            .as_deref()
            .map(|name| fbb.create_string(name));
        let args = fb::OperatorCodeArgs {
            // As TensorFlow writes them: the byte field saturates at 127
            // (PLACEHOLDER_FOR_GREATER_OP_CODES) for readers that know only it.
            deprecated_builtin_code: code.builtin.0.clamp(0, 127) as i8,
            custom_code,
            version: code.version,
            builtin_code: fb::BuiltinOperator(code.builtin.0),
        };
        codes.push(fb::OperatorCode::create(&mut fbb, &args));
    }
    let codes = fbb.create_vector(&codes);

    let mut subgraphs = Vec::with_capacity(model.subgraphs.len());
    for (s, subgraph) in model.subgraphs.iter().enumerate() {
        subgraphs.push(write_subgraph(&mut fbb, model, s, subgraph)?);
    }
    let subgraphs = fbb.create_vector(&subgraphs);

    let mut signatures = Vec::with_capacity(model.signatures.len());
    for (k, signature) in model.signatures.iter().enumerate() {
        let place = || format!("signature {k}");
        let mut maps = [Vec::new(), Vec::new()];
        for (list, map) in [&signature.inputs, &signature.outputs]
            .into_iter()
            .zip(&mut maps)
        {
            for (name, tensor) in list {
                let name = Some(fbb.create_string(name));
                let tensor_index = u32_index(*tensor, || format!("{}: tensor index", place()))?;
                map.push(fb::TensorMap::create(
                    &mut fbb,
                    &fb::TensorMapArgs { name, tensor_index },
                ));
            }
        }
        let [inputs, outputs] = maps;
        let args = fb::SignatureDefArgs {
            inputs: Some(fbb.create_vector(&inputs)),
            outputs: Some(fbb.create_vector(&outputs)),
            signature_key: Some(fbb.create_string(&signature.key)),
            subgraph_index: u32_index(signature.subgraph, || {
                format!("{}: subgraph index", place())
            })?,
        };
        signatures.push(fb::SignatureDef::create(&mut fbb, &args));
    }
    let signature_defs = (!signatures.is_empty()).then(|| fbb.create_vector(&signatures));

    let description = Some(fbb.create_string(&model.description));
    let args = fb::ModelArgs {
        version: SCHEMA_VERSION,
        operator_codes: Some(codes),
        subgraphs: Some(subgraphs),
        description,
        buffers: Some(buffers),
        signature_defs,
        ..Default::default()
    };
    let root = fb::Model::create(&mut fbb, &args);
    fb::finish_model_buffer(&mut fbb, root);
    Ok(fbb.finished_data().to_vec())
}

fn write_subgraph<'a>(
    fbb: &mut FlatBufferBuilder<'a>,
    model: &Model,
    s: usize,
    subgraph: &Subgraph,
) -> Result<WIPOffset<fb::SubGraph<'a>>> {
    let mut tensors = Vec::with_capacity(subgraph.tensors.len());
    for (t, tensor) in subgraph.tensors.iter().enumerate() {
        tensors.push(write_tensor(fbb, tensor).map_err(|message| {
            Error::invalid_argument(format!("{}: {message}", tensor_place(s, t, tensor)))
        })?);
    }
    let tensors = fbb.create_vector(&tensors);
    let inputs = int_indices(fbb, &subgraph.inputs, || format!("subgraph {s}: an input"))?;
    let outputs = int_indices(fbb, &subgraph.outputs, || {
        format!("subgraph {s}: an output")
    })?;
    let mut operators = Vec::with_capacity(subgraph.operators.len());
    for (o, op) in subgraph.operators.iter().enumerate() {
        let place = || operator_place(&model.operator_codes, s, o, op.opcode_index);
        operators.push(write_operator(fbb, model, op, &place)?);
    }
    let operators = fbb.create_vector(&operators);
    let name = Some(fbb.create_string(&subgraph.name));
    let args = fb::SubGraphArgs {
        tensors: Some(tensors),
        inputs: Some(inputs),
        outputs: Some(outputs),
        operators: Some(operators),
        name,
    };
    Ok(fb::SubGraph::create(fbb, &args))
}

fn write_tensor<'a>(
    fbb: &mut FlatBufferBuilder<'a>,
    tensor: &TensorInfo,
) -> Result<WIPOffset<fb::Tensor<'a>>, String> {
    let type_code = tflite_type(tensor.dtype)
        .ok_or_else(|| format!("{} has no TensorFlow Lite type", tensor.dtype))?;
    let dims = (tensor.shape.iter().enumerate())
        .map(|(d, &dim)| {
            i32::try_from(dim).map_err(|_| {
                format!(
                    "dimension {d} is {dim}, more than a .tflite file can hold ({})",
                    i32::MAX
                )
            })
        })
        .collect::<Result<Vec<i32>, String>>()?;
    let shape = Some(fbb.create_vector(&dims));
    let shape_signature = tensor
        .shape_signature
        .as_ref()
        .map(|signature| fbb.create_vector(signature));
    let name = Some(fbb.create_string(&tensor.name));
    let quantization = tensor.quantization.as_ref().map(|q| {
        let scale = Some(fbb.create_vector(&q.scale));
        let zero_point = Some(fbb.create_vector(&q.zero_point));
        (scale, zero_point, q.quantized_dimension)
    });
    let quantization = match quantization {
        Some((scale, zero_point, dimension)) => {
            let quantized_dimension = i32::try_from(dimension).map_err(|_| {
                format!("quantized dimension {dimension} is more than a .tflite file can hold")
            })?;
            let args = fb::QuantizationParametersArgs {
                scale,
                zero_point,
                quantized_dimension,
                ..Default::default()
            };
            Some(fb::QuantizationParameters::create(fbb, &args))
        }
        None => None,
    };
    let buffer = u32::try_from(tensor.buffer).map_err(|_| {
        format!(
            "buffer {} is more than a .tflite file can hold",
            tensor.buffer
        )
    })?;
    let args = fb::TensorArgs {
        shape,
        type_: fb::TensorType(type_code),
        buffer,
        name,
        quantization,
        is_variable: tensor.is_variable,
        shape_signature,
        // The shape is always known here: a scalar has rank 0, not an
        // unknown rank.
        has_rank: true,
        ..Default::default()
    };
    Ok(fb::Tensor::create(fbb, &args))
}

fn write_operator<'a>(
    fbb: &mut FlatBufferBuilder<'a>,
    model: &Model,
    op: &Operator,
    place: &dyn Fn() -> String,
) -> Result<WIPOffset<fb::Operator<'a>>> {
    let too_large = |what: &str| {
        Error::invalid_argument(format!(
            "{}: {what} is more than a .tflite file can hold",
            place()
        ))
    };
    let inputs = (op.inputs.iter())
        .map(|t| match t {
            None => Ok(-1),
            Some(t) => i32::try_from(*t).map_err(|_| too_large(&format!("input tensor {t}"))),
        })
        .collect::<Result<Vec<i32>>>()?;
    let inputs = Some(fbb.create_vector(&inputs));
    let outputs = Some(int_indices(fbb, &op.outputs, || {
        format!("{}: an output", place())
    })?);
    let intermediates = match op.intermediates.is_empty() {
        true => None,
        false => Some(int_indices(fbb, &op.intermediates, || {
            format!("{}: an intermediate", place())
        })?),
    };
    let custom_options =
        (!op.custom_options.is_empty()).then(|| fbb.create_vector(&op.custom_options));
    let code = model
        .operator_codes
        .get(op.opcode_index)
        .map_or(super::BuiltinOperator(-1), |code| code.builtin);
    let (builtin_options_type, builtin_options) = options::write(fbb, code, &op.builtin_options)
        .map_err(|error| Error::new(error.code(), format!("{}: {}", place(), error.message())))?;
    let args = fb::OperatorArgs {
        opcode_index: u32::try_from(op.opcode_index).map_err(|_| too_large("the opcode index"))?,
        inputs,
        outputs,
        builtin_options_type,
        builtin_options,
        custom_options,
        intermediates,
        ..Default::default()
    };
    Ok(fb::Operator::create(fbb, &args))
}

fn int_indices<'a>(
    fbb: &mut FlatBufferBuilder<'a>,
    indices: &[usize],
    what: impl Fn() -> String,
) -> Result<WIPOffset<flatbuffers::Vector<'a, i32>>> {
    let indices = indices
        .iter()
        .map(|&t| {
            i32::try_from(t).map_err(|_| {
                Error::invalid_argument(format!(
                    "{} is tensor {t}, more than a .tflite file can hold",
                    what()
                ))
            })
        })
        .collect::<Result<Vec<i32>>>()?;
    Ok(fbb.create_vector(&indices))
}

fn u32_index(index: usize, what: impl Fn() -> String) -> Result<u32> {
    u32::try_from(index).map_err(|_| {
        Error::invalid_argument(format!(
            "{} is {index}, more than a .tflite file can hold",
            what()
        ))
    })
}

/// One byte of buffer data. Its alignment makes `create_vector` start the
/// data at a multiple of 16 bytes from the start of the file, as
/// `force_align: 16` asks and as TensorFlow's writer does (the builder pads
/// the whole buffer to its largest alignment when it finishes).
#[derive(Copy, Clone)]
struct DataByte(u8);

impl Push for DataByte {
    type Output = u8;

    // The contract (`dst` is at least `size()` = 1 byte long) holds, and
    // nothing here relies on it: indexing checks the length.
    unsafe fn push(&self, dst: &mut [u8], _written_len: usize) {
        dst[0] = self.0;
    }

    fn alignment() -> PushAlignment {
        PushAlignment::new(DATA_ALIGNMENT)
    }
}

fn aligned_data<'a>(
    fbb: &mut FlatBufferBuilder<'a>,
    data: &[u8],
) -> WIPOffset<flatbuffers::Vector<'a, u8>> {
    let bytes: Vec<DataByte> = data.iter().map(|&b| DataByte(b)).collect();
    fbb.create_vector(&bytes)
}

/// An upper bound on the flatbuffer's size, with or without the buffers'
/// data inside: the strings and vectors' bytes, each with a length and
/// padding, and a generous allowance per table and vtable. Saturates
/// instead of overflowing.
fn size_bound(model: &Model, with_data: bool) -> usize {
    const TABLE: usize = 256;
    let string = |s: &str| s.len().saturating_add(16);
    let vector = |count: usize, size: usize| count.saturating_mul(size).saturating_add(32);
    let mut total = TABLE.saturating_add(string(&model.description));
    for buffer in &model.buffers {
        total = total.saturating_add(TABLE);
        if with_data {
            total = total.saturating_add(vector(buffer.data.len(), 1));
        }
    }
    for code in &model.operator_codes {
        total = total
            .saturating_add(TABLE)
            .saturating_add(string(code.custom_name.as_deref().unwrap_or("")));
    }
    for subgraph in &model.subgraphs {
        total = total
            .saturating_add(TABLE)
            .saturating_add(string(&subgraph.name))
            .saturating_add(vector(subgraph.inputs.len() + subgraph.outputs.len(), 4));
        for tensor in &subgraph.tensors {
            let quantization = tensor.quantization.as_ref().map_or(0, |q| {
                TABLE
                    .saturating_add(vector(q.scale.len(), 4))
                    .saturating_add(vector(q.zero_point.len(), 8))
            });
            total = total
                .saturating_add(TABLE)
                .saturating_add(string(&tensor.name))
                .saturating_add(vector(tensor.shape.len(), 8))
                .saturating_add(quantization);
        }
        for op in &subgraph.operators {
            let options = match &op.builtin_options {
                super::BuiltinOptions::Reshape { new_shape: dims }
                | super::BuiltinOptions::Squeeze { squeeze_dims: dims } => vector(dims.len(), 4),
                _ => 0,
            };
            total = total
                .saturating_add(2 * TABLE)
                .saturating_add(vector(
                    op.inputs.len() + op.outputs.len() + op.intermediates.len(),
                    4,
                ))
                .saturating_add(vector(op.custom_options.len(), 1))
                .saturating_add(options);
        }
    }
    for signature in &model.signatures {
        total = total
            .saturating_add(TABLE)
            .saturating_add(string(&signature.key));
        for (name, _) in signature.inputs.iter().chain(&signature.outputs) {
            total = total.saturating_add(TABLE).saturating_add(string(name));
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODELS: [(&str, &[u8]); 4] = [
        (
            "sin_custom",
            include_bytes!("../../tests/data/sin_custom.tflite"),
        ),
        (
            "sin_builtin",
            include_bytes!("../../tests/data/sin_builtin.tflite"),
        ),
        ("cnn", include_bytes!("../../tests/data/cnn.tflite")),
        ("mlp", include_bytes!("../../tests/data/mlp.tflite")),
    ];

    #[test]
    fn buffers_written_after_the_flatbuffer_read_back_equal() {
        for (name, bytes) in MODELS {
            let model = Model::from_bytes(bytes).unwrap();
            let file = write(&model, Placement::After).unwrap();
            let read = Model::from_bytes(&file).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(read, model, "{name}");
            let root = fb::root_as_model(&file).unwrap();
            let mut previous_end = 0;
            for (b, buffer) in root.buffers().unwrap().iter().enumerate() {
                assert!(
                    buffer.data().is_none(),
                    "{name}: buffer {b} holds data inside"
                );
                if buffer.size() > 0 {
                    assert_eq!(buffer.offset() % 16, 0, "{name}: buffer {b}");
                    assert!(
                        buffer.offset() as usize >= previous_end,
                        "{name}: buffer {b} overlaps"
                    );
                    previous_end = (buffer.offset() + buffer.size()) as usize;
                }
            }
            assert_eq!(
                previous_end,
                file.len(),
                "{name}: the last buffer ends the file"
            );
        }
    }

    #[test]
    fn buffer_data_inside_the_flatbuffer_starts_at_a_multiple_of_16() {
        for (name, bytes) in MODELS {
            let file = Model::from_bytes(bytes).unwrap().to_bytes().unwrap();
            let root = fb::root_as_model(&file).unwrap();
            let base = file.as_ptr() as usize;
            for buffer in root.buffers().unwrap().iter() {
                if let Some(data) = buffer.data().filter(|d| !d.is_empty()) {
                    assert_eq!((data.bytes().as_ptr() as usize - base) % 16, 0, "{name}");
                }
            }
        }
    }

    #[test]
    fn the_size_bound_is_above_the_size_written() {
        for (name, bytes) in MODELS {
            let model = Model::from_bytes(bytes).unwrap();
            let inside = write(&model, Placement::Inside).unwrap().len();
            assert!(
                size_bound(&model, true) >= inside,
                "{name}: {} < {inside}",
                size_bound(&model, true)
            );
            let placeholders = vec![u64::MAX; model.buffers.len()];
            let tables = build(&model, Some(&placeholders)).unwrap().len();
            assert!(size_bound(&model, false) >= tables, "{name}");
        }
    }

    #[test]
    fn builtin_codes_above_127_are_written_with_127_in_the_byte_field() {
        let model = Model::from_bytes(MODELS[3].1).unwrap();
        let file = model.to_bytes().unwrap();
        let root = fb::root_as_model(&file).unwrap();
        let fields: Vec<(i8, i32)> = root
            .operator_codes()
            .unwrap()
            .iter()
            .map(|code| (code.deprecated_builtin_code(), code.builtin_code().0))
            .collect();
        assert_eq!(fields, [(9, 9), (28, 28), (14, 14), (0, 0), (127, 150)]);
        assert_eq!(root.version(), 3);
        assert!(root.buffers().unwrap().get(0).data().is_none());
    }
}
