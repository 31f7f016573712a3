//! The CPU kernels of the variable ops. The functions only move handles
//! and tensors, never elements, so the GPU registers them too
//! (`gpu.rs`): a variable's value then stays in the memory of the device
//! that assigned it.

use std::sync::Arc;

use op_core::error::quoted;
use op_core::resource::ContainerInfo;
use op_core::{Code, Element, KernelContext, ResourceHandle, Result, Tensor, kernel};

use super::ops::{
    AssignVariableOp, DestroyResourceOp, ReadVariableOp, VarHandleOp, VarIsInitializedOp,
};
use super::resource::Var;

/// The variable of the handle in input 0, or the `NotFound` error that
/// says it was never assigned (or was destroyed) and names it.
fn variable_of(ctx: &KernelContext<'_>, handle: &ResourceHandle) -> Result<Arc<Var>> {
    ctx.resource::<Var>(0).map_err(|e| match e.code() {
        Code::NotFound => {
            let container = if handle.container.is_empty() {
                ctx.resource_manager().default_container()
            } else {
                &handle.container
            };
            ctx.error(
                Code::NotFound,
                format_args!(
                    "variable {} in container {} was never assigned, or was destroyed ({})",
                    quoted(&handle.name),
                    quoted(container),
                    e.message()
                ),
            )
        }
        _ => e,
    })
}

/// The element types a variable can hold (every `Element` but `resource`).
macro_rules! variable_kernels {
    ($($op:ident => $kernel:item)*) => {$(
        #[kernel(
            op = $op,
            types(dtype = [realnumbertype, complex64, complex128, bool, string, quantizedtype])
        )]
        $kernel
    )*};
}

variable_kernels! {
    VarHandleOp =>
    pub(super) fn var_handle_op<T: Element>(ctx: &mut KernelContext<'_>, attrs: &VarHandleOp) -> Result<()> {
        if attrs.shared_name.is_empty() {
            return ctx.set_resource_output(0, Arc::new(Var::new(T::DTYPE)));
        }
        let info = ContainerInfo::new(
            ctx.resource_manager(),
            &attrs.container,
            &attrs.shared_name,
            ctx.node_name(),
            true,
        )
        .map_err(|e| ctx.error(e.code(), e.message()))?;
        let handle = ResourceHandle::named::<Var>(ctx.resource_device(), info.container(), info.name());
        ctx.set_output(0, Tensor::scalar(handle))
    }

    ReadVariableOp =>
    pub(super) fn read_variable_op<T: Element>(ctx: &mut KernelContext<'_>) -> Result<()> {
        let handle: ResourceHandle = ctx.input_scalar(0)?;
        let var = variable_of(ctx, &handle)?;
        if var.dtype() != T::DTYPE {
            return Err(ctx.error(Code::InvalidArgument,
                format_args!(
                    "cannot read variable {} of dtype {} as {} (attr dtype)",
                    quoted(&handle.name),
                    var.dtype(),
                    T::DTYPE
                ),
            ));
        }
        let value = var.value().ok_or_else(|| {
            ctx.error(Code::FailedPrecondition,
                format_args!(
                    "variable {} was never assigned: it has no value to read",
                    quoted(&handle.name)
                ),
            )
        })?;
        ctx.set_output(0, value)
    }

    AssignVariableOp =>
    pub(super) fn assign_variable_op<T: Element>(
        ctx: &mut KernelContext<'_>,
        attrs: &AssignVariableOp,
    ) -> Result<()> {
        let handle: ResourceHandle = ctx.input_scalar(0)?;
        let var = match ctx.resource::<Var>(0) {
            Ok(var) => var,
            // The first assign of a named variable creates it.
            Err(e) if e.code() == Code::NotFound && !handle.is_owning() => ctx
                .resource_manager()
                .lookup_or_create(&handle.container, &handle.name, || Ok(Var::new(T::DTYPE)))?,
            Err(e) => return Err(e),
        };
        if var.dtype() != T::DTYPE {
            return Err(ctx.error(Code::InvalidArgument,
                format_args!(
                    "cannot assign a {} value (input 1 'value') to variable {}, which has dtype {}",
                    T::DTYPE,
                    quoted(&handle.name),
                    var.dtype()
                ),
            ));
        }
        let value = ctx.input(1)?.clone();
        var.assign(value, attrs.validate_shape).map_err(|e| {
            ctx.error(e.code(),
                format_args!("variable {}: {}", quoted(&handle.name), e.message()),
            )
        })
    }
}

#[kernel(op = VarIsInitializedOp)]
pub(super) fn var_is_initialized_op(ctx: &mut KernelContext<'_>) -> Result<()> {
    let initialized = match ctx.resource::<Var>(0) {
        Ok(var) => var.is_initialized(),
        Err(e) if e.code() == Code::NotFound => false,
        Err(e) => return Err(e),
    };
    ctx.set_output(0, Tensor::scalar(initialized))
}

#[kernel(op = DestroyResourceOp)]
pub(super) fn destroy_resource_op(
    ctx: &mut KernelContext<'_>,
    attrs: &DestroyResourceOp,
) -> Result<()> {
    let handle: ResourceHandle = ctx.input_scalar(0)?;
    if handle.is_owning() {
        // In no manager; freed with the last copy of its handle.
        return Ok(());
    }
    match ctx.resource_manager().delete_handle(&handle) {
        Ok(()) => Ok(()),
        Err(e) if e.code() == Code::NotFound && attrs.ignore_lookup_error => Ok(()),
        Err(e) => Err(ctx.error(
            e.code(),
            format_args!(
                "cannot destroy resource {} (ignore_lookup_error={}): {}",
                quoted(&handle.name),
                attrs.ignore_lookup_error,
                e.message()
            ),
        )),
    }
}
