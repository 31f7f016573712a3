//! The op's shape function: `shape = "name"` from the library, or
//! `shape_fn = ...`.

use op_spec::shape_library::NAMES as SHAPE_LIBRARY;
use syn::spanned::Spanned;

use super::{ShapeFnModel, error};
use crate::parse::RawExpr;

pub fn shape_fn(
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
