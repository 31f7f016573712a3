//! Argument values that several macros take.

use darling::FromMeta;
use darling::ast::NestedMeta;
use proc_macro2::Span;

/// A list of string literals: `inputs("x: T", "y: T")`, or one as
/// `inputs = "x: T"`.
#[derive(Clone, Debug, Default)]
pub struct StrList(pub Vec<syn::LitStr>);

impl FromMeta for StrList {
    fn from_list(items: &[NestedMeta]) -> darling::Result<Self> {
        let mut errors = darling::Error::accumulator();
        let mut list = Vec::new();
        for item in items {
            match item {
                NestedMeta::Lit(syn::Lit::Str(s)) => list.push(s.clone()),
                other => errors.push(
                    darling::Error::custom(
                        "expected a string literal, as in `inputs(\"x: float\")`",
                    )
                    .with_span(other),
                ),
            }
        }
        errors.finish_with(StrList(list))
    }

    fn from_string(value: &str) -> darling::Result<Self> {
        Ok(StrList(vec![syn::LitStr::new(value, Span::call_site())]))
    }

    fn from_value(value: &syn::Lit) -> darling::Result<Self> {
        match value {
            syn::Lit::Str(s) => Ok(StrList(vec![s.clone()])),
            _ => Err(darling::Error::unexpected_lit_type(value)),
        }
    }
}

/// An expression as written. (darling's `syn::Expr` would parse the
/// contents of a string literal as the expression.)
#[derive(Clone, Debug)]
pub struct RawExpr(pub syn::Expr);

impl FromMeta for RawExpr {
    fn from_expr(expr: &syn::Expr) -> darling::Result<Self> {
        Ok(RawExpr(expr.clone()))
    }
}

/// How to write `crate = "..."`, for errors.
pub const CRATE_HELP: &str = "`crate` takes the path of a crate that re-exports op-core, in a string: `crate = \"my_facade::op_core\"`";

/// `crate = "facade::op_core"`: where generated code finds op-core, its
/// tokens spanned at the string so that an error about the path (no
/// `__private` there) points at it.
#[derive(Clone, Debug)]
pub struct CratePath(pub syn::Path);

impl FromMeta for CratePath {
    fn from_value(value: &syn::Lit) -> darling::Result<Self> {
        match value {
            syn::Lit::Str(s) => s
                .parse::<syn::Path>()
                .map(CratePath)
                .map_err(|_| darling::Error::custom(CRATE_HELP).with_span(s)),
            other => Err(darling::Error::custom(CRATE_HELP).with_span(other)),
        }
    }
}
