//! `#[op]`: the function, its op struct and items, and its kernel.

use op_spec::DeviceType;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::registration::{KernelRegistration, kernel_name, kernel_registration};
use super::{op_items, own_type_params, turbofish};
use crate::check::{CheckedFnOp, Element, FnParam};

/// `#[op]`: the function, the op struct and items, the kernel adapter and
/// one kernel per type combination.
pub fn fn_op(f: &CheckedFnOp) -> TokenStream {
    let rt = &f.op.runtime;
    let CheckedFnOp {
        op,
        function,
        params,
        outputs,
        fallible,
        types,
    } = f;
    let op_ty = &op.ident;
    let vis = &op.vis;
    let fn_ident = &function.sig.ident;
    let fields = op.fields.iter().map(|field| {
        let (name, ty) = (&field.ident, &field.ty);
        let doc = format!("The value of attr `{}`.", field.attr);
        quote!(#[doc = #doc] pub #name: #ty)
    });
    let struct_doc = format!(
        "Op `{}`, declared by [`{fn_ident}`]: run it with [`{op_ty}::call`]; its fields are its attrs.",
        op.def.name
    );
    let op_struct = if op.unit {
        quote!(#[doc = #struct_doc] #vis struct #op_ty;)
    } else {
        quote!(#[doc = #struct_doc] #vis struct #op_ty { #(#fields),* })
    };
    let items = op_items(op);

    // The adapter: tensors in, function call, tensors out.
    let element_ty = |e: &Element| match e {
        Element::Generic(g) => quote!(#g),
        Element::Fixed(_, ty) => quote!(#ty),
    };
    let mut reads = Vec::new();
    let mut args = Vec::new();
    let mut input_arg = 0usize;
    for param in params {
        match param {
            FnParam::Tensor {
                ident,
                element,
                list,
            } => {
                let ety = element_ty(element);
                let k = input_arg;
                input_arg += 1;
                if *list {
                    reads.push(quote! {
                        let #ident = ctx.input_arg(#k)?
                            .iter()
                            .map(|t| t.view::<#ety>())
                            .collect::<#rt::Result<::std::vec::Vec<_>>>()?;
                    });
                    args.push(quote!(&#ident));
                } else {
                    reads.push(quote!(let #ident = ctx.input_arg(#k)?[0].view::<#ety>()?;));
                    args.push(quote!(#ident));
                }
            }
            FnParam::Attr { field, by_ref } => {
                let name = &field.ident;
                args.push(if *by_ref {
                    quote!(&attrs.#name)
                } else {
                    quote!(::core::clone::Clone::clone(&attrs.#name))
                });
            }
        }
    }
    let generics = &function.sig.generics;
    let generic_names: Vec<&syn::Ident> = generics.type_params().map(|p| &p.ident).collect();
    let own_params = own_type_params(generics);
    let mut where_clause = generics
        .where_clause
        .clone()
        .unwrap_or_else(|| syn::parse_quote!(where));
    for g in &generic_names {
        where_clause
            .predicates
            .push(syn::parse_quote!(#g: #rt::Element));
    }
    let params_decl = &generics.params;
    let call = quote!(#fn_ident #own_params(#(#args),*));
    let result = if *fallible { quote!(#call?) } else { call };
    let to_tensor = |out: &crate::check::FnOutput, value: TokenStream| {
        if out.scalar {
            quote!(#rt::Tensor::scalar(#value))
        } else {
            quote!(#rt::Tensor::from_array(#value))
        }
    };
    let sets = if outputs.len() == 1 {
        let tensor = to_tensor(&outputs[0], quote!(result));
        vec![quote!(ctx.set_output(0, #tensor)?;)]
    } else {
        let names: Vec<syn::Ident> = (0..outputs.len())
            .map(|i| format_ident!("output_{}", i))
            .collect();
        let mut sets = vec![quote!(let (#(#names),*) = result;)];
        for (i, (name, out)) in names.iter().zip(outputs).enumerate() {
            let tensor = to_tensor(out, quote!(#name));
            sets.push(quote!(ctx.set_output(#i, #tensor)?;));
        }
        sets
    };
    let adapter = format_ident!("__{}_kernel", fn_ident);
    let adapter_fn = quote! {
        #[allow(non_snake_case, clippy::needless_borrow, clippy::multiple_bound_locations)]
        fn #adapter<#params_decl>(
            ctx: &mut #rt::KernelContext<'_>,
            attrs: &#op_ty,
        ) -> #rt::Result<()> #where_clause {
            let _ = attrs;
            let result = {
                #(#reads)*
                #result
            };
            #(#sets)*
            ::core::result::Result::Ok(())
        }
    };
    let op_name = &op.def.name;
    let op_name = quote!(#op_name);
    let submits = types.each().into_iter().map(|combo| {
        let types_of_combo = turbofish(&combo, rt);
        let registration = KernelRegistration {
            op: &op_name,
            device: DeviceType::Cpu,
            constraints: types.constraints(&combo),
            host_memory: &[],
            name: kernel_name(&fn_ident.to_string(), &combo),
            create: quote! {
                |construction| #rt::FnKernel::<#op_ty>::create(construction, #adapter #types_of_combo)
            },
        };
        kernel_registration(&registration, rt)
    });
    quote! {
        #function
        #op_struct
        #items
        const _: () = {
            #adapter_fn
            #(#submits)*
        };
    }
}
