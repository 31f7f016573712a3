//! The declaration of `Examples>MultiplexDense`.

use op_core::register_op;

/// Returns elements chosen from `a_values` or `b_values` depending on
/// `cond`.
///
/// Like `np.where` and `tf.where`, simplified to dense tensors that all
/// have one shape: no broadcasting, no optional arguments.
///
/// cond: where true, take the element of `a_values`, else of `b_values`.
/// a_values: a tensor of the shape of `cond`.
/// b_values: a tensor of the shape and type of `a_values`.
/// output_values: the chosen elements, in the shape of the inputs.
#[register_op(
    name = "Examples>MultiplexDense",
    attrs("T: type"),
    inputs("cond: bool", "a_values: T", "b_values: T"),
    outputs("output_values: T"),
    shape = "merge_inputs"
)]
pub struct MultiplexDense;
