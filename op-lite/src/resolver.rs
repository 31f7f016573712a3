//! Op resolvers: what translates a model's operator codes (a builtin code,
//! or a custom op's name, each with a version) into kernels.
//!
//! [`OpResolver`] is TensorFlow Lite's interface of the same name: find a
//! registration by builtin code and version, or by custom name and version.
//! [`MutableOpResolver`] is the one to fill:
//! [`add_builtin`](MutableOpResolver::add_builtin) (which overrides an
//! earlier registration of the same builtin) and
//! [`add_custom`](MutableOpResolver::add_custom), each for all versions or
//! a range.
//!
//! The interpreter resolves every operator when it is built, and reports
//! what is missing in TensorFlow Lite's words ([`missing_op_error`]), with
//! what is registered and the closest name.

use std::collections::HashMap;
use std::fmt::{self, Write as _};
use std::ops::RangeInclusive;
use std::sync::Arc;

use op_core::error::quoted;
use op_core::op_spec::suggest::closest;
use op_core::{Error, Result};

use crate::kernel::LiteOp;
use crate::model::{BuiltinOperator, Model, OperatorCode};
use crate::registration::{Linked, LiteOpName, LiteRegistration};

/// Finds a kernel for an operator: TensorFlow Lite's `OpResolver`.
///
/// Implement the two `find_*` methods; the two listings only improve the
/// error a missing op gives (what is registered, the closest name).
pub trait OpResolver {
    /// The registration for builtin `op` at `version`, if any.
    fn find_builtin(&self, op: BuiltinOperator, version: i32) -> Option<&dyn LiteOp>;

    /// The registration for the custom op `name` at `version`, if any.
    fn find_custom(&self, name: &str, version: i32) -> Option<&dyn LiteOp>;

    /// The builtins registered, with their versions, for messages.
    fn builtin_ops(&self) -> Vec<(BuiltinOperator, Versions)> {
        Vec::new()
    }

    /// The custom ops registered, with their versions, for messages.
    fn custom_ops(&self) -> Vec<(String, Versions)> {
        Vec::new()
    }
}

/// The versions of an op a registration serves: an inclusive range.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Versions {
    /// The lowest version served.
    pub min: i32,
    /// The highest version served.
    pub max: i32,
}

impl Versions {
    /// Every version.
    pub const ALL: Versions = Versions {
        min: i32::MIN,
        max: i32::MAX,
    };

    /// Whether `version` is in the range.
    pub fn contains(&self, version: i32) -> bool {
        self.min <= version && version <= self.max
    }
}

impl From<RangeInclusive<i32>> for Versions {
    fn from(range: RangeInclusive<i32>) -> Versions {
        Versions {
            min: *range.start(),
            max: *range.end(),
        }
    }
}

impl From<i32> for Versions {
    fn from(version: i32) -> Versions {
        Versions {
            min: version,
            max: version,
        }
    }
}

impl fmt::Display for Versions {
    /// `all versions`, `version 2`, `versions 1 to 3`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.min, self.max) {
            (i32::MIN, i32::MAX) => f.write_str("all versions"),
            (min, max) if min == max => write!(f, "version {min}"),
            (min, i32::MAX) => write!(f, "versions {min} and up"),
            (min, max) => write!(f, "versions {min} to {max}"),
        }
    }
}

/// One registration and the versions it serves.
#[derive(Clone)]
struct Entry {
    versions: Versions,
    op: Arc<dyn LiteOp>,
}

/// A resolver to fill with builtins and custom ops: TensorFlow Lite's
/// `MutableOpResolver`.
///
/// A registration serves all versions of its op unless given a range
/// (`add_builtin_versions(BuiltinOperator::ADD, add, 1..=2)`): the Rust
/// registrant says what its kernel implements, and its `prepare` rejects
/// the dtypes and shapes it does not. (TensorFlow Lite's `AddBuiltin`
/// defaults to version 1 alone.) A later registration of the same op
/// overrides an earlier one for the versions it serves.
///
/// ```
/// use op_lite::kernel::{FnOp, InvokeContext, PrepareContext};
/// use op_lite::model::BuiltinOperator;
/// use op_lite::{MutableOpResolver, OpResolver};
///
/// fn prepare(_: &mut PrepareContext<'_>) -> op_core::Result<()> { Ok(()) }
/// fn invoke(_: &mut InvokeContext<'_>) -> op_core::Result<()> { Ok(()) }
///
/// let mut resolver = MutableOpResolver::new();
/// resolver
///     .add_custom("Sin", FnOp::new(prepare, invoke))
///     .add_builtin_versions(BuiltinOperator::ADD, FnOp::new(prepare, invoke), 1..=2);
/// assert!(resolver.find_custom("Sin", 1).is_some());
/// assert!(resolver.find_builtin(BuiltinOperator::ADD, 2).is_some());
/// assert!(resolver.find_builtin(BuiltinOperator::ADD, 3).is_none());
/// ```
#[derive(Clone, Default)]
pub struct MutableOpResolver {
    builtins: HashMap<BuiltinOperator, Vec<Entry>>,
    customs: HashMap<String, Vec<Entry>>,
}

impl MutableOpResolver {
    /// An empty resolver.
    pub fn new() -> MutableOpResolver {
        MutableOpResolver::default()
    }

    /// Registers `op` for every version of the builtin `code`, overriding
    /// what was registered for it before.
    pub fn add_builtin(&mut self, code: BuiltinOperator, op: impl LiteOp + 'static) -> &mut Self {
        self.add_builtin_versions(code, op, Versions::ALL)
    }

    /// Registers `op` for the `versions` of the builtin `code`
    /// (`1..=3`, or one version), overriding earlier registrations for
    /// those versions.
    pub fn add_builtin_versions(
        &mut self,
        code: BuiltinOperator,
        op: impl LiteOp + 'static,
        versions: impl Into<Versions>,
    ) -> &mut Self {
        push(self.builtins.entry(code).or_default(), op, versions.into());
        self
    }

    /// Registers `op` for every version of the custom op `name`, overriding
    /// what was registered for that name before.
    pub fn add_custom(&mut self, name: &str, op: impl LiteOp + 'static) -> &mut Self {
        self.add_custom_versions(name, op, Versions::ALL)
    }

    /// Registers `op` for the `versions` of the custom op `name`.
    pub fn add_custom_versions(
        &mut self,
        name: &str,
        op: impl LiteOp + 'static,
        versions: impl Into<Versions>,
    ) -> &mut Self {
        push(
            self.customs.entry(name.to_owned()).or_default(),
            op,
            versions.into(),
        );
        self
    }

    /// Registers a kernel linked with
    /// [`#[lite_kernel]`](crate::lite_kernel) for its op and versions,
    /// overriding earlier registrations of them (one of
    /// [`linked_kernels`](crate::linked_kernels), or a kernel's
    /// registration reached by name).
    pub fn add(&mut self, registration: &LiteRegistration) -> &mut Self {
        let op = Linked(registration.op());
        match registration.name() {
            LiteOpName::Builtin(code) => {
                self.add_builtin_versions(code, op, registration.versions())
            }
            LiteOpName::Custom(name) => self.add_custom_versions(name, op, registration.versions()),
        }
    }

    /// Registers every kernel linked into the program with
    /// [`#[lite_kernel]`](crate::lite_kernel), in the order of
    /// [`linked_kernels`](crate::linked_kernels) (so of two linked kernels
    /// for the same op and versions, the one later in that order wins).
    pub fn add_linked(&mut self) -> &mut Self {
        for registration in crate::registration::linked_kernels() {
            self.add(registration);
        }
        self
    }

    /// Adds every registration of `other`, overriding this resolver's
    /// registrations of the same ops and versions: TensorFlow Lite's
    /// `AddAll`.
    pub fn add_all(&mut self, other: &MutableOpResolver) -> &mut Self {
        for (code, entries) in &other.builtins {
            self.builtins
                .entry(*code)
                .or_default()
                .extend(entries.iter().cloned());
        }
        for (name, entries) in &other.customs {
            self.customs
                .entry(name.clone())
                .or_default()
                .extend(entries.iter().cloned());
        }
        self
    }
}

impl MutableOpResolver {
    /// Selective registration at run time: a resolver holding only the
    /// registrations of `full` that `model` uses (every subgraph), each
    /// for the versions `full` registers it for. What a deployment builds
    /// once, from the models it ships, to keep the rest out of its tables;
    /// [`for_models`](Self::for_models) takes several models.
    ///
    /// Fails with `NotFound`, in the interpreter's words, naming every op
    /// the model uses and `full` lacks, so that a missing kernel shows when
    /// the resolver is made rather than when a model is loaded.
    ///
    /// ```
    /// use op_lite::kernel::{FnOp, InvokeContext, PrepareContext};
    /// use op_lite::model::{BuiltinOperator, BuiltinOptions, Model, Operator, OperatorCode, Subgraph};
    /// use op_lite::{MutableOpResolver, OpResolver};
    ///
    /// fn prepare(_: &mut PrepareContext<'_>) -> op_core::Result<()> { Ok(()) }
    /// fn invoke(_: &mut InvokeContext<'_>) -> op_core::Result<()> { Ok(()) }
    /// let op = FnOp::new(prepare, invoke);
    ///
    /// let mut full = MutableOpResolver::new();
    /// full.add_builtin(BuiltinOperator::ADD, op)
    ///     .add_builtin(BuiltinOperator::MUL, op)
    ///     .add_custom("Sin", op);
    /// // A model of one ADD node.
    /// let model = Model {
    ///     operator_codes: vec![OperatorCode {
    ///         builtin: BuiltinOperator::ADD, custom_name: None, version: 2,
    ///     }],
    ///     subgraphs: vec![Subgraph {
    ///         operators: vec![Operator {
    ///             opcode_index: 0, inputs: vec![], outputs: vec![], intermediates: vec![],
    ///             builtin_options: BuiltinOptions::None, custom_options: vec![],
    ///         }],
    ///         ..Subgraph::default()
    ///     }],
    ///     ..Model::default()
    /// };
    /// let selected = MutableOpResolver::for_model(&model, &full)?;
    /// assert!(selected.find_builtin(BuiltinOperator::ADD, 2).is_some());
    /// assert!(selected.find_builtin(BuiltinOperator::MUL, 1).is_none());
    /// assert!(selected.find_custom("Sin", 1).is_none());
    /// # Ok::<(), op_core::Error>(())
    /// ```
    pub fn for_model(model: &Model, full: &MutableOpResolver) -> Result<MutableOpResolver> {
        MutableOpResolver::for_models(&[model], full)
    }

    /// [`for_model`](Self::for_model) over several models: the ops any of
    /// them uses.
    pub fn for_models(models: &[&Model], full: &MutableOpResolver) -> Result<MutableOpResolver> {
        let mut selected = MutableOpResolver::new();
        let mut missing = Vec::new();
        for used in ops_used(models)? {
            let OperatorCode {
                builtin,
                custom_name,
                version,
            } = &used.code;
            let version = *version;
            let node = used.first_node;
            let found = if *builtin == BuiltinOperator::CUSTOM {
                match custom_name {
                    None => Err(MissingOp::UnnamedCustom { node }),
                    Some(name) => copy_entry(
                        full.customs.get(name),
                        version,
                        selected.customs.entry(name.clone()).or_default(),
                    )
                    .ok_or_else(|| MissingOp::Custom {
                        name: name.clone(),
                        version,
                        node,
                    }),
                }
            } else {
                copy_entry(
                    full.builtins.get(builtin),
                    version,
                    selected.builtins.entry(*builtin).or_default(),
                )
                .ok_or(MissingOp::Builtin {
                    op: *builtin,
                    version,
                    node,
                })
            };
            if let Err(op) = found {
                missing.push(op);
            }
        }
        // A name looked up and not found leaves an empty list behind.
        selected.builtins.retain(|_, entries| !entries.is_empty());
        selected.customs.retain(|_, entries| !entries.is_empty());
        if missing.is_empty() {
            Ok(selected)
        } else {
            Err(missing_op_error(&missing, full))
        }
    }
}

/// Copies the entry of `from` that serves `version` into `to`, unless `to`
/// has it already (two versions one entry serves); `None` when no entry
/// serves it.
fn copy_entry(from: Option<&Vec<Entry>>, version: i32, to: &mut Vec<Entry>) -> Option<()> {
    let entry = from?.iter().rev().find(|e| e.versions.contains(version))?;
    if !to
        .iter()
        .any(|e| Arc::ptr_eq(&e.op, &entry.op) && e.versions == entry.versions)
    {
        to.push(entry.clone());
    }
    Some(())
}

/// One op a model uses, at one version: what selective registration
/// registers and `opkit lite ops` lists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpUse {
    /// The builtin code or custom name, and the version.
    pub code: OperatorCode,
    /// How many nodes run it, over every subgraph of every model.
    pub nodes: usize,
    /// The first node that runs it (in its subgraph), for messages.
    pub first_node: usize,
}

/// The ops `models` use (every operator of every subgraph), each operator
/// code once, in the order of first use.
///
/// Fails with `InvalidArgument` when an operator names an operator code the
/// model lacks (a hand-made model; the reader rejects such files).
pub fn ops_used(models: &[&Model]) -> Result<Vec<OpUse>> {
    let mut used: Vec<OpUse> = Vec::new();
    for model in models {
        for subgraph in &model.subgraphs {
            for (node, operator) in subgraph.operators.iter().enumerate() {
                let code = model
                    .operator_codes
                    .get(operator.opcode_index)
                    .ok_or_else(|| {
                        Error::invalid_argument(format!(
                            "node {node} uses operator code {}, but the model has {} operator codes",
                            operator.opcode_index,
                            model.operator_codes.len()
                        ))
                    })?;
                match used.iter_mut().find(|u| &u.code == code) {
                    Some(u) => u.nodes += 1,
                    None => used.push(OpUse {
                        code: code.clone(),
                        nodes: 1,
                        first_node: node,
                    }),
                }
            }
        }
    }
    Ok(used)
}

/// Adds a registration; later entries win, so an override needs no search.
fn push(entries: &mut Vec<Entry>, op: impl LiteOp + 'static, versions: Versions) {
    // An entry the new one covers entirely can never be found again.
    entries.retain(|e| !(versions.min <= e.versions.min && e.versions.max <= versions.max));
    entries.push(Entry {
        versions,
        op: Arc::new(op),
    });
}

/// The latest entry serving `version`.
fn find(entries: Option<&Vec<Entry>>, version: i32) -> Option<&dyn LiteOp> {
    entries?
        .iter()
        .rev()
        .find(|e| e.versions.contains(version))
        .map(|e| &*e.op)
}

impl OpResolver for MutableOpResolver {
    fn find_builtin(&self, op: BuiltinOperator, version: i32) -> Option<&dyn LiteOp> {
        find(self.builtins.get(&op), version)
    }

    fn find_custom(&self, name: &str, version: i32) -> Option<&dyn LiteOp> {
        find(self.customs.get(name), version)
    }

    fn builtin_ops(&self) -> Vec<(BuiltinOperator, Versions)> {
        let mut ops: Vec<_> = self
            .builtins
            .iter()
            .flat_map(|(code, entries)| entries.iter().map(|e| (*code, e.versions)))
            .collect();
        ops.sort_by_key(|(code, v)| (*code, v.min));
        ops
    }

    fn custom_ops(&self) -> Vec<(String, Versions)> {
        let mut ops: Vec<_> = self
            .customs
            .iter()
            .flat_map(|(name, entries)| entries.iter().map(|e| (name.clone(), e.versions)))
            .collect();
        ops.sort_by(|a, b| (&a.0, a.1.min).cmp(&(&b.0, b.1.min)));
        ops
    }
}

impl fmt::Debug for MutableOpResolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MutableOpResolver")
            .field("builtins", &self.builtin_ops())
            .field("custom", &self.custom_ops())
            .finish()
    }
}

/// An op a model uses that a resolver does not have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MissingOp {
    /// A builtin code (possibly one this crate has no name for) at a version.
    Builtin {
        /// The code.
        op: BuiltinOperator,
        /// The version the model asks for.
        version: i32,
        /// The first node that uses it.
        node: usize,
    },
    /// A custom op at a version.
    Custom {
        /// The custom op's name.
        name: String,
        /// The version the model asks for.
        version: i32,
        /// The first node that uses it.
        node: usize,
    },
    /// An operator code of `CUSTOM` without a name.
    UnnamedCustom {
        /// The first node that uses it.
        node: usize,
    },
}

/// The `NotFound` error for the ops in `missing` (in the order given, one
/// line each), in TensorFlow Lite's words, followed by what `resolver`
/// registers and, for a custom name, the closest registered one:
///
/// ```text
/// NotFound: Didn't find custom operator for name 'Sn' (version 1, node 0). The custom operators registered are 'Cos' (all versions), 'Sin' (all versions); did you mean 'Sin'?
/// ```
pub fn missing_op_error(missing: &[MissingOp], resolver: &dyn OpResolver) -> Error {
    let customs = resolver.custom_ops();
    let builtins = resolver.builtin_ops();
    let mut message = String::new();
    for (i, op) in missing.iter().enumerate() {
        if i > 0 {
            message.push('\n');
        }
        // Writing to a String cannot fail.
        let _ = match op {
            MissingOp::Custom {
                name,
                version,
                node,
            } => write_missing_custom(&mut message, name, *version, *node, &customs),
            MissingOp::Builtin { op, version, node } => {
                write_missing_builtin(&mut message, *op, *version, *node, &builtins)
            }
            MissingOp::UnnamedCustom { node } => write!(
                message,
                "Operator with CUSTOM builtin_code has no custom_code (node {node})."
            ),
        };
        let _ = write_linked_hint(&mut message, op);
    }
    Error::not_found(message)
}

/// When a `#[lite_kernel]` for the missing op and version is linked into
/// the program but the resolver was built without it, says so and how to
/// add it: the usual cause of a missing op whose kernel the author wrote.
fn write_linked_hint(out: &mut String, missing: &MissingOp) -> fmt::Result {
    let serves = |k: &LiteRegistration| match (missing, k.name()) {
        (MissingOp::Custom { name, version, .. }, LiteOpName::Custom(linked)) => {
            linked == name && k.versions().contains(*version)
        }
        (MissingOp::Builtin { op, version, .. }, LiteOpName::Builtin(linked)) => {
            linked == *op && k.versions().contains(*version)
        }
        _ => false,
    };
    let linked = crate::registration::linked_kernels();
    let Some(kernel) = linked.iter().find(|k| serves(k)) else {
        return Ok(());
    };
    write!(
        out,
        " A #[lite_kernel] for it is linked into this program ({}, in {}), but this resolver \
         does not have it: add the linked kernels with `resolver.add_linked()`, or this one \
         with `resolver.add(registration)`.",
        kernel.location(),
        kernel.module_path()
    )
}

/// How many registered custom ops a missing-op error names.
const LISTED_CUSTOM_OPS: usize = 10;

fn write_missing_custom(
    out: &mut String,
    name: &str,
    version: i32,
    node: usize,
    registered: &[(String, Versions)],
) -> fmt::Result {
    write!(
        out,
        "Didn't find custom operator for name {} (version {version}, node {node}).",
        quoted(name)
    )?;
    let same_name: Vec<String> = registered
        .iter()
        .filter(|(n, _)| n == name)
        .map(|(_, v)| v.to_string())
        .collect();
    if !same_name.is_empty() {
        return write!(out, " It is registered for {} only.", same_name.join(", "));
    }
    if registered.is_empty() {
        return write!(
            out,
            " No custom operators are registered: add it with MutableOpResolver::add_custom."
        );
    }
    // A resolver over the framework's ops registers a hundred names: list
    // enough to show what kind of names are there, and count the rest.
    let mut list: Vec<String> = registered
        .iter()
        .take(LISTED_CUSTOM_OPS)
        .map(|(n, v)| format!("{} ({v})", quoted(n)))
        .collect();
    if registered.len() > LISTED_CUSTOM_OPS {
        list.push(format!("and {} more", registered.len() - LISTED_CUSTOM_OPS));
    }
    write!(
        out,
        " The custom operators registered are {}",
        list.join(", ")
    )?;
    match closest(name, registered.iter().map(|(n, _)| n.as_str())) {
        Some(near) => write!(out, "; did you mean {}?", quoted(near)),
        None => write!(out, "."),
    }
}

fn write_missing_builtin(
    out: &mut String,
    op: BuiltinOperator,
    version: i32,
    node: usize,
    registered: &[(BuiltinOperator, Versions)],
) -> fmt::Result {
    write!(
        out,
        "Didn't find op for builtin opcode '{op}' version '{version}' (node {node})."
    )?;
    let versions: Vec<String> = registered
        .iter()
        .filter(|(code, _)| *code == op)
        .map(|(_, v)| v.to_string())
        .collect();
    if versions.is_empty() {
        write!(out, " The resolver has no kernel for {op}.")
    } else {
        write!(
            out,
            " An older version of this builtin might be supported: the resolver has {op} for {}.",
            versions.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::{FnOp, InvokeContext, PrepareContext};
    use op_core::Result;

    fn prepare(_: &mut PrepareContext<'_>) -> Result<()> {
        Ok(())
    }
    fn invoke_a(_: &mut InvokeContext<'_>) -> Result<()> {
        Ok(())
    }
    fn invoke_b(_: &mut InvokeContext<'_>) -> Result<()> {
        Err(Error::internal("b"))
    }

    /// Which of the two test kernels a registration is, by its address.
    fn same(found: Option<&dyn LiteOp>, expected: &Arc<dyn LiteOp>) -> bool {
        found.is_some_and(|f| std::ptr::addr_eq(f, &**expected))
    }

    #[test]
    fn a_later_builtin_registration_overrides_an_earlier_one() {
        let mut resolver = MutableOpResolver::new();
        resolver.add_builtin(BuiltinOperator::ADD, FnOp::new(prepare, invoke_a));
        let first = resolver.builtins[&BuiltinOperator::ADD][0].op.clone();
        resolver.add_builtin_versions(BuiltinOperator::ADD, FnOp::new(prepare, invoke_b), 2..=3);
        let second = resolver.builtins[&BuiltinOperator::ADD][1].op.clone();
        assert!(same(resolver.find_builtin(BuiltinOperator::ADD, 1), &first));
        assert!(same(
            resolver.find_builtin(BuiltinOperator::ADD, 2),
            &second
        ));
        assert!(same(
            resolver.find_builtin(BuiltinOperator::ADD, 3),
            &second
        ));
        assert!(same(resolver.find_builtin(BuiltinOperator::ADD, 4), &first));
        assert!(resolver.find_builtin(BuiltinOperator::MUL, 1).is_none());
        // Covering every version drops the entries it hides.
        resolver.add_builtin(BuiltinOperator::ADD, FnOp::new(prepare, invoke_a));
        assert_eq!(resolver.builtins[&BuiltinOperator::ADD].len(), 1);
    }

    #[test]
    fn custom_ops_are_found_by_name_and_version() {
        let mut resolver = MutableOpResolver::new();
        resolver.add_custom_versions("Sin", FnOp::new(prepare, invoke_a), 1);
        assert!(resolver.find_custom("Sin", 1).is_some());
        assert!(resolver.find_custom("Sin", 2).is_none());
        assert!(
            resolver.find_custom("sin", 1).is_none(),
            "names are case-sensitive"
        );
        assert_eq!(
            resolver.custom_ops(),
            [("Sin".to_string(), Versions { min: 1, max: 1 })]
        );
    }

    #[test]
    fn add_all_copies_and_overrides() {
        let mut base = MutableOpResolver::new();
        base.add_custom("A", FnOp::new(prepare, invoke_a));
        let mut extra = MutableOpResolver::new();
        extra
            .add_custom("B", FnOp::new(prepare, invoke_a))
            .add_builtin(BuiltinOperator::MUL, FnOp::new(prepare, invoke_b));
        base.add_all(&extra);
        assert!(base.find_custom("A", 1).is_some());
        assert!(base.find_custom("B", 1).is_some());
        assert!(base.find_builtin(BuiltinOperator::MUL, 7).is_some());
        assert_eq!(
            format!("{base:?}"),
            "MutableOpResolver { builtins: [(BuiltinOperator(18), Versions { min: -2147483648, max: 2147483647 })], \
             custom: [(\"A\", Versions { min: -2147483648, max: 2147483647 }), (\"B\", Versions { min: -2147483648, max: 2147483647 })] }"
        );
    }

    #[test]
    fn a_missing_custom_op_is_reported_in_tensorflow_lite_s_words_with_the_closest_name() {
        let mut resolver = MutableOpResolver::new();
        resolver
            .add_custom("Sine", FnOp::new(prepare, invoke_a))
            .add_custom("Cos", FnOp::new(prepare, invoke_a));
        let missing = [MissingOp::Custom {
            name: "Sin".into(),
            version: 1,
            node: 0,
        }];
        let err = missing_op_error(&missing, &resolver);
        assert_eq!(err.code(), op_core::Code::NotFound);
        assert_eq!(
            err.message(),
            "Didn't find custom operator for name 'Sin' (version 1, node 0). The custom operators \
             registered are 'Cos' (all versions), 'Sine' (all versions); did you mean 'Sine'?"
        );
        let empty = missing_op_error(&missing, &MutableOpResolver::new());
        assert!(
            empty.message().ends_with(
                "No custom operators are registered: add it with MutableOpResolver::add_custom."
            ),
            "{empty}"
        );
    }

    #[test]
    fn a_long_list_of_custom_ops_is_cut_short_but_the_closest_name_is_still_found() {
        let mut resolver = MutableOpResolver::new();
        for k in 0..15 {
            resolver.add_custom(&format!("Op{k:02}"), FnOp::new(prepare, invoke_a));
        }
        resolver.add_custom("Sine", FnOp::new(prepare, invoke_a));
        let missing = [MissingOp::Custom {
            name: "Sin".into(),
            version: 1,
            node: 0,
        }];
        let message = missing_op_error(&missing, &resolver).message().to_string();
        assert!(
            message.contains("'Op09' (all versions), and 6 more;"),
            "{message}"
        );
        assert!(!message.contains("'Op10'"), "{message}");
        assert!(message.ends_with("did you mean 'Sine'?"), "{message}");
    }

    #[test]
    fn a_missing_version_names_the_versions_registered() {
        let mut resolver = MutableOpResolver::new();
        resolver
            .add_custom_versions("Sin", FnOp::new(prepare, invoke_a), 1)
            .add_builtin_versions(
                BuiltinOperator::CONV_2D,
                FnOp::new(prepare, invoke_a),
                1..=3,
            );
        let err = missing_op_error(
            &[
                MissingOp::Custom {
                    name: "Sin".into(),
                    version: 2,
                    node: 4,
                },
                MissingOp::Builtin {
                    op: BuiltinOperator::CONV_2D,
                    version: 5,
                    node: 1,
                },
                MissingOp::Builtin {
                    op: BuiltinOperator::MUL,
                    version: 1,
                    node: 2,
                },
                MissingOp::Builtin {
                    op: BuiltinOperator(400),
                    version: 1,
                    node: 3,
                },
                MissingOp::UnnamedCustom { node: 5 },
            ],
            &resolver,
        );
        let lines: Vec<&str> = err.message().lines().collect();
        assert_eq!(
            lines,
            [
                "Didn't find custom operator for name 'Sin' (version 2, node 4). It is registered for version 1 only.",
                "Didn't find op for builtin opcode 'CONV_2D' version '5' (node 1). An older version of this builtin \
                 might be supported: the resolver has CONV_2D for versions 1 to 3.",
                "Didn't find op for builtin opcode 'MUL' version '1' (node 2). The resolver has no kernel for MUL.",
                "Didn't find op for builtin opcode 'builtin operator 400' version '1' (node 3). \
                 The resolver has no kernel for builtin operator 400.",
                "Operator with CUSTOM builtin_code has no custom_code (node 5).",
            ]
        );
    }

    #[test]
    fn versions_print_as_ranges() {
        assert_eq!(Versions::ALL.to_string(), "all versions");
        assert_eq!(Versions::from(2).to_string(), "version 2");
        assert_eq!(Versions::from(1..=3).to_string(), "versions 1 to 3");
        assert_eq!(
            Versions::from(2..=i32::MAX).to_string(),
            "versions 2 and up"
        );
    }
}
