//! Typed attrs: the spec of an attr declared by a Rust type and
//! `#[attr(...)]` options, with the literals those options hold.

use darling::ast::NestedMeta;
use op_spec::DType;
use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::spanned::Spanned;

use super::error;
use crate::dtypes;
use crate::parse::AttrOptions;
use crate::spec::Spanned as SpannedText;

/// The spec of an attr declared by a Rust type: `preserve_index: int >= 0 = 0`,
/// each part spanned on the token it came from. `ty` is the type as
/// written (for spans), `owned` the type the attr is read as.
pub fn typed_attr_spec(
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

/// The attr a field or parameter declares is named like it, unless
/// `#[attr(name = "...")]` says otherwise; with the span to report it at.
pub fn attr_name(ident: &syn::Ident, options: &AttrOptions) -> (String, Span) {
    match &options.name {
        Some(name) => (name.value(), name.span()),
        None => (ident.unraw().to_string(), ident.span()),
    }
}

/// A type as the author wrote it: `Vec<Vec<i64>>`, not `Vec < Vec < i64 > >`.
pub fn type_text(ty: &syn::Type) -> String {
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
pub fn attr_kind(ty: &syn::Type) -> Option<(&'static str, Option<i64>)> {
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
pub fn unknown_type(name: &str, span: Span, groups: bool) -> darling::Error {
    let hint = dtypes::suggest_type_name(name)
        .map(|s| format!(" (did you mean `{s}`?)"))
        .unwrap_or_default();
    let names = "a Rust element type (f32, i64, bool, f16, Complex64, QInt8, ...)";
    let spec_names = "a TensorFlow type name (float, int64, string, ...)";
    let choices = if groups {
        format!(
            "{names}, {spec_names} or a type group ({})",
            dtypes::type_class_names()
        )
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
