//! A custom op's options: the flexbuffer map a converter writes into an
//! operator's `custom_options`, decoded once into owned, typed values.
//!
//! TensorFlow Lite hands a custom op's `init` the raw bytes and leaves the
//! decoding to the kernel (`flexbuffers::GetRoot(buffer).AsMap()`), where a
//! wrong type reads as 0. Here the map is decoded once, up front, into
//! [`CustomOptions`], and a kernel asks for an option by name and Rust type
//! ([`InitContext::option`](super::InitContext::option)); a missing option
//! or one of another type is an error that names the option, what it holds
//! and what was expected.
//!
//! Decoding is defensive: the `flexbuffers` reader indexes its buffer
//! without checking every offset and can panic on malformed bytes, so the
//! decoder runs under `catch_unwind`, bounds the depth of nesting and the
//! number of values (a buffer whose vectors all point at one shared vector
//! would otherwise decode to a size exponential in its length), and turns
//! every failure into an `InvalidArgument`.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};

use flexbuffers::{FlexBufferType, Reader};
use op_core::error::quoted;
use op_core::op_spec::suggest::closest;
use op_core::{Error, Result};

/// One decoded option value.
#[derive(Clone, Debug, PartialEq)]
pub enum OptionValue {
    /// A flexbuffer `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// A signed integer (any width in the buffer).
    Int(i64),
    /// An unsigned integer (any width in the buffer).
    UInt(u64),
    /// A float (32 or 64 bits in the buffer).
    Float(f64),
    /// A string or a key.
    String(String),
    /// A blob of bytes.
    Blob(Vec<u8>),
    /// A vector, typed or not, with its elements decoded.
    Vector(Vec<OptionValue>),
    /// A nested map, its entries sorted by key.
    Map(Vec<(String, OptionValue)>),
}

impl OptionValue {
    /// The kind of value, for messages: "an int", "a string".
    pub fn kind(&self) -> &'static str {
        match self {
            OptionValue::Null => "null",
            OptionValue::Bool(_) => "a bool",
            OptionValue::Int(_) => "an int",
            OptionValue::UInt(_) => "an unsigned int",
            OptionValue::Float(_) => "a float",
            OptionValue::String(_) => "a string",
            OptionValue::Blob(_) => "a blob",
            OptionValue::Vector(_) => "a vector",
            OptionValue::Map(_) => "a map",
        }
    }
}

impl fmt::Display for OptionValue {
    /// The kind and, for scalars and strings, the value: `an int (5)`,
    /// `a string ('relu')`, `a vector of 3 values`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = self.kind();
        match self {
            OptionValue::Null => f.write_str(kind),
            OptionValue::Bool(v) => write!(f, "{kind} ({v})"),
            OptionValue::Int(v) => write!(f, "{kind} ({v})"),
            OptionValue::UInt(v) => write!(f, "{kind} ({v})"),
            OptionValue::Float(v) => write!(f, "{kind} ({v})"),
            OptionValue::String(v) => write!(f, "{kind} ({})", quoted(v)),
            OptionValue::Blob(v) => write!(f, "{kind} of {} bytes", v.len()),
            OptionValue::Vector(v) => write!(f, "{kind} of {} values", v.len()),
            OptionValue::Map(v) => write!(f, "{kind} of {} entries", v.len()),
        }
    }
}

/// A Rust type an option can be read as.
///
/// Conversions are exact or refused: an int option reads as `i32` only if
/// it fits, as `f32` only if the float holds it exactly; a float never reads
/// as an int; a vector reads as `Vec<T>` when every element reads as `T`.
pub trait FromOption: Sized {
    /// What the type expects, for messages: `"a float (f32)"`.
    const EXPECTED: &'static str;

    /// The value as `Self`, or `None` when it is of another kind or out of
    /// range.
    fn from_option(value: &OptionValue) -> Option<Self>;
}

macro_rules! integer_options {
    ($($t:ty),* $(,)?) => {$(
        impl FromOption for $t {
            const EXPECTED: &'static str = concat!("an integer (", stringify!($t), ")");
            fn from_option(value: &OptionValue) -> Option<$t> {
                match *value {
                    OptionValue::Int(v) => <$t>::try_from(v).ok(),
                    OptionValue::UInt(v) => <$t>::try_from(v).ok(),
                    _ => None,
                }
            }
        }
    )*};
}

integer_options!(i8, i16, i32, i64, u8, u16, u32, u64, usize);

impl FromOption for f64 {
    const EXPECTED: &'static str = "a float (f64)";
    fn from_option(value: &OptionValue) -> Option<f64> {
        match *value {
            OptionValue::Float(v) => Some(v),
            // An integer written where a float is meant (`"alpha": 1`)
            // reads when the float holds it exactly.
            OptionValue::Int(v) => Some(v as f64).filter(|f| *f as i64 == v),
            OptionValue::UInt(v) => Some(v as f64).filter(|f| *f as u64 == v),
            _ => None,
        }
    }
}

impl FromOption for f32 {
    const EXPECTED: &'static str = "a float (f32)";
    fn from_option(value: &OptionValue) -> Option<f32> {
        let wide = f64::from_option(value)?;
        let narrow = wide as f32;
        // Rounding to f32 is expected of a float; overflowing to infinity is not.
        (narrow.is_finite() || !wide.is_finite()).then_some(narrow)
    }
}

impl FromOption for bool {
    const EXPECTED: &'static str = "a bool";
    fn from_option(value: &OptionValue) -> Option<bool> {
        match *value {
            OptionValue::Bool(v) => Some(v),
            _ => None,
        }
    }
}

impl FromOption for String {
    const EXPECTED: &'static str = "a string";
    fn from_option(value: &OptionValue) -> Option<String> {
        match value {
            OptionValue::String(v) => Some(v.clone()),
            _ => None,
        }
    }
}

impl<T: FromOption> FromOption for Vec<T> {
    const EXPECTED: &'static str = "a vector";
    fn from_option(value: &OptionValue) -> Option<Vec<T>> {
        match value {
            OptionValue::Vector(items) => items.iter().map(T::from_option).collect(),
            _ => None,
        }
    }
}

impl FromOption for OptionValue {
    const EXPECTED: &'static str = "any value";
    fn from_option(value: &OptionValue) -> Option<OptionValue> {
        Some(value.clone())
    }
}

/// A custom op's options, decoded: the entries of the flexbuffer map,
/// sorted by key.
///
/// ```
/// use op_lite::kernel::CustomOptions;
///
/// let mut builder = flexbuffers::Builder::default();
/// let mut map = builder.start_map();
/// map.push("alpha", 0.5f32);
/// map.push("mode", "same");
/// map.end_map();
///
/// let options = CustomOptions::decode(builder.view())?;
/// assert_eq!(options.get::<f32>("alpha")?, 0.5);
/// assert_eq!(options.get::<String>("mode")?, "same");
/// let err = options.get::<i32>("alpha").unwrap_err();
/// assert_eq!(
///     err.message(),
///     "custom option 'alpha' is a float (0.5), expected an integer (i32)"
/// );
/// # Ok::<(), op_core::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CustomOptions {
    entries: Vec<(String, OptionValue)>,
}

/// The most nested vectors and maps a custom-options buffer may hold.
const MAX_DEPTH: usize = 32;

impl CustomOptions {
    /// Decodes `bytes`, a flexbuffer whose root is a map. Empty bytes are
    /// no options.
    ///
    /// Fails (`InvalidArgument`) when the bytes are not a flexbuffer, the
    /// root is not a map, a value cannot be read, or the buffer nests deeper
    /// than 32 levels or holds more values than its size can account for.
    pub fn decode(bytes: &[u8]) -> Result<CustomOptions> {
        if bytes.is_empty() {
            return Ok(CustomOptions::default());
        }
        let malformed = |what: String| {
            Error::invalid_argument(format!(
                "custom options ({} bytes) are not a valid flexbuffer map: {what}",
                bytes.len()
            ))
        };
        // Each value a well-formed buffer holds takes at least a byte of it;
        // the slack covers keys and small values shared by several entries.
        let mut budget = bytes.len().saturating_mul(4).saturating_add(64);
        let decoded = catch_unwind(AssertUnwindSafe(|| {
            let root = Reader::get_root(bytes).map_err(|e| e.to_string())?;
            if root.flexbuffer_type() != FlexBufferType::Map {
                return Err(format!(
                    "the root is a {:?}, not a map",
                    root.flexbuffer_type()
                ));
            }
            decode_value(&root, 0, &mut budget)
        }));
        match decoded {
            Ok(Ok(OptionValue::Map(entries))) => Ok(CustomOptions { entries }),
            Ok(Ok(other)) => Err(malformed(format!("the root is {}", other.kind()))),
            Ok(Err(what)) => Err(malformed(what)),
            Err(_) => Err(malformed("the reader found an offset out of bounds".into())),
        }
    }

    /// The option `name` as a `T`.
    ///
    /// Fails (`InvalidArgument`) when the option is missing (naming the
    /// options there are, and the closest name) or does not read as a `T`
    /// (naming what it holds and what was expected).
    pub fn get<T: FromOption>(&self, name: &str) -> Result<T> {
        let value = self.value(name).ok_or_else(|| self.missing(name))?;
        T::from_option(value).ok_or_else(|| {
            Error::invalid_argument(format!(
                "custom option {} is {value}, expected {}",
                quoted(name),
                T::EXPECTED
            ))
        })
    }

    /// The option `name` as a `T`, or `default` when the map does not have
    /// it. An option that is there but does not read as a `T` is still an
    /// error.
    pub fn get_or<T: FromOption>(&self, name: &str, default: T) -> Result<T> {
        match self.value(name) {
            None => Ok(default),
            Some(_) => self.get(name),
        }
    }

    /// The raw value of the option `name`.
    pub fn value(&self, name: &str) -> Option<&OptionValue> {
        self.entries
            .binary_search_by(|(key, _)| key.as_str().cmp(name))
            .ok()
            .map(|i| &self.entries[i].1)
    }

    /// Whether the map has an option `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.value(name).is_some()
    }

    /// The option names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(key, _)| key.as_str())
    }

    /// The number of options.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no options.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn missing(&self, name: &str) -> Error {
        let mut message = format!("custom option {} is missing", quoted(name));
        if self.entries.is_empty() {
            message.push_str(" (the node has no custom options)");
        } else {
            let names: Vec<String> = self.names().map(|n| quoted(n).to_string()).collect();
            message.push_str(&format!(" (the options are {})", names.join(", ")));
            if let Some(near) = closest(name, self.names()) {
                message.push_str(&format!("; did you mean {}?", quoted(near)));
            }
        }
        Error::invalid_argument(message)
    }
}

/// Decodes one value, recursively, spending one unit of `budget` per value.
fn decode_value(
    reader: &Reader<&[u8]>,
    depth: usize,
    budget: &mut usize,
) -> std::result::Result<OptionValue, String> {
    *budget = budget
        .checked_sub(1)
        .ok_or("it holds more values than its size allows")?;
    let text = |e: flexbuffers::ReaderError| e.to_string();
    let ty = reader.flexbuffer_type();
    Ok(match ty {
        FlexBufferType::Null => OptionValue::Null,
        FlexBufferType::Bool => OptionValue::Bool(reader.get_bool().map_err(text)?),
        FlexBufferType::Int | FlexBufferType::IndirectInt => {
            OptionValue::Int(reader.get_i64().map_err(text)?)
        }
        FlexBufferType::UInt | FlexBufferType::IndirectUInt => {
            OptionValue::UInt(reader.get_u64().map_err(text)?)
        }
        FlexBufferType::Float | FlexBufferType::IndirectFloat => {
            OptionValue::Float(reader.get_f64().map_err(text)?)
        }
        FlexBufferType::String => OptionValue::String(reader.get_str().map_err(text)?.into()),
        FlexBufferType::Key => OptionValue::String(reader.get_key().map_err(text)?.into()),
        FlexBufferType::Blob => OptionValue::Blob(reader.get_blob().map_err(text)?.0.to_vec()),
        _ if depth >= MAX_DEPTH => {
            return Err(format!("it nests more than {MAX_DEPTH} vectors and maps"));
        }
        FlexBufferType::Map => {
            let map = reader.get_map().map_err(text)?;
            let keys = map.keys_vector();
            // Not `with_capacity(map.len())`: the length is the file's word.
            let mut entries = Vec::new();
            for i in 0..map.len() {
                let key = keys.index(i).map_err(text)?;
                let key: String = key.get_key().map_err(text)?.into();
                let value = decode_value(&map.index(i).map_err(text)?, depth + 1, budget)?;
                entries.push((key, value));
            }
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            if let Some(pair) = entries.windows(2).find(|pair| pair[0].0 == pair[1].0) {
                return Err(format!("the key {} appears twice", quoted(&pair[0].0)));
            }
            OptionValue::Map(entries)
        }
        _ if ty.is_vector() => {
            let vector = reader.get_vector().map_err(text)?;
            let mut items = Vec::new();
            for i in 0..vector.len() {
                items.push(decode_value(
                    &vector.index(i).map_err(text)?,
                    depth + 1,
                    budget,
                )?);
            }
            OptionValue::Vector(items)
        }
        other => return Err(format!("values of type {other:?} are not supported")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn options(build: impl FnOnce(&mut flexbuffers::MapBuilder<'_>)) -> CustomOptions {
        let mut builder = flexbuffers::Builder::default();
        let mut map = builder.start_map();
        build(&mut map);
        map.end_map();
        CustomOptions::decode(builder.view()).unwrap()
    }

    #[test]
    fn every_kind_of_value_decodes() {
        let o = options(|m| {
            m.push("b", true);
            m.push("i", -3i32);
            m.push("u", 7u8);
            m.push("f", 1.5f64);
            m.push("s", "same");
            m.push("blob", flexbuffers::Blob(&[1u8, 2][..]));
            m.push("ints", &[1i64, 2, 3][..]);
            m.push("floats", &[0.5f32, 2.0][..]);
            m.push("null", ());
            let mut v = m.start_vector("mixed");
            v.push(1i8);
            v.push("x");
            v.end_vector();
            let mut inner = m.start_map("inner");
            inner.push("k", 2u16);
            inner.end_map();
        });
        assert_eq!(o.len(), 11);
        assert!(o.get::<bool>("b").unwrap());
        assert_eq!(o.get::<i32>("i").unwrap(), -3);
        assert_eq!(o.get::<u64>("u").unwrap(), 7);
        assert_eq!(o.get::<f32>("f").unwrap(), 1.5);
        assert_eq!(o.get::<String>("s").unwrap(), "same");
        assert_eq!(o.value("blob"), Some(&OptionValue::Blob(vec![1, 2])));
        assert_eq!(o.get::<Vec<i32>>("ints").unwrap(), [1, 2, 3]);
        assert_eq!(o.get::<Vec<f32>>("floats").unwrap(), [0.5, 2.0]);
        assert_eq!(o.value("null"), Some(&OptionValue::Null));
        assert_eq!(
            o.value("mixed"),
            Some(&OptionValue::Vector(vec![
                OptionValue::Int(1),
                OptionValue::String("x".into())
            ]))
        );
        assert_eq!(
            o.value("inner"),
            Some(&OptionValue::Map(vec![("k".into(), OptionValue::UInt(2))]))
        );
        assert_eq!(
            o.names().collect::<Vec<_>>(),
            [
                "b", "blob", "f", "floats", "i", "inner", "ints", "mixed", "null", "s", "u"
            ]
        );
    }

    #[test]
    fn conversions_are_exact_or_refused() {
        let o = options(|m| {
            m.push("big", 300i32);
            m.push("neg", -1i32);
            m.push("one", 1i32);
            m.push("huge", 1e300f64);
            m.push("half", 0.5f64);
        });
        assert_eq!(o.get::<i16>("big").unwrap(), 300);
        let err = o.get::<u8>("big").unwrap_err();
        assert_eq!(
            err.message(),
            "custom option 'big' is an int (300), expected an integer (u8)"
        );
        assert!(o.get::<u32>("neg").is_err());
        assert_eq!(o.get::<f32>("one").unwrap(), 1.0, "ints read as floats");
        assert!(o.get::<i32>("half").is_err(), "floats never read as ints");
        assert!(o.get::<f32>("huge").is_err(), "1e300 overflows f32");
        assert_eq!(o.get::<f64>("huge").unwrap(), 1e300);
        assert!(o.get::<bool>("one").is_err());
    }

    #[test]
    fn a_missing_option_names_the_options_there_are_and_the_closest() {
        let o = options(|m| {
            m.push("alpha", 1.0f32);
            m.push("beta", 2.0f32);
        });
        let err = o.get::<f32>("alpah").unwrap_err();
        assert_eq!(err.code(), op_core::Code::InvalidArgument);
        assert_eq!(
            err.message(),
            "custom option 'alpah' is missing (the options are 'alpha', 'beta'); did you mean 'alpha'?"
        );
        assert_eq!(o.get_or("gamma", 3.0f32).unwrap(), 3.0);
        assert_eq!(o.get_or("alpha", 3.0f32).unwrap(), 1.0);
        assert!(
            o.get_or("alpha", 3i32).is_err(),
            "present but of another type"
        );
        let none = CustomOptions::decode(&[]).unwrap();
        assert!(none.is_empty());
        assert_eq!(
            none.get::<f32>("alpha").unwrap_err().message(),
            "custom option 'alpha' is missing (the node has no custom options)"
        );
    }

    #[test]
    fn a_root_that_is_not_a_map_is_an_error() {
        let bytes = flexbuffers::singleton(5i32);
        let err = CustomOptions::decode(&bytes).unwrap_err();
        assert!(
            err.message().contains("the root is a Int, not a map"),
            "{err}"
        );
        let err = CustomOptions::decode(&[1, 2]).unwrap_err();
        assert!(
            err.message()
                .starts_with("custom options (2 bytes) are not a valid")
        );
    }

    proptest! {
        /// Garbage, and valid buffers with bytes flipped, give an error or
        /// options, never a panic that escapes.
        #[test]
        fn malformed_buffers_never_panic(
            bytes in proptest::collection::vec(any::<u8>(), 0..64),
            flip in any::<(usize, u8)>(),
        ) {
            let _ = CustomOptions::decode(&bytes);
            let mut valid = {
                let mut builder = flexbuffers::Builder::default();
                let mut map = builder.start_map();
                map.push("alpha", 0.5f32);
                map.push("dims", &[1i32, 2, 3][..]);
                map.push("name", "x");
                map.end_map();
                builder.view().to_vec()
            };
            let at = flip.0 % valid.len();
            valid[at] ^= flip.1;
            let _ = CustomOptions::decode(&valid);
        }
    }
}
