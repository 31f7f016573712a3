//! Code that runs once every registration of a binary is in: what a host
//! bridge needs when the host watches its own registry only while our
//! library loads (TensorFlow's `tf.load_op_library` records the ops
//! registered during its `dlopen`, PyTorch's `torch.ops.load_library` the
//! same).
//!
//! Such a bridge registers our ops with the host from a load-time
//! constructor. Registrations are collected by constructors too
//! (`inventory`), and constructors run in link order, in which a crate
//! comes before the crates it depends on: a constructor in the user's
//! library, where the bridge's `export!` puts it, runs before those of
//! the kernel crates it links, and would see none of their ops. Every
//! crate that registers depends on this one, so a constructor here runs
//! after all of theirs: [`after_registrations`] queues its hook for it.

use std::sync::{Mutex, PoisonError};

/// The hooks waiting for the constructor, and whether it ran.
struct Pending {
    ran: bool,
    hooks: Vec<fn()>,
}

static PENDING: Mutex<Pending> = Mutex::new(Pending {
    // Where no constructor runs at load (no platform support below), the
    // registrations are as complete as they will be: hooks run at once.
    ran: !cfg!(any(
        target_os = "linux",
        target_os = "android",
        target_os = "macos",
        target_os = "ios",
        windows
    )),
    hooks: Vec::new(),
});

/// Runs `hook` once every registration linked into this binary (executable
/// or library) has been collected: at load time, from a constructor of
/// op-core, which runs after those of every crate that registers ops and
/// kernels (they depend on op-core). When that constructor has already run,
/// `hook` runs now.
///
/// A host bridge calls it from its own load-time constructor; `hook` must
/// not panic (a panic is caught and dropped: nothing may unwind out of a
/// constructor).
///
/// ```
/// use std::sync::atomic::{AtomicBool, Ordering};
/// static RAN: AtomicBool = AtomicBool::new(false);
/// // In a test, op-core's constructor ran when the test binary loaded.
/// op_core::registry::after_registrations(|| RAN.store(true, Ordering::SeqCst));
/// assert!(RAN.load(Ordering::SeqCst));
/// ```
pub fn after_registrations(hook: fn()) {
    let mut pending = PENDING.lock().unwrap_or_else(PoisonError::into_inner);
    if pending.ran {
        drop(pending);
        run(hook);
    } else {
        pending.hooks.push(hook);
    }
}

fn run(hook: fn()) {
    let _ = std::panic::catch_unwind(hook);
}

/// The constructor: in the same module as [`after_registrations`], so that
/// a program that calls it links this too (a static alone would be left
/// out with its unreferenced object).
extern "C" fn run_pending() {
    let hooks = {
        let mut pending = PENDING.lock().unwrap_or_else(PoisonError::into_inner);
        pending.ran = true;
        std::mem::take(&mut pending.hooks)
    };
    for hook in hooks {
        run(hook);
    }
}

#[used]
#[cfg_attr(
    any(target_os = "linux", target_os = "android"),
    unsafe(link_section = ".init_array")
)]
#[cfg_attr(
    any(target_os = "macos", target_os = "ios"),
    unsafe(link_section = "__DATA,__mod_init_func,mod_init_funcs")
)]
#[cfg_attr(windows, unsafe(link_section = ".CRT$XCU"))]
static RUN_PENDING: extern "C" fn() = run_pending;
