//! Developer commands for the workspace, run as `cargo xtask <command>`.
//!
//! The commands live here as library modules, so that they are tested
//! without spawning processes; `main.rs` only parses the command line.

pub mod codegen;
pub mod compat;
pub mod conformance;
pub mod lite_resolver;
pub mod opcheck;
pub mod opdef;
pub mod tensorflow;
