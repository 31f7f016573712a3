//! Node and tensor names, by TensorFlow's rules: which names are valid,
//! how unique names are made (`Add`, `Add_1`, ...), and [`TensorName`],
//! the `node:k` text of one output.

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasher, RandomState};
use std::str::FromStr;

use hashbrown::HashTable;

use op_core::error::quoted;
use op_core::{Error, Result};

/// One output named as TensorFlow names tensors: `node:k`, written `node`
/// for output 0. What fetches and feeds are written as.
///
/// ```
/// use op_graph::TensorName;
/// let t: TensorName = "layer1/MatMul:1".parse()?;
/// assert_eq!((t.node.as_str(), t.index), ("layer1/MatMul", 1));
/// assert_eq!("x:0".parse::<TensorName>()?.to_string(), "x");
/// assert!("x:first".parse::<TensorName>().is_err());
/// # Ok::<(), op_core::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TensorName {
    /// The node's name.
    pub node: String,
    /// Which of its outputs.
    pub index: usize,
}

impl fmt::Display for TensorName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.index {
            0 => f.write_str(&self.node),
            k => write!(f, "{}:{k}", self.node),
        }
    }
}

impl FromStr for TensorName {
    type Err = Error;

    /// Parses `node` or `node:k` (`k` a decimal number).
    fn from_str(text: &str) -> Result<TensorName> {
        let invalid = || {
            Error::invalid_argument(format!(
                "{} is not a tensor name: write `node` or `node:k`, k an output index",
                quoted(text)
            ))
        };
        let (node, index) = match text.rsplit_once(':') {
            None => (text, 0),
            Some((node, k)) => {
                if k.is_empty() || !k.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(invalid());
                }
                (node, k.parse().map_err(|_| invalid())?)
            }
        };
        if node.is_empty() {
            return Err(invalid());
        }
        Ok(TensorName {
            node: node.to_owned(),
            index,
        })
    }
}

/// Whether `name` is a valid node name, by the rule of TensorFlow's
/// importer (`IsValidNodeName`): a letter, digit or `.` first, then
/// letters, digits and `-./_`, in pieces joined by `>` (each piece after a
/// `>` starting again with a letter, digit or `.`).
///
/// ```
/// use op_graph::is_valid_node_name;
/// assert!(is_valid_node_name("layer1/MatMul_1"));
/// assert!(is_valid_node_name("2"));
/// assert!(is_valid_node_name("Examples>ZeroOut"));
/// assert!(!is_valid_node_name("_internal"));
/// assert!(!is_valid_node_name("a b"));
/// assert!(!is_valid_node_name(""));
/// ```
pub fn is_valid_node_name(name: &str) -> bool {
    let first = |b: u8| b.is_ascii_alphanumeric() || b == b'.';
    let rest = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'/' | b'_');
    name.split('>').all(|piece| {
        let bytes = piece.as_bytes();
        !bytes.is_empty() && first(bytes[0]) && bytes[1..].iter().all(|&b| rest(b))
    })
}

/// Whether `scope` is a valid name scope (TensorFlow's
/// `_VALID_SCOPE_NAME_REGEX`): letters, digits and `_.-/>`.
pub(crate) fn is_valid_scope_name(scope: &str) -> bool {
    scope
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b'/' | b'>'))
}

/// An `InvalidArgument` error unless `name` is a valid node name.
pub(crate) fn check_node_name(name: &str) -> Result<()> {
    if is_valid_node_name(name) {
        return Ok(());
    }
    Err(Error::invalid_argument(format!(
        "{} is not a valid node name: it must start with a letter, digit or '.', \
         and hold only letters, digits and '-./_' (and '>' followed by a letter, digit or '.')",
        quoted(name)
    )))
}

/// TensorFlow's `Graph.unique_name`: `name` the first time it is asked
/// for, then `name_1`, `name_2`, ..., skipping any composed name already in
/// use. Names count ignoring case; the result keeps `name`'s case.
pub(crate) fn unique_name(names_in_use: &mut HashMap<String, usize>, name: &str) -> String {
    let mut key = name.to_lowercase();
    let mut i = names_in_use.get(&key).copied().unwrap_or(0);
    names_in_use.insert(key.clone(), i + 1);
    if i == 0 {
        return name.to_owned();
    }
    let base = key;
    key = format!("{base}_{i}");
    while names_in_use.contains_key(&key) {
        i += 1;
        key = format!("{base}_{i}");
    }
    // The composed name is in use too, for a later `name_1` request.
    names_in_use.insert(key, 1);
    format!("{name}_{i}")
}

/// Records that a node was given `name` exactly (not through
/// [`unique_name`]), so that names made later skip it.
pub(crate) fn mark_used(names_in_use: &mut HashMap<String, usize>, name: &str) {
    names_in_use.entry(name.to_lowercase()).or_insert(1);
}

/// A graph's nodes by name: a hash table of node indices, the names
/// themselves read from the nodes (`name_of`), so that a graph holds each
/// name once.
#[derive(Default)]
pub(crate) struct NameIndex {
    table: HashTable<u32>,
    hasher: RandomState,
}

impl NameIndex {
    /// The index of the node named `name`, if any.
    pub(crate) fn find<'a>(&self, name: &str, name_of: impl Fn(u32) -> &'a str) -> Option<u32> {
        let hash = self.hasher.hash_one(name);
        self.table.find(hash, |&i| name_of(i) == name).copied()
    }

    /// Enters node `index`, whose name no other node has.
    pub(crate) fn insert<'a>(&mut self, index: u32, name_of: impl Fn(u32) -> &'a str) {
        let hasher = &self.hasher;
        let hash = hasher.hash_one(name_of(index));
        self.table
            .insert_unique(hash, index, |&i| hasher.hash_one(name_of(i)));
    }

    /// Makes room for `additional` more nodes.
    pub(crate) fn reserve<'a>(&mut self, additional: usize, name_of: impl Fn(u32) -> &'a str) {
        let hasher = &self.hasher;
        self.table
            .reserve(additional, |&i| hasher.hash_one(name_of(i)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_names_count_up_and_skip_composed_names_in_use() {
        let mut used = HashMap::new();
        assert_eq!(unique_name(&mut used, "Add"), "Add");
        assert_eq!(unique_name(&mut used, "Add"), "Add_1");
        assert_eq!(unique_name(&mut used, "add"), "add_2");
        assert_eq!(unique_name(&mut used, "x_1"), "x_1");
        assert_eq!(unique_name(&mut used, "x"), "x");
        // x_1 is taken: the next x skips it.
        assert_eq!(unique_name(&mut used, "x"), "x_2");
        mark_used(&mut used, "y");
        assert_eq!(unique_name(&mut used, "y"), "y_1");
    }

    #[test]
    fn tensor_names_parse_and_print_as_tensorflow_writes_them() {
        let t: TensorName = "a/b:12".parse().unwrap();
        assert_eq!(t.to_string(), "a/b:12");
        assert_eq!("a".parse::<TensorName>().unwrap().index, 0);
        for bad in ["", ":1", "a:", "a:-1", "a:1x", "a:99999999999999999999999"] {
            assert!(bad.parse::<TensorName>().is_err(), "{bad:?}");
        }
    }
}
