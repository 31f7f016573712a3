//! The math ops that the gradients of the array, reduction and matmul ops
//! are built from and that [`math`](crate::math) does not have: `Range`,
//! `FloorDiv`, `FloorMod` and `DivNoNan`, with TensorFlow's
//! OpDefs, shape functions and CPU kernels.
//!
//! They are a family of their own only because `math/` was being changed
//! at the same time (its gradients); they belong with the other
//! elementwise ops and can move there unchanged.
//!
//! | op | what it does | kernels |
//! | --- | --- | --- |
//! | [`Range`] | `start, start + delta, ...` up to `limit` | `float`, `double`, `int32`, `int64` |
//! | [`FloorDiv`], [`FloorMod`] | division rounded toward negative infinity, and its remainder (the divisor's sign), broadcasting | every real type; an integer division by zero is `InvalidArgument` |
//! | [`DivNoNan`] | `x / y`, or 0 where `y` is 0 (`Cumprod`'s gradient), broadcasting | `half`, `float`, `bfloat16`, `double`, `complex64`, `complex128` |
//!
//! The files: `ops.rs` (the ops and Range's shape function), `math.rs`
//! (the arithmetic over elements, for every device: [`FloorDivide`],
//! [`RangeElement`], [`DivideNoNan`]), `cpu.rs` (the
//! kernels), `grad.rs` (the gradients of `FloorMod` and `DivNoNan`, and
//! `conj`, which uses [`math`](crate::math)'s `Conj`; `Range` and `FloorDiv` have none, as in TensorFlow).

mod cpu;
mod grad;
mod math;
mod ops;

pub(crate) use grad::conj;
pub use math::{DIVISION_BY_ZERO, DivideNoNan, FloorDivide, RangeElement, range_into};
pub use ops::*;
