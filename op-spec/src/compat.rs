//! Backwards compatibility of op definitions: whether a new version of an op
//! still loads and means the same for every graph written against the old
//! one, by TensorFlow's rules (`OpDefCompatible` and
//! `OpDefAttrDefaultsUnchanged` in `op_def_util.cc`; the cases of
//! `op_compatibility_test.cc`; "Backwards compatibility" in the guide to
//! adding an op).
//!
//! What may change:
//! - attrs may be added with a default, reordered, and given a default;
//! - constraints may widen: types or strings added to the allowed values,
//!   the allowed values dropped, a minimum lowered or dropped;
//! - an input or output may become polymorphic (`int32` to `T` where
//!   `T: type = DT_INT32`), a single one may become a list whose default
//!   is the old signature (`a: int32` to `a: N * int32` where `N: int = 1`,
//!   or to `a: T` where `T: list(type) = [DT_INT32]`), and a list input or
//!   output may be added that defaults to empty (`N: int >= 0 = 0`);
//! - inputs may be renamed (graphs connect them by position), an input may
//!   stop being a reference and an output may become one;
//! - an output's full type (`experimental_full_type`) may be added, changed
//!   or dropped: it guides type inference and placement, and TensorFlow's
//!   `OpDefCompatible` does not compare it (its `op_compatibility_lib`
//!   records such a change as a new, compatible version of the op);
//! - an op may be deprecated, and ops may be added.
//!
//! Everything else is a [`Violation`]: an op removed or renamed; an attr
//! removed, added without a default, changed type, narrowed, given a
//! higher minimum, or whose default changed or went away; an input or
//! output added, removed, reordered or retyped; an output renamed (function
//! bodies name outputs); an input made a reference or an output made
//! none.
//!
//! One rule is stricter than TensorFlow's: TensorFlow compares input types
//! only, so swapping two inputs of the same type passes its check although
//! every graph then feeds the op its inputs the wrong way round. Here the
//! inputs both versions name must keep their order ([`Rule::ArgsReordered`]).
//!
//! ```
//! use op_spec::{compat, OpDefBuilder};
//! let old = OpDefBuilder::new("ZeroOut")
//!     .attr("T: {float, int32} = DT_INT32")
//!     .input("to_zero: T")
//!     .output("zeroed: T")
//!     .build()
//!     .unwrap();
//! let wider = OpDefBuilder::new("ZeroOut")
//!     .attr("T: {float, double, int32} = DT_INT32")
//!     .attr("preserve_index: int = 0")
//!     .input("to_zero: T")
//!     .output("zeroed: T")
//!     .build()
//!     .unwrap();
//! assert!(compat::check(&old, &wider).is_empty());
//!
//! let violations = compat::check(&wider, &old);
//! assert_eq!(violations.len(), 2);
//! assert_eq!(violations[0].rule, compat::Rule::AllowedValuesNarrowed);
//! assert_eq!(
//!     violations[0].to_string(),
//!     "ZeroOut: attr 'T' narrowed its allowed values: a constraint may only widen \
//!      (values added, or the constraint dropped); graphs may use the values it no longer allows\n  \
//!      old: T: {float, double, int32} = DT_INT32\n  \
//!      new: T: {float, int32} = DT_INT32"
//! );
//! ```

use std::collections::HashMap;
use std::fmt;

use crate::attr_value::ListValue;
use crate::op_def::{ArgDef, ArgType, AttrDef};
use crate::pbtxt::attr_value_text;
use crate::{AttrValue, OpDef};

/// A backwards-compatibility rule that a change can break.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rule {
    /// An op of the old version is missing from the new one (removed, or
    /// renamed, which is the same to a graph that names it).
    OpRemoved,
    /// An attr of the old version is missing from the new one.
    AttrRemoved,
    /// An attr new in the new version has no default.
    AttrAddedWithoutDefault,
    /// An attr's type (`int`, `list(type)`) changed.
    AttrTypeChanged,
    /// An attr's allowed values lost a value, or were added where there
    /// were none.
    AllowedValuesNarrowed,
    /// An attr's minimum was raised, or added where there was none.
    MinimumRaised,
    /// An attr lost its default.
    DefaultRemoved,
    /// An attr's default changed.
    DefaultChanged,
    /// An input or output was added (one that does not default to empty),
    /// or a list's default length grew.
    ArgAdded,
    /// An input or output was removed, or a list's default length shrank.
    ArgRemoved,
    /// Inputs or outputs changed their order.
    ArgsReordered,
    /// An input's or output's type changed.
    ArgRetyped,
    /// An output was renamed.
    OutputRenamed,
    /// An input became a reference (`Ref(T)`).
    InputBecameRef,
    /// An output stopped being a reference.
    OutputLostRef,
}

impl Rule {
    /// Every rule.
    pub const ALL: [Rule; 15] = [
        Rule::OpRemoved,
        Rule::AttrRemoved,
        Rule::AttrAddedWithoutDefault,
        Rule::AttrTypeChanged,
        Rule::AllowedValuesNarrowed,
        Rule::MinimumRaised,
        Rule::DefaultRemoved,
        Rule::DefaultChanged,
        Rule::ArgAdded,
        Rule::ArgRemoved,
        Rule::ArgsReordered,
        Rule::ArgRetyped,
        Rule::OutputRenamed,
        Rule::InputBecameRef,
        Rule::OutputLostRef,
    ];

    /// A short stable identifier (`allowed-values-narrowed`), for tools.
    pub fn id(self) -> &'static str {
        match self {
            Rule::OpRemoved => "op-removed",
            Rule::AttrRemoved => "attr-removed",
            Rule::AttrAddedWithoutDefault => "attr-added-without-default",
            Rule::AttrTypeChanged => "attr-type-changed",
            Rule::AllowedValuesNarrowed => "allowed-values-narrowed",
            Rule::MinimumRaised => "minimum-raised",
            Rule::DefaultRemoved => "default-removed",
            Rule::DefaultChanged => "default-changed",
            Rule::ArgAdded => "arg-added",
            Rule::ArgRemoved => "arg-removed",
            Rule::ArgsReordered => "args-reordered",
            Rule::ArgRetyped => "arg-retyped",
            Rule::OutputRenamed => "output-renamed",
            Rule::InputBecameRef => "input-became-ref",
            Rule::OutputLostRef => "output-lost-ref",
        }
    }

    /// What happened, after the subject (`attr 'T' narrowed its allowed values`).
    fn what(self) -> &'static str {
        match self {
            Rule::OpRemoved => "was removed or renamed",
            Rule::AttrRemoved => "was removed",
            Rule::AttrAddedWithoutDefault => "was added without a default",
            Rule::AttrTypeChanged => "changed type",
            Rule::AllowedValuesNarrowed => "narrowed its allowed values",
            Rule::MinimumRaised => "raised its minimum",
            Rule::DefaultRemoved => "lost its default",
            Rule::DefaultChanged => "changed its default",
            Rule::ArgAdded => "was added",
            Rule::ArgRemoved => "was removed",
            Rule::ArgsReordered => "moved",
            Rule::ArgRetyped => "changed type",
            Rule::OutputRenamed => "was renamed",
            Rule::InputBecameRef => "became a reference",
            Rule::OutputLostRef => "is no longer a reference",
        }
    }

    /// The rule, and why breaking it breaks graphs.
    pub fn explanation(self) -> &'static str {
        match self {
            Rule::OpRemoved => {
                "an op may not be removed or renamed: graphs that use it no longer load \
                 (deprecate it, and add the new name as a new op)"
            }
            Rule::AttrRemoved => "an attr may not be removed: graphs that set it no longer load",
            Rule::AttrAddedWithoutDefault => {
                "an added attr needs a default, which graphs written before it get"
            }
            Rule::AttrTypeChanged => {
                "an attr's type may not change: graphs hold values of the old type"
            }
            Rule::AllowedValuesNarrowed => {
                "a constraint may only widen (values added, or the constraint dropped); \
                 graphs may use the values it no longer allows"
            }
            Rule::MinimumRaised => {
                "a minimum may only be lowered or dropped; graphs may use the values below the new one"
            }
            Rule::DefaultRemoved => {
                "an attr's default may not be removed: graphs that left the attr out relied on it"
            }
            Rule::DefaultChanged => {
                "an attr's default may not change: graphs that left the attr out would mean something else"
            }
            Rule::ArgAdded => {
                "inputs and outputs may not be added, except as a list that defaults to empty \
                 or a single one turned into a list whose default matches it"
            }
            Rule::ArgRemoved => "inputs and outputs may not be removed",
            Rule::ArgsReordered => {
                "inputs and outputs may not be reordered: graphs connect them by position"
            }
            Rule::ArgRetyped => {
                "an input's or output's type may not change, except to an attr whose default is the old type"
            }
            Rule::OutputRenamed => {
                "an output may not be renamed: function bodies refer to outputs by name"
            }
            Rule::InputBecameRef => "an input may not become a reference (it may stop being one)",
            Rule::OutputLostRef => "an output may not stop being a reference (it may become one)",
        }
    }
}

impl fmt::Display for Rule {
    /// The rule's [`id`](Rule::id).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// What part of an op a [`Violation`] is about.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Subject {
    /// The op itself.
    Op,
    /// The attr of this name.
    Attr(String),
    /// The input of this name.
    Input(String),
    /// The output of this name.
    Output(String),
}

impl fmt::Display for Subject {
    /// `op`, `attr 'T'`, `input 'x'`, `output 'y'`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Subject::Op => f.write_str("op"),
            Subject::Attr(name) => write!(f, "attr '{name}'"),
            Subject::Input(name) => write!(f, "input '{name}'"),
            Subject::Output(name) => write!(f, "output '{name}'"),
        }
    }
}

/// One incompatible change: in which op, to which attr or arg, against
/// which rule, and what that part was and is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The op's name (the old version's).
    pub op: String,
    /// The attr, arg or op the change is to.
    pub subject: Subject,
    /// The rule it breaks.
    pub rule: Rule,
    /// The old version of the subject: an attr's spec (`T: {float} =
    /// DT_FLOAT`), an op's or a signature's summary, or `(none)`.
    pub old: String,
    /// The new version, likewise.
    pub new: String,
}

impl fmt::Display for Violation {
    /// Three lines: `Op: attr 'T' narrowed its allowed values: <why>`, then
    /// the old and the new version, indented.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} {}: {}\n  old: {}\n  new: {}",
            self.op,
            self.subject,
            self.rule.what(),
            self.rule.explanation(),
            self.old,
            self.new
        )
    }
}

const NONE: &str = "(none)";

/// Checks that `new` is a backwards-compatible version of `old`: every
/// violation, empty when compatible. The op's name first, then the old
/// op's attrs in order, the added attrs, the inputs and the outputs.
/// Documentation, flags, deprecation and full types are not compared:
/// changing them breaks no graph (TensorFlow compares none of them either).
pub fn check(old: &OpDef, new: &OpDef) -> Vec<Violation> {
    let mut out = Vec::new();
    let violation = |subject: Subject, rule: Rule, old_text: String, new_text: String| Violation {
        op: old.name.clone(),
        subject,
        rule,
        old: old_text,
        new: new_text,
    };
    if old.name != new.name {
        out.push(violation(
            Subject::Op,
            Rule::OpRemoved,
            summary(old),
            summary(new),
        ));
    }

    for old_attr in &old.attrs {
        let subject = || Subject::Attr(old_attr.name.clone());
        let Some(new_attr) = new.attr(&old_attr.name) else {
            out.push(violation(
                subject(),
                Rule::AttrRemoved,
                old_attr.to_spec(),
                NONE.into(),
            ));
            continue;
        };
        let mut broken = |rule| {
            out.push(violation(
                subject(),
                rule,
                old_attr.to_spec(),
                new_attr.to_spec(),
            ))
        };
        if old_attr.ty != new_attr.ty {
            // Nothing else about the attr compares across types.
            broken(Rule::AttrTypeChanged);
            continue;
        }
        if more_restrictive(old_attr, new_attr) {
            broken(Rule::AllowedValuesNarrowed);
        }
        if higher_minimum(old_attr, new_attr) {
            broken(Rule::MinimumRaised);
        }
        match (&old_attr.default_value, &new_attr.default_value) {
            (Some(_), None) => broken(Rule::DefaultRemoved),
            (Some(a), Some(b)) if !same_value(a, b) => broken(Rule::DefaultChanged),
            _ => {}
        }
    }
    for new_attr in &new.attrs {
        if old.attr(&new_attr.name).is_none() && new_attr.default_value.is_none() {
            out.push(violation(
                Subject::Attr(new_attr.name.clone()),
                Rule::AttrAddedWithoutDefault,
                NONE.into(),
                new_attr.to_spec(),
            ));
        }
    }

    let sigs = Signatures { old, new };
    sigs.compare(Direction::Input, &mut out);
    sigs.compare(Direction::Output, &mut out);
    out
}

/// Checks every op of `old` against the op of the same name in `new`: an op
/// missing from `new` is [`Rule::OpRemoved`]; ops only in `new` are
/// compatible additions. Violations come in `old`'s order. (Names are
/// unique in an op registry; should `new` repeat one, its first op of
/// that name is the one compared.)
pub fn check_op_lists(old: &[OpDef], new: &[OpDef]) -> Vec<Violation> {
    let mut by_name: HashMap<&str, &OpDef> = HashMap::new();
    for op in new {
        by_name.entry(op.name.as_str()).or_insert(op);
    }
    let mut out = Vec::new();
    for old_op in old {
        match by_name.get(old_op.name.as_str()) {
            Some(new_op) => out.extend(check(old_op, new_op)),
            None => out.push(Violation {
                op: old_op.name.clone(),
                subject: Subject::Op,
                rule: Rule::OpRemoved,
                old: summary(old_op),
                new: NONE.into(),
            }),
        }
    }
    out
}

/// `Name(x: T, n: N * int32) -> (y: T)`, with the attrs after a `;`.
fn summary(op: &OpDef) -> String {
    let args = |args: &[ArgDef]| {
        args.iter()
            .map(ArgDef::to_spec)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut s = format!(
        "{}({}) -> ({})",
        op.name,
        args(&op.inputs),
        args(&op.outputs)
    );
    if !op.attrs.is_empty() {
        let attrs: Vec<String> = op.attrs.iter().map(AttrDef::to_spec).collect();
        s.push_str("; ");
        s.push_str(&attrs.join("; "));
    }
    s
}

/// TensorFlow's `AreAttrValuesEqual`, as the values' text: the same text is
/// the same value (a NaN equals a NaN, -0 differs from 0, as their
/// serialized bytes do in TensorFlow).
fn same_value(a: &AttrValue, b: &AttrValue) -> bool {
    attr_value_text(a) == attr_value_text(b)
}

/// TensorFlow's `MoreRestrictive`: the new attr allows values the old did
/// not constrain, or drops some the old allowed.
fn more_restrictive(old: &AttrDef, new: &AttrDef) -> bool {
    let Some(new_allowed) = &new.allowed_values else {
        return false;
    };
    let Some(old_allowed) = &old.allowed_values else {
        return true;
    };
    fn subset<T: PartialEq>(sub: &[T], sup: &[T]) -> bool {
        sub.iter().all(|x| sup.contains(x))
    }
    match (old_allowed, new_allowed) {
        (ListValue::Type(a), ListValue::Type(b)) => !subset(a, b),
        (ListValue::String(a), ListValue::String(b)) => !subset(a, b),
        // Allowed values of another kind than before: the old ones are
        // gone, unless there were none.
        (a, _) => !a.is_empty(),
    }
}

/// TensorFlow's `HigherMinimum`.
fn higher_minimum(old: &AttrDef, new: &AttrDef) -> bool {
    match (old.minimum, new.minimum) {
        (_, None) => false,
        (None, Some(_)) => true,
        (Some(a), Some(b)) => b > a,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Input,
    Output,
}

/// One tensor of a signature: the arg it belongs to, its type as
/// TensorFlow's `ComputeArgSignature` writes it (`int32`, `T`, `N * T`),
/// and whether it is a reference.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Tensor {
    arg: String,
    ty: String,
    is_ref: bool,
}

impl fmt::Display for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_ref {
            write!(f, "{}: Ref({})", self.arg, self.ty)
        } else {
            write!(f, "{}: {}", self.arg, self.ty)
        }
    }
}

/// A list of more tensors than this, from an attr's default, is compared
/// as one entry (`1000000 * int32`) instead of one per tensor.
const MAX_EXPANDED: i64 = 1024;

struct Signatures<'a> {
    old: &'a OpDef,
    new: &'a OpDef,
}

impl Signatures<'_> {
    /// TensorFlow's `ComputeArgSignature`: the tensors of `args` (of either
    /// version), where an attr both versions have stays symbolic and an attr
    /// only the new version has is replaced by its default (so that an arg
    /// which became polymorphic or a list compares by what old graphs get).
    fn signature(&self, args: &[ArgDef]) -> Vec<Tensor> {
        // The default of an attr the old version lacks, if the new one gives it.
        let added_default = |name: &str| -> Option<&AttrValue> {
            if self.old.attr(name).is_some() {
                return None;
            }
            self.new.attr(name)?.default_value.as_ref()
        };
        let mut out = Vec::new();
        for arg in args {
            let tensor = |ty: String| Tensor {
                arg: arg.name.clone(),
                ty,
                is_ref: arg.is_ref,
            };
            if let ArgType::ListAttr(list) = &arg.ty {
                match added_default(list) {
                    Some(AttrValue::List(ListValue::Type(types))) => {
                        out.extend(types.iter().map(|t| tensor(t.spec_name().to_owned())))
                    }
                    Some(AttrValue::List(l)) if l.is_empty() => {}
                    _ => out.push(tensor(list.clone())),
                }
                continue;
            }
            let ty = match &arg.ty {
                ArgType::Fixed(t) => t.spec_name().to_owned(),
                ArgType::Attr(a) => match added_default(a) {
                    Some(AttrValue::Type(t)) => t.spec_name().to_owned(),
                    _ => a.clone(),
                },
                ArgType::ListAttr(_) => unreachable!("handled above"),
            };
            let Some(n) = &arg.number_attr else {
                out.push(tensor(ty));
                continue;
            };
            match added_default(n) {
                Some(AttrValue::Int(count)) if *count <= MAX_EXPANDED => {
                    out.extend((0..*count).map(|_| tensor(ty.clone())))
                }
                Some(AttrValue::Int(count)) => out.push(tensor(format!("{count} * {ty}"))),
                _ => out.push(tensor(format!("{n} * {ty}"))),
            }
        }
        out
    }

    /// Compares the inputs or the outputs of the two versions, pushing at
    /// most one violation for the signature and one per reference change.
    fn compare(&self, direction: Direction, out: &mut Vec<Violation>) {
        let (old_args, new_args) = match direction {
            Direction::Input => (&self.old.inputs, &self.new.inputs),
            Direction::Output => (&self.old.outputs, &self.new.outputs),
        };
        let old_sig = self.signature(old_args);
        let new_sig = self.signature(new_args);
        let subject = |name: &str| match direction {
            Direction::Input => Subject::Input(name.to_owned()),
            Direction::Output => Subject::Output(name.to_owned()),
        };
        let show = |sig: &[Tensor]| {
            if sig.is_empty() {
                NONE.to_owned()
            } else {
                sig.iter()
                    .map(Tensor::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        };
        let violation = |name: &str, rule: Rule| Violation {
            op: self.old.name.clone(),
            subject: subject(name),
            rule,
            old: show(&old_sig),
            new: show(&new_sig),
        };
        // Inputs compare by type alone (graphs connect them by position);
        // outputs by name too (function bodies name them).
        let key = |t: &Tensor| match direction {
            Direction::Input => (String::new(), t.ty.clone()),
            Direction::Output => (t.arg.clone(), t.ty.clone()),
        };
        let old_keys: Vec<_> = old_sig.iter().map(key).collect();
        let new_keys: Vec<_> = new_sig.iter().map(key).collect();
        if old_keys != new_keys {
            let (name, rule) = classify(direction, &old_sig, &new_sig, &old_keys, &new_keys);
            out.push(violation(&name, rule));
            return;
        }
        for (a, b) in old_sig.iter().zip(&new_sig) {
            match direction {
                Direction::Input if !a.is_ref && b.is_ref => {
                    out.push(violation(&b.arg, Rule::InputBecameRef));
                }
                Direction::Output if a.is_ref && !b.is_ref => {
                    out.push(violation(&a.arg, Rule::OutputLostRef));
                }
                _ => {}
            }
        }
        if direction == Direction::Input {
            // The same types in the same order, but the inputs both versions
            // name must also keep their order (stricter than TensorFlow).
            let names = |args: &[ArgDef], other: &[ArgDef]| -> Vec<String> {
                args.iter()
                    .filter(|a| other.iter().any(|o| o.name == a.name))
                    .map(|a| a.name.clone())
                    .collect()
            };
            let (old_order, new_order) = (names(old_args, new_args), names(new_args, old_args));
            if let Some((moved, _)) = old_order.iter().zip(&new_order).find(|(a, b)| a != b) {
                out.push(violation(moved, Rule::ArgsReordered));
            }
        }
    }
}

/// Names the arg and the rule for two signatures that differ: an insertion,
/// a deletion, a permutation, a renamed output, or else a change of type,
/// at the first tensor that differs.
fn classify<K: Ord + Clone>(
    direction: Direction,
    old: &[Tensor],
    new: &[Tensor],
    old_keys: &[K],
    new_keys: &[K],
) -> (String, Rule) {
    let first = old_keys
        .iter()
        .zip(new_keys)
        .position(|(a, b)| a != b)
        .unwrap_or(old_keys.len().min(new_keys.len()));
    // `longer` with `extra` keys left out at `first` is `shorter`.
    let spliced = |longer: &[K], shorter: &[K]| {
        let extra = longer.len() - shorter.len();
        longer[..first] == shorter[..first] && longer[first + extra..] == shorter[first..]
    };
    if new_keys.len() > old_keys.len() && spliced(new_keys, old_keys) {
        return (new[first].arg.clone(), Rule::ArgAdded);
    }
    if old_keys.len() > new_keys.len() && spliced(old_keys, new_keys) {
        return (old[first].arg.clone(), Rule::ArgRemoved);
    }
    let sorted = |keys: &[K]| {
        let mut keys = keys.to_vec();
        keys.sort();
        keys
    };
    if old_keys.len() == new_keys.len() && sorted(old_keys) == sorted(new_keys) {
        return (old[first].arg.clone(), Rule::ArgsReordered);
    }
    let same_types = old.len() == new.len() && old.iter().zip(new).all(|(a, b)| a.ty == b.ty);
    if direction == Direction::Output && same_types {
        return (old[first].arg.clone(), Rule::OutputRenamed);
    }
    let at = old.get(first).or(new.get(first)).map(|t| t.arg.clone());
    (at.unwrap_or_default(), Rule::ArgRetyped)
}
