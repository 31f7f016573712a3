//! The GPU kernels of the variable ops: the CPU kernels' functions
//! (`cpu.rs`), registered for the GPU too. They move handles and tensors,
//! never elements: on a GPU runtime `AssignVariableOp` stores the value as
//! the runtime placed it (in GPU memory) and `ReadVariableOp` returns that
//! tensor, sharing its buffer, so a variable a GPU program assigns and
//! updates (the training ops' GPU kernels) is never copied to the host.
//! Handles (`resource`) and `VarIsInitializedOp`'s `bool` stay in host
//! memory, as every handle and bool does.
//!
//! The dtypes are those GPU kernels take (`op_cuda::kernel::dtype_suffix`):
//! the plain real numbers.

use op_core::{Element, KernelContext, Result, kernel};

use super::cpu;
use super::ops::{
    AssignVariableOp, DestroyResourceOp, ReadVariableOp, VarHandleOp, VarIsInitializedOp,
};

#[kernel(op = VarHandleOp, device = "gpu", types(dtype = [f16, bf16, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64]))]
fn var_handle_op_gpu<T: Element>(ctx: &mut KernelContext<'_>, attrs: &VarHandleOp) -> Result<()> {
    cpu::var_handle_op::<T>(ctx, attrs)
}

#[kernel(op = ReadVariableOp, device = "gpu", types(dtype = [f16, bf16, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64]))]
fn read_variable_op_gpu<T: Element>(ctx: &mut KernelContext<'_>) -> Result<()> {
    cpu::read_variable_op::<T>(ctx)
}

#[kernel(op = AssignVariableOp, device = "gpu", types(dtype = [f16, bf16, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64]))]
fn assign_variable_op_gpu<T: Element>(
    ctx: &mut KernelContext<'_>,
    attrs: &AssignVariableOp,
) -> Result<()> {
    cpu::assign_variable_op::<T>(ctx, attrs)
}

#[kernel(op = VarIsInitializedOp, device = "gpu")]
fn var_is_initialized_op_gpu(ctx: &mut KernelContext<'_>) -> Result<()> {
    cpu::var_is_initialized_op(ctx)
}

#[kernel(op = DestroyResourceOp, device = "gpu")]
fn destroy_resource_op_gpu(ctx: &mut KernelContext<'_>, attrs: &DestroyResourceOp) -> Result<()> {
    cpu::destroy_resource_op(ctx, attrs)
}
