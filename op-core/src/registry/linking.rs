//! Required crates: [`require_linked!`](crate::require_linked) submits a
//! [`LinkRequirement`], and the registry, when built, lists each required
//! crate that submitted nothing as an [`UnlinkedCrate`].
//!
//! Why a requirement names the crate as text rather than as a path: naming
//! the crate in code (even `use my_kernels as _;`) links it, so a check
//! that mentioned it could never fail. The registry instead compares the
//! name with the first segment of each registration's `module_path`.

use std::fmt;

use super::Registry;
use super::op_kernels_ops::OP_KERNELS_OPS;
use crate::Error;
use crate::error::quoted;

/// op-kernels' crate name, as `module_path!()` starts.
const OP_KERNELS: &str = "op_kernels";

/// How to link op-kernels, for a message about an op it ships while it
/// is not linked.
pub const LINK_OP_KERNELS: &str = "add op-kernels to [dependencies] and call \
     `op_kernels::link()` once, in `main` or in each test file (or write `use op_kernels as _;`)";

/// What a registry can tell of an op it lacks ([`Registry::missing_op`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MissingOp<'a> {
    /// A registered op has a close name: likely a misspelling.
    Close(&'a str),
    /// op-kernels ships it, and is not linked ([`LINK_OP_KERNELS`]).
    InOpKernels,
    /// op-kernels, not linked, ships an op of a close name.
    CloseInOpKernels(&'static str),
    /// Nothing: another crate may define it.
    Unknown,
}

impl MissingOp<'_> {
    /// Whether linking op-kernels would help.
    pub fn in_op_kernels(&self) -> bool {
        matches!(
            self,
            MissingOp::InOpKernels | MissingOp::CloseInOpKernels(_)
        )
    }
}

/// The hint in a sentence: `did you mean 'Good'?`, `it ships in
/// op-kernels, which is not linked: add ...`; empty for
/// [`MissingOp::Unknown`].
impl fmt::Display for MissingOp<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MissingOp::Close(close) => write!(f, "did you mean '{close}'?"),
            MissingOp::InOpKernels => {
                write!(
                    f,
                    "it ships in op-kernels, which is not linked: {LINK_OP_KERNELS}"
                )
            }
            MissingOp::CloseInOpKernels(close) => write!(
                f,
                "did you mean '{close}'? It ships in op-kernels, which is not linked: {LINK_OP_KERNELS}"
            ),
            MissingOp::Unknown => Ok(()),
        }
    }
}

/// A program's statement that crate `crate_name` submits registrations it
/// relies on: what [`require_linked!`](crate::require_linked) submits.
///
/// `#[non_exhaustive]`: built with [`LinkRequirement::new`] (`const`, for
/// `inventory::submit!`).
#[derive(Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LinkRequirement {
    /// The required crate's name as Rust code names it (`my_kernels` for a
    /// package named `my-kernels`).
    pub crate_name: &'static str,
    /// Where the requirement was written (`file!()`).
    pub file: &'static str,
    /// The line where it was written (`line!()`).
    pub line: u32,
}

impl LinkRequirement {
    /// Crate `crate_name` is required, as written at `file:line`.
    pub const fn new(crate_name: &'static str, file: &'static str, line: u32) -> Self {
        LinkRequirement {
            crate_name,
            file,
            line,
        }
    }
}

inventory::collect!(LinkRequirement);

/// A required crate that submitted no op, kernel or gradient: it is not
/// linked into the program (or its name is wrong). `Display` is the whole
/// explanation, with the fix.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct UnlinkedCrate {
    /// The requirement (the first one, when the crate is required twice).
    pub requirement: &'static LinkRequirement,
    /// The closest name among the crates that did submit registrations,
    /// when one is at most two edits away (a likely misspelling).
    pub did_you_mean: Option<&'static str>,
}

impl fmt::Display for UnlinkedCrate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let LinkRequirement {
            crate_name,
            file,
            line,
        } = self.requirement;
        write!(
            f,
            "crate '{crate_name}' (required by `require_linked!` at {file}:{line}) submitted no ops, kernels or gradients: it is not linked into this program. Name it once, in `main` or in each test file: call `{crate_name}::link()`, or write `use {crate_name} as _;`"
        )?;
        if let Some(name) = self.did_you_mean {
            write!(f, "; or, if the name is misspelled, did you mean '{name}'?")?;
        }
        Ok(())
    }
}

/// The crate a module path is in: its first segment (`None` for an empty
/// path, i.e. a registration that did not record one).
fn crate_of(module_path: &'static str) -> Option<&'static str> {
    module_path
        .split("::")
        .next()
        .filter(|name| !name.is_empty())
}

impl Registry {
    /// This registry with these link requirements, each checked against
    /// the crates that submitted its ops, kernels and gradients (see
    /// [`unlinked`](Self::unlinked)).
    pub fn with_link_requirements(
        mut self,
        requirements: impl IntoIterator<Item = &'static LinkRequirement>,
    ) -> Registry {
        self.requirements.extend(requirements);
        // Link order is arbitrary; sorting makes "first" and messages stable.
        self.requirements
            .sort_by_key(|r| (r.crate_name, r.file, r.line));
        self.find_unlinked();
        self
    }

    /// Every required crate that submitted nothing, sorted by name: empty
    /// when every crate named by [`require_linked!`](crate::require_linked)
    /// is linked. While it is not empty, [`op`](Self::op) refuses every
    /// op with an error listing them.
    ///
    /// ```standalone_crate
    /// op_core::require_linked!(crate_that_is_not_there);
    ///
    /// let registry = op_core::Registry::global();
    /// let [missing] = registry.unlinked() else { panic!() };
    /// assert_eq!(missing.requirement.crate_name, "crate_that_is_not_there");
    /// let err = op_core::OpCall::new("AnyOp").run().unwrap_err();
    /// assert_eq!(err.code(), op_core::Code::FailedPrecondition);
    /// assert!(err.message().contains("`use crate_that_is_not_there as _;`"));
    /// ```
    pub fn unlinked(&self) -> &[UnlinkedCrate] {
        &self.unlinked
    }

    /// The crates that submitted at least one op, kernel or gradient (as
    /// recorded in their `module_path`), sorted.
    pub fn linked_crates(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.crates.iter().copied()
    }

    pub(super) fn note_crate(&mut self, module_path: &'static str) {
        if let Some(name) = crate_of(module_path) {
            self.crates.insert(name);
        }
    }

    /// What this registry can tell of op `name`, which it lacks, wherever
    /// an unknown op name is reported (a call by name, a GraphDef's node,
    /// `opkit ops FILTER`): the closest registered name ([`MissingOp::Close`]:
    /// `did you mean 'Rescale'?`), or, for an op that op-kernels ships while
    /// none of op-kernels' ops is registered (it is not linked), that it
    /// ships there ([`MissingOp::InOpKernels`]). Its `Display` is the hint
    /// in a sentence.
    ///
    /// Which ops op-kernels ships is a list kept here
    /// ([`OP_KERNELS_OPS`]), since op-kernels itself
    /// is what is missing; op-kernels' tests fail when the two differ.
    ///
    /// ```standalone_crate
    /// use op_core::registry::MissingOp;
    /// // This program does not link op-kernels.
    /// let registry = op_core::Registry::global();
    /// assert_eq!(registry.missing_op("Placeholder"), MissingOp::InOpKernels);
    /// let hint = registry.missing_op("Placeholder").to_string();
    /// assert!(hint.starts_with("it ships in op-kernels, which is not linked"), "{hint}");
    /// assert!(hint.contains("`op_kernels::link()`"), "{hint}");
    /// assert_eq!(
    ///     registry.missing_op("Placeholdr"),
    ///     MissingOp::CloseInOpKernels("Placeholder")
    /// );
    /// assert_eq!(registry.missing_op("Frobnicate"), MissingOp::Unknown);
    /// ```
    pub fn missing_op(&self, name: &str) -> MissingOp<'_> {
        let unlinked = !self.crates.contains(OP_KERNELS);
        let shipped = |op: &str| unlinked && OP_KERNELS_OPS.binary_search(&op).is_ok();
        if shipped(name) {
            return MissingOp::InOpKernels;
        }
        let registered = self.ops.keys().map(String::as_str);
        let candidates = registered.chain(OP_KERNELS_OPS.iter().copied().filter(|_| unlinked));
        match op_spec::suggest::closest(name, candidates) {
            Some(close) if !self.ops.contains_key(close) => {
                let index = OP_KERNELS_OPS.binary_search(&close);
                // Not registered, so one of op-kernels' names.
                index.map_or(MissingOp::Unknown, |i| {
                    MissingOp::CloseInOpKernels(OP_KERNELS_OPS[i])
                })
            }
            Some(close) => MissingOp::Close(close),
            None => MissingOp::Unknown,
        }
    }

    /// Recomputes `unlinked` (after requirements or registrations came in).
    pub(super) fn find_unlinked(&mut self) {
        let mut unlinked: Vec<UnlinkedCrate> = Vec::new();
        for requirement in &self.requirements {
            let name = requirement.crate_name;
            let listed = unlinked
                .last()
                .is_some_and(|u| u.requirement.crate_name == name);
            if listed || self.crates.contains(name) {
                continue;
            }
            // Crate names share parts (`_kernels`, `_ops`): only a name
            // one or two edits away is a likely misspelling.
            let did_you_mean = op_spec::suggest::closest(name, self.crates.iter().copied())
                .filter(|close| op_spec::suggest::edit_distance(name, close) <= 2);
            unlinked.push(UnlinkedCrate {
                requirement,
                did_you_mean,
            });
        }
        self.unlinked = unlinked;
    }

    /// `N required crate(s) are not linked:` and one line per crate.
    pub(super) fn describe_unlinked(&self) -> String {
        let lines: Vec<String> = self.unlinked.iter().map(|u| format!("\n  {u}")).collect();
        format!(
            "{} required crate(s) not linked:{}",
            self.unlinked.len(),
            lines.concat()
        )
    }

    /// What [`op`](Self::op) returns for any op while a required crate is
    /// missing.
    pub(super) fn unlinked_error(&self, op: &str) -> Error {
        Error::failed_precondition(format!(
            "op {} cannot run: {}",
            quoted(op),
            self.describe_unlinked()
        ))
    }
}

/// States which crates of ops, kernels or gradients this program expects
/// to be linked, by their names as Rust code writes them (`my_kernels` for
/// a package named `my-kernels`).
///
/// It does **not** link them: naming a crate in code links it, so this
/// macro takes names only, and says when a name was not linked. Write it
/// once, at the top of `main.rs`, of a test file or of a library that
/// relies on kernels from elsewhere. When the registry is built (on first
/// use, so at startup), each required crate that submitted no op, kernel
/// or gradient is listed by [`Registry::unlinked`], [`Registry::check`]
/// and the registry's `Display`, and every op lookup fails with a
/// `FailedPrecondition` error naming the crate and the fix: call
/// `my_kernels::link()` once, or write `use my_kernels as _;`.
///
/// ```standalone_crate
/// // This program names a crate that is not among its dependencies: the
/// // registry says so, and refuses to run ops until it is fixed.
/// op_core::require_linked!(my_kernels);
///
/// let err = op_core::Registry::global().check().unwrap_err();
/// assert!(
///     err.message().starts_with("1 required crate(s) not linked:\n  crate 'my_kernels'"),
///     "{err}"
/// );
/// assert!(err.message().contains("call `my_kernels::link()`, or write `use my_kernels as _;`"));
/// ```
///
/// Misuse is a compile error:
///
/// ```compile_fail
/// op_core::require_linked!("my_kernels"); // a string, not the crate's name
/// ```
///
/// ```compile_fail
/// op_core::require_linked!(my_kernels::ops); // a module, not a crate
/// ```
#[macro_export]
macro_rules! require_linked {
    () => {
        ::core::compile_error!(
            "`require_linked!` needs the names of the crates this program expects, e.g. `op_core::require_linked!(my_kernels);`"
        );
    };
    ($($name:ident),+ $(,)?) => {$(
        $crate::inventory::submit! {
            $crate::registry::LinkRequirement::new(
                ::core::stringify!($name),
                ::core::file!(),
                ::core::line!(),
            )
        }
    )+};
    ($name:ident :: $($rest:tt)*) => {
        ::core::compile_error!(::core::concat!(
            "`require_linked!` takes crate names, not paths: write `require_linked!(",
            ::core::stringify!($name),
            ")` for the crate `",
            ::core::stringify!($name),
            "`"
        ));
    };
    ($name:literal $($rest:tt)*) => {
        ::core::compile_error!(::core::concat!(
            "`require_linked!` takes crate names as Rust code writes them, not strings: instead of ",
            ::core::stringify!($name),
            ", write the name without quotes and with `_` for each `-` (a package `my-kernels` is the crate `my_kernels`)"
        ));
    };
    ($($other:tt)*) => {
        ::core::compile_error!(
            "`require_linked!` takes crate names separated by commas, e.g. `op_core::require_linked!(my_kernels, other_kernels);`"
        );
    };
}
