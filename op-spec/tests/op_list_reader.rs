//! The OpList reader (`pbtxt::parse_op_list`) on TensorFlow's own text and
//! on broken text: it reads every op TensorFlow 2.21 wrote, back to the
//! same text, and an error names the op, the field and the place.

use op_spec::pbtxt::{self, OpListError};
use op_spec::{AttrValue, DType, FullType, FullTypeId, OpDefBuilder};
use proptest::prelude::*;

/// TensorFlow 2.21's OpDefs of the standard ops (docs stripped), as
/// TensorFlow's own `TextFormat` wrote them.
const TENSORFLOW_OPS: &str = include_str!("../../op-kernels/tests/data/tensorflow_ops.pbtxt");

#[test]
fn tensorflow_s_own_op_list_is_read_completely_and_prints_back_the_same() {
    let ops = pbtxt::parse_op_list(TENSORFLOW_OPS).unwrap_or_else(|e| panic!("{e}"));
    let written = TENSORFLOW_OPS.matches("\nop {\n").count();
    assert!(written > 80, "the copy holds {written} ops");
    assert_eq!(ops.len(), written);
    // Every field comes back in the same text, byte for byte: Shape's full
    // type too.
    let theirs: String = TENSORFLOW_OPS
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(pbtxt::op_list_to_string(&ops) == theirs, "the text differs");
    let shape = ops.iter().find(|op| op.name == "Shape").unwrap();
    assert_eq!(
        shape.outputs[0].full_type,
        Some(FullType::new(FullTypeId::ShapeTensor).with_arg(FullType::var("out_type")))
    );
}

#[test]
fn a_full_type_reads_with_its_ids_by_name_or_number_and_its_attr() {
    let text = "op { name: 'A' attr { name: 'T' type: 'list(type)' }
        output_arg { name: 'y' type: DT_VARIANT experimental_full_type {
            type_id: 10102 args { type_id: TFT_FOR_EACH args { type_id: TFT_PRODUCT }
            args { type_id: TFT_TENSOR args { type_id: TFT_VAR s: 'T' } } args { type_id: TFT_VAR s: \"T\" } } } }
        output_arg { name: 'n' type: DT_INT32 experimental_full_type { type_id: TFT_LITERAL i: -3 } }
        output_arg { name: 'u' type: DT_INT32 experimental_full_type { } } }";
    let op = &pbtxt::parse_op_list(text).unwrap_or_else(|e| panic!("{e}"))[0];
    let full_type = |i: usize| op.outputs[i].full_type.as_ref().map(ToString::to_string);
    assert_eq!(
        full_type(0).as_deref(),
        Some("TFT_DATASET[TFT_FOR_EACH[TFT_PRODUCT, TFT_TENSOR[TFT_VAR{'T'}], TFT_VAR{'T'}]]")
    );
    assert_eq!(full_type(1).as_deref(), Some("TFT_LITERAL{-3}"));
    // Present but unset: kept, and written back as an empty message.
    assert_eq!(full_type(2).as_deref(), Some("TFT_UNSET"));
    let written = pbtxt::op_list_to_string([op]);
    assert!(
        written.contains("    experimental_full_type {\n    }\n"),
        "{written}"
    );
    assert!(
        written.contains("      type_id: TFT_DATASET\n"),
        "{written}"
    );
    assert_eq!(
        pbtxt::parse_op_list(&written).as_ref(),
        Ok(&vec![op.clone()])
    );
}

#[test]
fn one_op_s_fields_are_read_without_an_enclosing_op() {
    let op = OpDefBuilder::new("Examples>Fill")
        .attr("T: {float, int32} = DT_INT32")
        .attr("N: int >= 0 = 2")
        .attr("mode: {'fast', 'exact'} = 'exact'")
        .input("x: N * T")
        .output("y: Ref(T)")
        .doc("Fills.\n\nAt length.\n\nx: what to fill.")
        .deprecated(12, "use Fill2")
        .set_is_stateful()
        .build()
        .unwrap();
    let text = pbtxt::op_def_to_string(&op);
    assert_eq!(pbtxt::parse_op_def(&text), Ok(op.clone()));
    let read = pbtxt::parse_op_list(
        "op { name: 'A' attr { name: 'N' type: 'int' default_value { i: -0x10 } } }",
    )
    .unwrap();
    assert_eq!(read[0].attrs[0].default_value, Some(AttrValue::Int(-16)));
    // Lists may be written in brackets, fields in any order.
    let read = pbtxt::parse_op_list(
        "op { attr { allowed_values { list { type: [DT_HALF, DT_INT8] } } type: 'type' name: 'T' } name: 'B' }",
    )
    .unwrap();
    assert_eq!(
        read[0].attrs[0].allowed_types(),
        Some(&[DType::F16, DType::I8][..])
    );
    assert_eq!(pbtxt::parse_op_list(""), Ok(vec![]));
}

/// The error `text` gives, as displayed.
fn error(text: &str) -> String {
    match pbtxt::parse_op_list(text) {
        Ok(ops) => panic!("{text:?} read as {ops:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn errors_name_the_op_the_field_and_the_place() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "a syntax error gives the place only",
            "op { name: 'A'",
            "line 1, column 4: missing '}' to close the message opened here",
        ),
        (
            "an unknown field is named, with the closest known one",
            "op {\n  name: 'A'\n  input_args { name: 'x' type: DT_FLOAT }\n}",
            "line 3, column 3: op 'A': OpDef has no field 'input_args' (did you mean 'input_arg'?)",
        ),
        (
            "an unknown field of an arg names the arg",
            "op { name: 'A' input_arg { name: 'x' typ: DT_FLOAT } }",
            "line 1, column 38: op 'A', input_arg 'x': ArgDef has no field 'typ' (did you mean 'type'?)",
        ),
        (
            "an op without a name is named by its position",
            "op { name: 'A' } op { input_arg { name: 'x' type: DT_FLOAT } }",
            "line 1, column 18: op #2, name: an op needs a name",
        ),
        (
            "the name is read first, wherever it is written",
            "op { input_arg { name: 'x' type_attr: 'T' } name: 'A' }",
            "line 1, column 6: op 'A', input_arg 'x' > type_attr: no attr named 'T'",
        ),
        (
            "an invalid op name",
            "op { name: 'zero_out' }",
            "line 1, column 12: op 'zero_out', name: invalid op name 'zero_out': op names are CamelCase, optionally namespaced as 'Namespace>Name'",
        ),
        (
            "a singular field given twice",
            "op { name: 'A' is_stateful: true is_stateful: false }",
            "line 1, column 34: op 'A', is_stateful: OpDef.is_stateful is given more than once",
        ),
        (
            "an unknown attr type",
            "op { name: 'A' attr { name: 'L' type: 'list(in)' } }",
            "line 1, column 39: op 'A', attr 'L' > type: unknown attr type 'list(in)' (did you mean 'list(int)'?)",
        ),
        (
            "a default of another kind than the attr",
            "op { name: 'A' attr { name: 'T' type: 'type' default_value { i: 1 } } }",
            "line 1, column 62: op 'A', attr 'T' > default_value > i: a value of type 'type' is written in 'type', found 'i'",
        ),
        (
            "a list default holding another kind",
            "op { name: 'A' attr { name: 'l' type: 'list(int)' default_value { list { s: 'x' } } } }",
            "line 1, column 74: op 'A', attr 'l' > default_value > list > s: a value of type 'list(int)' holds only 'i' elements, found 's'",
        ),
        (
            "a scalar that does not decode",
            "op { name: 'A' attr { name: 'T' type: 'type' allowed_values { list { type: DT_FLAOT } } } }",
            "line 1, column 76: op 'A', attr 'T' > allowed_values > list > type: unknown type 'DT_FLAOT'",
        ),
        (
            "a default outside the attr's allowed values",
            "op { name: 'A' attr { name: 'T' type: 'type' default_value { type: DT_INT64 } allowed_values { list { type: DT_FLOAT } } } }",
            "line 1, column 16: op 'A', attr 'T' > default_value: the default does not satisfy the attr: Value for attr 'T' of int64 is not in the list of allowed values: float",
        ),
        (
            "two values in one AttrValue",
            "op { name: 'A' attr { name: 'n' type: 'int' default_value { i: 1 f: 2 } } }",
            "line 1, column 66: op 'A', attr 'n' > default_value > f: an AttrValue holds one value, but 'i' and 'f' are both set",
        ),
        (
            "a minimum without has_minimum",
            "op { name: 'A' attr { name: 'n' type: 'int' minimum: 2 } }",
            "line 1, column 45: op 'A', attr 'n' > minimum: minimum 2 without has_minimum: true",
        ),
        (
            "a minimum on an attr that cannot have one",
            "op { name: 'A' attr { name: 's' type: 'string' has_minimum: true minimum: 2 } }",
            "line 1, column 16: op 'A', attr 's' > minimum: an attr of type 'string' cannot have a minimum (only int and list attrs can)",
        ),
        (
            "allowed values on an attr that cannot have them",
            "op { name: 'A' attr { name: 'n' type: 'int' allowed_values { list { i: 1 } } } }",
            "line 1, column 45: op 'A', attr 'n' > allowed_values: an attr of type 'int' cannot have allowed values (only type and string attrs can)",
        ),
        (
            "an attr named like a dtype",
            "op { name: 'A' attr { name: 'float' type: 'int' } }",
            "line 1, column 16: op 'A', attr 'float': attr can't have name 'float' that matches a data type",
        ),
        (
            "an arg with two types",
            "op { name: 'A' attr { name: 'T' type: 'type' } input_arg { name: 'x' type: DT_FLOAT type_attr: 'T' } }",
            "line 1, column 48: op 'A', input_arg 'x': exactly one of type, type_attr, type_list_attr must be set",
        ),
        (
            "an arg with no type",
            "op { name: 'A' output_arg { name: 'y' } }",
            "line 1, column 16: op 'A', output_arg 'y': missing type: one of type, type_attr, type_list_attr must be set",
        ),
        (
            "a reference dtype",
            "op { name: 'A' input_arg { name: 'x' type: DT_FLOAT_REF } }",
            "line 1, column 44: op 'A', input_arg 'x' > type: reference type DT_FLOAT_REF is not allowed here; use DT_FLOAT",
        ),
        (
            "a length attr of the wrong type",
            "op { name: 'A' attr { name: 'N' type: 'float' } input_arg { name: 'x' type: DT_FLOAT number_attr: 'N' } }",
            "line 1, column 49: op 'A', input_arg 'x' > number_attr: attr 'N' has type float, but number_attr needs int",
        ),
        (
            "a length attr without a minimum",
            "op { name: 'A' attr { name: 'N' type: 'int' } input_arg { name: 'x' type: DT_FLOAT number_attr: 'N' } }",
            "line 1, column 47: op 'A', input_arg 'x' > number_attr: attr 'N', used as a length, must have a minimum >= 0",
        ),
        (
            "an arg named like an attr",
            "op { name: 'A' attr { name: 'T' type: 'type' } output_arg { name: 'T' type_attr: 'T' } }",
            "line 1, column 48: op 'A', output_arg 'T': duplicate name 'T'",
        ),
        (
            "a control output, which the model cannot hold",
            "op { name: 'A' control_output: 'c' }",
            "line 1, column 16: op 'A', control_output: control outputs are not supported by op-spec's OpDef",
        ),
        (
            "a placeholder, which the model cannot hold",
            "op { name: 'A' attr { name: 'T' type: 'type' default_value { placeholder: 'U' } } }",
            "line 1, column 62: op 'A', attr 'T' > default_value > placeholder: a value of type 'type' is written in 'type', found a placeholder, which op-spec does not support",
        ),
        (
            "a name that is not UTF-8",
            "op { name: 'A' attr { name: '\\377' type: 'int' } }",
            "line 1, column 29: op 'A', attr > name: expected UTF-8 text",
        ),
        (
            "an unknown full type id",
            "op { name: 'A' output_arg { name: 'y' type: DT_INT32 experimental_full_type { type_id: TFT_SHAPE_TENSR } } }",
            "line 1, column 88: op 'A', output_arg 'y' > experimental_full_type > type_id: unknown FullTypeId 'TFT_SHAPE_TENSR' (did you mean 'TFT_SHAPE_TENSOR'?)",
        ),
        (
            "a full type id by a number TensorFlow does not use",
            "op { name: 'A' output_arg { name: 'y' type: DT_INT32 experimental_full_type { type_id: 5 } } }",
            "line 1, column 88: op 'A', output_arg 'y' > experimental_full_type > type_id: 5 is not a FullTypeId value",
        ),
        (
            "both members of a full type's oneof",
            "op { name: 'A' output_arg { name: 'y' type: DT_INT32 experimental_full_type { type_id: TFT_LITERAL i: 1 s: 'x' } } }",
            "line 1, column 105: op 'A', output_arg 'y' > experimental_full_type > s: a FullTypeDef holds one attr, but 's' and 'i' are both set",
        ),
        (
            "a type variable naming no attr",
            "op { name: 'A' attr { name: 'out_type' type: 'type' } output_arg { name: 'y' type_attr: 'out_type' experimental_full_type { type_id: TFT_SHAPE_TENSOR args { type_id: TFT_VAR s: 'out_typ' } } } }",
            "line 1, column 178: op 'A', output_arg 'y' > experimental_full_type: TFT_VAR names no attr of the op: 'out_typ' (did you mean 'out_type'?)",
        ),
        (
            "a type variable naming an attr that is not a type",
            "op { name: 'A' attr { name: 'N' type: 'int' } output_arg { name: 'y' type: DT_INT32 experimental_full_type { type_id: TFT_VAR s: 'N' } } }",
            "line 1, column 130: op 'A', output_arg 'y' > experimental_full_type: TFT_VAR names attr 'N' of type int, not a type (a type variable stands for a `type` or `list(type)` attr)",
        ),
        (
            "a for-each without its three args",
            "op { name: 'A' output_arg { name: 'y' type: DT_VARIANT experimental_full_type { type_id: TFT_FOR_EACH args { type_id: TFT_PRODUCT } } } }",
            "line 1, column 90: op 'A', output_arg 'y' > experimental_full_type: TFT_FOR_EACH takes 3 args, not 1 (write TFT_FOR_EACH[<container>, <template>, TFT_VAR{'<list attr>'}], as in TFT_FOR_EACH[TFT_PRODUCT, TFT_TENSOR[TFT_VAR{'T'}], TFT_VAR{'T'}])",
        ),
        (
            "a field of the OpList itself",
            "ops { name: 'A' }",
            "line 1, column 1: OpList has no field 'ops' (did you mean 'op'?)",
        ),
    ];
    let mut failures = Vec::new();
    for (case, text, want) in cases {
        let got = error(text);
        if got != *want {
            failures.push(format!(
                "{case}:\n  text: {text}\n  got:  {got}\n  want: {want}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn an_error_s_parts_are_fields_too() {
    let e: OpListError =
        pbtxt::parse_op_list("op {\n  name: 'A'\n  attr { name: 'T' type: 'tipe' }\n}")
            .unwrap_err();
    assert_eq!((e.line, e.column), (3, 26));
    assert_eq!(e.op.as_deref(), Some("A"));
    assert_eq!(e.field, "attr 'T' > type");
    assert_eq!(e.message, "unknown attr type 'tipe' (did you mean 'type'?)");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    /// TensorFlow's text cut anywhere, or with a byte replaced, never panics
    /// the reader; an error points inside the text.
    #[test]
    fn damaged_text_is_an_error_not_a_panic(cut in 0usize..TENSORFLOW_OPS.len(), at in 0usize..TENSORFLOW_OPS.len(), byte in prop::sample::select(&b"{}<>[]:'\"\\#-0x9e ;,\n"[..])) {
        let mut bytes = TENSORFLOW_OPS.as_bytes()[..cut].to_vec();
        if at < bytes.len() {
            bytes[at] = byte;
        }
        let text = String::from_utf8_lossy(&bytes);
        if let Err(e) = pbtxt::parse_op_list(&text) {
            prop_assert!(e.line >= 1 && e.line <= text.lines().count().max(1) + 1, "{}", e);
            prop_assert!(e.column >= 1);
            prop_assert!(!e.message.is_empty());
        }
    }
}

#[test]
fn the_fuzzer_s_seeds_read_except_the_broken_ones() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/seeds/op_list_reader");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let result = pbtxt::parse_op_list(&text);
        if name.starts_with("broken") {
            assert!(result.is_err(), "{name} reads");
        } else {
            let ops = result.unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(!ops.is_empty(), "{name}");
        }
        seen += 1;
    }
    assert!(seen >= 5, "{seen} seeds in {}", dir.display());
}
