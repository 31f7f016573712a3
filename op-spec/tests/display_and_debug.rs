//! How op definitions and attr values print: `OpDef`'s `Display` is
//! TensorFlow's text format (`{}` one line, `{:#}` as in `ops.pbtxt`), and
//! `Debug` shows byte strings (string attr values, their allowed values, a
//! tensor's `string_val`) as strings, never as lists of numbers.

use op_spec::{AttrValue, DType, ListValue, OpDef, OpDefBuilder, TensorValue, pbtxt};
use proptest::prelude::*;

/// Ops with every kind of field: docs with quotes and newlines, string and
/// tensor defaults, constrained strings, lists, a deprecation, flags.
fn ops() -> Vec<OpDef> {
    vec![
        OpDefBuilder::new("ZeroOut")
            .attr("T: {float, int32} = DT_INT32")
            .input("to_zero: T")
            .output("zeroed: T")
            .build()
            .unwrap(),
        OpDefBuilder::new("Fruit")
            .attr("e: {'apple', 'orange'} = 'apple'")
            .attr("names: list(string) = ['a', 'b\\'c']")
            .attr("N: int >= 1")
            .attr("value: tensor = { dtype: DT_STRING string_val: 'x' }")
            .attr("shape: shape = { dim { size: 2 } dim { size: -1 } }")
            .input("xs: N * float")
            .output("y: string")
            .doc("Picks a fruit.\n\nA \"quoted\" description\nover lines, with é.")
            .deprecated(3, "use Fruit2")
            .set_is_stateful()
            .build()
            .unwrap(),
        OpDef {
            name: "Empty".into(),
            ..OpDef::default()
        },
    ]
}

#[test]
fn an_op_displays_on_one_line_as_protobuf_s_short_debug_string() {
    for op in ops() {
        let short = op.to_string();
        assert_eq!(short, pbtxt::op_def_to_short_string(&op));
        assert!(!short.contains('\n'), "{short}");
        assert!(
            short.starts_with(&format!("name: \"{}\"", op.name)),
            "{short}"
        );
    }
}

#[test]
fn an_op_displays_over_lines_with_the_alternate_flag_as_in_ops_pbtxt() {
    for op in ops() {
        let long = format!("{op:#}");
        assert_eq!(long, pbtxt::op_def_to_string(&op));
        assert!(long.ends_with('\n'), "{long}");
        // The same fields as the one-line form, only laid out over lines.
        let joined: Vec<&str> = long.lines().map(str::trim).collect();
        assert_eq!(joined.join(" "), op.to_string());
        // As the op's body in an `OpList`, indented once.
        let list = pbtxt::op_list_to_string([&op]);
        let indented: String = long.lines().map(|l| format!("  {l}\n")).collect();
        assert_eq!(list, format!("op {{\n{indented}}}\n"));
    }
}

#[test]
fn an_op_s_text_escapes_its_docs_and_strings() {
    let op = &ops()[1];
    let short = op.to_string();
    for part in [
        r#"description: "A \"quoted\" description\nover lines, with \303\251.""#,
        r#"default_value { s: "apple" }"#,
        r#"allowed_values { list { s: "apple" s: "orange" } }"#,
        r#"default_value { list { s: "a" s: "b\'c" } }"#,
        r#"default_value { tensor { dtype: DT_STRING string_val: "x" } }"#,
        r#"deprecation { version: 3 explanation: "use Fruit2" }"#,
        "is_stateful: true",
    ] {
        assert!(short.contains(part), "{part} missing from {short}");
    }
}

#[test]
fn debug_shows_string_defaults_and_allowed_values_as_strings() {
    let op = &ops()[1];
    let debug = format!("{op:?}");
    for part in [
        r#"default_value: Some(String("apple"))"#,
        r#"allowed_values: Some(String(["apple", "orange"]))"#,
        r#"default_value: Some(List(String(["a", "b'c"])))"#,
        r#"string_val: ["x"]"#,
    ] {
        assert!(debug.contains(part), "{part} missing from {debug}");
    }
    // "apple" as numbers, as the derived Debug printed it.
    assert!(!debug.contains("97, 112, 112"), "{debug}");
}

#[test]
fn debug_of_bytes_that_are_not_utf8_is_a_byte_string_literal() {
    assert_eq!(
        format!("{:?}", AttrValue::String(vec![b'o', b'k', 0xff, b'"'])),
        r#"String(b"ok\xff\"")"#
    );
    assert_eq!(
        format!(
            "{:?}",
            ListValue::String(vec![vec![0x80], b"fine".to_vec()])
        ),
        r#"String([b"\x80", "fine"])"#
    );
    let tensor = TensorValue {
        dtype: Some(DType::String),
        string_val: vec![vec![0xc3]],
        ..TensorValue::default()
    };
    assert!(
        format!("{tensor:?}").contains(r#"string_val: [b"\xc3"]"#),
        "{tensor:?}"
    );
}

#[test]
fn debug_of_other_values_is_unchanged() {
    let cases: [(AttrValue, &str); 5] = [
        (AttrValue::Int(-3), "Int(-3)"),
        (AttrValue::Float(0.5), "Float(0.5)"),
        (AttrValue::Bool(true), "Bool(true)"),
        (AttrValue::Type(DType::F32), "Type(F32)"),
        (AttrValue::from(vec![1i64, 2]), "List(Int([1, 2]))"),
    ];
    for (value, debug) in cases {
        assert_eq!(format!("{value:?}"), debug);
    }
    // The pretty form nests as a derived Debug does.
    assert_eq!(
        format!("{:#?}", AttrValue::from("a")),
        "String(\n    \"a\",\n)"
    );
}

/// Short strings of the bytes that escaping could confuse: quotes, a
/// backslash, `x` and hex digits, and the two bytes of UTF-8 `é` alone, so
/// that equal and nearly equal pairs are common.
fn tricky_bytes() -> impl Strategy<Value = Vec<u8>> {
    let bytes = vec![b'"', b'\'', b'\\', b'x', b'c', b'3', b'b', 0xc3, 0xa9, 0xff];
    proptest::collection::vec(proptest::sample::select(bytes), 0..5)
}

proptest! {
    #[test]
    fn debug_of_a_utf8_string_value_is_the_str_s_debug(s in ".*") {
        prop_assert_eq!(
            format!("{:?}", AttrValue::from(s.as_str())),
            format!("String({s:?})")
        );
    }

    /// Tests compare op definitions by their `Debug` text: two different
    /// byte strings must never print alike.
    #[test]
    fn different_byte_strings_never_debug_alike(a in tricky_bytes(), b in tricky_bytes()) {
        let debug = |bytes: &[u8]| format!("{:?}", AttrValue::String(bytes.to_vec()));
        prop_assert_eq!(a == b, debug(&a) == debug(&b));
    }
}
