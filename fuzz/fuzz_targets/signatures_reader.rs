//! Fuzzes the reader of a saved model's `signatures.json`
//! (`op_graph::saved_model::parse_signatures`, what `saved_model::load`
//! reads from the directory) with arbitrary text.
//!
//! Oracles:
//! - nothing panics, whatever the JSON (deep nesting, huge keys, numbers,
//!   duplicate keys);
//! - an error is `DataLoss`, formats, and stays short whatever the input
//!   (messages quote keys and values at a bounded length);
//! - signatures that read are written back (`write_signatures`) and read
//!   again to the same signatures.

#![no_main]

use libfuzzer_sys::fuzz_target;
use op_core::Code;
use op_graph::saved_model::{parse_signatures, write_signatures};

/// The longest error message a `signatures.json` may produce.
const MAX_MESSAGE: usize = 2048;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match parse_signatures(&text) {
        Ok(signatures) => {
            let again = parse_signatures(&write_signatures(&signatures))
                .unwrap_or_else(|e| panic!("written signatures do not read back: {e}"));
            assert_eq!(again, signatures);
        }
        Err(e) => {
            assert_eq!(e.code(), Code::DataLoss, "{e}");
            let message = e.to_string();
            assert!(message.len() <= MAX_MESSAGE, "{} bytes: {message:.300}", message.len());
        }
    }
});
