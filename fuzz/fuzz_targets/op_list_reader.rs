//! Fuzzes op-spec's OpList reader (`pbtxt::parse_op_list`: the generic
//! protobuf-text reader, then OpDef's schema and TensorFlow's
//! `ValidateOpDef` checks) and the compatibility checker (`compat`) on what
//! it reads.
//!
//! The input is read as UTF-8 (invalid bytes become U+FFFD) and parsed as an
//! `OpList` in text format, as in TensorFlow's `ops.pbtxt`.
//!
//! Oracles:
//! - nothing panics, whatever the text (unbalanced braces, unknown fields,
//!   wrong scalar types, bad escapes, huge numbers, deep nesting);
//! - an error formats, and its line and column lie inside the text;
//! - ops that are read, written back (`op_list_to_string`), read again to
//!   ops that write the same text, and each is compatible with itself read
//!   back (`compat::check` finds nothing);
//! - the compatibility checker runs on any two ops read (neighbours in the
//!   list, the list against itself reversed) without panicking.

#![no_main]

use libfuzzer_sys::fuzz_target;
use op_spec::{compat, pbtxt};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match pbtxt::parse_op_list(&text) {
        Ok(ops) => {
            let written = pbtxt::op_list_to_string(&ops);
            let back = pbtxt::parse_op_list(&written)
                .unwrap_or_else(|e| panic!("what was read reads again once written: {e}\n{written}"));
            assert_eq!(pbtxt::op_list_to_string(&back), written);
            for (op, again) in ops.iter().zip(&back) {
                let violations = compat::check(op, again);
                assert!(violations.is_empty(), "{} against itself: {violations:?}", op.name);
            }
            for pair in ops.windows(2) {
                for v in compat::check(&pair[0], &pair[1]) {
                    assert!(!v.to_string().is_empty());
                }
            }
            let reversed: Vec<_> = ops.iter().rev().cloned().collect();
            let _ = compat::check_op_lists(&ops, &reversed);
        }
        Err(e) => {
            assert!(e.line >= 1 && e.column >= 1);
            assert!(e.line <= text.split('\n').count(), "{e}");
            assert!(!e.message.is_empty());
            assert!(!e.to_string().is_empty());
        }
    }
});
