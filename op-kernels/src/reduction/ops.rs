//! The declarations of `Sum`, `Mean`, `Max` and `Prod` (TensorFlow's
//! `math_ops.cc` signatures) and their shape function, TensorFlow's
//! `ReductionShape`; and of the scans `Cumsum` and `Cumprod`.

use op_core::shape_inference::InferenceContext;
use op_core::{DType, Result, Tensor, register_op};

use super::axes::normalize_axis;

/// The output shape of a reduction (TensorFlow's `ReductionShape`).
///
/// `reduction_indices` must be a scalar or a vector. When its value is
/// known (a constant, `c.input_tensor(1)`) and so is the input's rank, the
/// output is the input's shape without the reduced dimensions (with
/// `keep_dims`, with 1 in their place); axes may be negative and repeat
/// (as in TensorFlow's shape function; the kernels reject repeats), and an
/// axis out of range is an error. Otherwise the output has the input's rank
/// with unknown dimensions when `keep_dims` and the rank are known, and an
/// unknown shape when not.
pub fn reduction_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let input = c.input(0)?;
    let axes_shape = c.input(1)?;
    c.with_rank_at_most(axes_shape, 1)?;
    let keep_dims: bool = c.get_attr("keep_dims")?;
    let (Some(axes), Some(rank)) = (c.input_tensor(1), c.rank(input)) else {
        let out = match (keep_dims, c.rank(input)) {
            (true, Some(rank)) => c.unknown_shape_of_rank(rank),
            _ => c.unknown_shape(),
        };
        return c.set_output(0, out);
    };
    let mut reduced = vec![false; rank];
    for axis in axis_values(axes).map_err(|e| c.error(e.message()))? {
        let index = normalize_axis(axis, rank).map_err(|e| {
            c.error(format_args!(
                "input 1 ('reduction_indices'): {}, and input 0 ('input') has shape {}",
                e.message(),
                c.shape_string(input)
            ))
        })?;
        reduced[index] = true;
    }
    let mut dims = Vec::with_capacity(rank);
    for (i, reduced) in reduced.into_iter().enumerate() {
        if !reduced {
            dims.push(c.dim(input, i as i64)?);
        } else if keep_dims {
            dims.push(c.make_dim(Some(1)));
        }
    }
    let out = c.make_shape(dims);
    c.set_output(0, out)
}

/// The values of an axes tensor (`int32` or `int64`, any shape), as `i64`.
///
/// Returns an `InvalidArgument` error for another dtype, and the tensor's
/// error if its elements are not in host memory.
pub fn axis_values(axes: &Tensor) -> Result<Vec<i64>> {
    fn widen<T: Copy + Into<i64> + op_core::Element>(axes: &Tensor) -> Result<Vec<i64>> {
        Ok(axes.as_slice::<T>()?.iter().map(|&a| a.into()).collect())
    }
    match axes.dtype() {
        DType::I32 => widen::<i32>(axes),
        DType::I64 => widen::<i64>(axes),
        other => Err(op_core::Error::invalid_argument(format!(
            "input 1 ('reduction_indices') must be int32 or int64, not {other}"
        ))),
    }
}

/// Declares a reduction op: TensorFlow's signature, which all four share
/// but for the types `T` allows.
macro_rules! reduction_op {
    ($(#[$doc:meta])* $name:ident: $($types:ident),+) => {
        $(#[$doc])*
        ///
        /// input: the tensor to reduce.
        /// reduction_indices: the dimensions to reduce, a scalar or a vector
        ///   (negative ones count from the end; none reduces nothing). Must be
        ///   in `[-rank(input), rank(input))`.
        /// output: the reduced tensor.
        #[register_op(
            inputs("input: T", "reduction_indices: Tidx"),
            outputs("output: T"),
            shape_fn = reduction_shape
        )]
        pub struct $name {
            /// If true, the reduced dimensions are kept, with length 1.
            #[attr(default = false)]
            pub keep_dims: bool,
            /// The element type.
            #[attr(name = "T", one_of($($types),+))]
            pub t: DType,
            /// The type of `reduction_indices`.
            #[attr(name = "Tidx", one_of(int32, int64), default = int32)]
            pub tidx: DType,
        }
    };
}

reduction_op! {
    /// Computes the sum of elements across dimensions of a tensor.
    ///
    /// Reduces `input` along the dimensions given in `reduction_indices`.
    /// Unless `keep_dims` is true, the rank of the tensor is reduced by 1
    /// for each entry in `reduction_indices`. The sum of no elements is 0.
    Sum: numbertype
}

reduction_op! {
    /// Computes the mean of elements across dimensions of a tensor.
    ///
    /// Reduces `input` along the dimensions given in `reduction_indices`.
    /// The mean of no elements is NaN for floats and 0 for integers;
    /// integer means truncate toward zero.
    Mean: numbertype
}

reduction_op! {
    /// Computes the maximum of elements across dimensions of a tensor.
    ///
    /// Reduces `input` along the dimensions given in `reduction_indices`.
    /// The maximum of no elements is the type's lowest value (`-inf` for
    /// floats); a NaN element makes the maximum NaN.
    Max: realnumbertype, quantizedtype
}

reduction_op! {
    /// Computes the product of elements across dimensions of a tensor.
    ///
    /// Reduces `input` along the dimensions given in `reduction_indices`.
    /// The product of no elements is 1; integer products wrap on overflow.
    Prod: numbertype
}

/// Declares a scan op: TensorFlow's signature, which `Cumsum` and
/// `Cumprod` share.
macro_rules! scan_op {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        ///
        /// x: the tensor.
        /// axis: the axis to scan along, a scalar in `[-rank(x), rank(x))`.
        /// out: the running results, of `x`'s shape.
        #[register_op(
            inputs("x: T", "axis: Tidx"),
            outputs("out: T"),
            shape = "unchanged"
        )]
        pub struct $name {
            /// If true, each result leaves out its own element.
            #[attr(default = false)]
            pub exclusive: bool,
            /// If true, the scan runs from the last element to the first.
            #[attr(default = false)]
            pub reverse: bool,
            /// The element type.
            #[attr(name = "T", one_of(numbertype))]
            pub t: DType,
            /// The type of `axis`.
            #[attr(name = "Tidx", one_of(int32, int64), default = int32)]
            pub tidx: DType,
        }
    };
}

scan_op! {
    /// Computes the cumulative sum of a tensor along an axis.
    ///
    /// `[a, b, c]` gives `[a, a + b, a + b + c]`; with `exclusive`,
    /// `[0, a, a + b]`; with `reverse`, `[a + b + c, b + c, c]`; with both,
    /// `[b + c, c, 0]`.
    Cumsum
}

scan_op! {
    /// Computes the cumulative product of a tensor along an axis.
    ///
    /// `[a, b, c]` gives `[a, a * b, a * b * c]`; with `exclusive`,
    /// `[1, a, a * b]`; with `reverse`, `[a * b * c, b * c, c]`; with both,
    /// `[b * c, c, 1]`.
    Cumprod
}
