//! A downstream crate, written the way a new user of the framework would
//! write one: it depends on `op-core` only, declares its own ops with the
//! macros, implements their kernels, and exposes [`link`] so that programs
//! using it are sure to see its registrations.
//!
//! - [`ClipByValue`]: an op struct with typed attrs, a generic kernel
//!   function, and a construction-time check in an `impl` kernel.
//! - [`l2_norm`]: an op declared by a function's signature with `#[op]`.
//! - [`Lerp`]: an op with a `#[gradient]` and an input named `from`, a
//!   Python keyword (see [`lerp`] for what the TensorFlow plugin does).
//! - [`sin`]: seed 002's model, `y = sin(x + offset)`, trained with Adam
//!   eagerly (a gradient tape) and as a graph (symbolic gradients).
//! - [`sin_lite`]: the trained model exported to TensorFlow Lite with `Sin`
//!   kept custom, and the seed's `SinPrepare`/`SinEval` that run it in the
//!   lite runtime.
//!
//! ```standalone_crate
//! use op_core::Tensor;
//! use examples::ClipByValue;
//!
//! examples::link();
//! let t = Tensor::from_vec([4], vec![-2.0f32, 0.25, 0.5, 3.0])?;
//! let clipped = ClipByValue::call(&t).clip_max(0.5).run()?;
//! assert_eq!(clipped.as_slice::<f32>()?, [0.0, 0.25, 0.5, 0.5]);
//! # Ok::<(), op_core::Error>(())
//! ```

pub mod lerp;
pub mod sin;
pub mod sin_lite;

pub use lerp::Lerp;

use op_core::ndarray::ArrayViewD;
use op_core::num_traits::Float;
use op_core::{
    Code, Element, KernelConstruction, KernelContext, Result, Tensor, kernel, op, op_requires,
    register_op,
};

/// Clamps every element of a tensor to `[clip_min, clip_max]`.
///
/// Elements below `clip_min` become `clip_min`, elements above `clip_max`
/// become `clip_max`.
///
/// t: the tensor to clip.
/// clipped: `t` clamped, in `t`'s shape and type.
#[register_op(
    name = "Examples>ClipByValue",
    attrs("T: {float, double, int32, int64} = DT_FLOAT"),
    inputs("t: T"),
    outputs("clipped: T"),
    shape = "unchanged"
)]
pub struct ClipByValue {
    /// The smallest value kept.
    #[attr(default = 0.0)]
    pub clip_min: f32,
    /// The largest value kept.
    #[attr(default = 1.0)]
    pub clip_max: f32,
}

/// Element types whose values can be compared with an `f32` bound.
pub trait Clippable: Element + Copy + PartialOrd {
    /// The bound as this type.
    fn from_bound(bound: f32) -> Self;
}

macro_rules! clippable {
    ($($t:ty),*) => {$(
        impl Clippable for $t {
            fn from_bound(bound: f32) -> Self { bound as $t }
        }
    )*};
}
clippable!(f32, f64, i32, i64);

/// The kernel: checks the bounds once, when it is created for a node, then
/// clamps on every call, writing in place when the input can be reused.
pub struct ClipKernel<T> {
    low: T,
    high: T,
}

#[kernel(op = ClipByValue, types(f32, f64, i32, i64))]
impl<T: Clippable> ClipKernel<T> {
    fn new(ctx: &KernelConstruction<'_>) -> Result<Self> {
        let ClipByValue { clip_min, clip_max } = ctx.attrs()?;
        op_requires!(
            clip_min <= clip_max,
            Code::InvalidArgument,
            "clip_min ({clip_min}) must not exceed clip_max ({clip_max})"
        );
        Ok(ClipKernel {
            low: T::from_bound(clip_min),
            high: T::from_bound(clip_max),
        })
    }

    fn compute(&self, ctx: &mut KernelContext<'_>) -> Result<()> {
        let (low, high) = (self.low, self.high);
        // One comparison or two per element: about a cycle.
        ctx.unary(0, 0, 1, move |v: &T| {
            if *v < low {
                low
            } else if *v > high {
                high
            } else {
                *v
            }
        })
    }
}

/// The Euclidean norm of a tensor: the square root of the sum of squares
/// of its elements.
///
/// x: a float or double tensor of any shape.
/// norm: a scalar.
#[op(
    name = "Examples>L2Norm",
    types(f32, f64),
    outputs("norm"),
    shape = "scalar"
)]
pub fn l2_norm<T: Element + Float>(x: ArrayViewD<'_, T>) -> T {
    x.iter().fold(T::zero(), |sum, v| sum + *v * *v).sqrt()
}

/// Makes sure this crate's ops and kernels are linked into the program;
/// call it once from any program that uses them but names nothing else of
/// this crate.
pub fn link() {}

/// The tensor `[-2, 0.25, 0.5, 3]`, used by the demo and tests.
pub fn sample() -> Result<Tensor> {
    Tensor::from_vec([4], vec![-2.0f32, 0.25, 0.5, 3.0])
}
