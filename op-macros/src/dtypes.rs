//! The element types authors name in `types(...)`: Rust names (`f32`),
//! TensorFlow names (`float`) and TensorFlow's type groups
//! (`realnumbertype`), with the Rust type each stands for.

use op_spec::{DType, TypeClass};
use proc_macro2::{Span, TokenStream};
use quote::quote;

use crate::runtime_path::RuntimePath;

/// `(Rust name, dtype)`: the names accepted besides the spec names.
const RUST_NAMES: &[(&str, DType)] = &[
    ("f32", DType::F32),
    ("f64", DType::F64),
    ("i8", DType::I8),
    ("i16", DType::I16),
    ("i32", DType::I32),
    ("i64", DType::I64),
    ("u8", DType::U8),
    ("u16", DType::U16),
    ("u32", DType::U32),
    ("u64", DType::U64),
    ("f16", DType::F16),
    ("bf16", DType::BF16),
    ("Complex64", DType::Complex64),
    ("Complex128", DType::Complex128),
    ("QInt8", DType::QInt8),
    ("QUInt8", DType::QUInt8),
    ("QInt16", DType::QInt16),
    ("QUInt16", DType::QUInt16),
    ("QInt32", DType::QInt32),
    ("ResourceHandle", DType::Resource),
];

/// The dtype named `name` in Rust or TensorFlow spelling.
pub fn dtype_from_name(name: &str) -> Option<DType> {
    RUST_NAMES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, d)| *d)
        .or_else(|| DType::from_spec_name(name))
        .filter(|d| *d != DType::Variant)
}

/// The dtypes a name stands for: one for a type, several for a group.
pub fn expand_type_name(name: &str) -> Option<Vec<DType>> {
    if let Some(dtype) = dtype_from_name(name) {
        return Some(vec![dtype]);
    }
    TypeClass::from_spec_name(name).map(|class| class.types().to_vec())
}

/// A "did you mean" for an unknown type name.
pub fn suggest_type_name(name: &str) -> Option<&'static str> {
    let candidates = RUST_NAMES
        .iter()
        .map(|(n, _)| *n)
        .chain(op_spec::dtype::ALL_TYPES.iter().map(|d| d.spec_name()))
        .chain(["numbertype", "realnumbertype", "quantizedtype"]);
    op_spec::suggest::closest(name, candidates)
}

/// The Rust element type of `dtype`, by absolute path.
pub fn rust_type(dtype: DType, span: Span, rt: &RuntimePath) -> TokenStream {
    let path = match dtype {
        DType::F32 => quote!(f32),
        DType::F64 => quote!(f64),
        DType::I8 => quote!(i8),
        DType::I16 => quote!(i16),
        DType::I32 => quote!(i32),
        DType::I64 => quote!(i64),
        DType::U8 => quote!(u8),
        DType::U16 => quote!(u16),
        DType::U32 => quote!(u32),
        DType::U64 => quote!(u64),
        DType::Bool => quote!(bool),
        DType::String => quote!(::std::vec::Vec<u8>),
        DType::F16 => quote!(#rt::f16),
        DType::BF16 => quote!(#rt::bf16),
        DType::Complex64 => quote!(#rt::Complex64),
        DType::Complex128 => quote!(#rt::Complex128),
        DType::QInt8 => quote!(#rt::QInt8),
        DType::QUInt8 => quote!(#rt::QUInt8),
        DType::QInt16 => quote!(#rt::QInt16),
        DType::QUInt16 => quote!(#rt::QUInt16),
        DType::QInt32 => quote!(#rt::QInt32),
        DType::Resource => quote!(#rt::ResourceHandle),
        DType::Variant => quote!(()),
    };
    respan(path, span)
}

/// The Rust name of `dtype` as an author would write it, for kernel names.
pub fn rust_name(dtype: DType) -> &'static str {
    match dtype {
        DType::String => "Vec<u8>",
        DType::Bool => "bool",
        other => RUST_NAMES
            .iter()
            .find(|(_, d)| *d == other)
            .map_or_else(|| other.spec_name(), |(n, _)| *n),
    }
}

/// `::op_core::__private::DType::F32` (through `rt`).
pub fn dtype_path(dtype: DType, span: Span, rt: &RuntimePath) -> TokenStream {
    let variant = syn::Ident::new(&format!("{dtype:?}"), span);
    quote::quote_spanned!(span=> #rt::DType::#variant)
}

/// The dtype of a Rust element type written in a signature (`f32`,
/// `op_core::f16`, `Vec<u8>`), if it is one.
pub fn dtype_of_rust_type(ty: &syn::Type) -> Option<DType> {
    if let Some(mut args) = type_args(ty, &["Vec"]) {
        // Vec<u8>: the element type of string tensors.
        return (args.next().and_then(type_name)? == "u8").then_some(DType::String);
    }
    let name = type_name(ty)?;
    RUST_NAMES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, d)| *d)
        .or_else(|| (name == "bool").then_some(DType::Bool))
}

/// The name of a path type's last segment: `Vec` for `std::vec::Vec<u8>`.
pub fn type_name(ty: &syn::Type) -> Option<String> {
    match ty {
        syn::Type::Path(path) => Some(path.path.segments.last()?.ident.to_string()),
        _ => None,
    }
}

/// The type arguments of `ty` when its last segment is one of `names`:
/// `u8` for `Vec<u8>` with `names = ["Vec"]`.
pub fn type_args<'t>(
    ty: &'t syn::Type,
    names: &[&str],
) -> Option<impl Iterator<Item = &'t syn::Type>> {
    let syn::Type::Path(path) = ty else {
        return None;
    };
    let last = path.path.segments.last()?;
    if !names.iter().any(|n| last.ident == n) {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    Some(args.args.iter().filter_map(|a| match a {
        syn::GenericArgument::Type(t) => Some(t),
        _ => None,
    }))
}

fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut t| {
            t.set_span(span);
            t
        })
        .collect()
}
