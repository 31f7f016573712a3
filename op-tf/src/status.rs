//! Our errors as TensorFlow statuses: the same code (the numbering is
//! TensorFlow's) and the same message, with its context lines.

use std::cell::Cell;
use std::ffi::CString;

use op_core::Error;

use crate::api::{Api, TF_Status};

thread_local! {
    /// One status per thread, made on first use and kept: a status made
    /// and freed per call costs two allocations. TensorFlow's threads live
    /// as long as the process, so it is never freed.
    static STATUS: Cell<*mut TF_Status> = const { Cell::new(std::ptr::null_mut()) };
}

/// This thread's status, reset to OK.
pub(crate) fn status(api: &Api) -> *mut TF_Status {
    STATUS.with(|cell| {
        let mut status = cell.get();
        if status.is_null() {
            // SAFETY: TF_NewStatus takes nothing and returns a new status.
            status = unsafe { (api.TF_NewStatus)() };
            cell.set(status);
        }
        // SAFETY: `status` is a live status; a null message is "" for OK.
        unsafe { (api.TF_SetStatus)(status, 0, c"".as_ptr()) };
        status
    })
}

/// `status` holding `error`.
pub(crate) fn set_error(api: &Api, status: *mut TF_Status, error: &Error) {
    let message = message_of(error);
    // SAFETY: `status` is live and `message` a C string TensorFlow copies.
    unsafe { (api.TF_SetStatus)(status, error.code().value(), message.as_ptr()) };
}

/// `status` as a result: `Err` with its code and message unless it is OK.
pub(crate) fn check(
    api: &Api,
    status: *mut TF_Status,
    doing: impl FnOnce() -> String,
) -> op_core::Result<()> {
    // SAFETY: `status` is a live status.
    let code = unsafe { (api.TF_GetCode)(status) };
    if code == 0 {
        return Ok(());
    }
    // SAFETY: as above; TF_Message returns a C string owned by the status.
    let message = unsafe { std::ffi::CStr::from_ptr((api.TF_Message)(status)) };
    let code = op_core::Code::from_value(code).unwrap_or(op_core::Code::Unknown);
    Err(Error::new(code, message.to_string_lossy()).with_context(doing()))
}

/// The error's message and context lines, as TensorFlow shows a status
/// (it writes the code's name itself), with any NUL made visible.
pub(crate) fn message_of(error: &Error) -> CString {
    op_host::status::c_message_of(error)
}
