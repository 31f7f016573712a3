//! The delegate's options: what `load_delegate(library, options)` passes
//! as keys and values.
//!
//! | key | value | default |
//! | --- | --- | --- |
//! | `ops` | comma-separated custom op names: claim only these (each must be one the library has) | every custom op the library has |
//! | `unclaimed` | `report`: name, through LiteRT's error reporter, the custom ops of the model the delegate leaves to LiteRT; `error`: fail `ModifyGraphWithDelegate` naming them; `ignore`: say nothing | `report` |
//!
//! An unknown key, an empty name in `ops`, a name the library lacks and a
//! value `unclaimed` does not know are errors, each naming what it got and
//! what it expected. `ops=` (empty) claims nothing.

use std::collections::BTreeSet;

use op_core::error::quoted;
use op_core::op_spec::suggest::closest;
use op_core::{Error, Result};

/// What to do about a model's custom ops that the delegate does not claim.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Unclaimed {
    /// Name them through LiteRT's error reporter, and leave them to LiteRT.
    #[default]
    Report,
    /// Fail the delegate's prepare (`ModifyGraphWithDelegate`), naming them.
    Error,
    /// Leave them to LiteRT silently.
    Ignore,
}

/// The parsed options.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// `Some(names)`: claim only these custom ops; `None`: all the library has.
    pub ops: Option<BTreeSet<String>>,
    /// See [`Unclaimed`].
    pub unclaimed: Unclaimed,
}

/// The keys this delegate reads.
pub const KEYS: [&str; 2] = ["ops", "unclaimed"];

impl Options {
    /// Parses `pairs`, checking `ops` against the names the library has
    /// (`available`).
    ///
    /// ```
    /// use op_litert::options::{Options, Unclaimed};
    ///
    /// let options = Options::parse(&[("ops", "Sin")], &["Sin", "Cos"])?;
    /// assert!(options.claims("Sin") && !options.claims("Cos"));
    /// assert_eq!(options.unclaimed, Unclaimed::Report);
    /// let err = Options::parse(&[("op", "Sin")], &["Sin"]).unwrap_err();
    /// assert!(err.message().contains("unknown option 'op'"));
    /// # Ok::<(), op_core::Error>(())
    /// ```
    pub fn parse(pairs: &[(&str, &str)], available: &[&str]) -> Result<Options> {
        let mut options = Options::default();
        let mut seen = BTreeSet::new();
        for &(key, value) in pairs {
            if !seen.insert(key) {
                return Err(Error::invalid_argument(format!(
                    "op-litert delegate: option {} is given twice",
                    quoted(key)
                )));
            }
            match key {
                "ops" => options.ops = Some(parse_ops(value, available)?),
                "unclaimed" => options.unclaimed = parse_unclaimed(value)?,
                _ => {
                    let hint = closest(key, KEYS.iter().copied())
                        .map(|k| format!("; did you mean {}?", quoted(k)))
                        .unwrap_or_default();
                    return Err(Error::invalid_argument(format!(
                        "op-litert delegate: unknown option {}: the options are {}{hint}",
                        quoted(key),
                        KEYS.map(|k| quoted(k).to_string()).join(", ")
                    )));
                }
            }
        }
        Ok(options)
    }

    /// Whether the options let the delegate claim the custom op `name`
    /// (which the library has).
    pub fn claims(&self, name: &str) -> bool {
        self.ops.as_ref().is_none_or(|ops| ops.contains(name))
    }
}

fn parse_ops(value: &str, available: &[&str]) -> Result<BTreeSet<String>> {
    let mut ops = BTreeSet::new();
    if value.trim().is_empty() {
        return Ok(ops);
    }
    for name in value.split(',').map(str::trim) {
        if name.is_empty() {
            return Err(Error::invalid_argument(format!(
                "op-litert delegate: option 'ops' = {} has an empty name: expected custom op names separated by commas",
                quoted(value)
            )));
        }
        if !available.contains(&name) {
            let hint = closest(name, available.iter().copied())
                .map(|k| format!("; did you mean {}?", quoted(k)))
                .unwrap_or_default();
            let list = if available.is_empty() {
                "none".to_owned()
            } else {
                available
                    .iter()
                    .map(|n| quoted(n).to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            return Err(Error::invalid_argument(format!(
                "op-litert delegate: option 'ops' names {}, which this library has no kernel for: it has {list}{hint}",
                quoted(name)
            )));
        }
        ops.insert(name.to_owned());
    }
    Ok(ops)
}

fn parse_unclaimed(value: &str) -> Result<Unclaimed> {
    match value {
        "report" => Ok(Unclaimed::Report),
        "error" => Ok(Unclaimed::Error),
        "ignore" => Ok(Unclaimed::Ignore),
        _ => Err(Error::invalid_argument(format!(
            "op-litert delegate: option 'unclaimed' = {}: expected 'report', 'error' or 'ignore'",
            quoted(value)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HAVE: [&str; 2] = ["Sin", "Cumprod"];

    #[test]
    fn no_options_claim_everything_and_report_the_rest() {
        let options = Options::parse(&[], &HAVE).unwrap();
        assert!(options.claims("Sin") && options.claims("Cumprod"));
        assert_eq!(options.unclaimed, Unclaimed::Report);
    }

    #[test]
    fn ops_claims_only_the_names_listed_spaces_trimmed() {
        let options = Options::parse(&[("ops", " Sin , Cumprod")], &HAVE).unwrap();
        assert!(options.claims("Sin") && options.claims("Cumprod"));
        let options = Options::parse(&[("ops", "Cumprod")], &HAVE).unwrap();
        assert!(!options.claims("Sin") && options.claims("Cumprod"));
    }

    #[test]
    fn empty_ops_claims_nothing() {
        let options = Options::parse(&[("ops", "")], &HAVE).unwrap();
        assert!(!options.claims("Sin") && !options.claims("Cumprod"));
    }

    #[test]
    fn an_op_the_library_lacks_is_named_with_what_it_has() {
        let err = Options::parse(&[("ops", "Sine")], &HAVE).unwrap_err();
        assert_eq!(
            err.message(),
            "op-litert delegate: option 'ops' names 'Sine', which this library has no kernel \
             for: it has 'Sin', 'Cumprod'; did you mean 'Sin'?"
        );
    }

    #[test]
    fn an_empty_name_is_refused() {
        let err = Options::parse(&[("ops", "Sin,,Cumprod")], &HAVE).unwrap_err();
        assert!(err.message().contains("has an empty name"), "{err}");
    }

    #[test]
    fn unknown_keys_and_values_are_named() {
        let err = Options::parse(&[("opps", "Sin")], &HAVE).unwrap_err();
        assert_eq!(
            err.message(),
            "op-litert delegate: unknown option 'opps': the options are 'ops', 'unclaimed'; \
             did you mean 'ops'?"
        );
        let err = Options::parse(&[("unclaimed", "fail")], &HAVE).unwrap_err();
        assert!(
            err.message()
                .contains("expected 'report', 'error' or 'ignore'"),
            "{err}"
        );
        let options = Options::parse(&[("unclaimed", "error")], &HAVE).unwrap();
        assert_eq!(options.unclaimed, Unclaimed::Error);
    }

    #[test]
    fn a_key_given_twice_is_refused() {
        let err = Options::parse(&[("ops", "Sin"), ("ops", "Sin")], &HAVE).unwrap_err();
        assert!(err.message().contains("given twice"), "{err}");
    }
}
