//! Running the runtime's own spec parser at compile time, with every error
//! placed on the author's token.

use std::ops::Range;

use op_spec::{OpDef, OpDefBuilder, SpecError, SpecSource};
use proc_macro2::Span;

/// One spec string and the token it came from: a string literal, or the
/// struct field or function parameter it was derived from.
#[derive(Clone, Debug)]
pub struct Spanned {
    pub text: String,
    pub span: Span,
    /// Set when the text was derived from Rust code rather than written
    /// as a string: its columns mean nothing to the author, so errors
    /// quote it whole and point at the token each part came from.
    pub derived: Option<Derived>,
}

/// Where the parts of a derived spec came from.
#[derive(Clone, Debug, Default)]
pub struct Derived {
    /// Byte ranges of the text, and the token each was derived from.
    pub parts: Vec<(Range<usize>, Span)>,
    /// Said after any error about this spec.
    pub note: Option<String>,
}

impl Spanned {
    pub fn new(text: impl Into<String>, span: Span) -> Self {
        Spanned {
            text: text.into(),
            span,
            derived: None,
        }
    }

    /// A spec derived from Rust code at `span`.
    pub fn derived(text: impl Into<String>, span: Span) -> Self {
        Spanned {
            derived: Some(Derived::default()),
            ..Spanned::new(text, span)
        }
    }

    /// Appends `part`, derived from the token at `span`, to a derived spec.
    pub fn push(&mut self, part: &str, span: Span) {
        let start = self.text.len();
        self.text.push_str(part);
        self.derived
            .get_or_insert_with(Derived::default)
            .parts
            .push((start..self.text.len(), span));
    }

    /// Adds a note said after any error about this spec.
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.derived.get_or_insert_with(Derived::default).note = Some(note.into());
        self
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
    /// Registers the op as not differentiable; not part of the `OpDef`, so
    /// no `OpDefBuilder` setter.
    pub not_differentiable: bool,
}

/// The `OpDefBuilder` method that sets each on/off flag: the one list that
/// both the compile-time check ([`OpSpec::builder`]) and the generated
/// registration (`expand::registration::op_def_builder`) follow, so they
/// cannot disagree on a flag.
type FlagSetter = (
    &'static str,
    fn(&Flags) -> bool,
    fn(OpDefBuilder) -> OpDefBuilder,
);

const FLAG_SETTERS: [FlagSetter; 5] = [
    (
        "set_is_stateful",
        |f| f.stateful,
        OpDefBuilder::set_is_stateful,
    ),
    (
        "set_is_commutative",
        |f| f.commutative,
        OpDefBuilder::set_is_commutative,
    ),
    (
        "set_is_aggregate",
        |f| f.aggregate,
        OpDefBuilder::set_is_aggregate,
    ),
    (
        "set_allows_uninitialized_input",
        |f| f.allows_uninitialized_input,
        OpDefBuilder::set_allows_uninitialized_input,
    ),
    (
        "set_is_distributed_communication",
        |f| f.distributed_communication,
        OpDefBuilder::set_is_distributed_communication,
    ),
];

impl Flags {
    /// The setters of the flags that are on: the method's name and the
    /// method.
    pub fn setters(
        &self,
    ) -> impl Iterator<Item = (&'static str, fn(OpDefBuilder) -> OpDefBuilder)> + '_ {
        FLAG_SETTERS
            .iter()
            .filter(|(_, on, _)| on(self))
            .map(|(name, _, set)| (*name, *set))
    }
}

/// Everything an op registration says, with where it said it.
#[derive(Clone, Debug)]
pub struct OpSpec {
    pub name: Spanned,
    pub attrs: Vec<Spanned>,
    pub inputs: Vec<Spanned>,
    pub outputs: Vec<Spanned>,
    pub full_types: Vec<Spanned>,
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
        for f in &self.full_types {
            b = b.full_type(&f.text);
        }
        if let Some(doc) = &self.doc {
            b = b.doc(&doc.text);
        }
        for (_, set) in self.flags.setters() {
            b = set(b);
        }
        if let Some((version, explanation)) = &self.flags.deprecated {
            b = b.deprecated(*version, explanation);
        }
        b
    }

    /// Parses and validates the registration as the runtime will; each
    /// problem becomes an error on the token its spec came from.
    pub fn check(&self) -> darling::Result<OpDef> {
        self.builder().build().map_err(|errors| {
            darling::Error::multiple(errors.errors().iter().map(|e| self.error(e)).collect())
        })
    }

    /// The errors of the registration besides those that only follow from
    /// the attrs `broken`, which could not be declared (a field of a type
    /// that holds no attr, already reported): an input that uses one, or
    /// docs that describe one, are no second mistake. Each broken attr is
    /// declared by a spec that fails, which the runtime's parser then
    /// treats as it treats any broken attr spec.
    pub fn check_besides(&self, broken: &[String]) -> Option<darling::Error> {
        let mut with = self.clone();
        with.attrs.extend(
            broken
                .iter()
                .map(|name| Spanned::new(format!("{name}: ?"), self.name.span)),
        );
        let errors = with.builder().build().err()?;
        let errors: Vec<darling::Error> = errors
            .errors()
            .iter()
            .filter(|e| !matches!(e.source, SpecSource::Attr(i) if i >= self.attrs.len()))
            .map(|e| self.error(e))
            .collect();
        (!errors.is_empty()).then(|| darling::Error::multiple(errors))
    }

    /// One problem, as an error on the token its spec came from.
    fn error(&self, e: &SpecError) -> darling::Error {
        let spec = match e.source {
            SpecSource::Attr(i) => &self.attrs[i],
            SpecSource::Input(i) => &self.inputs[i],
            SpecSource::Output(i) => &self.outputs[i],
            SpecSource::FullType(i) => &self.full_types[i],
            SpecSource::Doc => self.doc.as_ref().unwrap_or(&self.name),
            SpecSource::OpName => &self.name,
        };
        let (message, span) = describe(e, spec);
        darling::Error::custom(message).with_span(&span)
    }
}

impl OpSpec {
    /// A spec that builds, for code to generate after the real spec's
    /// errors have been reported: each erroneous arg or attr replaced by
    /// the most permissive one of its name, so that kernels and calls
    /// written against the op report nothing more. `None` when that
    /// still fails (a bad op name, a duplicate).
    ///
    /// A spec missing only its colon (`x T`) stands in as what the author
    /// meant (`x: T`) when the op then builds, so that a call of the op
    /// keeps its arguments.
    pub fn stand_in(&self) -> Option<(OpSpec, OpDef)> {
        let errors = self.builder().build().err()?;
        [true, false].into_iter().find_map(|meant| {
            let stand = |spec: &Spanned, permissive: fn(&Spanned) -> Option<Spanned>| {
                meant
                    .then(|| colon_put_back(spec))
                    .flatten()
                    .or_else(|| permissive(spec))
            };
            let mut stand_in = self.clone();
            // A full type changes nothing that code using the op sees: one
            // in error is left out.
            let mut failed_full_types = Vec::new();
            for e in errors.errors() {
                match e.source {
                    SpecSource::Attr(i) => {
                        stand_in.attrs[i] = stand(&self.attrs[i], stand_in_attr)?
                    }
                    SpecSource::Input(i) => {
                        stand_in.inputs[i] = stand(&self.inputs[i], stand_in_arg)?
                    }
                    SpecSource::Output(i) => {
                        stand_in.outputs[i] = stand(&self.outputs[i], stand_in_arg)?
                    }
                    SpecSource::FullType(i) => failed_full_types.push(i),
                    SpecSource::Doc => stand_in.doc = None,
                    SpecSource::OpName => return None,
                }
            }
            stand_in.full_types = (self.full_types.iter().enumerate())
                .filter(|(i, _)| !failed_full_types.contains(i))
                .map(|(_, f)| f.clone())
                .collect();
            let def = stand_in.builder().build().ok()?;
            Some((stand_in, def))
        })
    }
}

/// The name before the `:` of an arg or attr spec, if it is one.
fn spec_name(spec: &Spanned) -> Option<&str> {
    split_spec(&spec.text).map(|(name, _)| name)
}

/// An arg or attr spec's name and the rest after it: split at the `:`, or,
/// when the colon is missing (`x float`, itself an error), at the space
/// after the name.
fn split_spec(text: &str) -> Option<(&str, &str)> {
    let is_name = |name: &str| syn::parse_str::<syn::Ident>(name).is_ok();
    if let Some((name, rest)) = text.split_once(':')
        && is_name(name.trim())
    {
        return Some((name.trim(), rest));
    }
    let (name, rest) = text.trim_start().split_once(char::is_whitespace)?;
    is_name(name).then_some((name, rest))
}

/// `x: T` for `x T`: a spec whose colon is missing, with it put back.
fn colon_put_back(spec: &Spanned) -> Option<Spanned> {
    let (name, rest) = split_spec(&spec.text)?;
    let colon_missing = !spec.text.trim_start()[name.len()..]
        .trim_start()
        .starts_with(':');
    colon_missing.then(|| Spanned::new(format!("{name}: {}", rest.trim_start()), spec.span))
}

/// `x: resource`: a stand-in arg, which the wrapper takes as any tensor
/// and a `#[resource]` parameter or `Arc<R>` return accepts. A list
/// (`N * T`) keeps no stand-in, since its count attr may be the error.
fn stand_in_arg(spec: &Spanned) -> Option<Spanned> {
    if spec.text.contains('*') {
        return None;
    }
    let name = spec_name(spec)?;
    Some(Spanned::new(format!("{name}: resource"), spec.span))
}

/// `T: type` for what looks like a type attr (any type allowed, so every
/// `types(...)` of a kernel passes); `x: func` for another required attr
/// (which the wrapper takes as any `AttrValue`). An attr with a default
/// keeps no stand-in but a type one.
fn stand_in_attr(spec: &Spanned) -> Option<Spanned> {
    let (name, rest) = split_spec(&spec.text)?;
    let kind = rest.split('=').next().unwrap_or_default().trim();
    let has_default = rest.contains('=');
    let is_type = (kind.starts_with('{') && !kind.contains('\'')) || kind.contains("type");
    let text = if is_type {
        let default = if has_default { " = DT_FLOAT" } else { "" };
        format!("{name}: type{default}")
    } else if !has_default {
        format!("{name}: func")
    } else {
        return None;
    };
    Some(Spanned::new(text, spec.span))
}

/// An error's message and where it goes: for a derived spec, the whole
/// spec quoted (its columns would mean nothing) and the span of the part
/// the error is about.
fn describe(e: &SpecError, spec: &Spanned) -> (String, Span) {
    let Some(derived) = &spec.derived else {
        return (e.one_line(), spec.span);
    };
    let kind = match e.source {
        SpecSource::Attr(_) => "attr",
        SpecSource::Input(_) => "input",
        SpecSource::Output(_) => "output",
        SpecSource::FullType(_) => "full type",
        SpecSource::Doc | SpecSource::OpName => return (e.one_line(), spec.span),
    };
    let span = derived
        .parts
        .iter()
        .find(|(range, _)| range.contains(&e.span.start))
        .map_or(spec.span, |(_, span)| *span);
    let mut message = format!("{kind} `{}` (as declared here): {}", e.spec, e.message);
    if let Some(help) = &e.help {
        message.push_str(&format!(" (help: {help})"));
    }
    if let Some(note) = &derived.note {
        message.push_str(&format!("; {note}"));
    }
    (message, span)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_splits_at_its_colon_or_else_after_its_name() {
        assert_eq!(split_spec("x: float"), Some(("x", " float")));
        assert_eq!(
            split_spec("T : type = DT_INT32"),
            Some(("T", " type = DT_INT32"))
        );
        // A missing colon (its own error) still gives the name, so that the
        // op's stand-in keeps the arg and its users report nothing more.
        assert_eq!(split_spec("x float"), Some(("x", "float")));
        assert_eq!(
            split_spec("s string = 'a:b'"),
            Some(("s", "string = 'a:b'"))
        );
        assert_eq!(split_spec("float"), None);
        assert_eq!(split_spec("1x: float"), None);
    }

    #[test]
    fn a_missing_colon_is_put_back() {
        let put_back =
            |text: &str| colon_put_back(&Spanned::new(text, Span::call_site())).map(|s| s.text);
        assert_eq!(put_back("x T").as_deref(), Some("x: T"));
        assert_eq!(put_back("N  int >= 1").as_deref(), Some("N: int >= 1"));
        assert_eq!(put_back("x: T"), None);
        assert_eq!(put_back("x : T"), None);
        assert_eq!(put_back("float"), None);
    }

    /// The op that code using it is checked against, after the author's
    /// spec failed: what they meant, when a colon was all that was missing.
    #[test]
    fn the_stand_in_of_a_spec_missing_its_colon_is_what_was_meant() {
        let spec = OpSpec {
            name: Spanned::new("Copy", Span::call_site()),
            attrs: vec![Spanned::new("T: {float, int32}", Span::call_site())],
            inputs: vec![Spanned::new("x T", Span::call_site())],
            outputs: vec![Spanned::new("y: T", Span::call_site())],
            full_types: Vec::new(),
            doc: None,
            flags: Flags::default(),
        };
        let (stand_in, def) = spec.stand_in().expect("a stand-in");
        assert_eq!(stand_in.inputs[0].text, "x: T");
        assert_eq!(def.inputs[0].ty, op_spec::ArgType::Attr("T".into()));
        // When what was meant does not build either, the permissive one.
        let spec = OpSpec {
            inputs: vec![Spanned::new("x U", Span::call_site())],
            ..spec
        };
        let (stand_in, _) = spec.stand_in().expect("a stand-in");
        assert_eq!(stand_in.inputs[0].text, "x: resource");
    }

    #[test]
    fn a_stand_in_keeps_an_arg_whose_colon_is_missing() {
        let spec = Spanned::new("x float", Span::call_site());
        assert_eq!(
            stand_in_arg(&spec).map(|s| s.text),
            Some("x: resource".into())
        );
        let spec = Spanned::new("T type", Span::call_site());
        assert_eq!(stand_in_attr(&spec).map(|s| s.text), Some("T: type".into()));
    }
}
