//! Splitting an op's docs into summary, description and per-arg text, as
//! TensorFlow's `FinalizeDoc` does.

use crate::OpDef;

fn doc_name(line: &str) -> Option<(&str, &str)> {
    let bytes = line.as_bytes();
    if !bytes.first()?.is_ascii_alphabetic() {
        return None;
    }
    let end = bytes
        .iter()
        .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
        .unwrap_or(bytes.len());
    let rest = line[end..].trim_start();
    let text = rest.strip_prefix(':')?;
    Some((&line[..end], text.trim_start()))
}

/// Fills `op.summary`, `op.description` and the descriptions of its args and
/// attrs from `text`: the first paragraph is the summary (its lines joined
/// by spaces, as rustdoc reads a doc comment's first paragraph; TensorFlow's
/// `Doc()` strings give their summary one line, which reads the same), the
/// lines up to the first `name:` line are the description, and each `name: text`
/// paragraph documents the input, output or attr of that name (continuation
/// lines lose their common indent).
///
/// Returns the first documented name that the op does not have, but for
/// the `broken` attrs (whose own specs failed: their docs are not a second
/// mistake).
pub(crate) fn apply_doc(text: &str, op: &mut OpDef, broken: &[String]) -> Result<(), String> {
    let lines: Vec<&str> = text.split('\n').map(str::trim_end).collect();
    let mut l = 0;
    while l < lines.len() && lines[l].is_empty() {
        l += 1;
    }
    let summary_start = l;
    while l < lines.len()
        && !lines[l].is_empty()
        && (l == summary_start || doc_name(lines[l]).is_none())
    {
        l += 1;
    }
    op.summary = lines[summary_start..l]
        .iter()
        .map(|line| line.trim())
        .collect::<Vec<_>>()
        .join(" ");
    while l < lines.len() && lines[l].is_empty() {
        l += 1;
    }
    let start = l;
    while l < lines.len() && doc_name(lines[l]).is_none() {
        l += 1;
    }
    let mut end = l;
    while end > start && lines[end - 1].is_empty() {
        end -= 1;
    }
    op.description = lines[start..end].join("\n");

    while l < lines.len() {
        let (name, first) = doc_name(lines[l]).expect("loop stops on name lines");
        let mut paragraph = vec![first];
        l += 1;
        while l < lines.len() && doc_name(lines[l]).is_none() {
            paragraph.push(lines[l]);
            l += 1;
        }
        while paragraph.len() > 1 && paragraph.last().is_some_and(|s| s.is_empty()) {
            paragraph.pop();
        }
        let indent = paragraph[1..]
            .iter()
            .filter(|s| !s.is_empty())
            .map(|s| s.len() - s.trim_start_matches(' ').len())
            .min()
            .unwrap_or(0);
        let body: Vec<&str> = paragraph
            .iter()
            .enumerate()
            .map(|(i, s)| {
                if i == 0 || s.is_empty() {
                    *s
                } else {
                    &s[indent..]
                }
            })
            .collect();
        let complete = body.join("\n");
        let slot = op
            .inputs
            .iter_mut()
            .chain(op.outputs.iter_mut())
            .find(|a| a.name == name)
            .map(|a| &mut a.description)
            .or_else(|| {
                op.attrs
                    .iter_mut()
                    .find(|a| a.name == name)
                    .map(|a| &mut a.description)
            });
        match slot {
            Some(slot) => *slot = complete,
            None if broken.iter().any(|b| b == name) => {}
            None => return Err(name.to_owned()),
        }
    }
    Ok(())
}
