//! Quoting a caller's strings in error messages, at a bounded length.
//!
//! An error message that echoes what it was given (an op or attr name, a
//! node or resource name, a string value) must stay short however long
//! that input is: a 10 MB name must not make a 10 MB message. Every
//! message that quotes such input goes through [`quoted`], [`capped`] or
//! [`summarized`], which show at most [`QUOTE_LIMIT`] chars and then the
//! input's full length; a list of such inputs (the unknown ops of a file,
//! the nodes on a cycle, the dims of a shape) goes through [`listed`],
//! which shows its first few items and then how many there are.
//!
//! ```
//! use op_spec::quote::{capped, quoted};
//! assert_eq!(quoted("MatMul").to_string(), "'MatMul'");
//! let long = "x".repeat(1 << 20);
//! let shown = quoted(&long).to_string();
//! assert!(shown.starts_with("'xxx"));
//! assert!(shown.ends_with("…' (1048576 bytes)"));
//! assert!(shown.len() < 300);
//! assert_eq!(capped("12a").to_string(), "12a");
//! ```

use std::fmt::{self, Write};

/// The most chars of one input an error message shows: more than any real
/// name needs.
pub const QUOTE_LIMIT: usize = 200;

/// `text` in single quotes, `'text'`; past [`QUOTE_LIMIT`] chars, its
/// beginning and its length in bytes: `'xxx…' (1048576 bytes)`. Bytes that
/// are not UTF-8 show as U+FFFD.
pub fn quoted<S: AsRef<[u8]> + ?Sized>(text: &S) -> Quoted<'_> {
    Quoted {
        text: text.as_ref(),
        quote: "'",
    }
}

/// `text` as [`quoted`] shows it, without the quotes: `xxx… (1048576
/// bytes)`.
pub fn capped<S: AsRef<[u8]> + ?Sized>(text: &S) -> Quoted<'_> {
    Quoted {
        text: text.as_ref(),
        quote: "",
    }
}

/// A caller's string as an error message shows it: see [`quoted`] and
/// [`capped`].
#[derive(Clone, Copy)]
pub struct Quoted<'a> {
    text: &'a [u8],
    quote: &'static str,
}

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.quote)?;
        // `QUOTE_LIMIT + 1` chars (or invalid sequences, of at most 3
        // bytes) fit in this many bytes: a longer text is cut within them,
        // and is read no further.
        let head = &self.text[..self.text.len().min(4 * (QUOTE_LIMIT + 1))];
        let mut left = QUOTE_LIMIT;
        for chunk in head.utf8_chunks() {
            let valid = chunk.valid();
            if let Some((cut, _)) = valid.char_indices().nth(left) {
                f.write_str(&valid[..cut])?;
                return self.cut(f);
            }
            f.write_str(valid)?;
            left -= valid.chars().count();
            if !chunk.invalid().is_empty() {
                if left == 0 {
                    return self.cut(f);
                }
                f.write_char(char::REPLACEMENT_CHARACTER)?;
                left -= 1;
            }
        }
        if head.len() < self.text.len() {
            return self.cut(f);
        }
        f.write_str(self.quote)
    }
}

impl Quoted<'_> {
    /// Ends a text cut short: the ellipsis, the quote, the full length.
    fn cut(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "…{} ({} bytes)", self.quote, self.text.len())
    }
}

impl fmt::Debug for Quoted<'_> {
    /// As `Display`: never the whole text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// `value`'s `Display` text, cut as [`capped`] cuts a string: for a value
/// that may hold a caller's string (an attr value, a validation error
/// that quotes one). The text is written through a bounded buffer, never
/// held whole.
///
/// ```
/// use op_spec::AttrValue;
/// use op_spec::quote::summarized;
/// let value = AttrValue::String(vec![b'a'; 1 << 20]);
/// let shown = summarized(&value).to_string();
/// assert!(shown.ends_with("… (1048578 bytes)"), "{shown}");
/// assert_eq!(summarized(&AttrValue::Int(3)).to_string(), "3");
/// ```
pub fn summarized<T: fmt::Display + ?Sized>(value: &T) -> Summarized<'_, T> {
    Summarized(value)
}

/// A value's text, at a bounded length: see [`summarized`].
pub struct Summarized<'a, T: ?Sized>(&'a T);

impl<T: fmt::Display + ?Sized> fmt::Display for Summarized<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut head = Head {
            kept: String::new(),
            chars: 0,
            total: 0,
        };
        write!(head, "{}", self.0)?;
        f.write_str(&head.kept)?;
        if head.total > head.kept.len() {
            write!(f, "… ({} bytes)", head.total)?;
        }
        Ok(())
    }
}

impl<T: fmt::Display + ?Sized> fmt::Debug for Summarized<'_, T> {
    /// As `Display`: never the whole text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Keeps the first [`QUOTE_LIMIT`] chars written to it and counts the
/// bytes of all of them.
struct Head {
    kept: String,
    chars: usize,
    total: usize,
}

impl Write for Head {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.total += s.len();
        for c in s.chars() {
            if self.chars == QUOTE_LIMIT {
                break;
            }
            self.kept.push(c);
            self.chars += 1;
        }
        Ok(())
    }
}

/// The most dimensions of a shape an error message shows.
pub const DIMS_LIMIT: usize = 12;

/// A shape's dimensions as an error message shows them, `[2, 3]` (as
/// `{:?}` does), cut after [`DIMS_LIMIT`] of them with the rank: `[1, 1,
/// ..., 1, ... (rank 100000)]`. A caller's shape (a resized input, a
/// model's tensor) may have any rank; the message stays short.
///
/// ```
/// use op_spec::quote::dims;
/// assert_eq!(dims(&[2usize, 3]).to_string(), "[2, 3]");
/// assert_eq!(dims::<i64>(&[]).to_string(), "[]");
/// let shown = dims(&vec![1usize; 100_000]).to_string();
/// assert!(shown.ends_with(", 1, ... (rank 100000)]"), "{shown}");
/// assert!(shown.len() < 100);
/// ```
pub fn dims<T: fmt::Debug>(dims: &[T]) -> Dims<'_, T> {
    Dims(dims)
}

/// A shape's dimensions, at a bounded length: see [`dims`].
pub struct Dims<'a, T>(&'a [T]);

impl<T: fmt::Debug> fmt::Display for Dims<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, d) in self.0.iter().take(DIMS_LIMIT).enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{d:?}")?;
        }
        if self.0.len() > DIMS_LIMIT {
            write!(f, ", ... (rank {})", self.0.len())?;
        }
        f.write_str("]")
    }
}

impl<T: fmt::Debug> fmt::Debug for Dims<'_, T> {
    /// As `Display`: never more than [`DIMS_LIMIT`] dimensions.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// `items` as an error message lists them: their `Display`s joined by `, `,
/// and past the first `shown`, how many more there are and how many in
/// all: `'a', 'b', 'c' and 9,997 more (10,000 in all)`. For a list as long
/// as a caller's input (the unknown ops of a file, a node's inputs, the
/// dims of a shape): the message names a few and counts the rest.
///
/// The items are read when the list is displayed, never collected: any
/// iterator that can be cloned will do. Each item should be bounded
/// itself (a name through [`quoted`]); `shown` is taken as at least 1.
///
/// ```
/// use op_spec::quote::{listed, quoted};
/// let names: Vec<String> = (0..10_000).map(|i| format!("op{i}")).collect();
/// assert_eq!(
///     listed(names.iter().map(|n| quoted(n)), 3).to_string(),
///     "'op0', 'op1', 'op2' and 9,997 more (10,000 in all)"
/// );
/// assert_eq!(listed(&[1, 2], 3).to_string(), "1, 2");
/// assert_eq!(listed(1..=4, 3).to_string(), "1, 2, 3 and 1 more (4 in all)");
/// ```
pub fn listed<I>(items: I, shown: usize) -> Listed<I>
where
    I: IntoIterator + Clone,
    I::Item: fmt::Display,
{
    Listed {
        items,
        shown: shown.max(1),
    }
}

/// A list of items as an error message shows it: see [`listed`].
#[derive(Clone, Copy)]
pub struct Listed<I> {
    items: I,
    shown: usize,
}

impl<I> fmt::Display for Listed<I>
where
    I: IntoIterator + Clone,
    I::Item: fmt::Display,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut items = self.items.clone().into_iter();
        for (i, item) in items.by_ref().take(self.shown).enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{item}")?;
        }
        let more = items.count();
        if more > 0 {
            write!(
                f,
                " and {} more ({} in all)",
                Grouped(more),
                Grouped(self.shown + more)
            )?;
        }
        Ok(())
    }
}

impl<I> fmt::Debug for Listed<I>
where
    I: IntoIterator + Clone,
    I::Item: fmt::Display,
{
    /// As `Display`: never the whole list.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// `n` with its thousands separated by commas, as [`listed`] counts:
/// `10,000`. For a count in a message that may be large (nodes of a file,
/// the rank of a shape).
///
/// ```
/// use op_spec::quote::grouped;
/// assert_eq!(grouped(100_000).to_string(), "100,000");
/// assert_eq!(grouped(999).to_string(), "999");
/// ```
pub fn grouped(n: usize) -> Grouped {
    Grouped(n)
}

/// A count as a message shows it: see [`grouped`].
#[derive(Clone, Copy, Debug)]
pub struct Grouped(usize);

impl fmt::Display for Grouped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = self.0.to_string();
        for (i, digit) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                f.write_char(',')?;
            }
            f.write_char(digit)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_texts_are_whole() {
        assert_eq!(quoted("").to_string(), "''");
        assert_eq!(quoted("a'b").to_string(), "'a'b'");
        let exact = "é".repeat(QUOTE_LIMIT);
        assert_eq!(quoted(&exact).to_string(), format!("'{exact}'"));
        assert_eq!(capped(&exact).to_string(), exact);
        assert_eq!(capped(b"1\xff2").to_string(), "1\u{fffd}2");
        assert_eq!(summarized("abc").to_string(), "abc");
    }

    #[test]
    fn long_texts_are_cut_with_their_length() {
        let long = "é".repeat(QUOTE_LIMIT + 1);
        let head = "é".repeat(QUOTE_LIMIT);
        assert_eq!(
            quoted(&long).to_string(),
            format!("'{head}…' ({} bytes)", long.len())
        );
        assert_eq!(
            capped(&long).to_string(),
            format!("{head}… ({} bytes)", long.len())
        );
        assert_eq!(
            summarized(&long).to_string(),
            format!("{head}… ({} bytes)", long.len())
        );
        // Invalid bytes count as one char each sequence.
        let bytes = vec![0xffu8; 10 << 20];
        let shown = capped(&bytes).to_string();
        assert_eq!(
            shown.chars().filter(|&c| c == '\u{fffd}').count(),
            QUOTE_LIMIT
        );
        assert!(shown.ends_with("… (10485760 bytes)"), "{shown}");
        // A multi-byte char split at the end of what is read.
        let mut mixed = "a".repeat(4 * (QUOTE_LIMIT + 1) - 1);
        mixed.push('é');
        let shown = quoted(&mixed).to_string();
        assert!(
            shown.ends_with(&format!("…' ({} bytes)", mixed.len())),
            "{shown}"
        );
        assert!(shown.len() < 2 * QUOTE_LIMIT);
    }

    #[test]
    fn lists_show_their_first_items_and_count_the_rest() {
        let none: [&str; 0] = [];
        assert_eq!(listed(none, 3).to_string(), "");
        assert_eq!(listed(["a"], 3).to_string(), "a");
        assert_eq!(listed(["a", "b", "c"], 3).to_string(), "a, b, c");
        assert_eq!(
            listed(["a", "b", "c", "d"], 3).to_string(),
            "a, b, c and 1 more (4 in all)"
        );
        // At least one item shows.
        assert_eq!(listed(1..=2, 0).to_string(), "1 and 1 more (2 in all)");
        assert_eq!(
            listed(0..1_234_567, 2).to_string(),
            "0, 1 and 1,234,565 more (1,234,567 in all)"
        );
        // A huge list of huge items stays short.
        let long = "x".repeat(1 << 20);
        let items = vec![long; 1000];
        let shown = listed(items.iter().map(quoted), 3).to_string();
        assert!(shown.len() < 4 * QUOTE_LIMIT, "{}", shown.len());
        assert!(shown.ends_with(" and 997 more (1,000 in all)"), "{shown}");
    }

    #[test]
    fn counts_are_grouped_by_thousands() {
        for (n, text) in [
            (0, "0"),
            (999, "999"),
            (1000, "1,000"),
            (10_000, "10,000"),
            (999_999, "999,999"),
            (1_000_000, "1,000,000"),
        ] {
            assert_eq!(Grouped(n).to_string(), text);
        }
    }
}
