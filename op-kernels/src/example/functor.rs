//! Seed 003's functor pattern: one kernel body over a device
//! ([`example_op`], TensorFlow's `ExampleOp<Device, T>::Compute`) and the
//! arithmetic per device ([`ExampleFunctor`], TensorFlow's
//! `ExampleFunctor<Device, T>`), implemented for the CPU in `cpu.rs` and
//! for a GPU in `gpu.rs` (TensorFlow's `.cu.cc` file).

use op_core::{Element, Result};

use crate::device::Device;

/// How device `Self` doubles the elements of a `T` tensor (seed 003's
/// `ExampleFunctor<Device, T>::operator()`): `output[i] = 2 * input[i]`
/// over what [`Device::unary_output`] made.
pub trait ExampleFunctor<T: Element>: Device {
    /// Doubles every input element into the output (possibly the same
    /// buffer).
    fn compute(work: Self::Unary<'_, T>) -> Result<()>;
}

/// The kernel body shared by every device (seed 003's `ExampleOp<Device,
/// T>::Compute`): make the output (the input's buffer when the caller
/// handed it over, else a new one), then let the device's functor double
/// into it. The seed also checks that the element count fits an `int`;
/// our functors count in 64 bits, so every tensor does.
pub fn example_op<D: ExampleFunctor<T>, T: Element>(ctx: &mut D::Context<'_, '_>) -> Result<()> {
    let work = D::unary_output::<T>(ctx, 0, 0)?;
    D::compute(work).map_err(|e| D::node_error(ctx, e))
}
