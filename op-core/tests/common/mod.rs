//! Helpers shared by the runtime tests.

use op_core::Error;

/// Asserts that the error's full text (code, message, context) contains
/// every one of `parts`.
#[track_caller]
pub fn assert_contains(error: &Error, parts: &[&str]) {
    let text = error.to_string();
    for part in parts {
        assert!(
            text.contains(part),
            "expected {part:?} in the error:\n{text}"
        );
    }
}
