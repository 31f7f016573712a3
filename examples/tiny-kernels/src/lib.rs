//! The smallest kernel crate: one op, [`halve`], and [`link`]. The
//! examples' tests depend on it to show `op_core::require_linked!` at work:
//! `tests/linking.rs` names it (so it is linked and its op runs), and
//! `tests/require_linked.rs` requires it without naming it (so it is not
//! linked, and the registry says so).

use op_core::ndarray::{ArrayD, ArrayViewD};
use op_core::op;

/// Halves every element of a tensor.
///
/// x: a float tensor of any shape.
/// y: `x / 2`, in `x`'s shape.
#[op(name = "Tiny>Halve", outputs("y"), shape = "unchanged")]
pub fn halve(x: ArrayViewD<'_, f32>) -> ArrayD<f32> {
    x.mapv(|v| v / 2.0)
}

/// Makes sure this crate's op is linked into the program: call it once
/// from a program that names nothing else of this crate.
pub fn link() {}
