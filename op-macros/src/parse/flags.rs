//! The op flags, shared by `#[register_op]` and `#[op]`.

use darling::FromMeta;
use darling::ast::NestedMeta;
use darling::util::Flag;

use super::keys::arguments;
use super::unknown_key;

/// `deprecated(version = 4, explanation = "use Bar")`.
#[derive(Clone, Debug)]
pub struct Deprecated {
    pub version: i32,
    pub explanation: syn::LitStr,
}

const DEPRECATED_EXAMPLE: &str = "`deprecated(version = 4, explanation = \"use AddV2 instead\")`";

impl FromMeta for Deprecated {
    fn from_meta(meta: &syn::Meta) -> darling::Result<Self> {
        let syn::Meta::List(list) = meta else {
            return Err(darling::Error::custom(format!(
                "`deprecated` takes the GraphDef version that removed the op and why: {DEPRECATED_EXAMPLE}"
            ))
            .with_span(meta));
        };
        let items = NestedMeta::parse_meta_list(list.tokens.clone())?;
        let mut errors = darling::Error::accumulator();
        let (mut version, mut explanation) = (None, None);
        let mut seen = Vec::new();
        for item in &items {
            let NestedMeta::Meta(syn::Meta::NameValue(nv)) = item else {
                errors.push(
                    darling::Error::custom(format!("expected `version = ..` or `explanation = \"..\"`, as in {DEPRECATED_EXAMPLE}"))
                        .with_span(item),
                );
                continue;
            };
            let key = nv
                .path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            seen.push(key.clone());
            match (key.as_str(), &nv.value) {
                (
                    "version",
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Int(i),
                        ..
                    }),
                ) => match i.base10_parse::<i32>() {
                    Ok(v) => version = Some(v),
                    Err(e) => errors.push(e.into()),
                },
                ("version", other) => errors.push(
                    darling::Error::custom(
                        "`version` is the GraphDef version number that removed the op, an integer literal: `version = 4`",
                    )
                    .with_span(other),
                ),
                (
                    "explanation",
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(s),
                        ..
                    }),
                ) => explanation = Some(s.clone()),
                ("explanation", other) => errors.push(
                    darling::Error::custom(
                        "`explanation` is a string literal saying what to use instead: `explanation = \"use AddV2 instead\"`",
                    )
                    .with_span(other),
                ),
                _ => errors.push(unknown_key(&nv.path, &key, "deprecated(...)", &["version", "explanation"])),
            }
        }
        let missing = |what: &str| {
            darling::Error::custom(format!("`deprecated` needs `{what}`: {DEPRECATED_EXAMPLE}"))
                .with_span(&list.path)
        };
        if !seen.iter().any(|k| k == "version") {
            errors.push(missing("version = .."));
        }
        if !seen.iter().any(|k| k == "explanation") {
            errors.push(missing("explanation = \"..\""));
        }
        errors.finish()?;
        Ok(Deprecated {
            version: version.expect("checked"),
            explanation: explanation.expect("checked"),
        })
    }
}

arguments! {
    /// The flags an op registration can set, shared by `#[register_op]` and `#[op]`.
    #[derive(Clone, Debug, Default)]
    pub struct FlagArgs {
        stateful: Flag,
        commutative: Flag,
        aggregate: Flag,
        allows_uninitialized_input: Flag,
        distributed_communication: Flag,
        /// `not_differentiable`: no gradient flows through the op (not part
        /// of its `OpDef`: a gradient registration, as TensorFlow's
        /// `tf.no_gradient`).
        not_differentiable: Flag,
        deprecated: Option<Deprecated>,
    }
}
