//! Reading checkpoints: the header, then each tensor decoded.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::path::Path;

use half::{bf16, f16};
use safetensors::SafeTensors;
use safetensors::tensor::{Dtype, TensorInfo};

use super::file::io_error;
use super::{COMPLEX_KEY, FORMAT, FORMAT_KEY, LENGTHS_SUFFIX, STRINGS_KEY, VERSION, VERSION_KEY};
use crate::{Complex, Element, Error, Result, Tensor};

/// Reads every tensor of the safetensors file at `path`, by name, decoding
/// the string and complex tensors of the [module docs](super)' layout.
///
/// Returns a `NotFound` error if there is no file, a `DataLoss` error if the
/// file is truncated, corrupted or not a safetensors file, and an
/// `Unimplemented` error for a newer format version or a tensor whose
/// safetensors dtype has no dtype here; every error names the path.
///
/// ```
/// use op_core::{checkpoint, Code};
/// let path = std::env::temp_dir().join(format!("op-core-read-{}.txt", std::process::id()));
/// std::fs::write(&path, "not a checkpoint").unwrap();
/// let err = checkpoint::read(&path).unwrap_err();
/// assert_eq!(err.code(), Code::DataLoss);
/// assert!(err.to_string().contains(&*path.to_string_lossy()));
/// # std::fs::remove_file(&path).unwrap();
/// ```
pub fn read(path: impl AsRef<Path>) -> Result<BTreeMap<String, Tensor>> {
    let path = path.as_ref();
    let context = || format!("reading checkpoint '{}'", path.display());
    let bytes = fs::read(path).map_err(|e| io_error(e, "reading", path).with_context(context()))?;
    decode(&bytes).map_err(|e| e.with_context(context()))
}

/// The tensors of a whole safetensors file.
fn decode(bytes: &[u8]) -> Result<BTreeMap<String, Tensor>> {
    let (header_len, metadata) = SafeTensors::read_metadata(bytes)
        .map_err(|e| Error::data_loss(format!("not a valid safetensors file: {e}")))?;
    let data = 8usize
        .checked_add(header_len)
        .and_then(|start| bytes.get(start..))
        .ok_or_else(|| Error::data_loss("the header runs past the end of the file"))?;
    let infos = metadata.tensors();
    let (strings, complex) = encodings(metadata.metadata().as_ref())?;

    let mut out = BTreeMap::new();
    let mut done: BTreeSet<String> = BTreeSet::new();
    let mut take = |name: &str| -> Result<(&TensorInfo, &[u8])> {
        let Some(&info) = infos.get(name) else {
            return Err(Error::data_loss(format!(
                "the metadata lists tensor '{name}' but the file has no tensor of that name"
            )));
        };
        if !done.insert(name.to_string()) {
            return Err(Error::data_loss(format!(
                "the metadata lists tensor '{name}' twice"
            )));
        }
        let (begin, end) = info.data_offsets;
        let data = data.get(begin..end).ok_or_else(|| {
            Error::data_loss(format!("tensor '{name}' lies outside the file's data"))
        })?;
        Ok((info, data))
    };

    for name in &strings {
        let lengths_name = format!("{name}{LENGTHS_SUFFIX}");
        let (bytes_info, bytes) = take(name)?;
        let (lengths_info, lengths) = take(&lengths_name)?;
        if bytes_info.dtype != Dtype::U8 || bytes_info.shape.len() != 1 {
            return Err(Error::data_loss(format!(
                "string tensor '{name}' is stored as {} {:?}, not as U8 of rank 1",
                bytes_info.dtype, bytes_info.shape
            )));
        }
        if lengths_info.dtype != Dtype::I64 {
            return Err(Error::data_loss(format!(
                "the lengths '{lengths_name}' of string tensor '{name}' are {}, not I64",
                lengths_info.dtype
            )));
        }
        let lengths = elements(&lengths_name, lengths, i64::from_le_bytes)?;
        let mut rest = bytes;
        let mut values = Vec::with_capacity(lengths.len());
        for length in lengths {
            let element = usize::try_from(length)
                .ok()
                .and_then(|length| rest.split_at_checked(length));
            let Some((element, tail)) = element else {
                return Err(Error::data_loss(format!(
                    "the lengths '{lengths_name}' of string tensor '{name}' do not match its \
                     {} bytes",
                    bytes.len()
                )));
            };
            values.push(element.to_vec());
            rest = tail;
        }
        if !rest.is_empty() {
            return Err(Error::data_loss(format!(
                "the lengths '{lengths_name}' of string tensor '{name}' do not match its {} bytes",
                bytes.len()
            )));
        }
        out.insert(name.clone(), from_vec(name, &lengths_info.shape, values)?);
    }

    for name in &complex {
        let (info, bytes) = take(name)?;
        let Some((&2, dims)) = info.shape.split_last() else {
            return Err(Error::data_loss(format!(
                "complex tensor '{name}' has shape {:?}, not one ending in 2",
                info.shape
            )));
        };
        let tensor = match info.dtype {
            Dtype::F32 => complex_tensor(name, dims, bytes, f32::from_le_bytes)?,
            Dtype::F64 => complex_tensor(name, dims, bytes, f64::from_le_bytes)?,
            other => {
                return Err(Error::data_loss(format!(
                    "complex tensor '{name}' is stored as {other}, not as F32 or F64"
                )));
            }
        };
        out.insert(name.clone(), tensor);
    }

    for (name, info) in &infos {
        if done.contains(name) {
            continue;
        }
        let (begin, end) = info.data_offsets;
        let bytes = data.get(begin..end).ok_or_else(|| {
            Error::data_loss(format!("tensor '{name}' lies outside the file's data"))
        })?;
        out.insert(name.clone(), plain_tensor(name, info, bytes)?);
    }
    Ok(out)
}

/// The names of the string and complex tensors, from the metadata of an
/// op-core checkpoint; none for a plain safetensors file.
fn encodings(metadata: Option<&HashMap<String, String>>) -> Result<(Vec<String>, Vec<String>)> {
    let Some(metadata) = metadata else {
        return Ok(Default::default());
    };
    if metadata.get(FORMAT_KEY).map(String::as_str) != Some(FORMAT) {
        return Ok(Default::default());
    }
    match metadata.get(VERSION_KEY) {
        Some(version) if version == VERSION => {}
        Some(version) => {
            return Err(Error::unimplemented(format!(
                "checkpoint format version {version:?} is not supported (this reader knows \
                 version {VERSION})"
            )));
        }
        None => {
            return Err(Error::data_loss(format!(
                "the metadata says format '{FORMAT}' but gives no version"
            )));
        }
    }
    let names = |key: &str| -> Result<Vec<String>> {
        match metadata.get(key) {
            None => Ok(Vec::new()),
            Some(text) => serde_json::from_str(text).map_err(|e| {
                Error::data_loss(format!(
                    "metadata '{key}' is not a JSON array of names: {e}: {text:?}"
                ))
            }),
        }
    };
    Ok((names(STRINGS_KEY)?, names(COMPLEX_KEY)?))
}

/// A tensor stored as the safetensors dtype of its own element type.
fn plain_tensor(name: &str, info: &TensorInfo, bytes: &[u8]) -> Result<Tensor> {
    let shape = &info.shape;
    macro_rules! le {
        ($ty:ty) => {
            from_vec(name, shape, elements(name, bytes, <$ty>::from_le_bytes)?)
        };
    }
    match info.dtype {
        Dtype::BOOL => {
            let values = bytes
                .iter()
                .map(|&b| match b {
                    0 => Ok(false),
                    1 => Ok(true),
                    _ => Err(Error::data_loss(format!(
                        "bool tensor '{name}' holds the byte {b}, not 0 or 1"
                    ))),
                })
                .collect::<Result<Vec<bool>>>()?;
            from_vec(name, shape, values)
        }
        Dtype::U8 => from_vec(name, shape, bytes.to_vec()),
        Dtype::I8 => le!(i8),
        Dtype::I16 => le!(i16),
        Dtype::U16 => le!(u16),
        Dtype::I32 => le!(i32),
        Dtype::U32 => le!(u32),
        Dtype::I64 => le!(i64),
        Dtype::U64 => le!(u64),
        Dtype::F16 => le!(f16),
        Dtype::BF16 => le!(bf16),
        Dtype::F32 => le!(f32),
        Dtype::F64 => le!(f64),
        Dtype::C64 => complex_tensor(name, shape, bytes, f32::from_le_bytes),
        other => Err(Error::unimplemented(format!(
            "tensor '{name}' has safetensors dtype {other}, which has no dtype here"
        ))),
    }
}

/// A complex tensor of shape `dims` from pairs of little-endian floats.
fn complex_tensor<F, const N: usize>(
    name: &str,
    dims: &[usize],
    bytes: &[u8],
    float: fn([u8; N]) -> F,
) -> Result<Tensor>
where
    F: Copy,
    Complex<F>: Element,
{
    let parts = elements(name, bytes, float)?;
    let (pairs, rest) = parts.as_chunks::<2>();
    if !rest.is_empty() {
        return Err(Error::data_loss(format!(
            "complex tensor '{name}' has an odd number of parts"
        )));
    }
    let values = pairs.iter().map(|&[re, im]| Complex::new(re, im)).collect();
    from_vec(name, dims, values)
}

/// The little-endian elements in `bytes`.
fn elements<T, const N: usize>(
    name: &str,
    bytes: &[u8],
    element: fn([u8; N]) -> T,
) -> Result<Vec<T>> {
    let (chunks, rest) = bytes.as_chunks::<N>();
    if !rest.is_empty() {
        return Err(Error::data_loss(format!(
            "tensor '{name}' has {} bytes, not a multiple of its element size {N}",
            bytes.len()
        )));
    }
    Ok(chunks.iter().map(|&chunk| element(chunk)).collect())
}

/// [`Tensor::from_vec`], a count mismatch being data loss in tensor `name`.
fn from_vec<T: Element>(name: &str, shape: &[usize], values: Vec<T>) -> Result<Tensor> {
    Tensor::from_vec(shape, values)
        .map_err(|e| Error::data_loss(format!("tensor '{name}': {}", e.message())))
}
