//! The element types a table holds: [`TableElement`] (keys and values) and
//! [`TableKey`] (keys).

use std::hash::Hash;

use op_core::Element;
use op_core::error::QUOTE_LIMIT;

/// An element type that a table holds as a key or a value: `int32`,
/// `int64`, `float`, `double`, `bool` and `string` (`Vec<u8>`).
pub trait TableElement: Element {
    /// The bytes this element holds on the heap (for
    /// [`Resource::memory_used`](op_core::resource::Resource::memory_used)).
    fn heap_bytes(&self) -> usize {
        0
    }

    /// The element as text, for messages.
    fn describe(&self) -> String;
}

macro_rules! table_element_by_display {
    ($($t:ty),*) => {$(
        impl TableElement for $t {
            fn describe(&self) -> String {
                self.to_string()
            }
        }
    )*};
}

table_element_by_display!(i32, i64, f32, f64, bool);

impl TableElement for Vec<u8> {
    fn heap_bytes(&self) -> usize {
        self.capacity()
    }

    /// Escaped and quoted; a key past [`QUOTE_LIMIT`] bytes is cut, with
    /// its length (a message must not echo a huge key).
    fn describe(&self) -> String {
        if self.len() <= QUOTE_LIMIT {
            return format!("\"{}\"", self.escape_ascii());
        }
        format!(
            "\"{}…\" ({} bytes)",
            self[..QUOTE_LIMIT].escape_ascii(),
            self.len()
        )
    }
}

/// An element type that a table can use as a key: `int32`, `int64` and
/// `string`.
pub trait TableKey: TableElement + Eq + Hash {}

impl<T: TableElement + Eq + Hash> TableKey for T {}
