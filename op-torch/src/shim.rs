//! The part of PyTorch's stable C ABI the bridge uses, declared by hand
//! (no headers, no C++ compiler) and found in the process at load
//! ([`Host::load`]).
//!
//! The functions are those of `torch/csrc/inductor/aoti_torch/c/shim.h`
//! and `torch/csrc/stable/c/shim.h` that PyTorch 2.10 has; each later
//! PyTorch keeps them (that is the stable ABI's promise), so one build
//! serves every PyTorch from [`TARGET_VERSION`] on. They live in
//! `libtorch_cpu.so`, which PyTorch loads without `RTLD_GLOBAL`: the
//! lookup asks that library by name.
//!
//! Every function returns `AOTITorchError` (0 for success) and throws
//! nothing, except `aoti_torch_check`, which throws PyTorch's `c10::Error`
//! on a false condition: that is how a boxed kernel (a `void` function)
//! fails, and why it alone is `extern "C-unwind"` ([`Raise`]).

#![allow(non_camel_case_types)]

use std::ffi::{CStr, c_char, c_void};

use op_core::DType;

/// `StableIValue`: one argument or return on a boxed kernel's stack, each
/// kind packed into 64 bits (a pointer for handles and optionals).
pub type StableIValue = u64;
/// `AtenTensorHandle`: an owned reference to a tensor.
pub type AtenTensorHandle = *mut c_void;
/// `TorchLibraryHandle`: a `torch::Library` on the heap.
pub type TorchLibraryHandle = *mut c_void;
/// `StableListHandle`: an owned `std::vector<StableIValue>`.
pub type StableListHandle = *mut c_void;
/// `StringHandle`: an owned `std::string`.
pub type StringHandle = *mut c_void;
/// `AOTITorchError`: 0 for success.
pub type AOTITorchError = i32;
/// A boxed kernel: `(stack, num_args, num_outputs)`. It reads its
/// arguments from the stack and writes its returns over them.
pub type BoxedKernel = unsafe extern "C-unwind" fn(*mut StableIValue, u64, u64);
/// `aoti_torch_check(cond, func, file, line, msg)`: throws `c10::Error`
/// with `msg` when `cond` is false.
pub type Raise =
    unsafe extern "C-unwind" fn(bool, *const c_char, *const c_char, u32, *const c_char);

/// The PyTorch whose stable ABI the bridge targets, as
/// `TORCH_VERSION_2_10_0` encodes it (major << 56 | minor << 48): the
/// `extension_build_version` it gives `torch_library_impl`, so that each
/// later PyTorch converts the stack as 2.10 did.
pub const TARGET_VERSION: u64 = (2 << 56) | (10 << 48);

/// [`TARGET_VERSION`] as people write it.
pub const TARGET: &str = "2.10";

/// The library PyTorch's stable ABI lives in.
pub const LIBRARY: &CStr = c"libtorch_cpu.so";

op_host::c_api! {
    /// PyTorch's stable C functions (PyTorch 2.10 and later).
    pub struct Torch {
        fn aoti_torch_abi_version() -> u64;
        fn aoti_torch_library_init_def(ns: *const c_char, file: *const c_char, line: u32, ret: *mut TorchLibraryHandle) -> AOTITorchError;
        fn aoti_torch_library_init_impl(ns: *const c_char, key: *const c_char, file: *const c_char, line: u32, ret: *mut TorchLibraryHandle) -> AOTITorchError;
        fn aoti_torch_library_def(library: TorchLibraryHandle, schema: *const c_char) -> AOTITorchError;
        fn torch_library_impl(library: TorchLibraryHandle, name: *const c_char, kernel: BoxedKernel, extension_build_version: u64) -> AOTITorchError;
        fn aoti_torch_delete_tensor_object(tensor: AtenTensorHandle) -> AOTITorchError;
        fn aoti_torch_get_data_ptr(tensor: AtenTensorHandle, ret: *mut *mut c_void) -> AOTITorchError;
        fn aoti_torch_get_dim(tensor: AtenTensorHandle, ret: *mut i64) -> AOTITorchError;
        fn aoti_torch_get_sizes(tensor: AtenTensorHandle, ret: *mut *mut i64) -> AOTITorchError;
        fn aoti_torch_get_dtype(tensor: AtenTensorHandle, ret: *mut i32) -> AOTITorchError;
        fn aoti_torch_get_device_type(tensor: AtenTensorHandle, ret: *mut i32) -> AOTITorchError;
        fn aoti_torch_is_contiguous(tensor: AtenTensorHandle, ret: *mut bool) -> AOTITorchError;
        fn aoti_torch_empty_strided(ndim: i64, sizes: *const i64, strides: *const i64, dtype: i32, device_type: i32, device_index: i32, ret: *mut AtenTensorHandle) -> AOTITorchError;
        fn aoti_torch_copy_(tensor: AtenTensorHandle, src: AtenTensorHandle, non_blocking: i32) -> AOTITorchError;
        fn torch_list_size(list: StableListHandle, ret: *mut usize) -> AOTITorchError;
        fn torch_list_get_item(list: StableListHandle, index: usize, ret: *mut StableIValue) -> AOTITorchError;
        fn torch_delete_list(list: StableListHandle) -> AOTITorchError;
        fn torch_string_length(string: StringHandle, ret: *mut usize) -> AOTITorchError;
        fn torch_string_c_str(string: StringHandle, ret: *mut *const c_char) -> AOTITorchError;
        fn torch_delete_string(string: StringHandle) -> AOTITorchError;
        fn aoti_torch_device_type_cpu() -> i32;
        fn aoti_torch_dtype_bool() -> i32;
        fn aoti_torch_dtype_int8() -> i32;
        fn aoti_torch_dtype_int16() -> i32;
        fn aoti_torch_dtype_int32() -> i32;
        fn aoti_torch_dtype_int64() -> i32;
        fn aoti_torch_dtype_uint8() -> i32;
        fn aoti_torch_dtype_uint16() -> i32;
        fn aoti_torch_dtype_uint32() -> i32;
        fn aoti_torch_dtype_uint64() -> i32;
        fn aoti_torch_dtype_float16() -> i32;
        fn aoti_torch_dtype_bfloat16() -> i32;
        fn aoti_torch_dtype_float32() -> i32;
        fn aoti_torch_dtype_float64() -> i32;
        fn aoti_torch_dtype_complex64() -> i32;
        fn aoti_torch_dtype_complex128() -> i32;
    }
}

/// PyTorch's functions, with what the bridge derives from them once.
pub struct Host {
    /// The functions.
    pub torch: Torch,
    /// `aoti_torch_check`, which throws.
    pub raise: Raise,
    /// `torch_delete_stable_ivalue` (an optional's box), when this
    /// PyTorch has it (2.13 on; before, PyTorch boxes optionals with
    /// `new` and a leak of 8 bytes per optional argument is the price).
    pub delete_stable_ivalue: Option<unsafe extern "C" fn(*mut StableIValue) -> AOTITorchError>,
    /// The CPU's device type.
    pub cpu: i32,
    /// Our dtypes and PyTorch's codes for them.
    pub dtypes: Vec<(DType, i32)>,
}

impl Host {
    /// PyTorch's ABI in this process; `Err` names what is missing (every
    /// function, when no PyTorch is loaded).
    pub fn load() -> Result<Host, Vec<&'static str>> {
        let lookup = op_host::c_api::in_process(LIBRARY, false);
        let torch = Torch::resolve(&lookup)?;
        let raise = lookup(c"aoti_torch_check");
        if raise.is_null() {
            return Err(vec!["aoti_torch_check"]);
        }
        let delete = lookup(c"torch_delete_stable_ivalue");
        // SAFETY: found by name; the signatures are shim.h's (see the
        // types): `void aoti_torch_check(bool, const char*, const char*,
        // uint32_t, const char*)` and `AOTITorchError
        // torch_delete_stable_ivalue(StableIValue*)`.
        let (raise, delete_stable_ivalue) = unsafe {
            (
                std::mem::transmute::<*mut c_void, Raise>(raise),
                (!delete.is_null()).then(|| {
                    std::mem::transmute::<
                        *mut c_void,
                        unsafe extern "C" fn(*mut StableIValue) -> AOTITorchError,
                    >(delete)
                }),
            )
        };
        // SAFETY: each getter takes nothing and returns a constant.
        let (cpu, dtypes) = unsafe {
            let t = &torch;
            (
                (t.aoti_torch_device_type_cpu)(),
                vec![
                    (DType::Bool, (t.aoti_torch_dtype_bool)()),
                    (DType::I8, (t.aoti_torch_dtype_int8)()),
                    (DType::I16, (t.aoti_torch_dtype_int16)()),
                    (DType::I32, (t.aoti_torch_dtype_int32)()),
                    (DType::I64, (t.aoti_torch_dtype_int64)()),
                    (DType::U8, (t.aoti_torch_dtype_uint8)()),
                    (DType::U16, (t.aoti_torch_dtype_uint16)()),
                    (DType::U32, (t.aoti_torch_dtype_uint32)()),
                    (DType::U64, (t.aoti_torch_dtype_uint64)()),
                    (DType::F16, (t.aoti_torch_dtype_float16)()),
                    (DType::BF16, (t.aoti_torch_dtype_bfloat16)()),
                    (DType::F32, (t.aoti_torch_dtype_float32)()),
                    (DType::F64, (t.aoti_torch_dtype_float64)()),
                    (DType::Complex64, (t.aoti_torch_dtype_complex64)()),
                    (DType::Complex128, (t.aoti_torch_dtype_complex128)()),
                ],
            )
        };
        Ok(Host {
            torch,
            raise,
            delete_stable_ivalue,
            cpu,
            dtypes,
        })
    }

    /// Our dtype for PyTorch's `code`.
    pub fn dtype(&self, code: i32) -> Option<DType> {
        self.dtypes
            .iter()
            .find(|(_, c)| *c == code)
            .map(|(d, _)| *d)
    }

    /// PyTorch's code for our `dtype`.
    pub fn code(&self, dtype: DType) -> Option<i32> {
        self.dtypes
            .iter()
            .find(|(d, _)| *d == dtype)
            .map(|(_, c)| *c)
    }
}

/// Whether tensors of our `dtype` cross to PyTorch (those [`Host::load`]
/// maps).
pub fn crosses(dtype: DType) -> bool {
    dtype == DType::Bool || dtype.is_integer() || dtype.is_float() || dtype.is_complex()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_without_pytorch_names_every_function_missing() {
        let missing = Host::load().err().expect("no PyTorch in a Rust test");
        assert_eq!(missing, Torch::NAMES);
    }

    #[test]
    fn the_target_version_is_pytorchs_encoding_of_2_10() {
        // TORCH_VERSION_2_10_0 in torch/csrc/stable/version.h.
        assert_eq!(TARGET_VERSION, 0x020a_0000_0000_0000);
    }
}
