//! Stage 1: the macros' arguments parsed into plain models (with darling),
//! before any checking: one file per macro, and one per piece that several
//! share.

use darling::FromMeta;
use darling::ast::NestedMeta;

use keys::Keys;

mod flags;
mod gradient;
mod helper_attrs;
mod kernel;
pub mod keys;
mod lite_kernel;
mod op;
mod op_def;
mod register_op;
mod types;
mod values;

pub use flags::FlagArgs;
pub use gradient::GradientArgs;
pub use helper_attrs::{AttrOptions, take_attr_options, take_resource_options};
pub use kernel::{KernelArgs, OpRef};
pub use lite_kernel::LiteKernelArgs;
pub use op::FnOpArgs;
pub use op_def::OpDefInput;
pub use register_op::RegisterOpArgs;
pub use types::TypesArg;
pub use values::{CRATE_HELP, CratePath, RawExpr, StrList};

/// "unknown key `statefull` in `#[register_op]`: did you mean `stateful`? ..."
fn unknown_key(path: &syn::Path, key: &str, what: &str, keys: &[&str]) -> darling::Error {
    let hint = op_spec::suggest::closest(key, keys.iter().copied())
        .map(|k| format!("did you mean `{k}`? "))
        .unwrap_or_default();
    let key = if key.is_empty() {
        quote::quote!(#path).to_string().replace(' ', "")
    } else {
        key.to_owned()
    };
    darling::Error::custom(format!(
        "unknown key `{key}` in `{what}`: {hint}the keys are {}",
        keys.join(", ")
    ))
    .with_span(path)
}

/// Arguments parsed as far as they would go: `value` is `None` only when
/// nothing usable was left, and `errors` holds every mistake found. A typo
/// in one key leaves the others parsed, so the macro can still generate
/// its code and the author sees one error, not that error and the ones
/// that missing code would cause.
pub struct Recovered<T> {
    pub value: Option<T>,
    pub errors: Vec<darling::Error>,
}

impl<T> Recovered<T> {
    /// The arguments if there was no mistake at all, else every error.
    pub fn strict(self) -> darling::Result<T> {
        match self.value {
            Some(value) if self.errors.is_empty() => Ok(value),
            _ => Err(darling::Error::multiple(self.errors)),
        }
    }
}

/// Arguments of `#[what(...)]` parsed into `T`, with unknown keys reported
/// by name with a suggestion (and skipped), and spec lists written without
/// quotes caught before they become syntax errors.
pub fn args<T: FromMeta + Keys>(tokens: proc_macro2::TokenStream, what: &str) -> Recovered<T> {
    let failed = |e: darling::Error| Recovered {
        value: None,
        errors: vec![e],
    };
    if let Err(e) = unquoted_strings(&tokens, &T::string_list_keys()) {
        return failed(e);
    }
    let items = match NestedMeta::parse_meta_list(tokens) {
        Ok(items) => items,
        Err(e) => return failed(e.into()),
    };
    let all = T::keys();
    let mut errors = Vec::new();
    let mut known = Vec::new();
    for item in items {
        let path = match &item {
            NestedMeta::Meta(m) => m.path(),
            NestedMeta::Lit(lit) => {
                errors.push(
                    darling::Error::custom(format!(
                        "expected `key = value` or `key(...)`; the keys of `{what}` are {}",
                        all.join(", ")
                    ))
                    .with_span(lit),
                );
                continue;
            }
        };
        let key = path
            .get_ident()
            .map(ToString::to_string)
            .unwrap_or_default();
        if all.contains(&key.as_str()) {
            known.push(item);
        } else {
            errors.push(unknown_key(path, &key, what, &all));
        }
    }
    let value = match T::from_list(&known) {
        Ok(value) => Some(value),
        Err(e) => {
            errors.push(e);
            None
        }
    };
    Recovered { value, errors }
}

/// Catches `inputs(x: float)` (a spec without its quotes), which would
/// otherwise be a bare syntax error.
fn unquoted_strings(
    tokens: &proc_macro2::TokenStream,
    string_list_keys: &[&str],
) -> darling::Result<()> {
    use proc_macro2::TokenTree;
    let mut errors = darling::Error::accumulator();
    let mut previous: Option<proc_macro2::Ident> = None;
    for token in tokens.clone() {
        match token {
            TokenTree::Group(g) if g.delimiter() == proc_macro2::Delimiter::Parenthesis => {
                if let Some(key) = previous
                    .take()
                    .filter(|k| string_list_keys.contains(&k.to_string().as_str()))
                    && let Some(bad) = g.stream().into_iter().find(|t| match t {
                        TokenTree::Literal(_) => false,
                        TokenTree::Punct(p) => p.as_char() != ',',
                        _ => true,
                    })
                {
                    let example = if key == "host_memory" {
                        "host_memory(\"to_zero\")"
                    } else if key == "attrs" {
                        "attrs(\"T: {float, int32}\")"
                    } else if key == "full_types" {
                        "full_types(\"output: TFT_SHAPE_TENSOR[TFT_VAR{'out_type'}]\")"
                    } else {
                        "inputs(\"x: float\", \"y: T\")"
                    };
                    errors.push(
                        darling::Error::custom(format!(
                            "`{key}(...)` takes quoted strings, one per entry, as in `{example}`"
                        ))
                        .with_span(&bad.span()),
                    );
                }
            }
            TokenTree::Ident(i) => previous = Some(i),
            _ => previous = None,
        }
    }
    errors.finish()
}
