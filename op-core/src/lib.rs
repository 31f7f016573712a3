//! The runtime of the op framework.
//!
//! - Declaring ops and kernels: the macros [`macro@register_op`], [`macro@kernel`] and
//!   [`macro@op`] (from `op-macros`, re-exported here); [`OpDef`] and
//!   [`OpDefBuilder`] (from `op-spec`) for definitions in TensorFlow's spec
//!   language.
//! - [`registry`]: every op and kernel linked into the program, collected
//!   with `inventory`, checked for conflicts, listed on demand; and why a
//!   kernel crate must be named to be linked.
//! - [`runtime`]: [`Runtime`] selects and caches kernels, [`OpCall`] runs an
//!   op by name, [`PreparedOp`] runs a cached kernel; panics in kernels,
//!   their constructors and shape functions become errors, reported once,
//!   in the error, with the panic's location (not printed to stderr).
//! - [`mod@kernel`] and [`context`]: [`OpKernel`], [`KernelConstruction`] (what
//!   a kernel sees when created) and [`KernelContext`] (inputs, outputs,
//!   forwarding, while it runs).
//! - [`shape_inference`]: shape functions over partially known shapes, a
//!   library of common ones, and a one-line test notation.
//! - [`resource`]: resources shared between kernels, reached by owning
//!   handles or by name through a [`resource::ResourceMgr`]; the
//!   interfaces of lookup tables ([`resource::lookup`]) and queues
//!   ([`resource::queue`]).
//! - [`wait`]: kernels that wait for others (a queue's dequeue): deadlines
//!   and a run's cancellation.
//! - [`op_instance`]: [`OpInstance`], an op instance with its attrs inferred from its
//!   inputs and checked.
//! - [`Tensor`], [`TensorShape`], [`Element`]: dynamically typed
//!   n-dimensional arrays backed by ndarray.
//! - `checkpoint` (the default feature `checkpoint`): saving and restoring
//!   resources as safetensors files, with a checksum per tensor.
//! - [`file`](mod@file): reading the files users give (refusing FIFOs, devices and
//!   directories, reading at most a file's size), shared by every reader.
//! - [`artifacts`]: the generated files describing a registry's ops (an
//!   `ops.pbtxt`, a Markdown reference and a coverage matrix), written and
//!   checked by `cargo xtask codegen` or a downstream crate's own tool.
//! - [`testing`]: per-op contract tests (`opcheck`, with the `testing`
//!   feature) and the input generators ops register for them.
//! - [`Error`] and [`Code`]: errors with TensorFlow's status codes, and the
//!   [`op_requires!`] and [`op_requires_ok!`] macros for early returns.
//!
//! ```
//! use op_core::{op_requires, Code, Result, Tensor};
//!
//! fn sum(t: &Tensor) -> Result<Tensor> {
//!     op_requires!(t.rank() == 1, Code::InvalidArgument, "expected a vector, got shape {}", t.shape());
//!     let total: f32 = t.as_slice::<f32>()?.iter().sum();
//!     Ok(Tensor::scalar(total))
//! }
//!
//! let t = Tensor::from_vec([3], vec![1.0f32, 2.0, 3.0])?;
//! assert_eq!(sum(&t)?.scalar_value::<f32>()?, 6.0);
//! # Ok::<(), op_core::Error>(())
//! ```

#[doc(hidden)]
pub mod __private;
pub mod allocator;
pub mod artifacts;
#[cfg(feature = "checkpoint")]
pub mod checkpoint;
pub mod context;
pub mod device;
pub mod element;
pub mod elementwise;
pub mod error;
pub mod executor;
pub mod file;
pub mod gradient;
pub mod kernel;
pub mod op;
pub mod op_instance;
pub mod registry;
pub mod resource;
pub mod resource_handle;
pub mod runtime;
pub mod shape;
pub mod shape_inference;
pub mod symbolic;
pub mod tensor;
pub mod testing;
pub mod threads;
mod unwind;
pub mod wait;

pub use op_spec::{
    ArgDef, ArgType, AttrDef, AttrKind, AttrType, AttrValue, DType, Device, DeviceType, ListValue,
    OpDef, OpDefBuilder, ShapeError, ShapeValue, SpecError, SpecErrors, TensorValue, TypeClass,
};

pub use context::KernelContext;
pub use element::{Complex64, Complex128, Element, QInt8, QInt16, QInt32, QUInt8, QUInt16};
pub use error::{Code, Error, Result, ResultExt};
pub use executor::Executor;
pub use kernel::{
    DEVICE_CPU, DEVICE_GPU, FnKernel, FromKernelContext, KernelConstruction, KernelFn, OpAttrs,
    OpKernel,
};
pub use op::{Op, OpSignature, TypeAttrSignature};
pub use op_instance::{FromAttrValue, InputTypes, OpInstance, OpInstanceBuilder};
pub use registry::{KernelRegistration, OpRegistration, Registry, TypeConstraint};
pub use resource_handle::ResourceHandle;
pub use runtime::{OpCall, PreparedOp, Runtime};
pub use shape::TensorShape;
pub use tensor::{Tensor, TensorIdentity};
pub use unwind::contain_panic;

pub use half::{bf16, f16};
pub use ndarray;
pub use num_complex::Complex;
/// Re-exported for kernels generic over their element type
/// (`T: Element + op_core::num_traits::Float`), so that a kernel crate
/// needs no dependency of its own on `num-traits`.
///
/// ```standalone_crate
/// use op_core::ndarray::ArrayViewD;
/// use op_core::num_traits::Float;
/// use op_core::{Element, op};
///
/// /// The Euclidean norm of a tensor.
/// #[op(types(f32, f64), outputs("norm"))]
/// pub fn l2_norm<T: Element + Float>(x: ArrayViewD<'_, T>) -> T {
///     x.iter().fold(T::zero(), |s, v| s + *v * *v).sqrt()
/// }
///
/// let x = op_core::Tensor::from_vec([2], vec![3.0f32, 4.0])?;
/// assert_eq!(L2Norm::call(&x).run()?.scalar_value::<f32>()?, 5.0);
/// # Ok::<(), op_core::Error>(())
/// ```
pub use num_traits;
pub use op_spec;

pub use op_macros::{gradient, kernel, op, op_def, register_op};

/// Re-exported for the macros' generated code and for hand-written
/// registrations (`op_core::inventory::submit! { ... }`).
pub use inventory;
