//! `#[op]`: the function, its op struct and items, and its kernel.

use op_spec::DeviceType;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::registration::{KernelRegistration, kernel_name, kernel_registration};
use super::{adapter, op_items, turbofish};
use crate::check::CheckedFnOp;

/// `#[op]`: the function, the op struct and items, the kernel adapter and
/// one kernel per type combination.
pub fn fn_op(f: &CheckedFnOp) -> TokenStream {
    let rt = &f.op.runtime;
    let CheckedFnOp {
        op,
        function,
        signature,
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

    let adapter = format_ident!("__{}_kernel", fn_ident);
    let adapter_fn = adapter::adapter(&adapter, &function.sig, signature, &quote!(#op_ty), rt);
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
