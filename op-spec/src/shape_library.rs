//! The names of the runtime's library shape functions
//! (`op_core::shape_inference::library`), which an op names with
//! `#[register_op(shape = "unchanged")]`. The proc macros check that key
//! against this list at compile time, and op-core's library checks at
//! compile time that it defines exactly these, so the two cannot drift.

/// Every library shape function's name, in the library's order.
pub const NAMES: [&str; 6] = [
    "unchanged",
    "scalar",
    "unknown",
    "broadcast",
    "merge_inputs",
    "pass_through",
];
