//! Containing panics of code the runtime calls (kernels, their
//! constructors, shape functions): a panic becomes an error, and nothing
//! of it escapes into the caller.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Runs `f`; a panic in it becomes `Err` with the panic's message.
///
/// The runtime keeps no state that a panic in `f` could leave half made
/// (what `f` borrows is the callee's own), hence `AssertUnwindSafe`.
///
/// The payload is dropped here, and its `Drop` may itself panic (a payload
/// is any value given to `panic_any`): that second panic is caught too, so
/// that no panic escapes to the caller (see [`drop_payload`]).
#[inline]
pub(crate) fn catch_panic<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(value) => Ok(value),
        Err(payload) => Err(contain(payload)),
    }
}

/// The message of a caught panic, at a bounded length (it may quote a
/// caller's input); its payload is dropped safely.
#[cold]
#[inline(never)]
fn contain(payload: Box<dyn Any + Send>) -> String {
    let message = crate::error::capped(panic_message(&*payload)).to_string();
    drop_payload(payload);
    message
}

/// Drops a panic payload, catching a panic of its `Drop`. The payload of
/// that panic (usually `panic!`'s message) is dropped the same way; should
/// its drop panic as well, the payload of that third panic is forgotten
/// (leaked, not dropped), so that dropping ends.
fn drop_payload(payload: Box<dyn Any + Send>) {
    if let Err(again) = catch_unwind(AssertUnwindSafe(move || drop(payload)))
        && let Err(last) = catch_unwind(AssertUnwindSafe(move || drop(again)))
    {
        std::mem::forget(last);
    }
}

/// The text of a panic payload: `panic!`'s message, or a placeholder for a
/// payload that is not a string.
fn panic_message(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(a panic payload that is not a string)")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A panic payload whose `Drop` panics.
    struct PanicsOnDrop;

    impl Drop for PanicsOnDrop {
        fn drop(&mut self) {
            panic!("the payload's drop panicked");
        }
    }

    #[test]
    fn values_and_panics() {
        assert_eq!(catch_panic(|| 7), Ok(7));
        assert_eq!(
            catch_panic(|| panic!("boom {}", 1)),
            Err::<(), _>("boom 1".to_owned())
        );
        assert_eq!(
            catch_panic(|| std::panic::panic_any(3u8)),
            Err::<(), _>("(a panic payload that is not a string)".to_owned())
        );
    }

    /// A panic payload whose `Drop` panics with another of itself: no
    /// number of drops would end it.
    struct PanicsOnDropForever;

    impl Drop for PanicsOnDropForever {
        fn drop(&mut self) {
            std::panic::panic_any(PanicsOnDropForever);
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "leaks a payload by design, which Miri reports")]
    fn a_chain_of_panicking_drops_ends() {
        let caught = catch_panic(|| std::panic::panic_any(PanicsOnDropForever));
        assert_eq!(
            caught,
            Err::<(), _>("(a panic payload that is not a string)".to_owned())
        );
    }

    #[test]
    fn a_payload_whose_drop_panics_is_contained() {
        let caught = catch_panic(|| std::panic::panic_any(PanicsOnDrop));
        assert_eq!(
            caught,
            Err::<(), _>("(a panic payload that is not a string)".to_owned())
        );
    }
}
