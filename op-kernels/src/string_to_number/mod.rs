//! `StringToNumber`: a kernel generic over the type attr of its output.
//!
//! The files:
//!
//! - `ops.rs`: the op, [`StringToNumber`].
//! - `math.rs`: the conversion of one string, [`parse`], shared by every
//!   kernel.
//! - `cpu.rs`: the CPU kernel.
//! - `opcheck.rs`: how opcheck (`op_core::testing`) draws strings of numbers.

mod cpu;
mod math;
mod opcheck;
mod ops;

pub use math::parse;
pub use ops::*;
