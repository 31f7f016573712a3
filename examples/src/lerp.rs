//! [`Lerp`]: linear interpolation between two tensors, with a gradient.
//!
//! Its first input is named `from`, as a user would name it, which is a
//! Python keyword: TensorFlow would write a wrapper for it that does not
//! compile, so the TensorFlow plugin holds it back at load and the Python
//! package wraps it itself (`lerp(from_=a, to=b, weight=0.25)`), gradient
//! included.
//!
//! ```standalone_crate
//! use op_core::Tensor;
//! use examples::Lerp;
//!
//! examples::link();
//! let from = Tensor::from_vec([2], vec![0.0f32, 10.0])?;
//! let to = Tensor::from_vec([2], vec![4.0f32, 20.0])?;
//! let y = Lerp::call(&from, &to).weight(0.25).run()?;
//! assert_eq!(y.as_slice::<f32>()?, [1.0, 12.5]);
//! # Ok::<(), op_core::Error>(())
//! ```

use op_core::gradient::{Gradient, Value};
use op_core::num_traits::Float;
use op_core::{DType, Element, KernelContext, Result, Tensor, kernel, register_op};
use op_kernels::math::Mul;

/// The point `weight` of the way from `from` to `to`, elementwise:
/// `from + weight * (to - from)`.
///
/// `weight` 0 gives `from`, 1 gives `to`; other values extrapolate.
///
/// from: where the line starts.
/// to: where it ends, in `from`'s shape.
/// y: the interpolated tensor, in `from`'s shape.
#[register_op(
    name = "Examples>Lerp",
    attrs("T: {float, double} = DT_FLOAT"),
    inputs("from: T", "to: T"),
    outputs("y: T"),
    shape = "unchanged"
)]
pub struct Lerp {
    /// How far along the line: 0 at `from`, 1 at `to`.
    #[attr(default = 0.5)]
    pub weight: f32,
}

#[kernel(op = Lerp, types(f32, f64))]
fn lerp<T: Element + Float>(ctx: &mut KernelContext<'_>, attrs: &Lerp) -> Result<()> {
    let weight = T::from(attrs.weight).unwrap_or_else(T::nan);
    // A subtraction, a multiply and an add per element.
    ctx.binary([0, 1], 0, 3, move |a: &T, b: &T| *a + weight * (*b - *a))
}

/// d lerp = (1 - weight) d from + weight d to.
#[op_core::gradient(op = Lerp)]
fn lerp_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    let weight: f32 = g.attr("weight")?;
    let grad = g.grad(0)?;
    let scale = |value: f32| -> Result<V> {
        let c = match g.dtype_of(&grad)? {
            DType::F64 => Tensor::scalar(f64::from(value)),
            _ => Tensor::scalar(value),
        };
        Mul::call_with(grad.clone(), g.constant(c)?).run_on(g)
    };
    Ok([Some(scale(1.0 - weight)?), Some(scale(weight)?)])
}
