//! The names and docs Python sees of our ops, the same in every host's
//! generated module: `ZeroOut` is `zero_out`, an arg `in` is `in_`, and a
//! docstring is laid out as TensorFlow's own wrappers lay theirs out.

use op_core::OpDef;

/// Python's keywords, in `keyword.kwlist`'s order: an arg or attr of
/// one of these names is `name_` in Python.
pub const PYTHON_KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// The Python name of an arg or attr: its own, or with `_` after a Python
/// keyword (`in` is `in_`), as TensorFlow's wrappers name them.
///
/// ```
/// assert_eq!(op_host::names::python_arg("in"), "in_");
/// assert_eq!(op_host::names::python_arg("values"), "values");
/// ```
pub fn python_arg(name: &str) -> String {
    if PYTHON_KEYWORDS.contains(&name) {
        format!("{name}_")
    } else {
        name.to_owned()
    }
}

/// The Python name of op `name`: TensorFlow's wrapper generator's rule
/// (`GenerateLowerCaseOpName`), which every host's module follows so that
/// an op has one name in Python: `>` becomes `_`, and `_` goes before an
/// upper-case letter that follows a lower-case one or precedes one.
///
/// ```
/// use op_host::names::python_name;
/// assert_eq!(python_name("ZeroOut"), "zero_out");
/// assert_eq!(python_name("Examples>MultiplexDense"), "examples_multiplex_dense");
/// assert_eq!(python_name("MatMulV2"), "mat_mul_v2");
/// assert_eq!(python_name("CTCLoss"), "ctc_loss");
/// ```
pub fn python_name(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::with_capacity(name.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c == '>' {
            out.push('_');
            continue;
        }
        if c.is_ascii_uppercase() && i > 0 {
            let after_lower = chars[i - 1].is_ascii_lowercase();
            let before_lower = chars.get(i + 1).is_some_and(char::is_ascii_lowercase);
            if (after_lower || before_lower) && chars[i - 1] != '>' {
                out.push('_');
            }
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// The attrs a caller never passes because the inputs give them (their
/// type attrs, list lengths and `list(type)` attrs).
///
/// ```
/// op_kernels::link();
/// let def = op_core::Registry::global().op("ZeroOutPolymorphic")?.def();
/// assert_eq!(op_host::names::inferred_attrs(def), ["T"]);
/// # Ok::<(), op_core::Error>(())
/// ```
pub fn inferred_attrs(def: &OpDef) -> Vec<&str> {
    def.inputs
        .iter()
        .flat_map(|a| [a.type_attr(), a.type_list_attr(), a.number_attr.as_deref()])
        .flatten()
        .collect()
}

/// The op's docs as a Python docstring, in the layout of TensorFlow's own
/// wrappers: summary, description, `Args:` (inputs, then attrs without a
/// value to infer), `Returns:`.
///
/// ```
/// op_kernels::link();
/// let def = op_core::Registry::global().op("ZeroOut")?.def();
/// let doc = op_host::names::docstring(def);
/// assert!(doc.starts_with("Zeroes every element but the first."), "{doc}");
/// assert!(doc.contains("\nArgs:\n  to_zero: A `Tensor`"), "{doc}");
/// # Ok::<(), op_core::Error>(())
/// ```
pub fn docstring(def: &OpDef) -> String {
    let mut doc = String::new();
    doc.push_str(if def.summary.is_empty() {
        &def.name
    } else {
        &def.summary
    });
    doc.push('\n');
    if !def.description.is_empty() {
        doc.push('\n');
        doc.push_str(&def.description);
        doc.push('\n');
    }
    let inferred = inferred_attrs(def);
    let args: Vec<(String, &str)> = def
        .inputs
        .iter()
        .map(|a| {
            let name = python_arg(&a.name);
            (format!("{name}: A `Tensor`"), a.description.as_str())
        })
        .chain(
            def.attrs
                .iter()
                .filter(|a| !inferred.contains(&a.name.as_str()))
                .map(|a| {
                    let optional = if a.default_value.is_some() {
                        ", optional"
                    } else {
                        ""
                    };
                    (
                        format!("{}: `{}`{optional}", python_arg(&a.name), a.ty),
                        a.description.as_str(),
                    )
                }),
        )
        .collect();
    if !args.is_empty() {
        doc.push_str("\nArgs:\n");
        for (head, description) in args {
            push_item(&mut doc, &head, description);
        }
    }
    if !def.outputs.is_empty() {
        doc.push_str("\nReturns:\n");
        for output in &def.outputs {
            push_item(
                &mut doc,
                &format!("{}: A `Tensor`", output.name),
                &output.description,
            );
        }
    }
    doc
}

fn push_item(doc: &mut String, head: &str, description: &str) {
    doc.push_str("  ");
    doc.push_str(head);
    if !description.is_empty() {
        doc.push_str(". ");
        doc.push_str(&description.replace('\n', "\n    "));
    } else {
        doc.push('.');
    }
    doc.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_keyword_list_is_sorted_as_python_lists_it() {
        // Python's keyword.kwlist order: capitalized first, then a-z.
        let mut sorted = PYTHON_KEYWORDS.to_vec();
        sorted.sort();
        assert_eq!(sorted, PYTHON_KEYWORDS);
        assert_eq!(PYTHON_KEYWORDS.len(), 35);
    }
}
