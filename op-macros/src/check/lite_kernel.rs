//! `#[lite_kernel]`: a lite kernel's inherent impl, checked against its
//! arguments.
//!
//! The impl holds the kernel's phases as TensorFlow Lite names them:
//! `prepare` and `invoke` as associated functions for a kernel without
//! state (the seed's `SinPrepare`/`SinEval`), or `init` (making the node)
//! with `prepare` and `invoke` as `&mut self` methods for a kernel with
//! state. What this checks is what the compiler could only report in
//! generated code (a missing phase, `self` where there is no state); the
//! phases' parameter and return types are checked by the compiler, on the
//! author's functions (`expand/lite_kernel.rs`).

use proc_macro2::Span;
use syn::spanned::Spanned;

use super::error;
use crate::parse::LiteKernelArgs;
use crate::runtime_path::RuntimePath;
use crate::tflite_builtins;

/// How each phase is written, for the messages.
const PREPARE: &str = "`fn prepare(ctx: &mut PrepareContext<'_>) -> Result<()>`";
const INVOKE: &str = "`fn invoke(ctx: &mut InvokeContext<'_>) -> Result<()>`";
const INIT: &str = "`fn init(ctx: &InitContext<'_>) -> Result<Self>`";

/// The op a lite kernel serves.
#[derive(Clone, Debug)]
pub enum LiteOpName {
    /// A builtin, by its code (and its name, spanned on the author's string).
    Builtin { code: i32, name: syn::LitStr },
    /// A custom op's name.
    Custom(syn::LitStr),
}

/// A checked `#[lite_kernel]`.
#[derive(Clone, Debug)]
pub struct CheckedLiteKernel {
    pub name: LiteOpName,
    /// The versions served, inclusive.
    pub versions: (i32, i32),
    pub item: syn::ItemImpl,
    /// The `init` function, when the kernel has state.
    pub init: Option<syn::Ident>,
    pub prepare: syn::Ident,
    pub invoke: syn::Ident,
    /// Where generated code finds the lite runtime.
    pub runtime: RuntimePath,
}

/// `#[lite_kernel]` on `item`: exactly one of `custom` and `builtin`, valid
/// versions, and an inherent impl with the phases. Every mistake is
/// reported at once.
pub fn lite_kernel(args: &LiteKernelArgs, item: syn::Item) -> darling::Result<CheckedLiteKernel> {
    let mut errors = darling::Error::accumulator();
    let name = errors.handle(op_name(args));
    let versions = match &args.versions {
        Some(expr) => errors.handle(versions(&expr.0)),
        None => Some((i32::MIN, i32::MAX)),
    };
    let phases = match item {
        syn::Item::Impl(item) => errors.handle(phases(item)),
        other => {
            errors.push(error(
                item_span(&other),
                format!(
                    "`#[lite_kernel]` goes on the kernel's inherent `impl` block, which holds its phases: \
                     {PREPARE} and {INVOKE} (add {INIT} and take `&mut self` in both for a kernel with state)"
                ),
            ));
            None
        }
    };
    errors.finish()?;
    let (Some(name), Some(versions), Some((item, init, prepare, invoke))) =
        (name, versions, phases)
    else {
        unreachable!("every missing part is an error above");
    };
    Ok(CheckedLiteKernel {
        name,
        versions,
        item,
        init,
        prepare,
        invoke,
        runtime: RuntimePath::lite(),
    })
}

/// Where an error about an item that is not an impl points: its name.
fn item_span(item: &syn::Item) -> Span {
    match item {
        syn::Item::Struct(i) => i.ident.span(),
        syn::Item::Enum(i) => i.ident.span(),
        syn::Item::Fn(i) => i.sig.ident.span(),
        syn::Item::Mod(i) => i.ident.span(),
        syn::Item::Trait(i) => i.ident.span(),
        other => other.span(),
    }
}

fn op_name(args: &LiteKernelArgs) -> darling::Result<LiteOpName> {
    match (&args.custom, &args.builtin) {
        (Some(_), Some(builtin)) => Err(error(
            builtin.span(),
            "a lite kernel serves one op: give `custom = \"Name\"` (a custom op) or `builtin = \"NAME\"` (an override of a builtin), not both",
        )),
        (None, None) => Err(error(
            Span::call_site(),
            "say which op this kernel serves: `#[lite_kernel(custom = \"Sin\")]` for a custom op, or `#[lite_kernel(builtin = \"ADD\")]` to override a builtin",
        )),
        (Some(custom), None) => custom_name(custom).map(|()| LiteOpName::Custom(custom.clone())),
        (None, Some(builtin)) => builtin_code(builtin).map(|code| LiteOpName::Builtin {
            code,
            name: builtin.clone(),
        }),
    }
}

/// A custom op's name is an identifier: what TensorFlow Lite's converter
/// writes for an op's name, and what a model's operator code matches.
fn custom_name(name: &syn::LitStr) -> darling::Result<()> {
    let text = name.value();
    if text.is_empty() {
        return Err(error(
            name.span(),
            "a custom op's name cannot be empty: give the name a model's operator code has, as in `custom = \"Sin\"`",
        ));
    }
    let mut chars = text.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if !first_ok || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(error(
            name.span(),
            format!(
                "custom op name {text:?} is not an identifier: use ASCII letters, digits and `_`, not starting with a digit (as in `custom = \"Sin\"`)"
            ),
        ));
    }
    Ok(())
}

/// The code of a builtin named as TensorFlow Lite names it (`CONV_2D`),
/// with the closest name when it is not one.
fn builtin_code(name: &syn::LitStr) -> darling::Result<i32> {
    let text = name.value();
    if text == "CUSTOM" {
        return Err(error(
            name.span(),
            "`CUSTOM` is the code of every custom op, not a builtin: register a custom op by its name, as in `custom = \"Sin\"`",
        ));
    }
    if let Some(code) = tflite_builtins::code(&text) {
        return Ok(code);
    }
    let upper = text.to_ascii_uppercase();
    let names = tflite_builtins::BUILTINS.iter().map(|(n, _)| *n);
    let suggestion = if tflite_builtins::code(&upper).is_some() {
        Some(upper.clone())
    } else {
        op_spec::suggest::closest(&upper, names).map(str::to_owned)
    };
    let help = match suggestion {
        Some(near) => format!("did you mean \"{near}\"?"),
        None => "builtins are named as in TensorFlow Lite's schema, in capitals: \"ADD\", \"CONV_2D\", \"FULLY_CONNECTED\"".to_owned(),
    };
    Err(error(
        name.span(),
        format!("unknown TensorFlow Lite builtin {text:?}: {help}"),
    ))
}

/// `versions = 1..=2`, `versions = 2..` or `versions = 3`: an inclusive
/// range of versions from 1 up.
fn versions(expr: &syn::Expr) -> darling::Result<(i32, i32)> {
    const FORMS: &str = "`versions = 1..=2` (an inclusive range), `versions = 2..` (2 and up) or `versions = 1` (one version)";
    match expr {
        syn::Expr::Range(range) => {
            let Some(start) = &range.start else {
                return Err(error(
                    range.span(),
                    format!("versions start at 1: give the first version, as in {FORMS}"),
                ));
            };
            let min = version(start)?;
            match (&range.limits, &range.end) {
                (syn::RangeLimits::HalfOpen(_), None) => Ok((min, i32::MAX)),
                (syn::RangeLimits::HalfOpen(dots), Some(_)) => Err(error(
                    dots.span(),
                    format!("write versions as an inclusive range, `..=`: {FORMS}"),
                )),
                (syn::RangeLimits::Closed(_), Some(end)) => {
                    let max = version(end)?;
                    if max < min {
                        return Err(error(
                            end.span(),
                            format!(
                                "the range of versions {min}..={max} is empty: the last version must be at least the first"
                            ),
                        ));
                    }
                    Ok((min, max))
                }
                (syn::RangeLimits::Closed(dots), None) => {
                    Err(error(dots.span(), format!("expected {FORMS}")))
                }
            }
        }
        other => version(other).map(|v| (v, v)),
    }
}

/// One version: an integer from 1 up.
fn version(expr: &syn::Expr) -> darling::Result<i32> {
    let syn::Expr::Lit(syn::ExprLit {
        lit: syn::Lit::Int(int),
        ..
    }) = expr
    else {
        return Err(error(
            expr.span(),
            "a version is an integer literal, as in `versions = 1..=2`",
        ));
    };
    match int.base10_parse::<i32>() {
        Ok(v) if v >= 1 => Ok(v),
        _ => Err(error(
            int.span(),
            format!(
                "op versions start at 1 (TensorFlow Lite's first version), and {int} is not one"
            ),
        )),
    }
}

/// The impl's phases: `(impl, init, prepare, invoke)`.
type Phases = (syn::ItemImpl, Option<syn::Ident>, syn::Ident, syn::Ident);

/// An inherent impl without generics, with `prepare` and `invoke`, and
/// `self` in them exactly when there is an `init`.
fn phases(item: syn::ItemImpl) -> darling::Result<Phases> {
    if let Some((_, trait_, _)) = &item.trait_ {
        // The phases of another trait's impl are not the kernel's: saying
        // which are missing would only repeat this error.
        return Err(error(
            trait_.span(),
            format!(
                "`#[lite_kernel]` goes on an inherent impl (`impl Sin {{ ... }}`) holding {PREPARE} and {INVOKE}: the macro implements the lite kernel traits itself"
            ),
        ));
    }
    let mut errors = darling::Error::accumulator();
    if !item.generics.params.is_empty() {
        errors.push(error(
            item.generics.span(),
            "a lite kernel is one registration, so its impl cannot be generic: write one kernel per type, or dispatch on the input's dtype in `prepare` and `invoke`",
        ));
    }
    let function = |name: &str| {
        item.items.iter().find_map(|i| match i {
            syn::ImplItem::Fn(f) if f.sig.ident == name => Some(f.sig.clone()),
            _ => None,
        })
    };
    let init = function("init");
    let stateful = init.is_some();
    if let Some(init) = &init
        && let Some(receiver) = init.receiver()
    {
        errors.push(error(
            receiver.self_token.span,
            format!(
                "`init` makes the node, so it takes no `self`: {INIT}, reading the node's options from `ctx`"
            ),
        ));
    }
    let mut phase = |name: &str, form: &str| -> Option<syn::Ident> {
        let Some(sig) = function(name) else {
            errors.push(error(
                item.self_ty.span(),
                format!("a lite kernel needs its `{name}` phase: add {form} to this impl"),
            ));
            return None;
        };
        match (sig.receiver(), stateful) {
            (Some(receiver), false) => errors.push(error(
                receiver.span(),
                format!(
                    "a kernel without state has `{name}` without `self`, as {form}; to keep state per node, add {INIT} to this impl and take `&mut self`"
                ),
            )),
            (None, true) => errors.push(error(
                sig.ident.span(),
                format!(
                    "with `init`, the kernel has state, so `{name}` is a method on it: take `&mut self` first, as `fn {name}(&mut self, ctx: ...)`"
                ),
            )),
            _ => {}
        }
        Some(sig.ident)
    };
    let prepare = phase("prepare", PREPARE);
    let invoke = phase("invoke", INVOKE);
    errors.finish()?;
    let (Some(prepare), Some(invoke)) = (prepare, invoke) else {
        unreachable!("a missing phase is an error above");
    };
    Ok((item, init.map(|i| i.ident), prepare, invoke))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn versions_of(text: &str) -> Result<(i32, i32), String> {
        versions(&syn::parse_str(text).unwrap()).map_err(|e| e.to_string())
    }

    #[test]
    fn versions_are_inclusive_ranges_from_one() {
        assert_eq!(versions_of("1..=2"), Ok((1, 2)));
        assert_eq!(versions_of("3"), Ok((3, 3)));
        assert_eq!(versions_of("2.."), Ok((2, i32::MAX)));
        assert!(versions_of("0..=2").unwrap_err().contains("start at 1"));
        assert!(versions_of("1..3").unwrap_err().contains("inclusive range"));
        assert!(versions_of("3..=2").unwrap_err().contains("is empty"));
        assert!(versions_of("..=2").unwrap_err().contains("first version"));
        assert!(versions_of("x").unwrap_err().contains("integer literal"));
    }

    fn builtin(text: &str) -> Result<i32, String> {
        builtin_code(&syn::LitStr::new(text, Span::call_site())).map_err(|e| e.to_string())
    }

    #[test]
    fn builtins_are_checked_with_a_suggestion() {
        assert_eq!(builtin("ADD"), Ok(0));
        assert_eq!(builtin("GELU"), Ok(150));
        assert_eq!(
            builtin("Add").unwrap_err(),
            "unknown TensorFlow Lite builtin \"Add\": did you mean \"ADD\"?"
        );
        assert_eq!(
            builtin("CONV2D").unwrap_err(),
            "unknown TensorFlow Lite builtin \"CONV2D\": did you mean \"CONV_2D\"?"
        );
        assert!(builtin("CUSTOM").unwrap_err().contains("custom = "));
    }

    #[test]
    fn custom_names_are_identifiers() {
        let check = |t: &str| custom_name(&syn::LitStr::new(t, Span::call_site())).is_ok();
        assert!(check("Sin"));
        assert!(check("_my_op2"));
        assert!(!check(""));
        assert!(!check("2x"));
        assert!(!check("My Op"));
    }
}
