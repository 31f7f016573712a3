//! Proc macros of the op framework.
//!
//! They check op registrations at compile time with the very parser the
//! runtime uses (the `op-spec` crate), so a spec string that compiles is a
//! spec string the runtime accepts, with the same meaning.
//!
//! For now there is [`op_def!`]; `#[register_op]` and `#[kernel]` build on it.

use proc_macro::TokenStream;
use proc_macro2::Span;
use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Ident, LitStr, Token, bracketed};

/// Declares an op from TensorFlow spec strings, checked at compile time, and
/// expands to an `op_core::OpDefBuilder` holding them (call `.build()` on it,
/// which cannot fail for a registration that compiled).
///
/// ```
/// let op = op_macros::op_def! {
///     name: "ZeroOut",
///     attrs: ["T: {float, int32} = DT_INT32"],
///     inputs: ["to_zero: T"],
///     outputs: ["zeroed: T"],
/// }
/// .build()
/// .unwrap();
/// assert_eq!(op.name, "ZeroOut");
/// ```
///
/// A mistake in a spec is a compile error on that string, saying where in it
/// and how to fix it:
///
/// ```compile_fail
/// op_macros::op_def! { name: "ZeroOut", attrs: ["T: {float, in32}"] };
/// // error: Attr("T: {float, in32}") at column 12: unknown type 'in32' (help: did you mean 'int32'?)
/// ```
#[proc_macro]
pub fn op_def(input: TokenStream) -> TokenStream {
    let registration = syn::parse_macro_input!(input as Registration);
    match registration.check() {
        Ok(()) => registration.expand().into(),
        Err(e) => {
            // Still an OpDefBuilder, so that code using the result reports no
            // errors of its own on top of the real ones.
            let errors = e.to_compile_error();
            let name = &registration.name;
            quote!({ #errors ::op_core::OpDefBuilder::new(#name) }).into()
        }
    }
}

/// The parsed macro input: `name: "...", attrs: [...], inputs: [...], outputs: [...], stateful: true`.
struct Registration {
    name: LitStr,
    attrs: Vec<LitStr>,
    inputs: Vec<LitStr>,
    outputs: Vec<LitStr>,
    stateful: bool,
}

const KEYS: [&str; 5] = ["name", "attrs", "inputs", "outputs", "stateful"];

impl Parse for Registration {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let mut name = None;
        let (mut attrs, mut inputs, mut outputs, mut stateful) =
            (Vec::new(), Vec::new(), Vec::new(), false);
        while !input.is_empty() {
            let key: Ident = input.parse()?;
            input.parse::<Token![:]>()?;
            let list = |input: ParseStream<'_>| -> syn::Result<Vec<LitStr>> {
                let content;
                bracketed!(content in input);
                Ok(Punctuated::<LitStr, Token![,]>::parse_terminated(&content)?
                    .into_iter()
                    .collect())
            };
            match key.to_string().as_str() {
                "name" => name = Some(input.parse()?),
                "attrs" => attrs = list(input)?,
                "inputs" => inputs = list(input)?,
                "outputs" => outputs = list(input)?,
                "stateful" => stateful = input.parse::<syn::LitBool>()?.value,
                other => {
                    let hint = op_spec::suggest::closest(other, KEYS)
                        .map(|k| format!("did you mean `{k}`? "))
                        .unwrap_or_default();
                    return Err(syn::Error::new(
                        key.span(),
                        format!(
                            "unknown key `{other}`: {hint}the keys are name, attrs, inputs, outputs and stateful"
                        ),
                    ));
                }
            }
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        let name =
            name.ok_or_else(|| syn::Error::new(Span::call_site(), "missing `name: \"OpName\"`"))?;
        Ok(Registration {
            name,
            attrs,
            inputs,
            outputs,
            stateful,
        })
    }
}

impl Registration {
    fn builder(&self) -> op_spec::OpDefBuilder {
        let mut b = op_spec::OpDefBuilder::new(self.name.value());
        for a in &self.attrs {
            b = b.attr(a.value());
        }
        for i in &self.inputs {
            b = b.input(i.value());
        }
        for o in &self.outputs {
            b = b.output(o.value());
        }
        if self.stateful {
            b.set_is_stateful()
        } else {
            b
        }
    }

    /// Runs the runtime's parser and validator; every error becomes a
    /// compile error on the string literal it is about.
    fn check(&self) -> syn::Result<()> {
        let Err(errors) = self.builder().build() else {
            return Ok(());
        };
        let mut combined: Option<syn::Error> = None;
        for e in errors.errors() {
            let span = match e.source {
                op_spec::SpecSource::Attr(i) => self.attrs[i].span(),
                op_spec::SpecSource::Input(i) => self.inputs[i].span(),
                op_spec::SpecSource::Output(i) => self.outputs[i].span(),
                op_spec::SpecSource::OpName | op_spec::SpecSource::Doc => self.name.span(),
            };
            let error = syn::Error::new(span, e.one_line());
            match &mut combined {
                Some(c) => c.combine(error),
                None => combined = Some(error),
            }
        }
        Err(combined.expect("build failed with at least one error"))
    }

    fn expand(&self) -> proc_macro2::TokenStream {
        let Registration {
            name,
            attrs,
            inputs,
            outputs,
            stateful,
        } = self;
        let stateful = stateful.then(|| quote!(.set_is_stateful()));
        quote! {
            ::op_core::OpDefBuilder::new(#name)
                #(.attr(#attrs))*
                #(.input(#inputs))*
                #(.output(#outputs))*
                #stateful
        }
    }
}
