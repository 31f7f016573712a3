//! `#[op]`: an op and its CPU kernel declared by a function's signature.

use op_spec::DType;
use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::spanned::Spanned;

use super::attr::{attr_kind, type_text, typed_attr_spec};
use super::kernel::{check_plain_signature, result_inner};
use super::shape_fn::shape_fn;
use super::types::{TypeCombos, type_combos};
use super::{AttrField, CheckedOp, error, flags};
use crate::dtypes;
use crate::parse::{FnOpArgs, take_attr_options};
use crate::runtime_path::RuntimePath;
use crate::spec::{OpSpec, Spanned as SpannedText, camel_case, doc_comment};

/// An `#[op]` function's parameter.
#[derive(Clone, Debug)]
pub enum FnParam {
    /// A tensor input: `x: ArrayViewD<'_, T>` or a list `xs: &[ArrayViewD<'_, T>]`.
    Tensor {
        ident: syn::Ident,
        element: Element,
        list: bool,
    },
    /// An attr: `axis: i64`, read once when the kernel is created.
    Attr { field: Box<AttrField>, by_ref: bool },
}

/// The element type of a tensor in an `#[op]` signature.
#[derive(Clone, Debug)]
pub enum Element {
    /// A generic parameter, i.e. a type attr.
    Generic(syn::Ident),
    /// A fixed dtype.
    Fixed(DType, Box<syn::Type>),
}

/// An `#[op]` function's output.
#[derive(Clone, Debug)]
pub struct FnOutput {
    pub element: Element,
    /// A scalar (`-> T`) rather than an array (`-> ArrayD<T>`).
    pub scalar: bool,
}

/// A checked `#[op]` function: the op it declares and its kernel.
#[derive(Clone, Debug)]
pub struct CheckedFnOp {
    pub op: CheckedOp,
    pub function: syn::ItemFn,
    pub params: Vec<FnParam>,
    pub outputs: Vec<FnOutput>,
    /// Whether the function returns a `Result`.
    pub fallible: bool,
    pub types: TypeCombos,
}

fn element_of(ty: &syn::Type, generics: &[syn::Ident]) -> Option<Element> {
    if let syn::Type::Path(p) = ty
        && let Some(ident) = p.path.get_ident()
        && generics.contains(ident)
    {
        return Some(Element::Generic(ident.clone()));
    }
    dtypes::dtype_of_rust_type(ty).map(|d| Element::Fixed(d, Box::new(ty.clone())))
}

/// The element type of `ArrayViewD<'_, E>` / `ArrayD<E>` / `Array<E, D>`.
fn array_element(ty: &syn::Type, names: &[&str], generics: &[syn::Ident]) -> Option<Element> {
    dtypes::type_args(ty, names)?.find_map(|t| element_of(t, generics))
}

const VIEW_NAMES: &[&str] = &["ArrayViewD", "ArrayView"];

/// Why an `#[op]` parameter's type is neither a tensor nor an attr, and
/// what to write instead.
fn neither_tensor_nor_attr(ty: &syn::Type, view_ty: Option<&syn::Type>) -> String {
    let last = |t: &syn::Type| match t {
        syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    };
    let hint = match view_ty.and_then(last).as_deref() {
        Some("ArrayD" | "Array") => {
            " (inputs are borrowed: write `ArrayViewD<'_, T>` rather than an owned array)".to_owned()
        }
        Some("ArrayViewD" | "ArrayView") => " (its element type is neither a generic parameter of the function nor an element type such as f32, i64, bool, Vec<u8>)".to_owned(),
        _ => match ty {
            syn::Type::Reference(r) if last(&r.elem).is_some_and(|n| VIEW_NAMES.contains(&n.as_str())) => {
                " (take the view by value: `x: ArrayViewD<'_, T>`)".to_owned()
            }
            _ => String::new(),
        },
    };
    format!(
        "`{}` is neither a tensor nor an attr{hint}: tensor inputs are `ArrayViewD<'_, T>` (or `&[ArrayViewD<'_, T>]` for a list), attrs are i64, f32, bool, &str, DType, or slices of them",
        type_text(ty)
    )
}
const ARRAY_NAMES: &[&str] = &["ArrayD", "Array"];

/// An element type as a spec writes it: `T` or `float`.
fn element_text(element: &Element) -> String {
    match element {
        Element::Generic(g) => g.to_string(),
        Element::Fixed(d, _) => d.spec_name().to_owned(),
    }
}

/// The token that named an element type.
fn element_span(element: &Element) -> Span {
    match element {
        Element::Generic(g) => g.span(),
        Element::Fixed(_, ty) => ty.span(),
    }
}

pub fn fn_op(args: &FnOpArgs, item: &mut syn::ItemFn) -> darling::Result<CheckedFnOp> {
    let mut errors = darling::Error::accumulator();
    let sig = &item.sig;
    check_plain_signature(sig, &mut errors);
    let generics: Vec<syn::Ident> = sig
        .generics
        .type_params()
        .map(|p| p.ident.clone())
        .collect();
    if let Some(c) = sig.generics.const_params().next() {
        errors.push(error(
            c.span(),
            "an `#[op]` function cannot have const generic parameters",
        ));
    }
    let default_attr = (generics.len() == 1).then(|| generics[0].to_string());
    let types = if generics.is_empty() && !args.types.is_empty() {
        errors.push(error(
            args.types[0].span,
            "`types(...)` lists the types of the function's type parameters, and it has none: make it generic, as in `fn f<T: Element>(x: ArrayViewD<'_, T>)`, or remove `types(...)` (fixed element types such as f32 need no `types`)",
        ));
        None
    } else {
        errors.handle(type_combos(&args.types, default_attr.as_deref()))
    };
    if let Some(types) = &types {
        for (i, g) in generics.iter().enumerate() {
            if types.attrs.get(i).map(|(n, _)| n) != Some(&g.to_string()) {
                let example = if generics.len() == 1 {
                    "`types(f32, i32)`".to_owned()
                } else {
                    let all: Vec<String> = generics
                        .iter()
                        .map(|g| format!("{g} = [f32, i32]"))
                        .collect();
                    format!("`types({})`", all.join(", "))
                };
                errors.push(error(
                    g.span(),
                    format!("list the types to register for `{g}` in `#[op(...)]`, as in {example} (the type parameters take the listed attrs' types in order)"),
                ));
                break;
            }
        }
        if types.attrs.len() > generics.len() {
            for (name, span) in &types.attrs[generics.len()..] {
                errors.push(error(
                    *span,
                    format!("`{name}` is not a type parameter of the function: `types(...)` names the function's type parameters"),
                ));
            }
        }
    }
    // With `types(...)` in error, each generic parameter still declares a
    // type attr, so that the specs using it report nothing more.
    let types_ok = types.is_some();
    let types = types.unwrap_or_else(|| TypeCombos {
        attrs: generics.iter().map(|g| (g.to_string(), g.span())).collect(),
        ..TypeCombos::none()
    });

    let mut params = Vec::new();
    let mut attr_specs: Vec<SpannedText> = Vec::new();
    let mut input_specs: Vec<SpannedText> = Vec::new();
    let mut fields = Vec::new();
    let mut list_count = 0;
    for input in item.sig.inputs.iter_mut() {
        let syn::FnArg::Typed(param) = input else {
            errors.push(error(
                input.span(),
                "an `#[op]` function cannot take `self`",
            ));
            continue;
        };
        let options = errors.handle(take_attr_options(&mut param.attrs)).flatten();
        let syn::Pat::Ident(pat) = &*param.pat else {
            errors.push(error(
                param.pat.span(),
                "`#[op]` parameters must be plain names: they name the op's inputs and attrs",
            ));
            continue;
        };
        let ident = pat.ident.clone();
        let name = ident.unraw().to_string();
        let ty = &*param.ty;
        // A tensor: a view, or a slice of views.
        let (view_ty, list) = match ty {
            syn::Type::Reference(r) => match &*r.elem {
                syn::Type::Slice(s) => (Some(&*s.elem), true),
                _ => (None, false),
            },
            other => (Some(other), false),
        };
        if let Some(element) = view_ty.and_then(|t| array_element(t, VIEW_NAMES, &generics)) {
            if let Some((_, span)) = options {
                errors.push(error(
                    span,
                    format!("`#[attr(...)]` is for attr parameters, and `{name}` is a tensor input: remove the `#[attr(...)]`"),
                ));
            }
            let type_text = element_text(&element);
            let mut spec = SpannedText::derived("", ident.span());
            spec.push(&name, ident.span());
            spec.push(": ", ident.span());
            if list {
                list_count += 1;
                let n = if list_count == 1 {
                    "N".to_owned()
                } else {
                    format!("N_{name}")
                };
                attr_specs.push(SpannedText::derived(format!("{n}: int >= 1"), ident.span()));
                spec.push(&format!("{n} * "), ty.span());
            }
            spec.push(&type_text, element_span(&element));
            input_specs.push(spec);
            params.push(FnParam::Tensor {
                ident,
                element,
                list,
            });
            continue;
        }
        // Otherwise an attr; by reference for &str and &[T].
        let (owned, by_ref): (syn::Type, bool) = match ty {
            syn::Type::Reference(r) if r.mutability.is_none() => match &*r.elem {
                syn::Type::Path(p) if p.path.is_ident("str") => {
                    (syn::parse_quote!(::std::string::String), true)
                }
                syn::Type::Slice(s) => {
                    let elem = &s.elem;
                    (syn::parse_quote!(::std::vec::Vec<#elem>), true)
                }
                other => (other.clone(), true),
            },
            other => (other.clone(), false),
        };
        if attr_kind(&owned).is_none() {
            errors.push(error(ty.span(), neither_tensor_nor_attr(ty, view_ty)));
            continue;
        }
        let options = options.map(|(o, _)| o).unwrap_or_default();
        let attr_name = options
            .name
            .as_ref()
            .map_or_else(|| name.clone(), syn::LitStr::value);
        let name_span = options
            .name
            .as_ref()
            .map_or(ident.span(), syn::LitStr::span);
        if let Some(spec) = errors.handle(typed_attr_spec(
            (&attr_name, name_span),
            ty,
            &owned,
            &options,
        )) {
            attr_specs.push(spec);
        }
        let field = AttrField {
            ident,
            attr: attr_name,
            ty: owned,
        };
        fields.push(field.clone());
        params.push(FnParam::Attr {
            field: Box::new(field),
            by_ref,
        });
    }

    // Type attrs: one per generic parameter, allowing the listed types (or
    // any type, when `types(...)` is in error: that error is enough).
    for (i, g) in generics.iter().enumerate() {
        let listed = types.attrs.iter().position(|(n, _)| *g == n);
        let spec = match listed {
            Some(j) if types_ok => {
                let mut allowed: Vec<DType> = Vec::new();
                for combo in &types.combos {
                    if let Some((d, _)) = combo.get(j)
                        && !allowed.contains(d)
                    {
                        allowed.push(*d);
                    }
                }
                let names: Vec<&str> = allowed.iter().map(|d| d.spec_name()).collect();
                SpannedText::new(format!("{g}: {{{}}}", names.join(", ")), types.attrs[j].1)
            }
            _ => SpannedText::new(format!("{g}: type"), g.span()),
        };
        attr_specs.insert(i, spec);
    }

    // Outputs from the return type.
    let (fallible, returned) = match &item.sig.output {
        syn::ReturnType::Default => {
            errors.push(error(
                item.sig.ident.span(),
                "an `#[op]` function returns its outputs: `-> ArrayD<T>`, `-> T` (a scalar), a tuple of them, or a `Result` of those",
            ));
            (false, None)
        }
        syn::ReturnType::Type(_, ty) => match result_inner(ty) {
            Some(inner) => (true, Some(inner.clone())),
            None => (false, Some((**ty).clone())),
        },
    };
    let mut outputs = Vec::new();
    let mut output_spans = Vec::new();
    let mut outputs_ok = returned.is_some();
    if let Some(returned) = &returned {
        let parts: Vec<&syn::Type> = match returned {
            syn::Type::Tuple(t) => t.elems.iter().collect(),
            other => vec![other],
        };
        for part in parts {
            if let Some(element) = array_element(part, ARRAY_NAMES, &generics) {
                outputs.push(FnOutput {
                    element,
                    scalar: false,
                });
            } else if let Some(element) = element_of(part, &generics) {
                outputs.push(FnOutput {
                    element,
                    scalar: true,
                });
            } else {
                outputs_ok = false;
                errors.push(error(
                    part.span(),
                    format!(
                        "`{}` cannot be an `#[op]` output: an output is an array (`ArrayD<T>`) or a scalar element (`T`, `f32`), where `T` is a type parameter listed in `types(...)`; return several as a tuple",
                        type_text(part)
                    ),
                ));
                continue;
            }
            output_spans.push(part.span());
        }
    }
    let mut output_specs: Vec<SpannedText> = Vec::new();
    if args.outputs.0.is_empty() {
        for (i, (out, span)) in outputs.iter().zip(&output_spans).enumerate() {
            let name = if outputs.len() == 1 {
                "output".to_owned()
            } else {
                format!("output_{i}")
            };
            let mut spec = SpannedText::derived("", *span).with_note(format!(
                "the output is named `{name}` by default: name the outputs with `#[op(outputs(\"...\"))]`"
            ));
            spec.push(&name, *span);
            spec.push(": ", *span);
            spec.push(&element_text(&out.element), *span);
            output_specs.push(spec);
        }
    } else {
        if outputs_ok && args.outputs.0.len() != outputs.len() {
            let span = args
                .outputs
                .0
                .get(outputs.len())
                .unwrap_or(&args.outputs.0[0])
                .span();
            errors.push(error(
                span,
                format!(
                    "`outputs(...)` names {} output(s) but the function returns {}: name each returned value once, in order (a tuple returns several)",
                    args.outputs.0.len(),
                    outputs.len()
                ),
            ));
        }
        for ((lit, out), span) in args.outputs.0.iter().zip(&outputs).zip(&output_spans) {
            let mut spec = SpannedText::derived("", lit.span());
            spec.push(&lit.value(), lit.span());
            spec.push(": ", lit.span());
            spec.push(&element_text(&out.element), *span);
            output_specs.push(spec);
        }
    }

    let fn_name = item.sig.ident.unraw().to_string();
    let name = args
        .name
        .as_ref()
        .map(SpannedText::from)
        .unwrap_or_else(|| SpannedText::new(camel_case(&fn_name), item.sig.ident.span()));
    let spec = OpSpec {
        name,
        attrs: attr_specs,
        inputs: input_specs,
        outputs: output_specs,
        doc: doc_comment(&item.attrs),
        flags: flags(&args.flags),
    };
    let def = errors.handle(spec.check());
    let shape_fn = errors
        .handle(shape_fn(&args.shape, &args.shape_fn))
        .flatten();
    errors.finish()?;
    let ident = syn::Ident::new(&camel_case(&fn_name), item.sig.ident.span());
    Ok(CheckedFnOp {
        op: CheckedOp {
            ident,
            vis: item.vis.clone(),
            spec,
            def: def.expect("no errors, so the op built"),
            unit: fields.is_empty(),
            fields,
            wrapper: None,
            shape_fn,
            runtime: RuntimePath::new(args.krate.as_ref().map(|k| &k.0)),
        },
        function: item.clone(),
        params,
        outputs,
        fallible,
        types,
    })
}
