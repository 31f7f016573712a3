//! "Did you mean" suggestions for misspelt names.
//!
//! The search is bounded: a word longer than [`MAX_WORD_CHARS`] gets no
//! suggestion (no real name is that long, and a hostile one must not cost
//! time or memory in the product of its length and the names'), and a
//! candidate whose length alone puts it out of reach is skipped without
//! computing its distance.

/// Words longer than this, in chars, get no suggestion.
pub const MAX_WORD_CHARS: usize = 256;

/// Edit distance between two strings, counted in chars, where swapping two
/// adjacent chars is one edit (optimal string alignment: strsim's
/// `osa_distance`).
///
/// Time is the product of the lengths; memory is three rows of `b`'s
/// length, not the product (callers bound the lengths: see [`closest`]).
pub fn edit_distance(a: &str, b: &str) -> usize {
    strsim::osa_distance(a, b)
}

/// The candidate closest to `word`, if it is within a third of the word's length
/// (at least one edit). `None` for a word longer than [`MAX_WORD_CHARS`].
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    // Counting stops past the bound: a long word is not read to its end.
    let length = word.chars().take(MAX_WORD_CHARS + 1).count();
    if length > MAX_WORD_CHARS {
        return None;
    }
    let limit = (length / 3).max(1);
    candidates
        .into_iter()
        .filter(|c| {
            // The distance is at least the difference of the lengths.
            let reach = length + limit;
            c.chars().take(reach + 1).count().abs_diff(length) <= limit
        })
        .map(|c| (edit_distance(word, c), c))
        .filter(|&(d, _)| d > 0 && d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("flaot", "float"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("abc", ""), 3);
        assert_eq!(edit_distance("int32", "int32"), 0);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("ca", "abc"), 3);
        assert_eq!(edit_distance("abcdef", "badcfe"), 3);
        assert_eq!(closest("flot", ["float", "int32"]), Some("float"));
        assert_eq!(closest("xyz", ["float", "int32"]), None);
    }

    #[test]
    fn a_word_past_the_bound_gets_no_suggestion() {
        // One edit from the candidate, but too long to be searched.
        let candidate = "a".repeat(MAX_WORD_CHARS + 1);
        let word = format!("b{}", &candidate[1..]);
        assert_eq!(closest(&word, [candidate.as_str()]), None);
        // At the bound, it is.
        let candidate = "a".repeat(MAX_WORD_CHARS);
        let word = format!("b{}", &candidate[1..]);
        assert_eq!(
            closest(&word, [candidate.as_str()]),
            Some(candidate.as_str())
        );
        // Far longer than any candidate: none, whatever the length.
        assert_eq!(closest(&"MatMul".repeat(1 << 18), ["MatMul"]), None);
    }

    #[test]
    fn candidates_out_of_reach_by_length_are_skipped() {
        assert_eq!(closest("abcdef", ["abcdefghi", "abcdeg"]), Some("abcdeg"));
        assert_eq!(closest("ab", ["abc", "abcd"]), Some("abc"));
    }
}
