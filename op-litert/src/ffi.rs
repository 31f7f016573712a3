//! LiteRT's C structs, the fields this crate reads or writes, written from
//! `tensorflow/lite/core/c/common.h` and `c_api_types.h` (TensorFlow 2.x,
//! as LiteRT 2.x builds them: `tflite/core/c/common.h`).
//!
//! The header keeps these structs "semi-ABI stable": fields are only ever
//! appended. So a struct read through a pointer needs only the prefix this
//! crate uses ([`TfLiteNode`], [`TfLiteDelegateParams`]); a struct indexed
//! in an array needs its full size ([`TfLiteTensor`], in
//! `TfLiteContext::tensors`); and a struct passed by value needs the size
//! the runtime expects ([`TfLiteRegistration`], given to
//! `ReplaceNodeSubsetsWithDelegateKernels`), which is today's full layout,
//! `inplace_operator` included. Layouts are checked by this module's tests
//! against the offsets the header gives on 64-bit Linux.

#![allow(non_camel_case_types, non_snake_case)]

use std::ffi::{c_char, c_int, c_void};

/// `TfLiteStatus`.
pub type TfLiteStatus = c_int;
/// `kTfLiteOk`.
pub const K_TF_LITE_OK: TfLiteStatus = 0;
/// `kTfLiteError`.
pub const K_TF_LITE_ERROR: TfLiteStatus = 1;
/// `kTfLiteDelegateError`.
pub const K_TF_LITE_DELEGATE_ERROR: TfLiteStatus = 2;

/// `BuiltinOperator_CUSTOM`.
pub const BUILTIN_OPERATOR_CUSTOM: i32 = 32;
/// `BuiltinOperator_DELEGATE`.
pub const BUILTIN_OPERATOR_DELEGATE: i32 = 51;

/// `kTfLiteDelegateFlagsAllowDynamicTensors`.
pub const K_TF_LITE_DELEGATE_FLAGS_ALLOW_DYNAMIC_TENSORS: i64 = 1;

/// `kTfLiteMmapRo`: read-only data of the model (weights, constants).
pub const K_TF_LITE_MMAP_RO: c_int = 1;
/// `kTfLitePersistentRo`: computed in prepare, then read-only.
pub const K_TF_LITE_PERSISTENT_RO: c_int = 5;

/// `TfLiteIntArray`: a length and that many `int`s after it.
#[repr(C)]
pub struct TfLiteIntArray {
    /// The number of elements.
    pub size: c_int,
    /// The first element (a flexible array member in C).
    pub data: [c_int; 0],
}

/// A one-element `TfLiteIntArray`, by value.
#[repr(C)]
pub struct TfLiteIntArray1 {
    /// Always 1.
    pub size: c_int,
    /// The element.
    pub data: [c_int; 1],
}

impl TfLiteIntArray {
    /// The elements.
    ///
    /// # Safety
    ///
    /// `array` is null or a live `TfLiteIntArray` of `size` elements, not
    /// freed during `'a`.
    pub unsafe fn as_slice<'a>(array: *const TfLiteIntArray) -> &'a [c_int] {
        if array.is_null() {
            return &[];
        }
        // SAFETY: the caller's contract; `size` elements follow `size`.
        unsafe {
            let size = usize::try_from((*array).size).unwrap_or(0);
            std::slice::from_raw_parts((*array).data.as_ptr(), size)
        }
    }
}

/// `TfLiteQuantizationParams`.
#[repr(C)]
pub struct TfLiteQuantizationParams {
    /// The scale.
    pub scale: f32,
    /// The zero point.
    pub zero_point: i32,
}

/// `TfLiteQuantization`.
#[repr(C)]
pub struct TfLiteQuantization {
    /// `TfLiteQuantizationType`.
    pub type_: c_int,
    /// The parameters.
    pub params: *mut c_void,
}

/// `TfLiteTensor`, whole (the runtime's tensors are an array of them).
#[repr(C)]
pub struct TfLiteTensor {
    /// `TfLiteType`.
    pub type_: c_int,
    /// `TfLitePtrUnion`: the first byte.
    pub data: *mut c_void,
    /// The shape.
    pub dims: *mut TfLiteIntArray,
    /// Legacy quantization.
    pub params: TfLiteQuantizationParams,
    /// `TfLiteAllocationType`.
    pub allocation_type: c_int,
    /// The size in bytes.
    pub bytes: usize,
    /// A `tflite::MMapAllocation`.
    pub allocation: *const c_void,
    /// Null-terminated, or null.
    pub name: *const c_char,
    /// The delegate owning `buffer_handle`.
    pub delegate: *mut TfLiteDelegate,
    /// `TfLiteBufferHandle`.
    pub buffer_handle: c_int,
    /// Whether the delegate's buffer is newer.
    pub data_is_stale: bool,
    /// Whether the tensor is a variable.
    pub is_variable: bool,
    /// Quantization.
    pub quantization: TfLiteQuantization,
    /// `TfLiteSparsity*`.
    pub sparsity: *mut c_void,
    /// The shape with -1 for unknown dimensions.
    pub dims_signature: *const TfLiteIntArray,
}

/// `TfLiteNode`, the prefix this crate reads.
#[repr(C)]
pub struct TfLiteNode {
    /// Input tensor indices (-1: an omitted optional input).
    pub inputs: *mut TfLiteIntArray,
    /// Output tensor indices.
    pub outputs: *mut TfLiteIntArray,
    /// Intermediate tensor indices.
    pub intermediates: *mut TfLiteIntArray,
    /// Temporary tensor indices.
    pub temporaries: *mut TfLiteIntArray,
    /// What the registration's `init` returned.
    pub user_data: *mut c_void,
    /// A builtin's parameters; a delegate node's `TfLiteDelegateParams`.
    pub builtin_data: *mut c_void,
    /// A custom op's options, from the model.
    pub custom_initial_data: *const c_void,
    /// Their size in bytes.
    pub custom_initial_data_size: c_int,
}

/// `TfLiteRegistration::init`.
pub type InitFn = unsafe extern "C" fn(*mut TfLiteContext, *const c_char, usize) -> *mut c_void;
/// `TfLiteRegistration::free`.
pub type FreeFn = unsafe extern "C" fn(*mut TfLiteContext, *mut c_void);
/// `TfLiteRegistration::prepare` and `invoke`.
pub type NodeFn = unsafe extern "C" fn(*mut TfLiteContext, *mut TfLiteNode) -> TfLiteStatus;

/// `TfLiteRegistration`, whole: passed by value.
#[repr(C)]
pub struct TfLiteRegistration {
    /// Makes a node's state.
    pub init: Option<InitFn>,
    /// Frees it.
    pub free: Option<FreeFn>,
    /// Fixes the outputs' shapes.
    pub prepare: Option<NodeFn>,
    /// Computes.
    pub invoke: Option<NodeFn>,
    /// `profiling_string`.
    pub profiling_string: *const c_void,
    /// The builtin code (`BuiltinOperator_CUSTOM` for custom ops).
    pub builtin_code: i32,
    /// A custom op's name.
    pub custom_name: *const c_char,
    /// The op's version.
    pub version: c_int,
    /// `TfLiteOperator*`.
    pub registration_external: *mut c_void,
    /// `async_kernel`.
    pub async_kernel: *const c_void,
    /// `TfLiteInPlaceOp` flags.
    pub inplace_operator: u64,
}

/// `TfLiteDelegateParams`: a delegate node's `builtin_data`, and what its
/// `init` gets as `buffer`.
#[repr(C)]
pub struct TfLiteDelegateParams {
    /// The delegate.
    pub delegate: *mut TfLiteDelegate,
    /// The original nodes the delegate node replaces.
    pub nodes_to_replace: *mut TfLiteIntArray,
    /// The partition's inputs.
    pub input_tensors: *mut TfLiteIntArray,
    /// The partition's outputs.
    pub output_tensors: *mut TfLiteIntArray,
}

/// `TfLiteContext`, the prefix this crate uses (through
/// `ReplaceNodeSubsetsWithDelegateKernels`).
#[repr(C)]
pub struct TfLiteContext {
    /// The number of tensors.
    pub tensors_size: usize,
    /// The node indices in execution order.
    pub GetExecutionPlan:
        Option<unsafe extern "C" fn(*mut TfLiteContext, *mut *mut TfLiteIntArray) -> TfLiteStatus>,
    /// The tensors.
    pub tensors: *mut TfLiteTensor,
    /// The runtime's own.
    pub impl_: *mut c_void,
    /// Resizes a tensor; takes ownership of the (malloc'd) shape.
    pub ResizeTensor: Option<
        unsafe extern "C" fn(
            *mut TfLiteContext,
            *mut TfLiteTensor,
            *mut TfLiteIntArray,
        ) -> TfLiteStatus,
    >,
    /// printf-style error reporting.
    pub ReportError: Option<unsafe extern "C" fn(*mut TfLiteContext, *const c_char, ...)>,
    /// `AddTensors`.
    pub AddTensors: *const c_void,
    /// A node and its registration, by index.
    pub GetNodeAndRegistration: Option<
        unsafe extern "C" fn(
            *mut TfLiteContext,
            c_int,
            *mut *mut TfLiteNode,
            *mut *mut TfLiteRegistration,
        ) -> TfLiteStatus,
    >,
    /// Replaces nodes with delegate kernels.
    pub ReplaceNodeSubsetsWithDelegateKernels: Option<
        unsafe extern "C" fn(
            *mut TfLiteContext,
            TfLiteRegistration,
            *const TfLiteIntArray,
            *mut TfLiteDelegate,
        ) -> TfLiteStatus,
    >,
}

/// `TfLiteDelegate`, whole (this crate makes it).
#[repr(C)]
pub struct TfLiteDelegate {
    /// The delegate's own data.
    pub data_: *mut c_void,
    /// Claims nodes.
    pub Prepare:
        Option<unsafe extern "C" fn(*mut TfLiteContext, *mut TfLiteDelegate) -> TfLiteStatus>,
    /// `CopyFromBufferHandle`.
    pub CopyFromBufferHandle: *const c_void,
    /// `CopyToBufferHandle`.
    pub CopyToBufferHandle: *const c_void,
    /// `FreeBufferHandle`.
    pub FreeBufferHandle: *const c_void,
    /// `TfLiteDelegateFlags`.
    pub flags: i64,
    /// `TfLiteOpaqueDelegateBuilder*` (null: the runtime calls `Prepare`).
    pub opaque_delegate_builder: *mut c_void,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    /// The offsets and sizes of common.h's structs on x86_64 and aarch64
    /// Linux (LP64: 8-byte pointers and `size_t`, 4-byte `int` and enums).
    #[test]
    fn layouts_match_the_header() {
        assert_eq!(size_of::<TfLiteTensor>(), 112);
        assert_eq!(offset_of!(TfLiteTensor, data), 8);
        assert_eq!(offset_of!(TfLiteTensor, dims), 16);
        assert_eq!(offset_of!(TfLiteTensor, allocation_type), 32);
        assert_eq!(offset_of!(TfLiteTensor, bytes), 40);
        assert_eq!(offset_of!(TfLiteTensor, name), 56);
        assert_eq!(offset_of!(TfLiteTensor, buffer_handle), 72);
        assert_eq!(offset_of!(TfLiteTensor, is_variable), 77);
        assert_eq!(offset_of!(TfLiteTensor, quantization), 80);
        assert_eq!(offset_of!(TfLiteTensor, dims_signature), 104);
        assert_eq!(offset_of!(TfLiteNode, user_data), 32);
        assert_eq!(offset_of!(TfLiteNode, custom_initial_data), 48);
        assert_eq!(offset_of!(TfLiteNode, custom_initial_data_size), 56);
        assert_eq!(size_of::<TfLiteRegistration>(), 88);
        assert_eq!(offset_of!(TfLiteRegistration, builtin_code), 40);
        assert_eq!(offset_of!(TfLiteRegistration, custom_name), 48);
        assert_eq!(offset_of!(TfLiteRegistration, version), 56);
        assert_eq!(offset_of!(TfLiteRegistration, inplace_operator), 80);
        assert_eq!(offset_of!(TfLiteContext, tensors), 16);
        assert_eq!(offset_of!(TfLiteContext, ResizeTensor), 32);
        assert_eq!(offset_of!(TfLiteContext, ReportError), 40);
        assert_eq!(offset_of!(TfLiteContext, GetNodeAndRegistration), 56);
        assert_eq!(
            offset_of!(TfLiteContext, ReplaceNodeSubsetsWithDelegateKernels),
            64
        );
        assert_eq!(size_of::<TfLiteDelegate>(), 56);
        assert_eq!(offset_of!(TfLiteDelegate, flags), 40);
        assert_eq!(size_of::<TfLiteDelegateParams>(), 32);
        assert_eq!(offset_of!(TfLiteIntArray, data), 4);
    }
}
