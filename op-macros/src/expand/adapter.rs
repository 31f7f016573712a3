//! The adapter between the runtime and a wrapped function, generated from
//! the shared signature model for `#[kernel]` functions and `#[op]`
//! functions alike: `fn(ctx, attrs) -> Result<()>`, generic like the
//! function, which feeds each parameter, calls the function, and puts what
//! it returns in the outputs.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::own_type_params;
use crate::check::{Element, FnSignature, Output, Param, ReturnValue};
use crate::runtime_path::RuntimePath;

/// `fn #name(ctx, attrs: &#attrs_ty) -> Result<()>`, calling `function`.
pub fn adapter(
    name: &syn::Ident,
    function: &syn::Signature,
    signature: &FnSignature,
    attrs_ty: &TokenStream,
    rt: &RuntimePath,
) -> TokenStream {
    let generics = adapter_generics(&function.generics, signature, rt);
    let (impl_generics, _, where_clause) = generics.split_for_impl();
    let mut reads = Vec::new();
    let mut args = Vec::new();
    let mut tensor_inputs = 0;
    for (i, param) in signature.params.iter().enumerate() {
        let (read, arg) = feed(param, i, &mut tensor_inputs, rt);
        reads.extend(read);
        args.push(arg);
    }
    // A device's context borrows `ctx` for the call: made after every
    // other read from `ctx`.
    if let Some(ty) = signature.params.iter().find_map(|p| match p {
        Param::DeviceContext(ty) => Some(ty),
        _ => None,
    }) {
        let make = quote_spanned! {ty.span()=>
            <#ty as #rt::FromKernelContext<'_, '_>>::from_kernel_context
        };
        reads.push(quote! {
            let mut __device_ctx = #make(ctx)?;
        });
    }
    let f = &function.ident;
    let own_params = own_type_params(&function.generics);
    let call = quote!(#f #own_params(#(#args),*));
    let body = match &signature.returns.value {
        ReturnValue::Nothing if signature.returns.fallible => quote! {
            #(#reads)*
            #call
        },
        ReturnValue::Nothing => quote! {
            #(#reads)*
            #call;
            ::core::result::Result::Ok(())
        },
        ReturnValue::Stored(ty) => {
            let store = quote_spanned! {ty.span()=> <#ty as #rt::KernelReturn>::store};
            let question = signature.returns.fallible.then(|| quote!(?));
            quote! {
                #(#reads)*
                let __output = #call #question;
                #store(__output, ctx)
            }
        }
        ReturnValue::Outputs(outputs) => {
            let question = signature.returns.fallible.then(|| quote!(?));
            let sets = set_outputs(outputs, rt);
            // The views borrow `ctx` until the call returns; the outputs
            // are set after.
            quote! {
                let result = {
                    #(#reads)*
                    #call #question
                };
                #(#sets)*
                ::core::result::Result::Ok(())
            }
        }
    };
    quote! {
        #[allow(non_snake_case, unused_variables, clippy::needless_borrow, clippy::multiple_bound_locations)]
        fn #name #impl_generics (
            ctx: &mut #rt::KernelContext<'_>,
            attrs: &#attrs_ty,
        ) -> #rt::Result<()> #where_clause {
            #body
        }
    }
}

/// The function's generics, each type parameter bound by `Element` when
/// the adapter reads or writes tensors of it (a view needs the bound).
fn adapter_generics(
    generics: &syn::Generics,
    signature: &FnSignature,
    rt: &RuntimePath,
) -> syn::Generics {
    let mut generics = generics.clone();
    if signature.uses_elements() {
        let params: Vec<syn::Ident> = generics.type_params().map(|p| p.ident.clone()).collect();
        let where_clause = generics.make_where_clause();
        for param in params {
            where_clause
                .predicates
                .push(syn::parse_quote!(#param: #rt::Element));
        }
    }
    generics
}

/// How the adapter feeds one parameter: what it reads first, if anything,
/// and the argument. `tensor_inputs` counts the tensor inputs fed so far,
/// which take the op's inputs in order.
fn feed(
    param: &Param,
    index: usize,
    tensor_inputs: &mut usize,
    rt: &RuntimePath,
) -> (Option<TokenStream>, TokenStream) {
    match param {
        Param::Context => (None, quote!(ctx)),
        Param::DeviceContext(_) => (None, quote!(&mut __device_ctx)),
        Param::Attrs(_) => (None, quote!(attrs)),
        Param::Resource { input, ty } => {
            let var = format_ident!("__resource_{}", index);
            // Only the path carries the author's span (for a "not a
            // resource" error on their type): `ctx` must keep the
            // adapter's hygiene, or a kernel written inside a
            // `macro_rules!` would not find it.
            let fetch = quote_spanned! {ty.span()=>
                #rt::KernelContext::resource_by_name::<#ty>
            };
            let read = quote! {
                let #var = #fetch(ctx, #input)?;
            };
            (Some(read), quote!(&*#var))
        }
        Param::Tensor {
            ident,
            element,
            list,
        } => {
            let element = element_type(element);
            let k = *tensor_inputs;
            *tensor_inputs += 1;
            if *list {
                let read = quote! {
                    let #ident = ctx.input_arg(#k)?
                        .iter()
                        .map(|t| t.view::<#element>())
                        .collect::<#rt::Result<::std::vec::Vec<_>>>()?;
                };
                (Some(read), quote!(&#ident))
            } else {
                let read = quote!(let #ident = ctx.input_arg(#k)?[0].view::<#element>()?;);
                (Some(read), quote!(#ident))
            }
        }
        Param::Attr { field, by_ref } => {
            let name = &field.ident;
            let arg = if *by_ref {
                quote!(&attrs.#name)
            } else {
                quote!(::core::clone::Clone::clone(&attrs.#name))
            };
            (None, arg)
        }
    }
}

/// The Rust element type of a tensor: the type parameter, or the fixed
/// type as written.
fn element_type(element: &Element) -> TokenStream {
    match element {
        Element::Generic(g) => quote!(#g),
        Element::Fixed(_, ty) => quote!(#ty),
    }
}

/// Sets each output from `result`: one value, or a tuple of them.
fn set_outputs(outputs: &[Output], rt: &RuntimePath) -> Vec<TokenStream> {
    let to_tensor = |out: &Output, value: TokenStream| {
        if out.scalar {
            quote!(#rt::Tensor::scalar(#value))
        } else {
            quote!(#rt::Tensor::from_array(#value))
        }
    };
    if let [only] = outputs {
        let tensor = to_tensor(only, quote!(result));
        return vec![quote!(ctx.set_output(0, #tensor)?;)];
    }
    let names: Vec<syn::Ident> = (0..outputs.len())
        .map(|i| format_ident!("output_{}", i))
        .collect();
    let mut sets = vec![quote!(let (#(#names),*) = result;)];
    for (i, (name, out)) in names.iter().zip(outputs).enumerate() {
        let tensor = to_tensor(out, quote!(#name));
        sets.push(quote!(ctx.set_output(#i, #tensor)?;));
    }
    sets
}
