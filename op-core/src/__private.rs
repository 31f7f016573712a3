//! What the macros' generated code uses, in one place (pyo3's `impl_`,
//! serde's `__private`): not part of the public API, and free to change
//! with the macros.
//!
//! Generated code names everything as `::op_core::__private::Item`, or
//! `<facade>::__private::Item` when a macro's `crate = "facade::op_core"`
//! argument names a crate that re-exports op-core; so a facade needs to
//! re-export only `op_core` itself.

pub use ::inventory;

pub use crate::context::KernelContext;
pub use crate::element::{Complex64, Complex128, Element, QInt8, QInt16, QInt32, QUInt8, QUInt16};
pub use crate::error::Result;
pub use crate::executor::Executor;
pub use crate::gradient::{Gradient, GradientRegistration, IntoGradients, Value};
pub use crate::kernel::{
    FnKernel, FromKernelContext, KernelConstruction, KernelReturn, OpAttrs, OpKernel,
};
pub use crate::op::checks::{
    ConstMessage, first_output_is_resource, gradient_count_matches, gradient_count_message,
    has_arg, has_input, has_resource_input, has_type_attr, type_attr_allows,
};
pub use crate::op::{Op, OpSignature, TypeAttrSignature};
pub use crate::op_instance::OpInstance;
pub use crate::registry::{KernelRegistration, OpRegistration, TypeConstraint};
pub use crate::resource_handle::ResourceHandle;
pub use crate::runtime::{OpCall, Runtime};
pub use crate::shape_inference::library as shape_library;
pub use crate::symbolic::Output;
pub use crate::tensor::Tensor;
pub use half::{bf16, f16};
pub use op_spec::{AttrValue, DType, DeviceType, OpDef, OpDefBuilder, ShapeValue, SpecErrors};

/// The `N` values of `outputs` as an array; an `Internal` error if there
/// are not `N` (what a wrapper unpacks its outputs with).
pub fn outputs_array<T, const N: usize>(outputs: Vec<T>) -> Result<[T; N]> {
    let count = outputs.len();
    outputs
        .try_into()
        .map_err(|_| crate::executor::wrong_output_count::<N>(count))
}

/// The one value of a single-value output group.
pub fn single_output<T>(group: Vec<T>) -> Result<T> {
    let [value] = outputs_array::<T, 1>(group)?;
    Ok(value)
}

/// A gradient function's result as one optional gradient per input (what
/// `#[gradient]`'s registration calls).
pub fn into_gradients<V, R: IntoGradients<V>>(result: Result<R>) -> Result<Vec<Option<V>>> {
    result.map(IntoGradients::into_gradients)
}
