//! Fuzzes op-core's checkpoint reader (`op_core::checkpoint::read_bytes`,
//! the decoder behind `checkpoint::read` and `Checkpoint::restore`) with
//! arbitrary bytes as the contents of a checkpoint file.
//!
//! Oracles:
//! - nothing panics (a shape with too many elements, offsets outside the
//!   data, string lengths that do not add up, ...), and nothing allocates
//!   far beyond the input (libFuzzer's `-rss_limit_mb` and
//!   `-malloc_limit_mb` catch that);
//! - an error is `DataLoss` or `Unimplemented` (a newer format version, a
//!   safetensors dtype with no dtype here), and formats;
//! - a decoded tensor has as many elements as its shape says, and no more
//!   than the input has bytes, unless its shape has a zero.

#![no_main]

use libfuzzer_sys::fuzz_target;
use op_core::checkpoint;
use op_core::{Code, DType};

fuzz_target!(|data: &[u8]| {
    match checkpoint::read_bytes(data) {
        Ok(tensors) => {
            for (name, tensor) in &tensors {
                let count: usize = tensor.dims().iter().product();
                assert_eq!(tensor.num_elements(), count, "tensor {name:?}");
                // Every element came from the input, but a string element
                // may be empty (its length is 8 bytes of input, its bytes
                // none), so only non-string tensors are bounded by bytes.
                if tensor.dtype() != DType::String {
                    assert!(count <= data.len(), "tensor {name:?} has {count} elements");
                } else {
                    assert!(
                        count <= data.len() / 8,
                        "tensor {name:?} has {count} strings"
                    );
                }
            }
        }
        Err(error) => {
            assert!(
                matches!(error.code(), Code::DataLoss | Code::Unimplemented),
                "unexpected error code: {error}"
            );
            assert!(!error.to_string().is_empty());
        }
    }
});
