//! Building nodes: attr inference from inputs, explicit attrs, defaults and
//! constraint checks, with errors that name the op and the attr or input.

use op_core::op_instance::{InputTypes, OpInstanceBuilder};
use op_core::{AttrValue, Code, DType, ListValue, OpDef, OpDefBuilder, ShapeValue};

fn zero_out() -> OpDef {
    OpDefBuilder::new("ZeroOut")
        .attr("T: {float, int32} = DT_INT32")
        .input("to_zero: T")
        .output("zeroed: T")
        .build()
        .unwrap()
}

fn message(result: op_core::Result<op_core::op_instance::OpInstance>) -> String {
    let err = result.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    err.message().to_owned()
}

#[test]
fn type_attr_is_inferred_from_the_input() {
    let op = zero_out();
    let node = OpInstanceBuilder::new(&op)
        .input(DType::F32)
        .build()
        .unwrap();
    assert_eq!(node.op(), "ZeroOut");
    assert_eq!(node.attr("T"), Some(&AttrValue::Type(DType::F32)));
    assert_eq!(node.input_types(), &[DType::F32]);
    assert_eq!(node.output_types(), &[DType::F32]);
    assert_eq!(node.get_attr::<DType>("T").unwrap(), DType::F32);
}

#[test]
fn inferred_type_outside_the_constraint_names_the_input() {
    let op = zero_out();
    assert_eq!(
        message(OpInstanceBuilder::new(&op).input(DType::I64).build()),
        "op ZeroOut: input 'to_zero' has type int64, but attr 'T' allows only float, int32"
    );
}

#[test]
fn fixed_input_types_are_checked() {
    let op = OpDefBuilder::new("MultipleInsAndOuts")
        .input("y: int32")
        .input("z: float")
        .output("a: string")
        .output("b: int32")
        .build()
        .unwrap();
    let node = OpInstanceBuilder::new(&op)
        .input(DType::I32)
        .input(DType::F32)
        .build()
        .unwrap();
    assert_eq!(node.output_types(), &[DType::String, DType::I32]);
    assert_eq!(node.output_range("b"), Some(1..2));
    assert_eq!(
        message(
            OpInstanceBuilder::new(&op)
                .input(DType::I32)
                .input(DType::F64)
                .build()
        ),
        "op MultipleInsAndOuts: input 'z' must be float, but a tensor of type double was given"
    );
    assert_eq!(
        message(OpInstanceBuilder::new(&op).input(DType::I32).build()),
        "op MultipleInsAndOuts: expects 2 input(s) (y, z), got 1"
    );
}

#[test]
fn conflicting_inferences_name_both_inputs() {
    let op = OpDefBuilder::new("AddLike")
        .attr("T: numbertype")
        .input("x: T")
        .input("y: T")
        .output("z: T")
        .build()
        .unwrap();
    assert_eq!(
        message(
            OpInstanceBuilder::new(&op)
                .input(DType::I32)
                .input(DType::F32)
                .build()
        ),
        "op AddLike: input 'y' has type float, which does not match type int32 of input 'x' (both are set by attr 'T')"
    );
}

#[test]
fn list_length_and_type_are_inferred() {
    let op = OpDefBuilder::new("SameListInputExample")
        .attr("N: int")
        .attr("T: type")
        .input("in: N * T")
        .output("out: T")
        .build()
        .unwrap();
    let node = OpInstanceBuilder::new(&op)
        .input_list(vec![DType::I64; 4])
        .build()
        .unwrap();
    assert_eq!(node.get_attr::<i64>("N").unwrap(), 4);
    assert_eq!(node.get_attr::<DType>("T").unwrap(), DType::I64);
    assert_eq!(node.input_range("in"), Some(0..4));
    assert_eq!(node.output_types(), &[DType::I64]);

    // N has an implicit minimum of 1, and an empty list cannot tell T.
    assert_eq!(
        message(
            OpInstanceBuilder::new(&op)
                .input_list(vec![])
                .attr("T", DType::F32)
                .build()
        ),
        "op SameListInputExample: input 'in' has 0 tensor(s), but attr 'N' requires at least 1"
    );
    // Single tensor where a list is expected.
    assert_eq!(
        message(OpInstanceBuilder::new(&op).input(DType::F32).build()),
        "op SameListInputExample: input 'in' takes a list of tensors, but a single tensor was given"
    );
}

#[test]
fn minimum_list_length() {
    let op = OpDefBuilder::new("MinLengthIntListExample")
        .attr("N: int >= 2")
        .input("in: N * int32")
        .output("out: int32")
        .build()
        .unwrap();
    assert!(
        OpInstanceBuilder::new(&op)
            .input_list(vec![DType::I32; 2])
            .build()
            .is_ok()
    );
    assert_eq!(
        message(
            OpInstanceBuilder::new(&op)
                .input_list(vec![DType::I32])
                .build()
        ),
        "op MinLengthIntListExample: input 'in' has 1 tensor(s), but attr 'N' requires at least 2"
    );
    assert_eq!(
        message(
            OpInstanceBuilder::new(&op)
                .input_list(vec![DType::I32, DType::F32])
                .build()
        ),
        "op MinLengthIntListExample: input 'in' is a list of int32, but it holds a tensor of type float"
    );
}

#[test]
fn type_list_attrs_are_inferred_and_typed_outputs_follow() {
    let op = OpDefBuilder::new("ListTypeRestrictionExample")
        .attr("T: list({float, double})")
        .input("in: T")
        .output("out: T")
        .build()
        .unwrap();
    let types = vec![DType::F32, DType::F64, DType::F32];
    let node = OpInstanceBuilder::new(&op)
        .input_list(types.clone())
        .build()
        .unwrap();
    assert_eq!(
        node.attr("T"),
        Some(&AttrValue::List(ListValue::Type(types.clone())))
    );
    assert_eq!(node.output_types(), &types[..]);
    assert_eq!(
        message(
            OpInstanceBuilder::new(&op)
                .input_list(vec![DType::F32, DType::I32])
                .build()
        ),
        "op ListTypeRestrictionExample: input 'in' has type int32, but attr 'T' allows only float, double"
    );
    assert_eq!(
        message(
            OpInstanceBuilder::new(&op)
                .input_types(InputTypes::List(vec![]))
                .build()
        ),
        "op ListTypeRestrictionExample: input 'in' has 0 tensor(s), but attr 'T' requires at least 1"
    );
}

#[test]
fn given_attrs_defaults_and_required_attrs() {
    let op = OpDefBuilder::new("StringToNumber")
        .attr("out_type: {float, int32} = DT_FLOAT")
        .input("string_tensor: string")
        .output("output: out_type")
        .build()
        .unwrap();
    let default = OpInstanceBuilder::new(&op)
        .input(DType::String)
        .build()
        .unwrap();
    assert_eq!(default.output_types(), &[DType::F32]);
    let given = OpInstanceBuilder::new(&op)
        .input(DType::String)
        .attr("out_type", DType::I32)
        .build()
        .unwrap();
    assert_eq!(given.output_types(), &[DType::I32]);
    assert_eq!(
        message(
            OpInstanceBuilder::new(&op)
                .input(DType::String)
                .attr("out_type", DType::F64)
                .build()
        ),
        "op StringToNumber: Value for attr 'out_type' of double is not in the list of allowed values: float, int32"
    );
    assert_eq!(
        message(
            OpInstanceBuilder::new(&op)
                .input(DType::String)
                .attr("out_typ", DType::F32)
                .build()
        ),
        "op StringToNumber: has no attr named 'out_typ' (did you mean 'out_type'?)"
    );
    assert_eq!(
        message(
            OpInstanceBuilder::new(&op)
                .input(DType::String)
                .attr("out_type", 3i64)
                .build()
        ),
        "op StringToNumber: AttrValue had value with type 'int' when 'type' expected for attr 'out_type'"
    );

    let preserve = OpDefBuilder::new("ZeroOut")
        .attr("preserve_index: int >= 0")
        .input("to_zero: int32")
        .output("zeroed: int32")
        .build()
        .unwrap();
    assert_eq!(
        message(OpInstanceBuilder::new(&preserve).input(DType::I32).build()),
        "op ZeroOut: attr 'preserve_index' (int) is required: it has no default"
    );
    assert_eq!(
        message(
            OpInstanceBuilder::new(&preserve)
                .input(DType::I32)
                .attr("preserve_index", -1i64)
                .build()
        ),
        "op ZeroOut: Value for attr 'preserve_index' of -1 must be at least minimum 0"
    );
    let node = OpInstanceBuilder::new(&preserve)
        .input(DType::I32)
        .attr("preserve_index", 3i64)
        .build()
        .unwrap();
    assert_eq!(node.get_attr::<usize>("preserve_index").unwrap(), 3);
    let err = node.get_attr::<bool>("preserve_index").unwrap_err();
    assert_eq!(
        err.message(),
        "op ZeroOut: attr 'preserve_index' is int (3), which cannot be read as a bool"
    );
    assert!(node.get_attr::<i64>("nope").is_err());
}

#[test]
fn inferred_attrs_may_be_given_if_they_agree() {
    let op = zero_out();
    assert!(
        OpInstanceBuilder::new(&op)
            .input(DType::F32)
            .attr("T", DType::F32)
            .build()
            .is_ok()
    );
    assert_eq!(
        message(
            OpInstanceBuilder::new(&op)
                .input(DType::F32)
                .attr("T", DType::I32)
                .build()
        ),
        "op ZeroOut: attr 'T' was given as int32, but input 'to_zero' implies float"
    );
}

#[test]
fn empty_list_takes_the_type_from_a_default_or_an_explicit_attr() {
    let op = OpDefBuilder::new("Concat")
        .attr("N: int >= 0")
        .attr("T: type = DT_FLOAT")
        .input("values: N * T")
        .output("out: N * T")
        .build()
        .unwrap();
    let node = OpInstanceBuilder::new(&op)
        .input_list(vec![])
        .build()
        .unwrap();
    assert_eq!(node.output_types(), &[] as &[DType]);
    let node = OpInstanceBuilder::new(&op)
        .input_list(vec![DType::I32; 2])
        .build()
        .unwrap();
    assert_eq!(node.output_types(), &[DType::I32, DType::I32]);

    let no_default = OpDefBuilder::new("Concat2")
        .attr("N: int >= 0")
        .attr("T: type")
        .input("values: N * T")
        .build()
        .unwrap();
    assert_eq!(
        message(
            OpInstanceBuilder::new(&no_default)
                .input_list(vec![])
                .build()
        ),
        "op Concat2: attr 'T' (type) cannot be inferred from the empty list given for input 'values' and has no default: give it explicitly"
    );
    assert!(
        OpInstanceBuilder::new(&no_default)
            .input_list(vec![])
            .attr("T", DType::F32)
            .build()
            .is_ok()
    );
}

#[test]
fn ints_are_accepted_for_float_attrs() {
    let op = OpDefBuilder::new("Scale")
        .attr("factor: float")
        .attr("fs: list(float) = []")
        .build()
        .unwrap();
    let node = OpInstanceBuilder::new(&op)
        .attr("factor", 2i64)
        .attr("fs", vec![1i64, 2])
        .build()
        .unwrap();
    assert_eq!(node.get_attr::<f32>("factor").unwrap(), 2.0);
    assert_eq!(node.get_attr::<Vec<f32>>("fs").unwrap(), vec![1.0, 2.0]);
}

/// A shape attr holds a shape, by TensorFlow's rules
/// (`PartialTensorShape::IsValidShape`): each dimension -1 (unknown) or at
/// least 0, at most 254 dimensions, and none with an unknown rank.
#[test]
fn shape_attrs_must_be_shapes() {
    let op = OpDefBuilder::new("Placeholder")
        .attr("shape: shape")
        .attr("shapes: list(shape) = []")
        .output("out: float")
        .build()
        .unwrap();
    let build = |shape: ShapeValue, shapes: Vec<ShapeValue>| {
        OpInstanceBuilder::new(&op)
            .attr("shape", shape)
            .attr("shapes", shapes)
            .build()
    };
    for ok in [
        ShapeValue::from_sizes(&[]),
        ShapeValue::from_sizes(&[-1, 0, i64::MAX]),
        ShapeValue::unknown_rank(),
        ShapeValue::from_sizes(&[1; ShapeValue::MAX_DIMS]),
    ] {
        assert!(build(ok.clone(), vec![ok.clone()]).is_ok(), "{ok}");
    }

    let fine = || ShapeValue::from_sizes(&[2]);
    assert_eq!(
        message(build(ShapeValue::from_sizes(&[-5, i64::MIN]), vec![])),
        "op Placeholder: Value for attr 'shape' is not a valid shape: dimension 0 of \
         [-5,-9223372036854775808] is -5, but a dimension must be -1 (unknown) or at least 0"
    );
    assert_eq!(
        message(build(
            fine(),
            vec![fine(), ShapeValue::from_sizes(&[3, -2])]
        )),
        "op Placeholder: Value 1 of attr 'shapes' is not a valid shape: dimension 1 of [3,-2] \
         is -2, but a dimension must be -1 (unknown) or at least 0"
    );
    assert_eq!(
        message(build(
            ShapeValue::from_sizes(&[1; ShapeValue::MAX_DIMS + 1]),
            vec![]
        )),
        "op Placeholder: Value for attr 'shape' is not a valid shape: it has 255 dimensions, \
         but a shape has at most 254"
    );
    let mut unknown_with_dims = ShapeValue::unknown_rank();
    unknown_with_dims.dims = ShapeValue::from_sizes(&[4]).dims;
    assert_eq!(
        message(build(unknown_with_dims, vec![])),
        "op Placeholder: Value for attr 'shape' is not a valid shape: <unknown>[4] has an \
         unknown rank but 1 dimension(s): a shape of unknown rank must have none"
    );
}
