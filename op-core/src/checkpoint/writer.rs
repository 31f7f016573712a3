//! Writing checkpoints: tensors encoded as safetensors tensors, the header,
//! and the data.

use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::Path;

use half::{bf16, f16};
use safetensors::tensor::{Dtype, Metadata, TensorInfo};

use super::file::{io_error, write_atomically};
use super::{
    COMPLEX_KEY, CRC32C_KEY, FORMAT, FORMAT_KEY, LENGTHS_SUFFIX, METADATA, STRINGS_KEY, VERSION,
    VERSION_KEY,
};
use crate::{Complex64, Complex128, DType, Error, Result, Tensor};

/// Writes `tensors` (names and tensors: a `&BTreeMap<String, Tensor>`, a
/// `Vec<(&str, &Tensor)>`, ...) to the file at `path` in the layout of the
/// [module docs](super), replacing the file atomically: a temporary file in
/// the same directory, synced, then renamed over `path`. First it removes
/// the stale temporary files that dead writers left in that directory (on
/// Unix; see the module docs).
///
/// Returns an `InvalidArgument` error for an empty, duplicate or reserved
/// (`__metadata__`) name, or if a string tensor's `.lengths` companion has
/// the name of another tensor; an `Unimplemented` error for a tensor whose
/// dtype cannot be stored; and the I/O error (`NotFound` for a missing
/// directory, `PermissionDenied`, ...). Every error names the path, and on
/// error the file at `path` is unchanged.
///
/// ```
/// use op_core::{checkpoint, Tensor};
/// let path = std::env::temp_dir().join(format!("op-core-write-{}.safetensors", std::process::id()));
/// let words = Tensor::strings([2], ["hello", "world"])?;
/// let ids = Tensor::from_vec([2], vec![4i64, 2])?;
/// checkpoint::write(&path, [("words", &words), ("ids", &ids)])?;
/// let back = checkpoint::read(&path)?;
/// assert_eq!(back["words"], words);
/// assert_eq!(back["ids"], ids);
/// # std::fs::remove_file(&path).unwrap();
/// # Ok::<(), op_core::Error>(())
/// ```
pub fn write<I, K, T>(path: impl AsRef<Path>, tensors: I) -> Result<()>
where
    I: IntoIterator<Item = (K, T)>,
    K: AsRef<str>,
    T: Borrow<Tensor>,
{
    let path = path.as_ref();
    let tensors: Vec<(K, T)> = tensors.into_iter().collect();
    write_tensors(path, &tensors)
        .map_err(|e| e.with_context(format!("writing checkpoint '{}'", path.display())))
}

/// [`write`](write()) without the context.
fn write_tensors<K: AsRef<str>, T: Borrow<Tensor>>(path: &Path, tensors: &[(K, T)]) -> Result<()> {
    let mut stored = Vec::new();
    let mut strings = Vec::new();
    let mut complex = Vec::new();
    // Every safetensors name, with the name of the tensor it stores.
    let mut owners: BTreeMap<String, &str> = BTreeMap::new();
    for (name, tensor) in tensors {
        let name = name.as_ref();
        if name.is_empty() || name == METADATA {
            return Err(Error::invalid_argument(format!(
                "invalid tensor name {name:?}: names are non-empty and not '__metadata__'"
            )));
        }
        let tensor = tensor.borrow();
        match tensor.dtype() {
            DType::String => strings.push(name.to_string()),
            DType::Complex64 | DType::Complex128 => complex.push(name.to_string()),
            _ => {}
        }
        for entry in encode(name, tensor)? {
            if let Some(owner) = owners.insert(entry.name.clone(), name) {
                return Err(Error::invalid_argument(if owner == name {
                    format!("two tensors are named '{name}'")
                } else {
                    format!(
                        "tensor names '{owner}' and '{name}' both need the name '{}' (a string \
                         tensor's lengths are stored as '<name>{LENGTHS_SUFFIX}')",
                        entry.name
                    )
                }));
            }
            stored.push(entry);
        }
    }
    // Largest elements first, so every tensor is aligned to its element size.
    stored.sort_by(|a, b| {
        b.dtype
            .bitsize()
            .cmp(&a.dtype.bitsize())
            .then_with(|| a.name.cmp(&b.name))
    });

    strings.sort();
    complex.sort();
    // The checksums go in the header, before the data: the header is
    // written with placeholders, the data with its checksums computed on the
    // way, then the header again. Each checksum is 8 hex digits, so the
    // header keeps its length.
    let placeholder = header(&stored, &strings, &complex, None)?;
    write_atomically(path, |file, temp_path| {
        let io = |e| io_error(e, "writing", temp_path);
        let mut out = BufWriter::with_capacity(1 << 20, &mut *file);
        out.write_all(&(placeholder.len() as u64).to_le_bytes())
            .map_err(io)?;
        out.write_all(&placeholder).map_err(io)?;
        let mut checksums = Vec::with_capacity(stored.len());
        for entry in &stored {
            let mut tee = Crc32cTee {
                crc: 0,
                out: &mut out,
            };
            entry.data.write_to(&mut tee).map_err(io)?;
            checksums.push(tee.crc);
        }
        out.flush().map_err(io)?;
        drop(out);
        let header = header(&stored, &strings, &complex, Some(&checksums))?;
        if header.len() != placeholder.len() {
            return Err(Error::internal(format!(
                "the checkpoint header changed length from {} to {} bytes with its checksums",
                placeholder.len(),
                header.len()
            )));
        }
        file.seek(SeekFrom::Start(8))
            .and_then(|_| file.write_all(&header))
            .map_err(io)
    })
}

/// A tensor as safetensors stores it: name, dtype, shape and elements.
struct Stored<'t> {
    name: String,
    dtype: Dtype,
    shape: Vec<usize>,
    /// The size of the data in bytes.
    bytes: usize,
    data: Source<'t>,
}

/// The elements of a [`Stored`] tensor, borrowed from the tensor.
enum Source<'t> {
    Bool(&'t [bool]),
    U8(&'t [u8]),
    I8(&'t [i8]),
    I16(&'t [i16]),
    U16(&'t [u16]),
    I32(&'t [i32]),
    U32(&'t [u32]),
    I64(&'t [i64]),
    U64(&'t [u64]),
    F16(&'t [f16]),
    BF16(&'t [bf16]),
    F32(&'t [f32]),
    F64(&'t [f64]),
    Complex64(&'t [Complex64]),
    Complex128(&'t [Complex128]),
    /// A string tensor's bytes, concatenated.
    StringBytes(&'t [Vec<u8>]),
    /// A string tensor's element lengths, as `i64`.
    StringLengths(&'t [Vec<u8>]),
}

/// The safetensors tensors that store `tensor`, named `name`.
fn encode<'t>(name: &str, tensor: &'t Tensor) -> Result<Vec<Stored<'t>>> {
    let dims = tensor.dims();
    let n = tensor.num_elements();
    let size = |element_bytes: usize| {
        n.checked_mul(element_bytes).ok_or_else(|| {
            Error::invalid_argument(format!("tensor '{name}' is too large to store"))
        })
    };
    let one = |dtype: Dtype, shape: Vec<usize>, bytes: usize, data: Source<'t>| {
        Ok(vec![Stored {
            name: name.to_string(),
            dtype,
            shape,
            bytes,
            data,
        }])
    };
    macro_rules! plain {
        ($ty:ty, $variant:ident, $dtype:ident) => {
            one(
                Dtype::$dtype,
                dims.to_vec(),
                size(size_of::<$ty>())?,
                Source::$variant(tensor.as_slice::<$ty>()?),
            )
        };
    }
    match tensor.dtype() {
        DType::Bool => plain!(bool, Bool, BOOL),
        DType::U8 => plain!(u8, U8, U8),
        DType::I8 => plain!(i8, I8, I8),
        DType::I16 => plain!(i16, I16, I16),
        DType::U16 => plain!(u16, U16, U16),
        DType::I32 => plain!(i32, I32, I32),
        DType::U32 => plain!(u32, U32, U32),
        DType::I64 => plain!(i64, I64, I64),
        DType::U64 => plain!(u64, U64, U64),
        DType::F16 => plain!(f16, F16, F16),
        DType::BF16 => plain!(bf16, BF16, BF16),
        DType::F32 => plain!(f32, F32, F32),
        DType::F64 => plain!(f64, F64, F64),
        DType::Complex64 => one(
            Dtype::F32,
            [dims, &[2]].concat(),
            size(8)?,
            Source::Complex64(tensor.as_slice()?),
        ),
        DType::Complex128 => one(
            Dtype::F64,
            [dims, &[2]].concat(),
            size(16)?,
            Source::Complex128(tensor.as_slice()?),
        ),
        DType::String => {
            let elements = tensor.as_slice::<Vec<u8>>()?;
            let total = elements
                .iter()
                .try_fold(0usize, |sum, s| sum.checked_add(s.len()))
                .ok_or_else(|| {
                    Error::invalid_argument(format!("tensor '{name}' is too large to store"))
                })?;
            Ok(vec![
                Stored {
                    name: name.to_string(),
                    dtype: Dtype::U8,
                    shape: vec![total],
                    bytes: total,
                    data: Source::StringBytes(elements),
                },
                Stored {
                    name: format!("{name}{LENGTHS_SUFFIX}"),
                    dtype: Dtype::I64,
                    shape: dims.to_vec(),
                    bytes: size(8)?,
                    data: Source::StringLengths(elements),
                },
            ])
        }
        dtype @ (DType::QInt8
        | DType::QUInt8
        | DType::QInt16
        | DType::QUInt16
        | DType::QInt32
        | DType::Resource
        | DType::Variant) => Err(Error::unimplemented(format!(
            "tensor '{name}' has dtype {dtype}, which a checkpoint cannot store"
        ))),
    }
}

/// The header JSON, padded with spaces to a multiple of 8 bytes.
///
/// `checksums` are the CRC32Cs of the `stored` tensors' data, in order;
/// `None` writes zeros in their place, which keeps the header's length.
fn header(
    stored: &[Stored<'_>],
    strings: &[String],
    complex: &[String],
    checksums: Option<&[u32]>,
) -> Result<Vec<u8>> {
    let json =
        |e: serde_json::Error| Error::internal(format!("encoding the checkpoint header: {e}"));
    let crc32c_by_name: BTreeMap<&str, String> = stored
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            let crc = checksums.map_or(0, |sums| sums[i]);
            (entry.name.as_str(), format!("{crc:08x}"))
        })
        .collect();
    let metadata: BTreeMap<&str, String> = [
        (FORMAT_KEY, FORMAT.to_string()),
        (VERSION_KEY, VERSION.to_string()),
        (STRINGS_KEY, serde_json::to_string(strings).map_err(json)?),
        (COMPLEX_KEY, serde_json::to_string(complex).map_err(json)?),
        (
            CRC32C_KEY,
            serde_json::to_string(&crc32c_by_name).map_err(json)?,
        ),
    ]
    .into();
    let mut header = serde_json::Map::new();
    header.insert(
        METADATA.to_string(),
        serde_json::to_value(metadata).map_err(json)?,
    );
    let mut offset = 0usize;
    for entry in stored {
        let end = offset
            .checked_add(entry.bytes)
            .ok_or_else(|| Error::invalid_argument("the checkpoint is too large to store"))?;
        let info = TensorInfo {
            dtype: entry.dtype,
            shape: entry.shape.clone(),
            data_offsets: (offset, end),
        };
        header.insert(
            entry.name.clone(),
            serde_json::to_value(info).map_err(json)?,
        );
        offset = end;
    }
    let mut text = serde_json::Value::Object(header).to_string();
    // The safetensors library must accept what we write: it checks that the
    // offsets cover the data, each exactly as large as dtype and shape say.
    serde_json::from_str::<Metadata>(&text)
        .map_err(|e| Error::internal(format!("the checkpoint header is invalid: {e}")))?;
    while !text.len().is_multiple_of(8) {
        text.push(' ');
    }
    Ok(text.into_bytes())
}

/// A writer that passes bytes on to `out` and computes their CRC32C.
struct Crc32cTee<W> {
    crc: u32,
    out: W,
}

impl<W: Write> Write for Crc32cTee<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let written = self.out.write(bytes)?;
        self.crc = crc32c::crc32c_append(self.crc, &bytes[..written]);
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

impl Source<'_> {
    /// Writes the elements, little-endian.
    fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
        match *self {
            Source::Bool(v) => write_le(out, v, |&b| [u8::from(b)]),
            Source::U8(v) => out.write_all(v),
            Source::I8(v) => write_le(out, v, |x| x.to_le_bytes()),
            Source::I16(v) => write_le(out, v, |x| x.to_le_bytes()),
            Source::U16(v) => write_le(out, v, |x| x.to_le_bytes()),
            Source::I32(v) => write_le(out, v, |x| x.to_le_bytes()),
            Source::U32(v) => write_le(out, v, |x| x.to_le_bytes()),
            Source::I64(v) => write_le(out, v, |x| x.to_le_bytes()),
            Source::U64(v) => write_le(out, v, |x| x.to_le_bytes()),
            Source::F16(v) => write_le(out, v, |x| x.to_le_bytes()),
            Source::BF16(v) => write_le(out, v, |x| x.to_le_bytes()),
            Source::F32(v) => write_le(out, v, |x| x.to_le_bytes()),
            Source::F64(v) => write_le(out, v, |x| x.to_le_bytes()),
            Source::Complex64(v) => write_le(out, v, |c| {
                pair::<4, 8>(c.re.to_le_bytes(), c.im.to_le_bytes())
            }),
            Source::Complex128(v) => write_le(out, v, |c| {
                pair::<8, 16>(c.re.to_le_bytes(), c.im.to_le_bytes())
            }),
            Source::StringBytes(v) => v.iter().try_for_each(|s| out.write_all(s)),
            Source::StringLengths(v) => write_le(out, v, |s| (s.len() as i64).to_le_bytes()),
        }
    }
}

/// The bytes of `a` then those of `b`.
fn pair<const N: usize, const M: usize>(a: [u8; N], b: [u8; N]) -> [u8; M] {
    let mut out = [0; M];
    for (o, x) in out.iter_mut().zip(a.into_iter().chain(b)) {
        *o = x;
    }
    out
}

/// Writes `values` converted by `bytes`, through a buffer of about 64 KiB.
fn write_le<T, const N: usize>(
    out: &mut impl Write,
    values: &[T],
    bytes: impl Fn(&T) -> [u8; N],
) -> io::Result<()> {
    let mut buffer = Vec::with_capacity(1 << 16);
    for chunk in values.chunks(((1 << 16) / N).max(1)) {
        buffer.clear();
        for value in chunk {
            buffer.extend_from_slice(&bytes(value));
        }
        out.write_all(&buffer)?;
    }
    Ok(())
}
