//! How opcheck (`op_core::testing`) draws valid inputs for the array ops
//! whose index inputs must hold what no OpDef says: a target shape with
//! the input's element count (`Reshape`), a permutation (`Transpose`,
//! `InvertPermutation`), a box inside the input (`Slice`), a pair of
//! paddings per dimension (`Pad`), shapes that concatenate
//! (`ConcatV2`, `ConcatOffset`) or broadcast (`BroadcastGradientArgs`).
//! The other array ops are drawn well by the generic case.
//!
//! Each generator starts from the generic case where it can (the data
//! input of the kernel's type, index inputs of the drawn index type) and
//! replaces the index input with valid values; opcheck then derives the
//! invalid ones itself.

use op_core::testing::{Case, Draw, OpCheckRegistration};
use op_core::{DType, Result, Tensor, inventory};

/// `case` with input `index` replaced by integers of shape `dims`, in the
/// index type the generic case drew for it.
fn with_index(
    d: &Draw<'_>,
    mut case: Case,
    index: usize,
    dims: &[usize],
    values: &[i64],
) -> Result<Case> {
    let dtype = case.tensor(index).map_or(DType::I32, Tensor::dtype);
    case.set_input(index, d.int_tensor(dtype, dims, values)?)?;
    Ok(case)
}

/// The dimensions of the generic case's input 0.
fn dims_of(case: &Case) -> Vec<usize> {
    case.tensor(0)
        .map(|t| t.dims().to_vec())
        .unwrap_or_default()
}

/// The type of `attr` this kernel is for, else `fallback`.
fn kernel_type(d: &Draw<'_>, attr: &str, fallback: DType) -> DType {
    d.kernel_dtype(attr).unwrap_or(fallback)
}

fn as_i64(values: &[usize]) -> Vec<i64> {
    values.iter().map(|&v| v as i64).collect()
}

/// Reshape: the input's dimensions permuted, flattened, or with a 1
/// inserted; one of them sometimes `-1` (inferred).
fn reshape_cases(d: &mut Draw<'_>) -> Result<Case> {
    let case = d.generic()?;
    let dims = dims_of(&case);
    let n: usize = dims.iter().product();
    let mut target: Vec<i64> = match d.below(3) {
        0 => {
            let order = d.permutation(dims.len());
            order.iter().map(|&i| dims[i] as i64).collect()
        }
        1 => vec![n as i64],
        _ => {
            let mut with_one = as_i64(&dims);
            let at = d.size(0..=dims.len());
            with_one.insert(at, 1);
            with_one
        }
    };
    // `-1` is inferred from the others: not when they multiply to 0.
    if n > 0 && !target.is_empty() && d.chance(0.3) {
        let at = d.below(target.len());
        target[at] = -1;
    }
    with_index(d, case, 1, &[target.len()], &target)
}

/// Transpose: a permutation of the input's dimensions.
fn transpose_cases(d: &mut Draw<'_>) -> Result<Case> {
    let case = d.generic()?;
    let rank = dims_of(&case).len();
    let perm = as_i64(&d.permutation(rank));
    with_index(d, case, 1, &[rank], &perm)
}

/// InvertPermutation: a permutation of 0 to 5 elements.
fn invert_permutation_cases(d: &mut Draw<'_>) -> Result<Case> {
    let n = d.size(0..=5);
    let perm = as_i64(&d.permutation(n));
    let dtype = kernel_type(d, "T", DType::I32);
    Ok(Case::new().input(d.int_tensor(dtype, &[n], &perm)?))
}

/// Slice: a begin inside the input and a size that fits after it (`-1`,
/// to the end, now and then).
fn slice_cases(d: &mut Draw<'_>) -> Result<Case> {
    let case = d.generic()?;
    let dims = dims_of(&case);
    let mut begin = Vec::with_capacity(dims.len());
    let mut size = Vec::with_capacity(dims.len());
    for &dim in &dims {
        let b = d.size(0..=dim);
        begin.push(b as i64);
        size.push(if d.chance(0.2) {
            -1
        } else {
            d.size(0..=dim - b) as i64
        });
    }
    let case = with_index(d, case, 1, &[dims.len()], &begin)?;
    with_index(d, case, 2, &[dims.len()], &size)
}

/// ConcatV2: 2 to 4 tensors of one rank (at least 1) that differ only
/// along the axis, and the axis (negative now and then).
fn concat_v2_cases(d: &mut Draw<'_>) -> Result<Case> {
    let case = d.generic()?;
    let dtype = case.tensor(0).map_or(DType::F32, Tensor::dtype);
    let base = d.dims(1..=3, 0..=3);
    let rank = base.len() as i64;
    let axis = d.int(-rank..=rank - 1);
    let at = axis.rem_euclid(rank) as usize;
    let count = case.inputs().first().map_or(2, |i| i.tensors().len());
    let mut values = Vec::with_capacity(count);
    for _ in 0..count {
        let mut dims = base.clone();
        dims[at] = d.size(0..=3);
        values.push(d.tensor(dtype, &dims)?);
    }
    let axis_dtype = case.tensor(1).map_or(DType::I32, Tensor::dtype);
    Ok(Case::new()
        .input_list(values)
        .input(d.int_tensor(axis_dtype, &[], &[axis])?))
}

/// Pad: 0 to 2 before and after each dimension.
fn pad_cases(d: &mut Draw<'_>) -> Result<Case> {
    let case = d.generic()?;
    let rank = dims_of(&case).len();
    let paddings: Vec<i64> = (0..2 * rank).map(|_| d.int(0..=2)).collect();
    with_index(d, case, 1, &[rank, 2], &paddings)
}

/// ConcatOffset: an axis, and 2 to 4 shapes of one rank that differ only
/// there.
fn concat_offset_cases(d: &mut Draw<'_>) -> Result<Case> {
    let dtype = kernel_type(d, "shape_type", DType::I32);
    let base = d.dims(1..=3, 0..=3);
    let axis = d.below(base.len());
    let count = d.size(2..=4);
    let mut shapes = Vec::with_capacity(count);
    for _ in 0..count {
        let mut dims = as_i64(&base);
        dims[axis] = d.int(0..=3);
        shapes.push(d.int_tensor(dtype, &[dims.len()], &dims)?);
    }
    Ok(Case::new()
        .input(Tensor::scalar(axis as i32))
        .input_list(shapes))
}

/// BroadcastGradientArgs: two shapes that broadcast: one, and the other
/// with some dimensions 1 or dropped in front, either way round.
fn broadcast_gradient_args_cases(d: &mut Draw<'_>) -> Result<Case> {
    let dtype = kernel_type(d, "T", DType::I32);
    let full = d.dims(0..=4, 0..=3);
    let keep = d.size(0..=full.len());
    let other: Vec<usize> = full[full.len() - keep..]
        .iter()
        .map(|&v| if d.chance(0.3) { 1 } else { v })
        .collect();
    let (s0, s1) = if d.bool() {
        (full, other)
    } else {
        (other, full)
    };
    Ok(Case::new()
        .input(d.int_tensor(dtype, &[s0.len()], &as_i64(&s0))?)
        .input(d.int_tensor(dtype, &[s1.len()], &as_i64(&s1))?))
}

inventory::submit! { OpCheckRegistration::generator("Reshape", reshape_cases, file!(), line!()) }
inventory::submit! { OpCheckRegistration::generator("Transpose", transpose_cases, file!(), line!()) }
inventory::submit! {
    OpCheckRegistration::generator("InvertPermutation", invert_permutation_cases, file!(), line!())
}
inventory::submit! { OpCheckRegistration::generator("Slice", slice_cases, file!(), line!()) }
inventory::submit! { OpCheckRegistration::generator("Pad", pad_cases, file!(), line!()) }
inventory::submit! { OpCheckRegistration::generator("ConcatV2", concat_v2_cases, file!(), line!()) }
inventory::submit! {
    OpCheckRegistration::generator("ConcatOffset", concat_offset_cases, file!(), line!())
}
inventory::submit! {
    OpCheckRegistration::generator(
        "BroadcastGradientArgs",
        broadcast_gradient_args_cases,
        file!(),
        line!()
    )
}
