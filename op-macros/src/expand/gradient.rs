//! `#[gradient]`: the function as written, and its registration with both
//! instantiations (tensors for a tape, graph outputs for `gradients`).

use proc_macro2::TokenStream;
use quote::quote;

use crate::check::CheckedGradient;
use crate::parse::OpRef;

/// The function, then an `inventory::submit!` of its
/// `GradientRegistration`.
pub fn gradient(g: &CheckedGradient) -> TokenStream {
    let rt = &g.runtime;
    let item = &g.item;
    let name = &item.sig.ident;
    let op = match &g.op {
        OpRef::Path(path) => quote!(<#path as #rt::Op>::NAME),
        OpRef::Name(name) => quote!(#name),
    };
    quote! {
        #item

        #rt::inventory::submit! {
            #rt::GradientRegistration::new(
                #op,
                |g| #rt::into_gradients(#name::<#rt::Tensor>(g)),
                |g| #rt::into_gradients(#name::<#rt::Output>(g)),
                ::core::file!(),
                ::core::line!(),
            )
        }
    }
}
