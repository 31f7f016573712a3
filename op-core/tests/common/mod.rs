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

/// Asserts that `message` is `{before} at {file}:{line}:{column}: {after}`:
/// a contained panic's report, with the location of the panic in `file`.
#[track_caller]
pub fn assert_panicked_at(message: &str, before: &str, file: &str, after: &str) {
    let located = message
        .strip_prefix(before)
        .and_then(|rest| rest.strip_prefix(" at "))
        .and_then(|rest| rest.strip_prefix(file))
        .and_then(|rest| rest.strip_prefix(':'))
        .and_then(|rest| rest.strip_suffix(after))
        .and_then(|rest| rest.strip_suffix(": "));
    let line_and_column: Option<Vec<u32>> =
        located.and_then(|lc| lc.split(':').map(|n| n.parse().ok()).collect());
    assert!(
        matches!(line_and_column.as_deref(), Some([_, _])),
        "expected {before:?} at {file}:LINE:COLUMN: {after:?}, got {message:?}"
    );
}
