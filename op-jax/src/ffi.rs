//! The part of XLA's FFI C API (`xla/ffi/api/c_api.h`) that our handler
//! uses, written out: no crate on crates.io offers it, and the header is
//! plain C structs. Layouts are checked by tests against the offsets gcc
//! gives for the header jaxlib 0.8.1 ships (`jax.ffi.include_dir()`, API
//! 0.2); each struct here is a prefix of, or equal to, the header's.

// Each field is the header's field of the same name, documented there.
#![allow(missing_docs)]

use std::ffi::{c_char, c_void};

/// `XLA_FFI_Extension_Metadata`: the extension of the call XLA makes to
/// ask a handler which API version and traits it has.
pub const EXTENSION_METADATA: i32 = 1;
/// `XLA_FFI_ExecutionStage_EXECUTE`.
pub const STAGE_EXECUTE: i32 = 3;
/// `XLA_FFI_ArgType_BUFFER` / `XLA_FFI_RetType_BUFFER`.
pub const BUFFER: i32 = 1;
/// `XLA_FFI_AttrType_STRING`.
pub const ATTR_STRING: i32 = 4;

/// `XLA_FFI_Extension_Base`.
#[repr(C)]
pub struct ExtensionBase {
    pub struct_size: usize,
    pub ty: i32,
    pub next: *mut ExtensionBase,
}

/// `XLA_FFI_Api_Version`.
#[repr(C)]
pub struct ApiVersion {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub major_version: i32,
    pub minor_version: i32,
}

/// `XLA_FFI_Metadata`, up to `traits` (what a handler writes).
#[repr(C)]
pub struct Metadata {
    pub struct_size: usize,
    pub api_version: ApiVersion,
    pub traits: u32,
}

/// `XLA_FFI_Metadata_Extension`.
#[repr(C)]
pub struct MetadataExtension {
    pub extension_base: ExtensionBase,
    pub metadata: *mut Metadata,
}

/// `XLA_FFI_Error` (opaque).
#[repr(C)]
pub struct Error {
    _private: [u8; 0],
}

/// `XLA_FFI_Error_Create_Args`.
#[repr(C)]
pub struct ErrorCreateArgs {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub message: *const c_char,
    pub errc: i32,
}

/// `XLA_FFI_Error_Create_Args_STRUCT_SIZE`: up to and including `errc`.
pub const ERROR_CREATE_ARGS_SIZE: usize = 28;

/// `XLA_FFI_Api`, up to `XLA_FFI_Error_Create` (the one function we call).
#[repr(C)]
pub struct Api {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub api_version: ApiVersion,
    pub internal_api: *mut c_void,
    pub error_create: unsafe extern "C" fn(args: *mut ErrorCreateArgs) -> *mut Error,
}

/// `XLA_FFI_Buffer`.
#[repr(C)]
pub struct Buffer {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub dtype: i32,
    pub data: *mut c_void,
    pub rank: i64,
    pub dims: *mut i64,
}

/// `XLA_FFI_ByteSpan`.
#[repr(C)]
pub struct ByteSpan {
    pub ptr: *const c_char,
    pub len: usize,
}

/// `XLA_FFI_Args` (and, with `rets` for `args`, `XLA_FFI_Rets`).
#[repr(C)]
pub struct Args {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub size: i64,
    pub types: *mut i32,
    pub args: *mut *mut c_void,
}

/// `XLA_FFI_Attrs`.
#[repr(C)]
pub struct Attrs {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub size: i64,
    pub types: *mut i32,
    pub names: *mut *mut ByteSpan,
    pub attrs: *mut *mut c_void,
}

/// `XLA_FFI_CallFrame`.
#[repr(C)]
pub struct CallFrame {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub api: *const Api,
    pub ctx: *mut c_void,
    pub stage: i32,
    pub args: Args,
    pub rets: Args,
    pub attrs: Attrs,
    pub future: *mut c_void,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    /// The offsets and sizes gcc 12 gives for jaxlib 0.8.1's c_api.h on
    /// x86_64 Linux.
    #[test]
    fn layouts_match_the_header() {
        assert_eq!(size_of::<CallFrame>(), 176);
        assert_eq!(offset_of!(CallFrame, api), 16);
        assert_eq!(offset_of!(CallFrame, stage), 32);
        assert_eq!(offset_of!(CallFrame, args), 40);
        assert_eq!(offset_of!(CallFrame, rets), 80);
        assert_eq!(offset_of!(CallFrame, attrs), 120);
        assert_eq!(offset_of!(CallFrame, future), 168);
        assert_eq!(size_of::<Buffer>(), 48);
        assert_eq!(offset_of!(Buffer, dtype), 16);
        assert_eq!(offset_of!(Buffer, data), 24);
        assert_eq!(offset_of!(Buffer, rank), 32);
        assert_eq!(offset_of!(Buffer, dims), 40);
        assert_eq!(size_of::<Args>(), 40);
        assert_eq!(size_of::<Attrs>(), 48);
        assert_eq!(offset_of!(Attrs, names), 32);
        assert_eq!(offset_of!(Attrs, attrs), 40);
        assert_eq!(offset_of!(Metadata, api_version), 8);
        assert_eq!(offset_of!(Metadata, traits), 32);
        assert_eq!(size_of::<MetadataExtension>(), 32);
        assert_eq!(size_of::<ApiVersion>(), 24);
        assert_eq!(offset_of!(Api, api_version), 16);
        assert_eq!(offset_of!(Api, internal_api), 40);
        assert_eq!(offset_of!(Api, error_create), 48);
        assert_eq!(
            offset_of!(ErrorCreateArgs, errc) + size_of::<i32>(),
            ERROR_CREATE_ARGS_SIZE
        );
    }
}
