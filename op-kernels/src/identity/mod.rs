//! The identity ops: `Identity`, `IdentityN`, `NoOp` and `StopGradient`,
//! with TensorFlow's names, signatures and shape functions.
//!
//! | op | what it does | shape function |
//! | --- | --- | --- |
//! | [`Identity`] | its input, the same buffer | the library's `unchanged` |
//! | [`IdentityN`] | each of its inputs, the same buffers | the library's `pass_through` |
//! | [`NoOp`] | nothing (orders nodes through control inputs) | [`no_outputs`] |
//! | [`StopGradient`] | its input, the same buffer (a gradient barrier) | the library's `unchanged` |
//!
//! The kernels copy nothing: an output shares its input's buffer. When the
//! caller handed the input over (a graph passes a value by move to its last
//! consumer), the output is the buffer's only holder once the call returns,
//! so the next kernel of a chain can still work in place.
//!
//! ```
//! use op_core::Tensor;
//! use op_kernels::identity::Identity;
//!
//! let x = Tensor::from_vec([3], vec![1.0f32, 2.0, 3.0])?;
//! let at = x.as_slice::<f32>()?.as_ptr();
//! let y = Identity::call(x).run()?;
//! assert_eq!(y.as_slice::<f32>()?.as_ptr(), at);
//! # Ok::<(), op_core::Error>(())
//! ```
//!
//! The files:
//!
//! - `ops.rs`: the four ops and [`no_outputs`].
//! - `cpu.rs`: their CPU kernels, one each, for every dtype.
//! - `grad.rs`: their gradients: `Identity` and `IdentityN` pass theirs
//!   through; `StopGradient` is not differentiable.

mod cpu;
mod grad;
mod ops;

pub(crate) use cpu::forward;
pub use ops::*;
