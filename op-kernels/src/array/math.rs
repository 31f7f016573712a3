//! The plain arithmetic of the array ops, over dims and slices, for every
//! device's kernels (and any other caller holding slices) to share: axes,
//! output shapes computed from index values, and the copies themselves.
//!
//! Every copy here is written once for any element type (`T: Clone`): the
//! array ops move elements without looking at them, so one generic function
//! serves float, int, bool and string tensors alike. Each copy fills an
//! arbitrary block `offset..offset + output.len()` of the output, so that a
//! kernel can split the output over threads wherever it likes
//! ([`ThreadPool::shard_slice`](op_core::threads::ThreadPool::shard_slice)).
//!
//! Errors are `InvalidArgument` errors saying what is wrong with the
//! values; the kernels and shape functions add the op and node.

use op_core::{Error, Result, TensorShape};

/// Rows, and columns, of the tiles in which [`StridedView::copy_into`]
/// copies rows that read strided input: 16 rows of 32 columns touch at
/// most 32 input cache lines and 16 output ones at a time.
const TILE_ROWS: usize = 16;
const TILE_COLUMNS: usize = 32;

/// `axis` as an index into `0..rank`, counting from the end when negative
/// (NumPy's and TensorFlow's rule): `None` outside `[-rank, rank)`.
///
/// ```
/// use op_kernels::array::normalize_axis;
/// assert_eq!(normalize_axis(-1, 3), Some(2));
/// assert_eq!(normalize_axis(3, 3), None);
/// assert_eq!(normalize_axis(-4, 3), None);
/// ```
pub fn normalize_axis(axis: i64, rank: usize) -> Option<usize> {
    let rank = i64::try_from(rank).ok()?;
    let axis = if axis < 0 {
        axis.checked_add(rank)?
    } else {
        axis
    };
    (0..rank).contains(&axis).then_some(axis as usize)
}

/// The row-major strides of `dims`, in elements: the last dimension's is 1.
///
/// The products cannot overflow for the dims of a tensor (a
/// [`TensorShape`] bounds them); dims past the first zero get what their
/// inner dims give, which no index reaches.
pub fn row_major_strides(dims: &[usize]) -> Vec<usize> {
    let mut strides = vec![1usize; dims.len()];
    for k in (0..dims.len().saturating_sub(1)).rev() {
        strides[k] = strides[k + 1].saturating_mul(dims[k + 1]);
    }
    strides
}

/// A strided view of a buffer: the element at multi-index `i` of a tensor
/// of shape `dims` is `buffer[Σ i[k] * strides[k]]`.
///
/// Transpose, BroadcastTo and Tile are each one such view of their input
/// (permuted strides, zero strides on broadcast dimensions, a zero-stride
/// dimension before each tiled one), copied out in row-major order by
/// [`copy_into`](Self::copy_into).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StridedView {
    /// The view's dimension sizes, outermost first.
    pub dims: Vec<usize>,
    /// The step in the buffer, in elements, along each dimension.
    pub strides: Vec<usize>,
}

impl StridedView {
    /// The number of elements the view holds.
    pub fn len(&self) -> usize {
        if self.dims.contains(&0) {
            return 0;
        }
        // Saturating: a view built by hand may describe more elements than
        // memory holds; those of the kernels never do.
        self.dims.iter().fold(1, |n, &d| n.saturating_mul(d))
    }

    /// Whether the view holds no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The same view with size-1 dimensions dropped and neighbouring
    /// dimensions merged where the outer one steps over exactly the inner
    /// one (`strides[k] == strides[k + 1] * dims[k + 1]`, which covers both
    /// contiguous runs and runs of broadcast zeros). Fewer, longer rows make
    /// [`copy_into`](Self::copy_into) faster; the elements are the same.
    ///
    /// ```
    /// use op_kernels::array::StridedView;
    /// // A [2,3,4] tensor read in order is one run of 24 elements.
    /// let view = StridedView { dims: vec![2, 3, 4], strides: vec![12, 4, 1] };
    /// assert_eq!(view.simplified(), StridedView { dims: vec![24], strides: vec![1] });
    /// ```
    pub fn simplified(&self) -> StridedView {
        let mut dims: Vec<usize> = Vec::with_capacity(self.dims.len());
        let mut strides: Vec<usize> = Vec::with_capacity(self.dims.len());
        for (&d, &s) in self.dims.iter().zip(&self.strides) {
            if d == 1 {
                continue;
            }
            match (dims.last_mut(), strides.last_mut()) {
                (Some(last_d), Some(last_s)) if *last_s == s.saturating_mul(d) => {
                    // Only a view with no elements (another dimension 0)
                    // has dimensions whose product overflows: it copies
                    // nothing, so a saturated size is as good.
                    *last_d = last_d.saturating_mul(d);
                    *last_s = s;
                }
                _ => {
                    dims.push(d);
                    strides.push(s);
                }
            }
        }
        StridedView { dims, strides }
    }

    /// Writes the view's elements `offset..offset + output.len()`, in
    /// row-major order, into `output`, reading them from `input`.
    ///
    /// # Panics
    ///
    /// If the view reaches past `input` or the block past the view's end:
    /// the kernels build views from checked shapes, so this is a bug.
    ///
    /// ```
    /// use op_kernels::array::StridedView;
    /// // The transpose of a [2,3] matrix: a [3,2] view with swapped strides.
    /// let view = StridedView { dims: vec![3, 2], strides: vec![1, 3] };
    /// let mut out = [0; 6];
    /// view.copy_into(&[1, 2, 3, 4, 5, 6], 0, &mut out);
    /// assert_eq!(out, [1, 4, 2, 5, 3, 6]);
    /// // Any block of it: elements 3..5.
    /// let mut block = [0; 2];
    /// view.copy_into(&[1, 2, 3, 4, 5, 6], 3, &mut block);
    /// assert_eq!(block, [5, 3]);
    /// ```
    pub fn copy_into<T: Clone>(&self, input: &[T], offset: usize, output: &mut [T]) {
        if output.is_empty() {
            return;
        }
        let rank = self.dims.len();
        if rank == 0 {
            output[0] = input[0].clone();
            return;
        }
        // The multi-index of `offset`, and where its row starts in `input`.
        let mut index = vec![0; rank];
        let mut rest = offset;
        for k in (0..rank).rev() {
            index[k] = rest % self.dims[k];
            rest /= self.dims[k];
        }
        let mut row_start: usize = (0..rank - 1).map(|k| index[k] * self.strides[k]).sum();
        let (row_len, step) = (self.dims[rank - 1], self.strides[rank - 1]);
        // The rows' own dimension: rows along it start `row_stride` apart.
        let (rows_dim, row_stride) = match rank {
            1 => (1, 0),
            _ => (self.dims[rank - 2], self.strides[rank - 2]),
        };
        let mut column = index[rank - 1];
        let mut written = 0;
        loop {
            // Whole rows that read strided input go a tile at a time (a few
            // columns of several rows), so that each input cache line a
            // column touches serves the neighbouring rows too: a transpose
            // then reads memory in runs instead of one element per line.
            let rows = if column == 0 && step > 1 && rank >= 2 {
                let whole = (output.len() - written) / row_len;
                whole.min(rows_dim - index[rank - 2]).min(TILE_ROWS)
            } else {
                0
            };
            if rows > 1 {
                let out = &mut output[written..written + rows * row_len];
                for first_column in (0..row_len).step_by(TILE_COLUMNS) {
                    let columns = first_column..(first_column + TILE_COLUMNS).min(row_len);
                    for r in 0..rows {
                        let from = row_start + r * row_stride;
                        for c in columns.clone() {
                            out[r * row_len + c] = input[from + c * step].clone();
                        }
                    }
                }
                written += rows * row_len;
                // At the group's last row; the carry below moves past it.
                row_start += (rows - 1) * row_stride;
                index[rank - 2] += rows - 1;
            } else {
                let n = (row_len - column).min(output.len() - written);
                let out = &mut output[written..written + n];
                let first = row_start + column * step;
                match step {
                    1 => out.clone_from_slice(&input[first..first + n]),
                    0 => out.fill(input[first].clone()),
                    _ => {
                        for (j, o) in out.iter_mut().enumerate() {
                            *o = input[first + j * step].clone();
                        }
                    }
                }
                written += n;
            }
            if written == output.len() {
                return;
            }
            // On to the next row: carry into the outer dimensions.
            column = 0;
            for k in (0..rank - 1).rev() {
                index[k] += 1;
                row_start += self.strides[k];
                if index[k] < self.dims[k] {
                    break;
                }
                row_start -= self.dims[k] * self.strides[k];
                index[k] = 0;
            }
        }
    }
}

/// The view of a tensor of shape `dims` that is its transpose by `perm`
/// (output dimension `i` is input dimension `perm[i]`), which must be a
/// permutation of `0..dims.len()` (see [`check_permutation`]).
///
/// ```
/// use op_kernels::array::transpose_view;
/// let view = transpose_view(&[2, 3, 4], &[2, 0, 1]);
/// assert_eq!(view.dims, [4, 2, 3]);
/// assert_eq!(view.strides, [1, 12, 4]);
/// ```
pub fn transpose_view(dims: &[usize], perm: &[usize]) -> StridedView {
    let strides = row_major_strides(dims);
    StridedView {
        dims: perm.iter().map(|&p| dims[p]).collect(),
        strides: perm.iter().map(|&p| strides[p]).collect(),
    }
}

/// `perm` as indices, if it is a permutation of `0..rank`; otherwise an
/// error saying which entry is out of range or missing (TensorFlow's
/// checks, in its words).
pub fn check_permutation(perm: &[i64], rank: usize) -> Result<Vec<usize>> {
    if perm.len() != rank {
        return Err(Error::invalid_argument(format!(
            "transpose expects a vector of size {rank}, but perm is a vector of size {}",
            perm.len()
        )));
    }
    let mut seen = vec![false; rank];
    let mut out = Vec::with_capacity(rank);
    for &p in perm {
        let index = usize::try_from(p)
            .ok()
            .filter(|&i| i < rank)
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "perm {} is not a permutation: {p} is out of range [0 .. {rank})",
                    display_values(perm)
                ))
            })?;
        if std::mem::replace(&mut seen[index], true) {
            return Err(Error::invalid_argument(format!(
                "perm {} is not a permutation: {index} appears twice",
                display_values(perm)
            )));
        }
        out.push(index);
    }
    Ok(out)
}

/// The view that broadcasts a tensor of shape `from` to shape `to` (NumPy's
/// rules, as TensorFlow's `BroadcastTo`: dimensions align on the right, and
/// each of `from` is 1 or equal to `to`'s), or `None` if it does not
/// broadcast to exactly `to`.
///
/// ```
/// use op_kernels::array::broadcast_view;
/// let view = broadcast_view(&[3, 1], &[2, 3, 4]).unwrap();
/// assert_eq!(view.strides, [0, 1, 0]);
/// assert!(broadcast_view(&[3], &[3, 2]).is_none());
/// ```
pub fn broadcast_view(from: &[usize], to: &[usize]) -> Option<StridedView> {
    let lead = to.len().checked_sub(from.len())?;
    let from_strides = row_major_strides(from);
    let mut strides = vec![0; to.len()];
    for (k, (&f, &stride)) in from.iter().zip(&from_strides).enumerate() {
        match f {
            1 => {}
            f if f == to[lead + k] => strides[lead + k] = stride,
            _ => return None,
        }
    }
    Some(StridedView {
        dims: to.to_vec(),
        strides,
    })
}

/// The output dims of tiling a tensor of shape `dims` by `multiples`
/// (`dims[i] * multiples[i]`), checked: a negative multiple, a length that
/// is not the rank, or a size that overflows is an error naming it.
pub fn tile_dims(dims: &[usize], multiples: &[i64]) -> Result<TensorShape> {
    if multiples.len() != dims.len() {
        return Err(Error::invalid_argument(format!(
            "expected multiples to be a vector of length {}, but got length {}",
            dims.len(),
            multiples.len()
        )));
    }
    let mut out = Vec::with_capacity(dims.len());
    for (i, (&d, &m)) in dims.iter().zip(multiples).enumerate() {
        let m = usize::try_from(m).map_err(|_| {
            Error::invalid_argument(format!("expected multiples[{i}] >= 0, but got {m}"))
        })?;
        out.push(d.checked_mul(m).ok_or_else(|| {
            Error::invalid_argument(format!("tiling dimension {i} of size {d} by {m} overflows"))
        })?);
    }
    TensorShape::try_new(out)
}

/// The view that tiles a tensor of shape `dims` by `multiples` (each
/// non-negative, as [`tile_dims`] checks): each dimension `d` becomes the
/// pair `[m, d]` with strides `[0, stride]`, whose row-major order is the
/// tiled dimension's.
///
/// ```
/// use op_kernels::array::tile_view;
/// let view = tile_view(&[2], &[3]);
/// let mut out = [0; 6];
/// view.copy_into(&[7, 8], 0, &mut out);
/// assert_eq!(out, [7, 8, 7, 8, 7, 8]);
/// ```
pub fn tile_view(dims: &[usize], multiples: &[usize]) -> StridedView {
    let strides = row_major_strides(dims);
    let mut view = StridedView {
        dims: Vec::with_capacity(2 * dims.len()),
        strides: Vec::with_capacity(2 * dims.len()),
    };
    for ((&d, &m), &s) in dims.iter().zip(multiples).zip(&strides) {
        view.dims.extend([m, d]);
        view.strides.extend([0, s]);
    }
    view
}

/// Writes elements `offset..offset + output.len()` of the concatenation of
/// `inputs` by rows: input `j` is a matrix with rows of `widths[j]`
/// elements, every input has the same number of rows, and output row `r`
/// is the inputs' rows `r` one after the other. ConcatV2 along an axis (and
/// Pack) is this with `widths[j] = dims_j[axis] * (inner elements)`.
///
/// # Panics
///
/// If the inputs do not have the rows the block reaches (a bug in the
/// caller, which checked the shapes).
///
/// ```
/// use op_kernels::array::concat_rows_into;
/// let (a, b) = ([1, 2, 3, 4], [5, 6]);      // [2,2] and [2,1]
/// let mut out = [0; 6];
/// concat_rows_into(&[&a, &b], &[2, 1], 0, &mut out);
/// assert_eq!(out, [1, 2, 5, 3, 4, 6]);
/// ```
pub fn concat_rows_into<T: Clone>(
    inputs: &[&[T]],
    widths: &[usize],
    offset: usize,
    output: &mut [T],
) {
    let row_len: usize = widths.iter().sum();
    if output.is_empty() || row_len == 0 {
        return;
    }
    let (mut row, mut column) = (offset / row_len, offset % row_len);
    let mut written = 0;
    while written < output.len() {
        // The input that holds `column`, and where in its row.
        let mut start = 0;
        for (input, &width) in inputs.iter().zip(widths) {
            if column < start + width {
                let within = column - start;
                let n = (width - within).min(output.len() - written);
                let from = row * width + within;
                output[written..written + n].clone_from_slice(&input[from..from + n]);
                written += n;
                column += n;
                if written == output.len() {
                    return;
                }
            }
            start += width;
        }
        row += 1;
        column = 0;
    }
}

/// The dims that Reshape gives a tensor of shape `dims` for the requested
/// `sizes` (at most one `-1`, which takes what the others leave), with
/// TensorFlow's checks and words: "Input to reshape is a tensor with 6
/// values, but the requested shape has 4".
///
/// ```
/// use op_kernels::array::reshape_dims;
/// assert_eq!(reshape_dims(&[2, 3], &[3, -1]).unwrap().dims(), [3, 2]);
/// assert_eq!(reshape_dims(&[0, 3], &[-1, 0]).unwrap().dims(), [3, 0]);
/// let err = reshape_dims(&[2, 3], &[4]).unwrap_err();
/// assert_eq!(err.message(), "Input to reshape is a tensor with 6 values, but the requested shape has 4");
/// ```
pub fn reshape_dims(dims: &[usize], sizes: &[i64]) -> Result<TensorShape> {
    let mut out = Vec::with_capacity(sizes.len());
    let mut unknown: Option<usize> = None;
    // The product of the known sizes but zeros, so that a -1 next to a 0
    // still resolves from the other dims (TensorFlow's rule).
    let mut product: usize = 1;
    let mut has_zero = false;
    for (i, &size) in sizes.iter().enumerate() {
        match size {
            -1 => {
                if let Some(first) = unknown {
                    return Err(Error::invalid_argument(format!(
                        "Only one input size may be -1, not both {first} and {i}"
                    )));
                }
                unknown = Some(i);
                out.push(1);
            }
            0 => {
                has_zero = true;
                out.push(0);
            }
            size => {
                let size = usize::try_from(size).map_err(|_| {
                    Error::invalid_argument(format!("Size {i} must be non-negative, not {size}"))
                })?;
                product = product.checked_mul(size).ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "Shape {} has too many elements",
                        display_values(sizes)
                    ))
                })?;
                out.push(size);
            }
        }
    }
    let count: usize = dims.iter().product();
    if let Some(i) = unknown {
        let input_has_zero = has_zero && dims.contains(&0);
        let counted: usize = if has_zero {
            dims.iter().filter(|&&d| d != 0).product()
        } else {
            count
        };
        let missing = counted / product;
        if !input_has_zero && missing * product != counted {
            return Err(Error::invalid_argument(format!(
                "Input to reshape is a tensor with {counted} values, but the requested shape requires a multiple of {product}"
            )));
        }
        out[i] = missing;
    }
    let shape = TensorShape::try_new(&out)?;
    if shape.num_elements() != count {
        return Err(Error::invalid_argument(format!(
            "Input to reshape is a tensor with {count} values, but the requested shape has {}",
            shape.num_elements()
        )));
    }
    Ok(shape)
}

/// The shape that the size values of arg `name` (Fill's `dims`,
/// BroadcastTo's `shape`) give: each must be >= 0 and the element count must
/// fit, else an error naming the arg and the value.
///
/// ```
/// use op_kernels::array::shape_from_values;
/// assert_eq!(shape_from_values("dims", &[2, 3]).unwrap().dims(), [2, 3]);
/// assert_eq!(
///     shape_from_values("dims", &[2, -1]).unwrap_err().message(),
///     "dims[1] = -1 must be >= 0"
/// );
/// ```
pub fn shape_from_values(name: &str, values: &[i64]) -> Result<TensorShape> {
    let dims = values
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            usize::try_from(v)
                .map_err(|_| Error::invalid_argument(format!("{name}[{i}] = {v} must be >= 0")))
        })
        .collect::<Result<Vec<usize>>>()?;
    TensorShape::try_new(dims)
}

/// The shape of the concatenation of tensors of shapes `shapes` along
/// `axis` (negative counts from the end), and the axis as an index, with
/// TensorFlow's checks and words: scalars cannot be concatenated, the axis
/// must be in `[-rank, rank)`, the ranks must match, and the sizes must
/// match but along the axis.
///
/// ```
/// use op_kernels::array::concat_dims;
/// let (shape, axis) = concat_dims(&[&[2, 3], &[2, 5]], -1).unwrap();
/// assert_eq!((shape.dims(), axis), (&[2, 8][..], 1));
/// assert!(concat_dims(&[&[2, 3], &[3, 3]], 1).is_err());
/// ```
pub fn concat_dims(shapes: &[&[usize]], axis: i64) -> Result<(TensorShape, usize)> {
    let first = shapes.first().copied().unwrap_or(&[]);
    let rank = first.len();
    if rank == 0 {
        return Err(Error::invalid_argument(
            "Can't concatenate scalars (use tf.stack instead)",
        ));
    }
    let index = normalize_axis(axis, rank).ok_or_else(|| {
        Error::invalid_argument(format!(
            "Expected concatenating dimensions in the range [{}, {rank}), but got axis = {axis}",
            -(rank as i64)
        ))
    })?;
    let mut dims = first.to_vec();
    for (i, shape) in shapes.iter().enumerate().skip(1) {
        if shape.len() != rank {
            return Err(Error::invalid_argument(format!(
                "Ranks of all input tensors should match: shape[0] = {} vs. shape[{i}] = {}",
                display_dims(first),
                display_dims(shape)
            )));
        }
        let differs = (0..rank).any(|k| k != index && shape[k] != first[k]);
        if differs {
            return Err(Error::invalid_argument(format!(
                "Dimensions of inputs should match: shape[0] = {} vs. shape[{i}] = {}",
                display_dims(first),
                display_dims(shape)
            )));
        }
        dims[index] = dims[index].checked_add(shape[index]).ok_or_else(|| {
            Error::invalid_argument(format!(
                "the concatenated dimension {index} overflows: {} + {}",
                dims[index], shape[index]
            ))
        })?;
    }
    Ok((TensorShape::try_new(dims)?, index))
}

/// The shape of the stack of `shapes.len()` tensors of one shape along a
/// new dimension at `axis` (in `[-(rank + 1), rank + 1)`), and the axis as
/// an index, with TensorFlow's checks and words.
///
/// ```
/// use op_kernels::array::pack_dims;
/// let (shape, axis) = pack_dims(&[&[2, 3], &[2, 3]], -1).unwrap();
/// assert_eq!((shape.dims(), axis), (&[2, 3, 2][..], 2));
/// assert!(pack_dims(&[&[2, 3], &[3, 2]], 0).is_err());
/// ```
pub fn pack_dims(shapes: &[&[usize]], axis: i64) -> Result<(TensorShape, usize)> {
    let first = shapes.first().copied().unwrap_or(&[]);
    let expanded = first.len() + 1;
    let index = normalize_axis(axis, expanded).ok_or_else(|| {
        Error::invalid_argument(format!(
            "axis = {axis} not in [{}, {expanded})",
            -(expanded as i64)
        ))
    })?;
    for (i, shape) in shapes.iter().enumerate().skip(1) {
        if shape != &first {
            return Err(Error::invalid_argument(format!(
                "Shapes of all inputs must match: values[0].shape = {} != values[{i}].shape = {}",
                display_dims(first),
                display_dims(shape)
            )));
        }
    }
    let mut dims = first.to_vec();
    dims.insert(index, shapes.len());
    Ok((TensorShape::try_new(dims)?, index))
}

/// The dims of a tensor of shape `dims` with a dimension of size 1 inserted
/// at `axis`, which may be `-rank - 1 ..= rank` (negative counts from the
/// end: `-1` appends), as ExpandDims does.
///
/// ```
/// use op_kernels::array::expand_dims;
/// assert_eq!(expand_dims(&[2, 3], 1).unwrap(), [2, 1, 3]);
/// assert_eq!(expand_dims(&[2, 3], -1).unwrap(), [2, 3, 1]);
/// assert!(expand_dims(&[2, 3], 3).is_err());
/// ```
pub fn expand_dims(dims: &[usize], axis: i64) -> Result<Vec<usize>> {
    let index = normalize_axis(axis, dims.len() + 1).ok_or_else(|| {
        let rank = dims.len() as i64;
        Error::invalid_argument(format!(
            "Tried to expand dim index {axis} for tensor with {rank} dimensions: dim must be in [{}, {rank}]",
            -rank - 1
        ))
    })?;
    let mut out = dims.to_vec();
    out.insert(index, 1);
    Ok(out)
}

/// The dims of a tensor of shape `dims` with the size-1 dimensions at
/// `axes` removed (negative counts from the end), or every size-1 dimension
/// if `axes` is empty, as Squeeze does. An axis out of range, or one whose
/// dimension is not 1, is an error naming it.
///
/// ```
/// use op_kernels::array::squeeze_dims;
/// assert_eq!(squeeze_dims(&[1, 2, 1, 3], &[]).unwrap(), [2, 3]);
/// assert_eq!(squeeze_dims(&[1, 2, 1, 3], &[-2]).unwrap(), [1, 2, 3]);
/// assert!(squeeze_dims(&[1, 2], &[1]).is_err());
/// ```
pub fn squeeze_dims(dims: &[usize], axes: &[i64]) -> Result<Vec<usize>> {
    let rank = dims.len();
    let mut squeeze = vec![false; rank];
    for &axis in axes {
        let index = normalize_axis(axis, rank).ok_or_else(|| {
            Error::invalid_argument(format!(
                "Tried to squeeze dim index {axis} for tensor with {rank} dimensions: squeeze_dims must be in [{}, {rank})",
                -(rank as i64)
            ))
        })?;
        if dims[index] != 1 {
            return Err(Error::invalid_argument(format!(
                "Can not squeeze dim[{index}], expected a dimension of 1, got {}",
                dims[index]
            )));
        }
        squeeze[index] = true;
    }
    Ok(dims
        .iter()
        .zip(&squeeze)
        .filter(|&(&d, &s)| if axes.is_empty() { d != 1 } else { !s })
        .map(|(&d, _)| d)
        .collect())
}

/// The reduction indices of the gradients of a broadcasting binary op with
/// inputs of shapes `s0` and `s1` (TensorFlow's `BCast::grad_x_reduce_idx`
/// and `grad_y_reduce_idx`): the output axes over which each input's
/// gradient must be summed. `None` if the shapes do not broadcast.
///
/// An axis is listed for an input where that input has size 1 (or lacks the
/// axis); no axes are listed when the shapes are equal, as in TensorFlow.
///
/// ```
/// use op_kernels::array::broadcast_gradient_args;
/// let (r0, r1) = broadcast_gradient_args(&[2, 3, 5], &[1, 5]).unwrap();
/// assert_eq!((r0, r1), (vec![], vec![0, 1]));
/// assert!(broadcast_gradient_args(&[2], &[3]).is_none());
/// ```
pub fn broadcast_gradient_args(s0: &[usize], s1: &[usize]) -> Option<(Vec<usize>, Vec<usize>)> {
    if s0 == s1 {
        return Some((Vec::new(), Vec::new()));
    }
    let rank = s0.len().max(s1.len());
    // Size along output axis `i`, a missing dimension counting as 1.
    let size = |s: &[usize], i: usize| (i + s.len()).checked_sub(rank).map_or(1, |j| s[j]);
    let (mut r0, mut r1) = (Vec::new(), Vec::new());
    for i in 0..rank {
        let (a, b) = (size(s0, i), size(s1, i));
        if a != b && a != 1 && b != 1 {
            return None;
        }
        if a == 1 {
            r0.push(i);
        }
        if b == 1 {
            r1.push(i);
        }
    }
    Some((r0, r1))
}

// ---- Slice, Pad, Unpack, ConcatOffset, InvertPermutation, DynamicStitch,
// ListDiff: the ops the gradients of the others are built from ----

/// Where a slice of a tensor of shape `dims` starts and the shape it has,
/// from Slice's `begin` and `size` (a size of -1 keeps the rest of its
/// dimension), with TensorFlow's checks and words: each begin in
/// `[0, dims[i]]`, each size in `[0, dims[i] - begin[i]]`, and a dimension
/// of size 0 sliced only as `begin = size = 0`.
///
/// ```
/// use op_kernels::array::slice_dims;
/// let (begin, shape) = slice_dims(&[4, 5], &[1, 2], &[2, -1]).unwrap();
/// assert_eq!((begin, shape.dims()), (vec![1, 2], &[2, 3][..]));
/// assert!(slice_dims(&[4, 5], &[3, 0], &[2, 1]).is_err());
/// ```
pub fn slice_dims(
    dims: &[usize],
    begin: &[i64],
    size: &[i64],
) -> Result<(Vec<usize>, TensorShape)> {
    if begin.len() != dims.len() || size.len() != dims.len() {
        return Err(Error::invalid_argument(format!(
            "Expected begin and size arguments to be 1-D tensors of size {}, but got {} and {} elements instead",
            dims.len(),
            begin.len(),
            size.len()
        )));
    }
    let mut starts = Vec::with_capacity(dims.len());
    let mut out = Vec::with_capacity(dims.len());
    for (i, ((&d, &b), &s)) in dims.iter().zip(begin).zip(size).enumerate() {
        if d == 0 {
            if b != 0 || s != 0 {
                return Err(Error::invalid_argument(format!(
                    "Expected begin[{i}] == 0 (got {b}) and size[{i}] == 0 (got {s}) when input.dim_size({i}) == 0"
                )));
            }
            starts.push(0);
            out.push(0);
            continue;
        }
        let start = usize::try_from(b).ok().filter(|&b| b <= d).ok_or_else(|| {
            Error::invalid_argument(format!("Expected begin[{i}] in [0, {d}], but got {b}"))
        })?;
        let count = if s == -1 { (d - start) as i64 } else { s };
        let count = usize::try_from(count)
            .ok()
            .filter(|&c| c <= d - start)
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "Expected size[{i}] in [0, {}], but got {s}",
                    d - start
                ))
            })?;
        starts.push(start);
        out.push(count);
    }
    Ok((starts, TensorShape::try_new(out)?))
}

/// The view of a slice of a tensor of shape `dims` that starts at `begin`
/// and has shape `size` (as [`slice_dims`] returns them), and the offset
/// in the tensor's buffer where the view starts: copy it out with
/// `view.copy_into(&buffer[offset..], ..)`. An empty slice's offset may lie
/// past the buffer; nothing is read then.
///
/// ```
/// use op_kernels::array::slice_view;
/// let (view, offset) = slice_view(&[3, 4], &[1, 1], &[2, 2]);
/// let mut out = [0; 4];
/// view.copy_into(&(0..12).collect::<Vec<_>>()[offset..], 0, &mut out);
/// assert_eq!(out, [5, 6, 9, 10]);
/// ```
pub fn slice_view(dims: &[usize], begin: &[usize], size: &[usize]) -> (StridedView, usize) {
    let strides = row_major_strides(dims);
    let offset = begin.iter().zip(&strides).map(|(b, s)| b * s).sum();
    let view = StridedView {
        dims: size.to_vec(),
        strides,
    };
    (view, offset)
}

/// The padding before each dimension, and the padded shape, of a tensor of
/// shape `dims` padded by Pad's `paddings` (`[before, after]` per
/// dimension, row-major), with TensorFlow's checks: one pair per
/// dimension, none negative, and a size that fits.
///
/// ```
/// use op_kernels::array::pad_dims;
/// let (before, shape) = pad_dims(&[2, 3], &[1, 0, 0, 2]).unwrap();
/// assert_eq!((before, shape.dims()), (vec![1, 0], &[3, 5][..]));
/// assert!(pad_dims(&[2, 3], &[1, -1, 0, 0]).is_err());
/// ```
pub fn pad_dims(dims: &[usize], paddings: &[i64]) -> Result<(Vec<usize>, TensorShape)> {
    if paddings.len() != 2 * dims.len() {
        return Err(Error::invalid_argument(format!(
            "The first dimension of paddings must be the rank of inputs: {} pairs for rank {}",
            paddings.len() / 2,
            dims.len()
        )));
    }
    let mut before = Vec::with_capacity(dims.len());
    let mut out = Vec::with_capacity(dims.len());
    for (i, (&d, pair)) in dims.iter().zip(paddings.chunks_exact(2)).enumerate() {
        let (b, a) = (pair[0], pair[1]);
        let (Ok(b), Ok(a)) = (usize::try_from(b), usize::try_from(a)) else {
            return Err(Error::invalid_argument(format!(
                "Paddings must be non-negative: {b} {a}"
            )));
        };
        let size = d
            .checked_add(b)
            .and_then(|s| s.checked_add(a))
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "padding dimension {i} of size {d} by {b} and {a} overflows"
                ))
            })?;
        before.push(b);
        out.push(size);
    }
    Ok((before, TensorShape::try_new(out)?))
}

/// Writes elements `offset..offset + output.len()` of `input` (of shape
/// `dims`) padded with `zero` to shape `out_dims`, with `before[k]`
/// elements of padding before it along dimension `k` (as [`pad_dims`]
/// returns them).
///
/// # Panics
///
/// If the shapes do not fit together or the block reaches past the
/// output (the caller checked them).
///
/// ```
/// use op_kernels::array::pad_into;
/// let mut out = [9; 8];
/// pad_into(&[1, 2], &[1, 2], &[1, 1], &[2, 4], &0, 0, &mut out);
/// assert_eq!(out, [0, 0, 0, 0, 0, 1, 2, 0]);
/// ```
pub fn pad_into<T: Clone>(
    input: &[T],
    dims: &[usize],
    before: &[usize],
    out_dims: &[usize],
    zero: &T,
    offset: usize,
    output: &mut [T],
) {
    if output.is_empty() {
        return;
    }
    let Some((&row_len, outer)) = out_dims.split_last() else {
        output[0] = input[0].clone();
        return;
    };
    let rank = out_dims.len();
    let strides = row_major_strides(dims);
    let (lead, width) = (before[rank - 1], dims[rank - 1]);
    let mut written = 0;
    while written < output.len() {
        let position = offset + written;
        let (mut row, column) = (position / row_len, position % row_len);
        let n = (row_len - column).min(output.len() - written);
        let out = &mut output[written..written + n];
        // Where the row's input row starts, if the row is not padding.
        let mut start = Some(0);
        for k in (0..outer.len()).rev() {
            let index = row % outer[k];
            row /= outer[k];
            start = match index.checked_sub(before[k]).filter(|&i| i < dims[k]) {
                Some(i) => start.map(|s| s + i * strides[k]),
                None => None,
            };
        }
        for (j, o) in out.iter_mut().enumerate() {
            let c = column + j;
            *o = match start {
                Some(s) if c >= lead && c < lead + width => input[s + c - lead].clone(),
                _ => zero.clone(),
            };
        }
        written += n;
    }
}

/// The view of output `index` of Unpack of a tensor of shape `dims` along
/// `axis` (the tensor with that dimension fixed at `index`), and the
/// offset in the tensor's buffer where it starts.
///
/// ```
/// use op_kernels::array::unpack_view;
/// let (view, offset) = unpack_view(&[2, 3], 1, 2);
/// let mut out = [0; 2];
/// view.copy_into(&[1, 2, 3, 4, 5, 6][offset..], 0, &mut out);
/// assert_eq!(out, [3, 6]);
/// ```
pub fn unpack_view(dims: &[usize], axis: usize, index: usize) -> (StridedView, usize) {
    let strides = row_major_strides(dims);
    let offset = index * strides[axis];
    let mut view = StridedView {
        dims: dims.to_vec(),
        strides,
    };
    view.dims.remove(axis);
    view.strides.remove(axis);
    (view, offset)
}

/// The offset of each of the tensors of shapes `shapes` in their
/// concatenation along `axis` (negative counts from the end), as
/// ConcatOffset computes them, with TensorFlow's checks and words: every
/// shape has one rank, and all sizes but the axis's match the first
/// shape's.
///
/// ```
/// use op_kernels::array::concat_offsets;
/// let offsets = concat_offsets(1, &[&[2, 2, 5], &[2, 3, 5], &[2, 4, 5]]).unwrap();
/// assert_eq!(offsets, [[0, 0, 0], [0, 2, 0], [0, 5, 0]]);
/// ```
pub fn concat_offsets(axis: i64, shapes: &[&[i64]]) -> Result<Vec<Vec<i64>>> {
    let first = shapes.first().copied().unwrap_or(&[]);
    let rank = first.len();
    let index = normalize_axis(axis, rank).ok_or_else(|| {
        Error::invalid_argument(format!("Concat dim is out of range: {axis} vs. {rank}"))
    })?;
    let mut offset: i64 = 0;
    let mut out = Vec::with_capacity(shapes.len());
    for (i, shape) in shapes.iter().enumerate() {
        if shape.len() != rank {
            return Err(Error::invalid_argument(format!(
                "input {i} should contain {rank} elements, but got {}",
                shape.len()
            )));
        }
        let mut offsets = vec![0; rank];
        for (j, (&size, &size0)) in shape.iter().zip(first).enumerate() {
            if size < 0 {
                return Err(Error::invalid_argument(format!(
                    "input {i} has shape {}, with a negative size",
                    display_values(shape)
                )));
            }
            if j == index {
                offsets[j] = offset;
                offset = offset.checked_add(size).ok_or_else(|| {
                    Error::invalid_argument(format!("the offset of input {i} overflows"))
                })?;
            } else if size != size0 {
                return Err(Error::invalid_argument(format!(
                    "All dimensions except {index} must match. Input {i} has shape {} and doesn't match input 0 with shape {}.",
                    display_values(shape),
                    display_values(first)
                )));
            }
        }
        out.push(offsets);
    }
    Ok(out)
}

/// The inverse of the permutation `perm` of `0..perm.len()`: `out[perm[i]]
/// = i`. An entry out of range or repeated is an error in TensorFlow's
/// words.
///
/// ```
/// use op_kernels::array::invert_permutation;
/// assert_eq!(invert_permutation(&[2, 0, 1]).unwrap(), [1, 2, 0]);
/// assert!(invert_permutation(&[0, 0]).is_err());
/// ```
pub fn invert_permutation(perm: &[i64]) -> Result<Vec<usize>> {
    let n = perm.len();
    let mut out = vec![usize::MAX; n];
    for (i, &p) in perm.iter().enumerate() {
        let d = usize::try_from(p)
            .ok()
            .filter(|&d| d < n)
            .ok_or_else(|| Error::invalid_argument(format!("{p} is not between 0 and {n}")))?;
        if out[d] != usize::MAX {
            return Err(Error::invalid_argument(format!(
                "{p} is duplicated in the input."
            )));
        }
        out[d] = i;
    }
    Ok(out)
}

/// The number of rows of DynamicStitch's output: the largest index plus
/// one (0 for no index). A negative index is an error in TensorFlow's
/// words.
///
/// ```
/// use op_kernels::array::stitch_rows;
/// assert_eq!(stitch_rows(&[&[0, 2], &[5, 3]]).unwrap(), 6);
/// assert!(stitch_rows(&[&[0, -1]]).is_err());
/// ```
pub fn stitch_rows(indices: &[&[i32]]) -> Result<usize> {
    let mut rows = 0;
    for values in indices {
        for (j, &index) in values.iter().enumerate() {
            let row = usize::try_from(index)
                .map_err(|_| Error::invalid_argument(format!("indices[{j}] is out of range")))?;
            rows = rows.max(row + 1);
        }
    }
    Ok(rows)
}

/// Writes the part `offset..offset + output.len()` of DynamicStitch's
/// output: row `indices[m][j]` is slice `j` of `data[m]` (`slice`
/// elements; `data[m]` holds its slices one after the other), a later
/// index winning over an earlier one for the same row (the last `m`, then
/// the last `j`, as in TensorFlow). Rows no index names are left as they
/// are: the caller passes zeros.
///
/// Every index is read for every block, so blocks may be written on
/// different threads with no table of where each row comes from.
///
/// # Panics
///
/// If an index is negative or names a slice past its data (the caller
/// checked them with [`stitch_rows`] and the shapes).
///
/// ```
/// use op_kernels::array::stitch_into;
/// let mut out = [0; 6];
/// stitch_into(&[&[1], &[0, 1]], &[&[1, 2], &[3, 4, 5, 6]], 2, 0, &mut out);
/// assert_eq!(out, [3, 4, 5, 6, 0, 0]);
/// ```
pub fn stitch_into<T: Clone>(
    indices: &[&[i32]],
    data: &[&[T]],
    slice: usize,
    offset: usize,
    output: &mut [T],
) {
    let end = offset + output.len();
    for (values, data) in indices.iter().zip(data) {
        for (j, &index) in values.iter().enumerate() {
            let start = index as usize * slice;
            let (from, to) = (start.max(offset), (start + slice).min(end));
            if from < to {
                let source = j * slice + (from - start);
                output[from - offset..to - offset]
                    .clone_from_slice(&data[source..source + (to - from)]);
            }
        }
    }
}

/// Element types ListDiff compares: each has a key that equal elements
/// share (`None` for an element equal to nothing, NaN).
pub trait SetElement: op_core::Element {
    /// What equal elements have in common.
    type Key: std::hash::Hash + Eq;
    /// The element's key; `None` if it equals nothing, itself included.
    fn key(&self) -> Option<Self::Key>;
}

macro_rules! set_element_exact {
    ($($t:ty),*) => {$(
        impl SetElement for $t {
            type Key = $t;
            fn key(&self) -> Option<$t> { Some(*self) }
        }
    )*};
}

macro_rules! set_element_float {
    ($($t:ty => $bits:ty),*) => {$(
        impl SetElement for $t {
            type Key = $bits;
            fn key(&self) -> Option<$bits> {
                // -0.0 == 0.0, and NaN equals nothing, as `==` says.
                match *self {
                    v if v.is_nan() => None,
                    v if v == 0.0 => Some(0),
                    v => Some(v.to_bits()),
                }
            }
        }
    )*};
}

set_element_exact!(i8, i16, i32, i64, u8, u16, u32, u64, bool);
set_element_float!(f32 => u32, f64 => u64);

impl SetElement for op_core::f16 {
    type Key = u32;
    fn key(&self) -> Option<u32> {
        self.to_f32().key()
    }
}

impl SetElement for op_core::bf16 {
    type Key = u32;
    fn key(&self) -> Option<u32> {
        self.to_f32().key()
    }
}

impl SetElement for Vec<u8> {
    type Key = Vec<u8>;
    fn key(&self) -> Option<Vec<u8>> {
        Some(self.clone())
    }
}

/// The elements of `x` that are not in `y`, in `x`'s order, and their
/// positions in `x` (ListDiff, NumPy's `setdiff1d` keeping duplicates).
///
/// ```
/// use op_kernels::array::list_diff;
/// let (out, idx) = list_diff(&[1, 2, 3, 4, 3], &[3, 5]);
/// assert_eq!((out, idx), (vec![1, 2, 4], vec![0, 1, 3]));
/// ```
pub fn list_diff<T: SetElement + Clone>(x: &[T], y: &[T]) -> (Vec<T>, Vec<usize>) {
    let exclude: std::collections::HashSet<T::Key> = y.iter().filter_map(T::key).collect();
    x.iter()
        .enumerate()
        .filter(|(_, v)| v.key().is_none_or(|k| !exclude.contains(&k)))
        .map(|(i, v)| (v.clone(), i))
        .unzip()
}

/// Element types with a one, for OnesLike: every type TensorFlow's
/// OnesLike allows.
pub trait OnesLikeElement: op_core::Element + Copy {
    /// The value 1 (`true` for bool).
    fn one() -> Self;
}

macro_rules! ones_like_element {
    ($($t:ty => $one:expr),* $(,)?) => {$(
        impl OnesLikeElement for $t {
            #[inline]
            fn one() -> Self { $one }
        }
    )*};
}

ones_like_element!(
    f32 => 1.0,
    f64 => 1.0,
    op_core::f16 => op_core::f16::ONE,
    op_core::bf16 => op_core::bf16::ONE,
    i8 => 1,
    i16 => 1,
    i32 => 1,
    i64 => 1,
    u8 => 1,
    u16 => 1,
    u32 => 1,
    u64 => 1,
    op_core::Complex64 => op_core::Complex64::new(1.0, 0.0),
    op_core::Complex128 => op_core::Complex128::new(1.0, 0.0),
    bool => true,
);

/// `[2,3]`: dims as TensorFlow writes shapes in messages.
pub(crate) fn display_dims(dims: &[usize]) -> String {
    let items: Vec<String> = dims.iter().map(usize::to_string).collect();
    format!("[{}]", items.join(","))
}

/// `[1,-1,3]`: index values as TensorFlow writes them in messages.
pub(crate) fn display_values(values: &[i64]) -> String {
    let items: Vec<String> = values.iter().map(i64::to_string).collect();
    format!("[{}]", items.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The elements of `view` one by one, from their multi-indices.
    fn naive_copy(view: &StridedView, input: &[u32]) -> Vec<u32> {
        (0..view.len())
            .map(|i| {
                let (mut rest, mut at) = (i, 0);
                for k in (0..view.dims.len()).rev() {
                    at += rest % view.dims[k] * view.strides[k];
                    rest /= view.dims[k];
                }
                input[at]
            })
            .collect()
    }

    #[test]
    fn strided_copy_of_any_block_matches_the_elements_one_by_one() {
        let input: Vec<u32> = (0..2400).collect();
        let views = [
            transpose_view(&[3, 4, 5], &[2, 0, 1]),
            transpose_view(&[3, 4, 5], &[1, 2, 0]).simplified(),
            broadcast_view(&[4, 1], &[3, 4, 5]).unwrap(),
            tile_view(&[3, 4, 5], &[2, 1, 2]),
            // Rows in tiles: more rows and columns than one tile holds.
            transpose_view(&[40, 60], &[1, 0]),
            transpose_view(&[2, 20, 3, 20], &[3, 1, 0, 2]),
            transpose_view(&[2400], &[0]),
        ];
        for view in &views {
            let mut whole = vec![0; view.len()];
            view.copy_into(&input, 0, &mut whole);
            assert_eq!(whole, naive_copy(view, &input), "{view:?}");
            for start in (0..whole.len()).step_by(7) {
                for len in [1, 2, 13, 61, 700] {
                    let end = (start + len).min(whole.len());
                    let mut block = vec![0; end - start];
                    view.copy_into(&input, start, &mut block);
                    assert_eq!(block, whole[start..end], "{view:?} at {start}");
                }
            }
        }
    }

    #[test]
    fn simplified_views_read_the_same_elements() {
        let input: Vec<u32> = (0..24).collect();
        for view in [
            transpose_view(&[2, 3, 4], &[0, 2, 1]),
            transpose_view(&[2, 1, 3, 4], &[1, 0, 2, 3]),
            broadcast_view(&[1, 3, 1], &[2, 2, 3, 4]).unwrap(),
            tile_view(&[1, 6, 4], &[2, 1, 1]),
        ] {
            let (mut a, mut b) = (vec![0; view.len()], vec![0; view.len()]);
            view.copy_into(&input, 0, &mut a);
            view.simplified().copy_into(&input, 0, &mut b);
            assert_eq!(a, b, "{view:?} -> {:?}", view.simplified());
        }
    }

    #[test]
    fn concat_blocks_start_anywhere() {
        let (a, b, c) = ([1, 2, 3, 4], [5, 6], [7, 8, 9, 10, 11, 12]);
        let mut whole = [0; 12];
        concat_rows_into(&[&a[..], &b, &c], &[2, 1, 3], 0, &mut whole);
        assert_eq!(whole, [1, 2, 5, 7, 8, 9, 3, 4, 6, 10, 11, 12]);
        for start in 0..12 {
            let mut block = vec![0; 12 - start];
            concat_rows_into(&[&a[..], &b, &c], &[2, 1, 3], start, &mut block);
            assert_eq!(block, whole[start..]);
        }
    }

    #[test]
    fn pad_blocks_start_anywhere() {
        let input: Vec<u32> = (1..=6).collect();
        let (before, shape) = pad_dims(&[2, 3], &[1, 0, 2, 1]).unwrap();
        let mut whole = vec![9; shape.num_elements()];
        pad_into(&input, &[2, 3], &before, shape.dims(), &0, 0, &mut whole);
        assert_eq!(
            whole,
            [0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 0, 0, 0, 4, 5, 6, 0]
        );
        for start in 0..whole.len() {
            for len in [1, 2, 5, 13] {
                let end = (start + len).min(whole.len());
                let mut block = vec![9; end - start];
                pad_into(
                    &input,
                    &[2, 3],
                    &before,
                    shape.dims(),
                    &0,
                    start,
                    &mut block,
                );
                assert_eq!(block, whole[start..end], "at {start}");
            }
        }
    }

    #[test]
    fn stitch_blocks_start_anywhere() {
        let indices: [&[i32]; 2] = [&[2, 0], &[3, 2]];
        let data: [&[u32]; 2] = [&[1, 2, 3, 4], &[5, 6, 7, 8]];
        let rows = stitch_rows(&indices).unwrap();
        let mut whole = vec![0; rows * 2];
        stitch_into(&indices, &data, 2, 0, &mut whole);
        assert_eq!(whole, [3, 4, 0, 0, 7, 8, 5, 6]);
        for start in 0..8 {
            for len in 1..=8 - start {
                let mut block = vec![0; len];
                stitch_into(&indices, &data, 2, start, &mut block);
                assert_eq!(block, whole[start..start + len]);
            }
        }
    }

    #[test]
    fn reshape_dims_follow_tensorflow() {
        assert_eq!(reshape_dims(&[2, 3], &[-1]).unwrap().dims(), [6]);
        assert_eq!(reshape_dims(&[0, 3], &[0, -1]).unwrap().dims(), [0, 3]);
        assert_eq!(reshape_dims(&[0], &[-1]).unwrap().dims(), [0]);
        assert_eq!(reshape_dims(&[], &[]).unwrap().dims(), [] as [usize; 0]);
        assert_eq!(
            reshape_dims(&[2, 3], &[-1, -1]).unwrap_err().message(),
            "Only one input size may be -1, not both 0 and 1"
        );
        assert_eq!(
            reshape_dims(&[2, 3], &[4, -1]).unwrap_err().message(),
            "Input to reshape is a tensor with 6 values, but the requested shape requires a multiple of 4"
        );
        assert_eq!(
            reshape_dims(&[2, 3], &[-1, 0]).unwrap_err().message(),
            "Input to reshape is a tensor with 6 values, but the requested shape has 0"
        );
        assert_eq!(
            reshape_dims(&[2, 3], &[-2, 3]).unwrap_err().message(),
            "Size 0 must be non-negative, not -2"
        );
        assert!(reshape_dims(&[1], &[i64::MAX, i64::MAX]).is_err());
        assert!(reshape_dims(&[1], &[1 << 40, 1 << 40, 0]).is_err());
    }

    #[test]
    fn permutations_are_checked() {
        assert_eq!(check_permutation(&[1, 0], 2).unwrap(), [1, 0]);
        assert!(check_permutation(&[1], 2).is_err());
        assert!(check_permutation(&[0, 0], 2).is_err());
        assert!(check_permutation(&[-1, 0], 2).is_err());
        assert!(check_permutation(&[2, 0], 2).is_err());
    }

    #[test]
    fn normalize_axis_never_overflows() {
        assert_eq!(normalize_axis(i64::MIN, 3), None);
        assert_eq!(normalize_axis(i64::MAX, 3), None);
        assert_eq!(normalize_axis(0, 0), None);
    }
}
