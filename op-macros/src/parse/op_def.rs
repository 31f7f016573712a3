//! `op_def! { name: "...", attrs: [...], ... }`: not attribute arguments
//! but a block of `key: value` lines, parsed with syn.

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Ident, LitStr, Token, bracketed};

use super::CRATE_HELP;
use crate::runtime_path::RuntimePath;
use crate::spec::{Flags, OpSpec};

/// The parsed `op_def!` input: `name: "...", attrs: [...], inputs: [...],
/// outputs: [...], full_types: [...], stateful: true, crate:
/// "facade::op_core"`.
pub struct OpDefInput {
    pub name: LitStr,
    attrs: Vec<LitStr>,
    inputs: Vec<LitStr>,
    outputs: Vec<LitStr>,
    full_types: Vec<LitStr>,
    stateful: bool,
    pub runtime: RuntimePath,
}

/// A key of `op_def!`.
#[derive(Clone, Copy)]
enum Key {
    Name,
    Attrs,
    Inputs,
    Outputs,
    FullTypes,
    Stateful,
    Crate,
}

/// The keys of `op_def!`, spelt once: the parser looks keys up here, and
/// the unknown-key error lists and suggests from here.
const KEYS: [(&str, Key); 7] = [
    ("name", Key::Name),
    ("attrs", Key::Attrs),
    ("inputs", Key::Inputs),
    ("outputs", Key::Outputs),
    ("full_types", Key::FullTypes),
    ("stateful", Key::Stateful),
    ("crate", Key::Crate),
];

/// "unknown key `attr`: did you mean `attrs`? the keys are name, ..., and crate".
fn unknown_key(key: &Ident) -> syn::Error {
    let key_text = key.to_string();
    let names = KEYS.map(|(name, _)| name);
    let hint = op_spec::suggest::closest(&key_text, names)
        .map(|k| format!("did you mean `{k}`? "))
        .unwrap_or_default();
    let (last, rest) = names.split_last().expect("op_def! has keys");
    syn::Error::new(
        key.span(),
        format!(
            "unknown key `{key_text}`: {hint}the keys are {} and {last}",
            rest.join(", ")
        ),
    )
}

/// `[...]`: a bracketed list of spec strings.
fn string_list(input: ParseStream<'_>) -> syn::Result<Vec<LitStr>> {
    let content;
    bracketed!(content in input);
    Ok(Punctuated::<LitStr, Token![,]>::parse_terminated(&content)?
        .into_iter()
        .collect())
}

impl Parse for OpDefInput {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let mut name = None;
        let (mut attrs, mut inputs, mut outputs, mut full_types, mut stateful) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), false);
        let mut krate = None;
        while !input.is_empty() {
            // `crate` is a keyword, so not an `Ident` to a plain parse.
            let key = Ident::parse_any(input)?;
            input.parse::<Token![:]>()?;
            let Some((_, known)) = KEYS.iter().find(|(name, _)| key == name) else {
                return Err(unknown_key(&key));
            };
            match known {
                Key::Name => name = Some(input.parse()?),
                Key::Attrs => attrs = string_list(input)?,
                Key::Inputs => inputs = string_list(input)?,
                Key::Outputs => outputs = string_list(input)?,
                Key::FullTypes => full_types = string_list(input)?,
                Key::Stateful => stateful = input.parse::<syn::LitBool>()?.value,
                Key::Crate => {
                    let path: LitStr = input.parse()?;
                    krate = Some(
                        path.parse::<syn::Path>()
                            .map_err(|_| syn::Error::new(path.span(), CRATE_HELP))?,
                    );
                }
            }
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        let name = name.ok_or_else(|| {
            syn::Error::new(
                Span::call_site(),
                "missing the op's name: add `name: \"MyOp\",`",
            )
        })?;
        Ok(OpDefInput {
            name,
            attrs,
            inputs,
            outputs,
            full_types,
            stateful,
            runtime: RuntimePath::new(krate.as_ref()),
        })
    }
}

impl OpDefInput {
    /// The spec the input declares, to check and to expand.
    pub fn spec(&self) -> OpSpec {
        OpSpec {
            name: (&self.name).into(),
            attrs: self.attrs.iter().map(Into::into).collect(),
            inputs: self.inputs.iter().map(Into::into).collect(),
            outputs: self.outputs.iter().map(Into::into).collect(),
            full_types: self.full_types.iter().map(Into::into).collect(),
            doc: None,
            flags: Flags {
                stateful: self.stateful,
                ..Default::default()
            },
        }
    }
}
