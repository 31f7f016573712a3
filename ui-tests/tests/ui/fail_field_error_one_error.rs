//! A field that cannot hold an attr is one error: its docs, the struct's
//! docs about it, and an input that uses it report nothing more.

use op_core::register_op;

/// Repeats `x`.
///
/// x: the tensors to repeat.
/// N: how many tensors `x` has.
#[register_op(inputs("x: N * float"), outputs("y: float"))]
pub struct Repeat {
    /// How often to repeat.
    pub times: u8,
    #[attr(name = "N")]
    pub n: u16,
}

fn main() {}
