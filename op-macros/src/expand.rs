//! Stage 3: code generation from checked models. Generated code reaches the
//! runtime only through the model's [`RuntimePath`] (`::op_core::__private`
//! unless the macro was given `crate = "..."`), bound to `rt` in each
//! function below and written `#rt::Item`.

use op_spec::{ArgType, AttrDef, AttrKind, DType, ListValue, OpDef};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::check::{
    CheckedFnOp, CheckedKernel, CheckedOp, Element, FnParam, KernelBody, KernelFnSignature,
    KernelParam,
};
use crate::dtypes;
use crate::parse::OpRef;
use crate::runtime_path::RuntimePath;

/// An identifier for `name`, raw when `name` is a keyword (`in` → `r#in`).
fn ident(name: &str, span: Span) -> syn::Ident {
    if syn::parse_str::<syn::Ident>(name).is_ok() {
        syn::Ident::new(name, span)
    } else if matches!(name, "self" | "Self" | "super" | "crate" | "_") {
        syn::Ident::new(&format!("{name}_"), span)
    } else {
        syn::Ident::new_raw(name, span)
    }
}

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
    let attrs = spec.attrs.iter().map(|a| &a.text);
    let inputs = spec.inputs.iter().map(|a| &a.text);
    let outputs = spec.outputs.iter().map(|a| &a.text);
    let doc = spec.doc.as_ref().map(|d| {
        let text = &d.text;
        quote!(.doc(#text))
    });
    let f = &spec.flags;
    let flags = [
        (f.stateful, quote!(.set_is_stateful())),
        (f.commutative, quote!(.set_is_commutative())),
        (f.aggregate, quote!(.set_is_aggregate())),
        (
            f.allows_uninitialized_input,
            quote!(.set_allows_uninitialized_input()),
        ),
        (
            f.distributed_communication,
            quote!(.set_is_distributed_communication()),
        ),
    ]
    .into_iter()
    .filter_map(|(on, call)| on.then_some(call));
    let deprecated = f
        .deprecated
        .as_ref()
        .map(|(version, explanation)| quote!(.deprecated(#version, #explanation)));

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
    let with_shape_fn = match &op.shape_fn {
        None => quote!(),
        Some(crate::check::ShapeFnModel::Library(name)) => {
            quote!(.with_shape_fn(#rt::shape_library::#name))
        }
        Some(crate::check::ShapeFnModel::Custom(expr)) => quote!(.with_shape_fn(#expr)),
    };
    quote! {
        impl #rt::Op for #ty {
            const NAME: &'static str = #name;
            const SIGNATURE: #rt::OpSignature = #rt::OpSignature {
                type_attrs: &[#(#type_attrs),*],
                inputs: &[#(#input_names),*],
                outputs: &[#(#output_names),*],
                resource_inputs: &[#(#resource_inputs),*],
                resource_outputs: &[#(#resource_outputs),*],
            };
            fn op_def() -> ::core::result::Result<#rt::OpDef, #rt::SpecErrors> {
                #rt::OpDefBuilder::new(#name)
                    #(.attr(#attrs))*
                    #(.input(#inputs))*
                    #(.output(#outputs))*
                    #doc
                    #(#flags)*
                    #deprecated
                    .build()
            }
        }

        impl #rt::OpAttrs for #ty {
            fn from_node(node: &#rt::OpInstance) -> #rt::Result<Self> {
                ::core::result::Result::Ok(#construct)
            }
        }

        #rt::inventory::submit! {
            #rt::OpRegistration::new(
                #name,
                <#ty as #rt::Op>::op_def,
                ::core::file!(),
                ::core::line!(),
            )
            #with_shape_fn
        }

        #wrapper
    }
}

/// The Rust type of a wrapper parameter for an attr of `attr`'s type, and
/// how it becomes an `AttrValue`.
fn attr_param(attr: &AttrDef, rt: &RuntimePath) -> (TokenStream, TokenStream) {
    let value = quote!(value);
    let plain = |ty: TokenStream| (ty, quote!(#rt::AttrValue::from(#value)));
    match (attr.ty.kind, attr.ty.is_list) {
        (AttrKind::Int, false) => plain(quote!(i64)),
        (AttrKind::Float, false) => plain(quote!(f32)),
        (AttrKind::Bool, false) => plain(quote!(bool)),
        (AttrKind::Type, false) => plain(quote!(#rt::DType)),
        (AttrKind::Shape, false) => plain(quote!(#rt::ShapeValue)),
        (AttrKind::String, false) => (
            quote!(impl ::core::convert::Into<::std::string::String>),
            quote!(#rt::AttrValue::from(::core::convert::Into::<::std::string::String>::into(#value))),
        ),
        (AttrKind::Int, true) => plain(quote!(::std::vec::Vec<i64>)),
        (AttrKind::Float, true) => plain(quote!(::std::vec::Vec<f32>)),
        (AttrKind::Bool, true) => plain(quote!(::std::vec::Vec<bool>)),
        (AttrKind::Type, true) => plain(quote!(::std::vec::Vec<#rt::DType>)),
        (AttrKind::String, true) => plain(quote!(::std::vec::Vec<::std::string::String>)),
        (AttrKind::Shape, true) => plain(quote!(::std::vec::Vec<#rt::ShapeValue>)),
        _ => (
            quote!(impl ::core::convert::Into<#rt::AttrValue>),
            quote!(::core::convert::Into::<#rt::AttrValue>::into(#value)),
        ),
    }
}

/// Attrs set from the inputs, which a wrapper does not take.
fn is_inferred(def: &OpDef, attr: &str) -> bool {
    def.inputs.iter().any(|arg| {
        arg.number_attr.as_deref() == Some(attr)
            || matches!(&arg.ty, ArgType::Attr(a) | ArgType::ListAttr(a) if a == attr)
    })
}

fn describe_arg_type(def: &OpDef, arg: &op_spec::ArgDef) -> String {
    let base = match &arg.ty {
        ArgType::Fixed(d) => format!("`{}`", d.spec_name()),
        ArgType::Attr(a) | ArgType::ListAttr(a) => {
            match def.attr(a).and_then(|attr| attr.allowed_values.as_ref()) {
                Some(ListValue::Type(types)) => {
                    let names: Vec<String> = types
                        .iter()
                        .map(|d| format!("`{}`", d.spec_name()))
                        .collect();
                    format!("type `{a}`, one of {}", names.join(", "))
                }
                _ => format!("type `{a}`"),
            }
        }
    };
    match (&arg.number_attr, &arg.ty) {
        (Some(n), _) => format!("a list of `{n}` tensors of {base}"),
        (None, ArgType::ListAttr(_)) => format!("a list of tensors of {base}"),
        _ => format!("a tensor of {base}"),
    }
}

fn wrapper_doc(def: &OpDef, required: &[&AttrDef], optional: &[&AttrDef]) -> String {
    let mut doc = format!("Runs op `{}`", def.name);
    if !def.summary.is_empty() {
        doc.push_str(&format!(": {}", def.summary));
    }
    doc.push_str("\n\n");
    if !def.description.is_empty() {
        doc.push_str(&def.description);
        doc.push_str("\n\n");
    }
    let item = |name: &str, what: String, description: &str| {
        if description.is_empty() {
            format!("- `{name}`: {what}\n")
        } else {
            format!("- `{name}`: {what}. {description}\n")
        }
    };
    if !def.inputs.is_empty() || !required.is_empty() {
        doc.push_str("# Arguments\n\n");
        for arg in &def.inputs {
            doc.push_str(&item(
                &arg.name,
                describe_arg_type(def, arg),
                &arg.description,
            ));
        }
        for attr in required {
            doc.push_str(&item(
                &attr.name,
                format!("attr of type `{}`", attr.ty),
                &attr.description,
            ));
        }
        doc.push('\n');
    }
    if !optional.is_empty() {
        doc.push_str("# Optional attrs (builder methods)\n\n");
        for attr in optional {
            let default = attr
                .default_value
                .as_ref()
                .map(|v| format!(", default `{v}`"))
                .unwrap_or_default();
            doc.push_str(&item(
                &attr.name,
                format!("`{}`{default}", attr.ty),
                &attr.description,
            ));
        }
        doc.push('\n');
    }
    if !def.outputs.is_empty() {
        doc.push_str("# Returns\n\n");
        for arg in &def.outputs {
            doc.push_str(&item(
                &arg.name,
                describe_arg_type(def, arg),
                &arg.description,
            ));
        }
    }
    doc
}

/// The typed wrapper: `Op::call(inputs, required attrs) -> OpCallBuilder`
/// with a setter per optional attr and `run()`, plus the snake_case function.
fn wrapper(op: &CheckedOp) -> TokenStream {
    let rt = &op.runtime;
    let CheckedOp {
        ident: ty,
        vis,
        def,
        ..
    } = op;
    let span = Span::call_site();
    let call_ty = format_ident!("{}Call", ty);
    let name = &def.name;

    let attrs: Vec<&AttrDef> = def
        .attrs
        .iter()
        .filter(|a| !is_inferred(def, &a.name))
        .collect();
    let required: Vec<&AttrDef> = attrs
        .iter()
        .copied()
        .filter(|a| a.default_value.is_none())
        .collect();
    let optional: Vec<&AttrDef> = attrs
        .iter()
        .copied()
        .filter(|a| a.default_value.is_some())
        .collect();

    // `params` take tensors (`call`); `value_params` any executor's values
    // (`call_with`).
    let mut params = Vec::new();
    let mut value_params = Vec::new();
    let mut args = Vec::new();
    let mut setup = Vec::new();
    for arg in &def.inputs {
        let param = ident(&arg.name, span);
        if arg.is_list() {
            params.push(quote!(#param: impl ::core::iter::IntoIterator<Item = impl ::core::convert::Into<#rt::Tensor>>));
            value_params.push(quote!(#param: impl ::core::iter::IntoIterator<Item = impl ::core::convert::Into<V>>));
            setup.push(quote!(.input_list(#param)));
        } else {
            params.push(quote!(#param: impl ::core::convert::Into<#rt::Tensor>));
            value_params.push(quote!(#param: impl ::core::convert::Into<V>));
            setup.push(quote!(.input(#param)));
        }
        args.push(param);
    }
    for attr in &required {
        let param = ident(&attr.name, span);
        let (pty, convert) = attr_param(attr, rt);
        let attr_name = &attr.name;
        params.push(quote!(#param: #pty));
        value_params.push(quote!(#param: #pty));
        setup.push(quote!(.attr(#attr_name, { let value = #param; #convert })));
        args.push(param);
    }
    let setters = optional.iter().map(|attr| {
        let method = ident(&attr.name, span);
        let (pty, convert) = attr_param(attr, rt);
        let attr_name = &attr.name;
        let default = attr
            .default_value
            .as_ref()
            .map(|v| v.to_string())
            .unwrap_or_default();
        let doc = format!(
            "Sets attr `{attr_name}` (default `{default}`). {}",
            attr.description
        );
        quote! {
            #[doc = #doc]
            #vis fn #method(mut self, value: #pty) -> Self {
                self.call = self.call.attr(#attr_name, #convert);
                self
            }
        }
    });

    let lists: Vec<bool> = def.outputs.iter().map(|a| a.is_list()).collect();
    // What `run_on` returns for values `V`, and for tensors what `run` returns.
    let tensor_out_ty;
    let (out_ty, finish) = if lists.is_empty() {
        tensor_out_ty = quote!(());
        (
            quote!(()),
            quote!({
                executor.execute(self.call)?;
                ::core::result::Result::Ok(())
            }),
        )
    } else {
        // All single outputs take the flat path (no grouping); a list output
        // needs the outputs grouped by arg.
        let grouped = lists.iter().any(|l| *l);
        let n = lists.len();
        let names: Vec<syn::Ident> = (0..n).map(|i| format_ident!("output_{}", i)).collect();
        let types = lists.iter().map(|l| {
            if *l {
                quote!(::std::vec::Vec<V>)
            } else {
                quote!(V)
            }
        });
        let tensor_types = lists.iter().map(|l| {
            if *l {
                quote!(::std::vec::Vec<#rt::Tensor>)
            } else {
                quote!(#rt::Tensor)
            }
        });
        tensor_out_ty = one_or_tuple(tensor_types.collect());
        let values = names.iter().zip(&lists).map(|(name, l)| {
            if *l || !grouped {
                quote!(#name)
            } else {
                quote!(#rt::single_output(#name)?)
            }
        });
        let value = one_or_tuple(values.collect());
        let unpack = if grouped {
            quote!(#rt::outputs_array::<_, #n>(executor.execute_grouped(self.call)?)?)
        } else {
            quote!(executor.execute_array::<#n>(self.call)?)
        };
        (
            one_or_tuple(types.collect()),
            quote!({
                let [#(#names),*] = #unpack;
                ::core::result::Result::Ok(#value)
            }),
        )
    };

    let doc = wrapper_doc(def, &required, &optional);
    let call_doc = format!(
        "A pending call of op `{name}`: set optional attrs, then [`run`](Self::run). Made by [`{ty}::call`]."
    );
    let snake = op.wrapper.as_ref().map(|w| {
        quote! {
            #[doc = #doc]
            #vis fn #w(#(#params),*) -> #call_ty {
                #ty::call(#(#args),*)
            }
        }
    });
    quote! {
        #[doc = #call_doc]
        #[must_use = "an op call does nothing until `run()`"]
        #vis struct #call_ty<V = #rt::Tensor> {
            call: #rt::OpCall<'static, V>,
        }

        impl #ty {
            #[doc = #doc]
            #vis fn call(#(#params),*) -> #call_ty {
                Self::call_with::<#rt::Tensor>(#(#args),*)
            }

            /// The same call on an executor's values `V` (a graph builder's
            /// outputs, say): run it with `run_on(&executor)`.
            #vis fn call_with<V>(#(#value_params),*) -> #call_ty<V> {
                #call_ty { call: #rt::OpCall::with_values(#name) #(#setup)* }
            }
        }

        impl #call_ty {
            /// Runs the op on the global runtime ([`op_core::Runtime::global`]).
            #vis fn run(self) -> #rt::Result<#tensor_out_ty> {
                self.run_on(#rt::Runtime::global())
            }
        }

        impl<V> #call_ty<V> {
            #(#setters)*

            /// Names the node (in errors, and a graph node's name).
            #vis fn node_name(mut self, name: &'static str) -> Self {
                self.call = self.call.node_name(name);
                self
            }

            /// Runs (or records) the op on `executor`: the eager runtime,
            /// a tape, a graph builder.
            #vis fn run_on<E: #rt::Executor<Value = V>>(self, executor: &E) -> #rt::Result<#out_ty> #finish
        }

        #snake
    }
}

/// `x` for one item, `(x, y, ..)` for several.
fn one_or_tuple(items: Vec<TokenStream>) -> TokenStream {
    match items.as_slice() {
        [one] => one.clone(),
        _ => quote!((#(#items),*)),
    }
}

/// `#[register_op]`: the struct (without its `#[attr]`s) and its op items.
pub fn register_op(item: &syn::ItemStruct, op: &CheckedOp) -> TokenStream {
    let items = op_items(op);
    quote! {
        #item
        #items
    }
}

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
            quote!(#rt::TypeConstraint::new(#attr, #path))
        });
        let (name, create) = (&r.name, &r.create);
        quote! {
            #rt::inventory::submit! {
                #rt::KernelRegistration::new(
                    #op_name,
                    #rt::DeviceType::#device,
                    #name,
                    #create,
                    ::core::file!(),
                    ::core::line!(),
                )
                .with_constraints(&[#(#constraints),*])
                .with_host_memory(&[#(#host_memory),*])
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
    let turbofish = if generic_names.is_empty() {
        quote!()
    } else {
        quote!(::<#(#generic_names),*>)
    };
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
    let call = quote!(#fn_ident #turbofish(#(#args),*));
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
    let combos: Vec<Vec<DType>> = if types.combos.is_empty() {
        vec![Vec::new()]
    } else {
        types
            .combos
            .iter()
            .map(|c| c.iter().map(|(d, _)| *d).collect())
            .collect()
    };
    let name = &op.def.name;
    let submits = combos.iter().map(|combo| {
        let tys: Vec<TokenStream> = combo.iter().map(|d| dtypes::rust_type(*d, Span::call_site(), rt)).collect();
        let turbofish = if tys.is_empty() { quote!() } else { quote!(::<#(#tys),*>) };
        let constraints = types.attrs.iter().zip(combo).map(|((attr, _), dtype)| {
            let path = dtypes::dtype_path(*dtype, Span::call_site(), rt);
            quote!(#rt::TypeConstraint::new(#attr, #path))
        });
        let names: Vec<&str> = combo.iter().map(|d| dtypes::rust_name(*d)).collect();
        let kernel_name = if names.is_empty() {
            fn_ident.to_string()
        } else {
            format!("{fn_ident}::<{}>", names.join(", "))
        };
        quote! {
            #rt::inventory::submit! {
                #rt::KernelRegistration::new(
                    #name,
                    #rt::DeviceType::Cpu,
                    #kernel_name,
                    |construction| #rt::FnKernel::<#op_ty>::create(construction, #adapter #turbofish),
                    ::core::file!(),
                    ::core::line!(),
                )
                .with_constraints(&[#(#constraints),*])
            }
        }
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
