//! `#[gradient]`: a gradient function, checked against its arguments.
//!
//! The function must be generic over exactly one type parameter, the
//! value it builds with (`fn grad<V: Value>(g: &Gradient<'_, V>) -> ...`):
//! the expansion instantiates it for tensors (a tape) and for graph
//! outputs (`gradients`). What only the compiler can know (whether `op`
//! names an op, how many inputs it has) is checked by the generated code,
//! on the author's tokens (`expand/gradient.rs`).

use syn::spanned::Spanned;

use super::error;
use crate::parse::{GradientArgs, OpRef};
use crate::runtime_path::RuntimePath;

/// How a gradient function's signature is written, for the messages.
const SIGNATURE: &str = "`fn my_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; N]>`";

/// A checked `#[gradient]`.
#[derive(Clone, Debug)]
pub struct CheckedGradient {
    pub op: OpRef,
    pub item: syn::ItemFn,
    /// `N` in a return type `Result<[Option<V>; N]>`: the number of
    /// gradients, checked against the op's inputs at compile time when `op`
    /// is the op's type. `None` for any other return type (a `Vec`).
    pub count: Option<syn::Expr>,
    /// Where generated code finds the runtime.
    pub runtime: RuntimePath,
}

/// `#[gradient]` on `item`: an op, and a function generic over one value
/// type, taking one parameter and returning the gradients. Every mistake
/// is reported at once; after one, the macro emits the item as written, so
/// that code calling the function reports nothing more.
pub fn gradient(args: &GradientArgs, item: syn::Item) -> darling::Result<CheckedGradient> {
    let mut errors = darling::Error::accumulator();
    if args.op.is_none() {
        errors.push(error(
            proc_macro2::Span::call_site(),
            "say which op this is the gradient of: `#[gradient(op = Sin)]` (the op's Rust type, checked at compile time) or `#[gradient(op = \"Sin\")]` (its registered name, for an op declared elsewhere)",
        ));
    }
    let function = match &item {
        syn::Item::Fn(function) => {
            check_signature(&function.sig, &mut errors);
            Some(function)
        }
        other => {
            errors.push(error(
                item_name_span(other),
                format!("`#[gradient]` goes on a function: {SIGNATURE}"),
            ));
            None
        }
    };
    errors.finish()?;
    let (Some(op), Some(function)) = (&args.op, function) else {
        unreachable!("a missing op or function is an error above");
    };
    Ok(CheckedGradient {
        op: op.clone(),
        count: returned_count(&function.sig.output),
        item: function.clone(),
        runtime: RuntimePath::new(args.krate.as_ref().map(|k| &k.0)),
    })
}

/// Where an error about an item that is not a function points: its name,
/// or its first token.
fn item_name_span(item: &syn::Item) -> proc_macro2::Span {
    match item {
        syn::Item::Struct(i) => i.ident.span(),
        syn::Item::Enum(i) => i.ident.span(),
        syn::Item::Union(i) => i.ident.span(),
        syn::Item::Const(i) => i.ident.span(),
        syn::Item::Static(i) => i.ident.span(),
        syn::Item::Type(i) => i.ident.span(),
        syn::Item::Trait(i) => i.ident.span(),
        syn::Item::Mod(i) => i.ident.span(),
        syn::Item::Impl(i) => i.self_ty.span(),
        other => other.span(),
    }
}

/// A plain function of one type parameter (the value) and one parameter
/// (the context), with a return type.
fn check_signature(sig: &syn::Signature, errors: &mut darling::error::Accumulator) {
    if let Some(asyncness) = &sig.asyncness {
        errors.push(error(
            asyncness.span(),
            format!(
                "a gradient function cannot be `async`: it builds the gradients' ops and returns them, {SIGNATURE}"
            ),
        ));
    }
    check_generics(sig, errors);
    check_params(sig, errors);
    if let syn::ReturnType::Default = sig.output {
        errors.push(error(
            sig.ident.span(),
            "a gradient function returns one optional gradient per input of the op: add `-> Result<[Option<V>; N]>` (N = the op's number of inputs), or `-> Result<Vec<Option<V>>>` for an op with list inputs",
        ));
    }
}

/// Exactly one type parameter, the value the function builds with;
/// lifetimes are allowed (they are inferred at each instantiation).
fn check_generics(sig: &syn::Signature, errors: &mut darling::error::Accumulator) {
    let why = "the registration instantiates it twice, for tensors (a tape) and graph outputs (`gradients`)";
    let mut types = sig.generics.type_params();
    if types.next().is_none() {
        errors.push(error(
            sig.ident.span(),
            format!(
                "a gradient function is generic over the value it builds with: {SIGNATURE}; {why}"
            ),
        ));
    }
    for extra in types {
        errors.push(error(
            extra.ident.span(),
            format!(
                "a gradient function has one type parameter, the value it builds with (`V: Value`), and `{}` is a second one: remove it ({why})",
                extra.ident
            ),
        ));
    }
    for c in sig.generics.const_params() {
        errors.push(error(
            c.ident.span(),
            format!(
                "a gradient function has no const parameters, only the value it builds with: {SIGNATURE}; remove `{}`",
                c.ident
            ),
        ));
    }
}

/// One parameter, the forward node with its incoming gradients, and no
/// `self`.
fn check_params(sig: &syn::Signature, errors: &mut darling::error::Accumulator) {
    let one = "a gradient function takes one parameter, the forward node with its incoming gradients: `g: &Gradient<'_, V>`";
    if let Some(receiver) = sig.receiver() {
        errors.push(error(
            receiver.self_token.span,
            format!("{one}; it is a free function, not a method: remove `self`"),
        ));
        return;
    }
    match sig.inputs.len() {
        0 => errors.push(error(sig.paren_token.span.join(), one)),
        1 => {}
        _ => {
            for extra in sig.inputs.iter().skip(1) {
                let span = match extra {
                    syn::FnArg::Typed(p) => p.pat.span(),
                    syn::FnArg::Receiver(r) => r.self_token.span,
                };
                errors.push(error(
                    span,
                    format!(
                        "{one}; remove this one (read inputs, outputs, attrs and incoming gradients from `g`)"
                    ),
                ));
            }
        }
    }
}

/// `N` in `Result<[Option<V>; N]>` (or `Result<[..; N], E>`, however the
/// `Result` is spelt).
fn returned_count(output: &syn::ReturnType) -> Option<syn::Expr> {
    let syn::ReturnType::Type(_, ty) = output else {
        return None;
    };
    let syn::Type::Path(path) = &**ty else {
        return None;
    };
    let last = path.path.segments.last()?;
    if last.ident != "Result" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first()? {
        syn::GenericArgument::Type(syn::Type::Array(array)) => Some(array.len.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(output: &str) -> Option<String> {
        let sig: syn::Signature = syn::parse_str(&format!("fn f() -> {output}")).unwrap();
        returned_count(&sig.output).map(|e| quote::quote!(#e).to_string())
    }

    #[test]
    fn the_count_is_read_from_an_array_in_a_result() {
        assert_eq!(count("Result<[Option<V>; 2]>").as_deref(), Some("2"));
        assert_eq!(
            count("op_core::Result<[Option<V>; N]>").as_deref(),
            Some("N")
        );
        assert_eq!(
            count("std::result::Result<[Option<V>; 1], Error>").as_deref(),
            Some("1")
        );
    }

    #[test]
    fn other_return_types_have_no_count() {
        assert_eq!(count("Result<Vec<Option<V>>>"), None);
        assert_eq!(count("Gradients<V>"), None);
        assert_eq!(count("[Option<V>; 2]"), None);
    }
}
