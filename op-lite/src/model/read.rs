//! Reading a `.tflite` file into a [`Model`].
//!
//! Three steps, each of which can only fail with an error: the identifier
//! and the flatbuffers verifier (every offset, length and string inside the
//! file, with limits on tables and depth so that a small file cannot make
//! the verifier work forever), then the translation into the model types
//! (what the encoding can get wrong: a negative dimension, an unknown type
//! code, a buffer stored outside the flatbuffer that lies outside the file),
//! then [`Model::validate`] (what the model can get wrong: indices out of
//! range, buffers of the wrong size).
//!
//! Every element the model holds was read from the file, and the bytes the
//! reader copies are bounded by a small multiple of the file's size, so a
//! crafted file cannot make it allocate more than that.

use flatbuffers::{ForwardsUOffset, Vector, VerifierOptions};
use op_core::error::quoted;
use op_core::{Error, Result};

use super::check::operator_place;
use super::{
    Buffer, BuiltinOperator, Model, Operator, OperatorCode, Quantization, Signature, Subgraph,
    TensorInfo, dtype_from_tflite, options,
};
use crate::schema as fb;

/// The schema version of every file TensorFlow Lite reads today.
pub(super) const SCHEMA_VERSION: u32 = 3;

/// The file identifier, bytes 4 to 8 of every `.tflite` file.
pub(super) const IDENTIFIER: &[u8; 4] = b"TFL3";

impl Model {
    /// Reads a model from the bytes of a `.tflite` file (TensorFlow Lite's
    /// flatbuffer, identifier `TFL3`, schema version 3), checking every
    /// index, length and size in it (see [`Model::validate`]). Buffers that
    /// large models keep after the flatbuffer (`offset` and `size`) are read
    /// from `bytes` too.
    ///
    /// Errors are `InvalidArgument` for a malformed file and
    /// `Unimplemented` for what is valid but not supported here (the `INT4`
    /// type, sparse tensors, shuffled FULLY_CONNECTED weights, StableHLO
    /// options, other schema versions); the message names the place:
    /// "subgraph 0, operator 3 (CONV_2D): input 1 is tensor 57, but the
    /// subgraph has 40 tensors".
    ///
    /// ```
    /// use op_lite::Model;
    /// use op_lite::model::{Activation, BuiltinOperator, BuiltinOptions};
    ///
    /// let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/mlp.tflite"))?;
    /// let model = Model::from_bytes(&bytes)?;
    /// let main = &model.subgraphs[0];
    /// let first = &main.operators[0];
    /// assert_eq!(model.operator_codes[first.opcode_index].builtin, BuiltinOperator::FULLY_CONNECTED);
    /// assert_eq!(
    ///     first.builtin_options,
    ///     BuiltinOptions::FullyConnected { activation: Activation::Relu, keep_num_dims: false },
    /// );
    ///
    /// let error = Model::from_bytes(&bytes[..100]).unwrap_err();
    /// assert_eq!(error.code(), op_core::Code::InvalidArgument);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Model> {
        let model = Reader::new(bytes).model(verify(bytes)?)?;
        model.validate()?;
        Ok(model)
    }

    /// Reads the `.tflite` file at `path` as [`Model::from_bytes`] reads
    /// its bytes; errors name the file. The file is read through
    /// [`op_core::file::read_regular_file`]: a FIFO, a device or a
    /// directory is a `FailedPrecondition` error at once, and at most the
    /// file's size is read.
    ///
    /// ```
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/mlp.tflite");
    /// let model = op_lite::Model::from_file(path)?;
    /// assert_eq!(model.subgraphs.len(), 1);
    /// assert!(op_lite::Model::from_file("/dev/zero").is_err());
    /// # Ok::<(), op_core::Error>(())
    /// ```
    pub fn from_file(path: impl AsRef<std::path::Path>) -> Result<Model> {
        let path = path.as_ref();
        let bytes = op_core::file::read_regular_file(path)?;
        Model::from_bytes(&bytes).map_err(|e| e.with_context(format!("reading {}", path.display())))
    }
}

/// Checks the identifier, then runs the flatbuffers verifier.
fn verify(bytes: &[u8]) -> Result<fb::Model<'_>> {
    let Some(identifier) = bytes.get(4..8) else {
        return Err(Error::invalid_argument(format!(
            "not a .tflite file: it has {} bytes, fewer than the 8 of a root offset and the identifier \"TFL3\"",
            bytes.len()
        )));
    };
    if identifier != IDENTIFIER {
        return Err(Error::invalid_argument(format!(
            "not a .tflite file: its identifier (bytes 4 to 8) is {}, expected \"TFL3\"",
            quoted(identifier)
        )));
    }
    // A table takes at least 4 bytes, and a file that shares none visits
    // each byte about once (vtables, which tables share, a few times): the
    // limits let every real file through and stop a small one whose offsets
    // point back at the same tables from being expanded into a huge tree.
    let options = VerifierOptions {
        max_depth: 64,
        max_tables: (bytes.len() / 4).saturating_add(1024),
        max_apparent_size: bytes.len().saturating_mul(4).saturating_add(1 << 20),
        ignore_missing_null_terminator: false,
    };
    fb::root_as_model_with_opts(&options, bytes).map_err(|error| {
        Error::invalid_argument(format!(
            "malformed .tflite file: {}",
            error.to_string().trim_end()
        ))
    })
}

/// What a type code that has no dtype is: unsupported (`INT4`) or unknown.
pub(super) fn type_problem(code: i8) -> String {
    match fb::TensorType(code).variant_name() {
        Some(name) => format!("type {name} is not supported"),
        None => format!("unknown tensor type code {code}"),
    }
}

/// Translates a verified flatbuffer into the model types.
struct Reader<'a> {
    /// The whole file, where buffers stored after the flatbuffer are.
    file: &'a [u8],
    /// Bytes copied so far from outside the flatbuffer. Bounded by the
    /// file's size: regions that overlap are how a small file would claim
    /// many copies of the same bytes.
    external_bytes: usize,
}

impl<'a> Reader<'a> {
    fn new(file: &'a [u8]) -> Reader<'a> {
        Reader {
            file,
            external_bytes: 0,
        }
    }

    fn model(mut self, root: fb::Model<'a>) -> Result<Model> {
        let version = root.version();
        if version != SCHEMA_VERSION {
            return Err(Error::unimplemented(format!(
                "schema version {version} is not supported, only version {SCHEMA_VERSION} (as in TensorFlow Lite)"
            )));
        }
        let buffers = tables(root.buffers())
            .enumerate()
            .map(|(b, buffer)| self.buffer(b, buffer))
            .collect::<Result<Vec<_>>>()?;
        check_metadata(&root, buffers.len())?;
        let operator_codes = tables(root.operator_codes())
            .enumerate()
            .map(|(index, code)| operator_code(index, code))
            .collect::<Result<Vec<_>>>()?;
        let subgraphs = tables(root.subgraphs())
            .enumerate()
            .map(|(s, subgraph)| self.subgraph(s, subgraph, &operator_codes))
            .collect::<Result<Vec<_>>>()?;
        let signatures = tables(root.signature_defs()).map(signature).collect();
        Ok(Model {
            version,
            description: root.description().unwrap_or_default().to_owned(),
            operator_codes,
            subgraphs,
            buffers,
            signatures,
        })
    }

    fn buffer(&mut self, b: usize, buffer: fb::Buffer<'a>) -> Result<Buffer> {
        let inline = buffer.data();
        // TensorFlow Lite's rule: an offset of 0 or 1 means "not stored
        // outside" (1 is the writer's placeholder).
        if buffer.offset() <= 1 {
            return Ok(Buffer {
                data: inline.map(|data| data.bytes().to_vec()).unwrap_or_default(),
            });
        }
        if inline.is_some_and(|data| !data.is_empty()) {
            return Err(Error::invalid_argument(format!(
                "buffer {b} has both data inside the flatbuffer and an offset ({}) to data after it",
                buffer.offset()
            )));
        }
        let data = self
            .external(buffer.offset(), buffer.size())
            .map_err(|message| Error::invalid_argument(format!("buffer {b}: {message}")))?;
        Ok(Buffer { data })
    }

    /// The `size` bytes at `offset` in the file.
    fn external(&mut self, offset: u64, size: u64) -> Result<Vec<u8>, String> {
        let range = usize::try_from(offset)
            .ok()
            .zip(usize::try_from(size).ok())
            .and_then(|(start, size)| Some(start..start.checked_add(size)?))
            .filter(|range| range.end <= self.file.len());
        let Some(range) = range else {
            return Err(format!(
                "its data at offset {offset}, {size} bytes, lies outside the file ({} bytes)",
                self.file.len()
            ));
        };
        self.external_bytes = self.external_bytes.saturating_add(range.len());
        if self.external_bytes > self.file.len() {
            return Err(format!(
                "its data at offset {offset}, {size} bytes, overlaps data read already (the regions after the flatbuffer add up to more than the file)"
            ));
        }
        Ok(self.file[range].to_vec())
    }

    fn subgraph(
        &mut self,
        s: usize,
        subgraph: fb::SubGraph<'a>,
        codes: &[OperatorCode],
    ) -> Result<Subgraph> {
        let tensors = tables(subgraph.tensors())
            .enumerate()
            .map(|(t, tensor)| read_tensor(s, t, tensor))
            .collect::<Result<Vec<_>>>()?;
        let list = |role: &str, v| {
            indices(v).map_err(|(k, t)| {
                invalid(format!(
                    "subgraph {s}: {role} {k} is {t}, expected a tensor index"
                ))
            })
        };
        let inputs = list("input", subgraph.inputs())?;
        let outputs = list("output", subgraph.outputs())?;
        let operators = tables(subgraph.operators())
            .enumerate()
            .map(|(o, op)| self.operator(s, o, op, codes))
            .collect::<Result<Vec<_>>>()?;
        Ok(Subgraph {
            name: subgraph.name().unwrap_or_default().to_owned(),
            tensors,
            inputs,
            outputs,
            operators,
        })
    }

    fn operator(
        &mut self,
        s: usize,
        o: usize,
        op: fb::Operator<'a>,
        codes: &[OperatorCode],
    ) -> Result<Operator> {
        let opcode_index = usize::try_from(op.opcode_index()).unwrap_or(usize::MAX);
        let place = || operator_place(codes, s, o, opcode_index);
        let inputs = op
            .inputs()
            .iter()
            .flatten()
            .enumerate()
            .map(|(k, t)| match t {
                -1 => Ok(None),
                t => usize::try_from(t).map(Some).map_err(|_| {
                    invalid(format!(
                        "{}: input {k} is {t}, expected a tensor index or -1 (no tensor)",
                        place()
                    ))
                }),
            })
            .collect::<Result<Vec<_>>>()?;
        let list = |role: &str, v| {
            indices(v).map_err(|(k, t)| {
                invalid(format!(
                    "{}: {role} {k} is {t}, expected a tensor index",
                    place()
                ))
            })
        };
        let outputs = list("output", op.outputs())?;
        let intermediates = list("intermediate", op.intermediates())?;
        let builtin_options = options::read(&op).map_err(|error| at(error, &place()))?;
        if op.builtin_options_2_type() != fb::BuiltinOptions2::NONE {
            return Err(Error::unimplemented(format!(
                "{}: builtin_options_2 ({}) are not supported",
                place(),
                op.builtin_options_2_type()
                    .variant_name()
                    .unwrap_or("an unknown type")
            )));
        }
        if op.custom_options_format() != fb::CustomOptionsFormat::FLEXBUFFERS {
            return Err(Error::unimplemented(format!(
                "{}: custom options format {} is not supported, only 0 (FLEXBUFFERS)",
                place(),
                op.custom_options_format().0
            )));
        }
        let inline = op
            .custom_options()
            .map(|v| v.bytes().to_vec())
            .unwrap_or_default();
        let custom_options = if op.large_custom_options_offset() <= 1 {
            inline
        } else if !inline.is_empty() {
            return Err(invalid(format!(
                "{}: custom options both inside the flatbuffer and at offset {} after it",
                place(),
                op.large_custom_options_offset()
            )));
        } else {
            self.external(
                op.large_custom_options_offset(),
                op.large_custom_options_size(),
            )
            .map_err(|message| invalid(format!("{}: custom options: {message}", place())))?
        };
        Ok(Operator {
            opcode_index,
            inputs,
            outputs,
            intermediates,
            builtin_options,
            custom_options,
        })
    }
}

fn invalid(message: String) -> Error {
    Error::invalid_argument(message)
}

/// `error` with `place` in front of its message.
fn at(error: Error, place: &str) -> Error {
    Error::new(error.code(), format!("{place}: {}", error.message()))
}

/// The tables of an optional vector, none when it is absent.
fn tables<'a, T: flatbuffers::Follow<'a> + 'a>(
    vector: Option<Vector<'a, ForwardsUOffset<T>>>,
) -> impl Iterator<Item = T::Inner> {
    vector.into_iter().flat_map(|v| v.iter())
}

/// Non-negative indices; the position and value of the first negative one.
fn indices(vector: Option<Vector<'_, i32>>) -> Result<Vec<usize>, (usize, i32)> {
    vector
        .iter()
        .flat_map(|v| v.iter())
        .enumerate()
        .map(|(k, t)| usize::try_from(t).map_err(|_| (k, t)))
        .collect()
}

fn operator_code(index: usize, code: fb::OperatorCode<'_>) -> Result<OperatorCode> {
    // TensorFlow Lite's `GetBuiltinCode`: old writers fill only the byte
    // field, new ones put codes above 127 in the int field and 127 in the
    // byte field, so the larger of the two is the code.
    let builtin = code
        .builtin_code()
        .0
        .max(i32::from(code.deprecated_builtin_code()));
    if builtin < 0 {
        return Err(invalid(format!(
            "operator code {index}: builtin code {builtin} is negative (deprecated_builtin_code {}, builtin_code {})",
            code.deprecated_builtin_code(),
            code.builtin_code().0
        )));
    }
    Ok(OperatorCode {
        builtin: BuiltinOperator(builtin),
        custom_name: code.custom_code().map(str::to_owned),
        version: code.version(),
    })
}

fn read_tensor(s: usize, t: usize, tensor: fb::Tensor<'_>) -> Result<TensorInfo> {
    let name = tensor.name().unwrap_or_default();
    let place = || format!("subgraph {s}, tensor {t} ({})", quoted(name));
    let code = tensor.type_();
    let Some(dtype) = dtype_from_tflite(code.0) else {
        let message = format!("{}: {}", place(), type_problem(code.0));
        return Err(match code.variant_name() {
            Some(_) => Error::unimplemented(message),
            None => invalid(message),
        });
    };
    let shape = indices(tensor.shape()).map_err(|(d, dim)| {
        invalid(format!(
            "{}: dimension {d} is {dim}, expected at least 0",
            place()
        ))
    })?;
    if tensor.sparsity().is_some() {
        return Err(Error::unimplemented(format!(
            "{}: sparse tensors are not supported",
            place()
        )));
    }
    let quantization = match tensor.quantization() {
        Some(q) => quantization(q).map_err(|error| at(error, &place()))?,
        None => None,
    };
    Ok(TensorInfo {
        name: name.to_owned(),
        dtype,
        shape,
        shape_signature: tensor.shape_signature().map(|v| v.iter().collect()),
        buffer: usize::try_from(tensor.buffer()).unwrap_or(usize::MAX),
        quantization,
        is_variable: tensor.is_variable(),
    })
}

/// The affine parameters, `None` when there are none: the converter writes
/// an empty table for every float tensor.
fn quantization(q: fb::QuantizationParameters<'_>) -> Result<Option<Quantization>> {
    if q.details_type() != fb::QuantizationDetails::NONE {
        return Err(Error::unimplemented(
            "custom quantization details are not supported",
        ));
    }
    let scale: Vec<f32> = q.scale().map(|v| v.iter().collect()).unwrap_or_default();
    let zero_point: Vec<i64> = q
        .zero_point()
        .map(|v| v.iter().collect())
        .unwrap_or_default();
    if scale.is_empty() && zero_point.is_empty() {
        return Ok(None);
    }
    let quantized_dimension = usize::try_from(q.quantized_dimension()).map_err(|_| {
        invalid(format!(
            "quantized dimension {} is negative",
            q.quantized_dimension()
        ))
    })?;
    Ok(Some(Quantization {
        scale,
        zero_point,
        quantized_dimension,
    }))
}

fn signature(signature: fb::SignatureDef<'_>) -> Signature {
    let map = |v: Option<Vector<'_, ForwardsUOffset<fb::TensorMap<'_>>>>| {
        tables(v)
            .map(|m| {
                (
                    m.name().unwrap_or_default().to_owned(),
                    usize::try_from(m.tensor_index()).unwrap_or(usize::MAX),
                )
            })
            .collect()
    };
    Signature {
        key: signature.signature_key().unwrap_or_default().to_owned(),
        subgraph: usize::try_from(signature.subgraph_index()).unwrap_or(usize::MAX),
        inputs: map(signature.inputs()),
        outputs: map(signature.outputs()),
    }
}

/// The model keeps no metadata, but its buffer indices are checked all the
/// same: a file that names a missing buffer is malformed.
fn check_metadata(root: &fb::Model<'_>, buffers: usize) -> Result<()> {
    for (k, metadata) in tables(root.metadata()).enumerate() {
        if usize::try_from(metadata.buffer()).is_ok_and(|b| b < buffers) {
            continue;
        }
        return Err(invalid(format!(
            "metadata {k} ({}) names buffer {}, but the model has {buffers} buffers",
            quoted(metadata.name().unwrap_or_default()),
            metadata.buffer()
        )));
    }
    for (k, b) in root
        .metadata_buffer()
        .iter()
        .flat_map(|v| v.iter())
        .enumerate()
    {
        if usize::try_from(b).is_ok_and(|b| b < buffers) {
            continue;
        }
        return Err(invalid(format!(
            "metadata_buffer {k} is buffer {b}, but the model has {buffers} buffers"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
