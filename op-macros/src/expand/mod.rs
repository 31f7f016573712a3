//! Stage 3: code generation from checked models. Generated code reaches the
//! runtime only through the model's [`RuntimePath`] (`::op_core::__private`
//! unless the macro was given `crate = "..."`), bound to `rt` in each
//! function below and written `#rt::Item`.

use proc_macro2::{Span, TokenStream};
use quote::quote;

use op_spec::DType;

use crate::check::CheckedOp;
use crate::dtypes;
use crate::runtime_path::RuntimePath;

mod adapter;
mod fn_op;
mod gradient;
mod kernel;
mod lite_kernel;
mod op;
pub mod registration;
mod wrapper;

pub use fn_op::fn_op;
pub use gradient::gradient;
pub use kernel::kernel;
pub use lite_kernel::lite_kernel;
use op::op_items;

/// An identifier for `name`, raw when `name` is a keyword (`in` → `r#in`).
fn ident(name: &str, span: Span) -> syn::Ident {
    if syn::parse_str::<syn::Ident>(name).is_ok() {
        syn::Ident::new(name, span)
    } else if matches!(name, "self" | "Self" | "super" | "crate" | "_") {
        syn::Ident::new(&format!("{name}_"), span)
    } else {
        syn::Ident::new_raw(name, span)
    }
}
/// `::<f32, i64>`: the Rust types of a type combination, as generic
/// arguments (nothing for none).
fn turbofish(combo: &[DType], rt: &RuntimePath) -> TokenStream {
    if combo.is_empty() {
        return TokenStream::new();
    }
    let types = combo
        .iter()
        .map(|d| dtypes::rust_type(*d, Span::call_site(), rt));
    quote!(::<#(#types),*>)
}

/// `::<T, U>`: a generic function's own type parameters as its generic
/// arguments, for an adapter generic like it to call it (nothing for none).
fn own_type_params(generics: &syn::Generics) -> TokenStream {
    let params: Vec<&syn::Ident> = generics.type_params().map(|t| &t.ident).collect();
    if params.is_empty() {
        return TokenStream::new();
    }
    quote!(::<#(#params),*>)
}

/// `x` for one item, `(x, y, ..)` for several.
fn one_or_tuple(items: Vec<TokenStream>) -> TokenStream {
    match items.as_slice() {
        [one] => one.clone(),
        _ => quote!((#(#items),*)),
    }
}

/// `#[register_op]`: the struct (without its `#[attr]`s) and its op items.
pub fn register_op(item: &syn::ItemStruct, op: &CheckedOp) -> TokenStream {
    let items = op_items(op);
    quote! {
        #item
        #items
    }
}
