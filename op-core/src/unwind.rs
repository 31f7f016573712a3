//! Containing panics of code the runtime calls (kernels, their
//! constructors, shape functions): a panic becomes an error, and nothing
//! of it escapes into the caller.
//!
//! A contained panic is reported once, by the error the caller gets, with
//! the panic's message and location. Rust's panic hook would also print it
//! to stderr (with a backtrace under `RUST_BACKTRACE`): noise about a
//! failure that was handled. So the first containment installs, once per
//! process, a panic hook that wraps the hook it finds. A panic on a thread
//! inside [`catch_panic`] (a thread-local depth says so) only has its
//! location kept for the error; every other panic goes to the previous
//! hook and is printed as before. A hook that a program sets later with
//! `std::panic::set_hook` replaces ours, and contained panics are then
//! printed by it.
//!
//! A kernel's work split over the intra-op pool runs on the pool's threads,
//! whose depth is their own: [`Containment`] carries the caller's state
//! into each block, and a block's panic carries its location back to the
//! caller in its payload ([`Located`]).

use std::any::Any;
use std::cell::Cell;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Once;

/// Where this thread stands with containment.
#[derive(Clone, Copy)]
struct State {
    /// How many [`catch_panic`]s (and contained pool blocks) this thread is
    /// inside: the hook stays silent while it is not 0.
    depth: u32,
    /// Whether [`LOCATION`] holds the location of a panic since the
    /// innermost containment began (so that a location left by an earlier
    /// panic, which something else caught, is never reported).
    located: bool,
}

thread_local! {
    /// No destructor, so that reading it on every kernel call costs a load.
    static STATE: Cell<State> = const { Cell::new(State { depth: 0, located: false }) };
    /// The location of the last contained panic on this thread, as
    /// `file:line:column`; read only when a panic was caught.
    static LOCATION: Cell<Option<String>> = const { Cell::new(None) };
}

/// A caught panic: its message and, when known, where it happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CaughtPanic {
    /// The panic's message, at a bounded length (it may quote a caller's
    /// input), or a placeholder for a payload that is not a string.
    pub(crate) message: String,
    /// `file:line:column` of the `panic!` (or failed `unwrap`, index, ...).
    pub(crate) location: Option<String>,
}

impl fmt::Display for CaughtPanic {
    /// ` at src/lib.rs:3:5: the message`, or `: the message` with no
    /// location, so that `format!("kernel panicked{panic}")` reads as Rust's
    /// own report does (`panicked at src/lib.rs:3:5: the message`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.location {
            Some(location) => write!(f, " at {location}: {}", self.message),
            None => write!(f, ": {}", self.message),
        }
    }
}

/// Runs `f`, and makes a panic in it an `Internal` error: `{what}
/// panicked at src/lib.rs:3:5: the message`, reported once (by the error,
/// not also on stderr). What a host bridge wraps around every call it makes
/// into our code from a host's thread (a kernel's constructor and run, a
/// shape function), so that no panic crosses into the host's C or C++.
///
/// ```
/// use op_core::{Code, Result};
/// let ok: Result<i32> = op_core::contain_panic("the answer", || Ok(42));
/// assert_eq!(ok?, 42);
/// let err = op_core::contain_panic::<()>("the kernel", || panic!("bad input")).unwrap_err();
/// assert_eq!(err.code(), Code::Internal);
/// assert!(err.message().starts_with("the kernel panicked at "), "{err}");
/// assert!(err.message().ends_with(": bad input"), "{err}");
/// # Ok::<(), op_core::Error>(())
/// ```
pub fn contain_panic<T>(what: &str, f: impl FnOnce() -> crate::Result<T>) -> crate::Result<T> {
    catch_panic(f)
        .unwrap_or_else(|panic| Err(crate::Error::internal(format!("{what} panicked{panic}"))))
}

/// Runs `f`; a panic in it becomes `Err` with the panic's message and
/// location, and is not printed (see the [module docs](self)).
///
/// The runtime keeps no state that a panic in `f` could leave half made
/// (what `f` borrows is the callee's own), hence `AssertUnwindSafe`.
///
/// The payload is dropped here, and its `Drop` may itself panic (a payload
/// is any value given to `panic_any`): that second panic is caught too, so
/// that no panic escapes to the caller (see [`drop_payload`]).
#[inline]
pub(crate) fn catch_panic<T>(f: impl FnOnce() -> T) -> Result<T, CaughtPanic> {
    install_hook();
    let _inside = Inside::enter();
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(value) => Ok(value),
        Err(payload) => Err(contain(payload)),
    }
}

/// Whether the current thread is inside a containment.
fn is_contained() -> bool {
    // `try_with`: the hook may run while the thread's locals are being
    // destroyed; a panic there is then not contained.
    STATE.try_with(|s| s.get().depth > 0).unwrap_or(false)
}

/// Being inside a containment, for as long as it lives.
struct Inside;

impl Inside {
    #[inline]
    fn enter() -> Inside {
        STATE.with(|s| {
            let State { depth, .. } = s.get();
            s.set(State {
                depth: depth + 1,
                located: false,
            });
        });
        Inside
    }
}

impl Drop for Inside {
    #[inline]
    fn drop(&mut self) {
        STATE.with(|s| {
            let State { depth, .. } = s.get();
            s.set(State {
                depth: depth - 1,
                located: false,
            });
        });
    }
}

/// Installs the silencing hook, once per process.
#[inline]
fn install_hook() {
    static HOOK: Once = Once::new();
    // `take_hook` panics on a panicking thread (a kernel run from a `Drop`
    // during unwinding): the hook waits for the next containment then.
    if !HOOK.is_completed() && !std::thread::panicking() {
        HOOK.call_once(|| {
            let previous = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                if is_contained() {
                    let location = info.location().map(ToString::to_string);
                    // Not `with`: a failure here must not be a second panic.
                    let _ = LOCATION.try_with(|l| l.set(location));
                    let _ = STATE.try_with(|s| {
                        s.set(State {
                            located: true,
                            ..s.get()
                        })
                    });
                } else {
                    previous(info);
                }
            }));
        });
    }
}

/// The location the hook kept for a panic on this thread since the
/// innermost containment began, taken (so none is reported twice).
fn take_location() -> Option<String> {
    let located = STATE.with(|s| {
        let state = s.get();
        s.set(State {
            located: false,
            ..state
        });
        state.located
    });
    let location = LOCATION.with(Cell::take);
    location.filter(|_| located)
}

/// A panic payload with the location of the panic, for a panic that
/// happened on another thread (a pool block) and is resumed on the caller,
/// where the hook saw nothing.
struct Located {
    payload: Box<dyn Any + Send>,
    location: Option<String>,
}

/// Whether the caller is inside a containment: carried into the blocks of
/// work that [`ThreadPool`](crate::threads::ThreadPool) runs on its threads,
/// so that their panics stay silent too.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Containment {
    contained: bool,
}

impl Containment {
    /// The current thread's containment.
    #[inline]
    pub(crate) fn here() -> Containment {
        Containment {
            contained: is_contained(),
        }
    }

    /// Runs `f` (on any thread) contained as the thread that made `self`
    /// was: if that one was, a panic in `f` is silent and resumes with its
    /// location in the payload, for the caller's [`catch_panic`] to report.
    #[inline]
    pub(crate) fn run<T>(self, f: impl FnOnce() -> T) -> T {
        if !self.contained {
            return f();
        }
        let _inside = Inside::enter();
        match catch_unwind(AssertUnwindSafe(f)) {
            Ok(value) => value,
            Err(payload) => resume_unwind(locate(payload)),
        }
    }
}

/// `payload` with the location the hook kept on this thread, unless it
/// already has one (a block of a block).
#[cold]
#[inline(never)]
fn locate(payload: Box<dyn Any + Send>) -> Box<dyn Any + Send> {
    let location = take_location();
    if payload.is::<Located>() {
        return payload;
    }
    Box::new(Located { payload, location })
}

/// The caught panic, its message at a bounded length; its payload is
/// dropped safely.
#[cold]
#[inline(never)]
fn contain(payload: Box<dyn Any + Send>) -> CaughtPanic {
    let here = take_location();
    let (payload, location) = match payload.downcast::<Located>() {
        Ok(located) => {
            let Located { payload, location } = *located;
            (payload, location)
        }
        Err(payload) => (payload, here),
    };
    let message = crate::error::capped(panic_message(&*payload)).to_string();
    drop_payload(payload);
    // A panic of the payload's `Drop` was kept by the hook: it is not this
    // panic's location, nor the next one's.
    drop(take_location());
    CaughtPanic { message, location }
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

    /// The caught panic's message, checking that its location is in this
    /// file.
    #[track_caller]
    fn message_located_here<T: fmt::Debug>(caught: Result<T, CaughtPanic>) -> String {
        let caught = caught.unwrap_err();
        let location = caught.location.as_deref().unwrap_or("(none)");
        assert!(
            location.starts_with(concat!(file!(), ":")),
            "{location} is not in {}",
            file!()
        );
        caught.message
    }

    #[test]
    fn values_and_panics() {
        assert_eq!(catch_panic(|| 7), Ok(7));
        assert_eq!(
            message_located_here(catch_panic(|| panic!("boom {}", 1))),
            "boom 1"
        );
        assert_eq!(
            message_located_here(catch_panic(|| std::panic::panic_any(3u8))),
            "(a panic payload that is not a string)"
        );
    }

    #[test]
    fn the_location_is_the_panic_s_own() {
        let line = line!() + 1;
        let caught = catch_panic::<()>(|| panic!("here")).unwrap_err();
        let location = caught.location.clone().unwrap();
        assert!(
            location.starts_with(&format!("{}:{line}:", file!())),
            "{location}"
        );
        assert_eq!(caught.to_string(), format!(" at {location}: here"));
        let unlocated = CaughtPanic {
            message: "m".into(),
            location: None,
        };
        assert_eq!(unlocated.to_string(), ": m");
    }

    #[test]
    fn nested_containments_each_report_their_own_panic() {
        let outer = catch_panic(|| {
            let inner = catch_panic(|| panic!("inner"));
            assert_eq!(message_located_here(inner), "inner");
            assert!(is_contained(), "still inside the outer containment");
            panic!("outer");
        });
        assert_eq!(message_located_here(outer), "outer");
        assert!(!is_contained());
    }

    #[test]
    fn a_location_left_by_a_panic_caught_elsewhere_is_not_reported() {
        let caught = catch_panic(|| {
            // Caught by someone else: its location stays behind...
            let _ = catch_unwind(|| panic!("swallowed"));
            // ... and a panic resumed without the hook must not take it.
            resume_unwind(Box::new("resumed"))
        })
        .unwrap_err();
        assert_eq!(caught.message, "resumed");
        // The swallowed one's location may be reported (it happened in this
        // containment), but nothing from before it began.
        let before = catch_panic(|| {
            let _ = catch_panic(|| panic!("earlier"));
            resume_unwind(Box::new("resumed"))
        })
        .unwrap_err();
        assert_eq!(before.location, None);
    }

    #[test]
    fn a_block_s_panic_on_another_thread_carries_its_location_back() {
        let caught = catch_panic(|| {
            let containment = Containment::here();
            let joined = std::thread::scope(|s| {
                s.spawn(|| {
                    assert!(!is_contained(), "a fresh thread is not contained");
                    containment.run(|| panic!("in a block"))
                })
                .join()
            });
            resume_unwind(joined.unwrap_err())
        });
        assert_eq!(message_located_here(caught), "in a block");
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
            message_located_here(caught),
            "(a panic payload that is not a string)"
        );
    }

    #[test]
    fn a_payload_whose_drop_panics_is_contained() {
        let caught = catch_panic(|| std::panic::panic_any(PanicsOnDrop));
        assert_eq!(
            message_located_here(caught),
            "(a panic payload that is not a string)"
        );
        // The drop's panic left no location for the next one.
        let next = catch_panic(|| resume_unwind(Box::new("no hook"))).unwrap_err();
        assert_eq!(next.location, None);
    }
}
