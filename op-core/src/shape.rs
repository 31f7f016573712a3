//! [`TensorShape`]: the fully known shape of a tensor.

use std::fmt;

use crate::error::{Error, Result};

/// Dimensions held inline, without a heap allocation, up to this rank
/// (images in NHWC or NCHW); higher ranks go to the heap.
const INLINE_RANK: usize = 4;

/// Dimension sizes, inline up to [`INLINE_RANK`]. Cloning an inline one is
/// a copy of 40 bytes: this is on every kernel call's path.
#[derive(Clone)]
enum Dims {
    Inline { len: u8, dims: [usize; INLINE_RANK] },
    Heap(Box<[usize]>),
}

impl Dims {
    #[inline]
    fn from_slice(dims: &[usize]) -> Dims {
        if dims.len() > INLINE_RANK {
            return Dims::Heap(dims.into());
        }
        let mut inline = [0; INLINE_RANK];
        inline[..dims.len()].copy_from_slice(dims);
        Dims::Inline {
            len: dims.len() as u8,
            dims: inline,
        }
    }

    #[inline]
    fn as_slice(&self) -> &[usize] {
        match self {
            Dims::Inline { len, dims } => &dims[..usize::from(*len)],
            Dims::Heap(dims) => dims,
        }
    }

    /// The dims after `edit` changed them (rare: adding or removing a dim).
    fn edited(&self, edit: impl FnOnce(&mut Vec<usize>)) -> Dims {
        let mut dims = self.as_slice().to_vec();
        edit(&mut dims);
        Dims::from_slice(&dims)
    }
}

impl Default for Dims {
    fn default() -> Dims {
        Dims::from_slice(&[])
    }
}

/// The fully known shape of a tensor: its dimension sizes, outermost first.
///
/// A shape always has a representable element count: the product of its
/// nonzero dimensions is at most `isize::MAX`, the limit of both ndarray and
/// TensorFlow (whose sizes are `int64`). So [`num_elements`](Self::num_elements)
/// cannot overflow. The fallible constructors ([`try_new`](Self::try_new),
/// [`try_add_dim`](Self::try_add_dim)) return an `InvalidArgument` error for
/// dimensions that break this; the infallible ones ([`new`](Self::new), the
/// `From` impls, [`add_dim`](Self::add_dim)) panic, like TensorFlow's
/// `TensorShape` constructor. Use the fallible ones for dimensions read from
/// input data.
///
/// The dimensions are held inline up to rank 4, so making, cloning and
/// dropping the shapes of most tensors allocates nothing.
///
/// `Display` writes the shape as TensorFlow does: `[2,3]`, and `[]` for a scalar.
///
/// ```
/// use op_core::TensorShape;
/// let shape = TensorShape::from([2, 3]);
/// assert_eq!(shape.rank(), 2);
/// assert_eq!(shape.num_elements(), 6);
/// assert_eq!(shape.to_string(), "[2,3]");
/// assert_eq!(TensorShape::scalar().to_string(), "[]");
/// assert!(TensorShape::try_new([usize::MAX, 2]).is_err());
/// ```
#[derive(Clone, Default)]
pub struct TensorShape {
    dims: Dims,
}

impl PartialEq for TensorShape {
    fn eq(&self, other: &TensorShape) -> bool {
        self.dims() == other.dims()
    }
}

impl Eq for TensorShape {}

impl std::hash::Hash for TensorShape {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.dims().hash(state);
    }
}

impl fmt::Debug for TensorShape {
    /// `TensorShape([2, 3])`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("TensorShape").field(&self.dims()).finish()
    }
}

/// The element count of `dims`, if the product of the nonzero dims is at most
/// `isize::MAX`.
fn checked_num_elements(dims: &[usize]) -> Option<usize> {
    let nonzero = dims
        .iter()
        .filter(|&&d| d != 0)
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .filter(|&n| n <= isize::MAX as usize)?;
    Some(if dims.contains(&0) { 0 } else { nonzero })
}

fn too_many_elements(dims: &[usize]) -> Error {
    Error::invalid_argument(format!(
        "shape {} has too many elements (more than {})",
        TensorShape::display_dims(dims),
        isize::MAX
    ))
}

impl TensorShape {
    /// Whether the dims are held inline: a bitwise copy of the shape is
    /// then its clone (see `Tensor`'s `Clone`).
    #[inline]
    pub(crate) fn is_inline(&self) -> bool {
        matches!(self.dims, Dims::Inline { .. })
    }

    /// The shape with dimensions `dims`.
    ///
    /// # Panics
    ///
    /// If the element count is too large (see the type's docs); use
    /// [`try_new`](Self::try_new) to get an error instead.
    pub fn new(dims: impl AsRef<[usize]>) -> TensorShape {
        match TensorShape::try_new(dims) {
            Ok(shape) => shape,
            Err(e) => panic!("{}", e.message()),
        }
    }

    /// The shape with dimensions `dims`, or an `InvalidArgument` error if its
    /// element count is too large (see the type's docs).
    ///
    /// This is the one counting rule of every tensor constructor.
    pub fn try_new(dims: impl AsRef<[usize]>) -> Result<TensorShape> {
        let dims = dims.as_ref();
        match checked_num_elements(dims) {
            Some(_) => Ok(TensorShape {
                dims: Dims::from_slice(dims),
            }),
            None => Err(too_many_elements(dims)),
        }
    }

    /// The shape of a scalar: rank 0, one element.
    pub fn scalar() -> TensorShape {
        TensorShape::default()
    }

    /// The shape of a vector of `n` elements.
    pub fn vector(n: usize) -> TensorShape {
        TensorShape {
            dims: Dims::from_slice(&[n]),
        }
    }

    /// The shape of a matrix with `rows` rows and `cols` columns.
    ///
    /// # Panics
    ///
    /// If `rows * cols` is too large.
    pub fn matrix(rows: usize, cols: usize) -> TensorShape {
        TensorShape::new([rows, cols])
    }

    /// The dimension sizes, outermost first.
    #[inline]
    pub fn dims(&self) -> &[usize] {
        self.dims.as_slice()
    }

    /// The number of dimensions.
    #[inline]
    pub fn rank(&self) -> usize {
        self.dims().len()
    }

    /// The size of dimension `i`, or `None` if `i >= rank`.
    pub fn dim_size(&self, i: usize) -> Option<usize> {
        self.dims().get(i).copied()
    }

    /// The number of elements: the product of the dimensions (1 for a scalar).
    #[inline]
    pub fn num_elements(&self) -> usize {
        // Cannot overflow: the nonzero dims' product fits (the type's
        // invariant), so every partial product does too.
        self.dims().iter().product()
    }

    /// Whether this is the shape of a scalar (rank 0).
    pub fn is_scalar(&self) -> bool {
        self.rank() == 0
    }

    /// Whether this is the shape of a vector (rank 1).
    pub fn is_vector(&self) -> bool {
        self.rank() == 1
    }

    /// Whether this is the shape of a matrix (rank 2).
    pub fn is_matrix(&self) -> bool {
        self.rank() == 2
    }

    /// Whether `other` has the same dimensions (TensorFlow's `IsSameSize`).
    pub fn is_same_size(&self, other: &TensorShape) -> bool {
        self.dims() == other.dims()
    }

    /// Appends an innermost dimension of size `size`.
    ///
    /// # Panics
    ///
    /// If the element count becomes too large; use
    /// [`try_add_dim`](Self::try_add_dim) to get an error instead.
    pub fn add_dim(&mut self, size: usize) {
        if let Err(e) = self.try_add_dim(size) {
            panic!("{}", e.message());
        }
    }

    /// Appends an innermost dimension of size `size`, or returns an
    /// `InvalidArgument` error (leaving the shape unchanged) if the element
    /// count would become too large.
    pub fn try_add_dim(&mut self, size: usize) -> Result<()> {
        let dims = self.dims.edited(|dims| dims.push(size));
        if checked_num_elements(dims.as_slice()).is_none() {
            return Err(too_many_elements(dims.as_slice()));
        }
        self.dims = dims;
        Ok(())
    }

    /// Removes dimension `i`.
    ///
    /// # Panics
    ///
    /// If `i >= rank`.
    pub fn remove_dim(&mut self, i: usize) {
        assert!(
            i < self.rank(),
            "cannot remove dimension {i} of shape {self} (rank {})",
            self.rank()
        );
        self.dims = self.dims.edited(|dims| {
            dims.remove(i);
        });
    }

    /// The shape that `self` and `other` broadcast to, NumPy style (as
    /// TensorFlow's `BCast`): dimensions align from the right, a missing
    /// dimension counts as 1, and a 1 stretches to the other size. `None`
    /// when two aligned sizes differ and neither is 1.
    ///
    /// ```
    /// use op_core::TensorShape;
    /// let a = TensorShape::from([2, 1, 3]);
    /// assert_eq!(a.broadcast(&TensorShape::from([4, 1])), Some(TensorShape::from([2, 4, 3])));
    /// assert_eq!(a.broadcast(&TensorShape::scalar()), Some(a.clone()));
    /// assert_eq!(a.broadcast(&TensorShape::from([2])), None);
    /// ```
    pub fn broadcast(&self, other: &TensorShape) -> Option<TensorShape> {
        let (a, b) = (self.dims(), other.dims());
        let rank = a.len().max(b.len());
        let dim =
            |dims: &[usize], i: usize| (i + dims.len()).checked_sub(rank).map_or(1, |j| dims[j]);
        let mut out = TensorShape::scalar();
        for i in 0..rank {
            let size = match (dim(a, i), dim(b, i)) {
                (x, y) if x == y => x,
                (1, y) => y,
                (x, 1) => x,
                _ => return None,
            };
            // Both inputs are valid shapes, and each output size is one of
            // theirs at its position, so the product is bounded by theirs.
            out.add_dim(size);
        }
        Some(out)
    }

    /// Formats `dims` as TensorFlow does (`[2,3]`), without requiring a
    /// valid shape; past [`DIMS_LIMIT`](crate::error::DIMS_LIMIT)
    /// dimensions, the first ones and the rank (`[1,1,...,1,... (rank
    /// 100000)]`), so that a message about a caller's shape stays short.
    pub(crate) fn display_dims(dims: &[usize]) -> impl fmt::Display + '_ {
        struct Dims<'a>(&'a [usize]);
        impl fmt::Display for Dims<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("[")?;
                for (i, d) in self.0.iter().take(crate::error::DIMS_LIMIT).enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{d}")?;
                }
                if self.0.len() > crate::error::DIMS_LIMIT {
                    write!(f, ",... (rank {})", self.0.len())?;
                }
                f.write_str("]")
            }
        }
        Dims(dims)
    }
}

impl fmt::Display for TensorShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        TensorShape::display_dims(self.dims()).fmt(f)
    }
}

/// # Panics
///
/// If the element count is too large (see [`TensorShape`]).
impl From<Vec<usize>> for TensorShape {
    fn from(dims: Vec<usize>) -> TensorShape {
        TensorShape::new(dims)
    }
}

/// # Panics
///
/// If the element count is too large (see [`TensorShape`]).
impl From<&[usize]> for TensorShape {
    fn from(dims: &[usize]) -> TensorShape {
        TensorShape::new(dims)
    }
}

/// # Panics
///
/// If the element count is too large (see [`TensorShape`]).
impl<const N: usize> From<[usize; N]> for TensorShape {
    fn from(dims: [usize; N]) -> TensorShape {
        TensorShape::new(dims)
    }
}

impl From<&TensorShape> for TensorShape {
    fn from(shape: &TensorShape) -> TensorShape {
        shape.clone()
    }
}

impl From<TensorShape> for Vec<usize> {
    fn from(shape: TensorShape) -> Vec<usize> {
        shape.dims().to_vec()
    }
}

impl AsRef<[usize]> for TensorShape {
    fn as_ref(&self) -> &[usize] {
        self.dims()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_count_limit() {
        let max = isize::MAX as usize;
        assert_eq!(TensorShape::new([max]).num_elements(), max);
        assert_eq!(TensorShape::new([max, 0, 1]).num_elements(), 0);
        assert!(TensorShape::try_new([max, 2]).is_err());
        assert!(TensorShape::try_new([max, 0, 2]).is_err());
        assert!(TensorShape::try_new([max + 1]).is_err());
        // Removing a zero dim never breaks the invariant.
        let mut shape = TensorShape::new([max, 0]);
        shape.remove_dim(1);
        assert_eq!(shape.num_elements(), max);
    }
}
