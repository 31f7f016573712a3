//! The common shape functions, usable by name from `#[register_op(shape =
//! "unchanged")]` or as plain functions (`shape_fn = library::unchanged`).

use super::{InferenceContext, ShapeFn, ShapeHandle};
use crate::Result;
use crate::op::checks::str_eq;

/// Every function of the library with its name.
pub const SHAPE_FNS: &[(&str, ShapeFn)] = &[
    ("unchanged", unchanged),
    ("scalar", scalar),
    ("unknown", unknown),
    ("broadcast", broadcast),
    ("merge_inputs", merge_inputs),
    ("pass_through", pass_through),
];

// The names are op-spec's, which `#[register_op(shape = "...")]` is
// checked against at compile time: a function added here without its name
// there, or the reverse, fails to compile instead of failing a registration.
const _: () = assert!(
    names_are(SHAPE_FNS, &op_spec::shape_library::NAMES),
    "SHAPE_FNS must list op_spec::shape_library::NAMES, in order"
);

/// Whether `fns` are named `names`, in order (a `const fn`, for the check
/// above).
const fn names_are(fns: &[(&str, ShapeFn)], names: &[&str]) -> bool {
    if fns.len() != names.len() {
        return false;
    }
    let mut i = 0;
    while i < fns.len() {
        if !str_eq(fns[i].0, names[i]) {
            return false;
        }
        i += 1;
    }
    true
}

/// The library function named `name`.
pub fn by_name(name: &str) -> Option<ShapeFn> {
    SHAPE_FNS.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
}

/// Output 0 has input 0's shape (TensorFlow's `UnchangedShape`).
pub fn unchanged(c: &mut InferenceContext<'_>) -> Result<()> {
    let input = c.input(0)?;
    c.set_output(0, input)
}

/// Every output is a scalar.
pub fn scalar(c: &mut InferenceContext<'_>) -> Result<()> {
    for i in 0..c.num_outputs() {
        let s = c.scalar();
        c.set_output(i, s)?;
    }
    Ok(())
}

/// Every output's shape is unknown.
pub fn unknown(c: &mut InferenceContext<'_>) -> Result<()> {
    for i in 0..c.num_outputs() {
        let s = c.unknown_shape();
        c.set_output(i, s)?;
    }
    Ok(())
}

/// Output 0 is inputs 0 and 1 broadcast together, NumPy style (TensorFlow's
/// `BroadcastBinaryOpShapeFn`): dimensions align from the right, a 1
/// stretches, and known sizes that differ are an error naming both shapes.
/// See [`broadcast_shapes`].
pub fn broadcast(c: &mut InferenceContext<'_>) -> Result<()> {
    let (x, y) = (c.input(0)?, c.input(1)?);
    let s = broadcast_shapes(c, x, y, true)?;
    c.set_output(0, s)
}

/// The shape that `x` and `y` broadcast to (TensorFlow's
/// `BroadcastBinaryOpOutputShapeFnHelper`), over partially known shapes:
///
/// - an unknown rank on either side gives an unknown rank;
/// - dimensions align from the right, and a missing one counts as 1;
/// - a known 1 takes the other dimension, whatever it is; two known sizes
///   must be equal;
/// - a known size above 1 facing an unknown one is taken (the program is
///   assumed correct: the unknown one must be 1 or the same), two unknown
///   ones give an unknown one (the same dimension, if they are the same
///   handle), and a known 0 facing an unknown one gives an unknown one.
///
/// With `incompatible_shape_error` false (the attr of `Equal` and
/// `NotEqual`, whose kernels then output a scalar instead of failing),
/// known sizes that differ give the scalar shape, and a pair that may not
/// broadcast (a known size other than 1 facing an unknown one) gives an
/// unknown rank, as TensorFlow's. With it true, known sizes that differ are
/// an `InvalidArgument` error naming both shapes (the inputs', when `x`
/// and `y` are inputs).
pub fn broadcast_shapes(
    c: &mut InferenceContext<'_>,
    x: ShapeHandle,
    y: ShapeHandle,
    incompatible_shape_error: bool,
) -> Result<ShapeHandle> {
    let (Some(rank_x), Some(rank_y)) = (c.rank(x), c.rank(y)) else {
        return Ok(c.unknown_shape());
    };
    let rank = rank_x.max(rank_y);
    let mut dims = Vec::with_capacity(rank);
    for i in 0..rank {
        // Position i from the left of the output; a missing dim is None.
        let dx = match (i + rank_x).checked_sub(rank) {
            Some(j) => Some(c.dim(x, j as i64)?),
            None => None,
        };
        let dy = match (i + rank_y).checked_sub(rank) {
            Some(j) => Some(c.dim(y, j as i64)?),
            None => None,
        };
        let (a, b) = match (dx, dy) {
            (Some(a), None) => {
                dims.push(a);
                continue;
            }
            (None, Some(b)) => {
                dims.push(b);
                continue;
            }
            (None, None) => {
                dims.push(c.make_dim(Some(1)));
                continue;
            }
            (Some(a), Some(b)) => (a, b),
        };
        let dim = match (c.value(a), c.value(b)) {
            (_, Some(1)) => a,
            (Some(1), _) => b,
            (Some(va), Some(vb)) if va == vb => a,
            (Some(_), Some(_)) if !incompatible_shape_error => return Ok(c.scalar()),
            (Some(_), Some(_)) => {
                return Err(c.error(format!(
                    "incompatible shapes for broadcasting: {} and {}",
                    c.describe(x),
                    c.describe(y)
                )));
            }
            (None, None) if a == b => a,
            (None, None) => c.unknown_dim(),
            // A known size (0 or above 1) facing an unknown one.
            _ if !incompatible_shape_error => return Ok(c.unknown_shape()),
            (Some(v), None) | (None, Some(v)) if v == 0 => c.unknown_dim(),
            (Some(_), None) => a,
            (None, Some(_)) => b,
        };
        dims.push(dim);
    }
    Ok(c.make_shape(dims))
}

/// Output 0 is every input merged: all inputs must have one shape (as for
/// an elementwise sum of a list).
pub fn merge_inputs(c: &mut InferenceContext<'_>) -> Result<()> {
    let mut merged = c.input(0)?;
    for i in 1..c.num_inputs() {
        let next = c.input(i)?;
        merged = c.merge(merged, next)?;
    }
    c.set_output(0, merged)
}

/// Output `i` has input `i`'s shape, for every output (ops that pass a list
/// through).
pub fn pass_through(c: &mut InferenceContext<'_>) -> Result<()> {
    if c.num_inputs() != c.num_outputs() {
        return Err(c.error(format!(
            "pass_through needs as many outputs as inputs, got {} and {}",
            c.num_outputs(),
            c.num_inputs()
        )));
    }
    for i in 0..c.num_outputs() {
        let s = c.input(i)?;
        c.set_output(i, s)?;
    }
    Ok(())
}
