//! [`OpDefBuilder`]: an op registration (name, spec strings, flags, docs)
//! turned into a validated [`OpDef`], as TensorFlow's `REGISTER_OP` does.

use std::collections::HashMap;
use std::ops::Range;

use crate::attr_value::{AttrKind, AttrType};
use crate::error::{SpecError, SpecErrors, SpecSource};
use crate::op_def::{ArgDef, ArgType, AttrDef, Deprecation};
use crate::quote::quoted;
use crate::spec::{self, ArgSpans, AttrScope, AttrSpans, Problem};
use crate::validate::validate_attr_value;
use crate::{DType, OpDef};

/// Builds an [`OpDef`] from TensorFlow-style spec strings.
///
/// Attrs may be given before or after the inputs and outputs that use them.
/// [`build`](Self::build) parses every spec, applies TensorFlow's implicit
/// rules (list lengths and `list(type)` args get a minimum of 1, ops with a
/// `resource` input or output are stateful), validates the result as
/// TensorFlow's `ValidateOpDef` does, and reports every problem it finds.
///
/// ```
/// use op_spec::{ArgType, OpDefBuilder};
///
/// let op = OpDefBuilder::new("SameListInputExample")
///     .attr("N: int")
///     .attr("T: type")
///     .input("in: N * T")
///     .output("out: T")
///     .build()
///     .unwrap();
/// assert_eq!(op.attr("N").unwrap().minimum, Some(1));
/// assert_eq!(op.inputs[0].number_attr.as_deref(), Some("N"));
/// assert_eq!(op.outputs[0].ty, ArgType::Attr("T".into()));
///
/// let err = OpDefBuilder::new("Bad").input("x: T").build().unwrap_err();
/// assert_eq!(err.errors()[0].message, "unknown type or attr 'T'");
/// ```
#[derive(Clone, Debug, Default)]
pub struct OpDefBuilder {
    name: String,
    attrs: Vec<String>,
    inputs: Vec<String>,
    outputs: Vec<String>,
    full_types: Vec<String>,
    doc: Option<String>,
    flags: Flags,
    deprecation: Option<Deprecation>,
}

#[derive(Clone, Debug, Default)]
struct Flags {
    is_stateful: bool,
    is_commutative: bool,
    is_aggregate: bool,
    allows_uninitialized_input: bool,
    is_distributed_communication: bool,
}

impl OpDefBuilder {
    /// Starts the registration of the op `name` (CamelCase, optionally
    /// namespaced: `Examples>SimpleHashTableCreate`).
    pub fn new(name: impl Into<String>) -> Self {
        OpDefBuilder {
            name: name.into(),
            ..Default::default()
        }
    }

    /// Adds an attr: `"<name>: <type> [>= <min>] [= <default>]"`.
    pub fn attr(mut self, spec: impl Into<String>) -> Self {
        self.attrs.push(spec.into());
        self
    }

    /// Adds an input: `"<name>: <type>"`, `"<name>: T"`, `"<name>: N * T"`, `"<name>: Ref(T)"`.
    pub fn input(mut self, spec: impl Into<String>) -> Self {
        self.inputs.push(spec.into());
        self
    }

    /// Adds an output, with the same syntax as inputs.
    pub fn output(mut self, spec: impl Into<String>) -> Self {
        self.outputs.push(spec.into());
        self
    }

    /// Gives an output its full type (TensorFlow's `experimental_full_type`,
    /// which `SetTypeConstructor` sets): `"<output>: <full type>"`, the
    /// type in the notation of [`crate::full_type`], as in
    /// `"output: TFT_SHAPE_TENSOR[TFT_VAR{'out_type'}]"` (TensorFlow's
    /// `full_type::Unary(TFT_SHAPE_TENSOR, "out_type")`). Each `TFT_VAR`
    /// names a `type` or `list(type)` attr of the op.
    ///
    /// ```
    /// use op_spec::OpDefBuilder;
    ///
    /// let err = OpDefBuilder::new("Shape")
    ///     .attr("out_type: {int32, int64} = DT_INT32")
    ///     .output("output: out_type")
    ///     .full_type("output: TFT_SHAPE_TENSOR[TFT_VAR{'out_typ'}]")
    ///     .build()
    ///     .unwrap_err();
    /// assert_eq!(
    ///     err.errors()[0].one_line(),
    ///     "FullType(\"output: TFT_SHAPE_TENSOR[TFT_VAR{'out_typ'}]\") at column 34: \
    ///      TFT_VAR names no attr of the op: 'out_typ' (help: did you mean 'out_type'?)"
    /// );
    /// ```
    pub fn full_type(mut self, spec: impl Into<String>) -> Self {
        self.full_types.push(spec.into());
        self
    }

    /// Sets the docs: a summary paragraph, a description, then `name: text`
    /// paragraphs documenting inputs, outputs and attrs (TensorFlow's `Doc()`).
    pub fn doc(mut self, text: impl Into<String>) -> Self {
        self.doc = Some(text.into());
        self
    }

    /// Marks the op stateful: it has side effects or state, and is never
    /// cached, deduplicated or constant-folded.
    pub fn set_is_stateful(mut self) -> Self {
        self.flags.is_stateful = true;
        self
    }

    /// Marks the op commutative in its two inputs.
    pub fn set_is_commutative(mut self) -> Self {
        self.flags.is_commutative = true;
        self
    }

    /// Marks the op an aggregation (it adds up its inputs).
    pub fn set_is_aggregate(mut self) -> Self {
        self.flags.is_aggregate = true;
        self
    }

    /// Lets the op read uninitialized inputs.
    pub fn set_allows_uninitialized_input(mut self) -> Self {
        self.flags.allows_uninitialized_input = true;
        self
    }

    /// Marks the op as communicating across devices.
    pub fn set_is_distributed_communication(mut self) -> Self {
        self.flags.is_distributed_communication = true;
        self
    }

    /// Deprecates the op from GraphDef `version` on, saying what to use instead.
    pub fn deprecated(mut self, version: i32, explanation: impl Into<String>) -> Self {
        self.deprecation = Some(Deprecation {
            version,
            explanation: explanation.into(),
        });
        self
    }

    /// The op's name as given.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Parses and validates everything, returning the op definition or every
    /// problem found.
    pub fn build(&self) -> Result<OpDef, SpecErrors> {
        let mut b = Build {
            reg: self,
            errors: Vec::new(),
        };
        let op = b.finalize();
        if b.errors.is_empty() {
            Ok(op)
        } else {
            // Parse errors are found spec by spec and validation errors after
            // them; report them all in the order of the specs (stable, so
            // that the errors of one spec keep their order).
            b.errors.sort_by_key(|e| match e.source {
                SpecSource::OpName => (0, 0),
                SpecSource::Attr(i) => (1, i),
                SpecSource::Input(i) => (2, i),
                SpecSource::Output(i) => (3, i),
                SpecSource::FullType(i) => (4, i),
                SpecSource::Doc => (5, 0),
            });
            Err(SpecErrors(b.errors))
        }
    }
}

/// One run of [`OpDefBuilder::build`], collecting errors as it goes.
struct Build<'a> {
    reg: &'a OpDefBuilder,
    errors: Vec<SpecError>,
}

struct Located<T, S> {
    def: T,
    spans: S,
    index: usize,
}

impl Build<'_> {
    fn spec_of(&self, source: &SpecSource) -> &str {
        match source {
            SpecSource::Attr(i) => &self.reg.attrs[*i],
            SpecSource::Input(i) => &self.reg.inputs[*i],
            SpecSource::Output(i) => &self.reg.outputs[*i],
            SpecSource::FullType(i) => &self.reg.full_types[*i],
            SpecSource::OpName | SpecSource::Doc => "",
        }
    }

    fn error(
        &mut self,
        source: SpecSource,
        span: Range<usize>,
        message: impl Into<String>,
        help: Option<String>,
    ) {
        let spec = self.spec_of(&source).to_owned();
        self.errors.push(SpecError {
            op: self.reg.name.clone(),
            source,
            spec,
            span,
            message: message.into(),
            help,
        });
    }

    fn problem(&mut self, source: SpecSource, p: Problem) {
        self.error(source, p.span, p.message, p.help);
    }

    fn finalize(&mut self) -> OpDef {
        let reg = self.reg;
        self.check_op_name();

        // Attrs first: args refer to them.
        let mut attrs: Vec<Located<AttrDef, AttrSpans>> = Vec::new();
        let mut broken = Vec::new();
        for (index, text) in reg.attrs.iter().enumerate() {
            match spec::parse_attr(text) {
                Ok(parsed) => attrs.push(Located {
                    def: parsed.def,
                    spans: parsed.spans,
                    index,
                }),
                Err(p) => {
                    broken.extend(spec::leading_name(text));
                    self.problem(SpecSource::Attr(index), p);
                }
            }
        }
        let attr_defs: Vec<AttrDef> = attrs.iter().map(|a| a.def.clone()).collect();
        let scope = AttrScope {
            attrs: &attr_defs,
            broken: &broken,
        };
        // Args left out of the op (their spec is broken, or uses a broken
        // attr), whose docs are then no mistake of their own.
        let mut missing_args = Vec::new();
        let inputs = self.parse_args(&reg.inputs, &scope, SpecSource::Input, &mut missing_args);
        let mut outputs =
            self.parse_args(&reg.outputs, &scope, SpecSource::Output, &mut missing_args);
        self.apply_full_types(&mut outputs, &inputs, &scope, &missing_args);

        // Lists of tensors have at least one element unless the spec says otherwise.
        for arg in inputs.iter().chain(&outputs) {
            let implied = arg.def.number_attr.as_deref().or(arg.def.type_list_attr());
            if let Some(attr) = implied.and_then(|n| attrs.iter_mut().find(|a| a.def.name == n)) {
                let is_length =
                    arg.def.number_attr.is_some() && attr.def.ty == AttrType::scalar(AttrKind::Int);
                let is_types = attr.def.ty == AttrType::list(AttrKind::Type);
                if (is_length || is_types) && attr.def.minimum.is_none() {
                    attr.def.minimum = Some(1);
                }
            }
        }

        self.validate(&attrs, &inputs, &outputs, &broken);

        let mut op = OpDef {
            name: reg.name.clone(),
            inputs: inputs.into_iter().map(|a| a.def).collect(),
            outputs: outputs.into_iter().map(|a| a.def).collect(),
            attrs: attrs.into_iter().map(|a| a.def).collect(),
            deprecation: reg.deprecation.clone(),
            is_stateful: reg.flags.is_stateful,
            is_commutative: reg.flags.is_commutative,
            is_aggregate: reg.flags.is_aggregate,
            allows_uninitialized_input: reg.flags.allows_uninitialized_input,
            is_distributed_communication: reg.flags.is_distributed_communication,
            ..OpDef::default()
        };
        // An op that takes or makes a resource handle touches a resource: it has state.
        if op
            .inputs
            .iter()
            .chain(&op.outputs)
            .any(|a| a.ty == ArgType::Fixed(DType::Resource))
        {
            op.is_stateful = true;
        }
        let left_out: Vec<String> = broken.iter().cloned().chain(missing_args).collect();
        if let Some(doc) = &reg.doc
            && let Err(unknown) = crate::doc::apply_doc(doc, &mut op, &left_out)
        {
            self.error(
                SpecSource::Doc,
                0..0,
                format!("the docs describe '{unknown}', which is not an input, output or attr"),
                Some("document each arg or attr as '<name>: <text>' on its own line".into()),
            );
        }
        op
    }

    fn parse_args(
        &mut self,
        specs: &[String],
        scope: &AttrScope<'_>,
        source: fn(usize) -> SpecSource,
        missing: &mut Vec<String>,
    ) -> Vec<Located<ArgDef, ArgSpans>> {
        let mut out = Vec::new();
        for (index, text) in specs.iter().enumerate() {
            match spec::parse_arg(text, scope) {
                Ok(Some(parsed)) => out.push(Located {
                    def: parsed.def,
                    spans: parsed.spans,
                    index,
                }),
                Ok(None) => missing.extend(spec::leading_name(text)),
                Err(p) => {
                    missing.extend(spec::leading_name(text));
                    self.problem(source(index), p);
                }
            }
        }
        out
    }

    /// Parses each full-type spec and sets the output it names, checking
    /// the type against the op's attrs; an output left out of the op (its
    /// spec failed) takes none without a second error.
    fn apply_full_types(
        &mut self,
        outputs: &mut [Located<ArgDef, ArgSpans>],
        inputs: &[Located<ArgDef, ArgSpans>],
        scope: &AttrScope<'_>,
        missing: &[String],
    ) {
        // The outputs annotated so far, with the index of their spec.
        let mut annotated: Vec<(String, usize)> = Vec::new();
        for (index, text) in self.reg.full_types.iter().enumerate() {
            let source = SpecSource::FullType(index);
            let parsed = match spec::parse_full_type(text) {
                Ok(parsed) => parsed,
                Err(p) => {
                    self.problem(source, p);
                    continue;
                }
            };
            let name = &parsed.output;
            let Some(output) = outputs.iter_mut().find(|o| o.def.name == *name) else {
                if missing.contains(name) {
                    continue;
                }
                let (message, help) = if inputs.iter().any(|i| i.def.name == *name) {
                    (
                        format!(
                            "{} is an input: a full type annotates an output",
                            quoted(name)
                        ),
                        "TensorFlow's type constructors give the op's outputs their full types"
                            .to_owned(),
                    )
                } else {
                    let names = || outputs.iter().map(|o| o.def.name.as_str());
                    let help = match crate::suggest::closest(name, names()) {
                        Some(near) => format!("did you mean '{near}'?"),
                        None if outputs.is_empty() => "the op has no outputs".to_owned(),
                        None => {
                            let listed: Vec<String> =
                                names().map(|n| quoted(n).to_string()).collect();
                            format!("the outputs are {}", listed.join(", "))
                        }
                    };
                    (format!("no output named {}", quoted(name)), help)
                };
                self.error(source, parsed.name, message, Some(help));
                continue;
            };
            if let Some((_, first)) = annotated.iter().find(|(n, _)| n == name) {
                let help = format!(
                    "FullType(\"{}\") gave it one already: an output has one full type",
                    crate::quote::capped(&self.reg.full_types[*first])
                );
                self.error(
                    source,
                    parsed.name,
                    format!("output {} has a second full type", quoted(name)),
                    Some(help),
                );
                continue;
            }
            if let Err(m) = crate::full_type::check_on_op(&parsed.ty, &parsed.places, scope) {
                self.error(source, m.at, m.message, m.help);
                continue;
            }
            annotated.push((name.clone(), index));
            output.def.full_type = Some(parsed.ty);
        }
    }

    fn check_op_name(&mut self) {
        let name = &self.reg.name;
        if name.starts_with('_') || is_valid_op_name(name) {
            return;
        }
        let camel: String = name
            .split('>')
            .map(|part| {
                part.split(|c: char| !c.is_ascii_alphanumeric())
                    .filter(|w| !w.is_empty())
                    .map(|w| {
                        let mut cs = w.chars();
                        cs.next()
                            .map(|f| f.to_ascii_uppercase().to_string() + cs.as_str())
                            .unwrap_or_default()
                    })
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join(">");
        let help = if !camel.is_empty() && camel != *name && is_valid_op_name(&camel) {
            format!(
                "op names are CamelCase, optionally namespaced as 'Namespace>Name': try '{camel}'"
            )
        } else {
            "op names are CamelCase (an uppercase letter, then letters, digits and underscores), \
             optionally namespaced as 'Namespace>Name'"
                .to_owned()
        };
        self.error(
            SpecSource::OpName,
            0..0,
            format!("invalid op name '{name}' (did you use CamelCase?)"),
            Some(help),
        );
    }

    /// TensorFlow's `ValidateOpDef`, reporting every problem rather than the first.
    fn validate(
        &mut self,
        attrs: &[Located<AttrDef, AttrSpans>],
        inputs: &[Located<ArgDef, ArgSpans>],
        outputs: &[Located<ArgDef, ArgSpans>],
        broken: &[String],
    ) {
        let mut names: HashMap<String, String> = HashMap::new();
        for attr in attrs {
            let source = SpecSource::Attr(attr.index);
            let def = &attr.def;
            if let Some(first) = names.insert(
                def.name.clone(),
                format!("Attr(\"{}\")", self.reg.attrs[attr.index]),
            ) {
                self.error(source.clone(), attr.spans.name.clone(), format!("duplicate name '{}'", def.name), Some(format!("already used by {first}: names must be unique across inputs, outputs and attrs")));
            }
            if DType::from_spec_name(&def.name).is_some() {
                self.error(
                    source.clone(),
                    attr.spans.name.clone(),
                    format!(
                        "attr can't have name '{}' that matches a data type",
                        def.name
                    ),
                    Some("rename the attr".into()),
                );
            }
            if let Some(min) = def.minimum
                && def.ty.is_list
                && min < 0
            {
                self.error(
                    source.clone(),
                    attr.spans
                        .minimum
                        .clone()
                        .unwrap_or(attr.spans.name.clone()),
                    format!(
                        "attr '{}' with list type must have a non-negative minimum, not {min}",
                        def.name
                    ),
                    None,
                );
            }
            if let Some(default) = &def.default_value
                && let Err(e) = validate_attr_value(default, def)
            {
                let span = attr
                    .spans
                    .default
                    .clone()
                    .unwrap_or(attr.spans.name.clone());
                self.error(
                    source,
                    span,
                    format!("the default does not satisfy the attr's own constraint: {e}"),
                    None,
                );
            }
        }
        let spec_texts = [&self.reg.inputs, &self.reg.outputs];
        for (args, (label, texts, source)) in [inputs, outputs].into_iter().zip([
            (
                "Input",
                spec_texts[0],
                SpecSource::Input as fn(usize) -> SpecSource,
            ),
            (
                "Output",
                spec_texts[1],
                SpecSource::Output as fn(usize) -> SpecSource,
            ),
        ]) {
            for arg in args {
                let def = &arg.def;
                let src = source(arg.index);
                if let Some(first) = names.insert(
                    def.name.clone(),
                    format!("{label}(\"{}\")", texts[arg.index]),
                ) {
                    self.error(src.clone(), arg.spans.name.clone(), format!("duplicate name '{}'", def.name), Some(format!("already used by {first}: names must be unique across inputs, outputs and attrs")));
                }
                let Some(n) = &def.number_attr else { continue };
                let span = arg
                    .spans
                    .number_attr
                    .clone()
                    .unwrap_or(arg.spans.name.clone());
                match attrs.iter().find(|a| &a.def.name == n) {
                    None if broken.contains(n) => {}
                    None => {
                        self.error(
                            src,
                            span,
                            format!("unknown attr '{n}' used as the length of '{}'", def.name),
                            Some(format!("declare it with the spec \"{n}: int\"")),
                        );
                    }
                    Some(attr) if attr.def.ty != AttrType::scalar(AttrKind::Int) => {
                        self.error(src, span, format!("attr '{n}' used as the length of '{}' has type {}, not int", def.name, attr.def.ty), Some(format!("declare '{n}: int'; a list of several types is written 'name: T' with 'T: list(type)'")));
                    }
                    Some(attr) => {
                        if attr.def.minimum.is_some_and(|m| m < 0) {
                            self.error(
                                src.clone(),
                                span.clone(),
                                format!(
                                    "attr '{n}' used as the length of '{}' must have minimum >= 0",
                                    def.name
                                ),
                                None,
                            );
                        }
                        if matches!(def.ty, ArgType::ListAttr(_)) {
                            self.error(
                                src,
                                arg.spans.ty.clone(),
                                format!(
                                    "'{}' can't have both a length attr and a list(type) attr",
                                    def.name
                                ),
                                Some(
                                    "use 'N * T' with 'T: type', or 'T' alone with 'T: list(type)'"
                                        .into(),
                                ),
                            );
                        }
                    }
                }
            }
        }
    }
}

/// TensorFlow's `IsValidOpName`: `Name` or `Ns>Name>...`, each part an
/// uppercase letter then letters, digits and underscores.
pub fn is_valid_op_name(name: &str) -> bool {
    name.split('>').all(|part| {
        let mut bytes = part.bytes();
        bytes.next().is_some_and(|b| b.is_ascii_uppercase())
            && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
    })
}
