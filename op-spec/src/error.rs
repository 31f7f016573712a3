//! Errors in op specs, each with the spec it came from and where in it.

use std::fmt;
use std::ops::Range;

/// Which part of an op registration an error is about.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SpecSource {
    /// The op's name.
    OpName,
    /// The attr spec at this index (in registration order).
    Attr(usize),
    /// The input spec at this index.
    Input(usize),
    /// The output spec at this index.
    Output(usize),
    /// The full-type spec at this index (`"output: TFT_SHAPE_TENSOR[..]"`).
    FullType(usize),
    /// The op's documentation.
    Doc,
}

/// One problem in an op registration.
///
/// It names the op, quotes the spec string it is about and points at the
/// offending bytes in it, so that a message reads like a compiler's:
///
/// ```text
/// op ZeroOut: Attr("T: {float, in32}") at column 14: unknown type 'in32'
///     T: {float, in32}
///                ^^^^
///   help: did you mean 'int32'?
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    /// The op's name as registered.
    pub op: String,
    /// Which spec the error is about.
    pub source: SpecSource,
    /// The spec string as written ("" for errors about the whole op).
    pub spec: String,
    /// Byte range in `spec` that the error points at.
    pub span: Range<usize>,
    /// What is wrong.
    pub message: String,
    /// How to fix it, when there is something useful to say.
    pub help: Option<String>,
}

impl SpecError {
    /// The 1-based column (in chars) where the error's span starts.
    pub fn column(&self) -> usize {
        let start = self.span.start.min(self.spec.len());
        self.spec
            .char_indices()
            .take_while(|(i, _)| *i < start)
            .count()
            + 1
    }

    /// How the spec is named in messages: `Attr("T: int")`, `Input("x: T")`.
    pub fn spec_label(&self) -> String {
        let kind = match self.source {
            SpecSource::OpName => return "name".to_owned(),
            SpecSource::Doc => return "docs".to_owned(),
            SpecSource::Attr(_) => "Attr",
            SpecSource::Input(_) => "Input",
            SpecSource::Output(_) => "Output",
            SpecSource::FullType(_) => "FullType",
        };
        format!("{kind}({:?})", self.spec)
    }

    /// The error on one line, without the op's name: for tools that print
    /// one line per error (`Attr("T: flaot") at column 4: unknown attr type
    /// 'flaot' (help: did you mean 'float'?)`).
    pub fn one_line(&self) -> String {
        let mut line = match self.source {
            SpecSource::OpName | SpecSource::Doc => self.message.clone(),
            _ => format!(
                "{} at column {}: {}",
                self.spec_label(),
                self.column(),
                self.message
            ),
        };
        if let Some(help) = &self.help {
            line.push_str(&format!(" (help: {help})"));
        }
        line
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let label = self.spec_label();
        match self.source {
            SpecSource::OpName | SpecSource::Doc => {
                write!(f, "op {}: {}", self.op, self.message)?;
            }
            _ => {
                write!(
                    f,
                    "op {}: {label} at column {}: {}",
                    self.op,
                    self.column(),
                    self.message
                )?;
                // The spec on its own line with carets under the span.
                // Clamped to the spec and to char boundaries: the fields are
                // public, and a caret line must never panic.
                let start = self.spec.floor_char_boundary(self.span.start);
                let end = self.spec.floor_char_boundary(self.span.end).max(start);
                let pad = self.spec[..start].chars().count();
                let width = self.spec[start..end].chars().count().max(1);
                write!(
                    f,
                    "\n    {}\n    {}{}",
                    self.spec,
                    " ".repeat(pad),
                    "^".repeat(width)
                )?;
            }
        }
        if let Some(help) = &self.help {
            write!(f, "\n  help: {help}")?;
        }
        Ok(())
    }
}

impl std::error::Error for SpecError {}

/// Every problem found in one op registration (never empty).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecErrors(pub Vec<SpecError>);

impl SpecErrors {
    /// The individual errors, in the order of the specs.
    pub fn errors(&self) -> &[SpecError] {
        &self.0
    }
}

impl fmt::Display for SpecErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for SpecErrors {}
