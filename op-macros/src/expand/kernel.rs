//! `#[kernel]`: compile-time checks against the op, the function adapter
//! or `OpKernel` impl, and one registration per type combination.

use op_spec::DType;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::check::{CheckedKernel, KernelBody, KernelFnSignature, KernelParam};
use crate::dtypes;
use crate::parse::OpRef;
use crate::runtime_path::RuntimePath;

struct Registration {
    constraints: Vec<(String, DType)>,
    name: String,
    create: TokenStream,
}

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
    let type_params: Vec<&syn::Ident> = generics.type_params().map(|t| &t.ident).collect();
    let turbofish = if type_params.is_empty() {
        quote!()
    } else {
        quote!(::<#(#type_params),*>)
    };
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
    let call = quote!(#f #turbofish(ctx, #(#args),*));
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
    let combos: Vec<Vec<DType>> = if k.types.combos.is_empty() {
        vec![Vec::new()]
    } else {
        k.types
            .combos
            .iter()
            .map(|c| c.iter().map(|(d, _)| *d).collect())
            .collect()
    };
    let attr_names: Vec<String> = k.types.attrs.iter().map(|(n, _)| n.clone()).collect();
    let constraints = |combo: &[DType]| {
        attr_names
            .iter()
            .cloned()
            .zip(combo.iter().copied())
            .collect()
    };
    let rust_types = |combo: &[DType]| -> Vec<TokenStream> {
        combo
            .iter()
            .map(|d| dtypes::rust_type(*d, Span::call_site(), rt))
            .collect()
    };
    let type_list = |combo: &[DType]| {
        let names: Vec<&str> = combo.iter().map(|d| dtypes::rust_name(*d)).collect();
        if names.is_empty() {
            String::new()
        } else {
            format!("::<{}>", names.join(", "))
        }
    };

    let (item, support, registrations): (TokenStream, TokenStream, Vec<Registration>) = match &k
        .body
    {
        KernelBody::Fn { item, signature } => {
            let f = &item.sig.ident;
            let generic = item.sig.generics.type_params().next().is_some();
            let attrs_ty = match &signature.attrs_ty {
                Some(attrs) => quote!(#attrs),
                None => quote!(()),
            };
            let support = kernel_fn_adapter(item, signature, rt);
            let regs = combos
                .iter()
                .map(|combo| {
                    // A non-generic kernel is registered as is for each combination.
                    let tys = if generic { rust_types(combo) } else { Vec::new() };
                    let turbofish = if tys.is_empty() { quote!() } else { quote!(::<#(#tys),*>) };
                    let create = quote! {
                        |construction| #rt::FnKernel::<#attrs_ty>::create(construction, __kernel_adapter #turbofish)
                    };
                    Registration {
                        constraints: constraints(combo),
                        name: format!("{f}{}", type_list(combo)),
                        create,
                    }
                })
                .collect();
            (quote!(#item), support, regs)
        }
        KernelBody::Impl { item } => {
            let self_ty = &item.self_ty;
            let (impl_generics, _, where_clause) = item.generics.split_for_impl();
            let base = match &**self_ty {
                syn::Type::Path(p) => p
                    .path
                    .segments
                    .last()
                    .map(|s| s.ident.to_string())
                    .unwrap_or_default(),
                other => quote!(#other).to_string(),
            };
            let support = quote! {
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
            };
            let regs = combos
                .iter()
                .map(|combo| {
                    let generic = item.generics.type_params().next().is_some();
                    let tys = if generic {
                        rust_types(combo)
                    } else {
                        Vec::new()
                    };
                    let create = if tys.is_empty() {
                        quote!(__create_kernel)
                    } else {
                        quote!(__create_kernel::<#(#tys),*>)
                    };
                    Registration {
                        constraints: constraints(combo),
                        name: format!("{base}{}", type_list(combo)),
                        create,
                    }
                })
                .collect();
            (quote!(#item), support, regs)
        }
    };

    let op_name = match &k.op {
        OpRef::Path(p) => quote!(<#p as #rt::Op>::NAME),
        OpRef::Name(s) => quote!(#s),
    };
    let device = format_ident!("{}", k.device.variant_name());
    let host_memory = &k.host_memory;
    let checks = op_checks(k);
    let submits = registrations.iter().map(|r| {
        let constraints = r.constraints.iter().map(|(attr, dtype)| {
            let path = dtypes::dtype_path(*dtype, Span::call_site(), rt);
            quote!(#rt::TypeConstraint { attr: #attr, dtype: #path })
        });
        let (name, create) = (&r.name, &r.create);
        quote! {
            #rt::inventory::submit! {
                #rt::KernelRegistration {
                    op: #op_name,
                    device: #rt::DeviceType::#device,
                    constraints: &[#(#constraints),*],
                    host_memory: &[#(#host_memory),*],
                    name: #name,
                    create: #create,
                    file: ::core::file!(),
                    line: ::core::line!(),
                }
            }
        }
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
