//! Stage 2: the parsed models checked, with every error on the author's
//! token and as many errors as can be found reported together.

use std::collections::BTreeSet;

use darling::ast::NestedMeta;
use op_spec::{DType, OpDef};
use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::spanned::Spanned;

use crate::dtypes;
use crate::parse::{
    AttrOptions, FlagArgs, FnOpArgs, KernelArgs, OpRef, RawExpr, RegisterOpArgs, TypesArg,
    take_attr_options,
};
use crate::runtime_path::RuntimePath;
use crate::spec::{Flags, OpSpec, Spanned as SpannedText, camel_case, doc_comment};

fn error(span: Span, message: impl std::fmt::Display) -> darling::Error {
    darling::Error::custom(message).with_span(&span)
}

/// A struct field or function parameter that receives an attr's value.
#[derive(Clone, Debug)]
pub struct AttrField {
    pub ident: syn::Ident,
    pub attr: String,
    /// The field's type in the generated struct (owned).
    pub ty: syn::Type,
}

/// A checked op: its registration and the Rust items around it.
#[derive(Clone, Debug)]
pub struct CheckedOp {
    pub ident: syn::Ident,
    pub vis: syn::Visibility,
    pub spec: OpSpec,
    pub def: OpDef,
    pub fields: Vec<AttrField>,
    /// Whether the struct has no fields (`struct Foo;`).
    pub unit: bool,
    /// The snake_case wrapper function to generate, if any.
    pub wrapper: Option<syn::Ident>,
    /// The shape function, if any.
    pub shape_fn: Option<ShapeFnModel>,
    /// Where generated code finds the runtime.
    pub runtime: RuntimePath,
}

/// Where an op's shape function comes from.
#[derive(Clone, Debug)]
pub enum ShapeFnModel {
    /// `shape = "unchanged"`: a function of `op_core::shape_inference::library`.
    Library(syn::Ident),
    /// `shape_fn = my_fn` or a closure.
    Custom(Box<syn::Expr>),
}

/// The names of `op_core::shape_inference::library`'s functions.
const SHAPE_LIBRARY: [&str; 6] = [
    "unchanged",
    "scalar",
    "unknown",
    "broadcast",
    "merge_inputs",
    "pass_through",
];

fn shape_fn(
    shape: &Option<RawExpr>,
    custom: &Option<syn::Expr>,
) -> darling::Result<Option<ShapeFnModel>> {
    let Some(shape) = shape else {
        return Ok(custom
            .as_ref()
            .map(|expr| ShapeFnModel::Custom(Box::new(expr.clone()))));
    };
    let mut shape = &shape.0;
    while let syn::Expr::Group(group) = shape {
        shape = &group.expr;
    }
    let name = match shape {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(name),
            ..
        }) => name,
        other => {
            let text = quote::quote!(#other).to_string().replace(' ', "");
            let fix = if SHAPE_LIBRARY.contains(&text.as_str()) {
                format!("write `shape = \"{text}\"`")
            } else {
                format!("for a function of your own, write `shape_fn = {text}`")
            };
            return Err(error(
                other.span(),
                format!(
                    "`shape` takes the name of a library shape function in quotes ({}): {fix}",
                    SHAPE_LIBRARY.join(", ")
                ),
            ));
        }
    };
    if custom.is_some() {
        return Err(error(
            name.span(),
            format!(
                "`shape = \"{}\"` and `shape_fn = ...` both give the op's shape function: keep one, `shape` for a function of `op_core::shape_inference::library` or `shape_fn` for your own",
                name.value()
            ),
        ));
    }
    let value = name.value();
    if SHAPE_LIBRARY.contains(&value.as_str()) {
        return Ok(Some(ShapeFnModel::Library(syn::Ident::new(
            &value,
            name.span(),
        ))));
    }
    let hint = op_spec::suggest::closest(&value, SHAPE_LIBRARY)
        .map(|s| format!("did you mean \"{s}\"? "))
        .unwrap_or_default();
    Err(error(
        name.span(),
        format!(
            "no shape function \"{value}\" in the library: {hint}the library has {}; for your own, write `shape_fn = my_shape_fn`",
            SHAPE_LIBRARY.join(", ")
        ),
    ))
}

fn flags(args: &FlagArgs) -> Flags {
    Flags {
        stateful: args.stateful.is_present(),
        commutative: args.commutative.is_present(),
        aggregate: args.aggregate.is_present(),
        allows_uninitialized_input: args.allows_uninitialized_input.is_present(),
        distributed_communication: args.distributed_communication.is_present(),
        deprecated: args
            .deprecated
            .as_ref()
            .map(|d| (d.version, d.explanation.value())),
    }
}

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

/// The spec of an attr declared by a Rust type: `preserve_index: int >= 0 = 0`,
/// each part spanned on the token it came from. `ty` is the type as
/// written (for spans), `owned` the type the attr is read as.
fn typed_attr_spec(
    name: (&str, Span),
    ty: &syn::Type,
    owned: &syn::Type,
    options: &AttrOptions,
) -> darling::Result<SpannedText> {
    let Some((kind, implicit_min)) = attr_kind(owned) else {
        return Err(not_an_attr_type(ty));
    };
    let mut errors = darling::Error::accumulator();
    let mut spec = SpannedText::derived("", name.1);
    spec.push(name.0, name.1);
    spec.push(": ", name.1);
    match &options.one_of {
        Some(one_of) => {
            let element = kind.trim_start_matches("list(").trim_end_matches(')');
            let set = errors.handle(allowed_set(element, one_of.items.as_slice(), one_of.span));
            let set = set.unwrap_or_default();
            if kind.starts_with("list(") {
                spec.push(&format!("list({set})"), one_of.span);
            } else {
                spec.push(&set, one_of.span);
            }
        }
        None => spec.push(kind, ty.span()),
    }
    let min = match &options.min {
        Some(expr) => errors
            .handle(int_literal(&expr.0))
            .map(|m| (m, expr.0.span())),
        None => implicit_min.map(|m| (m, ty.span())),
    };
    if let Some((min, span)) = min {
        spec.push(&format!(" >= {min}"), span);
    }
    if let Some(default) = &options.default
        && let Some(text) = errors.handle(default_text(&default.0))
    {
        spec.push(&format!(" = {text}"), default.0.span());
    }
    errors.finish_with(spec)
}

/// A type as the author wrote it: `Vec<Vec<i64>>`, not `Vec < Vec < i64 > >`.
fn type_text(ty: &syn::Type) -> String {
    let raw = quote::quote!(#ty).to_string();
    let chars: Vec<char> = raw.chars().collect();
    let word = |c: Option<&char>| c.is_some_and(|c| c.is_alphanumeric() || *c == '_' || *c == '\'');
    let mut out = String::new();
    for (i, c) in chars.iter().enumerate() {
        if *c == ' ' && !(word(chars.get(i.wrapping_sub(1))) && word(chars.get(i + 1))) {
            continue;
        }
        out.push(*c);
        if *c == ',' {
            out.push(' ');
        }
    }
    out
}

fn not_an_attr_type(ty: &syn::Type) -> darling::Error {
    let nested = matches!(attr_kind_name(ty).as_deref(), Some("Vec"))
        .then_some(" (attr lists hold scalars: there are no lists of lists)")
        .unwrap_or_default();
    error(
        ty.span(),
        format!(
            "`{}` cannot hold an attr{nested}: use i64, i32, usize, f32, bool, String, DType, ShapeValue, or a Vec of one of these (the attr's kind follows from the type)",
            type_text(ty)
        ),
    )
}

/// The last path segment's name of `Vec<T>`'s `T`, if `ty` is a `Vec`.
fn attr_kind_name(ty: &syn::Type) -> Option<String> {
    dtypes::type_args(ty, &["Vec"])?
        .next()
        .and_then(dtypes::type_name)
}

/// The attr kind a Rust type holds, and a minimum it implies.
fn attr_kind(ty: &syn::Type) -> Option<(&'static str, Option<i64>)> {
    if let Some(mut args) = dtypes::type_args(ty, &["Vec"]) {
        let inner = args.next().and_then(dtypes::type_name)?;
        return Some(match inner.as_str() {
            "u8" => ("string", None),
            "i64" => ("list(int)", None),
            "f32" => ("list(float)", None),
            "bool" => ("list(bool)", None),
            "String" => ("list(string)", None),
            "DType" => ("list(type)", None),
            "ShapeValue" => ("list(shape)", None),
            _ => return None,
        });
    }
    let name = dtypes::type_name(ty)?;
    let kind = match name.as_str() {
        "i64" | "i32" | "usize" => "int",
        "f32" => "float",
        "bool" => "bool",
        "String" => "string",
        "DType" => "type",
        "ShapeValue" => "shape",
        _ => return None,
    };
    Some((kind, (name == "usize").then_some(0)))
}

/// `{'a', 'b'}` or `{float, int32}` from `one_of(...)`.
fn allowed_set(kind: &str, items: &[NestedMeta], span: Span) -> darling::Result<String> {
    let mut errors = darling::Error::accumulator();
    let mut parts = Vec::new();
    for item in items {
        match (kind, item) {
            ("string", NestedMeta::Lit(syn::Lit::Str(s))) => parts.push(quote_string(&s.value())),
            ("type", NestedMeta::Meta(syn::Meta::Path(p))) if p.get_ident().is_some() => {
                let name = p.segments[0].ident.to_string();
                match dtypes::expand_type_name(&name) {
                    Some(dtypes) => {
                        for d in dtypes {
                            let name = d.spec_name().to_owned();
                            if !parts.contains(&name) {
                                parts.push(name);
                            }
                        }
                    }
                    None => errors.push(unknown_type(&name, p.span(), true)),
                }
            }
            ("string" | "type", other) => errors.push(error(
                other.span(),
                if kind == "string" {
                    "`one_of` of a string attr takes string literals: `one_of(\"apple\", \"orange\")`"
                } else {
                    "`one_of` of a type attr takes type names: `one_of(f32, i32)`"
                },
            )),
            _ => {
                errors.push(error(
                    span,
                    "`one_of` applies to string and type attrs (String, DType, or a Vec of them); an int attr can only have a minimum, as in `min = 0`",
                ));
                break;
            }
        }
    }
    errors.finish_with(format!("{{{}}}", parts.join(", ")))
}

fn quote_string(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

fn int_literal(expr: &syn::Expr) -> darling::Result<i64> {
    let text = literal_text(expr)?;
    text.parse::<i64>()
        .map_err(|_| error(expr.span(), "expected an integer literal, as in `min = 0`"))
}

/// An unknown type name; `groups` says whether type groups are allowed there.
fn unknown_type(name: &str, span: Span, groups: bool) -> darling::Error {
    let hint = dtypes::suggest_type_name(name)
        .map(|s| format!(" (did you mean `{s}`?)"))
        .unwrap_or_default();
    let names = "a Rust element type (f32, i64, bool, f16, Complex64, QInt8, ...)";
    let spec_names = "a TensorFlow type name (float, int64, string, ...)";
    let choices = if groups {
        format!("{names}, {spec_names} or a type group (numbertype, realnumbertype, quantizedtype)")
    } else {
        format!("{names} or {spec_names}")
    };
    error(span, format!("unknown type `{name}`{hint}: use {choices}"))
}

/// The spec text of a literal: `-3`, `1.5`, `true`, `'text'`.
fn literal_text(expr: &syn::Expr) -> darling::Result<String> {
    match expr {
        syn::Expr::Lit(lit) => match &lit.lit {
            syn::Lit::Int(i) => Ok(i.base10_digits().to_owned()),
            syn::Lit::Float(f) => Ok(f.base10_digits().to_owned()),
            syn::Lit::Bool(b) => Ok(b.value.to_string()),
            syn::Lit::Str(s) => Ok(quote_string(&s.value())),
            other => Err(error(
                other.span(),
                "unsupported literal in an attr default",
            )),
        },
        syn::Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => Ok(format!("-{}", literal_text(expr)?)),
        syn::Expr::Group(g) => literal_text(&g.expr),
        other => Err(error(
            other.span(),
            "expected a literal (`0`, `-1.5`, `true`, `\"text\"`), a type (`f32`) or a list of them (`[1, 2]`)",
        )),
    }
}

/// The spec text of a default value.
fn default_text(expr: &syn::Expr) -> darling::Result<String> {
    match expr {
        syn::Expr::Array(array) => {
            let items: darling::Result<Vec<String>> =
                array.elems.iter().map(default_text).collect();
            Ok(format!("[{}]", items?.join(", ")))
        }
        syn::Expr::Path(p) if p.path.get_ident().is_some() => {
            let name = p.path.segments[0].ident.to_string();
            dtypes::dtype_from_name(&name)
                .or_else(|| DType::from_enum_name(&name))
                .map(|d| d.enum_name().to_owned())
                .ok_or_else(|| unknown_type(&name, p.span(), false))
        }
        other => literal_text(other),
    }
}

/// The attrs a kernel is constrained on, and its type combinations.
#[derive(Clone, Debug)]
pub struct TypeCombos {
    /// The constrained attrs, in the order of the generic parameters.
    pub attrs: Vec<(String, Span)>,
    /// One dtype per attr in each combination, with the token that named it.
    pub combos: Vec<Vec<(DType, Span)>>,
    /// Per attr: whether the author named it (`T = f32`) rather than
    /// leaving it implied (`f32`).
    pub named: Vec<bool>,
}

impl TypeCombos {
    fn none() -> Self {
        TypeCombos {
            attrs: Vec::new(),
            combos: Vec::new(),
            named: Vec::new(),
        }
    }
}

/// Resolves `types(...)` into combinations. Unnamed entries are for
/// `default_attr` (when there is one).
pub fn type_combos(args: &[TypesArg], default_attr: Option<&str>) -> darling::Result<TypeCombos> {
    let mut errors = darling::Error::accumulator();
    let mut attrs: Option<Vec<(String, Span)>> = None;
    let mut combos: Vec<Vec<(DType, Span)>> = Vec::new();
    let mut seen = BTreeSet::new();
    let mut named = Vec::new();
    for arg in args {
        let mut names: Vec<(String, Span)> = Vec::new();
        let mut sets: Vec<Vec<(DType, Span)>> = Vec::new();
        let mut named_here: Vec<bool> = Vec::new();
        for entry in &arg.entries {
            let attr = match (&entry.attr, default_attr) {
                (Some(a), _) => a.to_string(),
                (None, Some(d)) => d.to_owned(),
                (None, None) => {
                    errors.push(error(
                        entry.span,
                        "say which type attr these types are for, as in `types(T = [f32, i32])`",
                    ));
                    continue;
                }
            };
            let mut set = Vec::new();
            for name in &entry.names {
                match dtypes::expand_type_name(&name.name) {
                    Some(dtypes) => set.extend(dtypes.into_iter().map(|d| (d, name.span))),
                    None => errors.push(unknown_type(&name.name, name.span, true)),
                }
            }
            match names.iter().position(|(n, _)| *n == attr) {
                Some(i) => sets[i].extend(set),
                None => {
                    names.push((attr, entry.span));
                    sets.push(set);
                    named_here.push(entry.attr.is_some());
                }
            }
        }
        // Every `types(...)` must constrain the same attrs, in the same order.
        match &attrs {
            None => {
                attrs = Some(names.clone());
                named = named_here;
            }
            Some(first) => {
                let same = first.len() == names.len()
                    && names.iter().all(|(n, _)| first.iter().any(|(f, _)| f == n));
                if !same {
                    let first: Vec<&str> = first.iter().map(|(n, _)| n.as_str()).collect();
                    errors.push(error(
                        arg.span,
                        format!(
                            "every `types(...)` must constrain the same attrs; the first one constrains {}",
                            first.join(", ")
                        ),
                    ));
                    continue;
                }
                // Reorder this arg's sets into the first's attr order.
                let order: Vec<usize> = first
                    .iter()
                    .map(|(f, _)| names.iter().position(|(n, _)| n == f).unwrap_or(0))
                    .collect();
                sets = order.iter().map(|&i| sets[i].clone()).collect();
            }
        }
        // The cross product of this arg's sets.
        let mut product: Vec<Vec<(DType, Span)>> = vec![Vec::new()];
        for set in &sets {
            product = product
                .into_iter()
                .flat_map(|prefix| {
                    set.iter().map(move |item| {
                        let mut combo = prefix.clone();
                        combo.push(*item);
                        combo
                    })
                })
                .collect();
        }
        for combo in product {
            let key: Vec<DType> = combo.iter().map(|(d, _)| *d).collect();
            if seen.insert(key.clone()) {
                combos.push(combo);
            } else {
                let span = combo.last().map_or(arg.span, |(_, s)| *s);
                let names: Vec<&str> = key.iter().map(|d| d.spec_name()).collect();
                errors.push(error(
                    span,
                    format!(
                        "the type combination ({}) is listed twice: remove one",
                        names.join(", ")
                    ),
                ));
            }
        }
    }
    errors.finish_with(TypeCombos {
        attrs: attrs.unwrap_or_default(),
        combos,
        named,
    })
}

/// A kernel's code: a function, or an inherent impl with `new` and `compute`.
#[derive(Clone, Debug)]
pub enum KernelBody {
    Fn {
        item: Box<syn::ItemFn>,
        signature: KernelFnSignature,
    },
    Impl {
        item: Box<syn::ItemImpl>,
    },
}

/// A checked `#[kernel]`.
#[derive(Clone, Debug)]
pub struct CheckedKernel {
    pub op: OpRef,
    pub device: op_spec::DeviceType,
    pub types: TypeCombos,
    pub host_memory: Vec<syn::LitStr>,
    pub body: KernelBody,
    /// Where generated code finds the runtime.
    pub runtime: RuntimePath,
}

pub fn kernel(args: &KernelArgs, item: syn::Item) -> darling::Result<CheckedKernel> {
    let mut errors = darling::Error::accumulator();
    let op = match &args.op {
        Some(op) => Some(op.clone()),
        None => {
            errors.push(error(
                Span::call_site(),
                "say which op this kernel implements: `#[kernel(op = MyOp)]` (the op's Rust type, checked at compile time) or `#[kernel(op = \"MyOp\")]` (its registered name)",
            ));
            None
        }
    };
    // The names are the runtime's own (`op_spec::DeviceType`), lowercase
    // as registrations and messages spell them.
    let device_names = op_spec::DeviceType::ALL.map(op_spec::DeviceType::name);
    let device = match &args.device {
        None => op_spec::DeviceType::Cpu,
        Some(d) => match device_names.iter().position(|n| *n == d.value()) {
            Some(i) => op_spec::DeviceType::ALL[i],
            None => {
                let hint = op_spec::suggest::closest(&d.value(), device_names)
                    .map(|s| format!("did you mean \"{s}\"? "))
                    .unwrap_or_default();
                let list: Vec<String> = device_names.iter().map(|n| format!("\"{n}\"")).collect();
                errors.push(error(
                    d.span(),
                    format!(
                        "unknown device \"{}\": {hint}the devices are {}",
                        d.value(),
                        list.join(" and ")
                    ),
                ));
                op_spec::DeviceType::Cpu
            }
        },
    };
    // On an error in `types(...)`, the kernel's generics are not compared
    // with it: that would only repeat the error.
    let types = errors.handle(type_combos(&args.types, Some("T")));
    let (generics, body) = match item {
        syn::Item::Fn(mut f) => {
            let signature = errors.handle(kernel_fn_signature(&mut f.sig));
            (
                f.sig.generics.clone(),
                KernelBody::Fn {
                    item: Box::new(f),
                    signature: signature.unwrap_or(KernelFnSignature {
                        attrs_ty: None,
                        params: Vec::new(),
                        returns: None,
                    }),
                },
            )
        }
        syn::Item::Impl(i) => {
            errors.handle(kernel_impl(&i));
            (i.generics.clone(), KernelBody::Impl { item: Box::new(i) })
        }
        other => {
            errors.push(error(
                item_keyword_span(&other),
                "`#[kernel]` goes on a function `fn k<T>(ctx: &mut KernelContext<'_>, attrs: &Op) -> Result<()>` or on an inherent impl with `fn new(..)` and `fn compute(&self, ..)`",
            ));
            errors.finish()?;
            unreachable!("an error was pushed");
        }
    };
    let type_params: Vec<&syn::TypeParam> = generics.type_params().collect();
    if let Some(c) = generics.const_params().next() {
        errors.push(error(
            c.span(),
            "a kernel cannot have const generic parameters",
        ));
    }
    // A kernel without type parameters may still be registered for chosen
    // types (TensorFlow's `ZeroOutInt32Op` with `TypeConstraint<int32>`); a
    // generic one needs one type parameter per constrained attr.
    if let Some(types) = &types
        && !type_params.is_empty()
        && type_params.len() != types.attrs.len()
    {
        let attrs: Vec<&str> = types.attrs.iter().map(|(n, _)| n.as_str()).collect();
        let (span, message) = match (type_params.len(), attrs.len()) {
            (n, 0) => (
                type_params[0].ident.span(),
                format!(
                    "the kernel is generic over {n} type(s) but has no `types(...)`: list the types to register, as in `#[kernel(op = .., types(f32, i32))]`"
                ),
            ),
            (n, m) if n < m => (
                types.attrs[n].1,
                format!(
                    "`types(...)` constrains {m} attrs ({}) but the kernel has {n} type parameter(s): add a type parameter for `{}`, or remove it from `types(...)` (the type parameters take the attrs' types in order)",
                    attrs.join(", "),
                    attrs[n],
                ),
            ),
            (n, m) => (
                type_params[m].ident.span(),
                format!(
                    "the kernel has {n} type parameters but `types(...)` constrains {m} attr(s) ({}): list the types of this one in `types(...)`, as in `types({} = [f32])`, or remove it",
                    attrs.join(", "),
                    type_params[m].ident,
                ),
            ),
        };
        errors.push(error(span, message));
    }
    errors.finish()?;
    Ok(CheckedKernel {
        op: op.expect("no errors, so an op was given"),
        device,
        types: types.unwrap_or_else(TypeCombos::none),
        host_memory: args.host_memory.0.clone(),
        body,
        runtime: RuntimePath::new(args.krate.as_ref().map(|k| &k.0)),
    })
}

/// The span of an item's keyword (`struct`, `enum`, ...), for errors about
/// what kind of item it is.
fn item_keyword_span(item: &syn::Item) -> Span {
    match item {
        syn::Item::Struct(i) => i.struct_token.span,
        syn::Item::Enum(i) => i.enum_token.span,
        syn::Item::Trait(i) => i.trait_token.span,
        syn::Item::Mod(i) => i.mod_token.span,
        syn::Item::Const(i) => i.const_token.span,
        syn::Item::Static(i) => i.static_token.span,
        syn::Item::Type(i) => i.type_token.span,
        other => other.span(),
    }
}

fn last_segment_is(ty: &syn::Type, name: &str) -> bool {
    match ty {
        syn::Type::Path(p) => p.path.segments.last().is_some_and(|s| s.ident == name),
        _ => false,
    }
}

fn check_plain_signature(sig: &syn::Signature, errors: &mut darling::error::Accumulator) {
    if let Some(t) = &sig.asyncness {
        errors.push(error(t.span(), "a kernel cannot be async: remove `async`"));
    }
    if let Some(t) = &sig.unsafety {
        errors.push(error(
            t.span(),
            "a kernel cannot be unsafe: remove `unsafe`",
        ));
    }
    if let Some(t) = &sig.constness {
        errors.push(error(t.span(), "a kernel cannot be const: remove `const`"));
    }
    if let Some(abi) = &sig.abi {
        errors.push(error(abi.span(), "a kernel cannot have an ABI: remove it"));
    }
}

fn check_result_output(sig: &syn::Signature, what: &str, errors: &mut darling::error::Accumulator) {
    match &sig.output {
        syn::ReturnType::Type(_, ty) if last_segment_is(ty, "Result") => {}
        syn::ReturnType::Type(_, ty) => errors.push(error(
            ty.span(),
            format!("{what} must return `op_core::Result<..>` so that errors reach the caller"),
        )),
        syn::ReturnType::Default => errors.push(error(
            sig.ident.span(),
            format!("{what} must return `op_core::Result<..>`: add `-> Result<()>` and end with `Ok(())`"),
        )),
    }
}

fn is_context_param(arg: &syn::FnArg, context: &str, mutable: bool) -> bool {
    match arg {
        syn::FnArg::Typed(p) => match &*p.ty {
            syn::Type::Reference(r) => {
                r.mutability.is_some() == mutable && last_segment_is(&r.elem, context)
            }
            _ => false,
        },
        syn::FnArg::Receiver(_) => false,
    }
}

/// A kernel function's parameter after `ctx`.
#[derive(Clone, Debug)]
pub enum KernelParam {
    /// `attrs: &MyOp`: the attrs, parsed once per node.
    Attrs,
    /// `#[resource] table: &MyTable`: the resource an input's handle
    /// refers to, resolved on each call.
    Resource {
        /// The input holding the handle.
        input: syn::LitStr,
        /// The resource type (`MyTable`).
        ty: Box<syn::Type>,
    },
}

/// A checked kernel function signature.
#[derive(Clone, Debug)]
pub struct KernelFnSignature {
    /// The type of the attrs parameter, if the function takes one.
    pub attrs_ty: Option<Box<syn::Type>>,
    /// The parameters after `ctx`, in order.
    pub params: Vec<KernelParam>,
    /// `T` of `Result<T>`, unless it is `()`: the value stored in output 0.
    pub returns: Option<Box<syn::Type>>,
}

const KERNEL_PARAMS: &str = "`ctx: &mut KernelContext<'_>`, then optionally `attrs: &MyOp` and resources marked `#[resource]` (`#[resource] table: &MyTable`)";

/// One parameter after `ctx`: `#[resource]` (taking the attribute out of
/// the item) or the attrs.
fn kernel_param(
    param: &mut syn::PatType,
    seen: &mut Vec<String>,
    has_attrs: bool,
    errors: &mut darling::error::Accumulator,
) -> Option<KernelParam> {
    let options = errors.handle(crate::parse::take_resource_options(&mut param.attrs))?;
    let Some((options, _)) = options else {
        return match &*param.ty {
            _ if has_attrs => {
                let name = match &*param.pat {
                    syn::Pat::Ident(p) => format!("`{}`", p.ident),
                    _ => "this".to_owned(),
                };
                errors.push(error(
                    param.span(),
                    format!("a kernel function takes one attrs parameter, and {name} is a second one: read inputs from `ctx`, and mark a resource parameter `#[resource]` (`#[resource] table: &MyTable`)"),
                ));
                None
            }
            syn::Type::Reference(r) if r.mutability.is_none() => Some(KernelParam::Attrs),
            other => {
                errors.push(error(
                    other.span(),
                    "a kernel takes the op's attrs by shared reference, `attrs: &MyOp` (and a resource as `#[resource] table: &MyTable`)",
                ));
                None
            }
        };
    };
    let ty = match &*param.ty {
        syn::Type::Reference(r) if r.mutability.is_none() => Some(r.elem.clone()),
        other => {
            errors.push(error(
                other.span(),
                "a `#[resource]` parameter takes the resource by shared reference, as in `table: &MyTable`: other kernels and threads share it, so it guards its own state (a Mutex, RwLock or atomics)",
            ));
            None
        }
    };
    let input = match (&options.input, &*param.pat) {
        (Some(input), _) => Some(input.clone()),
        (None, syn::Pat::Ident(p)) => {
            let name = p.ident.to_string();
            let name = name.strip_prefix("r#").unwrap_or(&name);
            Some(syn::LitStr::new(name, p.ident.span()))
        }
        (None, other) => {
            errors.push(error(
                other.span(),
                "a `#[resource]` parameter receives the input of its name: name it like the op's `resource` input, or write `#[resource(input = \"table_handle\")]`",
            ));
            None
        }
    };
    let (input, ty) = (input?, ty?);
    if seen.contains(&input.value()) {
        errors.push(error(
            input.span(),
            format!(
                "input `{}` already has a `#[resource]` parameter: take it once",
                input.value()
            ),
        ));
        return None;
    }
    seen.push(input.value());
    Some(KernelParam::Resource { input, ty })
}

/// Checks `fn k<T>(ctx: &mut KernelContext<'_>[, attrs: &A][, #[resource]
/// r: &R ...]) -> Result<()>` (or `Result<Tensor>`, `Result<Arc<R>>`),
/// taking the `#[resource]` attributes out of the signature.
fn kernel_fn_signature(sig: &mut syn::Signature) -> darling::Result<KernelFnSignature> {
    let mut errors = darling::Error::accumulator();
    check_plain_signature(sig, &mut errors);
    check_result_output(sig, "a kernel function", &mut errors);
    let returns = match &sig.output {
        syn::ReturnType::Type(_, ty) => result_inner(ty)
            .filter(|inner| !matches!(inner, syn::Type::Tuple(t) if t.elems.is_empty()))
            .map(|inner| Box::new(inner.clone())),
        syn::ReturnType::Default => None,
    };
    let mut signature = KernelFnSignature {
        attrs_ty: None,
        params: Vec::new(),
        returns,
    };
    let paren_span = sig.paren_token.span.join();
    let mut params = sig.inputs.iter_mut();
    match params.next() {
        None => errors.push(error(
            paren_span,
            format!("a kernel function takes {KERNEL_PARAMS}"),
        )),
        Some(syn::FnArg::Receiver(r)) => {
            let span = r.self_token.span;
            errors.push(error(span, "a kernel function cannot take `self`; for a kernel with state, put `#[kernel]` on the impl block, with `fn new(ctx: &KernelConstruction<'_>) -> Result<Self>` and `fn compute(&self, ctx: &mut KernelContext<'_>) -> Result<()>`"));
            return errors.finish_with(signature);
        }
        Some(first) => {
            if !is_context_param(first, "KernelContext", true) {
                errors.push(error(
                    first.span(),
                    "the first parameter of a kernel function must be `ctx: &mut KernelContext<'_>`",
                ));
            }
        }
    }
    let mut seen = Vec::new();
    for param in params {
        let syn::FnArg::Typed(param) = param else {
            continue;
        };
        let has_attrs = signature.attrs_ty.is_some();
        match kernel_param(param, &mut seen, has_attrs, &mut errors) {
            Some(KernelParam::Attrs) => {
                if let syn::Type::Reference(r) = &*param.ty {
                    signature.attrs_ty = Some(r.elem.clone());
                }
                signature.params.push(KernelParam::Attrs);
            }
            Some(resource) => signature.params.push(resource),
            None => {}
        }
    }
    errors.finish_with(signature)
}

/// Checks an `impl` for a struct kernel: inherent, with `new` and `compute`.
fn kernel_impl(item: &syn::ItemImpl) -> darling::Result<()> {
    let mut errors = darling::Error::accumulator();
    if let Some((_, path, _)) = &item.trait_ {
        errors.push(error(
            path.span(),
            format!(
                "`#[kernel]` goes on an inherent impl (`impl MyKernel {{ fn new(..); fn compute(..) }}`); it implements `{}` for you",
                quote::quote!(#path).to_string().replace(' ', "")
            ),
        ));
        return errors.finish();
    }
    let find = |name: &str| {
        item.items.iter().find_map(|i| match i {
            syn::ImplItem::Fn(f) if f.sig.ident == name => Some(f),
            _ => None,
        })
    };
    match find("new") {
        None => errors.push(error(
            item.self_ty.span(),
            "a kernel impl needs `fn new(ctx: &KernelConstruction<'_>) -> Result<Self>`, which reads and checks the attrs once",
        )),
        Some(f) => {
            check_plain_signature(&f.sig, &mut errors);
            check_result_output(&f.sig, "`new`", &mut errors);
            let ok = f.sig.inputs.len() == 1
                && f.sig.inputs.first().is_some_and(|a| is_context_param(a, "KernelConstruction", false));
            if !ok {
                errors.push(error(
                    f.sig.inputs.span(),
                    "`new` takes one parameter, `ctx: &KernelConstruction<'_>`",
                ));
            }
        }
    }
    match find("compute") {
        None => errors.push(error(
            item.self_ty.span(),
            "a kernel impl needs `fn compute(&self, ctx: &mut KernelContext<'_>) -> Result<()>`",
        )),
        Some(f) => {
            check_plain_signature(&f.sig, &mut errors);
            check_result_output(&f.sig, "`compute`", &mut errors);
            let params: Vec<&syn::FnArg> = f.sig.inputs.iter().collect();
            let ok = matches!(params.as_slice(), [syn::FnArg::Receiver(r), ctx]
                if r.reference.is_some() && r.mutability.is_none() && is_context_param(ctx, "KernelContext", true));
            if let Some(syn::FnArg::Receiver(r)) = params.first()
                && r.reference.is_some()
                && let Some(m) = r.mutability
            {
                errors.push(error(
                    m.span,
                    "`compute` takes `&self`, not `&mut self`: one kernel serves concurrent calls; keep changing state in a `Mutex` or an atomic",
                ));
            } else if !ok {
                errors.push(error(
                    f.sig.inputs.span(),
                    "`compute` takes `&self` and `ctx: &mut KernelContext<'_>` (kernels run concurrently, so not `&mut self`)",
                ));
            }
        }
    }
    errors.finish()
}

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

/// `T` in `Result<T>` / `Result<T, E>`.
fn result_inner(ty: &syn::Type) -> Option<&syn::Type> {
    dtypes::type_args(ty, &["Result"])?.next()
}
