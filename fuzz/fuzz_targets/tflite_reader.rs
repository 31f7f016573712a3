//! Fuzzes op-lite's `.tflite` reader (`Model::from_bytes`: the identifier,
//! the flatbuffers verifier with its limits, the translation into the model
//! types, buffers after the flatbuffer, and `Model::validate`) with
//! arbitrary bytes as the contents of a `.tflite` file.
//!
//! Oracles:
//! - nothing panics (offsets out of the file, negative dimensions and
//!   indices, unknown type and option codes, shapes whose sizes overflow,
//!   buffers after the flatbuffer that lie outside the file or overlap),
//!   and nothing allocates far beyond the input (libFuzzer's
//!   `-rss_limit_mb` and `-malloc_limit_mb` catch that);
//! - an error is `InvalidArgument` or `Unimplemented`, and formats;
//! - a model that reads is valid, writes, and reads back to the same
//!   bytes when written again (bytes, not `==`: a float option may be NaN).

#![no_main]

use libfuzzer_sys::fuzz_target;
use op_core::Code;
use op_lite::Model;

fuzz_target!(|data: &[u8]| {
    match Model::from_bytes(data) {
        Ok(model) => {
            model.validate().expect("a model that reads is valid");
            let written = model.to_bytes().expect("a model that reads writes");
            let again = Model::from_bytes(&written).expect("what the writer wrote reads");
            assert_eq!(again.to_bytes().expect("and writes again"), written);
        }
        Err(error) => {
            assert!(
                matches!(error.code(), Code::InvalidArgument | Code::Unimplemented),
                "unexpected error code: {error}"
            );
            assert!(!error.to_string().is_empty());
        }
    }
});
