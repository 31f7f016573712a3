//! The part of TensorFlow's C API the plugin uses, declared by hand (no
//! bindgen, no headers) and found in the loading process at load time.
//!
//! Why not link it: every kernel and op function lives only in
//! `libtensorflow_framework.so.2`, which Python's TensorFlow has loaded
//! (`RTLD_GLOBAL`) before it loads a plugin. Looking each function up with
//! `dlsym` then needs nothing of TensorFlow to build (this crate and its
//! tests build on any machine), and a TensorFlow that lacks one of them is
//! told by name at load ([`Api::load`]) instead of failing in the dynamic
//! linker or crashing later.
//!
//! The declarations follow `tensorflow/c/{tf_status,tf_tensor,ops,kernels}.h`
//! of TensorFlow 2.21; each opaque type is a zero-sized `#[repr(C)]` struct
//! used only behind pointers.

#![allow(non_camel_case_types, non_snake_case)]

use std::ffi::{CStr, c_char, c_int, c_void};

macro_rules! opaque {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {
        $(
            $(#[$doc])*
            #[repr(C)]
            pub struct $name {
                _private: [u8; 0],
            }
        )*
    };
}

opaque!(
    /// `TF_Status`: a code and a message.
    TF_Status,
    /// `TF_OpDefinitionBuilder`: an op being declared.
    TF_OpDefinitionBuilder,
    /// `TF_ShapeInferenceContext`: a node's shape inference.
    TF_ShapeInferenceContext,
    /// `TF_ShapeHandle`: a shape of a shape inference context.
    TF_ShapeHandle,
    /// `TF_DimensionHandle`: a dimension of a shape inference context.
    TF_DimensionHandle,
    /// `TF_KernelBuilder`: a kernel being declared.
    TF_KernelBuilder,
    /// `TF_OpKernelConstruction`: a kernel being created for a node.
    TF_OpKernelConstruction,
    /// `TF_OpKernelContext`: one run of a kernel.
    TF_OpKernelContext,
    /// `TF_Tensor`: a handle to a TensorFlow tensor.
    TF_Tensor,
);

/// `TF_DataType`: the values of `tensorflow.DataType` (ours are the same:
/// `DType::enum_value`).
pub type TF_DataType = c_int;
/// `TF_Code`: the values of `tensorflow.error.Code` (ours are the same:
/// `Code::value`).
pub type TF_Code = c_int;

/// `TF_Buffer`: bytes TensorFlow hands over (a serialized proto).
#[repr(C)]
pub struct TF_Buffer {
    /// The bytes.
    pub data: *const c_void,
    /// How many.
    pub length: usize,
    /// Frees `data`, if set.
    pub data_deallocator: Option<unsafe extern "C" fn(data: *mut c_void, length: usize)>,
}

/// A shape function, as TensorFlow calls it.
pub type ShapeFn = unsafe extern "C" fn(ctx: *mut TF_ShapeInferenceContext, status: *mut TF_Status);
/// A kernel's constructor: its state, or null after reporting a failure.
pub type CreateFn = unsafe extern "C" fn(ctx: *mut TF_OpKernelConstruction) -> *mut c_void;
/// A kernel's run, on the state `CreateFn` made.
pub type ComputeFn = unsafe extern "C" fn(kernel: *mut c_void, ctx: *mut TF_OpKernelContext);
/// Frees a kernel's state.
pub type DeleteFn = unsafe extern "C" fn(kernel: *mut c_void);
/// Frees the data of a tensor made by `TF_NewTensor`.
pub type DeallocatorFn = unsafe extern "C" fn(data: *mut c_void, len: usize, arg: *mut c_void);

pub(crate) use op_host::c_api;

c_api! {
    /// TensorFlow's C functions, found in the process ([`Api::load`]).
    pub struct Api {
        fn TF_NewStatus() -> *mut TF_Status;
        fn TF_DeleteStatus(status: *mut TF_Status);
        fn TF_SetStatus(status: *mut TF_Status, code: TF_Code, message: *const c_char);
        fn TF_GetCode(status: *const TF_Status) -> TF_Code;
        fn TF_Message(status: *const TF_Status) -> *const c_char;

        fn TF_NewOpDefinitionBuilder(name: *const c_char) -> *mut TF_OpDefinitionBuilder;
        fn TF_RegisterOpDefinition(builder: *mut TF_OpDefinitionBuilder, status: *mut TF_Status);
        fn TF_OpDefinitionBuilderAddAttr(builder: *mut TF_OpDefinitionBuilder, spec: *const c_char);
        fn TF_OpDefinitionBuilderAddInput(builder: *mut TF_OpDefinitionBuilder, spec: *const c_char);
        fn TF_OpDefinitionBuilderAddOutput(builder: *mut TF_OpDefinitionBuilder, spec: *const c_char);
        fn TF_OpDefinitionBuilderSetIsCommutative(builder: *mut TF_OpDefinitionBuilder, value: bool);
        fn TF_OpDefinitionBuilderSetIsAggregate(builder: *mut TF_OpDefinitionBuilder, value: bool);
        fn TF_OpDefinitionBuilderSetIsStateful(builder: *mut TF_OpDefinitionBuilder, value: bool);
        fn TF_OpDefinitionBuilderSetAllowsUninitializedInput(
            builder: *mut TF_OpDefinitionBuilder,
            value: bool,
        );
        fn TF_OpDefinitionBuilderSetShapeInferenceFunction(
            builder: *mut TF_OpDefinitionBuilder,
            function: ShapeFn,
        );
        fn TF_ShapeInferenceContextSetUnknownShape(
            ctx: *mut TF_ShapeInferenceContext,
            status: *mut TF_Status,
        );
        fn TF_ShapeInferenceContextNumInputs(ctx: *mut TF_ShapeInferenceContext) -> i64;
        fn TF_NewShapeHandle() -> *mut TF_ShapeHandle;
        fn TF_DeleteShapeHandle(handle: *mut TF_ShapeHandle);
        fn TF_NewDimensionHandle() -> *mut TF_DimensionHandle;
        fn TF_DeleteDimensionHandle(handle: *mut TF_DimensionHandle);
        fn TF_ShapeInferenceContextGetInput(
            ctx: *mut TF_ShapeInferenceContext,
            index: c_int,
            handle: *mut TF_ShapeHandle,
            status: *mut TF_Status,
        );
        fn TF_ShapeInferenceContextSetOutput(
            ctx: *mut TF_ShapeInferenceContext,
            index: c_int,
            handle: *mut TF_ShapeHandle,
            status: *mut TF_Status,
        );
        fn TF_ShapeInferenceContextScalar(ctx: *mut TF_ShapeInferenceContext) -> *mut TF_ShapeHandle;
        fn TF_ShapeInferenceContextVectorFromSize(
            ctx: *mut TF_ShapeInferenceContext,
            size: usize,
        ) -> *mut TF_ShapeHandle;
        fn TF_ShapeInferenceContext_GetAttrType(
            ctx: *mut TF_ShapeInferenceContext,
            attr: *const c_char,
            value: *mut TF_DataType,
            status: *mut TF_Status,
        );
        fn TF_ShapeInferenceContextRank(
            ctx: *mut TF_ShapeInferenceContext,
            handle: *mut TF_ShapeHandle,
        ) -> i64;
        fn TF_ShapeInferenceContextRankKnown(
            ctx: *mut TF_ShapeInferenceContext,
            handle: *mut TF_ShapeHandle,
        ) -> c_int;
        fn TF_ShapeInferenceContextWithRank(
            ctx: *mut TF_ShapeInferenceContext,
            handle: *mut TF_ShapeHandle,
            rank: i64,
            result: *mut TF_ShapeHandle,
            status: *mut TF_Status,
        );
        fn TF_ShapeInferenceContextDim(
            ctx: *mut TF_ShapeInferenceContext,
            handle: *mut TF_ShapeHandle,
            index: i64,
            result: *mut TF_DimensionHandle,
        );
        fn TF_ShapeInferenceContextSubshape(
            ctx: *mut TF_ShapeInferenceContext,
            handle: *mut TF_ShapeHandle,
            start: i64,
            end: i64,
            result: *mut TF_ShapeHandle,
            status: *mut TF_Status,
        );
        fn TF_ShapeInferenceContextConcatenateShapes(
            ctx: *mut TF_ShapeInferenceContext,
            first: *mut TF_ShapeHandle,
            second: *mut TF_ShapeHandle,
            result: *mut TF_ShapeHandle,
            status: *mut TF_Status,
        );
        fn TF_DimensionHandleValueKnown(handle: *mut TF_DimensionHandle) -> c_int;
        fn TF_DimensionHandleValue(handle: *mut TF_DimensionHandle) -> i64;

        fn TF_NewKernelBuilder(
            op: *const c_char,
            device: *const c_char,
            create: CreateFn,
            compute: ComputeFn,
            delete: DeleteFn,
        ) -> *mut TF_KernelBuilder;
        fn TF_KernelBuilder_TypeConstraint(
            builder: *mut TF_KernelBuilder,
            attr: *const c_char,
            dtype: TF_DataType,
            status: *mut TF_Status,
        );
        fn TF_KernelBuilder_HostMemory(builder: *mut TF_KernelBuilder, arg: *const c_char);
        fn TF_RegisterKernelBuilder(
            name: *const c_char,
            builder: *mut TF_KernelBuilder,
            status: *mut TF_Status,
        );
        fn TF_DeleteKernelBuilder(builder: *mut TF_KernelBuilder);

        fn TF_OpKernelConstruction_GetNodeDef(
            ctx: *mut TF_OpKernelConstruction,
            status: *mut TF_Status,
        ) -> *mut TF_Buffer;
        fn TF_OpKernelConstruction_Failure(ctx: *mut TF_OpKernelConstruction, status: *mut TF_Status);
        fn TF_DeleteBuffer(buffer: *mut TF_Buffer);

        fn TF_NumInputs(ctx: *mut TF_OpKernelContext) -> c_int;
        fn TF_NumOutputs(ctx: *mut TF_OpKernelContext) -> c_int;
        fn TF_GetInput(
            ctx: *mut TF_OpKernelContext,
            index: c_int,
            tensor: *mut *mut TF_Tensor,
            status: *mut TF_Status,
        );
        fn TF_SetOutput(
            ctx: *mut TF_OpKernelContext,
            index: c_int,
            tensor: *const TF_Tensor,
            status: *mut TF_Status,
        );
        fn TF_OpKernelContext_Failure(ctx: *mut TF_OpKernelContext, status: *mut TF_Status);
        fn TF_ForwardInputOrAllocateOutput(
            ctx: *mut TF_OpKernelContext,
            candidates: *const c_int,
            num_candidates: c_int,
            output_index: c_int,
            dims: *const i64,
            num_dims: c_int,
            forwarded_input: *mut c_int,
            status: *mut TF_Status,
        ) -> *mut TF_Tensor;
        fn TF_AllocateOutput(
            ctx: *mut TF_OpKernelContext,
            index: c_int,
            dtype: TF_DataType,
            dims: *const i64,
            num_dims: c_int,
            len: usize,
            status: *mut TF_Status,
        ) -> *mut TF_Tensor;

        fn TF_NewTensor(
            dtype: TF_DataType,
            dims: *const i64,
            num_dims: c_int,
            data: *mut c_void,
            len: usize,
            deallocator: DeallocatorFn,
            deallocator_arg: *mut c_void,
        ) -> *mut TF_Tensor;
        fn TF_DeleteTensor(tensor: *mut TF_Tensor);
        fn TF_TensorType(tensor: *const TF_Tensor) -> TF_DataType;
        fn TF_NumDims(tensor: *const TF_Tensor) -> c_int;
        fn TF_Dim(tensor: *const TF_Tensor, index: c_int) -> i64;
        fn TF_TensorByteSize(tensor: *const TF_Tensor) -> usize;
        fn TF_TensorData(tensor: *const TF_Tensor) -> *mut c_void;
    }
}

/// The library TensorFlow's C API lives in, for hosts that did not make
/// its symbols global.
const FRAMEWORK: &CStr = c"libtensorflow_framework.so.2";

impl Api {
    /// The C API of the TensorFlow loaded in this process: each function
    /// looked up among the process's global symbols, then in
    /// `libtensorflow_framework.so.2` if it is loaded. `Err` names the
    /// functions neither has (every one, when no TensorFlow is loaded).
    pub fn load() -> Result<Api, Vec<&'static str>> {
        Api::resolve(op_host::c_api::in_process(FRAMEWORK, true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_without_tensorflow_names_every_function_missing() {
        let missing = Api::load().err().expect("no TensorFlow in a Rust test");
        assert_eq!(missing, Api::NAMES);
    }

    #[test]
    fn the_buffer_has_tensorflows_layout() {
        assert_eq!(size_of::<TF_Buffer>(), 24);
        assert_eq!(std::mem::offset_of!(TF_Buffer, length), 8);
        assert_eq!(std::mem::offset_of!(TF_Buffer, data_deallocator), 16);
    }
}
