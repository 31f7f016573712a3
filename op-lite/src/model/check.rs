//! The rules a [`Model`] keeps, in one place: the reader checks every model
//! it builds with them and the writer every model it is given, so that a
//! model either side hands on is one the interpreter can index without
//! checking again.
//!
//! What a file can get wrong in its encoding (a negative dimension, an
//! unknown type code, a truncated table) is the reader's to report; what
//! can be wrong in a [`Model`] itself (an index out of range, a buffer of
//! the wrong size) is checked here, with the place named as the reader
//! would name it: "subgraph 0, operator 3 (CONV_2D): input 1 is tensor 57,
//! but the subgraph has 40 tensors".

use op_core::error::quoted;
use op_core::{DType, Error, Result};

use super::options;
use super::{BuiltinOperator, Operator};
use super::{Model, OperatorCode, Quantization, Signature, Subgraph, TensorInfo};

impl Model {
    /// Checks every rule the model types promise: buffer 0 is empty; every
    /// custom operator code has a name and no builtin code is negative;
    /// every tensor, buffer, operator-code and subgraph index is in range;
    /// every constant buffer holds exactly its tensor's bytes (a string
    /// tensor's holds TensorFlow Lite's string encoding, with one string per
    /// element); shape signatures and quantization parameters agree with
    /// their shapes; and builtin options suit their ops.
    ///
    /// [`Model::from_bytes`] and [`Model::to_bytes`] run it; a model built
    /// by hand can run it too. The error, `InvalidArgument`, names the
    /// place.
    ///
    /// ```
    /// use op_lite::model::{Buffer, Model};
    ///
    /// let mut model = Model { version: 3, buffers: vec![Buffer::default()], ..Model::default() };
    /// assert!(model.validate().is_ok());
    /// model.buffers[0].data = vec![1];
    /// let error = model.validate().unwrap_err();
    /// assert_eq!(error.message(), "buffer 0 holds 1 bytes, but buffer 0 must be empty: a tensor with buffer 0 has no constant data");
    /// ```
    pub fn validate(&self) -> Result<()> {
        if let Some(first) = self.buffers.first()
            && !first.data.is_empty()
        {
            return Err(Error::invalid_argument(format!(
                "buffer 0 holds {} bytes, but buffer 0 must be empty: a tensor with buffer 0 has no constant data",
                first.data.len()
            )));
        }
        for (index, code) in self.operator_codes.iter().enumerate() {
            check_operator_code(index, code)?;
        }
        for (index, subgraph) in self.subgraphs.iter().enumerate() {
            self.check_subgraph(index, subgraph)?;
        }
        for (index, signature) in self.signatures.iter().enumerate() {
            self.check_signature(index, signature)?;
        }
        Ok(())
    }

    fn check_subgraph(&self, s: usize, subgraph: &Subgraph) -> Result<()> {
        for (t, tensor) in subgraph.tensors.iter().enumerate() {
            self.check_tensor(tensor)
                .map_err(|message| invalid(format!("{}: {message}", tensor_place(s, t, tensor))))?;
        }
        let tensors = subgraph.tensors.len();
        for (role, list) in [("input", &subgraph.inputs), ("output", &subgraph.outputs)] {
            for (k, &t) in list.iter().enumerate() {
                if t >= tensors {
                    return Err(invalid(format!(
                        "subgraph {s}: {role} {k} is tensor {t}, but the subgraph has {tensors} tensors"
                    )));
                }
            }
        }
        for (o, op) in subgraph.operators.iter().enumerate() {
            self.check_operator(op, tensors).map_err(|message| {
                invalid(format!(
                    "{}: {message}",
                    operator_place(&self.operator_codes, s, o, op.opcode_index)
                ))
            })?;
        }
        Ok(())
    }

    /// What is wrong with one tensor, without its place (the caller adds it).
    fn check_tensor(&self, tensor: &TensorInfo) -> Result<(), String> {
        let count = element_count(&tensor.shape).ok_or_else(|| {
            format!(
                "shape {} has more elements than fit in memory",
                op_core::error::dims(&tensor.shape)
            )
        })?;
        let bytes = match tensor.dtype.size_of() {
            Some(size) => Some(
                count
                    .checked_mul(size)
                    .filter(|&bytes| isize::try_from(bytes).is_ok())
                    .ok_or_else(|| {
                        format!(
                            "shape {} of {} needs more bytes than fit in memory",
                            op_core::error::dims(&tensor.shape),
                            tensor.dtype
                        )
                    })?,
            ),
            None => None,
        };
        if let Some(signature) = &tensor.shape_signature {
            check_shape_signature(&tensor.shape, signature)?;
        }
        if let Some(quantization) = &tensor.quantization {
            check_quantization(&tensor.shape, quantization)?;
        }
        let Some(buffer) = self.buffers.get(tensor.buffer) else {
            return Err(format!(
                "buffer {} is out of range, the model has {} buffers",
                tensor.buffer,
                self.buffers.len()
            ));
        };
        let data = &buffer.data;
        if data.is_empty() {
            return Ok(());
        }
        match (bytes, tensor.dtype) {
            (Some(bytes), _) if data.len() == bytes => Ok(()),
            (Some(bytes), dtype) => Err(format!(
                "buffer {} holds {} bytes, but shape {} of {dtype} needs {bytes}",
                tensor.buffer,
                data.len(),
                op_core::error::dims(&tensor.shape)
            )),
            (None, DType::String) => check_string_buffer(data, count)
                .map_err(|message| format!("buffer {}: {message}", tensor.buffer)),
            (None, dtype) => Err(format!(
                "a {dtype} tensor cannot have constant data, but buffer {} holds {} bytes",
                tensor.buffer,
                data.len()
            )),
        }
    }

    /// What is wrong with one operator, without its place.
    fn check_operator(&self, op: &Operator, tensors: usize) -> Result<(), String> {
        let Some(code) = self.operator_codes.get(op.opcode_index) else {
            return Err(format!(
                "opcode index {} is out of range, the model has {} operator codes",
                op.opcode_index,
                self.operator_codes.len()
            ));
        };
        let inputs = (op.inputs.iter().enumerate()).filter_map(|(k, t)| t.map(|t| ("input", k, t)));
        let outputs = op
            .outputs
            .iter()
            .enumerate()
            .map(|(k, &t)| ("output", k, t));
        let intermediates =
            (op.intermediates.iter().enumerate()).map(|(k, &t)| ("intermediate", k, t));
        for (role, k, t) in inputs.chain(outputs).chain(intermediates) {
            if t >= tensors {
                return Err(format!(
                    "{role} {k} is tensor {t}, but the subgraph has {tensors} tensors"
                ));
            }
        }
        options::check(code.builtin, &op.builtin_options)
    }

    fn check_signature(&self, k: usize, signature: &Signature) -> Result<()> {
        let place = || format!("signature {k} ({})", quoted(&signature.key));
        let Some(subgraph) = self.subgraphs.get(signature.subgraph) else {
            return Err(invalid(format!(
                "{}: subgraph {} is out of range, the model has {} subgraphs",
                place(),
                signature.subgraph,
                self.subgraphs.len()
            )));
        };
        let tensors = subgraph.tensors.len();
        for (role, list) in [("input", &signature.inputs), ("output", &signature.outputs)] {
            for (name, t) in list {
                if *t >= tensors {
                    return Err(invalid(format!(
                        "{}: {role} {} is tensor {t}, but subgraph {} has {tensors} tensors",
                        place(),
                        quoted(name),
                        signature.subgraph
                    )));
                }
            }
        }
        Ok(())
    }
}

fn invalid(message: String) -> Error {
    Error::invalid_argument(message)
}

fn check_operator_code(index: usize, code: &OperatorCode) -> Result<()> {
    if code.builtin.0 < 0 {
        return Err(invalid(format!(
            "operator code {index}: builtin code {} is negative",
            code.builtin.0
        )));
    }
    if code.builtin == BuiltinOperator::CUSTOM
        && code.custom_name.as_deref().unwrap_or("").is_empty()
    {
        return Err(invalid(format!(
            "operator code {index}: a CUSTOM operator code needs a custom name, and this one has none"
        )));
    }
    Ok(())
}

/// The number of elements of a shape, `None` past `usize`. A zero anywhere
/// makes it 0, however large the other dimensions.
pub(super) fn element_count(shape: &[usize]) -> Option<usize> {
    if shape.contains(&0) {
        return Some(0);
    }
    shape
        .iter()
        .try_fold(1usize, |count, &dim| count.checked_mul(dim))
}

/// "subgraph 0, tensor 3 ('conv/weights')".
pub(super) fn tensor_place(s: usize, t: usize, tensor: &TensorInfo) -> String {
    format!("subgraph {s}, tensor {t} ({})", quoted(&tensor.name))
}

/// "subgraph 0, operator 3 (CONV_2D)", or "(custom 'Sin')", or "(opcode
/// index 9, out of range)".
pub(super) fn operator_place(
    codes: &[OperatorCode],
    s: usize,
    o: usize,
    opcode_index: usize,
) -> String {
    match codes.get(opcode_index) {
        Some(OperatorCode {
            builtin: BuiltinOperator::CUSTOM,
            custom_name: Some(name),
            ..
        }) => {
            format!("subgraph {s}, operator {o} (custom {})", quoted(name))
        }
        Some(code) => format!("subgraph {s}, operator {o} ({})", code.builtin),
        None => format!("subgraph {s}, operator {o} (opcode index {opcode_index}, out of range)"),
    }
}

/// `shape_signature` has the shape's rank, and each entry is the shape's
/// dimension or -1 (a dimension that may change at run time).
fn check_shape_signature(shape: &[usize], signature: &[i32]) -> Result<(), String> {
    if signature.len() != shape.len() {
        return Err(format!(
            "shape signature {signature} has rank {}, but shape {shape} has rank {}",
            signature.len(),
            shape.len(),
            signature = op_core::error::dims(signature),
            shape = op_core::error::dims(shape)
        ));
    }
    for (d, (&sig, &dim)) in signature.iter().zip(shape).enumerate() {
        if sig != -1 && usize::try_from(sig).ok() != Some(dim) {
            return Err(format!(
                "shape signature {signature} gives dimension {d} as {sig}, but shape {shape} has {dim} (only -1, for a dimension known at run time, may differ)",
                signature = op_core::error::dims(signature),
                shape = op_core::error::dims(shape)
            ));
        }
    }
    Ok(())
}

/// TensorFlow Lite's own rules (`InterpreterBuilder::ParseQuantization`):
/// one zero point per scale, and either one scale or one per element of
/// the quantized dimension.
fn check_quantization(shape: &[usize], quantization: &Quantization) -> Result<(), String> {
    let scales = quantization.scale.len();
    if scales == 0 {
        return Err("quantization parameters without scales".to_owned());
    }
    if quantization.zero_point.len() != scales {
        return Err(format!(
            "quantization has {scales} scales but {} zero points",
            quantization.zero_point.len()
        ));
    }
    let dim = quantization.quantized_dimension;
    if !shape.is_empty() && dim >= shape.len() {
        return Err(format!(
            "quantized dimension {dim} is out of range for shape {shape}",
            shape = op_core::error::dims(shape)
        ));
    }
    if scales != 1 && shape.get(dim) != Some(&scales) {
        return Err(format!(
            "quantization has {scales} scales, but dimension {dim} of shape {shape} is not {scales}",
            shape = op_core::error::dims(shape)
        ));
    }
    Ok(())
}

/// TensorFlow Lite's string tensor encoding (`string_util.h`): the count of
/// strings as an `i32`, then `count + 1` offsets from the start of the
/// buffer (the last one its length), then the bytes.
fn check_string_buffer(data: &[u8], count: usize) -> Result<(), String> {
    let word = |i: usize| -> Option<i64> {
        let start = i.checked_mul(4)?;
        let bytes = data.get(start..start.checked_add(4)?)?;
        Some(i64::from(i32::from_le_bytes(bytes.try_into().ok()?)))
    };
    let Some(stored) = word(0) else {
        return Err(format!(
            "a string tensor's data starts with its string count, but it has {} bytes",
            data.len()
        ));
    };
    if usize::try_from(stored).ok() != Some(count) {
        return Err(format!(
            "the string tensor has {count} elements, but its data holds {stored} strings"
        ));
    }
    let header = count
        .checked_add(2)
        .and_then(|words| words.checked_mul(4))
        .filter(|&header| header <= data.len())
        .ok_or_else(|| {
            format!(
                "{count} strings need a header of {} offsets, but the data has {} bytes",
                count.saturating_add(1),
                data.len()
            )
        })?;
    let mut previous = header as i64;
    for i in 0..=count {
        let offset = word(i + 1).unwrap_or(-1);
        let last = i == count;
        if offset < previous || offset > data.len() as i64 || (last && offset != data.len() as i64)
        {
            return Err(format!(
                "string offset {i} is {offset}, expected {} (offsets rise from the end of the header, {header}, to the end of the data, {})",
                if last {
                    "the data's length".to_owned()
                } else {
                    format!("at least {previous}")
                },
                data.len()
            ));
        }
        previous = offset;
    }
    Ok(())
}

/// The constant data of a string tensor holding `items`, in TensorFlow
/// Lite's encoding (`string_util.h`): the count as an `i32`, `count + 1`
/// offsets from the start of the data (the last one its length), then the
/// bytes. `None` when the data would pass the 2 GiB that `i32` offsets
/// reach.
///
/// ```
/// use op_lite::model::encode_strings;
/// let data = encode_strings(&["ab", "c"]).unwrap();
/// assert_eq!(data.len(), 4 + 3 * 4 + 3);
/// assert_eq!(&data[..8], &[2, 0, 0, 0, 16, 0, 0, 0]);
/// assert_eq!(&data[16..], b"abc");
/// ```
pub fn encode_strings<S: AsRef<[u8]>>(items: &[S]) -> Option<Vec<u8>> {
    let header = items.len().checked_add(2)?.checked_mul(4)?;
    let bytes = items
        .iter()
        .try_fold(0usize, |sum, item| sum.checked_add(item.as_ref().len()))?;
    let total = header
        .checked_add(bytes)
        .filter(|&total| i32::try_from(total).is_ok())?;
    let mut data = Vec::with_capacity(total);
    data.extend((items.len() as i32).to_le_bytes());
    let mut offset = header;
    for item in items {
        data.extend((offset as i32).to_le_bytes());
        offset += item.as_ref().len();
    }
    data.extend((offset as i32).to_le_bytes());
    for item in items {
        data.extend(item.as_ref());
    }
    Some(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<u8> {
        encode_strings(items).unwrap()
    }

    #[test]
    fn string_buffers_in_tensorflow_lites_encoding_pass() {
        assert_eq!(check_string_buffer(&strings(&["ab", "", "cde"]), 3), Ok(()));
        assert_eq!(check_string_buffer(&strings(&[]), 0), Ok(()));
        let items = [vec![0xff_u8, 0], vec![]];
        assert_eq!(
            check_string_buffer(&encode_strings(&items).unwrap(), 2),
            Ok(()),
            "bytes, not only UTF-8"
        );
    }

    #[test]
    fn string_buffers_with_a_wrong_count_or_offsets_fail() {
        let good = strings(&["ab", "cde"]);
        assert!(
            check_string_buffer(&good, 3)
                .unwrap_err()
                .contains("has 3 elements, but its data holds 2")
        );
        assert!(
            check_string_buffer(&good[..2], 2)
                .unwrap_err()
                .contains("starts with its string count")
        );
        assert!(
            check_string_buffer(&good[..10], 2)
                .unwrap_err()
                .contains("need a header")
        );
        let mut falling = good.clone();
        falling[8..12].copy_from_slice(&100i32.to_le_bytes());
        assert!(
            check_string_buffer(&falling, 2)
                .unwrap_err()
                .contains("string offset 1 is 100")
        );
        let mut short = good.clone();
        short.push(0);
        assert!(
            check_string_buffer(&short, 2)
                .unwrap_err()
                .contains("expected the data's length")
        );
        let mut negative = good;
        negative[0..4].copy_from_slice(&(-1i32).to_le_bytes());
        assert!(
            check_string_buffer(&negative, 2)
                .unwrap_err()
                .contains("holds -1 strings")
        );
    }

    #[test]
    fn element_counts_that_overflow_are_none() {
        assert_eq!(element_count(&[]), Some(1));
        assert_eq!(element_count(&[2, 0, usize::MAX]), Some(0));
        assert_eq!(element_count(&[usize::MAX, 2, 0]), Some(0));
        assert_eq!(element_count(&[usize::MAX, 2]), None);
    }
}
