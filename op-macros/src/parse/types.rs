//! `types(...)`, shared by `#[kernel]` and `#[op]`.

use darling::FromMeta;
use darling::ast::NestedMeta;
use proc_macro2::Span;
use syn::spanned::Spanned;

/// A type name as written in `types(...)`.
#[derive(Clone, Debug)]
pub struct TypeName {
    pub name: String,
    pub span: Span,
}

/// One entry of `types(...)`: `f32` (for the default attr) or
/// `T = f32` or `T = [f32, realnumbertype]`.
#[derive(Clone, Debug)]
pub struct TypesEntry {
    pub attr: Option<syn::Ident>,
    pub names: Vec<TypeName>,
    pub span: Span,
}

/// One `types(...)`: a cross product of its entries.
#[derive(Clone, Debug)]
pub struct TypesArg {
    pub entries: Vec<TypesEntry>,
    pub span: Span,
}

fn type_name(expr: &syn::Expr) -> darling::Result<TypeName> {
    match expr {
        syn::Expr::Path(p) if p.path.get_ident().is_some() => Ok(TypeName {
            name: p.path.segments[0].ident.to_string(),
            span: p.span(),
        }),
        other => Err(darling::Error::custom(
            "expected a type name such as `f32`, `int32` or `realnumbertype`",
        )
        .with_span(other)),
    }
}

impl FromMeta for TypesArg {
    fn from_list(items: &[NestedMeta]) -> darling::Result<Self> {
        let mut errors = darling::Error::accumulator();
        let mut entries = Vec::new();
        for item in items {
            let entry = match item {
                NestedMeta::Meta(syn::Meta::Path(p)) if p.get_ident().is_some() => {
                    Ok(TypesEntry {
                        attr: None,
                        names: vec![TypeName {
                            name: p.segments[0].ident.to_string(),
                            span: p.span(),
                        }],
                        span: p.span(),
                    })
                }
                NestedMeta::Meta(syn::Meta::NameValue(nv)) if nv.path.get_ident().is_some() => {
                    let names = match &nv.value {
                        syn::Expr::Array(array) => {
                            array.elems.iter().map(type_name).collect::<darling::Result<_>>()
                        }
                        single => type_name(single).map(|n| vec![n]),
                    };
                    names.map(|names| TypesEntry {
                        attr: nv.path.get_ident().cloned(),
                        names,
                        span: nv.span(),
                    })
                }
                other => Err(darling::Error::custom(
                    "expected a type (`f32`), a type group (`realnumbertype`), or an attr with types (`T = [f32, i32]`)",
                )
                .with_span(other)),
            };
            if let Some(entry) = errors.handle(entry) {
                entries.push(entry);
            }
        }
        let span = items.first().map_or_else(Span::call_site, |i| i.span());
        if entries.is_empty() && items.is_empty() {
            errors.push(
                darling::Error::custom(
                    "`types()` is empty: list at least one type, as in `types(f32)`",
                )
                .with_span(&span),
            );
        }
        errors.finish_with(TypesArg { entries, span })
    }
}
