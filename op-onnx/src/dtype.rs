//! Our dtypes as ONNX's tensor element types.

use op_core::DType;
use ort_sys::ONNXTensorElementDataType as Onnx;

/// The dtypes whose tensors cross between ONNX Runtime and our kernels, as
/// both hold them (plain elements of the same size and layout), with
/// ONNX's element type of each. Complex types are not among them: ONNX
/// Runtime's CPU provider has no complex tensors ("tensor type 15 is not
/// supported", seen with onnxruntime 1.32), and one custom op with such a
/// type fails every session of the domain.
pub const CROSSING: &[(DType, Onnx)] = &[
    (DType::F32, Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT),
    (DType::F64, Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE),
    (DType::F16, Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16),
    (DType::BF16, Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16),
    (DType::I8, Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8),
    (DType::I16, Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16),
    (DType::I32, Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32),
    (DType::I64, Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64),
    (DType::U8, Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8),
    (DType::U16, Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16),
    (DType::U32, Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32),
    (DType::U64, Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64),
    (DType::Bool, Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL),
];

/// ONNX's element type of `dtype`, when its tensors cross.
///
/// ```
/// use ort_sys::ONNXTensorElementDataType as Onnx;
/// assert_eq!(op_onnx::dtype::to_onnx(op_core::DType::I32), Some(Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32));
/// assert_eq!(op_onnx::dtype::to_onnx(op_core::DType::String), None);
/// ```
pub fn to_onnx(dtype: DType) -> Option<Onnx> {
    CROSSING.iter().find(|(d, _)| *d == dtype).map(|(_, o)| *o)
}

/// Our dtype of ONNX element type `onnx`, when its tensors cross.
pub fn from_onnx(onnx: Onnx) -> Option<DType> {
    CROSSING.iter().find(|(_, o)| *o == onnx).map(|(d, _)| *d)
}

/// ONNX's element type number (`TensorProto.DataType`) of `dtype`, as
/// Python's `onnx` names it, when its tensors cross.
pub fn onnx_number(dtype: DType) -> Option<i32> {
    to_onnx(dtype).map(|o| o as i32)
}
