//! Every op registered under a name TensorFlow uses has TensorFlow's own
//! OpDef: the same args, attrs, types, constraints (in order), defaults and
//! flags as TensorFlow 2.21's, whose text (docs stripped) is committed in
//! `tests/data/tensorflow_ops.pbtxt` (made by
//! `tools/tensorflow/dump_opdefs.py`; `tools/tensorflow/README.md` says how
//! to remake it). A graph exchanged with TensorFlow then means the same op
//! by the same name.
//!
//! The comparison is structural and covers every field but the docs (an
//! output's full type, `experimental_full_type`, included): TensorFlow's
//! text and ours (our OpDef printed in the same text format, docs
//! stripped) are both read with
//! op-spec's text reader (`op_spec::text::parse_message`) into a tree of
//! fields, scalars decoded (strings unescaped, numbers parsed), and the
//! trees are compared field by field. A difference is reported as
//! `Op: attr 'T' > allowed_values > list > type: ours [..], TensorFlow's
//! [..]`, one line per differing field, every op at once.

use op_core::op_spec::text::{self, TextNode};
use op_core::op_spec::{OpDef, OpDefBuilder, pbtxt};
use op_core::registry::Registry;

/// TensorFlow 2.21's OpDefs of the standard ops and of our ops that carry
/// TensorFlow's names.
const TENSORFLOW_OPS: &str = include_str!("data/tensorflow_ops.pbtxt");

/// The script that made the copy, whose list of ops the copy must hold.
const DUMP_SCRIPT: &str = include_str!("../../tools/tensorflow/dump_opdefs.py");

// ---- Protobuf text format, as a tree ----

/// A field's value: a scalar in the canonical form of [`scalar_text`]
/// (`"T"`, `DT_FLOAT`, `true`, `1`), or a message's fields.
#[derive(Clone, Debug, PartialEq)]
enum Value {
    Scalar(String),
    Message(Fields),
}

/// A message's fields, in order (repeated fields repeat).
type Fields = Vec<(String, Value)>;

/// Reads protobuf text format with op-spec's reader into the tree. Panics,
/// naming the position, on text it cannot read: the inputs are the
/// committed copy and our own printer.
fn parse(text: &str) -> Fields {
    let message = text::parse_message(text).unwrap_or_else(|e| panic!("{e:?}"));
    match tree(message.root(), text) {
        Value::Message(fields) => fields,
        Value::Scalar(s) => panic!("expected a message, found {s}"),
    }
}

/// The tree of `node`, a node of `text`.
fn tree(node: TextNode<'_>, text: &str) -> Value {
    match node.fields("message") {
        Ok(fields) => Value::Message(
            fields
                .into_iter()
                .map(|f| (f.name.to_owned(), tree(f.value, text)))
                .collect(),
        ),
        Err(_) => Value::Scalar(scalar_text(node, text)),
    }
}

/// A scalar of `text`, written back in one canonical form: a quoted
/// C-escaped string, an integer, a float, a bool, a dtype's enum name, or
/// another enum's value as written (`TFT_SHAPE_TENSOR`).
fn scalar_text(node: TextNode<'_>, text: &str) -> String {
    if let Ok(bytes) = node.to_bytes() {
        format!("\"{}\"", pbtxt::c_escape(&bytes))
    } else if let Ok(i) = node.to_i64() {
        i.to_string()
    } else if let Ok(x) = node.to_f64() {
        x.to_string()
    } else if let Ok(b) = node.to_bool() {
        b.to_string()
    } else if let Ok(dtype) = node.to_dtype() {
        dtype.enum_name().to_owned()
    } else {
        text[node.pos()..]
            .split(|c: char| c.is_whitespace() || "{}:<>#".contains(c))
            .next()
            .unwrap_or_default()
            .to_owned()
    }
}

/// The value of the scalar field `name` of `fields`, if any.
fn scalar<'f>(fields: &'f Fields, name: &str) -> Option<&'f str> {
    fields.iter().find_map(|(n, v)| match v {
        Value::Scalar(s) if n == name => Some(s.as_str()),
        _ => None,
    })
}

/// `fields` without docs (`summary`, `description`), at every depth;
/// every other field (an output's `experimental_full_type` too) is kept.
fn without_docs(fields: &Fields) -> Fields {
    fields
        .iter()
        .filter(|(name, _)| name != "summary" && name != "description")
        .map(|(name, value)| {
            let value = match value {
                Value::Message(inner) => Value::Message(without_docs(inner)),
                scalar => scalar.clone(),
            };
            (name.clone(), value)
        })
        .collect()
}

// ---- The comparison ----

/// A list of values for a message: `[x, y]`, or `(none)`.
fn show(values: &[&Value]) -> String {
    if values.is_empty() {
        return "(none)".to_owned();
    }
    let items: Vec<String> = values
        .iter()
        .map(|v| match v {
            Value::Scalar(s) => s.clone(),
            Value::Message(fields) => match scalar(fields, "name") {
                Some(name) => format!("{{ name: {name} .. }}"),
                None => "{ .. }".to_owned(),
            },
        })
        .collect();
    format!("[{}]", items.join(", "))
}

/// The values of the (possibly repeated) field `name` of `fields`.
fn values_of<'f>(fields: &'f Fields, name: &str) -> Vec<&'f Value> {
    fields
        .iter()
        .filter(|(n, _)| n == name)
        .map(|(_, v)| v)
        .collect()
}

/// Appends one line per field that differs between `ours` and `theirs`,
/// each starting with `path`.
fn diff(path: &str, ours: &Fields, theirs: &Fields, out: &mut Vec<String>) {
    let mut names: Vec<&str> = Vec::new();
    for (name, _) in theirs.iter().chain(ours) {
        if !names.contains(&name.as_str()) {
            names.push(name);
        }
    }
    for name in names {
        let (a, b) = (values_of(ours, name), values_of(theirs, name));
        let messages = |vs: &[&Value]| -> Option<Vec<Fields>> {
            vs.iter()
                .map(|v| match v {
                    Value::Message(f) => Some(f.clone()),
                    Value::Scalar(_) => None,
                })
                .collect()
        };
        match (messages(&a), messages(&b)) {
            (Some(ma), Some(mb)) if !ma.is_empty() && !mb.is_empty() => {
                diff_messages(&format!("{path}{name}"), &ma, &mb, &a, &b, out)
            }
            _ => {
                let same = a == b;
                if !same {
                    out.push(format!(
                        "{path}{name}: ours {}, TensorFlow's {}",
                        show(&a),
                        show(&b)
                    ));
                }
            }
        }
    }
}

/// Compares the repeated message field `path` (args, attrs, dims): by
/// name where the messages have names (reporting a difference in the
/// names or their order first), else by position.
fn diff_messages(
    path: &str,
    ours: &[Fields],
    theirs: &[Fields],
    ours_shown: &[&Value],
    theirs_shown: &[&Value],
    out: &mut Vec<String>,
) {
    let names = |ms: &[Fields]| -> Option<Vec<String>> {
        ms.iter()
            .map(|m| scalar(m, "name").map(str::to_owned))
            .collect()
    };
    if let (Some(na), Some(nb)) = (names(ours), names(theirs)) {
        if na != nb {
            out.push(format!(
                "{path} (by name, in order): ours {}, TensorFlow's {}",
                show(ours_shown),
                show(theirs_shown)
            ));
        }
        for (m, name) in theirs.iter().zip(&nb) {
            if let Some(i) = na.iter().position(|n| n == name) {
                let name = name.trim_matches('"');
                diff(&format!("{path} '{name}' > "), &ours[i], m, out);
            }
        }
        return;
    }
    if ours.len() != theirs.len() {
        out.push(format!(
            "{path}: ours {}, TensorFlow's {}",
            show(ours_shown),
            show(theirs_shown)
        ));
        return;
    }
    for (i, (a, b)) in ours.iter().zip(theirs).enumerate() {
        let at = if ours.len() == 1 {
            String::new()
        } else {
            format!("[{i}]")
        };
        diff(&format!("{path}{at} > "), a, b, out);
    }
}

/// TensorFlow's ops in the copy, by name, docs stripped.
fn tensorflow_ops() -> Vec<(String, Fields)> {
    parse(TENSORFLOW_OPS)
        .into_iter()
        .map(|(field, value)| {
            assert_eq!(field, "op", "the copy is an OpList");
            let Value::Message(fields) = value else {
                panic!("an op is a message")
            };
            let name = scalar(&fields, "name").expect("every op has a name");
            (name.trim_matches('"').to_owned(), without_docs(&fields))
        })
        .collect()
}

/// `op` printed in TensorFlow's text format, docs stripped, as a tree.
fn ours(op: &OpDef) -> Fields {
    let mut op = op.clone();
    op.summary.clear();
    op.description.clear();
    op.inputs
        .iter_mut()
        .chain(&mut op.outputs)
        .for_each(|a| a.description.clear());
    op.attrs.iter_mut().for_each(|a| a.description.clear());
    parse(&pbtxt::op_def_to_string(&op))
}

/// One line per field in which `op` differs from TensorFlow's `theirs`.
fn differences(op: &OpDef, theirs: &Fields) -> Vec<String> {
    let mut out = Vec::new();
    diff(&format!("{}: ", op.name), &ours(op), theirs, &mut out);
    out
}

// ---- The tests ----

#[test]
fn every_registered_op_with_a_tensorflow_name_has_tensorflows_opdef() {
    op_kernels::link();
    let registry = Registry::global();
    let tensorflow = tensorflow_ops();
    let mut report = Vec::new();
    for (name, theirs) in &tensorflow {
        let Some(entry) = registry.get(name) else {
            continue;
        };
        report.extend(differences(entry.def(), theirs));
    }
    assert!(
        report.is_empty(),
        "{} difference(s) from TensorFlow 2.21's OpDefs (tests/data/tensorflow_ops.pbtxt):\n  {}",
        report.len(),
        report.join("\n  ")
    );
}

/// With the comparison above, every op of the copy is compared.
#[test]
fn every_op_in_tensorflows_copy_is_registered() {
    op_kernels::link();
    let registry = Registry::global();
    let missing: Vec<String> = tensorflow_ops()
        .into_iter()
        .map(|(name, _)| name)
        .filter(|name| registry.get(name).is_none())
        .collect();
    assert!(
        missing.is_empty(),
        "{} op(s) of TensorFlow's copy are not registered: {}",
        missing.len(),
        missing.join(", ")
    );
}

#[test]
fn a_difference_names_the_op_and_the_field_with_both_values() {
    let tensorflow = tensorflow_ops();
    let theirs = |name: &str| &tensorflow.iter().find(|(n, _)| n == name).unwrap().1;

    // StringToNumber as it was: two of TensorFlow's six out_types.
    let narrow = OpDefBuilder::new("StringToNumber")
        .attr("out_type: {float, int32} = DT_FLOAT")
        .input("string_tensor: string")
        .output("output: out_type")
        .build()
        .unwrap();
    assert_eq!(
        differences(&narrow, theirs("StringToNumber")),
        [
            "StringToNumber: attr 'out_type' > allowed_values > list > type: ours [DT_FLOAT, DT_INT32], \
             TensorFlow's [DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64, DT_UINT32, DT_UINT64]"
        ]
    );

    // VarHandleOp as it was: without debug_name and allowed_devices.
    let short = OpDefBuilder::new("VarHandleOp")
        .attr("container: string = ''")
        .attr("shared_name: string = ''")
        .attr("dtype: type")
        .attr("shape: shape")
        .output("resource: resource")
        .build()
        .unwrap();
    let found = differences(&short, theirs("VarHandleOp"));
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0].starts_with(
            "VarHandleOp: attr (by name, in order): ours [{ name: \"container\" .. }, { name: \"shared_name\" .. }, \
             { name: \"dtype\" .. }, { name: \"shape\" .. }], TensorFlow's [{ name: \"container\" .. }, \
             { name: \"shared_name\" .. }, { name: \"debug_name\" .. }"
        ),
        "{found:#?}"
    );

    // A default.
    let loose = OpDefBuilder::new("DestroyResourceOp")
        .attr("ignore_lookup_error: bool = false")
        .input("resource: resource")
        .build()
        .unwrap();
    assert_eq!(
        differences(&loose, theirs("DestroyResourceOp")),
        [
            "DestroyResourceOp: attr 'ignore_lookup_error' > default_value > b: ours [false], TensorFlow's [true]"
        ]
    );

    // A full type: Shape without TensorFlow's, then with another.
    let shape = |full_type: Option<&str>| {
        let mut b = OpDefBuilder::new("Shape")
            .attr("T: type")
            .attr("out_type: {int32, int64} = DT_INT32")
            .input("input: T")
            .output("output: out_type");
        if let Some(spec) = full_type {
            b = b.full_type(spec);
        }
        b.build().unwrap()
    };
    assert_eq!(
        differences(&shape(None), theirs("Shape")),
        ["Shape: output_arg 'output' > experimental_full_type: ours (none), TensorFlow's [{ .. }]"]
    );
    assert_eq!(
        differences(
            &shape(Some("output: TFT_TENSOR[TFT_VAR{'out_type'}]")),
            theirs("Shape")
        ),
        [
            "Shape: output_arg 'output' > experimental_full_type > type_id: ours [TFT_TENSOR], \
             TensorFlow's [TFT_SHAPE_TENSOR]"
        ]
    );
    assert!(
        differences(
            &shape(Some("output: TFT_SHAPE_TENSOR[TFT_VAR{'out_type'}]")),
            theirs("Shape")
        )
        .is_empty()
    );

    // A flag: an op that is not stateful where TensorFlow's is.
    let stateless = OpDefBuilder::new("VarIsInitializedOp")
        .input("resource: string")
        .output("is_initialized: bool")
        .build()
        .unwrap();
    assert_eq!(
        differences(&stateless, theirs("VarIsInitializedOp")),
        [
            "VarIsInitializedOp: input_arg 'resource' > type: ours [DT_STRING], TensorFlow's [DT_RESOURCE]",
            "VarIsInitializedOp: is_stateful: ours (none), TensorFlow's [true]"
        ]
    );
}

#[test]
fn the_copy_is_tensorflow_2_21s_and_holds_every_op_of_the_script() {
    assert!(
        TENSORFLOW_OPS.starts_with("# TensorFlow 2.21.0: tools/tensorflow/dump_opdefs.py\n"),
        "{}",
        TENSORFLOW_OPS.lines().next().unwrap_or_default()
    );
    let list = DUMP_SCRIPT
        .split_once("OPS = \"\"\"")
        .and_then(|(_, rest)| rest.split_once("\"\"\""))
        .expect("the script lists its ops in OPS = \"\"\"...\"\"\"")
        .0;
    let mut wanted: Vec<&str> = list.split_whitespace().collect();
    wanted.sort_unstable();
    let names: Vec<String> = tensorflow_ops().into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        names, wanted,
        "the copy holds the script's ops, sorted by name"
    );
}

#[test]
fn our_printed_text_reads_back_into_the_same_tree() {
    op_kernels::link();
    for (name, _) in tensorflow_ops() {
        let name = name.as_str();
        let def = Registry::global().get(name).unwrap().def().clone();
        let fields = ours(&def);
        assert_eq!(
            scalar(&fields, "name"),
            Some(format!("\"{name}\"").as_str())
        );
        assert!(differences(&def, &fields).is_empty(), "{name}");
    }
}

/// op-core's list of the framework ops op-kernels ships (which the
/// registry names when one is missing and op-kernels is not linked) is
/// the ops of TensorFlow's copy, sorted.
#[test]
fn op_cores_list_of_op_kernels_ops_is_the_copys() {
    let mut copy: Vec<String> = tensorflow_ops().into_iter().map(|(name, _)| name).collect();
    copy.sort();
    assert_eq!(
        op_core::registry::OP_KERNELS_OPS,
        copy,
        "op-core/src/registry/op_kernels_ops.rs differs from tests/data/tensorflow_ops.pbtxt"
    );
}
