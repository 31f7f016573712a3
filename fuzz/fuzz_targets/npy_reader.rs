//! Fuzzes opkit's `.npy` reader (`opkit::npy::from_bytes`, the decoder
//! behind `npy::read` and the tool's `.npy` inputs) with arbitrary bytes as
//! the contents of a `.npy` file.
//!
//! Oracles:
//! - nothing panics (header lengths past the file, headers that do not
//!   parse, shapes whose sizes overflow, data shorter or longer than the
//!   shape), and nothing allocates far beyond the input (libFuzzer's
//!   `-rss_limit_mb` and `-malloc_limit_mb` catch that);
//! - an error is `InvalidArgument`, formats, and stays short whatever the
//!   input (a message never echoes an unbounded header);
//! - a tensor that reads is exactly the data after the header: as many
//!   elements as its shape says, and each element the bytes at its place
//!   in the file's order (C or Fortran) and byte order (`<`, `>`, `|`),
//!   checked here independently of the reader.

#![no_main]

use libfuzzer_sys::fuzz_target;
use ndarray_npy::npy::header::Header;
use op_core::{Code, DType, Tensor};

/// The longest error message a `.npy` file may produce.
const MAX_MESSAGE: usize = 1024;

/// Where the data of a (valid) `.npy` file starts.
fn data_start(bytes: &[u8]) -> usize {
    let (len_bytes, start) = if bytes[6] == 1 { (2, 10) } else { (4, 12) };
    let len = bytes[8..8 + len_bytes]
        .iter()
        .rev()
        .fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
    start + len
}

/// The tensor's elements in C order, each as its little-endian bytes.
fn element_bytes(tensor: &Tensor) -> Vec<Vec<u8>> {
    macro_rules! numeric {
        ($($dtype:ident => $t:ty),*) => {
            match tensor.dtype() {
                $(DType::$dtype => tensor
                    .as_slice::<$t>()
                    .unwrap()
                    .iter()
                    .map(|v| v.to_le_bytes().to_vec())
                    .collect(),)*
                DType::Bool => tensor
                    .as_slice::<bool>()
                    .unwrap()
                    .iter()
                    .map(|&v| vec![u8::from(v)])
                    .collect(),
                other => panic!("a .npy file read as a {other} tensor"),
            }
        };
    }
    numeric!(F32 => f32, F64 => f64, I8 => i8, I16 => i16, I32 => i32, I64 => i64,
             U8 => u8, U16 => u16, U32 => u32, U64 => u64)
}

/// The offset, in elements, of C-order element `index` of `dims` in a
/// Fortran-order buffer.
fn fortran_offset(mut index: usize, dims: &[usize]) -> usize {
    let mut position = vec![0; dims.len()];
    for (axis, &d) in dims.iter().enumerate().rev() {
        position[axis] = index % d;
        index /= d;
    }
    let mut offset = 0;
    for (axis, &d) in dims.iter().enumerate().rev() {
        offset = offset * d + position[axis];
    }
    offset
}

fn check_read(bytes: &[u8], tensor: &Tensor) {
    let start = data_start(bytes);
    let header = Header::from_reader(&mut &bytes[..start]).expect("a file that reads has a header");
    let descriptor = header
        .type_descriptor
        .as_string()
        .expect("a plain dtype")
        .clone();
    let big_endian = descriptor.starts_with('>');
    assert_eq!(tensor.dims(), header.shape.as_slice());
    let count: usize = tensor.dims().iter().product();
    assert_eq!(tensor.num_elements(), count);
    let data = &bytes[start..];
    let size = tensor.dtype().size_of().unwrap();
    assert_eq!(count * size, data.len(), "the data is exactly the shape's");
    for (index, element) in element_bytes(tensor).into_iter().enumerate() {
        let at = if header.layout.is_fortran() {
            fortran_offset(index, tensor.dims())
        } else {
            index
        };
        let mut stored = data[at * size..(at + 1) * size].to_vec();
        if big_endian {
            stored.reverse();
        }
        assert_eq!(
            element,
            stored,
            "element {index} of {descriptor} {:?}",
            tensor.dims()
        );
    }
}

fuzz_target!(|data: &[u8]| {
    match opkit::npy::from_bytes(data) {
        Ok(tensor) => check_read(data, &tensor),
        Err(error) => {
            assert_eq!(error.code(), Code::InvalidArgument, "{error}");
            let message = error.to_string();
            assert!(!message.is_empty());
            assert!(
                message.len() <= MAX_MESSAGE,
                "a {}-byte message: {}",
                message.len(),
                &message[..message.floor_char_boundary(MAX_MESSAGE)]
            );
        }
    }
});
