//! The shape functions of every op this crate ships, one line per case in
//! the `INFER_OK` / `INFER_ERROR` notation of
//! [`ShapeTest`](op_core::shape_inference::testing::ShapeTest): fully known,
//! partially known (`[?,3]`), unknown rank (`?`) and scalar inputs, and the
//! input shapes each op rejects. Also shape inference through the registry
//! from shapes alone (no kernel runs), and the runtime's check, on in debug
//! builds, that every kernel's outputs have the shapes its op's shape
//! function infers.

use op_core::shape_inference::PartialShape;
use op_core::shape_inference::testing::ShapeTest;
use op_core::{DType, InputTypes, OpCall, Registry, Runtime, Tensor};

mod common;
use common::assert_contains;

fn shapes(text: &[&str]) -> Vec<PartialShape> {
    text.iter().map(|s| s.parse().unwrap()).collect()
}

fn t(op: &str) -> ShapeTest {
    op_kernels::link();
    ShapeTest::new(op)
}

#[test]
fn every_op_has_a_shape_function() {
    op_kernels::link();
    let ops = [
        "ZeroOut",
        "ZeroOutPolymorphic",
        "ZeroOutPreserveIndex",
        "ZeroOutVector",
        "Example",
        "StringToNumber",
        "PolymorphicListExample",
        "ListTypeRestrictionExample",
        "IntListInputExample",
        "SameListInputExample",
        "MinLengthIntListExample",
        "MinimumLengthPolymorphicListExample",
        "MultipleInsAndOuts",
        "Examples>SimpleHashTableCreate",
        "Examples>SimpleHashTableFind",
        "Examples>SimpleHashTableInsert",
        "Examples>SimpleHashTableRemove",
        "Examples>SimpleHashTableExport",
        "Examples>SimpleHashTableImport",
    ];
    for op in ops {
        let entry = Registry::global().op(op).unwrap();
        assert!(entry.shape_fn().is_some(), "op {op} has no shape function");
    }
}

#[test]
fn zero_out_keeps_the_input_shape() {
    let t = t("ZeroOut");
    t.ok("[2,3]", "in0");
    t.ok("[5]", "in0");
    t.ok("[?,3]", "in0");
    t.ok("[?,?,?]", "in0");
    t.ok("?", "in0");
    t.ok("[]", "in0");
    t.ok("[0]", "in0");
    t.error("[2];[2]", "got 2 input shape(s) for 1 input tensor(s)");
    t.error("", "got 0 input shape(s) for 1 input tensor(s)");
}

#[test]
fn zero_out_polymorphic_keeps_the_input_shape_for_every_type() {
    for dtype in [DType::F32, DType::F64, DType::I32] {
        let t = t("ZeroOutPolymorphic").attr("T", dtype);
        t.ok("[2,3]", "in0");
        t.ok("[?,3]", "in0");
        t.ok("?", "in0");
        t.ok("[]", "in0");
    }
    // T defaults to int32.
    t("ZeroOutPolymorphic").ok("[4]", "in0");
}

#[test]
fn zero_out_preserve_index_needs_a_vector() {
    let t = t("ZeroOutPreserveIndex").attr("preserve_index", 1i64);
    t.ok("[5]", "in0");
    t.ok("[0]", "in0");
    t.ok("[?]", "in0");
    t.ok("?", "[?]");
    t.error(
        "[2,3]",
        "op ZeroOutPreserveIndex (node 'ZeroOutPreserveIndex'): input 0 ('to_zero') has shape [2,3], which must be rank 1 but is rank 2",
    );
    t.error(
        "[?,3]",
        "input 0 ('to_zero') has shape [?,3], which must be rank 1",
    );
    t.error(
        "[]",
        "input 0 ('to_zero') has shape [], which must be rank 1 but is rank 0",
    );
}

#[test]
fn zero_out_vector_needs_a_vector() {
    let t = t("ZeroOutVector");
    t.ok("[5]", "in0");
    t.ok("[1]", "in0");
    t.ok("[?]", "in0");
    t.ok("?", "[?]");
    t.error(
        "[2,3]",
        "op ZeroOutVector (node 'ZeroOutVector'): input 0 ('to_zero') has shape [2,3], which must be rank 1 but is rank 2",
    );
    t.error(
        "[?,?]",
        "input 0 ('to_zero') has shape [?,?], which must be rank 1 but is rank 2",
    );
    t.error(
        "[]",
        "input 0 ('to_zero') has shape [], which must be rank 1 but is rank 0",
    );
}

#[test]
fn example_keeps_the_input_shape() {
    for dtype in [DType::F32, DType::I64, DType::U8, DType::Complex128] {
        let t = t("Example").attr("T", dtype);
        t.ok("[2,3]", "in0");
        t.ok("[?,3]", "in0");
        t.ok("?", "in0");
        t.ok("[]", "in0");
    }
}

#[test]
fn string_to_number_keeps_the_input_shape() {
    for dtype in [DType::F32, DType::I32] {
        let t = t("StringToNumber").attr("out_type", dtype);
        t.ok("[2,3]", "in0");
        t.ok("[?,3]", "in0");
        t.ok("?", "in0");
        t.ok("[]", "in0");
    }
    t("StringToNumber").ok("[7]", "in0");
}

#[test]
fn polymorphic_list_passes_each_shape_through() {
    let t = t("PolymorphicListExample");
    t.ok("[2,3]", "in0");
    t.ok("[2];[?,3];?;[]", "in0;in1;in2;in3");
    t.error(
        "",
        "input 'in' has 0 tensor(s), but attr 'T' requires at least 1",
    );
    let t = t
        .clone()
        .attr("T", vec![DType::I32, DType::String, DType::F64]);
    t.ok("[2];[];[1,1]", "in0;in1;in2");
}

#[test]
fn list_type_restriction_passes_each_shape_through() {
    let t = t("ListTypeRestrictionExample");
    t.ok("[2,3];[4]", "in0;in1");
    t.ok("?;[?,3];[]", "in0;in1;in2");
    let t = t.attr("T", vec![DType::F64, DType::F32]);
    t.ok("[1];?", "in0;in1");
}

#[test]
fn minimum_length_polymorphic_list_passes_each_shape_through() {
    let t = t("MinimumLengthPolymorphicListExample");
    t.ok("[1];[2,3];?", "in0;in1;in2");
    t.ok("[];[?];[?,?];[4]", "in0;in1;in2;in3");
    t.error("[1];[2]", "at least 3");
}

#[test]
fn int_list_input_merges_its_shapes() {
    let t = t("IntListInputExample");
    t.ok("[2,3]", "in0");
    t.ok("[2,3];[2,3]", "in0");
    t.ok("[2,3];[2,3];[2,3]", "in0");
    // The most specific shape compatible with every input.
    t.ok("[2,?];[?,3]", "[d0_0,d1_1]");
    t.ok("[?,?];[2,3]", "in1");
    t.ok("[?];[2];[?]", "in1");
    t.ok("?;[2,3]", "in1");
    t.ok("[2,3];?", "in0");
    t.ok("?;[?,3];[2,?]", "[d2_0,d1_1]");
    t.ok("?;?", "in0");
    t.ok("[];[]", "in0");
    t.error(
        "",
        "input 'in' has 0 tensor(s), but attr 'N' requires at least 1",
    );
    t.error(
        "[2];[3]",
        "op IntListInputExample (node 'IntListInputExample'): dimension 0 in both shapes must be equal, but input 0 ('in'[0]) has shape [2] and input 1 ('in'[1]) has shape [3]",
    );
    t.error(
        "[2,3];[2,4]",
        "dimension 1 in both shapes must be equal, but input 0 ('in'[0]) has shape [2,3] and input 1 ('in'[1]) has shape [2,4]",
    );
    t.error(
        "[2];[2];[3]",
        "but input 0 ('in'[0]) has shape [2] and input 2 ('in'[2]) has shape [3]",
    );
    t.error(
        "[2];[2,1]",
        "shapes must be equal rank, but input 0 ('in'[0]) has shape [2] and input 1 ('in'[1]) has shape [2,1]",
    );
    t.error(
        "[];[1]",
        "shapes must be equal rank, but input 0 ('in'[0]) has shape [] and input 1 ('in'[1]) has shape [1]",
    );
    // A conflict with what earlier inputs merged to names that shape.
    t.error(
        "[2,?];[?,3];[3,3]",
        "dimension 0 in both shapes must be equal, but shape [2,3] and input 2 ('in'[2]) has shape [3,3]",
    );
}

#[test]
fn same_list_input_merges_its_shapes() {
    for dtype in [DType::F32, DType::I64, DType::U16] {
        let t = t("SameListInputExample").attr("T", dtype);
        t.ok("[4];[4]", "in0");
        t.ok("[?,3];[2,?]", "[d1_0,d0_1]");
        t.ok("?;?;[]", "in2");
        t.error(
            "[1,2];[2,1]",
            "input 0 ('in'[0]) has shape [1,2] and input 1 ('in'[1]) has shape [2,1]",
        );
        t.error("[?,?];[?]", "shapes must be equal rank");
    }
}

#[test]
fn min_length_int_list_merges_its_shapes() {
    let t = t("MinLengthIntListExample");
    t.ok("[2,3];[2,3]", "in0");
    t.ok("[?,3];[2,?];?", "[d1_0,d0_1]");
    t.error("[2]", "at least 2");
    t.error(
        "[5];[6]",
        "input 0 ('in'[0]) has shape [5] and input 1 ('in'[1]) has shape [6]",
    );
}

#[test]
fn multiple_ins_and_outs_gives_z_then_y() {
    let t = t("MultipleInsAndOuts");
    t.ok("[3];[2,2]", "in1;in0");
    t.ok("[?,3];?", "in1;in0");
    t.ok("[];[]", "in1;in0");
    t.ok("?;[0,5]", "in1;in0");
    t.error("[3]", "got 1 input shape(s) for 2 input tensor(s)");
}

#[test]
fn the_registry_infers_shapes_without_running_a_kernel() {
    op_kernels::link();
    let registry = Registry::global();
    let i32 = || InputTypes::from(DType::I32);

    // Far too large to allocate: only the shape function runs.
    let huge = shapes(&["[100000,100000,100000]"]);
    let out = registry
        .infer_shapes("ZeroOut", &[i32()], &[], &huge, &[])
        .unwrap();
    assert_eq!(out, huge);

    let out = registry
        .infer_shapes("ZeroOutVector", &[i32()], &[], &shapes(&["?"]), &[])
        .unwrap();
    assert_eq!(out, shapes(&["[?]"]));
    let error = registry
        .infer_shapes("ZeroOutVector", &[i32()], &[], &shapes(&["[2,2]"]), &[])
        .unwrap_err();
    assert_contains(
        &error,
        &[
            "ZeroOutVector",
            "input 0 ('to_zero') has shape [2,2], which must be rank 1 but is rank 2",
        ],
    );

    let out = registry
        .infer_shapes(
            "ZeroOutPreserveIndex",
            &[i32()],
            &[("preserve_index", 7i64.into())],
            &shapes(&["[?]"]),
            &[],
        )
        .unwrap();
    assert_eq!(out, shapes(&["[?]"]));

    let three = InputTypes::List(vec![DType::I32; 3]);
    let out = registry
        .infer_shapes(
            "IntListInputExample",
            std::slice::from_ref(&three),
            &[],
            &shapes(&["[2,?]", "?", "[?,3]"]),
            &[],
        )
        .unwrap();
    assert_eq!(out, shapes(&["[2,3]"]));
    let error = registry
        .infer_shapes(
            "IntListInputExample",
            &[three],
            &[],
            &shapes(&["[2]", "[2]", "[3]"]),
            &[],
        )
        .unwrap_err();
    assert_contains(
        &error,
        &[
            "IntListInputExample",
            "input 0 ('in'[0]) has shape [2]",
            "input 2 ('in'[2]) has shape [3]",
        ],
    );

    let list = InputTypes::List(vec![DType::String, DType::F64]);
    let out = registry
        .infer_shapes(
            "PolymorphicListExample",
            &[list],
            &[],
            &shapes(&["[]", "[?,4]"]),
            &[],
        )
        .unwrap();
    assert_eq!(out, shapes(&["[]", "[?,4]"]));

    let out = registry
        .infer_shapes(
            "StringToNumber",
            &[DType::String.into()],
            &[("out_type", DType::I32.into())],
            &shapes(&["[2,?]"]),
            &[],
        )
        .unwrap();
    assert_eq!(out, shapes(&["[2,?]"]));

    let out = registry
        .infer_shapes(
            "MultipleInsAndOuts",
            &[i32(), DType::F32.into()],
            &[],
            &shapes(&["[7]", "[?,2]"]),
            &[],
        )
        .unwrap();
    assert_eq!(out, shapes(&["[?,2]", "[7]"]));
}

/// Runs every op once on `runtime`, with inputs of several ranks, so that
/// the runtime compares each output with what the shape function infers.
fn run_every_op(runtime: &Runtime) {
    let int_inputs = [
        Tensor::from_vec([3], vec![1i32, 2, 3]).unwrap(),
        Tensor::from_vec([2, 2], vec![1i32, 2, 3, 4]).unwrap(),
        Tensor::from_vec([0, 4], Vec::<i32>::new()).unwrap(),
        Tensor::from_vec::<i32>([], vec![5]).unwrap(),
    ];
    for x in &int_inputs {
        for op in ["ZeroOut", "ZeroOutPolymorphic", "Example"] {
            let out = OpCall::new(op).input(x).run_on(runtime).unwrap();
            assert_eq!(out[0].dims(), x.dims(), "{op}");
        }
        let sum = OpCall::new("IntListInputExample")
            .input_list([x, x, x])
            .run_on(runtime)
            .unwrap();
        assert_eq!(sum[0].dims(), x.dims());
        let sum = OpCall::new("MinLengthIntListExample")
            .input_list([x, x])
            .run_on(runtime)
            .unwrap();
        assert_eq!(sum[0].dims(), x.dims());
    }
    let v = &int_inputs[0];
    let out = OpCall::new("ZeroOutVector")
        .input(v)
        .run_on(runtime)
        .unwrap();
    assert_eq!(out[0].dims(), [3]);
    let out = OpCall::new("ZeroOutPreserveIndex")
        .input(v)
        .attr("preserve_index", 2i64)
        .run_on(runtime)
        .unwrap();
    assert_eq!(out[0].dims(), [3]);

    let f = Tensor::from_vec([2, 1], vec![1.5f32, -2.0]).unwrap();
    let d = Tensor::from_vec([1, 2, 1], vec![0.5f64, 4.0]).unwrap();
    let s = Tensor::string("x");
    let out = OpCall::new("ZeroOutPolymorphic")
        .input(&f)
        .run_on(runtime)
        .unwrap();
    assert_eq!(out[0].dims(), [2, 1]);
    let out = OpCall::new("SameListInputExample")
        .input_list([&d, &d])
        .run_on(runtime)
        .unwrap();
    assert_eq!(out[0].dims(), [1, 2, 1]);
    for op in [
        "PolymorphicListExample",
        "MinimumLengthPolymorphicListExample",
    ] {
        let out = OpCall::new(op)
            .input_list([v, &s, &d])
            .run_on(runtime)
            .unwrap();
        assert_eq!(out, [v.clone(), s.clone(), d.clone()], "{op}");
    }
    let out = OpCall::new("ListTypeRestrictionExample")
        .input_list([&f, &d])
        .run_on(runtime)
        .unwrap();
    assert_eq!(out, [f.clone(), d.clone()]);

    let texts = Tensor::from_vec([2, 1], vec![b"1".to_vec(), b"-2".to_vec()]).unwrap();
    for out_type in [DType::F32, DType::I32] {
        let out = OpCall::new("StringToNumber")
            .input(&texts)
            .attr("out_type", out_type)
            .run_on(runtime)
            .unwrap();
        assert_eq!(out[0].dims(), [2, 1]);
    }

    let out = OpCall::new("MultipleInsAndOuts")
        .input(v)
        .input(&f)
        .run_on(runtime)
        .unwrap();
    assert_eq!(out[0].dims(), [2, 1]);
    assert_eq!(out[1].dims(), [3]);
}

#[test]
fn every_kernel_agrees_with_its_shape_function() {
    op_kernels::link();
    // Tests build in debug, where the check is on by default.
    run_every_op(Runtime::global());
    // And on request, whatever the build.
    run_every_op(&Runtime::new().check_shapes(true));
}
