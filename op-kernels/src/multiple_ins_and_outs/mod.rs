//! `MultipleInsAndOuts`, declared with `#[op]`: the function's signature is
//! the op's spec.
//!
//! `#[op]` makes the op and its CPU kernel from one function, so the family
//! has one file beside this one:
//!
//! - `ops.rs`: the shape function, [`multiple_ins_and_outs_shape`], and the
//!   `#[op]` function, [`multiple_ins_and_outs`] (which declares
//!   [`MultipleInsAndOuts`] and is its CPU kernel).

mod ops;

pub use ops::*;
