//! Our importer accepts and refuses the GraphDefs TensorFlow's does: each
//! `tests/data/tensorflow/import_verdicts/<case>.pbtxt` tries one rule
//! (missing attrs with and without defaults, attrs the op does not
//! declare, attrs of the wrong type or without a value), and `verdicts.txt`
//! says what `tf.compat.v1.import_graph_def` of TensorFlow 2.21 made of it
//! (written by `tools/tensorflow/import_verdicts.py`). A file one importer
//! takes and the other refuses is a bug in one of them.

use std::path::Path;

use op_graph::graphdef;

mod common;

/// `text`'s part after `prefix` up to `end`, if `prefix` is in it.
fn between<'a>(text: &'a str, prefix: &str, end: char) -> Option<&'a str> {
    let rest = &text[text.find(prefix)? + prefix.len()..];
    rest.split(end).next()
}

#[test]
fn we_accept_and_refuse_what_tensorflow_does() {
    common::link();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tensorflow/import_verdicts");
    let verdicts = std::fs::read_to_string(dir.join("verdicts.txt")).unwrap();
    let mut checked = 0;
    for line in verdicts.lines().filter(|l| !l.starts_with('#')) {
        let (case, verdict) = line.split_once(": ").unwrap();
        let text = std::fs::read_to_string(dir.join(format!("{case}.pbtxt"))).unwrap();
        let ours = graphdef::from_text(&text);
        match (verdict.strip_prefix("refused: "), ours) {
            (None, Ok(_)) => {}
            (None, Err(e)) => panic!("{case}: TensorFlow accepts it, we refuse it: {e}"),
            (Some(theirs), Ok(_)) => {
                panic!("{case}: TensorFlow refuses it ({theirs}), we accept it")
            }
            (Some(theirs), Err(e)) => {
                // Where TensorFlow names the node and the attr, so do we.
                let ours = e.to_string();
                if let Some(node) = between(theirs, "{{node ", '}') {
                    assert!(ours.contains(&format!("'{node}'")), "{case}: {ours}");
                }
                if let Some(attr) = between(theirs, "attr '", '\'') {
                    assert!(ours.contains(&format!("'{attr}'")), "{case}: {ours}");
                }
            }
        }
        checked += 1;
    }
    let cases = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension() == Some("pbtxt".as_ref()))
        .count();
    assert_eq!(checked, cases, "every case has a verdict");
}
