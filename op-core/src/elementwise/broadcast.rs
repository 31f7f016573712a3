//! [`Broadcast`]: how operands of different shapes map onto one output,
//! NumPy style (TensorFlow's `BCast` and `BCastList`), as plain index
//! arithmetic that any holder of slices can walk.
//!
//! Shapes align from the right; a missing dimension counts as 1, and a
//! dimension of size 1 stretches to the output's size. The plan drops the
//! output's dimensions of size 1 and merges neighbouring dimensions that
//! every operand treats alike (all stretched, or all walked), as `BCast`
//! does: `[2,3,4] + [4]` becomes `[6,4] + [1,4]`, and `[2,3] + [2,3]` one
//! dimension of 6. What is left is walked in *runs*: stretches of the
//! output along its innermost (merged) dimension, in which each operand
//! either advances one element at a time or repeats one element. A kernel
//! loops over a run like over plain slices, so the loop vectorizes.
//!
//! ```
//! use op_core::elementwise::broadcast::Broadcast;
//!
//! // [2,3] + [3]: the second operand repeats for every row.
//! let plan = Broadcast::new([&[2, 3][..], &[3][..]]).unwrap();
//! assert_eq!(plan.shape().dims(), [2, 3]);
//! let (a, b) = ([1, 2, 3, 4, 5, 6], [10, 20, 30]);
//! let mut out = [0; 6];
//! plan.for_each_run(0..6, |run| {
//!     for (j, o) in run.output.clone().enumerate() {
//!         out[o] = a[run.starts[0] + j * run.steps[0]] + b[run.starts[1] + j * run.steps[1]];
//!     }
//! });
//! assert_eq!(out, [11, 22, 33, 14, 25, 36]);
//! assert!(Broadcast::new([&[2, 3][..], &[2][..]]).is_none());
//! ```

use std::ops::Range;

use crate::shape::TensorShape;

/// How `N` operands broadcast to one output shape: the output's shape, its
/// dimensions merged where every operand treats them alike, and each
/// operand's strides over them (see the [module docs](self)).
#[derive(Clone, Debug)]
pub struct Broadcast<const N: usize> {
    shape: TensorShape,
    /// The merged output dimensions, outermost first; empty when the output
    /// has one element (or every dimension is 1).
    dims: Vec<usize>,
    /// Per operand, per merged dimension: its stride in elements, or 0
    /// where it is stretched.
    strides: [Vec<usize>; N],
    /// Each operand's element count.
    counts: [usize; N],
}

/// One run of consecutive output elements (see [`Broadcast::for_each_run`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run<const N: usize> {
    /// The output elements, by row-major index.
    pub output: Range<usize>,
    /// Each operand's element (row-major index) for the run's first output
    /// element.
    pub starts: [usize; N],
    /// Per operand: 1 if it advances one element per output element along
    /// the run, 0 if it repeats the element at its start.
    pub steps: [usize; N],
}

impl<const N: usize> Broadcast<N> {
    /// The plan for operands of shapes `shapes`, or `None` when they do not
    /// broadcast together (two aligned sizes differ and neither is 1).
    pub fn new(shapes: [&[usize]; N]) -> Option<Broadcast<N>> {
        let mut shape = TensorShape::scalar();
        for dims in shapes {
            // Operands of tensors are valid shapes, so their broadcast is.
            shape = shape.broadcast(&TensorShape::try_new(dims).ok()?)?;
        }
        let rank = shape.rank();
        // The size of operand k's dimension aligned with output dim i.
        let size = |k: usize, i: usize| {
            let dims = shapes[k];
            (i + dims.len()).checked_sub(rank).map_or(1, |j| dims[j])
        };
        // Merged dimensions with each operand's "stretched" flags.
        let mut merged: Vec<(usize, [bool; N])> = Vec::with_capacity(rank);
        for (i, &out) in shape.dims().iter().enumerate() {
            if out == 1 {
                continue;
            }
            let stretched: [bool; N] = std::array::from_fn(|k| size(k, i) == 1);
            match merged.last_mut() {
                Some((d, last)) if *last == stretched => *d *= out,
                _ => merged.push((out, stretched)),
            }
        }
        let dims: Vec<usize> = merged.iter().map(|(d, _)| *d).collect();
        let strides = std::array::from_fn(|k| {
            let mut strides = vec![0; merged.len()];
            let mut step = 1;
            for (i, (d, stretched)) in merged.iter().enumerate().rev() {
                if !stretched[k] {
                    strides[i] = step;
                    step *= d;
                }
            }
            strides
        });
        let counts = std::array::from_fn(|k| shapes[k].iter().product());
        Some(Broadcast {
            shape,
            dims,
            strides,
            counts,
        })
    }

    /// The output's shape.
    pub fn shape(&self) -> &TensorShape {
        &self.shape
    }

    /// The output's dimensions after merging (see the [module docs](self)),
    /// outermost first: the sizes of size 1 dropped, and neighbours that
    /// every operand treats alike merged into one. Empty when the output
    /// has one element. With [`strides`](Self::strides), what a kernel
    /// that indexes instead of walking runs (a GPU kernel) takes.
    ///
    /// ```
    /// use op_core::elementwise::broadcast::Broadcast;
    ///
    /// // [2,3,4] + [4]: [6,4] + [1,4].
    /// let plan = Broadcast::new([&[2, 3, 4][..], &[4][..]]).unwrap();
    /// assert_eq!(plan.dims(), [6, 4]);
    /// assert_eq!(plan.strides(0), [4, 1]);
    /// assert_eq!(plan.strides(1), [0, 1]);
    /// ```
    pub fn dims(&self) -> &[usize] {
        &self.dims
    }

    /// Operand `k`'s stride in elements along each merged dimension
    /// ([`dims`](Self::dims)), 0 where it is stretched.
    ///
    /// # Panics
    ///
    /// If `k >= N`.
    pub fn strides(&self, k: usize) -> &[usize] {
        &self.strides[k]
    }

    /// The number of output elements.
    pub fn num_elements(&self) -> usize {
        self.shape.num_elements()
    }

    /// The number of elements operand `k` has.
    ///
    /// # Panics
    ///
    /// If `k >= N`.
    pub fn operand_elements(&self, k: usize) -> usize {
        self.counts[k]
    }

    /// Whether operand `k` maps one to one onto the output (it has as many
    /// elements, so nothing of it is stretched): the operand whose buffer
    /// can become the output's.
    ///
    /// # Panics
    ///
    /// If `k >= N`.
    pub fn is_full(&self, k: usize) -> bool {
        self.counts[k] == self.num_elements()
    }

    /// Calls `run` on the runs that cover the output elements `range`, in
    /// order. Each run lies within one row of the innermost merged
    /// dimension, so it is as long as possible: the whole range when no
    /// operand is stretched.
    ///
    /// # Panics
    ///
    /// If `range` goes past the output's element count.
    pub fn for_each_run(&self, range: Range<usize>, mut run: impl FnMut(Run<N>)) {
        assert!(
            range.end <= self.num_elements(),
            "output range {range:?} past the {} elements of shape {}",
            self.num_elements(),
            self.shape
        );
        if range.is_empty() {
            return;
        }
        let Some(&inner) = self.dims.last() else {
            // One output element: every operand has one element too.
            run(Run {
                output: range,
                starts: [0; N],
                steps: [0; N],
            });
            return;
        };
        let last = self.dims.len() - 1;
        // The multi-index of the first output element, and each operand's
        // offset there.
        let mut index = vec![0; self.dims.len()];
        let mut rest = range.start;
        for (i, d) in self.dims.iter().enumerate().rev() {
            index[i] = rest % d;
            rest /= d;
        }
        let mut starts: [usize; N] =
            std::array::from_fn(|k| index.iter().zip(&self.strides[k]).map(|(i, s)| i * s).sum());
        let steps: [usize; N] = std::array::from_fn(|k| self.strides[k][last]);
        let mut position = range.start;
        while position < range.end {
            let len = (inner - index[last]).min(range.end - position);
            run(Run {
                output: position..position + len,
                starts,
                steps,
            });
            position += len;
            index[last] += len;
            for (start, step) in starts.iter_mut().zip(steps) {
                *start += len * step;
            }
            // Carry into the outer dimensions at the end of a row.
            let mut i = last;
            while index[i] == self.dims[i] && i > 0 {
                index[i] = 0;
                for (k, start) in starts.iter_mut().enumerate() {
                    *start -= self.dims[i] * self.strides[k][i];
                    *start += self.strides[k][i - 1];
                }
                i -= 1;
                index[i] += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every run of `plan` over `range`, collected.
    fn runs<const N: usize>(plan: &Broadcast<N>, range: Range<usize>) -> Vec<Run<N>> {
        let mut all = Vec::new();
        plan.for_each_run(range, |r| all.push(r));
        all
    }

    #[test]
    fn same_shapes_are_one_run() {
        let plan = Broadcast::new([&[2, 3, 4][..], &[2, 3, 4][..]]).unwrap();
        assert_eq!(plan.dims, [24]);
        assert_eq!(
            runs(&plan, 5..20),
            [Run {
                output: 5..20,
                starts: [5, 5],
                steps: [1, 1]
            }]
        );
        assert!(plan.is_full(0) && plan.is_full(1));
    }

    #[test]
    fn a_scalar_operand_repeats() {
        let plan = Broadcast::new([&[][..], &[2, 3][..]]).unwrap();
        assert_eq!(plan.dims, [6]);
        assert_eq!(
            runs(&plan, 0..6),
            [Run {
                output: 0..6,
                starts: [0, 0],
                steps: [0, 1]
            }]
        );
        assert!(!plan.is_full(0));
    }

    #[test]
    fn dimensions_treated_alike_merge_and_ones_drop() {
        let plan = Broadcast::new([&[2, 1, 3, 4][..], &[1, 3, 4][..]]).unwrap();
        assert_eq!(plan.shape().dims(), [2, 1, 3, 4]);
        assert_eq!(plan.dims, [2, 12]);
        assert_eq!(plan.strides, [vec![12, 1], vec![0, 1]]);
        let plan = Broadcast::new([&[5, 1][..], &[1, 7][..]]).unwrap();
        assert_eq!(plan.dims, [5, 7]);
        assert_eq!(plan.strides, [vec![1, 0], vec![0, 1]]);
    }

    #[test]
    fn runs_split_at_rows_and_carry_into_outer_dimensions() {
        // [2,2,3] with a [2,1,3] operand: rows of 3, the second operand's
        // row repeats for both middle indices.
        let plan = Broadcast::new([&[2, 2, 3][..], &[2, 1, 3][..]]).unwrap();
        let all = runs(&plan, 2..10);
        let expect = [
            (2..3, [2, 2]),
            (3..6, [3, 0]),
            (6..9, [6, 3]),
            (9..10, [9, 3]),
        ];
        assert_eq!(all.len(), expect.len());
        for (run, (output, starts)) in all.iter().zip(expect) {
            assert_eq!(run.output, output);
            assert_eq!(run.starts, starts);
            assert_eq!(run.steps, [1, 1]);
        }
    }

    #[test]
    fn empty_outputs_and_incompatible_shapes() {
        let plan = Broadcast::new([&[0, 3][..], &[1, 3][..]]).unwrap();
        assert_eq!(plan.num_elements(), 0);
        assert!(runs(&plan, 0..0).is_empty());
        assert!(Broadcast::new([&[0][..], &[3][..]]).is_none());
        assert!(Broadcast::new([&[2][..], &[1][..], &[3][..]]).is_none());
    }

    #[test]
    fn one_element_outputs_are_one_run() {
        let plan = Broadcast::new([&[1, 1][..], &[][..], &[1][..]]).unwrap();
        assert_eq!(plan.shape().dims(), [1, 1]);
        assert_eq!(
            runs(&plan, 0..1),
            [Run {
                output: 0..1,
                starts: [0, 0, 0],
                steps: [0, 0, 0]
            }]
        );
    }

    /// The element of an operand of shape `dims` that output element
    /// `index` (of shape `out`) reads, computed the plain way.
    fn naive_source(out: &[usize], dims: &[usize], mut index: usize) -> usize {
        let mut coords = vec![0; out.len()];
        for i in (0..out.len()).rev() {
            coords[i] = index % out[i];
            index /= out[i];
        }
        let skip = out.len() - dims.len();
        let mut source = 0;
        for (j, &d) in dims.iter().enumerate() {
            source = source * d + if d == 1 { 0 } else { coords[skip + j] };
        }
        source
    }

    /// Three shapes that broadcast together: a random output shape, and
    /// operands that keep a random suffix of it with random dims set to 1.
    fn broadcastable() -> impl Strategy<Value = [Vec<usize>; 3]> {
        prop::collection::vec(1usize..4, 0..5).prop_flat_map(|out| {
            let rank = out.len();
            let operand = (0..=rank, prop::collection::vec(any::<bool>(), rank)).prop_map({
                let out = out.clone();
                move |(keep, ones)| {
                    (rank - keep..rank)
                        .map(|i| if ones[i] { 1 } else { out[i] })
                        .collect::<Vec<usize>>()
                }
            });
            [operand.clone(), operand.clone(), operand]
        })
    }

    proptest! {
        #[test]
        fn every_run_reads_what_plain_indexing_reads(
            shapes in broadcastable(),
            split in 0.0f64..1.0,
        ) {
            let plan = Broadcast::new([&shapes[0][..], &shapes[1][..], &shapes[2][..]]).unwrap();
            let out = plan.shape().dims().to_vec();
            let total = plan.num_elements();
            // Two ranges, as two shards would walk them.
            let middle = (total as f64 * split) as usize;
            let mut next = 0;
            for range in [0..middle, middle..total] {
                for run in runs(&plan, range.clone()) {
                    prop_assert_eq!(run.output.start, next);
                    next = run.output.end;
                    for (j, o) in run.output.clone().enumerate() {
                        for k in 0..3 {
                            prop_assert_eq!(
                                run.starts[k] + j * run.steps[k],
                                naive_source(&out, &shapes[k], o),
                                "operand {} of shapes {:?}, output element {}", k, shapes, o
                            );
                        }
                    }
                }
            }
            prop_assert_eq!(next, total);
        }
    }
}
