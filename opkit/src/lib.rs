//! The framework in one crate: op-core (the runtime) and op-graph
//! (programs), re-exported, with the shipped kernels of op-kernels linked
//! in, and the `opkit` command-line tool as a library ([`cli`]).
//!
//! Why a crate of its own: the tool needs clap and a `.npy` reader, and it
//! links every shipped kernel; neither belongs in the runtime or the graph
//! crate, which downstream crates use without our kernels.
//!
//! A downstream crate makes the same tool over its own ops with a
//! two-line `main`:
//!
//! ```no_run
//! // Naming the crate that holds the ops links them in.
//! // use my_ops as _;
//! fn main() -> std::process::ExitCode {
//!     opkit::cli::main()
//! }
//! ```

pub mod cli;
pub mod lite;
pub mod npy;
pub mod saved_model;

pub use op_core;
pub use op_graph;
pub use op_kernels;
pub use op_lite;
