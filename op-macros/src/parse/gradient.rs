//! `#[gradient(...)]`.

use super::keys::arguments;
use super::{CratePath, OpRef};

arguments! {
    /// `#[gradient(...)]`.
    #[derive(Debug)]
    pub struct GradientArgs {
        /// The op whose gradient the function is: its Rust type (checked
        /// at compile time) or its registered name.
        op: Option<OpRef>,
        /// `crate = "facade::op_core"`: where generated code finds op-core,
        /// for a crate that re-exports it (default `::op_core`).
        krate as "crate": Option<CratePath>,
    }
}
