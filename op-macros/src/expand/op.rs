//! The items of an op: its `Op` and `OpAttrs` impls, its registration and
//! its typed wrapper.

use op_spec::{ArgType, AttrKind, DType, ListValue};
use proc_macro2::{Span, TokenStream};
use quote::quote;

use super::registration::{op_def_builder, op_registration};
use super::wrapper::wrapper;
use crate::check::CheckedOp;
use crate::dtypes;

/// The `Op` and `OpAttrs` impls, the registration and the typed wrapper.
pub fn op_items(op: &CheckedOp) -> TokenStream {
    let rt = &op.runtime;
    let CheckedOp {
        ident: ty,
        spec,
        def,
        fields,
        unit,
        ..
    } = op;
    let name = &spec.name.text;
    let builder = op_def_builder(spec, rt);

    let type_attrs = def
        .attrs
        .iter()
        .filter(|a| a.ty.kind == AttrKind::Type)
        .map(|a| {
            let attr_name = &a.name;
            let allowed = match &a.allowed_values {
                Some(ListValue::Type(types)) => {
                    let paths = types
                        .iter()
                        .map(|d| dtypes::dtype_path(*d, Span::call_site(), rt));
                    quote!(::core::option::Option::Some(&[#(#paths),*]))
                }
                _ => quote!(::core::option::Option::None),
            };
            quote!(#rt::TypeAttrSignature { name: #attr_name, allowed: #allowed })
        });
    let input_names = def.inputs.iter().map(|a| &a.name);
    let output_names = def.outputs.iter().map(|a| &a.name);
    let is_resource = |a: &&op_spec::ArgDef| a.ty == ArgType::Fixed(DType::Resource);
    let resource_inputs = def.inputs.iter().filter(is_resource).map(|a| &a.name);
    let resource_outputs = def.outputs.iter().filter(is_resource).map(|a| &a.name);
    let list_inputs = def.inputs.iter().filter(|a| a.is_list()).map(|a| &a.name);

    let construct = if *unit {
        quote!(Self)
    } else {
        let inits = fields.iter().map(|f| {
            let (field, attr, fty) = (&f.ident, &f.attr, &f.ty);
            quote!(#field: node.get_attr::<#fty>(#attr)?)
        });
        quote!(Self { #(#inits),* })
    };

    let wrapper = wrapper(op);
    let registration = op_registration(op);
    quote! {
        impl #rt::Op for #ty {
            const NAME: &'static str = #name;
            const SIGNATURE: #rt::OpSignature = #rt::OpSignature {
                type_attrs: &[#(#type_attrs),*],
                inputs: &[#(#input_names),*],
                list_inputs: &[#(#list_inputs),*],
                outputs: &[#(#output_names),*],
                resource_inputs: &[#(#resource_inputs),*],
                resource_outputs: &[#(#resource_outputs),*],
            };
            fn op_def() -> ::core::result::Result<#rt::OpDef, #rt::SpecErrors> {
                #builder.build()
            }
        }

        impl #rt::OpAttrs for #ty {
            fn from_node(node: &#rt::OpInstance) -> #rt::Result<Self> {
                ::core::result::Result::Ok(#construct)
            }
        }

        #registration

        #wrapper
    }
}
