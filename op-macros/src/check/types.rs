//! `types(...)` resolved into the type combinations a kernel is
//! registered for.

use std::collections::BTreeSet;

use op_spec::DType;
use proc_macro2::Span;

use super::attr::unknown_type;
use super::error;
use crate::dtypes;
use crate::parse::TypesArg;

/// The attrs a kernel is constrained on, and its type combinations.
#[derive(Clone, Debug)]
pub struct TypeCombos {
    /// The constrained attrs, in the order of the generic parameters.
    pub attrs: Vec<(String, Span)>,
    /// One dtype per attr in each combination, with the token that named it.
    pub combos: Vec<Vec<(DType, Span)>>,
    /// Per attr: whether the author named it (`T = f32`) rather than
    /// leaving it implied (`f32`).
    pub named: Vec<bool>,
}

impl TypeCombos {
    /// The dtypes of each registration: one per combination, or a single
    /// one with none when nothing is constrained.
    pub fn each(&self) -> Vec<Vec<DType>> {
        if self.combos.is_empty() {
            return vec![Vec::new()];
        }
        self.combos
            .iter()
            .map(|c| c.iter().map(|(d, _)| *d).collect())
            .collect()
    }

    /// `(attr, dtype)` for each constrained attr, in one combination.
    pub fn constraints(&self, combo: &[DType]) -> Vec<(&str, DType)> {
        self.attrs
            .iter()
            .map(|(attr, _)| attr.as_str())
            .zip(combo.iter().copied())
            .collect()
    }

    pub fn none() -> Self {
        TypeCombos {
            attrs: Vec::new(),
            combos: Vec::new(),
            named: Vec::new(),
        }
    }
}

/// Resolves `types(...)` into combinations. Unnamed entries are for
/// `default_attr` (when there is one).
pub fn type_combos(args: &[TypesArg], default_attr: Option<&str>) -> darling::Result<TypeCombos> {
    let mut errors = darling::Error::accumulator();
    let mut attrs: Option<Vec<(String, Span)>> = None;
    let mut combos: Vec<Vec<(DType, Span)>> = Vec::new();
    let mut seen = BTreeSet::new();
    let mut named = Vec::new();
    for arg in args {
        let mut names: Vec<(String, Span)> = Vec::new();
        let mut sets: Vec<Vec<(DType, Span)>> = Vec::new();
        let mut named_here: Vec<bool> = Vec::new();
        for entry in &arg.entries {
            let attr = match (&entry.attr, default_attr) {
                (Some(a), _) => a.to_string(),
                (None, Some(d)) => d.to_owned(),
                (None, None) => {
                    errors.push(error(
                        entry.span,
                        "say which type attr these types are for, as in `types(T = [f32, i32])`",
                    ));
                    continue;
                }
            };
            let mut set = Vec::new();
            for name in &entry.names {
                match dtypes::expand_type_name(&name.name) {
                    Some(dtypes) => set.extend(dtypes.into_iter().map(|d| (d, name.span))),
                    None => errors.push(unknown_type(&name.name, name.span, true)),
                }
            }
            match names.iter().position(|(n, _)| *n == attr) {
                Some(i) => sets[i].extend(set),
                None => {
                    names.push((attr, entry.span));
                    sets.push(set);
                    named_here.push(entry.attr.is_some());
                }
            }
        }
        // Every `types(...)` must constrain the same attrs, in the same order.
        match &attrs {
            None => {
                attrs = Some(names.clone());
                named = named_here;
            }
            Some(first) => {
                let same = first.len() == names.len()
                    && names.iter().all(|(n, _)| first.iter().any(|(f, _)| f == n));
                if !same {
                    let first: Vec<&str> = first.iter().map(|(n, _)| n.as_str()).collect();
                    errors.push(error(
                        arg.span,
                        format!(
                            "every `types(...)` must constrain the same attrs; the first one constrains {}",
                            first.join(", ")
                        ),
                    ));
                    continue;
                }
                // Reorder this arg's sets into the first's attr order.
                let order: Vec<usize> = first
                    .iter()
                    .map(|(f, _)| names.iter().position(|(n, _)| n == f).unwrap_or(0))
                    .collect();
                sets = order.iter().map(|&i| sets[i].clone()).collect();
            }
        }
        // The cross product of this arg's sets.
        let mut product: Vec<Vec<(DType, Span)>> = vec![Vec::new()];
        for set in &sets {
            product = product
                .into_iter()
                .flat_map(|prefix| {
                    set.iter().map(move |item| {
                        let mut combo = prefix.clone();
                        combo.push(*item);
                        combo
                    })
                })
                .collect();
        }
        for combo in product {
            let key: Vec<DType> = combo.iter().map(|(d, _)| *d).collect();
            if seen.insert(key.clone()) {
                combos.push(combo);
            } else {
                let span = combo.last().map_or(arg.span, |(_, s)| *s);
                let names: Vec<&str> = key.iter().map(|d| d.spec_name()).collect();
                errors.push(error(
                    span,
                    format!(
                        "the type combination ({}) is listed twice: remove one",
                        names.join(", ")
                    ),
                ));
            }
        }
    }
    errors.finish_with(TypeCombos {
        attrs: attrs.unwrap_or_default(),
        combos,
        named,
    })
}
