//! `#[kernel]`: compile-time checks against the op, the function adapter
//! or `OpKernel` impl, and one registration per type combination.

use op_spec::DType;
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::registration::{KernelRegistration, kernel_name, kernel_registration};
use super::{own_type_params, turbofish};
use crate::check::{CheckedKernel, KernelBody, KernelFnSignature, KernelParam};
use crate::dtypes;
use crate::parse::OpRef;
use crate::runtime_path::RuntimePath;

/// The compile-time checks of a kernel against its op, when it names the
/// op's type: each constrained attr and type, each `#[resource]` input, an
/// `Arc<R>` return and each `host_memory` arg, as `const` panics on the
/// author's token.
fn op_checks(k: &CheckedKernel) -> TokenStream {
    let rt = &k.runtime;
    let OpRef::Path(path) = &k.op else {
        return TokenStream::new();
    };
    let op_text = quote!(#path).to_string().replace(' ', "");
    let signature = quote!(<#path as #rt::Op>::SIGNATURE);
    let mut checks = Vec::new();
    for (i, (attr, attr_span)) in k.types.attrs.iter().enumerate() {
        let message = if k.types.named.get(i).copied().unwrap_or(true) {
            format!(
                "op `{op_text}` has no `type` or `list(type)` attr named `{attr}`: name one of its type attrs, as in `types(T = [f32])`, or remove `types(...)` if it has none"
            )
        } else {
            format!(
                "op `{op_text}` has no type attr `{attr}`, which types listed without an attr name are for: name the op's type attr, as in `types(out_type = [f32, i32])`, or remove `types(...)` if the op has none"
            )
        };
        checks.push(quote_spanned! {*attr_span=>
            const _: () = if !#rt::has_type_attr(&#signature, #attr) {
                ::core::panic!(#message)
            };
        });
        let mut seen = Vec::new();
        for combo in &k.types.combos {
            let (dtype, span) = combo[i];
            if seen.contains(&dtype) {
                continue;
            }
            seen.push(dtype);
            let message = format!(
                "op `{op_text}` does not allow `{}` for attr `{attr}`: add `{}` to the attr's constraint in the op, or remove it from `types(...)`",
                dtypes::rust_name(dtype),
                dtype.spec_name()
            );
            let path = dtypes::dtype_path(dtype, span, rt);
            checks.push(quote_spanned! {span=>
                const _: () = if #rt::has_type_attr(&#signature, #attr)
                    && !#rt::type_attr_allows(&#signature, #attr, #path)
                {
                    ::core::panic!(#message)
                };
            });
        }
    }
    if let KernelBody::Fn {
        signature: kernel_fn,
        ..
    } = &k.body
    {
        for param in &kernel_fn.params {
            let KernelParam::Resource { input, .. } = param else {
                continue;
            };
            let name = input.value();
            let missing = format!(
                "op `{op_text}` has no input named `{name}`: a `#[resource]` parameter receives the op's `resource` input of its name; rename the parameter, or write `#[resource(input = \"...\")]`"
            );
            let not_resource = format!(
                "input `{name}` of op `{op_text}` is not a `resource`: a `#[resource]` parameter receives the resource that a `resource` input's handle refers to; read other inputs from `ctx`"
            );
            checks.push(quote_spanned! {input.span()=>
                const _: () = if !#rt::has_input(&#signature, #input) {
                    ::core::panic!(#missing)
                } else if !#rt::has_resource_input(&#signature, #input) {
                    ::core::panic!(#not_resource)
                };
            });
        }
        if let Some(ty) = &kernel_fn.returns
            && dtypes::type_args(ty, &["Arc"]).is_some()
        {
            let message = format!(
                "op `{op_text}` has no `resource` output 0: a kernel returns `Arc<R>` (an owning handle in output 0) only for an op whose first output is a `resource`"
            );
            checks.push(quote_spanned! {ty.span()=>
                const _: () = if !#rt::first_output_is_resource(&#signature) {
                    ::core::panic!(#message)
                };
            });
        }
    }
    for arg in &k.host_memory {
        let message = format!(
            "op `{op_text}` has no input or output named `{}`: `host_memory` takes the names of the op's inputs and outputs",
            arg.value()
        );
        checks.push(quote_spanned! {arg.span()=>
            const _: () = if !#rt::has_arg(&#signature, #arg) {
                ::core::panic!(#message)
            };
        });
    }
    quote!(#(#checks)*)
}

/// The function every registration of a kernel function calls: generic
/// like it, it resolves each `#[resource]` parameter from its input's
/// handle, calls the function with the attrs and resources in its order,
/// and stores what it returns (`op_core::kernel::KernelReturn`) in output
/// 0 unless that is `()`.
fn kernel_fn_adapter(
    item: &syn::ItemFn,
    signature: &KernelFnSignature,
    rt: &RuntimePath,
) -> TokenStream {
    let f = &item.sig.ident;
    let generics = &item.sig.generics;
    let (impl_generics, _, where_clause) = generics.split_for_impl();
    let own_params = own_type_params(generics);
    let attrs_ty = match &signature.attrs_ty {
        Some(attrs) => quote!(#attrs),
        None => quote!(()),
    };
    let mut fetches = Vec::new();
    let mut args = Vec::new();
    for (i, param) in signature.params.iter().enumerate() {
        match param {
            KernelParam::Attrs => args.push(quote!(attrs)),
            KernelParam::Resource { input, ty } => {
                let var = format_ident!("__resource_{}", i);
                // Only the path carries the author's span (for a "not a
                // resource" error on their type): `ctx` must keep the
                // adapter's hygiene, or a kernel written inside a
                // `macro_rules!` would not find it.
                let fetch = quote_spanned! {ty.span()=>
                    #rt::KernelContext::resource_by_name::<#ty>
                };
                fetches.push(quote! {
                    let #var = #fetch(ctx, #input)?;
                });
                args.push(quote!(&*#var));
            }
        }
    }
    let call = quote!(#f #own_params(ctx, #(#args),*));
    let body = match &signature.returns {
        Some(ty) => {
            let store = quote_spanned! {ty.span()=> <#ty as #rt::KernelReturn>::store};
            quote! {
                let __output = #call?;
                #store(__output, ctx)
            }
        }
        None => call,
    };
    quote! {
        #[allow(non_snake_case, unused_variables)]
        fn __kernel_adapter #impl_generics (
            ctx: &mut #rt::KernelContext<'_>,
            attrs: &#attrs_ty,
        ) -> #rt::Result<()> #where_clause {
            #(#fetches)*
            #body
        }
    }
}

/// `#[kernel]`: the item, compile-time checks against the op, and one
/// registration per type combination.
pub fn kernel(k: &CheckedKernel) -> TokenStream {
    let rt = &k.runtime;
    let (item, support) = match &k.body {
        KernelBody::Fn { item, signature } => {
            (quote!(#item), kernel_fn_adapter(item, signature, rt))
        }
        KernelBody::Impl { item } => (quote!(#item), op_kernel_impl(item, rt)),
    };
    let op = match &k.op {
        OpRef::Path(p) => quote!(<#p as #rt::Op>::NAME),
        OpRef::Name(s) => quote!(#s),
    };
    let checks = op_checks(k);
    let submits = k.types.each().into_iter().map(|combo| {
        let registration = KernelRegistration {
            op: &op,
            device: k.device,
            constraints: k.types.constraints(&combo),
            host_memory: &k.host_memory,
            name: kernel_name(&k.body.name(), &combo),
            create: create_kernel(k, &combo),
        };
        kernel_registration(&registration, rt)
    });
    quote! {
        #item
        const _: () = {
            #checks
            #support
            #(#submits)*
        };
    }
}

/// The expression that creates the kernel for one type combination: the
/// function's adapter or the impl's `__create_kernel`, instantiated with
/// the combination's types. A kernel without type parameters is
/// registered as is for each combination.
fn create_kernel(k: &CheckedKernel, combo: &[DType]) -> TokenStream {
    let rt = &k.runtime;
    let types = if k.body.generics().type_params().next().is_some() {
        turbofish(combo, rt)
    } else {
        TokenStream::new()
    };
    match &k.body {
        KernelBody::Fn { signature, .. } => {
            let attrs_ty = match &signature.attrs_ty {
                Some(attrs) => quote!(#attrs),
                None => quote!(()),
            };
            quote! {
                |construction| #rt::FnKernel::<#attrs_ty>::create(construction, __kernel_adapter #types)
            }
        }
        KernelBody::Impl { .. } => quote!(__create_kernel #types),
    }
}

/// A kernel impl's `OpKernel` impl, and the function that creates it.
fn op_kernel_impl(item: &syn::ItemImpl, rt: &RuntimePath) -> TokenStream {
    let self_ty = &item.self_ty;
    let (impl_generics, _, where_clause) = item.generics.split_for_impl();
    quote! {
        impl #impl_generics #rt::OpKernel for #self_ty #where_clause {
            fn compute(&self, ctx: &mut #rt::KernelContext<'_>) -> #rt::Result<()> {
                <#self_ty>::compute(self, ctx)
            }
        }
        #[allow(non_snake_case)]
        fn __create_kernel #impl_generics (
            construction: &#rt::KernelConstruction<'_>,
        ) -> #rt::Result<::std::boxed::Box<dyn #rt::OpKernel>> #where_clause {
            ::core::result::Result::Ok(::std::boxed::Box::new(<#self_ty>::new(construction)?))
        }
    }
}
