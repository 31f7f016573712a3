//! Tensors to and from NumPy's `.npy` files (ndarray-npy), for the tool's
//! inputs and outputs: bool, the integer types and float32/float64.
//!
//! Reading checks the file against its own header before anything is
//! allocated for it: the header's length must fit in the file, and the
//! array the header describes (its shape times its element size) must be
//! the data that follows it. A 160-byte file whose header claims shape
//! `(2**40, 4)` is an `InvalidArgument` error, not a 16 TiB allocation.
//!
//! ```
//! use opkit::npy;
//! // A version 1.0 header that claims 2**40 x 4 floats, and no data.
//! let header = b"{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 4), }";
//! let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
//! bytes.extend((header.len() as u16 + 1).to_le_bytes());
//! bytes.extend(header);
//! bytes.push(b'\n');
//! let err = npy::from_bytes(&bytes).unwrap_err();
//! assert_eq!(err.code(), op_core::Code::InvalidArgument);
//! assert!(err.message().contains("17592186044416 bytes of float data"), "{err}");
//! ```

use std::path::Path;

use ndarray::{ArrayD, IxDyn};
use ndarray_npy::npy::header::{Header, ReadHeaderError};
use ndarray_npy::{ReadNpyError, ReadNpyExt, write_npy};
use op_core::error::summarized;
use op_core::{DType, Error, Result, Tensor};

/// Calls `$body` with `$t` bound to the element type of each dtype a
/// `.npy` file here can hold, as `$dtype => { ... }` arms of a match.
macro_rules! npy_types {
    ($m:ident) => {
        $m! {
            DType::F32 => f32,
            DType::F64 => f64,
            DType::I32 => i32,
            DType::I64 => i64,
            DType::Bool => bool,
            DType::U8 => u8,
            DType::I8 => i8,
            DType::I16 => i16,
            DType::U16 => u16,
            DType::U32 => u32,
            DType::U64 => u64,
        }
    };
}

/// The `.npy` magic string.
const MAGIC: &[u8] = b"\x93NUMPY";

/// The dtypes read here, as NumPy's type descriptors give them (kind and
/// size; the byte order is the descriptor's first character).
const DESCRIPTORS: [(&str, DType); 11] = [
    ("f4", DType::F32),
    ("f8", DType::F64),
    ("i4", DType::I32),
    ("i8", DType::I64),
    ("b1", DType::Bool),
    ("u1", DType::U8),
    ("i1", DType::I8),
    ("i2", DType::I16),
    ("u2", DType::U16),
    ("u4", DType::U32),
    ("u8", DType::U64),
];

/// Reads the `.npy` file at `path` as a tensor of the file's dtype.
///
/// The file is read through [`op_core::file::read_regular_file`] (a FIFO,
/// a device or a directory is a `FailedPrecondition` error at once), then
/// decoded as [`from_bytes`] does; errors name the file. A missing file is
/// `NotFound`.
pub fn read(path: &Path) -> Result<Tensor> {
    let bytes = op_core::file::read_regular_file(path)?;
    from_bytes(&bytes).map_err(|e| e.with_context(format!("reading {}", path.display())))
}

/// Decodes the bytes of a `.npy` file (format versions 1.0, 2.0 and 3.0)
/// as a tensor of the file's dtype.
///
/// Returns an `InvalidArgument` error for a dtype this reader does not take
/// (strings, complex, half, objects), and for a malformed file: a wrong
/// magic string, a header longer than the file, a header that does not
/// parse (shown cut to a bounded length), or data that is not the size the
/// header's shape and dtype give, naming both sizes. Nothing is allocated
/// beyond what `bytes` could hold.
pub fn from_bytes(bytes: &[u8]) -> Result<Tensor> {
    let bad = |what: String| Error::invalid_argument(format!("not a valid .npy file: {what}"));
    let data_start = header_end(bytes).map_err(bad)?;
    let header = Header::from_reader(&mut &bytes[..data_start]).map_err(|e| match e {
        ReadHeaderError::Io(e) => bad(format!("its header ends early ({e})")),
        ReadHeaderError::Parse(e) => bad(format!("its header: {}", summarized(&e))),
    })?;
    // A structured dtype's descriptor is a list, not a string.
    let Some(descriptor) = header.type_descriptor.as_string().map(String::as_str) else {
        return Err(Error::invalid_argument(format!(
            "the array's dtype {} is not one of bool, int8-64, uint8-64, float32, float64",
            summarized(&header.type_descriptor)
        )));
    };
    let dtype = dtype_of(descriptor).ok_or_else(|| {
        Error::invalid_argument(format!(
            "the array's dtype {} is not one of bool, int8-64, uint8-64, float32, float64",
            op_core::error::quoted(descriptor)
        ))
    })?;
    let elements = element_count(&header.shape);
    let data_bytes = elements.and_then(|n| n.checked_mul(dtype.size_of().unwrap_or(1)));
    let held = bytes.len() - data_start;
    if data_bytes != Some(held) {
        let needed = match data_bytes {
            Some(n) => format!("{n} bytes of {dtype} data"),
            None => format!("more {dtype} data than any memory holds"),
        };
        return Err(bad(format!(
            "its header gives shape {} ({needed}), but {held} bytes follow the header",
            shape_text(&header.shape)
        )));
    }
    macro_rules! read_as {
        ($($dtype:path => $t:ty,)*) => {
            match dtype {
                $($dtype => ArrayD::<$t>::read_npy(bytes).map(Tensor::from_array),)*
                other => unreachable!("{other} is in DESCRIPTORS but not in npy_types"),
            }
        };
    }
    npy_types!(read_as).map_err(|e| match e {
        ReadNpyError::WrongDescriptor(_) => Error::invalid_argument(format!(
            "the array's dtype {} is not one of bool, int8-64, uint8-64, float32, float64",
            op_core::error::quoted(descriptor)
        )),
        other => bad(summarized(&other).to_string()),
    })
}

/// Where the header of the `.npy` file in `bytes` ends (the offset of the
/// data), after checking the magic string and the version, and that the
/// header's length fits in `bytes`.
fn header_end(bytes: &[u8]) -> std::result::Result<usize, String> {
    if bytes.len() < MAGIC.len() + 2 || !bytes.starts_with(MAGIC) {
        return Err(format!(
            "it does not start with the magic string \\x93NUMPY and a version ({} bytes in all)",
            bytes.len()
        ));
    }
    let (major, minor) = (bytes[6], bytes[7]);
    let (len_bytes, start) = match (major, minor) {
        (1, 0) => (2, 10),
        (2 | 3, 0) => (4, 12),
        _ => {
            return Err(format!(
                "format version {major}.{minor} is not 1.0, 2.0 or 3.0"
            ));
        }
    };
    let Some(len) = bytes.get(8..8 + len_bytes) else {
        return Err(format!(
            "it ends before its header length ({} bytes in all)",
            bytes.len()
        ));
    };
    let len = len
        .iter()
        .rev()
        .fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
    let end = start + len;
    if end > bytes.len() {
        return Err(format!(
            "its header length says {len} bytes, but only {} follow it",
            bytes.len() - start
        ));
    }
    Ok(end)
}

/// The dtype of NumPy's type descriptor `descriptor` (`<f4`, `|b1`), if it
/// is one read here.
fn dtype_of(descriptor: &str) -> Option<DType> {
    let (order, code) = descriptor.split_at_checked(1)?;
    if !matches!(order, "<" | ">" | "|" | "=") {
        return None;
    }
    DESCRIPTORS
        .iter()
        .find(|(c, _)| *c == code)
        .map(|&(_, dtype)| dtype)
}

/// The number of elements of `shape`, `None` past `usize`. A shape with a
/// zero has no elements whatever its other dimensions.
fn element_count(shape: &[usize]) -> Option<usize> {
    if shape.contains(&0) {
        return Some(0);
    }
    shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d))
}

/// `shape` as the message shows it: `(2, 3)`, the first 8 dimensions and
/// the rank past that.
fn shape_text(shape: &[usize]) -> String {
    const SHOWN: usize = 8;
    let dims: Vec<String> = shape.iter().take(SHOWN).map(usize::to_string).collect();
    if shape.len() > SHOWN {
        format!(
            "({}, ... {} dimensions in all)",
            dims.join(", "),
            shape.len()
        )
    } else if shape.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    }
}

/// Writes `tensor` to `path` as a `.npy` file, creating its folder.
///
/// Returns an `InvalidArgument` error for a dtype `.npy` files here do not
/// take, and an I/O error naming the file.
pub fn write(path: &Path, tensor: &Tensor) -> Result<()> {
    // A fetch of a scoped node (`layer1/MatMul`) is a file in a folder.
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| op_core::file::io_error(e, "creating", parent))?;
    }
    macro_rules! write_as {
        ($($dtype:path => $t:ty,)*) => {
            match tensor.dtype() {
                $($dtype => {
                    let view = tensor.view::<$t>()?;
                    let view = view.into_shape_with_order(IxDyn(tensor.dims()))
                        .map_err(|e| Error::internal(e.to_string()))?;
                    write_npy(path, &view)
                })*
                other => {
                    return Err(Error::invalid_argument(format!(
                        "{}: a {other} tensor cannot be written as .npy here",
                        path.display()
                    )));
                }
            }
        };
    }
    npy_types!(write_as)
        .map_err(|e| Error::invalid_argument(format!("cannot write {}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `.npy` file of format `version` with `header` (padded and ended
    /// with a newline) followed by `data`.
    fn npy(version: u8, header: &str, data: &[u8]) -> Vec<u8> {
        let mut bytes = MAGIC.to_vec();
        bytes.extend([version, 0]);
        let len = header.len() + 1;
        if version == 1 {
            bytes.extend((len as u16).to_le_bytes());
        } else {
            bytes.extend((len as u32).to_le_bytes());
        }
        bytes.extend(header.as_bytes());
        bytes.push(b'\n');
        bytes.extend(data);
        bytes
    }

    fn f32_header(shape: &str) -> String {
        format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}")
    }

    #[test]
    fn a_valid_file_reads() {
        let data: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        for version in [1, 2, 3] {
            let t = from_bytes(&npy(version, &f32_header("(2, 3)"), &data)).unwrap();
            assert_eq!(t.dims(), [2, 3]);
            assert_eq!(t.as_slice::<f32>().unwrap(), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        }
        let t = from_bytes(&npy(1, &f32_header("(0, 1099511627776)"), &[])).unwrap();
        assert_eq!(t.num_elements(), 0);
    }

    #[test]
    fn a_huge_shape_is_refused_before_any_allocation() {
        let err = from_bytes(&npy(1, &f32_header("(1099511627776, 4)"), &[0; 16])).unwrap_err();
        assert_eq!(err.code(), op_core::Code::InvalidArgument);
        assert!(
            err.message().contains(
                "shape (1099511627776, 4) (17592186044416 bytes of float data), but 16 bytes \
                 follow the header"
            ),
            "{err}"
        );
        let err = from_bytes(&npy(
            1,
            &f32_header("(18446744073709551615, 18446744073709551615)"),
            &[],
        ))
        .unwrap_err();
        assert!(
            err.message()
                .contains("more float data than any memory holds"),
            "{err}"
        );
    }

    #[test]
    fn a_header_length_past_the_file_is_refused() {
        let mut bytes = MAGIC.to_vec();
        bytes.extend([2, 0]);
        bytes.extend(0xFFFF_FFF0u32.to_le_bytes());
        bytes.extend(b"{'descr'");
        let err = from_bytes(&bytes).unwrap_err();
        assert!(
            err.message()
                .contains("its header length says 4294967280 bytes, but only 8 follow it"),
            "{err}"
        );
    }

    #[test]
    fn truncated_data_names_both_sizes() {
        let err = from_bytes(&npy(1, &f32_header("(2, 3)"), &[0; 10])).unwrap_err();
        assert!(
            err.message()
                .contains("shape (2, 3) (24 bytes of float data), but 10 bytes follow"),
            "{err}"
        );
        assert!(!err.to_string().contains("fill whole buffer"), "{err}");
    }

    #[test]
    fn a_bad_header_is_shown_cut_short() {
        let junk = format!("{{'descr': '<f4', 'x': '{}'}}", "y".repeat(40_000));
        let err = from_bytes(&npy(2, &junk, &[])).unwrap_err();
        assert!(
            err.to_string().len() < 1_000,
            "{} bytes",
            err.to_string().len()
        );
    }

    #[test]
    fn other_dtypes_and_malformed_starts_are_invalid_arguments() {
        let complex = "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }";
        let err = from_bytes(&npy(1, complex, &[0; 8])).unwrap_err();
        assert!(err.message().contains("'<c8' is not one of"), "{err}");
        for bytes in [
            &b""[..],
            b"\x93NUMPY",
            b"PK\x03\x04 a zip",
            b"\x93NUMPY\x09\x00",
        ] {
            let err = from_bytes(bytes).unwrap_err();
            assert_eq!(err.code(), op_core::Code::InvalidArgument, "{err}");
        }
    }

    #[test]
    fn the_rank_of_a_shape_is_capped_in_messages() {
        assert_eq!(shape_text(&[3]), "(3,)");
        assert_eq!(shape_text(&[]), "()");
        let long = shape_text(&[1; 100_000]);
        assert!(long.ends_with("... 100000 dimensions in all)"), "{long}");
    }
}
