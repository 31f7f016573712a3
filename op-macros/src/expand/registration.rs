//! The registrations every macro emits: the op's `OpDefBuilder` chain, its
//! `inventory::submit!` of an `OpRegistration`, and a kernel's
//! `inventory::submit!` of a `KernelRegistration`. One function each, so
//! that `#[register_op]`, `#[op]`, `#[kernel]` and `op_def!` register the
//! same way, and a new registration field is one edit.

use op_spec::{DType, DeviceType};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};

use crate::check::{CheckedOp, ShapeFnModel};
use crate::dtypes;
use crate::runtime_path::RuntimePath;
use crate::spec::OpSpec;

/// `OpDefBuilder::new(name).attr(..)...`: the spec strings as written, the
/// doc and the flags; `Op::op_def` calls `.build()` on it, and `op_def!`
/// hands it to the author.
pub fn op_def_builder(spec: &OpSpec, rt: &RuntimePath) -> TokenStream {
    let name = &spec.name.text;
    let attrs = spec.attrs.iter().map(|a| &a.text);
    let inputs = spec.inputs.iter().map(|a| &a.text);
    let outputs = spec.outputs.iter().map(|a| &a.text);
    let full_types = spec.full_types.iter().map(|a| &a.text);
    let doc = spec.doc.as_ref().map(|d| {
        let text = &d.text;
        quote!(.doc(#text))
    });
    let flags = spec.flags.setters().map(|(setter, _)| {
        let setter = format_ident!("{setter}");
        quote!(.#setter())
    });
    let deprecated = spec
        .flags
        .deprecated
        .as_ref()
        .map(|(version, explanation)| quote!(.deprecated(#version, #explanation)));
    quote! {
        #rt::OpDefBuilder::new(#name)
            #(.attr(#attrs))*
            #(.input(#inputs))*
            #(.output(#outputs))*
            #(.full_type(#full_types))*
            #doc
            #(#flags)*
            #deprecated
    }
}

/// The op's `inventory::submit!`: its name, its `Op::op_def` and its shape
/// function, with where it was declared; and, for a `not_differentiable`
/// op, the `GradientRegistration` saying so.
pub fn op_registration(op: &CheckedOp) -> TokenStream {
    let rt = &op.runtime;
    let ty = &op.ident;
    let name = &op.spec.name.text;
    let with_shape_fn = match &op.shape_fn {
        None => quote!(),
        Some(ShapeFnModel::Library(name)) => {
            quote!(.with_shape_fn(#rt::shape_library::#name))
        }
        Some(ShapeFnModel::Custom(expr)) => quote!(.with_shape_fn(#expr)),
    };
    let not_differentiable = op.spec.flags.not_differentiable.then(|| {
        quote! {
            #rt::inventory::submit! {
                #rt::GradientRegistration::not_differentiable(
                    #name,
                    ::core::file!(),
                    ::core::line!(),
                )
                .with_module_path(::core::module_path!())
            }
        }
    });
    quote! {
        #rt::inventory::submit! {
            #rt::OpRegistration::new(
                #name,
                <#ty as #rt::Op>::op_def,
                ::core::file!(),
                ::core::line!(),
            )
            #with_shape_fn
            .with_module_path(::core::module_path!())
        }
        #not_differentiable
    }
}

/// One kernel registration: what `#[kernel]` and `#[op]` say about a
/// kernel, for one type combination.
pub struct KernelRegistration<'a> {
    /// The op's name: `<MyOp as Op>::NAME` or a string literal.
    pub op: &'a TokenStream,
    pub device: DeviceType,
    /// `(attr, dtype)` for each constrained attr.
    pub constraints: Vec<(&'a str, DType)>,
    pub host_memory: &'a [syn::LitStr],
    /// The kernel's name in messages: `zero_out::<f32>`.
    pub name: String,
    /// The expression that creates the kernel from a `KernelConstruction`.
    pub create: TokenStream,
}

/// A kernel's name in messages: `zero_out::<f32, i64>` for the kernel
/// `zero_out` registered for `(f32, i64)`, as an author would write it.
pub fn kernel_name(base: &str, combo: &[DType]) -> String {
    if combo.is_empty() {
        return base.to_owned();
    }
    let names: Vec<&str> = combo.iter().map(|d| dtypes::rust_name(*d)).collect();
    format!("{base}::<{}>", names.join(", "))
}

/// The kernel's `inventory::submit!`.
pub fn kernel_registration(k: &KernelRegistration<'_>, rt: &RuntimePath) -> TokenStream {
    let constraints = k.constraints.iter().map(|(attr, dtype)| {
        let path = dtypes::dtype_path(*dtype, Span::call_site(), rt);
        quote!(#rt::TypeConstraint::new(#attr, #path))
    });
    let KernelRegistration {
        op,
        host_memory,
        name,
        create,
        ..
    } = k;
    let device = format_ident!("{}", k.device.variant_name());
    quote! {
        #rt::inventory::submit! {
            #rt::KernelRegistration::new(
                #op,
                #rt::DeviceType::#device,
                #name,
                #create,
                ::core::file!(),
                ::core::line!(),
            )
            .with_constraints(&[#(#constraints),*])
            .with_host_memory(&[#(#host_memory),*])
            .with_module_path(::core::module_path!())
        }
    }
}
