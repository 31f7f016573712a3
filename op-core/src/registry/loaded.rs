//! Code that runs once every registration of a binary is in: what a host
//! bridge needs when the host watches its own registry only while our
//! library loads (TensorFlow's `tf.load_op_library` records the ops
//! registered during its `dlopen`, PyTorch's `torch.ops.load_library` the
//! same).
//!
//! Such a bridge registers our ops with the host at load time. Registrations
//! are collected by load-time constructors (`inventory`), which run in link
//! order, in which a crate comes before the crates it depends on: code in
//! the user's library, where the bridge's `export!` puts it, would run
//! before the kernel crates' registrations and see none of their ops. So
//! the bridge submits a [`LoadHook`] (itself collected by a constructor),
//! and a constructor of op-core, which every registering crate depends on
//! and so runs after all of theirs, runs the hooks.

/// A function to run at load time once every registration of the binary is
/// in; submitted with `inventory::submit!`.
///
/// For a host bridge whose host watches its registry only while our library
/// loads (`tf.load_op_library`): load-time constructors run in link order,
/// a crate before the crates it depends on, so code in the user's library
/// would run before the kernel crates' registrations. op-core's constructor
/// runs the hooks after them all (every registering crate depends on
/// op-core).
///
/// ```
/// use std::sync::atomic::{AtomicBool, Ordering};
/// static RAN: AtomicBool = AtomicBool::new(false);
/// fn on_load() {
///     // Every op of the binary is in the registry by now.
///     RAN.store(true, Ordering::SeqCst);
/// }
/// op_core::inventory::submit! { op_core::registry::LoadHook::new(on_load) }
/// # fn main() {
/// assert!(RAN.load(Ordering::SeqCst));
/// # }
/// ```
pub struct LoadHook {
    run: fn(),
}

impl LoadHook {
    /// A hook that runs `run`, which must not panic (a panic is caught and
    /// dropped: nothing may unwind out of a constructor).
    pub const fn new(run: fn()) -> LoadHook {
        LoadHook { run }
    }
}

inventory::collect!(LoadHook);

/// The constructor that runs the hooks.
extern "C" fn run_hooks() {
    for hook in inventory::iter::<LoadHook> {
        let _ = std::panic::catch_unwind(hook.run);
    }
}

// In the same module as `LoadHook`'s collection, which a binary with a hook
// links, so that the constructor is linked with it.
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
static RUN_HOOKS: extern "C" fn() = run_hooks;
