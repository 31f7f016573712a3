//! Malformed specs give the right error: which spec, what, where, and how to
//! fix it.

use std::ops::Range;

use op_spec::{OpDefBuilder, SpecError, SpecSource};

/// Every error of a build that must fail.
fn errors(b: OpDefBuilder) -> Vec<SpecError> {
    match b.build() {
        Ok(op) => panic!("{} should not build", op.name),
        Err(e) => e.0,
    }
}

/// The one error of an op with the attr `spec` alone.
#[track_caller]
fn attr_err(spec: &str) -> SpecError {
    only(errors(OpDefBuilder::new("Op").attr(spec)))
}

/// The one error of an op with the input `spec` and the attrs `N: int`,
/// `T: type`, `L: list(type)` and `F: float` to refer to.
#[track_caller]
fn input_err(spec: &str) -> SpecError {
    only(errors(
        OpDefBuilder::new("Op")
            .attr("N: int")
            .attr("T: type")
            .attr("L: list(type)")
            .attr("F: float")
            .input(spec),
    ))
}

#[track_caller]
fn only(mut errors: Vec<SpecError>) -> SpecError {
    assert_eq!(
        errors.len(),
        1,
        "expected one error, got {}:\n{}",
        errors.len(),
        errors
            .iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
    errors.pop().unwrap()
}

/// Checks an error about an ASCII spec: its source, span (so its column),
/// message and help.
#[track_caller]
fn check(e: &SpecError, source: SpecSource, span: Range<usize>, message: &str, help: Option<&str>) {
    assert_eq!(e.source, source, "{e}");
    assert_eq!(e.message, message, "{e}");
    assert_eq!(e.span, span, "{e}");
    assert!(e.spec.is_ascii(), "check() counts columns in bytes");
    assert_eq!(e.column(), span.start + 1, "{e}");
    assert_eq!(e.help.as_deref(), help, "{e}");
    assert_eq!(e.op, "Op");
}

// ---------------------------------------------------------------------------
// Attr types.

#[test]
fn unknown_attr_types() {
    check(
        &attr_err("T: flaot"),
        SpecSource::Attr(0),
        3..8,
        "unknown attr type 'flaot'",
        Some("did you mean 'float'?"),
    );
    // A tensor type where an attr type belongs: the whole word is reported,
    // not the '32' after the 'int' keyword.
    check(
        &attr_err("T: int32"),
        SpecSource::Attr(0),
        3..8,
        "unknown attr type 'int32'",
        Some(
            "'int32' is a tensor type, not an attr type: to restrict a `type` attr to it write '{int32}'",
        ),
    );
    check(
        &attr_err("T: types"),
        SpecSource::Attr(0),
        3..8,
        "unknown attr type 'types'",
        Some("did you mean 'type'?"),
    );
    check(
        &attr_err("T: float_ref"),
        SpecSource::Attr(0),
        3..12,
        "unknown attr type 'float_ref'",
        Some(
            "reference types cannot be attr values: to restrict a `type` attr to float write '{float}'",
        ),
    );
    let all_kinds = "attr types are string, int, float, bool, type, shape, tensor, func, list(...), \
                     a set such as {int32, float} or {'a', 'b'}, numbertype, realnumbertype or quantizedtype";
    check(
        &attr_err("x: listy(int)"),
        SpecSource::Attr(0),
        3..8,
        "unknown attr type 'listy'",
        Some(all_kinds),
    );
    check(
        &attr_err("x: "),
        SpecSource::Attr(0),
        3..4,
        "missing attr type after ':'",
        Some(all_kinds),
    );
    // A non-ASCII char is one column wide and never split.
    let e = attr_err("T: é");
    assert_eq!((e.span.clone(), e.column()), (3..5, 4));
    assert_eq!(e.message, "unknown attr type 'é'");
}

#[test]
fn type_sets() {
    check(
        &attr_err("T: {float, in32}"),
        SpecSource::Attr(0),
        11..15,
        "unknown type 'in32'",
        Some("did you mean 'int32'?"),
    );
    check(
        &attr_err("T: {}"),
        SpecSource::Attr(0),
        4..5,
        "empty type set",
        Some("list the allowed types, e.g. {float, int32}"),
    );
    check(
        &attr_err("T: {DT_INT32}"),
        SpecSource::Attr(0),
        4..12,
        "expected a type name, found 'DT_INT32'",
        Some("types in a set are written by their spec names: 'int32'"),
    );
    check(
        &attr_err("T: {float_ref}"),
        SpecSource::Attr(0),
        9..14,
        "expected ',' or '}' after a type in the set",
        Some("reference types cannot be attr values; write the base type"),
    );
    check(
        &attr_err("T: {float, int32} extra"),
        SpecSource::Attr(0),
        18..23,
        "unexpected 'extra' after the attr type",
        Some("after the type may come '>= <minimum>' (int and list attrs) and '= <default>'"),
    );
}

#[test]
fn unterminated_sets_point_past_the_end() {
    // The span is one byte past the end of the spec: where the '}' should be.
    for (spec, end) in [("T: {float, int32", 16), ("T: {float", 9), ("T: {", 4)] {
        check(
            &attr_err(spec),
            SpecSource::Attr(0),
            end..end + 1,
            "missing '}' to close the type set",
            None,
        );
    }
    check(
        &attr_err("T: {float,"),
        SpecSource::Attr(0),
        10..11,
        "missing '}' to close the type set",
        None,
    );
    check(
        &attr_err("e: {'a', 'b'"),
        SpecSource::Attr(0),
        12..13,
        "missing '}' to close the string set",
        None,
    );
    check(
        &attr_err("e: {'a', b}"),
        SpecSource::Attr(0),
        9..11,
        "expected a quoted string in the set",
        Some("a string set is written {'apple', 'orange'}"),
    );
    check(
        &attr_err("e: {'a', 'b}"),
        SpecSource::Attr(0),
        9..12,
        "unterminated string",
        None,
    );
}

#[test]
fn lists() {
    check(
        &attr_err("l: list(list(int))"),
        SpecSource::Attr(0),
        8..13,
        "list(list(...)) is not an attr type",
        Some(
            "an attr list holds values of one of the scalar kinds; nested lists are not supported",
        ),
    );
    check(
        &attr_err("l: list(int"),
        SpecSource::Attr(0),
        11..12,
        "expected ')' to close 'list('",
        None,
    );
    check(
        &attr_err("l: list(int >= 2"),
        SpecSource::Attr(0),
        12..16,
        "expected ')' to close 'list('",
        None,
    );
}

// ---------------------------------------------------------------------------
// Minimums.

#[test]
fn minimums() {
    check(
        &attr_err("f: float >= 1"),
        SpecSource::Attr(0),
        9..13,
        "unexpected '>= 1' after the attr type",
        Some("only int and list attrs can have a minimum; 'float' is float"),
    );
    let help = Some("write e.g. 'N: int >= 1' or 'T: list(type) >= 2'");
    let message = "expected an integer lower limit after '>='";
    check(
        &attr_err("a: int >= x"),
        SpecSource::Attr(0),
        9..11,
        message,
        help,
    );
    check(
        &attr_err("a: int >="),
        SpecSource::Attr(0),
        9..10,
        message,
        help,
    );
    check(
        &attr_err("a: int >= 99999999999999999999"),
        SpecSource::Attr(0),
        10..30,
        message,
        help,
    );
    check(
        &attr_err("N: int >= 1x"),
        SpecSource::Attr(0),
        11..12,
        "unexpected 'x' after the attr type",
        Some("after the type may come '>= <minimum>' (int and list attrs) and '= <default>'"),
    );
    // A negative minimum is fine for an int, not for a list; the error
    // points at the minimum.
    assert!(OpDefBuilder::new("Op").attr("a: int >= -2").build().is_ok());
    check(
        &attr_err("l: list(int) >= -1"),
        SpecSource::Attr(0),
        16..18,
        "attr 'l' with list type must have a non-negative minimum, not -1",
        None,
    );
    // An int attr with a negative minimum cannot be a length.
    let e = only(errors(
        OpDefBuilder::new("Op")
            .attr("N: int >= -1")
            .input("x: N * float"),
    ));
    check(
        &e,
        SpecSource::Input(0),
        3..4,
        "attr 'N' used as the length of 'x' must have minimum >= 0",
        None,
    );
}

// ---------------------------------------------------------------------------
// Defaults.

#[test]
fn defaults_that_do_not_parse() {
    check(
        &attr_err("i: int = 1.5"),
        SpecSource::Attr(0),
        9..10,
        "invalid default value: expected an int64, found '1.5'",
        Some("an int default is written as in TensorFlow, e.g. 0"),
    );
    check(
        &attr_err("i: int = 9223372036854775808"),
        SpecSource::Attr(0),
        9..28,
        "invalid default value: 9223372036854775808 is out of range for an int64",
        Some("an int default is written as in TensorFlow, e.g. 0"),
    );
    // A sign with nothing after it is a span of its own, inside the spec.
    check(
        &attr_err("f: float = 1-"),
        SpecSource::Attr(0),
        12..13,
        "invalid default value: unexpected '-' after the value",
        Some("a float default is written as in TensorFlow, e.g. 1.0"),
    );
    check(
        &attr_err("x: int = "),
        SpecSource::Attr(0),
        9..10,
        "invalid default value: missing value after '='",
        Some("an int default is written as in TensorFlow, e.g. 0"),
    );
    check(
        &attr_err("s: string = foo"),
        SpecSource::Attr(0),
        12..15,
        "invalid default value: expected a quoted string",
        Some("a string default is written as in TensorFlow, e.g. 'foo'"),
    );
    check(
        &attr_err("s: string = 'abc"),
        SpecSource::Attr(0),
        12..13,
        "invalid default value: unterminated string",
        Some("a string default is written as in TensorFlow, e.g. 'foo'"),
    );
    check(
        &attr_err("s: string = 'a' junk"),
        SpecSource::Attr(0),
        16..20,
        "invalid default value: unexpected 'junk' after the value",
        Some("a string default is written as in TensorFlow, e.g. 'foo'"),
    );
    check(
        &attr_err("l: list(int) = 1"),
        SpecSource::Attr(0),
        15..16,
        "invalid default value: a list value must be written in brackets, like [1, 2] or []",
        Some("a list(int) default is written in brackets, e.g. [] or [0]"),
    );
    check(
        &attr_err("sh: shape = { dims { size: 1 } }"),
        SpecSource::Attr(0),
        14..18,
        "invalid default value: TensorShapeProto has no field 'dims' (did you mean 'dim'?)",
        Some(
            "a shape default is written as in TensorFlow, e.g. { dim { size: 1 } dim { size: 2 } }",
        ),
    );
    check(
        &attr_err("T: type = int32"),
        SpecSource::Attr(0),
        10..15,
        "invalid default value: unknown type 'int32' (types are written as enum names here: DT_INT32)",
        Some("a type default is written as in TensorFlow, e.g. DT_INT32"),
    );
    check(
        &attr_err("l: list(type) = [DT_FLOAT_REF]"),
        SpecSource::Attr(0),
        17..29,
        "invalid default value: reference type DT_FLOAT_REF is not allowed here; use DT_FLOAT",
        Some("a list(type) default is written in brackets, e.g. [] or [DT_INT32]"),
    );
    check(
        &attr_err("b: bool = 2"),
        SpecSource::Attr(0),
        10..11,
        "invalid default value: expected true or false",
        Some("a bool default is written as in TensorFlow, e.g. true"),
    );
    // As protobuf's text format: a float written as an integer is decimal.
    check(
        &attr_err("f: float = 0x10"),
        SpecSource::Attr(0),
        11..15,
        "invalid default value: expected a decimal number, found '0x10'",
        Some("a float default is written as in TensorFlow, e.g. 1.0"),
    );
}

#[test]
fn defaults_that_violate_their_own_constraint() {
    let prefix = "the default does not satisfy the attr's own constraint: ";
    check(
        &attr_err("T: {float, int32} = DT_INT64"),
        SpecSource::Attr(0),
        20..28,
        &format!(
            "{prefix}Value for attr 'T' of int64 is not in the list of allowed values: float, int32"
        ),
        None,
    );
    check(
        &attr_err("a: int >= 2 = 1"),
        SpecSource::Attr(0),
        14..15,
        &format!("{prefix}Value for attr 'a' of 1 must be at least minimum 2"),
        None,
    );
    check(
        &attr_err("l: list(int) >= 2 = [1]"),
        SpecSource::Attr(0),
        20..23,
        &format!("{prefix}Length for attr 'l' of 1 must be at least minimum 2"),
        None,
    );
    check(
        &attr_err("e: {'a','b'} = 'c'"),
        SpecSource::Attr(0),
        15..18,
        &format!(
            "{prefix}Value for attr 'e' of \"c\" is not in the list of allowed values: \"a\", \"b\""
        ),
        None,
    );
    check(
        &attr_err("l: list({'a','b'}) = ['a', 'z']"),
        SpecSource::Attr(0),
        21..31,
        &format!(
            "{prefix}Value for attr 'l' of \"z\" is not in the list of allowed values: \"a\", \"b\""
        ),
        None,
    );
    check(
        &attr_err("t: tensor = { int_val: 1 }"),
        SpecSource::Attr(0),
        12..26,
        &format!(
            "{prefix}Value for attr 't' is not a valid tensor: it has no dtype (write e.g. {{ dtype: DT_INT32 int_val: 5 }})"
        ),
        None,
    );
    // The implicit minimum of a length counts too: N * T makes N >= 1.
    let e = only(errors(
        OpDefBuilder::new("Op")
            .attr("N: int = 0")
            .input("x: N * float"),
    ));
    check(
        &e,
        SpecSource::Attr(0),
        9..10,
        &format!("{prefix}Value for attr 'N' of 0 must be at least minimum 1"),
        None,
    );
}

/// A shape default must be a shape, by TensorFlow's rules: each dimension -1
/// (unknown) or at least 0, at most 254 of them, none with an unknown rank.
/// The error points at the size, dim or field that breaks the rule.
#[test]
fn shape_defaults_that_are_not_shapes() {
    let shape_help = Some(
        "a shape default is written as in TensorFlow, e.g. { dim { size: 1 } dim { size: 2 } }",
    );
    check(
        &attr_err("sh: shape = { dim { size: 2 } dim { size: -5 } }"),
        SpecSource::Attr(0),
        42..44,
        "invalid default value: dimension 1 of [2,-5] is -5, but a dimension must be -1 (unknown) or at least 0",
        shape_help,
    );
    check(
        &attr_err(
            "l: list(shape) = [{ dim { size: -1 } }, { dim { size: -9223372036854775808 } }]",
        ),
        SpecSource::Attr(0),
        54..74,
        "invalid default value: dimension 0 of [-9223372036854775808] is -9223372036854775808, but a dimension must be -1 (unknown) or at least 0",
        Some(
            "a list(shape) default is written in brackets, e.g. [] or [{ dim { size: 1 } dim { size: 2 } }]",
        ),
    );
    check(
        &attr_err("sh: shape = { unknown_rank: true dim { size: 1 } }"),
        SpecSource::Attr(0),
        14..26,
        "invalid default value: <unknown>[1] has an unknown rank but 1 dimension(s): a shape of unknown rank must have none",
        shape_help,
    );
    let dims = |n: usize| "dim { size: 1 } ".repeat(n);
    assert!(
        OpDefBuilder::new("Op")
            .attr(format!("sh: shape = {{ {}}}", dims(254)))
            .build()
            .is_ok()
    );
    check(
        &attr_err(&format!("sh: shape = {{ {}}}", dims(255))),
        SpecSource::Attr(0),
        4078..4081,
        "invalid default value: it has 255 dimensions, but a shape has at most 254",
        shape_help,
    );
}

// ---------------------------------------------------------------------------
// Names.

#[test]
fn bad_attr_names() {
    check(
        &attr_err("1x: int"),
        SpecSource::Attr(0),
        0..2,
        "invalid attr name '1x'",
        Some("attr names start with a letter and continue with letters, digits and underscores"),
    );
    check(
        &attr_err(" x: int"),
        SpecSource::Attr(0),
        0..1,
        "unexpected space before the name",
        Some("a spec starts with its name: remove the leading space"),
    );
    check(
        &attr_err(": int"),
        SpecSource::Attr(0),
        0..1,
        "missing attr name before ':'",
        Some(
            "write '<name>: <type>'; attr names start with a letter and continue with letters, digits and underscores",
        ),
    );
    check(
        &attr_err("x int"),
        SpecSource::Attr(0),
        2..5,
        "expected ':' after the name 'x'",
        Some("a spec reads '<name>: <type>': write 'x: int'"),
    );
    check(
        &attr_err("x-int"),
        SpecSource::Attr(0),
        1..5,
        "expected ':' after the name 'x'",
        Some("a spec reads '<name>: <type>'"),
    );
    check(
        &attr_err("float: int"),
        SpecSource::Attr(0),
        0..5,
        "attr can't have name 'float' that matches a data type",
        Some("rename the attr"),
    );
}

#[test]
fn bad_input_and_output_names() {
    let rule = "input and output names are lower snake case: a lowercase letter, then lowercase letters, digits and underscores";
    check(
        &input_err("X: float"),
        SpecSource::Input(0),
        0..1,
        "invalid input and output name 'X'",
        Some(&format!("{rule}: try 'x'")),
    );
    check(
        &input_err("myInput: float"),
        SpecSource::Input(0),
        0..7,
        "invalid input and output name 'myInput'",
        Some(&format!("{rule}: try 'my_input'")),
    );
    // A missing colon is not a bad name: the fix is the colon.
    check(
        &input_err("x float"),
        SpecSource::Input(0),
        2..7,
        "expected ':' after the name 'x'",
        Some("a spec reads '<name>: <type>': write 'x: float'"),
    );
    check(
        &input_err("values  N * float"),
        SpecSource::Input(0),
        8..17,
        "expected ':' after the name 'values'",
        Some("a spec reads '<name>: <type>': write 'values: N * float'"),
    );
    check(
        &input_err(" x: float"),
        SpecSource::Input(0),
        0..1,
        "unexpected space before the name",
        Some("a spec starts with its name: remove the leading space"),
    );
    let e = only(errors(OpDefBuilder::new("Op").output("Zeroed: int32")));
    check(
        &e,
        SpecSource::Output(0),
        0..6,
        "invalid input and output name 'Zeroed'",
        Some(&format!("{rule}: try 'zeroed'")),
    );
}

// ---------------------------------------------------------------------------
// Arg types.

#[test]
fn arg_types() {
    let forms = Some(
        "an input or output is written 'name: int32', 'name: T', 'name: N * T' or 'name: Ref(T)'",
    );
    check(
        &input_err("x:"),
        SpecSource::Input(0),
        2..3,
        "missing type after ':'",
        forms,
    );
    check(
        &input_err("x: 3"),
        SpecSource::Input(0),
        3..4,
        "expected a type or an attr name, found '3'",
        forms,
    );
    check(
        &input_err("x: float junk"),
        SpecSource::Input(0),
        9..13,
        "unexpected 'junk' after the type",
        None,
    );
    check(
        &input_err("x: N * T)"),
        SpecSource::Input(0),
        8..9,
        "unexpected ')' after the type",
        None,
    );
    check(
        &input_err("x: T *"),
        SpecSource::Input(0),
        5..6,
        "unexpected '*' after the type",
        Some("a list input is written 'name: N * T', with an attr or type name after '*'"),
    );
}

#[test]
fn refs() {
    check(
        &input_err("x: float_ref"),
        SpecSource::Input(0),
        3..12,
        "illegal use of ref type 'float_ref'",
        Some("write 'Ref(float)' instead"),
    );
    check(
        &input_err("x: Ref(float"),
        SpecSource::Input(0),
        12..13,
        "expected ')' to close 'Ref('",
        None,
    );
    check(
        &input_err("x: Ref(N * T"),
        SpecSource::Input(0),
        12..13,
        "expected ')' to close 'Ref('",
        None,
    );
    check(
        &input_err("x: Ref("),
        SpecSource::Input(0),
        7..8,
        "missing type after 'Ref('",
        Some(
            "an input or output is written 'name: int32', 'name: T', 'name: N * T' or 'name: Ref(T)'",
        ),
    );
}

#[test]
fn unknown_attrs_and_types() {
    // Near a declared attr.
    check(
        &input_err("x: Tt"),
        SpecSource::Input(0),
        3..5,
        "unknown type or attr 'Tt'",
        Some("did you mean the attr 'T'?"),
    );
    let e = only(errors(
        OpDefBuilder::new("Op").attr("Tin: type").input("x: Tni"),
    ));
    check(
        &e,
        SpecSource::Input(0),
        3..6,
        "unknown type or attr 'Tni'",
        Some("did you mean the attr 'Tin'?"),
    );
    // Near a dtype.
    check(
        &input_err("x: flaot"),
        SpecSource::Input(0),
        3..8,
        "unknown type or attr 'flaot'",
        Some("did you mean the type 'float'?"),
    );
    check(
        &input_err("x: int23"),
        SpecSource::Input(0),
        3..8,
        "unknown type or attr 'int23'",
        Some("did you mean the type 'int32'?"),
    );
    // Near nothing.
    let e = only(errors(OpDefBuilder::new("Op").input("x: Tout")));
    check(
        &e,
        SpecSource::Input(0),
        3..7,
        "unknown type or attr 'Tout'",
        Some(
            "declare the attr with the spec \"Tout: type\", or use a tensor type such as float or int32",
        ),
    );
    // Attrs may be declared after the args that use them.
    assert!(
        OpDefBuilder::new("Op")
            .input("x: T")
            .attr("T: type")
            .build()
            .is_ok()
    );
}

#[test]
fn attrs_of_the_wrong_kind() {
    check(
        &input_err("x: N"),
        SpecSource::Input(0),
        3..4,
        "attr 'N' has type int, so it cannot be the type of an input or output",
        Some("an arg's type comes from a `type` or `list(type)` attr; declare 'N: type'"),
    );
    check(
        &input_err("x: F"),
        SpecSource::Input(0),
        3..4,
        "attr 'F' has type float, so it cannot be the type of an input or output",
        Some("an arg's type comes from a `type` or `list(type)` attr; declare 'F: type'"),
    );
}

#[test]
fn lengths() {
    check(
        &input_err("x: M * T"),
        SpecSource::Input(0),
        3..4,
        "unknown attr 'M' used as the length of 'x'",
        Some("declare it with the spec \"M: int\""),
    );
    check(
        &input_err("x: F * T"),
        SpecSource::Input(0),
        3..4,
        "attr 'F' used as the length of 'x' has type float, not int",
        Some("declare 'F: int'; a list of several types is written 'name: T' with 'T: list(type)'"),
    );
    check(
        &input_err("x: N * L"),
        SpecSource::Input(0),
        7..8,
        "'x' can't have both a length attr and a list(type) attr",
        Some("use 'N * T' with 'T: type', or 'T' alone with 'T: list(type)'"),
    );
}

// ---------------------------------------------------------------------------
// Duplicates.

#[test]
fn duplicate_names_report_the_later_one() {
    let unique = "names must be unique across inputs, outputs and attrs";
    let errs = errors(
        OpDefBuilder::new("Op")
            .attr("x: int")
            .input("x: float")
            .output("x: float"),
    );
    assert_eq!(errs.len(), 2);
    check(
        &errs[0],
        SpecSource::Input(0),
        0..1,
        "duplicate name 'x'",
        Some(&format!("already used by Attr(\"x: int\"): {unique}")),
    );
    check(
        &errs[1],
        SpecSource::Output(0),
        0..1,
        "duplicate name 'x'",
        Some(&format!("already used by Input(\"x: float\"): {unique}")),
    );

    let e = only(errors(
        OpDefBuilder::new("Op").attr("a: int").attr("a: float"),
    ));
    check(
        &e,
        SpecSource::Attr(1),
        0..1,
        "duplicate name 'a'",
        Some(&format!("already used by Attr(\"a: int\"): {unique}")),
    );

    let e = only(errors(
        OpDefBuilder::new("Op")
            .input("in: float")
            .input("out: float")
            .output("in: int32"),
    ));
    check(
        &e,
        SpecSource::Output(0),
        0..2,
        "duplicate name 'in'",
        Some(&format!("already used by Input(\"in: float\"): {unique}")),
    );
}

// ---------------------------------------------------------------------------
// Op names.

#[test]
fn op_names() {
    let name_err = |name: &str| only(errors(OpDefBuilder::new(name)));
    let e = name_err("zero_out");
    assert_eq!(e.source, SpecSource::OpName);
    assert_eq!(e.op, "zero_out");
    assert_eq!(e.spec, "");
    assert_eq!(e.span, 0..0);
    assert_eq!(e.column(), 1);
    assert_eq!(
        e.message,
        "invalid op name 'zero_out' (did you use CamelCase?)"
    );
    assert_eq!(
        e.help.as_deref(),
        Some("op names are CamelCase, optionally namespaced as 'Namespace>Name': try 'ZeroOut'")
    );
    assert_eq!(
        e.to_string(),
        "op zero_out: invalid op name 'zero_out' (did you use CamelCase?)\n  \
         help: op names are CamelCase, optionally namespaced as 'Namespace>Name': try 'ZeroOut'"
    );

    let e = name_err("Ns>bad");
    assert_eq!(
        e.message,
        "invalid op name 'Ns>bad' (did you use CamelCase?)"
    );
    assert_eq!(
        e.help.as_deref(),
        Some("op names are CamelCase, optionally namespaced as 'Namespace>Name': try 'Ns>Bad'")
    );

    let general = "op names are CamelCase (an uppercase letter, then letters, digits and underscores), \
                   optionally namespaced as 'Namespace>Name'";
    for name in ["", "123", "Ns>", ">A"] {
        let e = name_err(name);
        assert_eq!(
            e.message,
            format!("invalid op name '{name}' (did you use CamelCase?)")
        );
        assert_eq!(e.help.as_deref(), Some(general), "{name}");
    }

    for ok in [
        "_internal",
        "_lower_case",
        "ZeroOut",
        "Ns>ZeroOut",
        "A>B>C",
        "Op_2",
    ] {
        assert!(OpDefBuilder::new(ok).build().is_ok(), "{ok}");
    }
}

// ---------------------------------------------------------------------------
// Several errors, and no cascades.

#[test]
fn every_error_comes_back_in_spec_order() {
    let errs = errors(
        OpDefBuilder::new("zero_out")
            .input("ToZero: T")
            .output("zeroed: U")
            .attr("T: {float, int32} = DT_INT64")
            .attr("N: flaot")
            .input("y: N * float")
            .output("z: float_ref"),
    );
    let got: Vec<(SpecSource, &str)> = errs
        .iter()
        .map(|e| (e.source.clone(), e.message.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (
                SpecSource::OpName,
                "invalid op name 'zero_out' (did you use CamelCase?)"
            ),
            (
                SpecSource::Attr(0),
                "the default does not satisfy the attr's own constraint: Value for attr 'T' of int64 is not in the list of allowed values: float, int32"
            ),
            (SpecSource::Attr(1), "unknown attr type 'flaot'"),
            (
                SpecSource::Input(0),
                "invalid input and output name 'ToZero'"
            ),
            (SpecSource::Output(0), "unknown type or attr 'U'"),
            (SpecSource::Output(1), "illegal use of ref type 'float_ref'"),
        ]
    );
    // 'y: N * float' refers to the broken attr N: no error of its own.
    assert!(errs.iter().all(|e| e.source != SpecSource::Input(1)));
    assert_eq!(errs[4].help.as_deref(), Some("did you mean the attr 'T'?"));
    // All of them in the Display of the errors, one after the other.
    let all = op_spec::SpecErrors(errs.clone()).to_string();
    let shown: Vec<String> = errs.iter().map(|e| e.to_string()).collect();
    assert_eq!(all, shown.join("\n"));
}

#[test]
fn a_broken_attr_gives_one_error() {
    // Inputs and outputs that use a broken attr, as a type or as a length,
    // report nothing more.
    let errs = errors(
        OpDefBuilder::new("Op")
            .attr("T: {float, in32}")
            .attr("N: list(int")
            .input("x: T")
            .input("xs: N * T")
            .output("y: Ref(T)")
            .output("ys: N * float"),
    );
    assert_eq!(errs.len(), 2, "{errs:#?}");
    check(
        &errs[0],
        SpecSource::Attr(0),
        11..15,
        "unknown type 'in32'",
        Some("did you mean 'int32'?"),
    );
    check(
        &errs[1],
        SpecSource::Attr(1),
        11..12,
        "expected ')' to close 'list('",
        None,
    );
    // An attr whose colon is missing is broken too, and so are the docs
    // that describe it: one error for the one mistake.
    let errs = errors(
        OpDefBuilder::new("Op")
            .attr("T type")
            .input("x: T")
            .output("y: T")
            .doc("Copies x.\n\nT: the type.\nx: the input."),
    );
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert_eq!(errs[0].source, SpecSource::Attr(0));
    assert_eq!(errs[0].message, "expected ':' after the name 'T'");
    // So are the docs of an arg whose own spec is broken.
    let errs = errors(
        OpDefBuilder::new("Op")
            .input("x float")
            .output("y: float")
            .doc("Copies x.\n\nx: the input.\ny: the copy."),
    );
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert_eq!(errs[0].source, SpecSource::Input(0));
    // But a name that no attr spec starts with is still unknown.
    let errs = errors(
        OpDefBuilder::new("Op")
            .attr("T: {float, in32}")
            .input("x: U"),
    );
    assert_eq!(errs.len(), 2);
    assert_eq!(errs[1].message, "unknown type or attr 'U'");
}

// ---------------------------------------------------------------------------
// How errors are shown.

#[test]
fn display_shows_the_spec_with_carets_under_the_span() {
    let e = attr_err("T: {float, in32}");
    assert_eq!(
        e.to_string(),
        concat!(
            "op Op: Attr(\"T: {float, in32}\") at column 12: unknown type 'in32'\n",
            "    T: {float, in32}\n",
            "               ^^^^\n",
            "  help: did you mean 'int32'?",
        )
    );
    // A span past the end gets one caret after the last char; no help, no help line.
    let e = input_err("x: Ref(float");
    assert_eq!(
        e.to_string(),
        concat!(
            "op Op: Input(\"x: Ref(float\") at column 13: expected ')' to close 'Ref('\n",
            "    x: Ref(float\n",
            "                ^",
        )
    );
    // Carets count chars, not bytes.
    let e = attr_err("é: int");
    assert_eq!(e.column(), 1);
    assert_eq!(
        e.to_string(),
        concat!(
            "op Op: Attr(\"é: int\") at column 1: invalid attr name 'é'\n",
            "    é: int\n",
            "    ^\n",
            "  help: attr names start with a letter and continue with letters, digits and underscores",
        )
    );
    let e = only(errors(OpDefBuilder::new("Op").attr("s: string = 'é' x")));
    assert_eq!(e.column(), 17);
    assert!(
        e.to_string()
            .contains("\n    s: string = 'é' x\n                    ^\n")
    );
}

#[test]
fn one_line() {
    assert_eq!(
        attr_err("T: flaot").one_line(),
        "Attr(\"T: flaot\") at column 4: unknown attr type 'flaot' (help: did you mean 'float'?)"
    );
    assert_eq!(
        input_err("x: float junk").one_line(),
        "Input(\"x: float junk\") at column 10: unexpected 'junk' after the type"
    );
    let e = only(errors(OpDefBuilder::new("zero_out")));
    assert_eq!(
        e.one_line(),
        "invalid op name 'zero_out' (did you use CamelCase?) (help: op names are CamelCase, \
         optionally namespaced as 'Namespace>Name': try 'ZeroOut')"
    );
}

#[test]
fn hand_made_errors_display_without_panicking() {
    // The fields are public: a span off the end or inside a char still shows.
    let e = SpecError {
        op: "Op".into(),
        source: SpecSource::Attr(0),
        spec: "é: int".into(),
        span: 1..100,
        message: "m".into(),
        help: None,
    };
    assert!(e.to_string().ends_with("\n    é: int\n    ^^^^^^"), "{e}");
    let _ = e.one_line();
}

// ---------------------------------------------------------------------------
// Full types.

/// The one error of `Shape` with the full-type spec `spec` (its attrs `T`,
/// `out_type` and `N: int`, its input `input` and output `output`).
#[track_caller]
fn full_type_err(spec: &str) -> SpecError {
    only(errors(
        OpDefBuilder::new("Op")
            .attr("T: type")
            .attr("out_type: {int32, int64} = DT_INT32")
            .attr("N: int")
            .input("input: T")
            .output("output: out_type")
            .full_type(spec),
    ))
}

#[test]
fn full_types_that_do_not_read() {
    let ft = SpecSource::FullType(0);
    check(
        &full_type_err("output: TFT_SHAPE_TENSR[TFT_VAR{'out_type'}]"),
        ft.clone(),
        8..23,
        "unknown full type 'TFT_SHAPE_TENSR'",
        Some("did you mean 'TFT_SHAPE_TENSOR'?"),
    );
    check(
        &full_type_err("output: shape_tensor[TFT_VAR{'out_type'}]"),
        ft.clone(),
        8..20,
        "unknown full type 'shape_tensor'",
        Some("did you mean 'TFT_SHAPE_TENSOR'?"),
    );
    // TensorFlow's docs write a variable's name in brackets.
    check(
        &full_type_err("output: TFT_SHAPE_TENSOR[TFT_VAR[\"out_type\"]]"),
        ft.clone(),
        33..43,
        "expected a full type in the brackets, found a string",
        Some("a type's attr is written in braces after its args: TFT_VAR{'..'}"),
    );
    check(
        &full_type_err("output: TFT_SHAPE_TENSOR[TFT_VAR{out_type}]"),
        ft.clone(),
        33..41,
        "unquoted attr 'out_type'",
        Some("a string attr is quoted: TFT_VAR{'out_type'}"),
    );
    check(
        &full_type_err("output TFT_SHAPE_TENSOR"),
        ft,
        7..23,
        "expected ':' after the name 'output'",
        Some("a spec reads '<name>: <type>': write 'output: TFT_SHAPE_TENSOR'"),
    );
}

#[test]
fn full_types_that_name_what_the_op_lacks() {
    let ft = SpecSource::FullType(0);
    check(
        &full_type_err("output: TFT_SHAPE_TENSOR[TFT_VAR{'out_typ'}]"),
        ft.clone(),
        33..42,
        "TFT_VAR names no attr of the op: 'out_typ'",
        Some("did you mean 'out_type'?"),
    );
    check(
        &full_type_err("output: TFT_SHAPE_TENSOR[TFT_VAR{'dtype'}]"),
        ft.clone(),
        33..40,
        "TFT_VAR names no attr of the op: 'dtype'",
        Some("a type variable stands for a `type` or `list(type)` attr of the op: 'T', 'out_type'"),
    );
    check(
        &full_type_err("output: TFT_TENSOR[TFT_VAR{'N'}]"),
        ft.clone(),
        27..30,
        "TFT_VAR names attr 'N' of type int, not a type",
        Some("a type variable stands for a `type` or `list(type)` attr"),
    );
    check(
        &full_type_err("output: TFT_VAR[TFT_ANY]{'T'}"),
        ft.clone(),
        16..23,
        "TFT_VAR takes no args, but has 1",
        Some("a type variable stands for the type of the attr it names: TFT_VAR{'T'}"),
    );
    check(
        &full_type_err("output: TFT_FOR_EACH[TFT_PRODUCT, TFT_TENSOR[TFT_VAR{'T'}], TFT_ANY]"),
        ft.clone(),
        60..67,
        "the last arg of TFT_FOR_EACH is the TFT_VAR it expands, not TFT_ANY",
        Some("name the attr whose types the template repeats for: TFT_VAR{'T'}"),
    );
    check(
        &full_type_err("outptu: TFT_SHAPE_TENSOR"),
        ft.clone(),
        0..6,
        "no output named 'outptu'",
        Some("did you mean 'output'?"),
    );
    check(
        &full_type_err("input: TFT_SHAPE_TENSOR"),
        ft,
        0..5,
        "'input' is an input: a full type annotates an output",
        Some("TensorFlow's type constructors give the op's outputs their full types"),
    );
    // A second full type for one output.
    let e = only(errors(
        OpDefBuilder::new("Op")
            .attr("T: type")
            .output("y: T")
            .full_type("y: TFT_TENSOR[TFT_VAR{'T'}]")
            .full_type("y: TFT_ANY"),
    ));
    check(
        &e,
        SpecSource::FullType(1),
        0..1,
        "output 'y' has a second full type",
        Some(
            "FullType(\"y: TFT_TENSOR[TFT_VAR{'T'}]\") gave it one already: an output has one full type",
        ),
    );
}

#[test]
fn a_full_type_on_a_broken_spec_is_no_second_error() {
    // The attr the variable names is broken: one error, the attr's.
    let e = only(errors(
        OpDefBuilder::new("Op")
            .attr("T: tipe")
            .output("y: int32")
            .full_type("y: TFT_TENSOR[TFT_VAR{'T'}]"),
    ));
    assert_eq!(e.source, SpecSource::Attr(0), "{e}");
    // The output it annotates is broken: one error, the output's.
    let e = only(errors(
        OpDefBuilder::new("Op")
            .output("y: flaot")
            .full_type("y: TFT_ANY"),
    ));
    assert_eq!(e.source, SpecSource::Output(0), "{e}");
    // Full-type errors come after the specs they refer to.
    let all = errors(
        OpDefBuilder::new("Op")
            .full_type("y: TFT_NOPE")
            .output("y: flaot")
            .output("z: int32")
            .full_type("z: TFT_NOPE")
            .attr("T: tipe"),
    );
    let sources: Vec<SpecSource> = all.iter().map(|e| e.source.clone()).collect();
    assert_eq!(
        sources,
        [
            SpecSource::Attr(0),
            SpecSource::Output(0),
            SpecSource::FullType(0),
            SpecSource::FullType(1)
        ]
    );
}
