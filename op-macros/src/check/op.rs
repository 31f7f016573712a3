//! `#[op]`: an op and its CPU kernel declared by a function's signature.
//! The check reads the function in named steps: its type parameters
//! against `types(...)`, its parameters (inputs and attrs), the type attrs
//! the type parameters declare, its return (the outputs), then the spec
//! those make.

use op_spec::DType;
use syn::ext::IdentExt;
use syn::spanned::Spanned;

use super::attr::{attr_name, type_text, typed_attr_spec};
use super::shape_fn::shape_fn;
use super::signature::{
    FnSignature, Output, Param, ParamType, ReturnValue, Returns, VIEW_NAMES, check_plain_signature,
    output, param_type, split_result, view_of,
};
use super::types::{TypeCombos, type_combos};
use super::{AttrField, CheckedOp, ShapeFnModel, error, flags};
use crate::parse::{FnOpArgs, take_attr_options};
use crate::runtime_path::RuntimePath;
use crate::spec::{OpSpec, Spanned as SpannedText, camel_case, doc_comment};

/// A checked `#[op]` function: the op it declares and its kernel.
#[derive(Clone, Debug)]
pub struct CheckedFnOp {
    pub op: CheckedOp,
    pub function: syn::ItemFn,
    pub signature: FnSignature,
    pub types: TypeCombos,
}

pub fn fn_op(args: &FnOpArgs, item: &mut syn::ItemFn) -> darling::Result<CheckedFnOp> {
    let mut errors = darling::Error::accumulator();
    check_plain_signature(&item.sig, &mut errors);
    check_no_const_generics(&item.sig, &mut errors);
    let generics: Vec<syn::Ident> = item
        .sig
        .generics
        .type_params()
        .map(|p| p.ident.clone())
        .collect();
    let types = op_types(args, &generics, &mut errors);
    // With `types(...)` in error, each generic parameter still declares a
    // type attr, so that the specs using it report nothing more.
    let types_ok = types.is_some();
    let types = types.unwrap_or_else(|| TypeCombos {
        attrs: generics.iter().map(|g| (g.to_string(), g.span())).collect(),
        ..TypeCombos::none()
    });

    let mut params = op_params(&mut item.sig, &generics, &mut errors);
    let type_attrs = type_attr_specs(&generics, &types, types_ok);
    params.attr_specs.splice(0..0, type_attrs);

    let (returns, outputs_ok) = op_returns(&item.sig, &generics, &mut errors);
    let outputs: &[Output] = match &returns.value {
        ReturnValue::Outputs(outputs) => outputs,
        _ => &[],
    };
    let output_specs = output_specs(args, outputs, outputs_ok, &mut errors);

    let fn_name = item.sig.ident.unraw().to_string();
    let name = args
        .name
        .as_ref()
        .map(SpannedText::from)
        .unwrap_or_else(|| SpannedText::new(camel_case(&fn_name), item.sig.ident.span()));
    let spec = OpSpec {
        name,
        attrs: params.attr_specs,
        inputs: params.input_specs,
        outputs: output_specs,
        full_types: args.full_types.0.iter().map(Into::into).collect(),
        doc: doc_comment(&item.attrs),
        flags: flags(&args.flags),
    };
    let def = errors.handle(spec.check());
    let shape_fn = errors
        .handle(shape_fn(&args.shape, &args.shape_fn))
        .flatten()
        .or_else(|| scalar_outputs_shape(&returns, item.sig.ident.span()));
    errors.finish()?;
    let ident = syn::Ident::new(&camel_case(&fn_name), item.sig.ident.span());
    Ok(CheckedFnOp {
        op: CheckedOp {
            ident,
            vis: item.vis.clone(),
            spec,
            def: def.expect("no errors, so the op built"),
            unit: params.fields.is_empty(),
            fields: params.fields,
            wrapper: None,
            shape_fn,
            runtime: RuntimePath::new(args.krate.as_ref().map(|k| &k.0)),
        },
        function: item.clone(),
        signature: FnSignature {
            params: params.params,
            returns,
        },
        types,
    })
}

/// The shape function of a function whose every output is a scalar
/// (`-> T`, `-> (T, i64)`, in a `Result` or not) and which names none: the
/// library's `scalar`, so that graphs know its outputs' shapes. An array
/// output's shape depends on what the function computes: no shape function
/// is inferred for it.
fn scalar_outputs_shape(returns: &Returns, span: proc_macro2::Span) -> Option<ShapeFnModel> {
    match &returns.value {
        ReturnValue::Outputs(outputs)
            if !outputs.is_empty() && outputs.iter().all(|o| o.scalar) =>
        {
            Some(ShapeFnModel::Library(syn::Ident::new("scalar", span)))
        }
        _ => None,
    }
}

/// A kernel is registered once per type combination, and a const
/// parameter has no type attr to take its value from.
fn check_no_const_generics(sig: &syn::Signature, errors: &mut darling::error::Accumulator) {
    if let Some(c) = sig.generics.const_params().next() {
        errors.push(error(
            c.span(),
            "an `#[op]` function cannot have const generic parameters",
        ));
    }
}

/// `types(...)` lists the types of the function's type parameters, in
/// order: each type parameter is a type attr, and a kernel is registered
/// for each listed type. Without type parameters there is nothing to list.
/// `None` when `types(...)` itself is in error; a mismatch with the type
/// parameters is reported but keeps the types, which still say what each
/// listed attr allows.
fn op_types(
    args: &FnOpArgs,
    generics: &[syn::Ident],
    errors: &mut darling::error::Accumulator,
) -> Option<TypeCombos> {
    if generics.is_empty() && !args.types.is_empty() {
        errors.push(error(
            args.types[0].span,
            "`types(...)` lists the types of the function's type parameters, and it has none: make it generic, as in `fn f<T: Element>(x: ArrayViewD<'_, T>)`, or remove `types(...)` (fixed element types such as f32 need no `types`)",
        ));
        return None;
    }
    let default_attr = (generics.len() == 1).then(|| generics[0].to_string());
    let types = errors.handle(type_combos(&args.types, default_attr.as_deref()))?;
    if let Some(g) = generics
        .iter()
        .enumerate()
        .find(|(i, g)| types.attrs.get(*i).map(|(n, _)| n) != Some(&g.to_string()))
        .map(|(_, g)| g)
    {
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
    }
    for (name, span) in types.attrs.iter().skip(generics.len()) {
        errors.push(error(
            *span,
            format!("`{name}` is not a type parameter of the function: `types(...)` names the function's type parameters"),
        ));
    }
    Some(types)
}

/// What the parameters declare: the adapter's parameters, and the specs
/// and attr fields of the op.
#[derive(Default)]
struct OpParams {
    params: Vec<Param>,
    attr_specs: Vec<SpannedText>,
    input_specs: Vec<SpannedText>,
    fields: Vec<AttrField>,
}

/// Each parameter is an input (a tensor view or a slice of them) or an
/// attr (a type an attr is read as), named by the parameter: the function
/// stays callable as written, so its signature is the op's.
fn op_params(
    sig: &mut syn::Signature,
    generics: &[syn::Ident],
    errors: &mut darling::error::Accumulator,
) -> OpParams {
    let mut out = OpParams::default();
    let mut list_count = 0;
    for input in sig.inputs.iter_mut() {
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
        match param_type(ty, generics) {
            ParamType::Tensor { element, list } => {
                if let Some((_, span)) = options {
                    errors.push(error(
                        span,
                        format!("`#[attr(...)]` is for attr parameters, and `{name}` is a tensor input: remove the `#[attr(...)]`"),
                    ));
                }
                let mut spec = SpannedText::derived("", ident.span());
                spec.push(&name, ident.span());
                spec.push(": ", ident.span());
                if list {
                    // Each list input's length is an attr: `N` for the
                    // first, `N_xs` for the others.
                    list_count += 1;
                    let n = if list_count == 1 {
                        "N".to_owned()
                    } else {
                        format!("N_{name}")
                    };
                    out.attr_specs
                        .push(SpannedText::derived(format!("{n}: int >= 1"), ident.span()));
                    spec.push(&format!("{n} * "), ty.span());
                }
                spec.push(&element.spec_text(), element.span());
                out.input_specs.push(spec);
                out.params.push(Param::Tensor {
                    ident,
                    element,
                    list,
                });
            }
            ParamType::Attr { owned, by_ref } => {
                let options = options.map(|(o, _)| o).unwrap_or_default();
                let (attr_name, name_span) = attr_name(&ident, &options);
                if let Some(spec) = errors.handle(typed_attr_spec(
                    (&attr_name, name_span),
                    ty,
                    &owned,
                    &options,
                )) {
                    out.attr_specs.push(spec);
                }
                let field = AttrField {
                    ident,
                    attr: attr_name,
                    ty: owned,
                };
                out.fields.push(field.clone());
                out.params.push(Param::Attr {
                    field: Box::new(field),
                    by_ref,
                });
            }
            ParamType::Context | ParamType::Other => {
                errors.push(error(ty.span(), neither_tensor_nor_attr(ty)));
            }
        }
    }
    out
}

/// Why an `#[op]` parameter's type is neither a tensor nor an attr, and
/// what to write instead.
fn neither_tensor_nor_attr(ty: &syn::Type) -> String {
    let last = |t: &syn::Type| match t {
        syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    };
    let hint = match view_of(ty).0.and_then(last).as_deref() {
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

/// Each type parameter declares a type attr of its name, allowing the
/// types listed for it; when `types(...)` is in error, any type, since
/// that error is enough.
fn type_attr_specs(
    generics: &[syn::Ident],
    types: &TypeCombos,
    types_ok: bool,
) -> Vec<SpannedText> {
    generics
        .iter()
        .map(|g| {
            let listed = types.attrs.iter().position(|(n, _)| g == n);
            match listed {
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
            }
        })
        .collect()
}

/// The function returns its outputs (an op has no other way to produce
/// them): arrays and scalars, several as a tuple, optionally in a
/// `Result`. Also says whether every part was one, so that a count of
/// `outputs(...)` is only compared with a return read whole.
fn op_returns(
    sig: &syn::Signature,
    generics: &[syn::Ident],
    errors: &mut darling::error::Accumulator,
) -> (Returns, bool) {
    let syn::ReturnType::Type(_, ty) = &sig.output else {
        errors.push(error(
            sig.ident.span(),
            "an `#[op]` function returns its outputs: `-> ArrayD<T>`, `-> T` (a scalar), a tuple of them, or a `Result` of those",
        ));
        let returns = Returns {
            fallible: false,
            value: ReturnValue::Outputs(Vec::new()),
        };
        return (returns, false);
    };
    let (fallible, returned) = split_result(ty);
    let parts: Vec<&syn::Type> = match returned {
        syn::Type::Tuple(t) => t.elems.iter().collect(),
        other => vec![other],
    };
    let mut outputs = Vec::new();
    let mut all_ok = true;
    for part in parts {
        match output(part, generics) {
            Some(output) => outputs.push(output),
            None => {
                all_ok = false;
                errors.push(error(
                    part.span(),
                    format!(
                        "`{}` cannot be an `#[op]` output: an output is an array (`ArrayD<T>`) or a scalar element (`T`, `f32`), where `T` is a type parameter listed in `types(...)`; return several as a tuple",
                        type_text(part)
                    ),
                ));
            }
        }
    }
    let returns = Returns {
        fallible,
        value: ReturnValue::Outputs(outputs),
    };
    (returns, all_ok)
}

/// The outputs' specs: named by `outputs(...)`, one name per returned
/// value, or `output` / `output_0`, `output_1`, ... by default (said in
/// any error about them, since the author never wrote those names).
fn output_specs(
    args: &FnOpArgs,
    outputs: &[Output],
    outputs_ok: bool,
    errors: &mut darling::error::Accumulator,
) -> Vec<SpannedText> {
    let names = &args.outputs.0;
    if names.is_empty() {
        return outputs
            .iter()
            .enumerate()
            .map(|(i, out)| {
                let name = if outputs.len() == 1 {
                    "output".to_owned()
                } else {
                    format!("output_{i}")
                };
                let mut spec = SpannedText::derived("", out.span).with_note(format!(
                    "the output is named `{name}` by default: name the outputs with `#[op(outputs(\"...\"))]`"
                ));
                spec.push(&name, out.span);
                spec.push(": ", out.span);
                spec.push(&out.element.spec_text(), out.span);
                spec
            })
            .collect();
    }
    if outputs_ok && names.len() != outputs.len() {
        let span = names.get(outputs.len()).unwrap_or(&names[0]).span();
        errors.push(error(
            span,
            format!(
                "`outputs(...)` names {} output(s) but the function returns {}: name each returned value once, in order (a tuple returns several)",
                names.len(),
                outputs.len()
            ),
        ));
    }
    names
        .iter()
        .zip(outputs)
        .map(|(lit, out)| {
            let mut spec = SpannedText::derived("", lit.span());
            spec.push(&lit.value(), lit.span());
            spec.push(": ", lit.span());
            spec.push(&out.element.spec_text(), out.span);
            spec
        })
        .collect()
}
