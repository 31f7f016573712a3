//! The declaration of `Example`.

use op_core::register_op;

/// Doubles every element of its input.
///
/// The guide's example of a kernel shared between devices through a
/// functor.
///
/// input: any numeric tensor.
/// input_times_two: `2 * input`, elementwise.
#[register_op(
    attrs("T: numbertype"),
    inputs("input: T"),
    outputs("input_times_two: T"),
    shape = "unchanged"
)]
pub struct Example;
