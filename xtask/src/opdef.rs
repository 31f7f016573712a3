//! `cargo xtask opdef`: op registrations as JSON lines in, one TensorFlow
//! `OpList` (text format) out.
//!
//! Each non-blank input line is one op, as a JSON object:
//!
//! ```json
//! {"name": "ZeroOut", "inputs": ["to_zero: T"], "outputs": ["zeroed: T"],
//!  "attrs": ["T: {float, int32} = DT_INT32"], "stateful": false}
//! ```
//!
//! `name` is required; everything else is optional (see [`KEYS`]). The spec
//! strings are those of TensorFlow's `REGISTER_OP` and are checked by
//! [`op_spec::OpDefBuilder`]. The ops that are valid are printed, in input
//! order, as one `OpList`; every problem is reported on the error stream as one
//! line, `Name: what is wrong` (or `line N: what is wrong` when the line has
//! no readable name), and does not stop the other lines.

use std::collections::HashMap;
use std::io::{self, BufRead, Write};

use op_spec::{OpDef, OpDefBuilder, pbtxt};
use serde_json::{Map, Value};

/// The keys an op's JSON object may have, each with what it holds.
pub const KEYS: &[(&str, &str)] = &[
    ("name", "the op's name (required): \"ZeroOut\""),
    ("inputs", "input specs: [\"to_zero: T\"]"),
    ("outputs", "output specs: [\"zeroed: T\"]"),
    ("attrs", "attr specs: [\"T: {float, int32} = DT_INT32\"]"),
    ("doc", "the op's docs, as TensorFlow's Doc()"),
    ("stateful", "true if the op has state or side effects"),
    (
        "commutative",
        "true if the op is commutative in its two inputs",
    ),
    ("aggregate", "true if the op adds up its inputs"),
    (
        "allows_uninitialized_input",
        "true if the op may read uninitialized inputs",
    ),
    (
        "distributed_communication",
        "true if the op communicates across devices",
    ),
];

/// Reads op registrations as JSON lines from `input`, writes the valid ops as
/// one `OpList` to `out` and one line per invalid op or malformed line to `err`.
///
/// Blank lines are skipped. Returns `Ok(true)` when every line was a valid op,
/// `Ok(false)` when anything was reported on `err`, and an error only when
/// reading or writing fails.
pub fn run(
    mut input: impl BufRead,
    out: &mut impl Write,
    err: &mut impl Write,
) -> io::Result<bool> {
    let mut ops: Vec<OpDef> = Vec::new();
    // Op name -> the line it was first defined on.
    let mut defined: HashMap<String, usize> = HashMap::new();
    let mut all_ok = true;
    let mut buf = Vec::new();
    let mut line_no = 0;
    loop {
        buf.clear();
        if input.read_until(b'\n', &mut buf)? == 0 {
            break;
        }
        line_no += 1;
        let result = match std::str::from_utf8(&buf) {
            Ok(text) if text.trim().is_empty() => continue,
            Ok(text) => op_from_line(text.trim_end_matches(['\n', '\r'])),
            Err(e) => Err(Failure {
                who: None,
                problems: vec![format!("not valid UTF-8 (at byte {})", e.valid_up_to())],
            }),
        };
        let failure = match result {
            Ok(op) => match defined.get(&op.name) {
                Some(first) => Failure {
                    who: Some(op.name.clone()),
                    problems: vec![format!("duplicate op name (first defined on line {first})")],
                },
                None => {
                    defined.insert(op.name.clone(), line_no);
                    ops.push(op);
                    continue;
                }
            },
            Err(failure) => failure,
        };
        all_ok = false;
        let who = failure.who.unwrap_or_else(|| format!("line {line_no}"));
        writeln!(err, "{who}: {}", failure.problems.join("; "))?;
    }
    out.write_all(pbtxt::op_list_to_string(&ops).as_bytes())?;
    out.flush()?;
    err.flush()?;
    Ok(all_ok)
}

/// Why a line did not give an op.
#[derive(Debug)]
struct Failure {
    /// The op's name, when the line has a readable one.
    who: Option<String>,
    /// Everything wrong with the line, one message each.
    problems: Vec<String>,
}

/// Parses one non-blank line (without its line ending) into a built op.
fn op_from_line(text: &str) -> Result<OpDef, Failure> {
    let value: Value = serde_json::from_str(text).map_err(|e| Failure {
        who: None,
        problems: vec![json_error(&e)],
    })?;
    let Value::Object(object) = value else {
        return Err(Failure {
            who: None,
            problems: vec![format!(
                "expected a JSON object for the op, found {}",
                kind_of(&value)
            )],
        });
    };
    let (builder, problems) = builder_from_object(&object);
    let who = match object.get("name") {
        Some(Value::String(name)) if !name.is_empty() => Some(name.clone()),
        _ => None,
    };
    let builder = match builder {
        Some(builder) if problems.is_empty() => builder,
        _ => return Err(Failure { who, problems }),
    };
    builder.build().map_err(|errors| Failure {
        who,
        problems: errors.errors().iter().map(|e| e.one_line()).collect(),
    })
}

/// A JSON syntax error without serde's "at line 1" (each op is one line, so
/// its end is the end of the line, not of a file).
fn json_error(e: &serde_json::Error) -> String {
    let full = e.to_string();
    let position = format!(" at line {} column {}", e.line(), e.column());
    match full.strip_suffix(&position) {
        Some(message) => format!(
            "invalid JSON at column {}: {}",
            e.column(),
            message.replace("EOF while", "line ended while")
        ),
        None => format!("invalid JSON: {full}"),
    }
}

/// The builder for an op object, if it has a usable name, and every problem
/// with the object's keys and value types.
fn builder_from_object(object: &Map<String, Value>) -> (Option<OpDefBuilder>, Vec<String>) {
    let mut problems = Vec::new();
    for key in object.keys() {
        if !KEYS.iter().any(|(k, _)| k == key) {
            problems.push(unknown_key(key));
        }
    }
    let mut builder = match object.get("name") {
        Some(Value::String(name)) => Some(OpDefBuilder::new(name.as_str())),
        Some(other) => {
            problems.push(format!("\"name\" must be a string, not {}", kind_of(other)));
            None
        }
        None => {
            problems.push("missing \"name\"".to_owned());
            None
        }
    };
    type Add = fn(OpDefBuilder, &str) -> OpDefBuilder;
    let spec_lists: [(&str, Add); 3] = [
        ("attrs", |b, s| b.attr(s)),
        ("inputs", |b, s| b.input(s)),
        ("outputs", |b, s| b.output(s)),
    ];
    for (key, add) in spec_lists {
        match object.get(key) {
            None => {}
            Some(Value::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    match item {
                        Value::String(spec) => builder = builder.map(|b| add(b, spec)),
                        other => problems.push(format!(
                            "\"{key}\"[{i}] must be a spec string, not {}",
                            kind_of(other)
                        )),
                    }
                }
            }
            Some(Value::String(spec)) => problems.push(format!(
                "\"{key}\" must be an array of spec strings, not a string (write [{}])",
                Value::String(spec.clone())
            )),
            Some(other) => problems.push(format!(
                "\"{key}\" must be an array of spec strings, not {}",
                kind_of(other)
            )),
        }
    }
    match object.get("doc") {
        None => {}
        Some(Value::String(doc)) => builder = builder.map(|b| b.doc(doc.as_str())),
        Some(other) => problems.push(format!("\"doc\" must be a string, not {}", kind_of(other))),
    }
    type Flag = fn(OpDefBuilder) -> OpDefBuilder;
    let flags: [(&str, Flag); 5] = [
        ("stateful", OpDefBuilder::set_is_stateful),
        ("commutative", OpDefBuilder::set_is_commutative),
        ("aggregate", OpDefBuilder::set_is_aggregate),
        (
            "allows_uninitialized_input",
            OpDefBuilder::set_allows_uninitialized_input,
        ),
        (
            "distributed_communication",
            OpDefBuilder::set_is_distributed_communication,
        ),
    ];
    for (key, set) in flags {
        match object.get(key) {
            None | Some(Value::Bool(false)) => {}
            Some(Value::Bool(true)) => builder = builder.map(set),
            Some(other) => problems.push(format!(
                "\"{key}\" must be true or false, not {}",
                kind_of(other)
            )),
        }
    }
    (builder, problems)
}

/// The message for a key that is not in [`KEYS`], suggesting the closest one.
fn unknown_key(key: &str) -> String {
    match closest_key(key) {
        Some(known) => format!("unknown key \"{key}\" (did you mean \"{known}\"?)"),
        None => {
            let known: Vec<&str> = KEYS.iter().map(|(k, _)| *k).collect();
            format!("unknown key \"{key}\" (the keys are: {})", known.join(", "))
        }
    }
}

/// The known key closest to `key`, ignoring case and an `is_` / `set_is_`
/// prefix (as in the builder's method names), if it is close enough.
fn closest_key(key: &str) -> Option<&'static str> {
    use op_spec::suggest::edit_distance;
    let lower = key.to_ascii_lowercase();
    let bare = lower
        .strip_prefix("set_is_")
        .or_else(|| lower.strip_prefix("is_"))
        .unwrap_or(&lower);
    KEYS.iter()
        .map(|(known, _)| {
            let distance = edit_distance(&lower, known).min(edit_distance(bare, known));
            (distance, *known)
        })
        .filter(|(distance, known)| *distance <= (known.len() / 3).max(1))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, known)| known)
}

/// "a string", "an array", ... for messages.
fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `input` through [`run`]: (stdout, stderr, success).
    fn opdef(input: &str) -> (String, String, bool) {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let ok = run(input.as_bytes(), &mut out, &mut err).unwrap();
        (
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
            ok,
        )
    }

    const ZERO_OUT: &str = r#"{"name":"ZeroOut","inputs":["to_zero: T"],"outputs":["zeroed: T"],"attrs":["T: {float, int32} = DT_INT32"]}"#;

    const ZERO_OUT_PBTXT: &str = r#"op {
  name: "ZeroOut"
  input_arg {
    name: "to_zero"
    type_attr: "T"
  }
  output_arg {
    name: "zeroed"
    type_attr: "T"
  }
  attr {
    name: "T"
    type: "type"
    default_value {
      type: DT_INT32
    }
    allowed_values {
      list {
        type: DT_FLOAT
        type: DT_INT32
      }
    }
  }
}
"#;

    #[test]
    fn zero_out_prints_tensorflows_op_list() {
        let (out, err, ok) = opdef(ZERO_OUT);
        assert_eq!(out, ZERO_OUT_PBTXT);
        assert_eq!(err, "");
        assert!(ok);
    }

    #[test]
    fn no_input_prints_an_empty_op_list() {
        assert_eq!(opdef(""), (String::new(), String::new(), true));
        assert_eq!(opdef("\n  \n\r\n"), (String::new(), String::new(), true));
    }

    #[test]
    fn blank_lines_are_skipped_and_crlf_is_fine() {
        let input = format!("\n{ZERO_OUT}\r\n\n");
        let (out, err, ok) = opdef(&input);
        assert_eq!(out, ZERO_OUT_PBTXT);
        assert_eq!(err, "");
        assert!(ok);
    }

    #[test]
    fn valid_ops_are_printed_in_order_around_invalid_ones() {
        let input = [
            r#"{"name": "First", "outputs": ["y: float"]}"#,
            r#"{"name": "Broken", "attrs": ["T: flaot"], "inputs": ["x: T"]}"#,
            r#"{"name": "Second", "inputs": ["x: int32"]}"#,
            r#"{"name": "AlsoBroken", "inputs": ["x: Q", "y: float"], "outputs": ["y: float"]}"#,
            r#"{"name": "Third"}"#,
        ]
        .join("\n");
        let (out, err, ok) = opdef(&input);
        assert!(!ok);
        let names: Vec<&str> = out.lines().filter(|l| l.starts_with("  name: ")).collect();
        assert_eq!(
            names,
            [
                "  name: \"First\"",
                "  name: \"Second\"",
                "  name: \"Third\""
            ]
        );
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 2, "{err}");
        assert!(
            lines[0].starts_with("Broken: Attr(\"T: flaot\") at column 4: "),
            "{err}"
        );
        assert!(lines[0].contains("did you mean 'float'?"), "{err}");
        // Two errors in one op: joined with "; " on one line.
        assert!(lines[1].starts_with("AlsoBroken: Input(\"x: Q\")"), "{err}");
        assert!(lines[1].contains("; Output(\"y: float\")"), "{err}");
        assert!(lines[1].contains("duplicate name 'y'"), "{err}");
    }

    #[test]
    fn stateful_flag_and_other_flags() {
        let (out, err, ok) = opdef(
            r#"{"name": "Counter", "outputs": ["n: int64"], "stateful": true, "doc": "Counts."}"#,
        );
        assert!(ok, "{err}");
        assert_eq!(
            out,
            "op {\n  name: \"Counter\"\n  output_arg {\n    name: \"n\"\n    type: DT_INT64\n  }\n  summary: \"Counts.\"\n  is_stateful: true\n}\n"
        );
        let (out, _, ok) = opdef(r#"{"name": "NotCounter", "stateful": false}"#);
        assert!(ok);
        assert!(!out.contains("is_stateful"));

        let (out, err, ok) = opdef(
            r#"{"name": "Add2", "attrs": ["T: {float, int32}"], "inputs": ["a: T", "b: T"], "outputs": ["sum: T"], "commutative": true, "aggregate": true, "allows_uninitialized_input": true, "distributed_communication": true}"#,
        );
        assert!(ok, "{err}");
        for flag in [
            "is_aggregate: true",
            "is_commutative: true",
            "allows_uninitialized_input: true",
            "is_distributed_communication: true",
        ] {
            assert!(out.contains(flag), "{flag} in {out}");
        }
        assert!(!out.contains("is_stateful"));
    }

    #[test]
    fn bad_json_is_reported_by_line_and_the_rest_goes_on() {
        let input = format!("{ZERO_OUT}\n{{\"name\": \"Oops\",\n[1, 2]\n\"ZeroOut\"\n");
        let (out, err, ok) = opdef(&input);
        assert!(!ok);
        assert_eq!(out, ZERO_OUT_PBTXT);
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(
            lines,
            [
                "line 2: invalid JSON at column 16: line ended while parsing a value",
                "line 3: expected a JSON object for the op, found an array",
                "line 4: expected a JSON object for the op, found a string",
            ]
        );
    }

    #[test]
    fn invalid_utf8_is_reported() {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let input: &[u8] = b"{\"name\": \"A\xff\"}\n{\"name\": \"B\"}\n";
        assert!(!run(input, &mut out, &mut err).unwrap());
        assert_eq!(
            String::from_utf8(err).unwrap(),
            "line 1: not valid UTF-8 (at byte 11)\n"
        );
        assert!(String::from_utf8(out).unwrap().contains("name: \"B\""));
    }

    #[test]
    fn unknown_keys_are_named_with_a_suggestion() {
        let (out, err, ok) =
            opdef(r#"{"name": "ZeroOut", "input": ["to_zero: int32"], "is_stateful": true}"#);
        assert!(!ok);
        assert_eq!(out, "");
        assert_eq!(
            err,
            "ZeroOut: unknown key \"input\" (did you mean \"inputs\"?); \
             unknown key \"is_stateful\" (did you mean \"stateful\"?)\n"
        );
        let (_, err, _) = opdef(r#"{"name": "A", "Attrs": [], "statefull": true, "color": 1}"#);
        assert_eq!(
            err,
            "A: unknown key \"Attrs\" (did you mean \"attrs\"?); \
             unknown key \"color\" (the keys are: name, inputs, outputs, attrs, doc, stateful, \
             commutative, aggregate, allows_uninitialized_input, distributed_communication); \
             unknown key \"statefull\" (did you mean \"stateful\"?)\n"
        );
    }

    #[test]
    fn wrong_json_types_are_reported() {
        let (out, err, ok) = opdef(
            r#"{"name": "A", "inputs": "x: float", "outputs": [1], "attrs": {}, "stateful": "yes", "doc": 3}"#,
        );
        assert!(!ok);
        assert_eq!(out, "");
        assert_eq!(
            err,
            "A: \"attrs\" must be an array of spec strings, not an object; \
             \"inputs\" must be an array of spec strings, not a string (write [\"x: float\"]); \
             \"outputs\"[0] must be a spec string, not a number; \
             \"doc\" must be a string, not a number; \
             \"stateful\" must be true or false, not a string\n"
        );
    }

    #[test]
    fn lines_without_a_readable_name_are_named_by_number() {
        let input =
            "{\"inputs\": []}\n{\"name\": 7}\n{\"name\": \"\"}\n{\"name\": null, \"inptus\": []}\n";
        let (out, err, ok) = opdef(input);
        assert!(!ok);
        assert_eq!(out, "");
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines[0], "line 1: missing \"name\"");
        assert_eq!(lines[1], "line 2: \"name\" must be a string, not a number");
        assert!(lines[2].starts_with("line 3: invalid op name ''"), "{err}");
        assert_eq!(
            lines[3],
            "line 4: unknown key \"inptus\" (did you mean \"inputs\"?); \"name\" must be a string, not null"
        );
    }

    #[test]
    fn invalid_op_names_are_reported_by_the_builder() {
        let (_, err, ok) = opdef(r#"{"name": "zero_out"}"#);
        assert!(!ok);
        assert!(
            err.starts_with("zero_out: invalid op name 'zero_out'"),
            "{err}"
        );
        assert!(err.contains("try 'ZeroOut'"), "{err}");
    }

    #[test]
    fn duplicate_op_names_keep_the_first() {
        let input = format!("{ZERO_OUT}\n\n{ZERO_OUT}\n");
        let (out, err, ok) = opdef(&input);
        assert!(!ok);
        assert_eq!(out, ZERO_OUT_PBTXT);
        assert_eq!(
            err,
            "ZeroOut: duplicate op name (first defined on line 1)\n"
        );
    }

    #[test]
    fn resource_args_make_an_op_stateful() {
        let (out, _, ok) = opdef(r#"{"name": "ReadIt", "inputs": ["h: resource"]}"#);
        assert!(ok);
        assert!(out.contains("is_stateful: true"), "{out}");
    }

    #[test]
    fn docs_that_name_unknown_args_are_errors() {
        let (out, err, ok) =
            opdef(r#"{"name": "A", "inputs": ["x: float"], "doc": "Does A.\n\ny: the input"}"#);
        assert!(!ok);
        assert_eq!(out, "");
        assert!(err.starts_with("A: the docs describe 'y'"), "{err}");
    }

    #[test]
    fn key_suggestions() {
        assert_eq!(closest_key("input"), Some("inputs"));
        assert_eq!(closest_key("output"), Some("outputs"));
        assert_eq!(closest_key("attr"), Some("attrs"));
        assert_eq!(closest_key("docs"), Some("doc"));
        assert_eq!(closest_key("set_is_commutative"), Some("commutative"));
        assert_eq!(closest_key("is_aggregate"), Some("aggregate"));
        assert_eq!(closest_key("Name"), Some("name"));
        assert_eq!(closest_key("description"), None);
        assert_eq!(closest_key("x"), None);
        assert_eq!(op_spec::suggest::edit_distance("kitten", "sitting"), 3);
        assert_eq!(op_spec::suggest::edit_distance("", "abc"), 3);
    }
}
