//! Reading checkpoints: the header, then each tensor decoded.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::path::Path;

use half::{bf16, f16};
use safetensors::tensor::{Dtype, TensorInfo};
use serde::de::{Deserialize, Deserializer, Error as _, MapAccess, Visitor};

use super::{
    COMPLEX_KEY, CRC32C_KEY, FORMAT, FORMAT_KEY, LENGTHS_SUFFIX, METADATA, STRINGS_KEY, VERSION,
    VERSION_KEY,
};
use crate::error::quoted;
use crate::file::read_regular_file;
use crate::{Complex, Element, Error, Result, Tensor, TensorShape};

/// Reads every tensor of the safetensors file at `path`, by name, decoding
/// the string and complex tensors of the [module docs](super)' layout.
///
/// Returns a `NotFound` error if there is no file, a `FailedPrecondition`
/// error if `path` is not a regular file (a directory, a FIFO, a device: a
/// FIFO is refused without waiting for a writer), a `DataLoss` error if the
/// file is truncated, corrupted (a tensor whose data does not match its
/// checksum, a hostile header), not a safetensors file, or changes size
/// while it is read, and an `Unimplemented` error for a newer format version
/// or a tensor whose safetensors dtype has no dtype here; every error names
/// the path.
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
    let bytes = read_regular_file(path).map_err(|e| e.with_context(context()))?;
    decode(&bytes).map_err(|e| e.with_context(context()))
}

/// Decodes a checkpoint held in memory: every tensor of the safetensors
/// file whose bytes are `bytes`, as [`read`] gives them for a file, with the
/// same checks and errors (less the file system's; no path in messages).
///
/// For tools that get a checkpoint from elsewhere than a file, and for
/// fuzzing the decoder (`fuzz/`): whatever `bytes` holds, the result is the
/// tensors or an error (`DataLoss`, or `Unimplemented` for a newer version or
/// an unsupported dtype), never a panic, and memory stays proportional to
/// `bytes.len()`.
///
/// ```
/// use op_core::{checkpoint, Code};
/// let err = checkpoint::read_bytes(b"not a checkpoint").unwrap_err();
/// assert_eq!(err.code(), Code::DataLoss);
/// assert!(checkpoint::read_bytes(b"\x02\0\0\0\0\0\0\0{}")?.is_empty());
/// # Ok::<(), op_core::Error>(())
/// ```
pub fn read_bytes(bytes: &[u8]) -> Result<BTreeMap<String, Tensor>> {
    decode(bytes)
}

/// The largest header accepted, in bytes: the safetensors crate's limit, so
/// that files with larger headers, which other safetensors readers refuse,
/// are refused here too.
const MAX_HEADER_BYTES: u64 = 100_000_000;

/// The tensors of a whole safetensors file.
fn decode(bytes: &[u8]) -> Result<BTreeMap<String, Tensor>> {
    let (header, data) = parse_header(bytes)?;
    let entries = check_layout(&header.tensors, data)?;
    let Encodings {
        strings,
        complex,
        checksums,
    } = encodings(header.metadata.as_ref())?;
    if let Some(checksums) = checksums {
        verify_checksums(&entries, &checksums)?;
    }

    let mut out = BTreeMap::new();
    let mut done: BTreeSet<&str> = BTreeSet::new();
    let mut take = |name: &str| -> Result<&Entry<'_>> {
        let Some((name, entry)) = entries.get_key_value(name) else {
            return Err(Error::data_loss(format!(
                "the metadata lists tensor '{name}' but the file has no tensor of that name"
            )));
        };
        if !done.insert(name) {
            return Err(Error::data_loss(format!(
                "the metadata lists tensor '{name}' twice"
            )));
        }
        Ok(entry)
    };

    for name in &strings {
        let lengths_name = format!("{name}{LENGTHS_SUFFIX}");
        let bytes = take(name)?;
        let lengths = take(&lengths_name)?;
        if bytes.dtype != Dtype::U8 || bytes.shape.rank() != 1 {
            return Err(Error::data_loss(format!(
                "string tensor '{name}' is stored as {} {}, not as U8 of rank 1",
                bytes.dtype, bytes.shape
            )));
        }
        if lengths.dtype != Dtype::I64 {
            return Err(Error::data_loss(format!(
                "the lengths '{lengths_name}' of string tensor '{name}' are {}, not I64",
                lengths.dtype
            )));
        }
        let values = split_strings(name, &lengths_name, bytes.data, lengths.data)?;
        out.insert(name.clone(), from_vec(name, &lengths.shape, values)?);
    }

    for name in &complex {
        let entry = take(name)?;
        let Some((&2, dims)) = entry.shape.dims().split_last() else {
            return Err(Error::data_loss(format!(
                "complex tensor '{name}' has shape {}, not one ending in 2",
                entry.shape
            )));
        };
        // Dropping a dimension of 2 keeps the element count representable.
        let dims = TensorShape::try_new(dims).map_err(|e| Error::internal(e.message()))?;
        let tensor = match entry.dtype {
            Dtype::F32 => complex_tensor(name, &dims, entry.data, f32::from_le_bytes)?,
            Dtype::F64 => complex_tensor(name, &dims, entry.data, f64::from_le_bytes)?,
            other => {
                return Err(Error::data_loss(format!(
                    "complex tensor '{name}' is stored as {other}, not as F32 or F64"
                )));
            }
        };
        out.insert(name.clone(), tensor);
    }

    for (name, entry) in &entries {
        if done.contains(name.as_str()) {
            continue;
        }
        out.insert(name.clone(), plain_tensor(name, entry)?);
    }
    Ok(out)
}

/// The elements of string tensor `name`: `bytes` cut at the little-endian
/// `i64` lengths in `lengths` (of the tensor `lengths_name`).
fn split_strings(
    name: &str,
    lengths_name: &str,
    bytes: &[u8],
    lengths: &[u8],
) -> Result<Vec<Vec<u8>>> {
    let mismatch = |detail: String| {
        Error::data_loss(format!(
            "the lengths '{lengths_name}' of string tensor '{name}' do not match its {} bytes: \
             {detail}",
            bytes.len()
        ))
    };
    let lengths = elements(lengths_name, lengths, i64::from_le_bytes)?;
    // At most one element per length, each at most the bytes' size: bounded
    // by the file.
    let mut values = Vec::with_capacity(lengths.len());
    let mut rest = bytes;
    for (i, length) in lengths.into_iter().enumerate() {
        let Ok(size) = usize::try_from(length) else {
            return Err(mismatch(format!(
                "element {i} has the negative length {length}"
            )));
        };
        let Some((element, tail)) = rest.split_at_checked(size) else {
            return Err(mismatch(format!(
                "element {i} has length {length} but only {} bytes are left",
                rest.len()
            )));
        };
        values.push(element.to_vec());
        rest = tail;
    }
    if !rest.is_empty() {
        return Err(mismatch(format!(
            "the lengths add up to {} bytes",
            bytes.len() - rest.len()
        )));
    }
    Ok(values)
}

/// A safetensors header: the `__metadata__` map and each tensor's entry, by
/// name.
#[derive(Default)]
struct Header {
    metadata: Option<HashMap<String, String>>,
    tensors: BTreeMap<String, TensorInfo>,
}

/// One tensor of the file, checked by [`check_layout`]: its dtype, a shape
/// whose element count is representable, and exactly the bytes that dtype
/// and shape need.
struct Entry<'a> {
    dtype: Dtype,
    shape: TensorShape,
    data: &'a [u8],
}

/// The header of a safetensors file, and the data section after it.
///
/// Checks the header length against the file and [`MAX_HEADER_BYTES`] before
/// anything is allocated for it; the header then deserializes straight into
/// [`Header`] (no JSON tree), so memory stays proportional to the header.
fn parse_header(bytes: &[u8]) -> Result<(Header, &[u8])> {
    let invalid = |why: String| Error::data_loss(format!("not a valid safetensors file: {why}"));
    let Some((length, rest)) = bytes.split_first_chunk::<8>() else {
        return Err(invalid(format!(
            "it has {} bytes, fewer than the 8 of the header length",
            bytes.len()
        )));
    };
    let length = u64::from_le_bytes(*length);
    if length > MAX_HEADER_BYTES {
        return Err(invalid(format!(
            "the header length {length} is more than the limit of {MAX_HEADER_BYTES} bytes"
        )));
    }
    // At most MAX_HEADER_BYTES: fits in usize.
    let Some((header, data)) = rest.split_at_checked(length as usize) else {
        return Err(invalid(format!(
            "the header length {length} runs past the end of the file ({} bytes after the \
             length)",
            rest.len()
        )));
    };
    let header = std::str::from_utf8(header)
        .map_err(|e| invalid(format!("the header is not UTF-8: {e}")))?;
    let header: Header =
        serde_json::from_str(header).map_err(|e| invalid(format!("bad header JSON: {e}")))?;
    Ok((header, data))
}

impl<'de> Deserialize<'de> for Header {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Header, D::Error> {
        deserializer.deserialize_map(HeaderVisitor)
    }
}

/// Deserializes a [`Header`] entry by entry, naming the tensor whose entry
/// is bad and refusing a name given twice (which a JSON map would silently
/// overwrite).
struct HeaderVisitor;

impl<'de> Visitor<'de> for HeaderVisitor {
    type Value = Header;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object of tensor entries and \"__metadata__\"")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Header, A::Error> {
        let mut header = Header::default();
        while let Some(name) = map.next_key::<String>()? {
            if name == METADATA {
                let metadata = map.next_value().map_err(|e| {
                    A::Error::custom(format!("\"{METADATA}\" is not a map of strings: {e}"))
                })?;
                if header.metadata.replace(metadata).is_some() {
                    return Err(A::Error::custom(format!("\"{METADATA}\" appears twice")));
                }
            } else {
                let info = map
                    .next_value()
                    .map_err(|e| A::Error::custom(format!("tensor {}: {e}", quoted(&name))))?;
                if header.tensors.contains_key(&name) {
                    return Err(A::Error::custom(format!(
                        "tensor {} appears twice",
                        quoted(&name)
                    )));
                }
                header.tensors.insert(name, info);
            }
        }
        Ok(header)
    }
}

/// Checks that every tensor has a representable shape and exactly the bytes
/// its dtype and shape need, and that the tensors tile `data` (one after
/// another from its start, no gaps, no overlaps, covering all of it), and
/// gives each tensor's bytes.
///
/// The safetensors crate checks the same, but its sums can overflow on a
/// hostile header, and its errors name no tensor.
fn check_layout<'a>(
    tensors: &'a BTreeMap<String, TensorInfo>,
    data: &'a [u8],
) -> Result<BTreeMap<String, Entry<'a>>> {
    let mut by_offset: Vec<(&String, &TensorInfo)> = tensors.iter().collect();
    by_offset.sort_by_key(|(name, info)| (info.data_offsets, *name));
    let mut entries = BTreeMap::new();
    let mut at = 0usize;
    let mut previous: Option<&str> = None;
    for (name, info) in by_offset {
        let dtype = info.dtype;
        let shape = TensorShape::try_new(info.shape.as_slice()).map_err(|e| {
            Error::data_loss(format!(
                "tensor {} ({dtype}): {}",
                quoted(name),
                e.message()
            ))
        })?;
        let (begin, end) = info.data_offsets;
        let size = shape
            .num_elements()
            .checked_mul(dtype.bitsize())
            .filter(|bits| bits % 8 == 0)
            .map(|bits| bits / 8)
            .ok_or_else(|| {
                Error::data_loss(format!(
                    "tensor '{name}' ({dtype}, shape {shape}) is not a whole number of bytes \
                     that fits in memory"
                ))
            })?;
        if end.checked_sub(begin) != Some(size) {
            return Err(Error::data_loss(format!(
                "tensor '{name}' ({dtype}, shape {shape}) needs {size} bytes but its \
                 data_offsets are [{begin}, {end}]"
            )));
        }
        if begin != at {
            return Err(Error::data_loss(match previous {
                Some(previous) => format!(
                    "tensor '{name}' starts at byte {begin} of the data but the tensor before \
                     it, '{previous}', ends at byte {at}"
                ),
                None => format!(
                    "tensor '{name}' starts at byte {begin} of the data but the first tensor \
                     must start at 0"
                ),
            }));
        }
        let Some(bytes) = data.get(begin..end) else {
            return Err(Error::data_loss(format!(
                "tensor '{name}' ends at byte {end} but the data section has only {} bytes",
                data.len()
            )));
        };
        entries.insert(
            name.clone(),
            Entry {
                dtype,
                shape,
                data: bytes,
            },
        );
        at = end;
        previous = Some(name);
    }
    if at != data.len() {
        return Err(Error::data_loss(format!(
            "the data section has {} bytes but its tensors cover {at} bytes",
            data.len()
        )));
    }
    Ok(entries)
}

/// What the metadata of an op-core checkpoint says about its tensors.
#[derive(Default)]
struct Encodings {
    /// The names of the string tensors.
    strings: Vec<String>,
    /// The names of the complex tensors.
    complex: Vec<String>,
    /// The CRC32C of each safetensors tensor's data, by name; `None` in a
    /// file written before checksums.
    checksums: Option<BTreeMap<String, u32>>,
}

/// The encodings of an op-core checkpoint, from its metadata; none for a
/// plain safetensors file.
fn encodings(metadata: Option<&HashMap<String, String>>) -> Result<Encodings> {
    let Some(metadata) = metadata else {
        return Ok(Encodings::default());
    };
    if metadata.get(FORMAT_KEY).map(String::as_str) != Some(FORMAT) {
        return Ok(Encodings::default());
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
    let checksums = match metadata.get(CRC32C_KEY) {
        None => None,
        Some(text) => Some(parse_checksums(text)?),
    };
    Ok(Encodings {
        strings: names(STRINGS_KEY)?,
        complex: names(COMPLEX_KEY)?,
        checksums,
    })
}

/// The checksums of metadata `crc32c`: a JSON object of tensor names and
/// checksums, each 8 hex digits.
fn parse_checksums(text: &str) -> Result<BTreeMap<String, u32>> {
    let hex: BTreeMap<String, String> = serde_json::from_str(text).map_err(|e| {
        Error::data_loss(format!(
            "metadata '{CRC32C_KEY}' is not a JSON object of tensor names and checksums: {e}"
        ))
    })?;
    hex.into_iter()
        .map(|(name, digits)| {
            let crc = (digits.len() == 8 && digits.bytes().all(|b| b.is_ascii_hexdigit()))
                .then(|| u32::from_str_radix(&digits, 16).ok())
                .flatten();
            match crc {
                Some(crc) => Ok((name, crc)),
                None => Err(Error::data_loss(format!(
                    "metadata '{CRC32C_KEY}' gives tensor '{name}' the checksum {digits:?}, \
                     not 8 hex digits"
                ))),
            }
        })
        .collect()
}

/// Checks that every tensor has a checksum, that every checksum is a
/// tensor's, and that each tensor's data has its checksum.
fn verify_checksums(
    entries: &BTreeMap<String, Entry<'_>>,
    checksums: &BTreeMap<String, u32>,
) -> Result<()> {
    if let Some(name) = checksums.keys().find(|name| !entries.contains_key(*name)) {
        return Err(Error::data_loss(format!(
            "metadata '{CRC32C_KEY}' has a checksum for '{name}', but there is no such tensor"
        )));
    }
    for (name, entry) in entries {
        let Some(&expected) = checksums.get(name) else {
            return Err(Error::data_loss(format!(
                "tensor '{name}' has no checksum in metadata '{CRC32C_KEY}'"
            )));
        };
        let actual = crc32c::crc32c(entry.data);
        if actual != expected {
            return Err(Error::data_loss(format!(
                "tensor '{name}' ({}, shape {}) is corrupt: its data has CRC32C checksum \
                 {actual:#010x} but the metadata says {expected:#010x}",
                entry.dtype, entry.shape
            )));
        }
    }
    Ok(())
}

/// A tensor stored as the safetensors dtype of its own element type.
fn plain_tensor(name: &str, entry: &Entry<'_>) -> Result<Tensor> {
    let (shape, bytes) = (&entry.shape, entry.data);
    macro_rules! le {
        ($ty:ty) => {
            from_vec(name, shape, elements(name, bytes, <$ty>::from_le_bytes)?)
        };
    }
    match entry.dtype {
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
    dims: &TensorShape,
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
fn from_vec<T: Element>(name: &str, shape: &TensorShape, values: Vec<T>) -> Result<Tensor> {
    Tensor::from_vec(shape.dims(), values)
        .map_err(|e| Error::data_loss(format!("tensor {}: {}", quoted(name), e.message())))
}
