//! `#[register_op]`: an op declared on a struct whose fields are its attrs.

use syn::ext::IdentExt;
use syn::spanned::Spanned;

use super::attr::typed_attr_spec;
use super::shape_fn::shape_fn;
use super::{AttrField, CheckedOp, error, flags};
use crate::parse::{RegisterOpArgs, take_attr_options};
use crate::runtime_path::RuntimePath;
use crate::spec::{OpSpec, Spanned as SpannedText, doc_comment};

/// `#[register_op]` on `item`. Strips the `#[attr]` attributes from its fields.
pub fn register_op(
    args: &RegisterOpArgs,
    item: &mut syn::ItemStruct,
) -> darling::Result<CheckedOp> {
    let mut errors = darling::Error::accumulator();
    if !item.generics.params.is_empty() {
        errors.push(error(
            item.generics.span(),
            "an op struct cannot be generic: its fields hold attr values, and type attrs are declared with `attrs(\"T: type\")`",
        ));
    }
    let name = args
        .name
        .as_ref()
        .map(SpannedText::from)
        .unwrap_or_else(|| SpannedText::new(item.ident.to_string(), item.ident.span()));

    let mut attr_specs: Vec<SpannedText> = args.attrs.0.iter().map(Into::into).collect();
    let mut fields = Vec::new();
    let mut field_docs = Vec::new();
    let unit = matches!(item.fields, syn::Fields::Unit);
    if let syn::Fields::Unnamed(f) = &item.fields {
        errors.push(error(
            f.span(),
            "an op struct needs named fields (one per attr) or none: `struct ZeroOut { preserve_index: i64 }`",
        ));
    }
    for field in item.fields.iter_mut() {
        let Some(ident) = field.ident.clone() else {
            continue;
        };
        let options = errors
            .handle(take_attr_options(&mut field.attrs))
            .flatten()
            .map(|(o, _)| o)
            .unwrap_or_default();
        let attr_name = options
            .name
            .as_ref()
            .map_or_else(|| ident.unraw().to_string(), syn::LitStr::value);
        let name_span = options
            .name
            .as_ref()
            .map_or(ident.span(), syn::LitStr::span);
        if is_generic_param(&field.ty, &item.generics) {
            // Already reported: the struct cannot be generic.
        } else if let Some(spec) = errors.handle(typed_attr_spec(
            (&attr_name, name_span),
            &field.ty,
            &field.ty,
            &options,
        )) {
            attr_specs.push(spec);
        }
        if let Some(doc) = doc_comment(&field.attrs) {
            field_docs.push(format!("{attr_name}: {}", doc.text.replace('\n', "\n  ")));
        }
        fields.push(AttrField {
            ident,
            attr: attr_name,
            ty: field.ty.clone(),
        });
    }

    let mut doc = doc_comment(&item.attrs);
    if !field_docs.is_empty() {
        let text = doc.as_ref().map(|d| d.text.clone()).unwrap_or_default();
        let span = doc.as_ref().map_or(item.ident.span(), |d| d.span);
        doc = Some(SpannedText::new(
            format!("{text}\n\n{}", field_docs.join("\n")),
            span,
        ));
    }
    let spec = OpSpec {
        name,
        attrs: attr_specs,
        inputs: args.inputs.0.iter().map(Into::into).collect(),
        outputs: args.outputs.0.iter().map(Into::into).collect(),
        doc,
        flags: flags(&args.flags),
    };
    let def = errors.handle(spec.check());
    let wrapper = args.wrapper.clone();
    let shape_fn = errors
        .handle(shape_fn(&args.shape, &args.shape_fn))
        .flatten();
    errors.finish()?;
    Ok(CheckedOp {
        ident: item.ident.clone(),
        vis: item.vis.clone(),
        spec,
        def: def.expect("no errors, so the op built"),
        fields,
        unit,
        wrapper,
        shape_fn,
        runtime: RuntimePath::new(args.krate.as_ref().map(|k| &k.0)),
    })
}

fn is_generic_param(ty: &syn::Type, generics: &syn::Generics) -> bool {
    matches!(ty, syn::Type::Path(p) if p.path.get_ident().is_some_and(|i| generics.type_params().any(|t| t.ident == *i)))
}
