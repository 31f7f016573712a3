//! `#[gradient]`: a gradient function, checked against its arguments.
//!
//! The function must be generic over exactly one type parameter, the
//! value it builds with (`fn grad<V: Value>(g: &Gradient<'_, V>) -> ...`):
//! the expansion instantiates it for tensors (a tape) and for graph
//! outputs (`gradients`).

use syn::spanned::Spanned;

use super::error;
use crate::parse::{GradientArgs, OpRef};
use crate::runtime_path::RuntimePath;

/// A checked `#[gradient]`.
#[derive(Clone, Debug)]
pub struct CheckedGradient {
    pub op: OpRef,
    pub item: syn::ItemFn,
    /// Where generated code finds the runtime.
    pub runtime: RuntimePath,
}

/// `#[gradient]` on `item`: an op, and a function generic over one value
/// type taking one parameter.
pub fn gradient(args: &GradientArgs, item: syn::Item) -> darling::Result<CheckedGradient> {
    let mut errors = darling::Error::accumulator();
    let op = match &args.op {
        Some(op) => Some(op.clone()),
        None => {
            errors.push(error(
                proc_macro2::Span::call_site(),
                "`#[gradient]` needs the op it differentiates: `#[gradient(op = Sin)]`, or `#[gradient(op = \"Sin\")]` for an op declared elsewhere",
            ));
            None
        }
    };
    let item = match item {
        syn::Item::Fn(item) => Some(item),
        other => {
            errors.push(error(
                other.span(),
                "`#[gradient]` goes on a function: `fn my_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; N]>`",
            ));
            None
        }
    };
    if let Some(item) = &item {
        check_signature(item, &mut errors);
    }
    errors.finish()?;
    Ok(CheckedGradient {
        op: op.expect("checked above"),
        item: item.expect("checked above"),
        runtime: RuntimePath::new(args.krate.as_ref().map(|k| &k.0)),
    })
}

/// One type parameter (the value) and one parameter (the context).
fn check_signature(item: &syn::ItemFn, errors: &mut darling::error::Accumulator) {
    let sig = &item.sig;
    let types = sig.generics.type_params().count();
    if types != 1 || sig.generics.const_params().count() != 0 {
        errors.push(error(
            sig.generics.span().join(sig.ident.span()).unwrap_or(sig.ident.span()),
            "a gradient function is generic over the value it builds with, and nothing else: `fn my_grad<V: Value>(g: &Gradient<'_, V>)` (it runs on tensors on a tape and on graph outputs in `gradients`)",
        ));
    }
    if sig.inputs.len() != 1 {
        errors.push(error(
            sig.inputs.span(),
            "a gradient function takes one parameter, the forward node and its incoming gradients: `g: &Gradient<'_, V>`",
        ));
    }
    if let syn::ReturnType::Default = sig.output {
        errors.push(error(
            sig.ident.span(),
            "a gradient function returns one optional gradient per input: `-> Result<[Option<V>; N]>` (or `Result<Vec<Option<V>>>` for an op with list inputs)",
        ));
    }
}
