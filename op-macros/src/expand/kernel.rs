//! `#[kernel]`: compile-time checks against the op, the function adapter
//! or `OpKernel` impl, and one registration per type combination.

use op_spec::DType;
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::adapter::adapter;
use super::registration::{KernelRegistration, kernel_name, kernel_registration};
use super::turbofish;
use super::wrapper::kernel_fn_marker;
use crate::check::{CheckedKernel, FnSignature, KernelBody, Param, ReturnValue};
use crate::dtypes;
use crate::parse::OpRef;
use crate::runtime_path::RuntimePath;

/// The compile-time checks of a kernel against its op, when it names the
/// op's type: each constrained attr and type, each `#[resource]` input, an
/// `Arc<R>` return and each `host_memory` arg, as `const` panics on the
/// author's token.
///
/// They are const panics, not `compile_error!`s, because the macro sees
/// only the op's path: its definition is another item, often in another
/// crate, which only the compiler reads. rustc reports every failed const
/// as `error[E0080]: evaluation panicked: <message>` with the label
/// "evaluation of `<const>` failed here"; a trait bound with
/// `#[diagnostic::on_unimplemented]` would add help lines about the trait,
/// so this is the least the compiler prints around the message.
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
            let Param::Resource { input, .. } = param else {
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
        if let Some(attrs_ty) = kernel_fn.attrs_ty() {
            checks.extend(attrs_check(path, &op_text, attrs_ty, k.body.generics()));
        }
        if let ReturnValue::Stored(ty) = &kernel_fn.returns.value
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

/// A kernel is created with its own op's attrs, parsed from the node: the
/// attrs of another op would be read from attrs the node does not have
/// ("no attr named 'lo'", at run time). So `attrs: &OtherOp` is a compile
/// error on the author's type, by a trait that only the op's type
/// implements (so an alias or another path to the op passes). None when
/// the type names the function's own generics, which an item outside the
/// function cannot see.
fn attrs_check(
    op: &syn::Path,
    op_text: &str,
    attrs_ty: &syn::Type,
    generics: &syn::Generics,
) -> Option<TokenStream> {
    if mentions_generics(attrs_ty, generics) {
        return None;
    }
    let attrs_text = quote!(#attrs_ty).to_string().replace(' ', "");
    let message = format!(
        "a kernel of op `{op_text}` takes that op's attrs, `attrs: &{op_text}`, not `&{attrs_text}`"
    );
    let label = format!("expected `{op_text}`, the op in `#[kernel(op = {op_text})]`");
    let note = format!(
        "the kernel is created with the attrs of each `{op_text}` node it runs: write `attrs: &{op_text}` (a kernel of another op names that op in `#[kernel(op = ...)]`)"
    );
    // The impl carries the op's span, so rustc's "the trait `OpOfThisKernel`
    // is implemented for `ZeroOut`" points at `op = ZeroOut`.
    let implemented = quote_spanned! {op.span()=>
        impl OpOfThisKernel for #op {}
    };
    Some(quote_spanned! {attrs_ty.span()=>
        const _: () = {
            #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
            trait OpOfThisKernel {
                const OK: () = ();
            }
            #implemented
            <#attrs_ty as OpOfThisKernel>::OK
        };
    })
}

/// Whether `ty` names one of `generics`' parameters (a type or lifetime).
fn mentions_generics(ty: &syn::Type, generics: &syn::Generics) -> bool {
    let names: Vec<String> = generics
        .params
        .iter()
        .map(|p| match p {
            syn::GenericParam::Type(t) => t.ident.to_string(),
            syn::GenericParam::Lifetime(l) => l.lifetime.ident.to_string(),
            syn::GenericParam::Const(c) => c.ident.to_string(),
        })
        .collect();
    fn walk(tokens: TokenStream, names: &[String]) -> bool {
        tokens.into_iter().any(|t| match t {
            proc_macro2::TokenTree::Ident(i) => names.contains(&i.to_string()),
            proc_macro2::TokenTree::Group(g) => walk(g.stream(), names),
            _ => false,
        })
    }
    !names.is_empty() && walk(quote!(#ty), &names)
}

/// `#[kernel]`: the item, compile-time checks against the op, and one
/// registration per type combination.
pub fn kernel(k: &CheckedKernel) -> TokenStream {
    let rt = &k.runtime;
    let (item, support) = match &k.body {
        KernelBody::Fn { item, signature } => {
            // The adapter every registration calls: it resolves each
            // `#[resource]` parameter from its input's handle, calls the
            // function with the attrs and resources in its order, and
            // stores what it returns (`op_core::kernel::KernelReturn`) in
            // output 0 unless that is `()`.
            let name = format_ident!("__kernel_adapter");
            let attrs_ty = attrs_type(signature);
            let adapter = adapter(&name, &item.sig, signature, &attrs_ty, rt);
            // The marker that a wrapper of the function's name, in this
            // module, finds: see `wrapper::kernel_fn_marker`.
            let marker = kernel_fn_marker(&item.sig.ident);
            // A kernel function named like a wrapper hides it: our error,
            // at the wrapper, without rustc's warning at the function
            // (which it gives for a public wrapper).
            let item = quote! {
                #[allow(hidden_glob_reexports)]
                #item
                #[doc(hidden)]
                #[allow(non_camel_case_types, dead_code)]
                struct #marker {}
                #[allow(dead_code)]
                impl #marker {
                    const HIDES_A_WRAPPER: bool = true;
                }
            };
            (item, adapter)
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
    // The checks stand at the item's level, not in the `const _` below: a
    // failed one is then rustc's "evaluation of `_` failed", not of `_::_`.
    quote! {
        #item
        #checks
        const _: () = {
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
            let attrs_ty = attrs_type(signature);
            quote! {
                |construction| #rt::FnKernel::<#attrs_ty>::create(construction, __kernel_adapter #types)
            }
        }
        KernelBody::Impl { .. } => quote!(__create_kernel #types),
    }
}

/// The attrs a kernel function's kernel is created with: its attrs
/// parameter's type, or none.
fn attrs_type(signature: &FnSignature) -> TokenStream {
    match signature.attrs_ty() {
        Some(attrs) => quote!(#attrs),
        None => quote!(()),
    }
}

/// A kernel impl's `OpKernel` impl, and the function that creates it.
/// A `fn may_block(&self) -> bool` in the impl overrides the trait's
/// default (a kernel that may wait for another).
fn op_kernel_impl(item: &syn::ItemImpl, rt: &RuntimePath) -> TokenStream {
    let self_ty = &item.self_ty;
    let (impl_generics, _, where_clause) = item.generics.split_for_impl();
    let has_may_block = item
        .items
        .iter()
        .any(|i| matches!(i, syn::ImplItem::Fn(f) if f.sig.ident == "may_block"));
    let may_block = has_may_block.then(|| {
        quote! {
            #[inline]
            fn may_block(&self) -> bool {
                <#self_ty>::may_block(self)
            }
        }
    });
    quote! {
        impl #impl_generics #rt::OpKernel for #self_ty #where_clause {
            fn compute(&self, ctx: &mut #rt::KernelContext<'_>) -> #rt::Result<()> {
                <#self_ty>::compute(self, ctx)
            }
            #may_block
        }
        #[allow(non_snake_case)]
        fn __create_kernel #impl_generics (
            construction: &#rt::KernelConstruction<'_>,
        ) -> #rt::Result<::std::boxed::Box<dyn #rt::OpKernel>> #where_clause {
            ::core::result::Result::Ok(::std::boxed::Box::new(<#self_ty>::new(construction)?))
        }
    }
}
