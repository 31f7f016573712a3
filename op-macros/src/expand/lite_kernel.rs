//! `#[lite_kernel]`: the impl as written, then, in one anonymous `const`,
//! the kernel's registration in a static and its `inventory::submit!`.
//!
//! A kernel without state is an `FnOp` of its two functions; one with state
//! gets `LiteNode` implemented by forwarding to its methods, and an
//! `InitOp` of its `init`. Each function is named with its own identifier's
//! span, so a phase of the wrong type is reported on the author's function.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use crate::check::{CheckedLiteKernel, LiteOpName};

/// The impl, its `LiteNode` forwarding (with state) and its registration.
pub fn lite_kernel(k: &CheckedLiteKernel) -> TokenStream {
    let rt = &k.runtime;
    let item = &k.item;
    let ty = &item.self_ty;
    let (prepare, invoke) = (&k.prepare, &k.invoke);
    let name = match &k.name {
        LiteOpName::Builtin { code, name } => {
            quote_spanned!(name.span()=> #rt::LiteOpName::Builtin(#rt::BuiltinOperator(#code)))
        }
        LiteOpName::Custom(name) => quote!(#rt::LiteOpName::Custom(#name)),
    };
    let (min, max) = k.versions;
    let (node, op) = match &k.init {
        None => {
            let prepare_fn = quote_spanned!(prepare.span()=> <#ty>::#prepare);
            let invoke_fn = quote_spanned!(invoke.span()=> <#ty>::#invoke);
            (
                TokenStream::new(),
                quote! {
                    static __LITE_OP: #rt::FnOp = #rt::FnOp::new(#prepare_fn, #invoke_fn);
                },
            )
        }
        Some(init) => {
            let prepare_call = quote_spanned!(prepare.span()=> <#ty>::#prepare(self, ctx));
            let invoke_call = quote_spanned!(invoke.span()=> <#ty>::#invoke(self, ctx));
            let init_fn = quote_spanned!(init.span()=> <#ty>::#init);
            (
                quote! {
                    impl #rt::LiteNode for #ty {
                        fn prepare(&mut self, ctx: &mut #rt::PrepareContext<'_>) -> #rt::Result<()> {
                            #prepare_call
                        }
                        fn invoke(&mut self, ctx: &mut #rt::InvokeContext<'_>) -> #rt::Result<()> {
                            #invoke_call
                        }
                    }
                },
                quote! {
                    static __LITE_OP: #rt::InitOp<#ty> = #rt::InitOp::new(#init_fn);
                },
            )
        }
    };
    quote! {
        #item

        const _: () = {
            #node
            #op
            #rt::inventory::submit! {
                #rt::LiteRegistration::new(
                    #name,
                    #rt::Versions { min: #min, max: #max },
                    &__LITE_OP,
                    ::core::file!(),
                    ::core::line!(),
                    ::core::module_path!(),
                )
            }
        };
    }
}
