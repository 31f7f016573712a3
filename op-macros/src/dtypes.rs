//! The element types authors name in `types(...)`: Rust names (`f32`),
//! TensorFlow names (`float`) and TensorFlow's type groups
//! (`realnumbertype`), with the Rust type each stands for. The tables are
//! op-spec's ([`op_spec::dtype::RUST_TYPES`], [`TypeClass`]), which the
//! runtime follows too.

use op_spec::dtype::RustPath;
use op_spec::{DType, TypeClass};
use proc_macro2::{Span, TokenStream};
use quote::quote;

use crate::runtime_path::RuntimePath;

/// The dtype named `name` in Rust or TensorFlow spelling.
pub fn dtype_from_name(name: &str) -> Option<DType> {
    DType::from_rust_name(name)
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

/// A "did you mean" for an unknown type name: the Rust names an author
/// can write in `types(...)` (identifiers), the spec names and the groups.
pub fn suggest_type_name(name: &str) -> Option<&'static str> {
    let candidates = op_spec::dtype::RUST_TYPES
        .iter()
        .filter(|(_, _, path)| *path != RustPath::Bytes)
        .map(|(_, n, _)| *n)
        .chain(op_spec::dtype::ALL_TYPES.iter().map(|d| d.spec_name()))
        .chain(TypeClass::ALL.map(TypeClass::spec_name));
    op_spec::suggest::closest(name, candidates)
}

/// The type groups' names, for messages: `numbertype, realnumbertype, quantizedtype`.
pub fn type_class_names() -> String {
    TypeClass::ALL.map(TypeClass::spec_name).join(", ")
}

/// The Rust element type of `dtype`, by absolute path.
pub fn rust_type(dtype: DType, span: Span, rt: &RuntimePath) -> TokenStream {
    let path = match dtype.rust_type() {
        Some((name, RustPath::Primitive)) => {
            let name = syn::Ident::new(name, span);
            quote!(#name)
        }
        Some((name, RustPath::Runtime)) => {
            let name = syn::Ident::new(name, span);
            quote!(#rt::#name)
        }
        Some((_, RustPath::Bytes)) => quote!(::std::vec::Vec<u8>),
        None => quote!(()),
    };
    respan(path, span)
}

/// The Rust name of `dtype` as an author would write it, for kernel names.
pub fn rust_name(dtype: DType) -> &'static str {
    dtype
        .rust_type()
        .map_or_else(|| dtype.spec_name(), |(name, _)| name)
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
    DType::from_rust_name(&type_name(ty)?)
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
