//! The declarations of the list ops.

use op_core::register_op;

/// Returns its list of tensors, of any types, unchanged.
///
/// in: the tensors.
/// out: the same tensors.
#[register_op(
    attrs("T: list(type)"),
    inputs("in: T"),
    outputs("out: T"),
    shape = "pass_through"
)]
pub struct PolymorphicListExample;

/// Returns its list of float and double tensors unchanged.
///
/// in: the tensors, each float or double.
/// out: the same tensors.
#[register_op(
    attrs("T: list({float, double})"),
    inputs("in: T"),
    outputs("out: T"),
    shape = "pass_through"
)]
pub struct ListTypeRestrictionExample;

/// Adds `N` int32 tensors of one shape.
///
/// in: the tensors to add.
/// out: their element-wise sum (wrapping on overflow).
#[register_op(
    attrs("N: int"),
    inputs("in: N * int32"),
    outputs("out: int32"),
    shape = "merge_inputs"
)]
pub struct IntListInputExample;

/// Adds `N` tensors of one type and one shape.
///
/// in: the tensors to add.
/// out: their element-wise sum.
#[register_op(
    attrs("N: int", "T: type"),
    inputs("in: N * T"),
    outputs("out: T"),
    shape = "merge_inputs"
)]
pub struct SameListInputExample;

/// Adds at least two int32 tensors of one shape.
///
/// in: the tensors to add.
/// out: their element-wise sum (wrapping on overflow).
#[register_op(
    attrs("N: int >= 2"),
    inputs("in: N * int32"),
    outputs("out: int32"),
    shape = "merge_inputs"
)]
pub struct MinLengthIntListExample;

/// Returns its list of at least three tensors unchanged.
///
/// in: the tensors.
/// out: the same tensors.
#[register_op(
    attrs("T: list(type) >= 3"),
    inputs("in: T"),
    outputs("out: T"),
    shape = "pass_through"
)]
pub struct MinimumLengthPolymorphicListExample;
