//! The typed wrapper of an op: `Op::call(inputs, required attrs)`, a
//! setter per optional attr, and `run()`.

use op_spec::{ArgType, AttrDef, AttrKind, ListValue, OpDef};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};

use super::{ident, one_or_tuple};
use crate::check::CheckedOp;
use crate::runtime_path::RuntimePath;

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
pub fn wrapper(op: &CheckedOp) -> TokenStream {
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
        "A pending call of op `{name}`: set optional attrs, then [`run`](Self::run). Made by [`{ty}::call`]({}::call).",
        if op.wrapper.is_some() {
            format!("super::{ty}")
        } else {
            ty.to_string()
        },
    );
    // With a snake_case wrapper, the call type and the wrapper live in a
    // module of their own, glob-imported (`use __ZeroOut_call::*`): an item
    // of the wrapper's name then hides it, as any item hides a glob import,
    // instead of rustc's "defined multiple times" and the errors of every
    // use that resolves to the wrong one. A kernel function of that name is
    // reported by `wrapper_hidden_by_kernel_check`, once, with the fix.
    // Inside the module every item is `pub`, and the glob import has the
    // op's visibility.
    let module = op.wrapper.as_ref().map(|_| format_ident!("__{}_call", ty));
    let item_vis = match &module {
        Some(_) => quote!(pub),
        None => quote!(#vis),
    };
    let call_path = match &module {
        Some(m) => quote!(#m::#call_ty),
        None => quote!(#call_ty),
    };
    let snake = op.wrapper.as_ref().map(|w| {
        quote! {
            #[doc = #doc]
            #[allow(clippy::too_many_arguments)]
            #item_vis fn #w(#(#params),*) -> #call_ty {
                #call_ty::<#rt::Tensor>::__new(#(#args),*)
            }
        }
    });
    let call_items = quote! {
        #[doc = #call_doc]
        #[must_use = "an op call does nothing until `run()`"]
        #item_vis struct #call_ty<V = #rt::Tensor> {
            call: #rt::OpCall<'static, V>,
        }

        impl<V> #call_ty<V> {
            /// The call with these inputs and required attrs, not yet run:
            /// what the op's `call_with` returns.
            #[doc(hidden)]
            #[allow(clippy::too_many_arguments)]
            #item_vis fn __new(#(#value_params),*) -> Self {
                #call_ty { call: #rt::OpCall::with_values(#name) #(#setup)* }
            }
        }

        impl #call_ty {
            /// Runs the op on the global runtime ([`op_core::Runtime::global`]).
            #item_vis fn run(self) -> #rt::Result<#tensor_out_ty> {
                self.run_on(#rt::Runtime::global())
            }
        }

        impl<V> #call_ty<V> {
            #(#setters)*

            /// Names the node (in errors, and a graph node's name).
            #item_vis fn node_name(mut self, name: &'static str) -> Self {
                self.call = self.call.node_name(name);
                self
            }

            /// Runs (or records) the op on `executor`: the eager runtime,
            /// a tape, a graph builder.
            #item_vis fn run_on<E: #rt::Executor<Value = V>>(self, executor: &E) -> #rt::Result<#out_ty> #finish
        }

        #snake
    };
    let call_items = match (&module, &op.wrapper) {
        (Some(module), Some(w)) => {
            let check = wrapper_hidden_by_kernel_check(op, w);
            quote! {
                #[allow(non_snake_case)]
                mod #module {
                    #call_items
                }
                #[allow(unused_imports)]
                #vis use #module::*;
                #check
            }
        }
        _ => call_items,
    };
    quote! {
        #call_items

        // One argument per input of the op: as many as its OpDef has
        // (TensorFlow's ResourceApplyAdam has ten), which the author does
        // not choose.
        #[allow(clippy::too_many_arguments)]
        impl #ty {
            #[doc = #doc]
            #vis fn call(#(#params),*) -> #call_path {
                Self::call_with::<#rt::Tensor>(#(#args),*)
            }

            /// The same call on an executor's values `V` (a graph builder's
            /// outputs, say): run it with `run_on(&executor)`.
            #vis fn call_with<V>(#(#value_params),*) -> #call_path<V> {
                #call_path::<V>::__new(#(#args),*)
            }
        }
    }
}

/// The name of the marker a kernel function leaves beside itself, in the
/// type namespace (where it clashes with nothing the author writes): a
/// wrapper of the same name in the same module finds it there.
pub fn kernel_fn_marker(function: &syn::Ident) -> syn::Ident {
    let name = function.to_string();
    let name = name.strip_prefix("r#").unwrap_or(&name);
    format_ident!("__opkit_kernel_fn_{}", name)
}

/// A kernel function named like the wrapper, in the op's module, hides the
/// wrapper (a glob import). Each kernel function leaves a marker type
/// beside itself (`kernel_fn_marker`, `HIDES_A_WRAPPER = true`); the op
/// glob-imports a stand-in of the same name (`false`), which the marker,
/// an item, hides when they share a module, and which a kernel elsewhere
/// (a child module's `use super::*` included) leaves in place. So the
/// constant is true exactly when the two collide, and the error is ours,
/// on the author's `wrapper = ...`.
fn wrapper_hidden_by_kernel_check(op: &CheckedOp, w: &syn::Ident) -> TokenStream {
    let marker = kernel_fn_marker(w);
    let module = format_ident!("__{}_wrapper_name", op.ident);
    let message = format!(
        "the wrapper `{w}` of op `{}` (`wrapper = {w}`) has the name of the kernel function `{w}` in this module, which would hide it: rename the kernel function (a kernel may have any name, as in `{w}_kernel`), or name the wrapper otherwise (`wrapper = ...`)",
        op.def.name
    );
    quote_spanned! {w.span()=>
        #[allow(non_snake_case)]
        mod #module {
            #[allow(non_camel_case_types, dead_code)]
            pub struct #marker {}
            impl #marker {
                pub const HIDES_A_WRAPPER: bool = false;
            }
        }
        #[allow(unused_imports)]
        use #module::*;
        const _: () = if #marker::HIDES_A_WRAPPER {
            ::core::panic!(#message)
        };
    }
}
