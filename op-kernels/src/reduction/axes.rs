//! The axes of a reduction: checking them against the input's rank, and
//! the plan that reads the input as a few `[outer, reduced, inner]` passes
//! (TensorFlow's `ReductionHelper::Simplify`). Shared by the shape function
//! and every device's kernel, so both accept and reject the same axes.

use op_core::{Code, Error, KernelContext, Result, Tensor};

use super::ops::axis_values;

/// Axis `axis` of a tensor of rank `rank` as an index in `0..rank`
/// (negative axes count from the end, as in TensorFlow and NumPy).
///
/// Returns an `InvalidArgument` error, naming the axis and the valid range,
/// for an axis outside `-rank..rank`.
///
/// ```
/// use op_kernels::reduction::normalize_axis;
/// assert_eq!(normalize_axis(-1, 3).unwrap(), 2);
/// assert!(normalize_axis(3, 3).is_err());
/// ```
pub fn normalize_axis(axis: i64, rank: usize) -> Result<usize> {
    // A rank always fits in an i64: it is at most a tensor's dimension count.
    let signed_rank = rank as i64;
    if axis < -signed_rank || axis >= signed_rank {
        let range = if rank == 0 {
            "a scalar has no axes to reduce".to_owned()
        } else {
            format!("axes must be in [-{rank}, {rank})")
        };
        return Err(Error::invalid_argument(format!(
            "invalid reduction dimension {axis} for an input of rank {rank}: {range}"
        )));
    }
    Ok(if axis < 0 { axis + signed_rank } else { axis } as usize)
}

/// One pass of a reduction: its input read as the row-major 3-D array
/// `[outer, reduced, inner]`, reduced over the middle axis into
/// `[outer, inner]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pass {
    /// The product of the dimensions before the reduced ones.
    pub outer: usize,
    /// The product of the reduced dimensions.
    pub reduced: usize,
    /// The product of the dimensions after the reduced ones.
    pub inner: usize,
}

impl Pass {
    /// The number of elements the pass writes (`outer * inner`).
    pub fn outputs(&self) -> usize {
        self.outer * self.inner
    }

    /// The number of elements the pass reads (`outer * reduced * inner`).
    pub fn inputs(&self) -> usize {
        self.outer * self.reduced * self.inner
    }
}

/// How a reduction of one input shape over some axes runs: the output's
/// shape, and the passes that compute it.
///
/// Adjacent axes that are both reduced or both kept are merged, and axes of
/// size 1 join their neighbours (they change no element's position), so
/// the input becomes alternating runs of kept and reduced dimensions: most
/// reductions are then one pass (`[kept, reduced, kept]` at most), and a
/// reduction over `k` separated runs is `k` passes, the last run first.
///
/// ```
/// use op_kernels::reduction::{Pass, ReductionPlan};
///
/// // [2, 1, 3, 1, 5] over axes 1 and 4: a [6, 5] reduced over its last
/// // axis, whose 6 results are the output [2, 3, 1].
/// let plan = ReductionPlan::new(&[2, 1, 3, 1, 5], &[1, 4], false)?;
/// assert_eq!(plan.output_dims, [2, 3, 1]);
/// assert_eq!(plan.passes, [Pass { outer: 6, reduced: 5, inner: 1 }]);
/// assert_eq!(plan.reduced_count, 5);
/// # Ok::<(), op_core::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReductionPlan {
    /// The output's dimensions: the kept ones, and with `keep_dims` a 1 for
    /// each reduced one.
    pub output_dims: Vec<usize>,
    /// The passes, in order: each reads the previous one's output (the
    /// first reads the input; the last writes the output). Empty when
    /// nothing is reduced but axes of size 1, and the output is the input
    /// reshaped.
    pub passes: Vec<Pass>,
    /// How many input elements each output element reduces: the product of
    /// the reduced dimensions (0 when one of them is 0), what `Mean`
    /// divides by.
    pub reduced_count: usize,
}

impl ReductionPlan {
    /// The plan for reducing a tensor of shape `dims` over `axes` (each in
    /// `-rank..rank`; an empty list reduces nothing).
    ///
    /// Returns an `InvalidArgument` error for an axis out of range, or for
    /// an axis named twice (TensorFlow's kernels reject duplicates, `1`
    /// and `-1` of a matrix included; its shape function does not).
    pub fn new(dims: &[usize], axes: &[i64], keep_dims: bool) -> Result<ReductionPlan> {
        let rank = dims.len();
        let mut reduced = vec![false; rank];
        for &axis in axes {
            let index = normalize_axis(axis, rank)?;
            if reduced[index] {
                return Err(Error::invalid_argument(format!(
                    "axes contain duplicate dimension {index} (axis {axis}): each axis may be reduced once"
                )));
            }
            reduced[index] = true;
        }
        let output_dims = dims
            .iter()
            .zip(&reduced)
            .filter_map(|(&d, &r)| match (r, keep_dims) {
                (false, _) => Some(d),
                (true, true) => Some(1),
                (true, false) => None,
            })
            .collect();
        let reduced_count = dims
            .iter()
            .zip(&reduced)
            .filter(|(_, r)| **r)
            .map(|(d, _)| *d)
            .product();
        Ok(ReductionPlan {
            output_dims,
            passes: passes(&runs(dims, &reduced)),
            reduced_count,
        })
    }

    /// Whether the output is the input itself, reshaped (nothing to reduce).
    pub fn is_identity(&self) -> bool {
        self.passes.is_empty()
    }
}

/// The input as alternating runs `(size, reduced)`: adjacent dimensions
/// with the same flag merged, dimensions of size 1 absorbed (their flag
/// does not matter).
fn runs(dims: &[usize], reduced: &[bool]) -> Vec<(usize, bool)> {
    let mut runs: Vec<(usize, bool)> = Vec::new();
    for (&size, &r) in dims.iter().zip(reduced) {
        if size == 1 {
            continue;
        }
        match runs.last_mut() {
            Some((run, flag)) if *flag == r => *run *= size,
            _ => runs.push((size, r)),
        }
    }
    runs
}

/// The passes over `runs`: the last reduced run first, the kept runs
/// around it merging once it is gone.
fn passes(runs: &[(usize, bool)]) -> Vec<Pass> {
    let mut runs = runs.to_vec();
    let mut passes = Vec::new();
    while let Some(r) = runs.iter().rposition(|(_, reduced)| *reduced) {
        let size = |runs: &[(usize, bool)]| runs.iter().map(|(s, _)| *s).product::<usize>();
        passes.push(Pass {
            outer: size(&runs[..r]),
            reduced: runs[r].0,
            inner: size(&runs[r + 1..]),
        });
        runs.remove(r);
        if r > 0 && r < runs.len() {
            // Two kept runs now touch: one run.
            let next = runs.remove(r);
            runs[r - 1].0 *= next.0;
        }
    }
    passes
}

/// The plan of a Sum/Mean-style kernel call: input 1's axes (a scalar or
/// a vector) over input 0, checked with errors naming both inputs; with
/// the input (a clone, a reference count). `None` when nothing is reduced:
/// output 0 is then set to the input's buffer, reshaped. Shared by the CPU
/// and GPU kernels.
pub(super) fn plan_reduction(
    ctx: &mut KernelContext<'_>,
    keep_dims: bool,
) -> Result<Option<(Tensor, ReductionPlan)>> {
    let axes = ctx.input(1)?;
    if axes.rank() > 1 {
        return Err(ctx.error(
            Code::InvalidArgument,
            format_args!(
                "input 1 ('reduction_indices') must be a scalar or a vector, but has shape {}",
                axes.shape()
            ),
        ));
    }
    let axes = axis_values(axes).map_err(|e| ctx.error(e.code(), e.message()))?;
    let input = ctx.input(0)?.clone();
    let plan = ReductionPlan::new(input.dims(), &axes, keep_dims).map_err(|e| {
        ctx.error(
            e.code(),
            format_args!(
                "input 1 ('reduction_indices'): {}, and input 0 ('input') has shape {}",
                e.message(),
                input.shape()
            ),
        )
    })?;
    if plan.is_identity() {
        let output = input.reshape(&plan.output_dims)?;
        ctx.set_output(0, output)?;
        return Ok(None);
    }
    Ok(Some((input, plan)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pass(outer: usize, reduced: usize, inner: usize) -> Pass {
        Pass {
            outer,
            reduced,
            inner,
        }
    }

    #[test]
    fn one_reduced_run_is_one_pass() {
        let plan = ReductionPlan::new(&[2, 3, 4], &[1], false).unwrap();
        assert_eq!(plan.passes, [pass(2, 3, 4)]);
        assert_eq!(plan.output_dims, [2, 4]);
        let plan = ReductionPlan::new(&[2, 3, 4], &[0, 1], true).unwrap();
        assert_eq!(plan.passes, [pass(1, 6, 4)]);
        assert_eq!(plan.output_dims, [1, 1, 4]);
        let plan = ReductionPlan::new(&[2, 3, 4], &[-1, 0, 1], false).unwrap();
        assert_eq!(plan.passes, [pass(1, 24, 1)]);
        assert!(plan.output_dims.is_empty());
        assert_eq!(plan.reduced_count, 24);
    }

    #[test]
    fn separated_reduced_runs_take_a_pass_each_last_first() {
        let plan = ReductionPlan::new(&[2, 3, 4, 5], &[0, 2], false).unwrap();
        assert_eq!(plan.passes, [pass(6, 4, 5), pass(1, 2, 15)]);
        assert_eq!(plan.output_dims, [3, 5]);
        assert_eq!(plan.reduced_count, 8);
    }

    #[test]
    fn size_one_axes_join_their_neighbours() {
        let plan = ReductionPlan::new(&[1, 1], &[0], false).unwrap();
        assert!(plan.is_identity());
        assert_eq!(plan.output_dims, [1]);
        let plan = ReductionPlan::new(&[2, 1, 3], &[1], true).unwrap();
        assert!(plan.is_identity());
        assert_eq!(plan.output_dims, [2, 1, 3]);
        assert_eq!(plan.reduced_count, 1);
    }

    #[test]
    fn zero_sized_reduced_axes_count_zero_elements() {
        let plan = ReductionPlan::new(&[0, 3], &[0], false).unwrap();
        assert_eq!(plan.passes, [pass(1, 0, 3)]);
        assert_eq!(plan.reduced_count, 0);
    }

    #[test]
    fn bad_axes_are_invalid_arguments() {
        let err = ReductionPlan::new(&[2, 3], &[2], false).unwrap_err();
        assert!(
            err.message().contains("invalid reduction dimension 2"),
            "{err}"
        );
        assert!(err.message().contains("[-2, 2)"), "{err}");
        let err = ReductionPlan::new(&[2, 3], &[1, -1], false).unwrap_err();
        assert!(err.message().contains("duplicate dimension 1"), "{err}");
        let err = ReductionPlan::new(&[], &[0], false).unwrap_err();
        assert!(err.message().contains("a scalar has no axes"), "{err}");
    }
}
