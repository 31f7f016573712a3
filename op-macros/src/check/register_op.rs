//! `#[register_op]`: an op declared on a struct whose fields are its attrs.

use syn::spanned::Spanned;

use super::attr::{attr_name, typed_attr_spec};
use super::shape_fn::shape_fn;
use super::{AttrField, CheckedOp, Failed, error, flags};
use crate::parse::{RegisterOpArgs, take_attr_options};
use crate::runtime_path::RuntimePath;
use crate::spec::{OpSpec, Spanned as SpannedText, doc_comment};

/// `#[register_op]` on `item`: its shape, its fields as attrs, then the
/// spec they make with the arguments. Strips the `#[attr]` attributes
/// from its fields.
///
/// When the spec strings are the only mistake, the failure carries a
/// stand-in op built from [`OpSpec::stand_in`], so that kernels and calls
/// of the op report nothing on top of the spec's own errors.
pub fn register_op(
    args: &RegisterOpArgs,
    item: &mut syn::ItemStruct,
) -> Result<CheckedOp, Failed<CheckedOp>> {
    let mut errors = darling::Error::accumulator();
    check_not_generic(item, &mut errors);
    check_named_fields(item, &mut errors);
    let name = args
        .name
        .as_ref()
        .map(SpannedText::from)
        .unwrap_or_else(|| SpannedText::new(item.ident.to_string(), item.ident.span()));
    let unit = matches!(item.fields, syn::Fields::Unit);
    let fields = attr_fields(item, &mut errors);
    let spec = OpSpec {
        name,
        attrs: args
            .attrs
            .0
            .iter()
            .map(Into::into)
            .chain(fields.specs)
            .collect(),
        inputs: args.inputs.0.iter().map(Into::into).collect(),
        outputs: args.outputs.0.iter().map(Into::into).collect(),
        full_types: args.full_types.0.iter().map(Into::into).collect(),
        doc: op_doc(item, &fields.docs),
        flags: flags(&args.flags),
    };
    let before_spec = errors.finish();
    let def = spec.check();
    let shape_fn = shape_fn(&args.shape, &args.shape_fn);
    let op = |spec, def| CheckedOp {
        ident: item.ident.clone(),
        vis: item.vis.clone(),
        spec,
        def,
        fields: fields.fields.clone(),
        unit,
        wrapper: args.wrapper.clone(),
        shape_fn: shape_fn.as_ref().ok().cloned().flatten(),
        runtime: RuntimePath::new(args.krate.as_ref().map(|k| &k.0)),
    };
    match (before_spec, def, &shape_fn) {
        (Ok(()), Ok(def), Ok(_)) => Ok(op(spec, def)),
        (Ok(()), Err(spec_errors), Ok(_)) => Err(Failed {
            errors: spec_errors,
            stand_in: spec.stand_in().map(|(spec, def)| Box::new(op(spec, def))),
        }),
        (before_spec, def, shape_fn) => {
            let spec_errors = if fields.broken.is_empty() {
                def.err()
            } else {
                spec.check_besides(&fields.broken)
            };
            let errors = [before_spec.err(), spec_errors, shape_fn.clone().err()];
            Err(darling::Error::multiple(errors.into_iter().flatten().collect()).into())
        }
    }
}

/// The struct's fields hold attr values, which have no type parameters;
/// type attrs are declared in `attrs(...)`.
fn check_not_generic(item: &syn::ItemStruct, errors: &mut darling::error::Accumulator) {
    if !item.generics.params.is_empty() {
        errors.push(error(
            item.generics.span(),
            "an op struct cannot be generic: its fields hold attr values, and type attrs are declared with `attrs(\"T: type\")`",
        ));
    }
}

/// Each field is named after its attr, so a tuple struct has no names to
/// give.
fn check_named_fields(item: &syn::ItemStruct, errors: &mut darling::error::Accumulator) {
    if let syn::Fields::Unnamed(f) = &item.fields {
        errors.push(error(
            f.span(),
            "an op struct needs named fields (one per attr) or none: `struct ZeroOut { preserve_index: i64 }`",
        ));
    }
}

/// What the fields declare: the attr fields, their specs, their doc
/// comments (`name: text`, for the op's doc), and the attrs of the fields
/// whose errors were reported (no spec could be made of them).
struct AttrFields {
    fields: Vec<AttrField>,
    specs: Vec<SpannedText>,
    docs: Vec<String>,
    broken: Vec<String>,
}

/// Each named field is an attr of the kind its type says, with its
/// `#[attr(...)]` options.
fn attr_fields(item: &mut syn::ItemStruct, errors: &mut darling::error::Accumulator) -> AttrFields {
    let mut out = AttrFields {
        fields: Vec::new(),
        specs: Vec::new(),
        docs: Vec::new(),
        broken: Vec::new(),
    };
    for field in item.fields.iter_mut() {
        let Some(ident) = field.ident.clone() else {
            continue;
        };
        let options = errors
            .handle(take_attr_options(&mut field.attrs))
            .flatten()
            .map(|(o, _)| o)
            .unwrap_or_default();
        let (attr_name, name_span) = attr_name(&ident, &options);
        let spec = if is_generic_param(&field.ty, &item.generics) {
            // Already reported: the struct cannot be generic.
            None
        } else {
            errors.handle(typed_attr_spec(
                (&attr_name, name_span),
                &field.ty,
                &field.ty,
                &options,
            ))
        };
        // A field whose attr could not be declared keeps its docs out of
        // the op's: they would describe an attr the op lacks, a second
        // error for the one mistake.
        match spec {
            Some(spec) => {
                out.specs.push(spec);
                if let Some(doc) = doc_comment(&field.attrs) {
                    out.docs
                        .push(format!("{attr_name}: {}", doc.text.replace('\n', "\n  ")));
                }
            }
            None => out.broken.push(attr_name.clone()),
        }
        out.fields.push(AttrField {
            ident,
            attr: attr_name,
            ty: field.ty.clone(),
        });
    }
    out
}

/// The op's doc: the struct's doc comment, then each documented field's,
/// as TensorFlow's `Doc` lists attrs.
fn op_doc(item: &syn::ItemStruct, field_docs: &[String]) -> Option<SpannedText> {
    let doc = doc_comment(&item.attrs);
    if field_docs.is_empty() {
        return doc;
    }
    let text = doc.as_ref().map(|d| d.text.clone()).unwrap_or_default();
    let span = doc.as_ref().map_or(item.ident.span(), |d| d.span);
    Some(SpannedText::new(
        format!("{text}\n\n{}", field_docs.join("\n")),
        span,
    ))
}

fn is_generic_param(ty: &syn::Type, generics: &syn::Generics) -> bool {
    matches!(ty, syn::Type::Path(p) if p.path.get_ident().is_some_and(|i| generics.type_params().any(|t| t.ident == *i)))
}
