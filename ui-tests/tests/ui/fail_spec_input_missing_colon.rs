//! `x float` lacks its colon: the fix is `x: float`, and the docs of `x`
//! are no second error.

use op_core::register_op;

/// Copies `x`.
///
/// x: the input.
/// y: the copy.
#[register_op(inputs("x float"), outputs("y: float"))]
pub struct Copy;

fn main() {}
