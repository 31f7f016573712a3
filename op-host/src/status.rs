//! Our errors as a host's status: every host shows the same message, with
//! the error's context lines, and maps our code (TensorFlow's numbering,
//! [`op_core::Code`]) to its own where it has codes.

use op_core::Error;

/// The error's message and context lines, as a host's status shows them
/// (each host writes the code's name itself), with any NUL made visible so
/// that the text is a valid C string.
///
/// ```
/// use op_core::{Code, Error};
/// let error = Error::new(Code::InvalidArgument, "bad\0value").with_context("in node 'z'");
/// assert_eq!(op_host::status::message_of(&error), "bad\\0value\n\tin node 'z'");
/// ```
pub fn message_of(error: &Error) -> String {
    let mut text = error.message().to_string();
    for frame in error.context() {
        text.push_str("\n\t");
        text.push_str(frame);
    }
    text.replace('\0', "\\0")
}

/// [`message_of`] as a C string, for hosts that copy a `const char*`.
pub fn c_message_of(error: &Error) -> std::ffi::CString {
    // `message_of` has no NUL left.
    std::ffi::CString::new(message_of(error)).unwrap_or_default()
}
