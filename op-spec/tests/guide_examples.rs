//! Every op registration in the two "Adding a New Op" guides, parsed and
//! printed in TensorFlow's text format. The expected strings are the OpDefs
//! TensorFlow's registry produces for the same registrations (field order,
//! implicit minimums, type-class expansion, default encodings).

use op_spec::{OpDef, OpDefBuilder, pbtxt};

fn op(name: &str, attrs: &[&str], inputs: &[&str], outputs: &[&str]) -> OpDef {
    let mut b = OpDefBuilder::new(name);
    for a in attrs {
        b = b.attr(*a);
    }
    for i in inputs {
        b = b.input(*i);
    }
    for o in outputs {
        b = b.output(*o);
    }
    match b.build() {
        Ok(op) => op,
        Err(e) => panic!("{name} should parse:\n{e}"),
    }
}

fn short(name: &str, attrs: &[&str], inputs: &[&str], outputs: &[&str]) -> String {
    pbtxt::op_def_to_short_string(&op(name, attrs, inputs, outputs))
}

const NUMBER_TYPES: &str = "type: DT_FLOAT type: DT_DOUBLE type: DT_INT32 type: DT_UINT8 type: DT_INT16 \
    type: DT_INT8 type: DT_COMPLEX64 type: DT_INT64 type: DT_QINT8 type: DT_QUINT8 type: DT_QINT32 \
    type: DT_BFLOAT16 type: DT_QINT16 type: DT_QUINT16 type: DT_UINT16 type: DT_COMPLEX128 \
    type: DT_HALF type: DT_UINT32 type: DT_UINT64";

const REAL_NUMBER_TYPES: &str = "type: DT_FLOAT type: DT_DOUBLE type: DT_INT32 type: DT_UINT8 \
    type: DT_INT16 type: DT_INT8 type: DT_INT64 type: DT_BFLOAT16 type: DT_UINT16 type: DT_HALF \
    type: DT_UINT32 type: DT_UINT64";

fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn zero_out_int32() {
    assert_eq!(
        short("ZeroOut", &[], &["to_zero: int32"], &["zeroed: int32"]),
        r#"name: "ZeroOut" input_arg { name: "to_zero" type: DT_INT32 } output_arg { name: "zeroed" type: DT_INT32 }"#
    );
}

#[test]
fn zero_out_with_default_type_in_full_text_format() {
    let zero_out = op(
        "ZeroOut",
        &["T: {float, int32} = DT_INT32"],
        &["to_zero: T"],
        &["zeroed: T"],
    );
    assert_eq!(
        pbtxt::op_list_to_string([&zero_out]),
        r#"op {
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
"#
    );
    assert!(pbtxt::op_def_to_short_string(&zero_out).contains(
        r#"attr { name: "T" type: "type" default_value { type: DT_INT32 } allowed_values { list { type: DT_FLOAT type: DT_INT32 } } }"#
    ));
}

#[test]
fn zero_out_variants() {
    assert_eq!(
        short(
            "ZeroOut",
            &["preserve_index: int"],
            &["to_zero: int32"],
            &["zeroed: int32"]
        ),
        r#"name: "ZeroOut" input_arg { name: "to_zero" type: DT_INT32 } output_arg { name: "zeroed" type: DT_INT32 } attr { name: "preserve_index" type: "int" }"#
    );
    assert_eq!(
        short(
            "ZeroOut",
            &["T: {float, double, int32}"],
            &["to_zero: T"],
            &["zeroed: T"]
        ),
        r#"name: "ZeroOut" input_arg { name: "to_zero" type_attr: "T" } output_arg { name: "zeroed" type_attr: "T" } attr { name: "T" type: "type" allowed_values { list { type: DT_FLOAT type: DT_DOUBLE type: DT_INT32 } } }"#
    );
    assert_eq!(
        short(
            "ZeroOut",
            &["T: realnumbertype"],
            &["to_zero: T"],
            &["zeroed: T"]
        ),
        squash(&format!(
            r#"name: "ZeroOut" input_arg {{ name: "to_zero" type_attr: "T" }} output_arg {{ name: "zeroed" type_attr: "T" }} attr {{ name: "T" type: "type" allowed_values {{ list {{ {REAL_NUMBER_TYPES} }} }} }}"#
        ))
    );
}

#[test]
fn attr_constraints() {
    assert_eq!(
        short("EnumExample", &["e: {'apple', 'orange'}"], &[], &[]),
        r#"name: "EnumExample" attr { name: "e" type: "string" allowed_values { list { s: "apple" s: "orange" } } }"#
    );
    assert_eq!(
        short(
            "RestrictedTypeExample",
            &["t: {int32, float, bool}"],
            &[],
            &[]
        ),
        r#"name: "RestrictedTypeExample" attr { name: "t" type: "type" allowed_values { list { type: DT_INT32 type: DT_FLOAT type: DT_BOOL } } }"#
    );
    assert_eq!(
        short("NumberType", &["t: numbertype"], &[], &[]),
        squash(&format!(
            r#"name: "NumberType" attr {{ name: "t" type: "type" allowed_values {{ list {{ {NUMBER_TYPES} }} }} }}"#
        ))
    );
    assert_eq!(
        short("NumberOrBooleanType", &["t: {numbertype, bool}"], &[], &[]),
        squash(&format!(
            r#"name: "NumberOrBooleanType" attr {{ name: "t" type: "type" allowed_values {{ list {{ {NUMBER_TYPES} type: DT_BOOL }} }} }}"#
        ))
    );
    assert_eq!(
        short("MinIntExample", &["a: int >= 2"], &[], &[]),
        r#"name: "MinIntExample" attr { name: "a" type: "int" has_minimum: true minimum: 2 }"#
    );
    assert_eq!(
        short(
            "TypeListExample",
            &["a: list({int32, float}) >= 3"],
            &[],
            &[]
        ),
        r#"name: "TypeListExample" attr { name: "a" type: "list(type)" has_minimum: true minimum: 3 allowed_values { list { type: DT_INT32 type: DT_FLOAT } } }"#
    );
    assert_eq!(
        short("AttrDefaultExample", &["i: int = 0"], &[], &[]),
        r#"name: "AttrDefaultExample" attr { name: "i" type: "int" default_value { i: 0 } }"#
    );
    assert_eq!(
        short(
            "AttrConstraintAndDefaultExample",
            &["i: int >= 1 = 1"],
            &[],
            &[]
        ),
        r#"name: "AttrConstraintAndDefaultExample" attr { name: "i" type: "int" default_value { i: 1 } has_minimum: true minimum: 1 }"#
    );
}

#[test]
fn defaults_of_every_type() {
    let got = short(
        "AttrDefaultExampleForAllTypes",
        &[
            "s: string = 'foo'",
            "i: int = 0",
            "f: float = 1.0",
            "b: bool = true",
            "ty: type = DT_INT32",
            "sh: shape = { dim { size: 1 } dim { size: 2 } }",
            "te: tensor = { dtype: DT_INT32 int_val: 5 }",
            "l_empty: list(int) = []",
            "l_int: list(int) = [2, 3, 5, 7]",
        ],
        &[],
        &[],
    );
    let want = squash(
        r#"name: "AttrDefaultExampleForAllTypes"
        attr { name: "s" type: "string" default_value { s: "foo" } }
        attr { name: "i" type: "int" default_value { i: 0 } }
        attr { name: "f" type: "float" default_value { f: 1 } }
        attr { name: "b" type: "bool" default_value { b: true } }
        attr { name: "ty" type: "type" default_value { type: DT_INT32 } }
        attr { name: "sh" type: "shape" default_value { shape { dim { size: 1 } dim { size: 2 } } } }
        attr { name: "te" type: "tensor" default_value { tensor { dtype: DT_INT32 int_val: 5 } } }
        attr { name: "l_empty" type: "list(int)" default_value { list { } } }
        attr { name: "l_int" type: "list(int)" default_value { list { i: 2 i: 3 i: 5 i: 7 } } }"#,
    );
    assert_eq!(got, want);
}

#[test]
fn string_to_number_and_multiple_ins_and_outs() {
    assert_eq!(
        short(
            "StringToNumber",
            &["out_type: {float, int32} = DT_FLOAT"],
            &["string_tensor: string"],
            &["output: out_type"]
        ),
        r#"name: "StringToNumber" input_arg { name: "string_tensor" type: DT_STRING } output_arg { name: "output" type_attr: "out_type" } attr { name: "out_type" type: "type" default_value { type: DT_FLOAT } allowed_values { list { type: DT_FLOAT type: DT_INT32 } } }"#
    );
    assert_eq!(
        short(
            "MultipleInsAndOuts",
            &[],
            &["y: int32", "z: float"],
            &["a: string", "b: int32"]
        ),
        r#"name: "MultipleInsAndOuts" input_arg { name: "y" type: DT_INT32 } input_arg { name: "z" type: DT_FLOAT } output_arg { name: "a" type: DT_STRING } output_arg { name: "b" type: DT_INT32 }"#
    );
    assert_eq!(
        short(
            "BuiltInTypesExample",
            &[],
            &["integers: int32", "complex_numbers: complex64"],
            &[]
        ),
        r#"name: "BuiltInTypesExample" input_arg { name: "integers" type: DT_INT32 } input_arg { name: "complex_numbers" type: DT_COMPLEX64 }"#
    );
}

#[test]
fn list_inputs_and_outputs() {
    type Case<'a> = (
        &'a str,
        &'a [&'a str],
        &'a [&'a str],
        &'a [&'a str],
        &'a str,
    );
    let cases: &[Case] = &[
        (
            "PolymorphicListExample",
            &["T: list(type)"],
            &["in: T"],
            &["out: T"],
            r#"input_arg { name: "in" type_list_attr: "T" } output_arg { name: "out" type_list_attr: "T" } attr { name: "T" type: "list(type)" has_minimum: true minimum: 1 }"#,
        ),
        (
            "ListTypeRestrictionExample",
            &["T: list({float, double})"],
            &["in: T"],
            &["out: T"],
            r#"input_arg { name: "in" type_list_attr: "T" } output_arg { name: "out" type_list_attr: "T" } attr { name: "T" type: "list(type)" has_minimum: true minimum: 1 allowed_values { list { type: DT_FLOAT type: DT_DOUBLE } } }"#,
        ),
        (
            "IntListInputExample",
            &["N: int"],
            &["in: N * int32"],
            &["out: int32"],
            r#"input_arg { name: "in" type: DT_INT32 number_attr: "N" } output_arg { name: "out" type: DT_INT32 } attr { name: "N" type: "int" has_minimum: true minimum: 1 }"#,
        ),
        (
            "SameListInputExample",
            &["N: int", "T: type"],
            &["in: N * T"],
            &["out: T"],
            r#"input_arg { name: "in" type_attr: "T" number_attr: "N" } output_arg { name: "out" type_attr: "T" } attr { name: "N" type: "int" has_minimum: true minimum: 1 } attr { name: "T" type: "type" }"#,
        ),
        (
            "MinLengthIntListExample",
            &["N: int >= 2"],
            &["in: N * int32"],
            &["out: int32"],
            r#"input_arg { name: "in" type: DT_INT32 number_attr: "N" } output_arg { name: "out" type: DT_INT32 } attr { name: "N" type: "int" has_minimum: true minimum: 2 }"#,
        ),
        (
            "MinimumLengthPolymorphicListExample",
            &["T: list(type) >= 3"],
            &["in: T"],
            &["out: T"],
            r#"input_arg { name: "in" type_list_attr: "T" } output_arg { name: "out" type_list_attr: "T" } attr { name: "T" type: "list(type)" has_minimum: true minimum: 3 }"#,
        ),
        (
            "PolymorphicSingleInput",
            &["T: type"],
            &["in: T"],
            &[],
            r#"input_arg { name: "in" type_attr: "T" } attr { name: "T" type: "type" }"#,
        ),
        (
            "RestrictedPolymorphicSingleInput",
            &["T: {int32, int64}"],
            &["in: T"],
            &[],
            r#"input_arg { name: "in" type_attr: "T" } attr { name: "T" type: "type" allowed_values { list { type: DT_INT32 type: DT_INT64 } } }"#,
        ),
        (
            "ArbitraryTensorSequenceExample",
            &["T: list(type)"],
            &["in: T"],
            &["out: T"],
            r#"input_arg { name: "in" type_list_attr: "T" } output_arg { name: "out" type_list_attr: "T" } attr { name: "T" type: "list(type)" has_minimum: true minimum: 1 }"#,
        ),
        (
            "RestrictedTensorSequenceExample",
            &["T: list({int32, int64})"],
            &["in: T"],
            &["out: T"],
            r#"input_arg { name: "in" type_list_attr: "T" } output_arg { name: "out" type_list_attr: "T" } attr { name: "T" type: "list(type)" has_minimum: true minimum: 1 allowed_values { list { type: DT_INT32 type: DT_INT64 } } }"#,
        ),
        (
            "Int32SequenceExample",
            &["NumTensors: int"],
            &["in: NumTensors * int32"],
            &[],
            r#"input_arg { name: "in" type: DT_INT32 number_attr: "NumTensors" } attr { name: "NumTensors" type: "int" has_minimum: true minimum: 1 }"#,
        ),
        (
            "SameTypeSequenceExample",
            &["NumTensors: int", "T: type"],
            &["in: NumTensors * T"],
            &[],
            r#"input_arg { name: "in" type_attr: "T" number_attr: "NumTensors" } attr { name: "NumTensors" type: "int" has_minimum: true minimum: 1 } attr { name: "T" type: "type" }"#,
        ),
    ];
    for (name, attrs, inputs, outputs, body) in cases {
        assert_eq!(
            short(name, attrs, inputs, outputs),
            format!(r#"name: "{name}" {body}"#),
            "{name}"
        );
    }
}

#[test]
fn backwards_compatible_evolution() {
    assert_eq!(
        short("MyGeneralUnaryOp", &[], &["in: float"], &["out: float"]),
        r#"name: "MyGeneralUnaryOp" input_arg { name: "in" type: DT_FLOAT } output_arg { name: "out" type: DT_FLOAT }"#
    );
    // The guide writes `numerictype`, which TensorFlow accepts as an alias of numbertype.
    assert_eq!(
        short(
            "MyGeneralUnaryOp",
            &["T: numerictype = DT_FLOAT"],
            &["in: T"],
            &["out: T"]
        ),
        squash(&format!(
            r#"name: "MyGeneralUnaryOp" input_arg {{ name: "in" type_attr: "T" }} output_arg {{ name: "out" type_attr: "T" }} attr {{ name: "T" type: "type" default_value {{ type: DT_FLOAT }} allowed_values {{ list {{ {NUMBER_TYPES} }} }} }}"#
        ))
    );
}

#[test]
fn example_op_of_the_newer_guide() {
    assert_eq!(
        short(
            "Example",
            &["T: numbertype"],
            &["input: T"],
            &["input_times_two: T"]
        ),
        squash(&format!(
            r#"name: "Example" input_arg {{ name: "input" type_attr: "T" }} output_arg {{ name: "input_times_two" type_attr: "T" }} attr {{ name: "T" type: "type" allowed_values {{ list {{ {NUMBER_TYPES} }} }} }}"#
        ))
    );
}

#[test]
fn refs_namespaces_and_statefulness() {
    assert_eq!(
        short(
            "RefExample",
            &["T: type", "N: int >= 0"],
            &["x: Ref(T)", "xs: Ref(N * T)"],
            &[]
        ),
        r#"name: "RefExample" input_arg { name: "x" type_attr: "T" is_ref: true } input_arg { name: "xs" type_attr: "T" number_attr: "N" is_ref: true } attr { name: "T" type: "type" } attr { name: "N" type: "int" has_minimum: true }"#
    );
    let create = op(
        "Examples>SimpleHashTableCreate",
        &["key_dtype: type", "value_dtype: type"],
        &[],
        &["output: resource"],
    );
    assert!(
        create.is_stateful,
        "a resource output makes the op stateful"
    );
    assert_eq!(
        pbtxt::op_def_to_short_string(&create),
        r#"name: "Examples>SimpleHashTableCreate" output_arg { name: "output" type: DT_RESOURCE } attr { name: "key_dtype" type: "type" } attr { name: "value_dtype" type: "type" } is_stateful: true"#
    );
    let flags = OpDefBuilder::new("AddLike")
        .attr("T: type")
        .input("a: T")
        .input("b: T")
        .output("sum: T")
        .set_is_commutative()
        .set_is_aggregate()
        .build()
        .unwrap();
    assert!(
        pbtxt::op_def_to_short_string(&flags).ends_with("is_aggregate: true is_commutative: true")
    );
}

#[test]
fn tensorflow_details_from_the_notes() {
    // Type sets keep source order and duplicates.
    let dup = op("Dup", &["T: {float, int32, float, numbertype}"], &[], &[]);
    assert_eq!(dup.attrs[0].allowed_types().unwrap().len(), 22);
    // float32 and float64 are aliases.
    assert_eq!(
        short("Alias", &["T: {float32, float64}"], &["x: float64"], &[]),
        r#"name: "Alias" input_arg { name: "x" type: DT_DOUBLE } attr { name: "T" type: "type" allowed_values { list { type: DT_FLOAT type: DT_DOUBLE } } }"#
    );
    // Negative minimums are kept; attrs no arg uses get no implicit minimum.
    assert_eq!(
        short("NegMin", &["a: int >= -2", "b: int"], &[], &[]),
        r#"name: "NegMin" attr { name: "a" type: "int" has_minimum: true minimum: -2 } attr { name: "b" type: "int" }"#
    );
    // Float defaults are float32 and keep the sign of zero; inf and nan parse.
    assert_eq!(
        short(
            "Floats",
            &[
                "a: float = -0.0",
                "b: float = inf",
                "c: float = -inf",
                "d: float = nan",
                "e: float = 1e-3"
            ],
            &[],
            &[]
        ),
        r#"name: "Floats" attr { name: "a" type: "float" default_value { f: -0 } } attr { name: "b" type: "float" default_value { f: inf } } attr { name: "c" type: "float" default_value { f: -inf } } attr { name: "d" type: "float" default_value { f: nan } } attr { name: "e" type: "float" default_value { f: 0.001 } }"#
    );
    // String escapes are decoded (and re-escaped on output).
    assert_eq!(
        short("Esc", &[r"s: string = 'a\'b\\c\n\t\x41'"], &[], &[]),
        r#"name: "Esc" attr { name: "s" type: "string" default_value { s: "a\'b\\c\n\tA" } }"#
    );
    // Shape defaults: unknown rank and the empty (scalar) shape.
    assert_eq!(
        short(
            "Shapes",
            &[
                "a: shape = { unknown_rank: true }",
                "b: shape = {}",
                "c: list(shape) = []"
            ],
            &[],
            &[]
        ),
        r#"name: "Shapes" attr { name: "a" type: "shape" default_value { shape { unknown_rank: true } } } attr { name: "b" type: "shape" default_value { shape { } } } attr { name: "c" type: "list(shape)" default_value { list { } } }"#
    );
    // Whitespace is allowed almost everywhere.
    assert_eq!(
        short(
            "Spaces",
            &[
                "N : int >= 1",
                "T :type",
                "L: list ( int ) >= 2 = [ 1 , 2 ]"
            ],
            &["x : N*T"],
            &[]
        ),
        r#"name: "Spaces" input_arg { name: "x" type_attr: "T" number_attr: "N" } attr { name: "N" type: "int" has_minimum: true minimum: 1 } attr { name: "T" type: "type" } attr { name: "L" type: "list(int)" default_value { list { i: 1 i: 2 } } has_minimum: true minimum: 2 }"#
    );
    // Internal ops skip the name check.
    assert!(OpDefBuilder::new("_internal_op").build().is_ok());
}

#[test]
fn docs_fill_summary_description_and_args() {
    let op = OpDefBuilder::new("ZeroOut")
        .input("to_zero: int32")
        .output("zeroed: int32")
        .doc(
            "Zeros all but the first element.\n\nLonger text\nover two lines.\n\nto_zero: The tensor\n  to zero.\nzeroed: A copy.\n",
        )
        .build()
        .unwrap();
    assert_eq!(op.summary, "Zeros all but the first element.");
    assert_eq!(op.description, "Longer text\nover two lines.");
    assert_eq!(op.inputs[0].description, "The tensor\nto zero.");
    assert_eq!(op.outputs[0].description, "A copy.");
    let err = OpDefBuilder::new("ZeroOut")
        .input("x: int32")
        .doc("Sum.\n\ny: nothing")
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("'y'"), "{err}");
}

#[test]
fn a_summary_wrapped_over_several_lines_is_read_whole() {
    let op = OpDefBuilder::new("FloorDiv")
        .input("x: int32")
        .doc("Returns x // y element-wise: the quotient rounded toward negative\n  infinity.\n\nMore.\n\nx: The dividend.")
        .build()
        .unwrap();
    assert_eq!(
        op.summary,
        "Returns x // y element-wise: the quotient rounded toward negative infinity."
    );
    assert_eq!(op.description, "More.");
    assert_eq!(op.inputs[0].description, "The dividend.");
    // A `name:` line right after the summary starts the arg docs.
    let op = OpDefBuilder::new("Neg")
        .input("x: int32")
        .doc("Negates.\nx: The value.")
        .build()
        .unwrap();
    assert_eq!(
        (op.summary.as_str(), op.inputs[0].description.as_str()),
        ("Negates.", "The value.")
    );
}
