//! The helper attributes on fields and parameters: `#[attr(...)]` and
//! `#[resource(...)]`.

use darling::FromMeta;
use darling::ast::NestedMeta;
use proc_macro2::Span;
use syn::spanned::Spanned;

use super::args;
use super::keys::{Keys, arguments};

arguments! {
    /// `#[attr(...)]` on an op struct's field or an `#[op]` function's
    /// parameter: how the typed attr is declared.
    #[derive(Clone, Debug, Default)]
    pub struct AttrOptions {
        /// The attr's name, when it is not the field's (`name = "T"`).
        name: Option<syn::LitStr>,
        /// The default value, as a Rust literal (`default = 0`, `default = [1, 2]`).
        default: Option<ValueExpr>,
        /// The minimum, for an int (`min = 0`) or a list's length.
        min: Option<ValueExpr>,
        /// The allowed values, for a string (`one_of("a", "b")`) or type
        /// (`one_of(f32, i32)`) attr.
        one_of: Option<OneOf>,
    }
}

/// An expression taken as written. (darling's own `syn::Expr` parses a
/// string literal's contents as an expression, which would turn
/// `default = "same"` into the path `same`.)
#[derive(Clone, Debug)]
pub struct ValueExpr(pub syn::Expr);

impl FromMeta for ValueExpr {
    fn from_expr(expr: &syn::Expr) -> darling::Result<Self> {
        Ok(ValueExpr(expr.clone()))
    }
}

/// The values of `one_of(...)`.
#[derive(Clone, Debug)]
pub struct OneOf {
    pub items: Vec<NestedMeta>,
    pub span: Span,
}

impl FromMeta for OneOf {
    fn from_meta(meta: &syn::Meta) -> darling::Result<Self> {
        match meta {
            syn::Meta::List(list) => Ok(OneOf {
                items: NestedMeta::parse_meta_list(list.tokens.clone())?,
                span: list.path.span(),
            }),
            other => Err(darling::Error::custom(
                "`one_of` lists the allowed values: `one_of(\"same\", \"valid\")` or `one_of(f32, i32)`",
            )
            .with_span(other)),
        }
    }
}

/// Takes the `#[attr(...)]` attributes out of `attrs` (the compiler must
/// not see them) and parses the last.
pub fn take_attr_options(
    attrs: &mut Vec<syn::Attribute>,
) -> darling::Result<Option<(AttrOptions, Span)>> {
    take_helper_attr(
        attrs,
        "attr",
        "write the attr's options in parentheses: `#[attr(default = 0, min = 0)]`",
    )
}

/// Takes the helper attributes `#[name]` / `#[name(...)]` out of `attrs`
/// (the compiler must not see them) and parses the last, with its span;
/// `name_value` is the error for `#[name = ...]`.
fn take_helper_attr<T: FromMeta + Keys + Default>(
    attrs: &mut Vec<syn::Attribute>,
    name: &str,
    name_value: &str,
) -> darling::Result<Option<(T, Span)>> {
    let mut found = None;
    let mut errors = darling::Error::accumulator();
    let what = format!("#[{name}(...)]");
    attrs.retain(|attr| {
        if !attr.path().is_ident(name) {
            return true;
        }
        let options = match &attr.meta {
            syn::Meta::Path(_) => Ok(T::default()),
            syn::Meta::List(list) => args(list.tokens.clone(), &what).strict(),
            meta @ syn::Meta::NameValue(_) => {
                Err(darling::Error::custom(name_value).with_span(meta))
            }
        };
        if let Some(options) = errors.handle(options) {
            found = Some((options, attr.path().span()));
        }
        false
    });
    errors.finish_with(found)
}

arguments! {
    /// `#[resource]` or `#[resource(input = "table_handle")]` on a kernel
    /// function's parameter: the parameter receives the resource that a
    /// `resource` input's handle refers to.
    #[derive(Clone, Debug, Default)]
    pub struct ResourceOptions {
        /// The input, when it is not named like the parameter.
        input: Option<syn::LitStr>,
    }
}

/// Takes the `#[resource(...)]` attributes out of `attrs` (the compiler
/// must not see them) and parses the last; its span is the attribute's
/// path.
pub fn take_resource_options(
    attrs: &mut Vec<syn::Attribute>,
) -> darling::Result<Option<(ResourceOptions, Span)>> {
    take_helper_attr(
        attrs,
        "resource",
        "write `#[resource]`, or name the input in parentheses: `#[resource(input = \"table_handle\")]`",
    )
}
