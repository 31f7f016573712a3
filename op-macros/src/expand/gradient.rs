//! `#[gradient]`: the function as written, compile-time checks against the
//! op, and its registration with both instantiations (tensors for a tape,
//! graph outputs for `gradients`).
//!
//! The checks are the compiler's, on the author's tokens: `<Op as
//! op_core::Op>` on the op's path (an unknown name or a type that is not an
//! op is reported there), a `const` assertion on `N` in `Result<[Option<V>;
//! N]>` (the op's number of inputs), and one generic adapter whose
//! parameter and result are spanned on the function's (a parameter that is
//! not `&Gradient<'_, V>`, or a return type that is not one gradient per
//! input, is reported there, once).

use proc_macro2::TokenStream;
use quote::{ToTokens, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::check::CheckedGradient;
use crate::parse::OpRef;
use crate::runtime_path::RuntimePath;

/// The function, the checks against the op (at the item's level, so that
/// a failed one is rustc's "evaluation of `_` failed", not of `_::_`),
/// then, in one anonymous `const`, the adapter and an `inventory::submit!`
/// of its `GradientRegistration`.
pub fn gradient(g: &CheckedGradient) -> TokenStream {
    let rt = &g.runtime;
    let item = &g.item;
    let (op, checks) = match &g.op {
        OpRef::Path(path) => (
            quote!(<#path as #rt::Op>::NAME),
            count_check(path, g.count.as_ref(), rt),
        ),
        OpRef::Name(name) => (quote!(#name), TokenStream::new()),
    };
    let adapter = adapter(&item.sig, rt);
    quote! {
        #item
        #checks
        const _: () = {
            #adapter
            #rt::inventory::submit! {
                #rt::GradientRegistration::new(
                    #op,
                    __gradient_adapter::<#rt::Tensor>,
                    __gradient_adapter::<#rt::Output>,
                    ::core::file!(),
                    ::core::line!(),
                )
                .with_module_path(::core::module_path!())
            }
        };
    }
}

/// `__gradient_adapter<V>`: the function as a `GradientFn<V>`, generic
/// like it, so that a mistake in its parameter or return type is reported
/// once (not once per instantiation), on that parameter or return type.
fn adapter(sig: &syn::Signature, rt: &RuntimePath) -> TokenStream {
    let name = &sig.ident;
    let param_span = sig.inputs.first().map_or(name.span(), |p| match p {
        syn::FnArg::Typed(p) => p.ty.span(),
        syn::FnArg::Receiver(r) => r.span(),
    });
    let return_span = match &sig.output {
        syn::ReturnType::Type(_, ty) => ty.span(),
        syn::ReturnType::Default => name.span(),
    };
    let node = quote_spanned!(param_span=> __node);
    let result = quote_spanned!(return_span=> __result);
    // The author's name for the value type, so that messages read as the
    // function does (`Vec<V>`, not a generated name).
    let value = sig
        .generics
        .type_params()
        .next()
        .map_or_else(|| quote!(__V), |p| p.ident.to_token_stream());
    quote! {
        fn __gradient_adapter<#value: #rt::Value>(
            __node: &#rt::Gradient<'_, #value>,
        ) -> #rt::Result<::std::vec::Vec<::core::option::Option<#value>>> {
            let __result = #name::<#value>(#node);
            #rt::into_gradients(#result)
        }
    }
}

/// The `const` assertion, spanned on `count` (`N` in `[Option<V>; N]`),
/// that the op has exactly `N` inputs and none of them a list.
fn count_check(path: &syn::Path, count: Option<&syn::Expr>, rt: &RuntimePath) -> TokenStream {
    let Some(count) = count else {
        return TokenStream::new();
    };
    let op_text = quote!(#path).to_string().replace(' ', "");
    quote_spanned! {count.span()=>
        const _: () = {
            const __RETURNED: usize = #count;
            const __SIGNATURE: &#rt::OpSignature = &<#path as #rt::Op>::SIGNATURE;
            if !#rt::gradient_count_matches(__SIGNATURE, __RETURNED) {
                const __MESSAGE: &#rt::ConstMessage =
                    &#rt::gradient_count_message(#op_text, __SIGNATURE, __RETURNED);
                ::core::panic!("{}", __MESSAGE.as_str())
            }
        };
    }
}
