//! Running the runtime's own spec parser at compile time, with every error
//! placed on the author's token.

use op_spec::{OpDef, OpDefBuilder, SpecSource};
use proc_macro2::Span;

/// One spec string and the token it came from: a string literal, or the
/// struct field or function parameter it was derived from.
#[derive(Clone, Debug)]
pub struct Spanned {
    pub text: String,
    pub span: Span,
}

impl Spanned {
    pub fn new(text: impl Into<String>, span: Span) -> Self {
        Spanned {
            text: text.into(),
            span,
        }
    }
}

impl From<&syn::LitStr> for Spanned {
    fn from(lit: &syn::LitStr) -> Self {
        Spanned::new(lit.value(), lit.span())
    }
}

/// Flags of an op registration.
#[derive(Clone, Debug, Default)]
pub struct Flags {
    pub stateful: bool,
    pub commutative: bool,
    pub aggregate: bool,
    pub allows_uninitialized_input: bool,
    pub distributed_communication: bool,
    pub deprecated: Option<(i32, String)>,
}

/// Everything an op registration says, with where it said it.
#[derive(Clone, Debug)]
pub struct OpSpec {
    pub name: Spanned,
    pub attrs: Vec<Spanned>,
    pub inputs: Vec<Spanned>,
    pub outputs: Vec<Spanned>,
    pub doc: Option<Spanned>,
    pub flags: Flags,
}

impl OpSpec {
    pub fn builder(&self) -> OpDefBuilder {
        let mut b = OpDefBuilder::new(&self.name.text);
        for a in &self.attrs {
            b = b.attr(&a.text);
        }
        for i in &self.inputs {
            b = b.input(&i.text);
        }
        for o in &self.outputs {
            b = b.output(&o.text);
        }
        if let Some(doc) = &self.doc {
            b = b.doc(&doc.text);
        }
        let f = &self.flags;
        if f.stateful {
            b = b.set_is_stateful();
        }
        if f.commutative {
            b = b.set_is_commutative();
        }
        if f.aggregate {
            b = b.set_is_aggregate();
        }
        if f.allows_uninitialized_input {
            b = b.set_allows_uninitialized_input();
        }
        if f.distributed_communication {
            b = b.set_is_distributed_communication();
        }
        if let Some((version, explanation)) = &f.deprecated {
            b = b.deprecated(*version, explanation);
        }
        b
    }

    /// Parses and validates the registration as the runtime will; each
    /// problem becomes an error on the token its spec came from.
    pub fn check(&self) -> darling::Result<OpDef> {
        self.builder().build().map_err(|errors| {
            darling::Error::multiple(
                errors
                    .errors()
                    .iter()
                    .map(|e| {
                        let span = match e.source {
                            SpecSource::Attr(i) => self.attrs[i].span,
                            SpecSource::Input(i) => self.inputs[i].span,
                            SpecSource::Output(i) => self.outputs[i].span,
                            SpecSource::Doc => self.doc.as_ref().map_or(self.name.span, |d| d.span),
                            SpecSource::OpName => self.name.span,
                        };
                        darling::Error::custom(e.one_line()).with_span(&span)
                    })
                    .collect(),
            )
        })
    }
}

/// The text of the `///` doc comments among `attrs`, with the one space
/// after `///` removed, and the span of the first.
pub fn doc_comment(attrs: &[syn::Attribute]) -> Option<Spanned> {
    let mut lines = Vec::new();
    let mut span = None;
    for attr in attrs {
        if !attr.path().is_ident("doc") {
            continue;
        }
        if let syn::Meta::NameValue(nv) = &attr.meta
            && let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
        {
            span.get_or_insert(attr.pound_token.span);
            let line = s.value();
            lines.push(line.strip_prefix(' ').unwrap_or(&line).to_owned());
        }
    }
    let text = lines.join("\n").trim().to_owned();
    (!text.is_empty()).then(|| Spanned::new(text, span.unwrap_or_else(Span::call_site)))
}

/// `ZeroOut` for `zero_out`.
pub fn camel_case(snake: &str) -> String {
    snake
        .split('_')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let mut c = p.chars();
            c.next()
                .map(|first| first.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect()
}
